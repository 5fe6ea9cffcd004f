//===- lowering/AtomicToLLVM.cpp - tessel.atomic_rmw to PTX red -----------===//
//
// One `red.global.add` per element and register (no old value comes back). A layout may
// give one element to several threads (a tile smaller than the threads that cover it, a
// slice of a larger layout, a scalar): harmless for a store, wrong for an add. So each
// element is added by its first holder only: along a dimension that wraps, the thread
// whose unwrapped coordinate is in the tile; along a root dimension a slice removed, the
// thread with index 0 there; for a scalar, thread 0.
//
//===----------------------------------------------------------------------===//
#include "dialect/Layout.h"
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

Value conjoin(OpBuilder &b, Location loc, Value a, Value c) {
  return a ? (c ? arith::AndIOp::create(b, loc, a, c).getResult() : a) : c;
}

/// Per register of `type`'s layout, whether this thread is the element's first holder
/// (null: every thread holding it is).
SmallVector<Value> firstHolders(OpBuilder &b, Location loc, Type type, unsigned registers) {
  ThreadIndex thread = getThreadIndex(b, loc);
  auto tile = dyn_cast<RankedTensorType>(type);
  if (!tile) {
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::OrIOp::create(b, loc, thread.lane, thread.warp), createI32(b, loc, 0));
    return SmallVector<Value>(registers, first);
  }
  TileLayout layout = *TileLayout::get(tile);
  // Root dimensions a slice removed: the element is held by every thread along them.
  Value common;
  unsigned rootRank = layout.getRoot().getOrder().size();
  for (unsigned r = 0; r < rootRank; ++r) {
    bool kept = false;
    for (unsigned d = 0; d < layout.getRank(); ++d)
      kept |= layout.getRootDim(d) == r;
    if (kept)
      continue;
    Value index = getThreadIndexAlong(b, loc, layout, r, thread);
    common = conjoin(b, loc, common,
                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                                           createI32(b, loc, 0)));
  }
  SmallVector<Value> holders(registers, common);
  for (unsigned d = 0; d < layout.getRank(); ++d) {
    if (!layout.wraps(d))
      continue;
    Value offset = arith::MulIOp::create(
        b, loc, getThreadIndexAlong(b, loc, layout, layout.getRootDim(d), thread),
        createI32(b, loc, layout.getThreadStride(d)));
    for (unsigned reg = 0; reg < registers; ++reg) {
      unsigned k = layout.getRegisterIndex(reg)[d];
      Value unwrapped = arith::AddIOp::create(b, loc, offset,
                                              createI32(b, loc, layout.getRegisterOffset(d, k)));
      holders[reg] = conjoin(b, loc, holders[reg],
                             arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, unwrapped,
                                                   createI32(b, loc, layout.getDimSize(d))));
    }
  }
  return holders;
}

struct AtomicRMWLowering : OpConversionPattern<AtomicRMWOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(AtomicRMWOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool f32 = getElementTypeOrSelf(op.getValue().getType()).isF32();
    ValueRange ptrs = adaptor.getPtr(), values = adaptor.getValue();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    SmallVector<Value> holders = firstHolders(rewriter, loc, op.getPtr().getType(), ptrs.size());
    std::string text = f32 ? "@$0 red.global.add.f32 [ $1 + 0 ], $2;"
                           : "@$0 red.global.add.s32 [ $1 + 0 ], $2;";
    std::string constraints = f32 ? "b,l,f" : "b,l,r";
    Value always = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (size_t i = 0; i < ptrs.size(); ++i) {
      Value predicate = conjoin(rewriter, loc, masks.empty() ? Value() : masks[i], holders[i]);
      createInlinePtx(rewriter, loc, Type(), {predicate ? predicate : always, ptrs[i], values[i]},
                      text, constraints);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tessel::populateAtomicToLLVMPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<AtomicRMWLowering>(converter, patterns.getContext());
}
