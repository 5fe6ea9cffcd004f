//===- ReduceToLLVM.cpp - reductions within threads, warps and the block --===//
//
// Along the reduced axis a thread first combines its own registers, then the lanes that
// hold other elements of the same row combine with butterfly shuffles (every lane ends
// with the full value), then, if several warps hold parts of a row, each warp writes its
// partial to shared memory and every thread combines all of them. Lanes and warps that
// hold copies (a tile smaller than the layout's coverage) are left out, so `add` never
// counts an element twice.
//
//===----------------------------------------------------------------------===//
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value lhs, Value rhs) {
  bool isFloat = isa<FloatType>(lhs.getType());
  switch (kind) {
  case ReduceKind::Add:
    return isFloat ? arith::AddFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::AddIOp::create(b, loc, lhs, rhs).getResult();
  case ReduceKind::Max:
    return isFloat ? arith::MaximumFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MaxSIOp::create(b, loc, lhs, rhs).getResult();
  case ReduceKind::Min:
    return isFloat ? arith::MinimumFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MinSIOp::create(b, loc, lhs, rhs).getResult();
  }
  llvm_unreachable("unknown reduce kind");
}

struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ReduceOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = op.getSrc().getType();
    TileLayout layout = *TileLayout::get(srcType);
    unsigned axis = op.getAxis();
    ReduceKind kind = op.getKind();
    ValueRange input = adaptor.getSrc();
    Type elementType = srcType.getElementType();
    if (!elementType.isIntOrFloat() || elementType.getIntOrFloatBitWidth() < 16)
      return op.emitError("reductions of ") << elementType << " are not supported";

    // 1. Within the thread: registers with the same index off the axis.
    unsigned distinctRegs =
        std::min<int64_t>(layout.getRegistersAlong(axis), layout.getDimSize(axis));
    SmallVector<unsigned> sliceRegs; // source register with index 0 on the axis
    for (unsigned reg = 0, e = layout.getNumRegisters(); reg < e; ++reg)
      if (layout.getRegisterIndex(reg)[axis] == 0)
        sliceRegs.push_back(reg);
    SmallVector<Value> partials;
    for (unsigned base : sliceRegs) {
      SmallVector<unsigned> index = layout.getRegisterIndex(base);
      Value acc = input[base];
      for (unsigned k = 1; k < distinctRegs; ++k) {
        index[axis] = k;
        acc = combine(rewriter, loc, kind, acc, input[layout.getRegister(index)]);
      }
      partials.push_back(acc);
    }

    // 2. Across the lanes of a warp.
    unsigned rootAxis = layout.getRootDim(axis);
    unsigned laneStride = layout.getLaneStride(rootAxis);
    for (unsigned lanes = getDistinctLanes(layout, axis), step = 1; step < lanes; step *= 2)
      for (Value &acc : partials)
        acc = combine(rewriter, loc, kind, acc,
                      shuffleXor(rewriter, loc, acc, step * laneStride));

    // 3. Across warps, through shared memory.
    unsigned warps = getDistinctWarps(layout, axis);
    if (warps > 1) {
      ThreadIndex thread = getThreadIndex(rewriter, loc);
      auto coords = getCoordinates(rewriter, loc, layout, thread);
      SmallVector<int64_t> sliceShape(srcType.getShape());
      sliceShape.erase(sliceShape.begin() + axis);
      int64_t sliceSize = 1;
      for (int64_t s : sliceShape)
        sliceSize *= s;
      Value base = getSharedMemoryBase(rewriter, loc);
      Type smemPtr = base.getType();
      Value warpAlong = arith::ShRUIOp::create(
          rewriter, loc, thread.warp,
          createI32(rewriter, loc, llvm::Log2_32(layout.getWarpStride(rootAxis))));
      warpAlong = arith::AndIOp::create(
          rewriter, loc, warpAlong,
          createI32(rewriter, loc, layout.getRoot().getWarpsPerCTA()[rootAxis] - 1));
      SmallVector<Value> sliceIndex;
      for (auto [i, reg] : llvm::enumerate(sliceRegs)) {
        SmallVector<Value> c(coords[reg]);
        c.erase(c.begin() + axis);
        sliceIndex.push_back(linearize(rewriter, loc, c, sliceShape));
      }
      // Warps beyond the distinct ones hold copies; they write the same values to the
      // slots of the distinct warp they mirror, which is harmless.
      Value slot = arith::RemUIOp::create(rewriter, loc, warpAlong, createI32(rewriter, loc, warps));
      for (auto [acc, index] : llvm::zip(partials, sliceIndex)) {
        Value offset = arith::AddIOp::create(
            rewriter, loc,
            arith::MulIOp::create(rewriter, loc, slot, createI32(rewriter, loc, sliceSize)), index);
        Value addr = LLVM::GEPOp::create(rewriter, loc, smemPtr, elementType, base,
                                         ValueRange{offset});
        LLVM::StoreOp::create(rewriter, loc, acc, addr);
      }
      createBarrier(rewriter, loc);
      for (auto [acc, index] : llvm::zip(partials, sliceIndex)) {
        Value total;
        for (unsigned w = 0; w < warps; ++w) {
          Value offset =
              arith::AddIOp::create(rewriter, loc, createI32(rewriter, loc, w * sliceSize), index);
          Value addr = LLVM::GEPOp::create(rewriter, loc, smemPtr, elementType, base,
                                           ValueRange{offset});
          Value part = LLVM::LoadOp::create(rewriter, loc, elementType, addr);
          total = total ? combine(rewriter, loc, kind, total, part) : part;
        }
        acc = total;
      }
      // The scratch is reused by the next op that needs it.
      createBarrier(rewriter, loc);
    }

    if (!isa<RankedTensorType>(op.getType())) {
      rewriter.replaceOp(op, partials.front());
      return success();
    }
    // The result's slice layout enumerates exactly these registers, in this order.
    rewriter.replaceOpWithMultiple(op, {partials});
    return success();
  }
};
} // namespace

void mlir::tessel::populateReduceToLLVMPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, patterns.getContext());
}
