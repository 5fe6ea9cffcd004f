//===- AllocateSharedMemory.cpp - place the scratch and the buffers -------===//
//
// The scratch (reductions, layout conversions) sits at offset 0, sized by its largest
// user. Buffers (tessel.local_alloc) follow it. A buffer is live from its first to its
// last access in program order, widened to a whole loop (or warp-specialized region)
// that accesses it from outside: the loop runs it again, or the partitions run side by
// side. Buffers whose lives do not meet share memory (first fit, in program order); one
// that reuses no dead buffer's bytes goes on top (no filling of alignment gaps), so a
// program whose buffers all meet keeps them one after another as before. Attention's three
// key-tile loops each pipeline their own K and V rings: they now take one loop's room.
//
// Only tile buffers share: every access to them is a copy into them or a dot reading
// them, which -tessel-insert-barriers orders across buffers that share memory. Anything
// else (mbarriers) keeps its own bytes for the whole kernel.
//
//===----------------------------------------------------------------------===//
#include "dialect/Layout.h"
#include "lowering/Passes.h"
#include "lowering/TileToLLVMUtils.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELALLOCATESHAREDMEMORY
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// Program-order positions: an op's own, and the last position inside its regions.
struct ProgramOrder {
  DenseMap<Operation *, std::pair<int64_t, int64_t>> span;
  explicit ProgramOrder(Operation *root) {
    int64_t next = 0;
    root->walk<WalkOrder::PreOrder>([&](Operation *op) { span[op] = {next++, 0}; });
    root->walk<WalkOrder::PostOrder>([&](Operation *op) {
      int64_t last = span[op].first;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Operation &nested : block)
            last = std::max(last, span[&nested].second);
      span[op].second = last;
    });
  }
};

struct Interval {
  int64_t begin = std::numeric_limits<int64_t>::max(), end = -1;
  void cover(std::pair<int64_t, int64_t> s) {
    begin = std::min(begin, s.first);
    end = std::max(end, s.second);
  }
  bool meets(const Interval &other) const { return begin <= other.end && other.begin <= end; }
};

/// Whether `alloc` is a tile buffer: reached through views only by copies into it and
/// dots reading it (the accesses -tessel-insert-barriers orders).
bool isTileBuffer(LocalAllocOp alloc, SmallVectorImpl<Operation *> &accesses) {
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value view = worklist.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (isa<LocalIndexOp, TransOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      auto copy = dyn_cast<AsyncCopyOp>(user);
      auto bulk = dyn_cast<TmaCopyOp>(user);
      bool ordered = isa<DotOp>(user) || (copy && use.get() == copy.getDst()) ||
                     (bulk && use.get() == bulk.getDst());
      if (!ordered)
        return false;
      accesses.push_back(user);
    }
  }
  return true;
}

/// When `alloc` is live, in program order.
Interval getLiveInterval(LocalAllocOp alloc, const ProgramOrder &order, Operation *func) {
  Interval live;
  SmallVector<Operation *> accesses;
  if (!isTileBuffer(alloc, accesses)) {
    live.cover(order.span.lookup(func));
    return live;
  }
  live.cover({order.span.lookup(alloc).first, order.span.lookup(alloc).first});
  for (Operation *access : accesses) {
    Operation *widest = access;
    for (Operation *parent = access->getParentOp(); parent && parent != func;
         parent = parent->getParentOp())
      if (isa<LoopLikeOpInterface, WarpSpecializeOp>(parent) && !parent->isAncestor(alloc))
        widest = parent;
    live.cover(order.span.lookup(widest));
  }
  return live;
}

struct Placed {
  Interval live;
  int64_t begin, end; // bytes
  bool overlaps(int64_t offset, int64_t size) const {
    return offset < end && begin < offset + size;
  }
};

/// Places every buffer of `func` from `base` on; returns the end of the highest one.
int64_t placeBuffers(Operation *func, int64_t base) {
  ProgramOrder order(func);
  SmallVector<Placed> placed;
  int64_t top = base;
  func->walk([&](LocalAllocOp alloc) {
    // wgmma's 128-byte swizzle repeats every 1024 bytes, from a 1024-aligned address.
    int64_t align = alloc.getType().isPadded() ? 128 : 1024;
    int64_t size = llvm::alignTo(alloc.getType().getSizeInBytes(), 128);
    Interval live = getLiveInterval(alloc, order, func);
    int64_t offset = llvm::alignTo(base, align);
    for (bool moved = true; moved;) {
      moved = false;
      for (const Placed &other : placed)
        if (other.live.meets(live) && other.overlaps(offset, size)) {
          offset = llvm::alignTo(other.end, align);
          moved = true;
        }
    }
    // Below the top only to reuse a dead buffer's bytes, not to fill an alignment gap:
    // a program with nothing to reuse keeps its buffers one after another.
    bool reuses = llvm::any_of(placed, [&](const Placed &other) {
      return !other.live.meets(live) && other.overlaps(offset, size);
    });
    if (!reuses)
      offset = llvm::alignTo(top, align);
    alloc.setOffset(offset);
    placed.push_back({live, offset, offset + size});
    top = std::max(top, offset + size);
  });
  return top;
}

struct TesselAllocateSharedMemoryPass
    : public tessel::impl::TesselAllocateSharedMemoryBase<TesselAllocateSharedMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t bytes = 0;
    bool failedToSize = false;
    module.walk([&](Operation *op) {
      FailureOr<int64_t> need = getScratchBytes(op);
      if (failed(need)) {
        failedToSize = true;
        return;
      }
      bytes = std::max(bytes, *need);
    });
    if (failedToSize)
      return signalPassFailure();
    // Buffers live across loops while the scratch users come and go: they follow it.
    int64_t top = bytes;
    for (Operation &op : module.getBody()->getOperations())
      if (op.getNumRegions() != 0)
        top = std::max(top, placeBuffers(&op, bytes));
    top = llvm::alignTo(top, 16);
    module->setAttr("tessel.shared",
                    IntegerAttr::get(IntegerType::get(&getContext(), 32), top));
  }
};
} // namespace
