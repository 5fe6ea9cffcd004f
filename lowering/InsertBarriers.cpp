//===- InsertBarriers.cpp - barriers where shared buffers change hands -----===//
//
// A forward walk in program order with two facts per point:
//   - `waited`: a tessel.async_wait completed this thread's copies, but other threads'
//     copies are not yet known to be visible (needs a barrier before the next read);
//   - `read`: buffers some thread may still be reading since the last barrier (a copy
//     into one of them must wait for everyone).
// A read with `waited` set gets a barrier right after the wait (which also clears
// `read`, so the usual  wait -> copy next -> read  loop needs one barrier); a copy into
// a buffer in `read` gets one just before it. Loops are walked twice so the state at
// the end of the body reaches its start (the back edge); `if` branches start from the
// same state and join by union. Buffers a wgmma reads get a fence.proxy.async before
// that barrier (generic-proxy writes, async-proxy reads). Bulk copies (tessel.tma_copy)
// need no barrier before a read: each thread waits on their mbarrier itself; overwriting
// a buffer still being read needs one, as for cp.async.
//
//===----------------------------------------------------------------------===//
#include "lowering/Passes.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELINSERTBARRIERS
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

struct HazardState {
  Operation *pendingWait = nullptr; // the wait whose copies others may not see yet
  llvm::SmallPtrSet<Operation *, 4> read;

  void join(const HazardState &other) {
    if (!pendingWait)
      pendingWait = other.pendingWait;
    read.insert(other.read.begin(), other.read.end());
  }
  void clear() {
    pendingWait = nullptr;
    read.clear();
  }
};

void walkBlock(Block &block, HazardState &state);

void walkOp(Operation *op, HazardState &state) {
  OpBuilder b(op);
  if (isa<BarrierOp>(op)) {
    state.clear();
    return;
  }
  if (isa<AsyncWaitOp>(op)) {
    state.pendingWait = op;
    return;
  }
  if (isa<AsyncCopyOp, TmaCopyOp>(op)) {
    // Both write their buffer through operand 'dst'.
    Value dst = isa<AsyncCopyOp>(op) ? cast<AsyncCopyOp>(op).getDst()
                                     : cast<TmaCopyOp>(op).getDst();
    if (state.read.contains(getSharedAlloc(dst))) {
      BarrierOp::create(b, op->getLoc());
      state.clear();
    }
    return;
  }
  if (auto dot = dyn_cast<DotOp>(op)) {
    for (Value operand : {dot.getA(), dot.getB()}) {
      if (!isa<SharedType>(operand.getType()))
        continue;
      if (state.pendingWait) {
        b.setInsertionPointAfter(state.pendingWait);
        // wgmma reads through the async proxy: fence the copies first.
        if (!getWgmmaOperand(operand).empty())
          FenceAsyncSharedOp::create(b, op->getLoc());
        BarrierOp::create(b, op->getLoc());
        state.clear();
      }
      state.read.insert(getSharedAlloc(operand));
    }
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    HazardState entry = state;
    HazardState body = state;
    walkBlock(*loop.getBody(), body);
    HazardState again = body; // the back edge: iteration i+1 after iteration i
    again.join(entry);
    walkBlock(*loop.getBody(), again);
    state = entry; // zero iterations
    state.join(again);
    return;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    HazardState thenState = state, elseState = state;
    walkBlock(ifOp.getThenRegion().front(), thenState);
    if (!ifOp.getElseRegion().empty())
      walkBlock(ifOp.getElseRegion().front(), elseState);
    state = thenState;
    state.join(elseState);
    return;
  }
  for (Region &region : op->getRegions())
    for (Block &nested : region)
      walkBlock(nested, state);
}

void walkBlock(Block &block, HazardState &state) {
  for (Operation &op : llvm::make_early_inc_range(block))
    walkOp(&op, state);
}

struct TesselInsertBarriersPass
    : public tessel::impl::TesselInsertBarriersBase<TesselInsertBarriersPass> {
  void runOnOperation() override {
    for (Region &region : getOperation()->getRegions())
      for (Block &block : region)
        for (Operation &op : block) {
          HazardState state;
          for (Region &inner : op.getRegions())
            for (Block &nested : inner)
              walkBlock(nested, state);
        }
  }
};
} // namespace
