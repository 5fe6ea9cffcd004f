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
// a buffer still being read needs one, as for cp.async. Multicast copies overwrite the
// buffer in every program of the cluster: reads since the last cluster barrier count for
// them, and a barrier placed before such a copy (in the same block, no barrier between) is
// a cluster barrier. A tessel.cluster_release is a block barrier after which the other
// programs wait for this one's release before overwriting: it clears both.
// Reads are remembered per slot of a ring (tessel.local_index) where the slot is known:
// a copy into another slot of the same ring needs no barrier. Two slots are known
// distinct when they are constants that differ, or rotating slots of one loop (iter_args
// that start at different constants below S and advance by one modulo the same S, as
// the software pipeliner's read and write slots do). Across a back edge a slot's value
// changes, so reads that reach the next iteration count for the whole ring.
// Buffers that -tessel-allocate-shared-memory placed on common bytes (their lives do not
// meet: successive loops' rings) are one buffer here: a copy into one waits for reads
// of the other and for copies into it (zero-filled copies past a loop's end are never
// read); where this thread's cp.async copies may still be in flight, a wait for them
// comes first. A bulk copy onto bytes that cp.async wrote (generic proxy) since the last
// fence.proxy.async gets a fence and a barrier, even where a barrier came before: the
// pipeliner's barrier after its mbarriers' initialisation orders threads, not proxies.
// (Async wgmma reads of a ring are retired by the dot_wait right after its loop, before
// any later loop's copies; the pipeliner's setup barrier before multicast loops is a
// cluster barrier. Both are the pipeliner's, not checked here.)
//
//===----------------------------------------------------------------------===//
#include "lowering/Passes.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELINSERTBARRIERS
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// A rotating slot: an scf.for iter_arg that starts at `init` and advances to
/// `x + 1 == modulus ? 0 : x + 1` each iteration.
struct RotatingSlot {
  Operation *loop;
  int64_t init, modulus;
};

std::optional<RotatingSlot> matchRotatingSlot(Value slot) {
  auto arg = dyn_cast<BlockArgument>(slot);
  auto loop = arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : scf::ForOp();
  if (!loop || arg.getArgNumber() == 0) // 0 is the induction variable
    return std::nullopt;
  unsigned index = arg.getArgNumber() - 1;
  IntegerAttr init;
  if (!matchPattern(loop.getInitArgs()[index], m_Constant(&init)))
    return std::nullopt;
  Value next = loop.getBody()->getTerminator()->getOperand(index);
  auto select = next.getDefiningOp<arith::SelectOp>();
  auto wrap = select ? select.getCondition().getDefiningOp<arith::CmpIOp>() : arith::CmpIOp();
  auto increment = select ? select.getFalseValue().getDefiningOp<arith::AddIOp>() : arith::AddIOp();
  IntegerAttr modulus;
  if (!wrap || !increment || wrap.getPredicate() != arith::CmpIPredicate::eq ||
      wrap.getLhs() != increment.getResult() || increment.getLhs() != arg ||
      !matchPattern(increment.getRhs(), m_One()) || !matchPattern(select.getTrueValue(), m_Zero()) ||
      !matchPattern(wrap.getRhs(), m_Constant(&modulus)))
    return std::nullopt;
  if (init.getInt() < 0 || init.getInt() >= modulus.getInt())
    return std::nullopt;
  return RotatingSlot{loop, init.getInt(), modulus.getInt()};
}

/// Whether slots `a` and `b` of one ring differ in every iteration of the code that
/// computes them.
bool areDistinctSlots(Value a, Value b) {
  if (!a || !b)
    return false;
  IntegerAttr ca, cb;
  if (matchPattern(a, m_Constant(&ca)) && matchPattern(b, m_Constant(&cb)))
    return ca.getInt() != cb.getInt();
  std::optional<RotatingSlot> ra = matchRotatingSlot(a), rb = matchRotatingSlot(b);
  return ra && rb && ra->loop == rb->loop && ra->modulus == rb->modulus && ra->init != rb->init;
}

/// A shared buffer and, where known, the slot of it (null: the whole buffer).
struct SharedRead {
  Operation *alloc;
  Value slot;
  bool operator==(const SharedRead &other) const {
    return alloc == other.alloc && slot == other.slot;
  }
};

SharedRead getSharedRead(Value shared) {
  if (auto trans = shared.getDefiningOp<TransOp>()) // a transposed view of a slot
    shared = trans.getSrc();
  Value slot;
  if (auto index = shared.getDefiningOp<LocalIndexOp>())
    if (index.getSrc().getDefiningOp<LocalAllocOp>())
      slot = index.getIndex();
  return {getSharedAlloc(shared), slot};
}

using ReadSet = SmallVector<SharedRead, 4>;

/// Whether `a` and `b` are distinct buffers placed on common bytes.
bool sharesMemory(Operation *a, Operation *b) {
  auto x = dyn_cast_or_null<LocalAllocOp>(a), y = dyn_cast_or_null<LocalAllocOp>(b);
  if (!x || !y || x == y || !x.getOffset() || !y.getOffset())
    return false;
  int64_t xBegin = *x.getOffset(), yBegin = *y.getOffset();
  return xBegin < yBegin + y.getType().getSizeInBytes() &&
         yBegin < xBegin + x.getType().getSizeInBytes();
}

/// Whether a buffer of `set` is another buffer on `dst`'s bytes.
bool sharesMemoryWithAny(const ReadSet &set, SharedRead dst) {
  return llvm::any_of(set, [&](const SharedRead &r) { return sharesMemory(r.alloc, dst.alloc); });
}

void addRead(ReadSet &set, SharedRead r) {
  if (!llvm::is_contained(set, r))
    set.push_back(r);
}

/// Reads that cross a back edge or leave a loop: their slot values no longer hold.
void forgetSlots(ReadSet &set) {
  ReadSet slotted;
  std::swap(slotted, set);
  for (const SharedRead &r : slotted)
    addRead(set, {r.alloc, Value()});
}

struct HazardState {
  Operation *pendingWait = nullptr; // the wait whose copies others may not see yet
  ReadSet read;        // since the last barrier of any kind
  ReadSet clusterRead; // since the last cluster barrier (other programs' multicasts)
  ReadSet written;     // buffers copied into since the last barrier (whole buffers)
  ReadSet unfenced;    // buffers cp.async wrote (generic proxy) since the last proxy fence
  bool copying = false; // this thread's cp.async copies may be in flight (no wait {0})

  void addRead(SharedRead r) {
    ::addRead(read, r);
    ::addRead(clusterRead, r);
  }
  void join(const HazardState &other) {
    if (!pendingWait)
      pendingWait = other.pendingWait;
    copying |= other.copying;
    for (const SharedRead &r : other.written)
      ::addRead(written, r);
    for (const SharedRead &r : other.unfenced)
      ::addRead(unfenced, r);
    for (const SharedRead &r : other.read)
      ::addRead(read, r);
    for (const SharedRead &r : other.clusterRead)
      ::addRead(clusterRead, r);
  }
  /// After a barrier (`cluster`: of the whole cluster).
  void clear(bool cluster) {
    pendingWait = nullptr;
    read.clear();
    if (!copying) // every thread's copies have landed (they all waited before it)
      written.clear();
    if (cluster)
      clusterRead.clear();
  }
  void forgetSlots() {
    ::forgetSlots(read);
    ::forgetSlots(clusterRead);
  }
  /// Whether someone (of the cluster: `cluster`) may still read what a copy into `dst`
  /// overwrites.
  bool mayBeRead(SharedRead dst, bool cluster) const {
    return llvm::any_of(cluster ? clusterRead : read, [&](const SharedRead &r) {
      return r.alloc == dst.alloc ? !areDistinctSlots(r.slot, dst.slot)
                                  : sharesMemory(r.alloc, dst.alloc);
    });
  }
  /// Whether the hazard of a copy into `dst` comes from another buffer on its bytes: read
  /// since the last barrier, or copied into and perhaps not landed everywhere.
  bool sharedBytesHazard(SharedRead dst, bool cluster) const {
    return sharesMemoryWithAny(written, dst) ||
           sharesMemoryWithAny(cluster ? clusterRead : read, dst);
  }
};

/// The buffer a copy writes, and whether it writes it in every program of the cluster.
std::optional<std::pair<SharedRead, bool>> getCopyTarget(Operation *op) {
  if (auto copy = dyn_cast<AsyncCopyOp>(op))
    return std::make_pair(getSharedRead(copy.getDst()), false);
  if (auto copy = dyn_cast<TmaCopyOp>(op))
    return std::make_pair(getSharedRead(copy.getDst()), bool(copy.getMulticast()));
  return std::nullopt;
}

/// Whether a multicast copy comes from `op` on, before the next barrier of its block: a
/// barrier placed before `op` is then a cluster barrier, and serves that copy too (its
/// slot may still be read by another program of the cluster).
bool multicastCopyFollows(Operation *op) {
  for (Operation *next = op; next; next = next->getNextNode()) {
    if (isa<BarrierOp, ClusterReleaseOp>(next) || next->getNumRegions() != 0)
      return false;
    auto target = getCopyTarget(next);
    if (target && target->second)
      return true;
  }
  return false;
}

void walkBlock(Block &block, HazardState &state);

void walkOp(Operation *op, HazardState &state) {
  OpBuilder b(op);
  if (auto barrier = dyn_cast<BarrierOp>(op)) {
    state.clear(barrier.getCluster());
    return;
  }
  // A block barrier whose program then releases what it read to the cluster: the others
  // wait for that release before they overwrite it (the software pipeliner's protocol).
  if (isa<ClusterReleaseOp>(op)) {
    state.clear(/*cluster=*/true);
    return;
  }
  if (auto wait = dyn_cast<AsyncWaitOp>(op)) {
    state.pendingWait = op;
    if (wait.getPending() == 0)
      state.copying = false;
    return;
  }
  if (isa<FenceAsyncSharedOp>(op)) {
    state.unfenced.clear();
    return;
  }
  if (auto target = getCopyTarget(op)) {
    auto [dst, multicast] = *target;
    bool bulk = isa<TmaCopyOp>(op);
    // Generic-proxy writes onto a bulk copy's bytes with no proxy fence since also count
    // (a barrier alone does not order proxies).
    bool sharedBytes = state.sharedBytesHazard(dst, multicast) ||
                       (bulk && sharesMemoryWithAny(state.unfenced, dst));
    if (state.mayBeRead(dst, multicast) || sharedBytes) {
      // Another buffer's copies on these bytes must land before this one starts.
      if (sharedBytes && state.copying) {
        AsyncWaitOp::create(b, op->getLoc(), 0);
        state.copying = false;
      }
      // A bulk copy writes through the async proxy what generic writes may have touched.
      if (sharedBytes && bulk) {
        FenceAsyncSharedOp::create(b, op->getLoc());
        state.unfenced.clear();
      }
      bool cluster = multicastCopyFollows(op);
      auto barrier = BarrierOp::create(b, op->getLoc());
      barrier.setCluster(cluster);
      state.clear(cluster);
    }
    addRead(state.written, {dst.alloc, Value()});
    if (!bulk) {
      state.copying = true;
      addRead(state.unfenced, {dst.alloc, Value()});
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
        if (isWgmmaOperand(operand))
          FenceAsyncSharedOp::create(b, op->getLoc());
        bool cluster = multicastCopyFollows(state.pendingWait);
        BarrierOp::create(b, op->getLoc()).setCluster(cluster);
        state.clear(cluster);
      }
      state.addRead(getSharedRead(operand));
    }
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    HazardState entry = state;
    HazardState body = state;
    walkBlock(*loop.getBody(), body);
    HazardState again = body; // the back edge: iteration i+1 after iteration i
    again.forgetSlots();
    again.join(entry);
    walkBlock(*loop.getBody(), again);
    again.forgetSlots();
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
  // The partitions run side by side and hand buffers over through mbarriers: each
  // starts from the state before, and the program joins them after.
  if (auto ws = dyn_cast<WarpSpecializeOp>(op)) {
    HazardState producer = state, consumers = state;
    walkBlock(ws.getProducer().front(), producer);
    walkBlock(ws.getConsumers().front(), consumers);
    state = producer;
    state.join(consumers);
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
