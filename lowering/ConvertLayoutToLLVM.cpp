//===- ConvertLayoutToLLVM.cpp - move tile elements between threads -------===//
//
// The general way: every thread writes its registers to shared memory at their row-major
// position, a barrier, every thread reads the positions its new registers hold, a barrier
// (the scratch is shared with the next op). Copies of an element write the same value.
//
//===----------------------------------------------------------------------===//
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct ConvertLayoutLowering : OpConversionPattern<ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ConvertLayoutOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = op.getSrc().getType();
    TileLayout src = *TileLayout::get(srcType), dst = *TileLayout::get(op.getType());
    Type elementType = srcType.getElementType();
    // Shared memory holds bytes for i1 and integers for pointers.
    Type storedType = elementType;
    if (elementType.isInteger(1))
      storedType = rewriter.getI8Type();
    else if (isa<PtrType>(elementType))
      storedType = rewriter.getI64Type();

    ThreadIndex thread = getThreadIndex(rewriter, loc);
    Value base = getSharedMemoryBase(rewriter, loc);
    auto address = [&](ArrayRef<Value> coords) -> Value {
      Value index = linearize(rewriter, loc, coords, srcType.getShape());
      return LLVM::GEPOp::create(rewriter, loc, base.getType(), storedType, base,
                                 ValueRange{index});
    };

    auto srcCoords = getCoordinates(rewriter, loc, src, thread);
    for (auto [value, coords] : llvm::zip(adaptor.getSrc(), srcCoords)) {
      Value stored = value;
      if (elementType.isInteger(1))
        stored = arith::ExtUIOp::create(rewriter, loc, storedType, value);
      else if (isa<PtrType>(elementType))
        stored = LLVM::PtrToIntOp::create(rewriter, loc, storedType, value);
      LLVM::StoreOp::create(rewriter, loc, stored, address(coords));
    }
    createBarrier(rewriter, loc);
    SmallVector<Value> results;
    for (auto &coords : getCoordinates(rewriter, loc, dst, thread)) {
      Value loaded = LLVM::LoadOp::create(rewriter, loc, storedType, address(coords));
      if (elementType.isInteger(1))
        loaded = arith::TruncIOp::create(rewriter, loc, elementType, loaded);
      else if (isa<PtrType>(elementType))
        loaded = LLVM::IntToPtrOp::create(rewriter, loc,
                                          LLVM::LLVMPointerType::get(getContext(), 1), loaded);
      results.push_back(loaded);
    }
    createBarrier(rewriter, loc);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};
} // namespace

void mlir::tessel::populateConvertLayoutToLLVMPatterns(const TypeConverter &converter,
                                                       RewritePatternSet &patterns) {
  patterns.add<ConvertLayoutLowering>(converter, patterns.getContext());
}
