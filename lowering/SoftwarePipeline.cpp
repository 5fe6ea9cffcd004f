//===- SoftwarePipeline.cpp - num_stages-deep cp.async pipelining of loads -===//
//
// Turns
//   scf.for %iv = %lb to %ub step %c {
//     %a = tessel.load %pa(%iv), %ma(%iv)      // only use: the dot
//     %d = tessel.dot %a, ...
// into (D = S-1 iterations copied ahead)
//   %ring = tessel.local_alloc : !tessel.shared<S x M x K x T>
//   copies of iterations 0 .. D-1 into slots 0 .. D-1, one commit group each
//   scf.for %iv ... iter_args(..., %read = 0, %write = D) {
//     tessel.async_wait {pending = D-1}          // iteration %iv's copies have landed
//     %a = tessel.local_index %ring[%read]
//     %d = tessel.dot %a, ...
//     copy iteration %iv + D*%c into slot %write; commit
//   }
//   tessel.async_wait {pending = 0}
// The address computation of the load (its backward slice in the body, which may use
// only %iv and loop invariants) is cloned for the iteration being copied; the copy is
// masked with `iteration < %ub` so copies past the end do nothing but zero-fill.
// In mma.sync loops the copies follow the dots (the tensor cores need not wait for their
// issue), except bulk-copy-only loops with 2 stages; wgmma loops issue them first. %write
// is never %read, and the slot %write names was last read in the previous iteration,
// before the barrier that -tessel-insert-barriers puts after the wait.
//
// On sm_90a a dot that can run on register-A wgmma (WgmmaLayout.h) may also take its B as
// trans(load) when K fills 128-byte rows (attention's S = Q K^T with K loaded as rows):
// the ring holds the loaded tile, and trans becomes a view of the slot, read K-major. A
// load whose uses are all such B operands, as is or transposed, gets one ring for all
// (the backward's Q and dO).
//
// A dot that will run on sm_90a's wgmma (both operands pipelined, S >= 3, the
// accumulator only carried from one iteration's dot to the next) becomes `async` and
// stays in flight while the next iteration issues its own: `tessel.dot_wait {pending = 1}`
// after it, `{pending = 0}` after the loop. Its slot is still being read during the next
// iteration, so copies run one iteration less ahead (D = S-2): the slot iteration i fills
// was last read by dot i-2, which every thread retired before iteration i's barrier.
//
// Operands of such dots named by the `tma` option ("b" by default), and B operands of
// register-A wgmma dots (as is or through trans: attention's K and V), that read one block
// of a row-major matrix (BlockAccess.h; one of a batch at computed indices, as attention's
// (batch, head) tiles are), 16-byte aligned, come by the bulk tensor engine
// instead of cp.async: a `tessel.tma_copy` per load from a tensor-map kernel parameter
// (appended to the function; its recipe goes to the module's tessel.tensor_maps for the
// package), one mbarrier per slot, and at the top of iteration j a
// `tessel.mbarrier_wait` on slot j % S for parity (j / S) & 1. On sm_90 and sm_90a the
// operands of mma.sync dots named by `mma-tma` ("ab" by default) go the same way when they
// are blocks that fit the boxes (f16/bf16/f32, A one 128-byte row wide, B a multiple of
// that, at most 256 rows): their rings are marked "swizzled" (WgmmaLayout.h), a tf32
// dot's B "interleaved" when its rows come in groups of 8 (conflict-free loads). On sm_90a
// a tf32 dot whose operands both come that way runs transposed on wgmma (WgmmaLayout.h)
// and, from 3 stages on, stays in flight like the f16/bf16 wgmma dots above (copies
// first, D = S-2).
//
// With `multicast-b` N > 1, a bulk-copied B tile of whole column blocks in a loop whose
// copies follow the dots is shared by a cluster of N programs (TMA multicast) where the
// kernel's test holds: B's column start, recomputed for the N program ids of the cluster,
// is the same, and the launch made a cluster of N. Each slot then also has an "empty"
// mbarrier; after the dots a program releases the slot it read to the others
// (tessel.cluster_release) and the lane issuing a shared piece waits for their release of
// the slot it refills (docs/matmul.md).
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/Passes.h"
#include "lowering/AxisInfo.h"
#include "lowering/BlockAccess.h"
#include "lowering/PartitionLoopNests.h"
#include "lowering/PipelinePlan.h"
#include "lowering/PipelineTensorMaps.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSOFTWAREPIPELINE
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::pipeline;

namespace {

/// Slot `slot` of a stack of shared buffers (a ring of tiles or of mbarriers).
Value slotOf(OpBuilder &b, Location loc, Value stack, Value slot) {
  auto type = cast<SharedType>(stack.getType());
  return LocalIndexOp::create(b, loc, type.withShape(type.getShape().drop_front()), stack, slot);
}

/// A warp-specialized loop's rings and where its partitions left them: a later loop of
/// the function whose loads fill rings of the same types continues them (WarpSpecialize
/// below) instead of holding rings of its own.
struct SpecializedRings {
  SmallVector<Type> types; // the rings' types (slots, tile, layout)
  SmallVector<Value> rings;
  Value barriers, consumed;
  /// Where the last loop left them, and the loops around specialized loops.
  PartitionState state;
  LoopNests nests;
};

/// One loop's pipeline as planned (PipelinePlan.h), in two steps: allocate() creates
/// the rings, mbarriers and tensor-map parameters before the loop;
/// rewrite() emits the prologue's copies, the loop's slots and waits, and the copies
/// ahead in the body, and retires what is in flight.
class LoopPipeliner {
public:
  /// `specialized`: the function's earlier specialized rings (null for a loop that is
  /// not specialized), which a specialized loop continues or replaces with its own.
  /// `retired`: loops the rewrite replaced (loops around a specialized loop take its
  /// state along: PartitionLoopNests.h).
  LoopPipeliner(scf::ForOp loop, PipelinePlan plan, PipelineOptions options,
                std::optional<SpecializedRings> *specialized,
                llvm::DenseSet<Operation *> *retired)
      : loop(loop), plan(std::move(plan)), options(options), loc(loop.getLoc()),
        rewriter(loop.getContext()), i32(rewriter.getI32Type()),
        ivType(loop.getInductionVar().getType()), specialized(specialized),
        retired(retired) {}

  LogicalResult allocate();
  LogicalResult rewrite();
  /// Warp specialization (plan.warpSpecialize): a producer partition copies every
  /// iteration into the rings, the consumers compute (WarpSpecialize below).
  LogicalResult rewriteSpecialized();
  /// Whether the loop runs in the partitions (the plan's choice, unless allocate() found
  /// that a loop inside loops would need rings of its own).
  bool specializes() const { return plan.warpSpecialize; }

private:
  Value constant(OpBuilder &b, Type type, int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, type, v);
  }
  /// One mbarrier per slot, each expecting `count` arrivals a phase.
  Value barrierRing(unsigned count);
  LogicalResult allocateTensorMaps();
  /// Copies of iteration `iv` into `slot` of every ring, as one commit group.
  void emitCopies(OpBuilder &b, Value iv, Value slot);
  /// The producer's loop from `state`: wait for a slot's release, copy an iteration
  /// into it. Returns its results (the producer's slot and parity after it).
  SmallVector<Value, 2> emitProducerLoop(OpBuilder &b, ValueRange state);
  /// slot + 1, and whether that is past a ring of plan.stages (the next slot is then 0).
  std::pair<Value, Value> incrementSlot(OpBuilder &b, Value slot) const;
  /// The slot after `slot` in a ring of plan.stages (0 after the last).
  Value nextSlot(OpBuilder &b, Value slot) const;
  /// The slot after `slot` and the parity of its phase (flipped where the ring wraps).
  std::pair<Value, Value> advance(OpBuilder &b, Value slot, Value parity) const;
  /// The parity of the phase a slot's mbarrier completes for iteration j - `back`.
  Value phaseParity(int64_t back);
  /// Multicast: releases this iteration's slot and sets up the wait for the next one.
  void releaseSharedSlot(Value ahead, Value readSlot, Value writeSlot);
  void replaceLoadsBySlots(Value readSlot);
  void retireAsyncDots();
  /// Ping-pong: the consumer warpgroups issue the loop's first product in turn.
  void takeTurns(WarpSpecializeOp ws);

  scf::ForOp loop, newLoop;
  PipelinePlan plan; // PipelinePlan.cpp
  PipelineOptions options;
  Location loc;
  IRRewriter rewriter;
  Type i32, ivType;
  std::optional<SpecializedRings> *specialized;
  llvm::DenseSet<Operation *> *retired;
  bool continues = false; // this loop continues an earlier loop's rings

  // allocate()
  SmallVector<Value> rings;
  Value barriers;
  SmallVector<Value> tensorMaps;  // null for loads copied with cp.async
  SmallVector<Value> wholeBlocks; // i1: one box brings the tile (null: a box per block)
  SmallVector<Value> multicasts;  // i1: the cluster copies the same tile (null: no multicast)
  Value active;  // i1: the copies are shared now (a cluster of multicastB, same tiles)
  Value empties; // the slots' "empty" mbarriers (multicast)
  Value consumed; // warp specialization: the consumers release the slots on these
  Operation *setupEnd = nullptr; // the barrier after the mbarriers' initialisation

  // rewrite()
  SmallVector<Value, 3> emptyWait; // in the loop: the empty mbarrier, phase and condition
};

Value LoopPipeliner::barrierRing(unsigned count) {
  Value ring = LocalAllocOp::create(
      rewriter, loc,
      SharedType::get(rewriter.getContext(), {int64_t(plan.stages), 1, 1}, rewriter.getI64Type()),
      IntegerAttr());
  for (unsigned s = 0; s < plan.stages; ++s)
    MBarrierInitOp::create(rewriter, loc, slotOf(rewriter, loc, ring, constant(rewriter, i32, s)),
                           count);
  return ring;
}

LogicalResult LoopPipeliner::allocate() {
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<Type> types;
  for (auto [load, layout] : llvm::zip(plan.loads, plan.ringLayouts)) {
    auto type = cast<RankedTensorType>(load.getType());
    SmallVector<int64_t> shape{int64_t(plan.stages)};
    shape.append(type.getShape().begin(), type.getShape().end());
    // mma.sync operands copied by the bulk tensor engine land 128-byte swizzled
    // (-tessel-assign-layouts gives wgmma's buffers their layouts).
    types.push_back(SharedType::get(ctx, shape, type.getElementType(), layout));
  }
  // A loop inside loops takes the rings' state across them (PartitionLoopNests.h): it
  // must continue the rings of the function's earlier specialized loop, if any, or it
  // is pipelined by the consumers themselves.
  if (plan.warpSpecialize && *specialized && (*specialized)->types != types &&
      isa<scf::ForOp>(loop->getParentOp()))
    plan.warpSpecialize = false;
  // A warp-specialized program sets up its rings and mbarriers first, for both
  // partitions (before the partitions, where an earlier loop made them).
  if (plan.warpSpecialize) {
    Block &entry = loop->getParentOfType<func::FuncOp>().getBody().front();
    auto partitions = entry.getOps<WarpSpecializeOp>();
    if (partitions.empty())
      rewriter.setInsertionPointToStart(&entry);
    else
      rewriter.setInsertionPoint(*partitions.begin());
  } else
    rewriter.setInsertionPoint(loop);
  // Rings of the same types as the function's previous specialized loop's: continue
  // them (one set of rings for all the loops, as the partitions run the loops in turn).
  continues = plan.warpSpecialize && *specialized && (*specialized)->types == types &&
              options.multicastB <= 1;
  if (continues) {
    rings = (*specialized)->rings;
    barriers = (*specialized)->barriers;
    consumed = (*specialized)->consumed;
  } else {
    for (Type type : types)
      rings.push_back(LocalAllocOp::create(rewriter, loc, type, IntegerAttr()));
  }
  if (plan.tmaCount)
    return allocateTensorMaps();
  tensorMaps.assign(plan.loads.size(), Value());
  wholeBlocks.assign(plan.loads.size(), Value());
  multicasts.assign(plan.loads.size(), Value());
  return success();
}

// TMA: one mbarrier per slot (both copies of a stage arrive on it), and a tensor map
// per load, a kernel parameter the runtime encodes (recorded in tessel.tensor_maps).
LogicalResult LoopPipeliner::allocateTensorMaps() {
  MLIRContext *ctx = rewriter.getContext();
  unsigned multicastB = options.multicastB;
  BarrierOp initialised;
  if (!continues) {
    barriers = barrierRing(plan.tmaCount);
    // One arrival per consumer warp releases a slot.
    if (plan.warpSpecialize)
      consumed = barrierRing(plan.numWarps);
    // A cluster barrier where copies are multicast: the other programs' copies signal
    // this one's mbarriers.
    initialised = BarrierOp::create(rewriter, loc);
    setupEnd = initialised;
  }
  auto func = loop->getParentOfType<func::FuncOp>();
  ModuleOp module = func->getParentOfType<ModuleOp>();
  SmallVector<Attribute> recipes;
  AxisInfoAnalysis axisInfo(func);
  if (auto existing = module->getAttrOfType<ArrayAttr>("tessel.tensor_maps"))
    recipes.append(existing.begin(), existing.end());
  for (auto [load, tma, layout] : llvm::zip(plan.loads, plan.viaTma, plan.ringLayouts)) {
    if (!tma) {
      tensorMaps.push_back(Value());
      wholeBlocks.push_back(Value());
      multicasts.push_back(Value());
      continue;
    }
    unsigned index = func.getNumArguments();
    NamedAttrList attrs;
    attrs.set("llvm.byval", TypeAttr::get(LLVM::LLVMArrayType::get(rewriter.getI8Type(), 128)));
    attrs.set("llvm.align", rewriter.getI64IntegerAttr(64));
    // nvvm.grid_constant once the function is a kernel (-tessel-mark-kernel-entries).
    attrs.set("tessel.grid_constant", rewriter.getUnitAttr());
    if (failed(func.insertArgument(index, LLVM::LLVMPointerType::get(ctx),
                                   attrs.getDictionary(ctx), loc)))
      return func.emitError("could not add a tensor-map parameter");
    tensorMaps.push_back(func.getArgument(index));
    BlockAccess access = *matchBlockAccess(load);
    int64_t colBlocks = wholeColumnBlocks(load, access, /*wgmma=*/!plan.mmaPath, axisInfo);
    // Multicast of a B tile of whole blocks: the programs of a cluster must run the
    // same iterations over the same rows, and the kernel tests that they copy the
    // same columns.
    Value shared;
    if (multicastB > 1 && plan.copiesLast && colBlocks % int64_t(multicastB) == 0 &&
        !isAOperand(load) &&
        llvm::all_of(ValueRange{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()},
                     [&](Value v) { return isSameAlongProgramAxis0(v, loop); }) &&
        (!access.row || isSameAlongProgramAxis0(access.row, loop)))
      shared = buildClusterSharesTileTest(rewriter, loc, access, multicastB);
    DictionaryAttr recipe = tensorMapRecipe(rewriter, load, access, index,
                                            /*wgmma=*/!plan.mmaPath,
                                            /*interleaved=*/layout == SharedLayout::Interleaved,
                                            colBlocks);
    if (shared) {
      NamedAttrList fields(recipe);
      fields.set("multicast", rewriter.getI64IntegerAttr(multicastB));
      recipe = fields.getDictionary(ctx);
    }
    recipes.push_back(recipe);
    multicasts.push_back(shared);
    wholeBlocks.push_back(colBlocks > 1 ? buildWholeBlocksTest(rewriter, loc, func, access,
                                                               access.blockCols / colBlocks)
                                        : Value());
  }
  module->setAttr("tessel.tensor_maps", rewriter.getArrayAttr(recipes));
  // Multicast: the copies are shared where the launch made clusters of multicastB
  // programs and they all copy the same tiles. Each slot also gets an "empty"
  // mbarrier on which the other programs release it (multicastB - 1 arrivals a
  // phase), initialised with the others; the barrier after the init is a cluster
  // barrier, as the other programs' copies and releases reach this one's mbarriers.
  if (llvm::any_of(multicasts, [](Value v) { return bool(v); })) {
    Value clusterSize = ClusterSizeOp::create(rewriter, loc, i32);
    active = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, clusterSize,
                                   constant(rewriter, i32, multicastB));
    for (Value shared : multicasts)
      if (shared)
        active = arith::AndIOp::create(rewriter, loc, active, shared);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(initialised);
    empties = barrierRing(multicastB - 1);
    initialised.setCluster(true);
  }
  return success();
}

void LoopPipeliner::emitCopies(OpBuilder &b, Value iv, Value slot) {
  unsigned multicastB = options.multicastB;
  Value ub = loop.getUpperBound();
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  for (Operation &op : loop.getBody()->without_terminator())
    if (plan.slice.contains(&op))
      b.clone(op, mapping);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub);
  if (plan.tmaCount) {
    Value barrier = slotOf(b, loc, barriers, slot);
    for (auto [load, ring, map, whole, shared] :
         llvm::zip(plan.loads, rings, tensorMaps, wholeBlocks, multicasts)) {
      if (!map)
        continue;
      // Matched again: the loop (and its induction variable) may have been replaced.
      BlockAccess access = *matchBlockAccess(load);
      Value tile = slotOf(b, loc, ring, slot);
      auto start = [&](Value v) { return v ? mapping.lookupOrDefault(v) : constant(b, i32, 0); };
      bool waits = shared && !emptyWait.empty();
      // One op per statement (argument evaluation order is unspecified).
      Value col = start(access.col), row = start(access.row);
      SmallVector<Value, 2> batch;
      for (const BatchIndex &outer : access.batch)
        batch.push_back(mapping.lookupOrDefault(outer.index));
      TmaCopyOp::create(b, loc, map, row, col, batch, tile, barrier, inRange, whole,
                        shared ? active : Value(), waits ? emptyWait[0] : Value(),
                        waits ? emptyWait[1] : Value(), waits ? emptyWait[2] : Value(),
                        shared ? b.getI64IntegerAttr(multicastB) : IntegerAttr());
    }
  }
  if (!plan.anyCpAsync)
    return;
  for (auto [load, ring, map] : llvm::zip(plan.loads, rings, tensorMaps)) {
    if (map)
      continue;
    auto type = cast<RankedTensorType>(load.getType());
    Value mask =
        SplatOp::create(b, loc, RankedTensorType::get(type.getShape(), b.getI1Type()), inRange);
    if (load.getMask())
      mask = arith::AndIOp::create(b, loc, mapping.lookupOrDefault(load.getMask()), mask);
    Value tile = slotOf(b, loc, ring, slot);
    AsyncCopyOp::create(b, loc, mapping.lookupOrDefault(load.getPtr()), tile, mask);
  }
  AsyncCommitOp::create(b, loc);
}

std::pair<Value, Value> LoopPipeliner::incrementSlot(OpBuilder &b, Value slot) const {
  Value next = arith::AddIOp::create(b, loc, slot, constant(b, i32, 1));
  return {next, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next,
                                      constant(b, i32, plan.stages))};
}

Value LoopPipeliner::nextSlot(OpBuilder &b, Value slot) const {
  auto [next, wrap] = incrementSlot(b, slot);
  return arith::SelectOp::create(b, loc, wrap, constant(b, i32, 0), next);
}

std::pair<Value, Value> LoopPipeliner::advance(OpBuilder &b, Value slot, Value parity) const {
  auto [next, wrap] = incrementSlot(b, slot);
  Value flip = arith::ExtUIOp::create(b, loc, i32, wrap);
  return {arith::SelectOp::create(b, loc, wrap, constant(b, i32, 0), next),
          arith::XOrIOp::create(b, loc, parity, flip)};
}

Value LoopPipeliner::phaseParity(int64_t back) {
  // j = (iv - lb) / step: iteration j - back's slot completes its ((j - back) / S)-th phase.
  Value j = arith::SubIOp::create(rewriter, loc, newLoop.getInductionVar(), newLoop.getLowerBound());
  j = arith::DivUIOp::create(rewriter, loc, j, constant(rewriter, ivType, plan.step));
  if (back)
    j = arith::SubIOp::create(rewriter, loc, j, constant(rewriter, ivType, back));
  Value phase = arith::DivUIOp::create(rewriter, loc, j, constant(rewriter, ivType, plan.stages));
  phase = arith::AndIOp::create(rewriter, loc, phase, constant(rewriter, ivType, 1));
  if (ivType != i32)
    phase = arith::TruncIOp::create(rewriter, loc, i32, phase);
  return phase;
}

// Multicast copies go last: after this iteration's dots the program is done with
// slot j % S, and releases it to the others (a block barrier, then one arrival on
// each other program's empty mbarrier of the slot), where one of them will copy into
// it (iteration j + 1 copies, j + 1 + D < the trip count). Before copying into slot
// (j - 1) % S it waits for the others' release of it from their iteration j - 1:
// one iteration of slack, and phase (j - 1) / S of that slot's empty mbarrier. Only
// the lane that issues the shared copy waits (tessel.tma_copy's `after`).
void LoopPipeliner::releaseSharedSlot(Value ahead, Value readSlot, Value writeSlot) {
  unsigned multicastB = options.multicastB;
  Value iv = newLoop.getInductionVar(), ub = newLoop.getUpperBound();
  Value releaseAhead = arith::AddIOp::create(
      rewriter, loc, iv, constant(rewriter, ivType, int64_t(plan.distance + 1) * plan.step));
  Value released = arith::AndIOp::create(
      rewriter, loc, active,
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, releaseAhead, ub));
  ClusterReleaseOp::create(rewriter, loc, slotOf(rewriter, loc, empties, readSlot), released,
                           rewriter.getI64IntegerAttr(multicastB));
  // One statement per op: the order of function arguments' evaluation is unspecified,
  // and the IR (and PTX) should not depend on the host compiler.
  Value inRange = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, ahead, ub);
  Value later =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt, iv, newLoop.getLowerBound());
  Value copying = arith::AndIOp::create(rewriter, loc, later, inRange);
  copying = arith::AndIOp::create(rewriter, loc, active, copying);
  Value phase = phaseParity(1);
  emptyWait = {slotOf(rewriter, loc, empties, writeSlot), phase, copying};
}

void LoopPipeliner::replaceLoadsBySlots(Value readSlot) {
  for (auto [load, ring] : llvm::zip(plan.loads, rings)) {
    rewriter.setInsertionPoint(load);
    Value tile = slotOf(rewriter, load.getLoc(), ring, readSlot);
    load.getResult().replaceAllUsesWith(tile);
    rewriter.eraseOp(load);
    // trans(load) becomes a transposed view of the slot.
    auto slotType = cast<SharedType>(tile.getType());
    for (Operation *user : tile.getUsers())
      if (auto trans = dyn_cast<TransOp>(user))
        trans.getResult().setType(
            slotType.withShape({slotType.getShape()[1], slotType.getShape()[0]}));
  }
}

// Async dots: one group stays in flight into the next iteration; all are retired
// before the loop's result is read.
void LoopPipeliner::retireAsyncDots() {
  for (DotOp dot : plan.asyncDots) {
    dot.setAsync(true);
    rewriter.setInsertionPointAfter(dot);
    auto wait = DotWaitOp::create(rewriter, dot.getLoc(), dot.getType(), dot.getResult(), 1);
    dot.getResult().replaceAllUsesExcept(wait.getResult(), wait);
    OpResult result = newLoop->getResult(wait->use_begin()->getOperandNumber());
    rewriter.setInsertionPointAfter(newLoop);
    auto drained = DotWaitOp::create(rewriter, dot.getLoc(), result.getType(), result, 0);
    result.replaceAllUsesExcept(drained.getResult(), drained);
  }
}

LogicalResult LoopPipeliner::rewrite() {
  // Prologue: iterations 0 .. D-1.
  Value lb = loop.getLowerBound();
  for (unsigned s = 0; s < plan.distance; ++s) {
    Value iv = s == 0 ? lb
                      : arith::AddIOp::create(rewriter, loc, lb,
                                              constant(rewriter, ivType, int64_t(s) * plan.step))
                            .getResult();
    emitCopies(rewriter, iv, constant(rewriter, i32, s));
  }

  // The loop carries the slot it reads and the slot it fills.
  SmallVector<Value> slotInits{constant(rewriter, i32, 0), constant(rewriter, i32, plan.distance)};
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, slotInits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location, ArrayRef<BlockArgument> args) -> SmallVector<Value> {
        return {nextSlot(b, args[0]), nextSlot(b, args[1])};
      });
  if (failed(replaced))
    return loop.emitError("could not add the pipeline's slots to the loop");
  newLoop = cast<scf::ForOp>(replaced->getOperation());
  unsigned numArgs = newLoop.getRegionIterArgs().size();
  Value readSlot = newLoop.getRegionIterArgs()[numArgs - 2];
  Value writeSlot = newLoop.getRegionIterArgs()[numArgs - 1];
  // The old loop is gone: the slice and the loads now live in newLoop's body.
  loop = newLoop;

  rewriter.setInsertionPointToStart(newLoop.getBody());
  if (plan.anyCpAsync)
    AsyncWaitOp::create(rewriter, loc, plan.distance - 1);
  // Iteration j reads slot j % S: wait for its copies.
  if (plan.tmaCount)
    MBarrierWaitOp::create(rewriter, loc, slotOf(rewriter, loc, barriers, readSlot),
                           phaseParity(0));
  if (plan.copiesLast)
    rewriter.setInsertionPoint(newLoop.getBody()->getTerminator());
  Value ahead = arith::AddIOp::create(rewriter, loc, newLoop.getInductionVar(),
                                      constant(rewriter, ivType,
                                               int64_t(plan.distance) * plan.step));
  if (empties)
    releaseSharedSlot(ahead, readSlot, writeSlot);
  emitCopies(rewriter, ahead, writeSlot);

  replaceLoadsBySlots(readSlot);
  rewriter.setInsertionPointAfter(newLoop);
  if (plan.anyCpAsync)
    AsyncWaitOp::create(rewriter, loc, 0);
  retireAsyncDots();
  return success();
}

//===----------------------------------------------------------------------===//
// Warp specialization
//
// The function's body after the setup (rings, mbarriers, the barrier after their
// initialisation) becomes the consumers' region of a tessel.warp_specialize: its loop
// waits for slot j % S's copies (full mbarrier, parity (j / S) & 1), issues the dots,
// and once the dots of iteration j - 1 have retired releases slot (j - 1) % S: one
// arrival per consumer warp on its "consumed" mbarrier. That is after iteration j's
// last dot_wait {1} where a dot stays in flight, else at the top of iteration j (every
// dot of j - 1 was waited for in its iteration, AsyncDots.cpp). The producer's region
// runs the same iterations, each waiting for its slot's release from the round before
// (parity ((j / S) & 1) ^ 1, which a fresh mbarrier passes at once: the first S
// iterations do not wait) and copying into it. Both loops carry their slot and parity
// (and the consumers whether they hold a slot still to release). A later loop of the
// function is already in the consumers' region; its producer loop follows the earlier
// ones', so the producer runs ahead into it. Where its rings would be of the same types
// it continues the earlier loop's rings, slots and phases (j counts on from the earlier
// loop's iterations; its first iteration releases the earlier loop's last slot), so
// the loops of a program hold one set of rings; else it gets its own. What the copies
// need from the consumers' code (bounds, addresses) the producer computes again: pure ops, cloned
// (PipelinePlan.cpp checked). The registers move from the producer (it only issues
// copies) to the consumers.
//===----------------------------------------------------------------------===//

/// setmaxnreg counts for `consumerWarps` consumer warps and one producer warpgroup:
/// the per-thread budget the block size allows (ptxas allocates it at entry when the
/// kernel reallocates), the producer down to the smallest count from 24 that gives each
/// consumer warpgroup a multiple of 8 more; {0, 0} (no reallocation) for one consumer
/// warpgroup, which has its 255 already. FlashAttention-3's 24/240 (two consumer
/// warpgroups) and 32/160 (three) come out of it.
static std::pair<int32_t, int32_t> registerCounts(unsigned consumerWarps) {
  unsigned groups = consumerWarps / 4;
  if (groups < 2)
    return {0, 0};
  int32_t entry = int32_t(65536 / ((consumerWarps + kProducerWarps) * 32)) / 8 * 8;
  entry = std::min(entry, 248);
  for (int32_t producer = 24; producer < entry; producer += 8)
    if ((entry - producer) % int32_t(8 * groups) == 0) {
      int32_t consumer = entry + (entry - producer) / int32_t(groups);
      if (consumer <= 256)
        return {producer, consumer};
    }
  return {0, 0};
}

SmallVector<Value, 2> LoopPipeliner::emitProducerLoop(OpBuilder &b, ValueRange state) {
  auto producerLoop = scf::ForOp::create(b, loc, loop.getLowerBound(), loop.getUpperBound(),
                                         loop.getStep(), state);
  OpBuilder body = OpBuilder::atBlockBegin(producerLoop.getBody());
  Value iv = producerLoop.getInductionVar();
  Value slot = producerLoop.getRegionIterArgs()[0];
  Value parity = producerLoop.getRegionIterArgs()[1];
  Value released = arith::XOrIOp::create(body, loc, parity, constant(body, i32, 1));
  MBarrierWaitOp::create(body, loc, slotOf(body, loc, consumed, slot), released);
  emitCopies(body, iv, slot);
  auto [nextSlot, nextParity] = advance(body, slot, parity);
  scf::YieldOp::create(body, loc, ValueRange{nextSlot, nextParity});
  return {producerLoop.getResult(0), producerLoop.getResult(1)};
}

// With two or more consumer warpgroups and the dots retiring within the iteration (a
// product, then what uses it, then the next product), the warpgroups would issue and
// wait in step: the tensor cores idle while both compute the softmax. Taking turns at the
// first product of each iteration (FlashAttention-3's ping-pong) staggers them by it, so
// one warpgroup's softmax runs while the other's products do. The first turn is given
// once per program, before the consumers' code; a later loop continues the same turns
// (every warpgroup runs the same iterations).
void LoopPipeliner::takeTurns(WarpSpecializeOp ws) {
  int32_t groups = int32_t(plan.numWarps / 4);
  auto dots = newLoop.getBody()->getOps<DotOp>();
  if (groups < 2 || dots.empty())
    return;
  DotOp first = *dots.begin();
  auto turn = [&](WarpgroupTurnStep step) {
    WarpgroupTurnOp::create(rewriter, loc, step, groups);
  };
  Block &consumers = ws.getConsumers().front();
  if (consumers.getOps<WarpgroupTurnOp>().empty()) {
    rewriter.setInsertionPointToStart(&consumers);
    turn(WarpgroupTurnStep::Start);
  }
  rewriter.setInsertionPoint(first);
  turn(WarpgroupTurnStep::Wait);
  rewriter.setInsertionPointAfter(first);
  turn(WarpgroupTurnStep::Pass);
}

LogicalResult LoopPipeliner::rewriteSpecialized() {
  // The partitions (made by the function's first specialized loop): the function's body
  // after the setup becomes the consumers'.
  WarpSpecializeOp ws = loop->getParentOfType<WarpSpecializeOp>();
  if (!ws) {
    Block *body = setupEnd->getBlock();
    rewriter.setInsertionPointAfter(setupEnd);
    auto [producerRegisters, consumerRegisters] = registerCounts(plan.numWarps);
    ws = WarpSpecializeOp::create(rewriter, loc, kProducerWarps, producerRegisters,
                                  consumerRegisters);
    rewriter.createBlock(&ws.getProducer());
    Block *consumers = rewriter.createBlock(&ws.getConsumers());
    consumers->getOperations().splice(consumers->end(), body->getOperations(),
                                      std::next(ws->getIterator()),
                                      body->getTerminator()->getIterator());
  }
  Block *producer = &ws.getProducer().front();

  // Where the rings stand: new rings at slot 0, parity 0, no slot held; else where the
  // earlier loop left them, carried through the loops around this one.
  PartitionState state;
  if (continues) {
    state = (*specialized)->state;
  } else {
    Operation *top = loop;
    while (top->getParentOp() != ws.getOperation())
      top = top->getParentOp();
    rewriter.setInsertionPoint(top);
    state.consumers = {constant(rewriter, i32, 0), constant(rewriter, i32, 0),
                       arith::ConstantIntOp::create(rewriter, loc, 0, 1)};
    OpBuilder start = OpBuilder::atBlockEnd(producer);
    state.producer = {constant(start, i32, 0), constant(start, i32, 0)};
    *specialized = SpecializedRings{
        SmallVector<Type>(llvm::map_range(rings, [](Value r) { return r.getType(); })),
        rings, barriers, consumed, {}, LoopNests(retired)};
  }
  LoopNests &nests = (*specialized)->nests;
  Block *producerBlock = nests.enter(loop, ws, state, rewriter);

  // The consumers' loop carries the slot it reads, its phase's parity and whether it
  // holds a slot to release (the previous iteration's, or the earlier loop's last).
  rewriter.setInsertionPoint(loop);
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, state.consumers, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location, ArrayRef<BlockArgument> args) -> SmallVector<Value> {
        auto [slot, parity] = advance(b, args[0], args[1]);
        return {slot, parity, arith::ConstantIntOp::create(b, loc, 1, 1)};
      });
  if (failed(replaced))
    return loop.emitError("could not add the pipeline's slot to the loop");
  newLoop = cast<scf::ForOp>(replaced->getOperation());
  loop = newLoop;
  unsigned numArgs = newLoop.getRegionIterArgs().size();
  Value readSlot = newLoop.getRegionIterArgs()[numArgs - 3];
  Value readParity = newLoop.getRegionIterArgs()[numArgs - 2];
  Value holding = newLoop.getRegionIterArgs()[numArgs - 1];

  // The producer's loop copies from the loads' addresses (before the consumers' loads
  // become slots).
  OpBuilder b = atProducerEnd(producerBlock);
  unsigned numResults = newLoop.getNumResults();
  PartitionState after;
  after.consumers = {newLoop.getResult(numResults - 3), newLoop.getResult(numResults - 2),
                     newLoop.getResult(numResults - 1)};
  after.producer = emitProducerLoop(b, state.producer);
  nests.leave(newLoop, after);
  (*specialized)->state = after;

  // The consumers wait for a slot's copies, and release the previous iteration's slot
  // once its dots retired.
  rewriter.setInsertionPointToStart(newLoop.getBody());
  MBarrierWaitOp::create(rewriter, loc, slotOf(rewriter, loc, barriers, readSlot), readParity);
  replaceLoadsBySlots(readSlot);
  retireAsyncDots();
  Operation *lastWait = nullptr;
  for (DotWaitOp wait : newLoop.getBody()->getOps<DotWaitOp>())
    lastWait = wait;
  if (lastWait)
    rewriter.setInsertionPointAfter(lastWait);
  else
    rewriter.setInsertionPointToStart(newLoop.getBody());
  Value isFirst = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, readSlot,
                                        constant(rewriter, i32, 0));
  Value previous = arith::SelectOp::create(
      rewriter, loc, isFirst, constant(rewriter, i32, plan.stages - 1),
      arith::SubIOp::create(rewriter, loc, readSlot, constant(rewriter, i32, 1)));
  MBarrierArriveOp::create(rewriter, loc, slotOf(rewriter, loc, consumed, previous), holding);
  if (!lastWait && options.warpgroupTurns)
    takeTurns(ws);
  if (failed(recomputeIn(producer, ws.getConsumers(), nests.inductionVariables())))
    return failure();
  ModuleOp module = ws->getParentOfType<ModuleOp>();
  module->setAttr("tessel.producer_warps", rewriter.getI32IntegerAttr(kProducerWarps));
  return success();
}

struct TesselSoftwarePipelinePass
    : public tessel::impl::TesselSoftwarePipelineBase<TesselSoftwarePipelinePass> {
  using TesselSoftwarePipelineBase::TesselSoftwarePipelineBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned stages = numStages ? unsigned(numStages) : getNumStages(module);
    if (stages < 2)
      return;
    unsigned numWarps = getNumWarps(module);
    StringRef arch = Target::of(module).arch();
    PipelineOptions options{tmaOperands, mmaTmaOperands, multicastB, warpSpecialize,
                            warpgroupTurns};
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    // Per function, its specialized loops' rings so far (loops come in program order).
    DenseMap<Operation *, std::optional<SpecializedRings>> specialized;
    llvm::DenseSet<Operation *> retired; // loops replaced as they took a state along
    for (scf::ForOp loop : loops) {
      if (retired.contains(loop.getOperation()))
        continue;
      std::optional<PipelinePlan> plan = planPipeline(loop, stages, numWarps, arch, options);
      if (!plan)
        continue;
      bool specialize = plan->warpSpecialize;
      LoopPipeliner pipeliner(loop, std::move(*plan), options,
                              specialize ? &specialized[loop->getParentOfType<func::FuncOp>()]
                                         : nullptr,
                              &retired);
      if (failed(pipeliner.allocate()) ||
          failed(pipeliner.specializes() ? pipeliner.rewriteSpecialized() : pipeliner.rewrite()))
        return signalPassFailure();
    }
  }
};
} // namespace
