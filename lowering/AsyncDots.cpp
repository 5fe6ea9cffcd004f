//===- AsyncDots.cpp - register-A wgmma dots run until their result is needed -===//
//
// A wgmma dot (WgmmaLayout.h) whose B is read from a ring slot and whose A is in registers
// or in a buffer written once before the loop (-tessel-invariant-operands-to-shared) becomes `async`
// and a `tessel.dot_wait` goes right before the first op of its block that needs the
// result (or a nested op that does), so that what lies between (another dot, the softmax
// of the previous scores) is issued while the tensor cores work:
//   %s = tessel.dot %q, %kT, %zero {async}
//   %o = tessel.dot %p, %v, %acc {async}
//   %s.1 = tessel.dot_wait %s {pending = 1}   // %o may still run
//   ... softmax of %s.1 ...
//   %o.1 = tessel.dot_wait %o {pending = 0}
// `pending` counts the async dots of the block issued between the dot and its wait:
// wgmma groups retire in order, so the dot is done once at most that many remain. Every
// dot is waited for in its own block, before the terminator at the latest, so a loop's
// next iteration (and the copies it starts into the slots this one read) finds them done.
// A copy into B's buffer between the dot and its first use moves the wait before the copy.
// Staged B operands are left synchronous: the scratch they are staged in is reused by the
// next dot or reduction.
//
//===----------------------------------------------------------------------===//
#include "lowering/Passes.h"
#include "lowering/WgmmaLayout.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELASYNCDOTS
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
/// True when `op`, or an op nested in it, copies into `buffer`.
bool copiesInto(Operation *op, LocalAllocOp buffer) {
  WalkResult result = op->walk([&](Operation *nested) {
    Value dst;
    if (auto copy = dyn_cast<AsyncCopyOp>(nested))
      dst = copy.getDst();
    else if (auto copy = dyn_cast<TmaCopyOp>(nested))
      dst = copy.getDst();
    return dst && getSharedAlloc(dst) == buffer ? WalkResult::interrupt()
                                                : WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// The op of `dot`'s block before which its result must be complete: the first that
/// uses it (itself or in a nested op) or copies into B's buffer, else the terminator.
Operation *findWaitPoint(DotOp dot, LocalAllocOp bBuffer) {
  Block *block = dot->getBlock();
  Operation *first = block->getTerminator();
  for (Operation *user : dot->getUsers())
    if (Operation *ancestor = block->findAncestorOpInBlock(*user))
      if (ancestor->isBeforeInBlock(first))
        first = ancestor;
  for (Operation *op = dot->getNextNode(); op != first; op = op->getNextNode())
    if (copiesInto(op, bBuffer))
      return op;
  return first;
}

struct AsyncDotsPass : mlir::tessel::impl::TesselAsyncDotsBase<AsyncDotsPass> {
  void runOnOperation() override {
    SmallVector<DotOp> dots;
    getOperation().walk([&](DotOp dot) {
      if (!dot.getAsync() && isa<SharedType>(dot.getB().getType()) &&
          (runsOnRegisterWgmma(dot) || readsLoopInvariantWgmmaA(dot)))
        dots.push_back(dot);
    });
    for (DotOp dot : dots)
      dot.setAsync(true);
    for (DotOp dot : dots) {
      Operation *waitPoint = findWaitPoint(dot, getSharedAlloc(dot.getB()));
      int32_t pending = 0;
      for (Operation *op = dot->getNextNode(); op != waitPoint; op = op->getNextNode())
        if (auto other = dyn_cast<DotOp>(op); other && other.getAsync())
          ++pending;
      OpBuilder builder(waitPoint);
      auto wait = DotWaitOp::create(builder, dot.getLoc(), dot.getType(), dot.getResult(),
                                    pending);
      dot.getResult().replaceAllUsesExcept(wait.getResult(), wait);
    }
  }
};
} // namespace
