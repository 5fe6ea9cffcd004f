//===- TransToLLVM.cpp - tessel.trans through shared memory ---------------===//
//
// When the result's layout is the transpose of the source's (getTransposedLayout, which
// -tessel-assign-layouts prefers), every thread already holds its result elements in the
// same registers: nothing moves. Otherwise every thread writes its registers to shared memory at their transposed row-major
// position, a barrier, every thread reads the positions its result registers hold, a
// barrier (the scratch is shared with the next op). Copies of an element write the same
// value.
//
//===----------------------------------------------------------------------===//
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TransLowering : OpConversionPattern<TransOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(TransOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // A shared tile's transpose is a view: the dot reading it knows (DotToLLVM.cpp).
    if (isa<SharedType>(op.getSrc().getType())) {
      rewriter.replaceOpWithMultiple(op, {adaptor.getSrc()});
      return success();
    }
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    Type elementType = srcType.getElementType();
    if (!elementType.isIntOrFloat() || elementType.getIntOrFloatBitWidth() < 8)
      return op.emitError("trans of ") << elementType << " tiles is not supported";
    TileLayout src = *TileLayout::get(srcType), dst = *TileLayout::get(dstType);
    if (srcType.getEncoding() == src.getRoot() &&
        dstType.getEncoding() == getTransposedLayout(src.getRoot())) {
      rewriter.replaceOpWithMultiple(op, {adaptor.getSrc()});
      return success();
    }
    ThreadIndex thread = getThreadIndex(rewriter, loc);
    Value base = getSharedMemoryBase(rewriter, loc);
    ArrayRef<int64_t> shape = dstType.getShape();
    auto address = [&](Value row, Value col) -> Value {
      Value index = linearize(rewriter, loc, {row, col}, shape);
      return LLVM::GEPOp::create(rewriter, loc, base.getType(), elementType, base,
                                 ValueRange{index});
    };
    for (auto [value, coords] : llvm::zip(adaptor.getSrc(), getCoordinates(rewriter, loc, src, thread)))
      LLVM::StoreOp::create(rewriter, loc, value, address(coords[1], coords[0]));
    createBarrier(rewriter, loc);
    SmallVector<Value> results;
    for (auto &coords : getCoordinates(rewriter, loc, dst, thread))
      results.push_back(LLVM::LoadOp::create(rewriter, loc, elementType,
                                             address(coords[0], coords[1])));
    createBarrier(rewriter, loc);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};
} // namespace

void mlir::tessel::populateTransToLLVMPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<TransLowering>(converter, patterns.getContext());
}
