//===- lowering/AtomicToLLVM.cpp - tessel.atomic_rmw to PTX red -----------===//
//
// One `red.global.add` per element and register, or per contiguous run of f32 as
// `red.global.add.v2/.v4` on Hopper (no old value comes back). A layout may
// give one element to several threads (a tile smaller than the threads that cover it, a
// slice of a larger layout, a scalar): harmless for a store, wrong for an add. So each
// element is added by its first holder only: along a dimension that wraps, the thread
// whose unwrapped coordinate is in the tile; along a root dimension a slice removed, the
// thread with index 0 there; for a scalar, thread 0.
//
// An atomic -tessel-bulk-reductions marked (BulkReductions.cpp) goes a row at a time: every
// thread writes its registers to the scratch at their row-major places, and the first
// holder of each row's first element, where the row's mask holds, issues
// `cp.reduce.async.bulk` from the row's scratch bytes to the row's address (the pointer it
// holds). The issuers wait until the engine has read the scratch (`wait_group.read`, not
// until the adds land) and a barrier hands the scratch to the next op.
//
//===----------------------------------------------------------------------===//
#include "dialect/Layout.h"
#include "dialect/Target.h"
#include "lowering/Passes.h"
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

/// The bulk form (see the header).
void lowerByRows(AtomicRMWOp op, ValueRange ptrs, ValueRange values, ValueRange masks,
                 ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getValue().getType());
  TileLayout layout = *TileLayout::get(type);
  int64_t rowBytes = type.getDimSize(1) * 4;
  ThreadIndex thread = getThreadIndex(rewriter, loc);
  Value scratch = getSharedMemoryBase(rewriter, loc);
  SmallVector<SmallVector<Value>> coords = getCoordinates(rewriter, loc, layout, thread);
  for (auto [value, at] : llvm::zip(values, coords)) {
    Value index = linearize(rewriter, loc, at, type.getShape());
    Value address = LLVM::GEPOp::create(rewriter, loc, scratch.getType(), rewriter.getF32Type(),
                                        scratch, ValueRange{index});
    LLVM::StoreOp::create(rewriter, loc, value, address);
  }
  createAsyncProxyFence(rewriter, loc);
  createBarrier(rewriter, loc);
  SmallVector<Value> holders = firstHolders(rewriter, loc, type, values.size());
  std::string text = "@$0 cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [$1], [$2], " +
                     std::to_string(rowBytes) + ";";
  for (unsigned reg = 0; reg < values.size(); ++reg) {
    // Only a register whose column owes nothing to the thread can hold column 0 (first
    // holders have unwrapped coordinates, all of them inside the tile).
    if (layout.getRegisterOffset(1, layout.getRegisterIndex(reg)[1]) != 0)
      continue;
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, coords[reg][1],
                                        createI32(rewriter, loc, 0));
    Value predicate = conjoin(rewriter, loc, conjoin(rewriter, loc, first, holders[reg]),
                              masks.empty() ? Value() : masks[reg]);
    Value rowStart = arith::MulIOp::create(rewriter, loc, coords[reg][0],
                                           createI32(rewriter, loc, rowBytes));
    Value source = LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                            byteOffset(rewriter, loc, scratch, rowStart));
    createInlinePtx(rewriter, loc, Type(), ValueRange{predicate, ptrs[reg], source}, text,
                    "b,l,r");
  }
  createInlinePtx(rewriter, loc, Type(), ValueRange(),
                  "cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;", "");
  createBarrier(rewriter, loc);
}

struct AtomicRMWLowering : OpConversionPattern<AtomicRMWOp> {
  AtomicRMWLowering(const TypeConverter &converter, MLIRContext *ctx, const AxisInfoAnalysis &info)
      : OpConversionPattern(converter, ctx), axisInfo(info) {}

  LogicalResult matchAndRewrite(AtomicRMWOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = getElementTypeOrSelf(op.getValue().getType());
    bool f32 = element.isF32();
    ValueRange ptrs = adaptor.getPtr(), values = adaptor.getValue();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    if (op->hasAttr(kBulkReductionAttr)) {
      lowerByRows(op, ptrs, values, masks, rewriter);
      rewriter.eraseOp(op);
      return success();
    }
    SmallVector<Value> holders = firstHolders(rewriter, loc, op.getPtr().getType(), ptrs.size());
    // A thread's contiguous, aligned run of f32 goes as one vector reduction where the
    // target has them (a run's elements share the holder test: tile sizes are powers of
    // two, so a run never straddles the end of a wrapped dimension).
    unsigned vector = 1;
    if (f32 && Target::of(op).hasVectorReductions())
      vector = std::min(4u, getAccessWidth(axisInfo, op.getPtr(), op.getMask(), element));
    std::string text = "@$0 red.global.add";
    if (vector > 1)
      text += ".v" + std::to_string(vector);
    text += f32 ? ".f32 [ $1 + 0 ], " : ".s32 [ $1 + 0 ], ";
    std::string constraints = "b,l";
    text += vector > 1 ? "{" : "";
    for (unsigned j = 0; j < vector; ++j) {
      text += (j ? ", $" : "$") + std::to_string(j + 2);
      constraints += f32 ? ",f" : ",r";
    }
    text += vector > 1 ? "};" : ";";
    Value always = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    for (size_t i = 0; i < ptrs.size(); i += vector) {
      Value predicate = conjoin(rewriter, loc, masks.empty() ? Value() : masks[i], holders[i]);
      SmallVector<Value> operands = {predicate ? predicate : always, ptrs[i]};
      llvm::append_range(operands, values.slice(i, vector));
      createInlinePtx(rewriter, loc, Type(), operands, text, constraints);
    }
    rewriter.eraseOp(op);
    return success();
  }
  const AxisInfoAnalysis &axisInfo;
};

} // namespace

void mlir::tessel::populateAtomicToLLVMPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                const AxisInfoAnalysis &axisInfo) {
  patterns.add<AtomicRMWLowering>(converter, patterns.getContext(), axisInfo);
}
