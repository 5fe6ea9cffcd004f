//===- PipelinePlan.cpp - plan one loop's software pipeline ----------------===//
//
// Decides what -tessel-software-pipeline does with a loop (PipelinePlan.h); the pass's
// description (SoftwarePipeline.cpp) says what each decision means for the code.
//
//===----------------------------------------------------------------------===//
#include "lowering/PipelinePlan.h"
#include "dialect/Target.h"
#include "lowering/BlockAccess.h"
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::pipeline;

namespace {

/// Adds the ops of `loop`'s body that `value` depends on to `slice`; fails if the
/// dependence reaches a loop-carried value, an op with effects or regions, or a nested op.
LogicalResult collectSlice(scf::ForOp loop, Value value, llvm::SetVector<Operation *> &slice) {
  if (value == loop.getInductionVar())
    return success();
  Operation *def = value.getDefiningOp();
  if (!def) // a loop-carried value, or an argument from outside the loop
    return success(value.getParentBlock() != loop.getBody());
  if (!loop->isProperAncestor(def))
    return success();
  if (def->getBlock() != loop.getBody() || def->getNumRegions() != 0 ||
      !isMemoryEffectFree(def))
    return failure();
  if (slice.contains(def))
    return success();
  for (Value operand : def->getOperands())
    if (failed(collectSlice(loop, operand, slice)))
      return failure();
  slice.insert(def);
  return success();
}

/// Dots of `loop` that may stay in flight across iterations: both operands pipelined,
/// `onWgmma` (the dot will run on wgmma), and the accumulator only carried from this dot
/// to the next iteration's.
SmallVector<DotOp> findAsyncDots(scf::ForOp loop, ArrayRef<LoadOp> loads,
                                 llvm::function_ref<bool(DotOp)> onWgmma) {
  SmallVector<DotOp> dots;
  auto pipelined = [&](Value v) {
    return llvm::is_contained(loads, v.getDefiningOp<LoadOp>());
  };
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (DotOp dot : loop.getBody()->getOps<DotOp>()) {
    if (!pipelined(dot.getA()) || !pipelined(dot.getB()) || !onWgmma(dot))
      continue;
    if (!dot.getResult().hasOneUse() || *dot->user_begin() != yield.getOperation())
      continue;
    unsigned position = dot.getResult().use_begin()->getOperandNumber();
    BlockArgument carried = loop.getRegionIterArgs()[position];
    if (!carried.hasOneUse() || carried.use_begin()->getOwner() != dot.getOperation() ||
        dot.getAcc() != carried)
      continue;
    dots.push_back(dot);
  }
  return dots;
}

/// Whether `dot`'s register operands have shapes wgmma takes (f16/bf16, WgmmaLayout.h).
bool hasWgmmaShape(DotOp dot, unsigned numWarps, StringRef arch) {
  auto a = cast<ShapedType>(dot.getA().getType());
  auto b = cast<ShapedType>(dot.getB().getType());
  return canUseWgmma(a.getElementType(), a.getDimSize(0), b.getDimSize(1), a.getDimSize(1),
                     numWarps, arch);
}

/// Whether a swizzled buffer (WgmmaLayout.h, "swizzled") can hold `load`'s tiles for an
/// mma.sync dot: f16/bf16 (or f32 for tf32), A one 128-byte row wide (64 or 32
/// columns), B a multiple of that, at most 256 rows (a box of the bulk tensor engine).
bool fitsSwizzledMmaOperand(LoadOp load, bool isA) {
  auto type = cast<RankedTensorType>(load.getType());
  Type elem = type.getElementType();
  if (!elem.isBF16() && !elem.isF16() && !elem.isF32())
    return false;
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t rowBytes = cols * (elem.getIntOrFloatBitWidth() / 8);
  if (rows > 256 || rows % 8 != 0)
    return false;
  return isA ? rowBytes == 128 : rowBytes % 128 == 0;
}

/// Whether `v` (a constant, or a kernel argument of `load`'s function with a
/// tessel.divisibility attribute) is a multiple of `multiple`.
bool isKnownMultiple(LoadOp load, const ArgOrConstant &v, int64_t multiple) {
  if (v.argument < 0)
    return v.value % multiple == 0;
  auto func = load->getParentOfType<func::FuncOp>();
  auto attr = func.getArgAttrOfType<IntegerAttr>(v.argument, "tessel.divisibility");
  return attr && attr.getInt() % multiple == 0;
}

/// Whether `dot` will run on register-A wgmma (WgmmaLayout.h). Not where its A is loaded
/// in the same loop: that A gets a ring of its own and is read from shared memory (the dot
/// then runs on shared-A wgmma or mma.sync).
bool onRegisterWgmma(DotOp dot, unsigned numWarps, StringRef arch) {
  auto aLoad = dot.getA().getDefiningOp<LoadOp>();
  return canUseRegisterWgmma(dot, numWarps, arch) &&
         !(aLoad && aLoad->getBlock() == dot->getBlock());
}

/// Whether every use of `load` is the B operand of a register-A wgmma dot (WgmmaLayout.h),
/// as is (N filling 128-byte rows: read N-major) or through a `tessel.trans` that only
/// that dot uses (K filling them: read K-major). One ring in the wgmma_b layout then serves
/// them all (the backward's Q and dO feed one dot each way).
bool feedsOnlyRegisterWgmmaB(LoadOp load, unsigned numWarps, StringRef arch) {
  int64_t perRow = getSwizzleBlockColumns(getElementTypeOrSelf(load.getType()));
  // `user` reads `operand` as B only, K-major (its K in whole rows) or N-major (its N).
  auto wgmmaB = [&](Operation *user, Value operand, bool kMajor) {
    auto dot = dyn_cast_or_null<DotOp>(user);
    // (Not a shared-A wgmma or mma.sync dot: neither reads this ring's transposed view,
    // as matmul's with a column-major B on sm_90a would.)
    if (!dot || dot.getB() != operand || dot.getA() == operand ||
        !onRegisterWgmma(dot, numWarps, arch))
      return false;
    auto a = cast<ShapedType>(dot.getA().getType());
    auto b = cast<ShapedType>(dot.getB().getType());
    return (kMajor ? a.getDimSize(1) : b.getDimSize(1)) % perRow == 0;
  };
  return !load->use_empty() && llvm::all_of(load->getUsers(), [&](Operation *user) {
    if (auto trans = dyn_cast<TransOp>(user))
      return trans->hasOneUse() &&
             wgmmaB(*trans->user_begin(), trans.getResult(), /*kMajor=*/true);
    return wgmmaB(user, load.getResult(), /*kMajor=*/false);
  });
}

/// Whether each load of `loop` is copied by the bulk tensor engine (TMA): loads feeding
/// an async (wgmma) dot as an operand named in `operands`, or, with "b" named, only
/// register-A wgmma dots as B in a loop whose dots run on wgmma (as is or transposed: the
/// ring's wgmma_b layout is what a box lands either way); their buffers get wgmma's
/// swizzled layout. On sm_90 and up, also an mma.sync dot's operand named in
/// `mmaOperands` (the plain swizzled layout; one matrix with both bounds, the form
/// measured there). Each must read one block of a row-major matrix (BlockAccess.h) whose
/// base and strides are 16-byte aligned (the tensor map's requirement: the
/// divisible-by-16 variant).
SmallVector<bool> findTmaLoads(ArrayRef<LoadOp> loads, ArrayRef<DotOp> asyncDots,
                               ArrayRef<DotOp> mmaDots, StringRef operands,
                               StringRef mmaOperands, bool mmaPath, unsigned numWarps,
                               StringRef arch) {
  SmallVector<bool> viaTma;
  for (LoadOp load : loads) {
    FailureOr<BlockAccess> access = matchBlockAccess(load);
    bool wanted = llvm::any_of(asyncDots, [&](DotOp dot) {
      return (dot.getA() == load.getResult() && operands.contains('a')) ||
             (dot.getB() == load.getResult() && operands.contains('b'));
    });
    wanted |= !mmaPath && operands.contains('b') && feedsOnlyRegisterWgmmaB(load, numWarps, arch);
    bool plainMatrix = succeeded(access) && access->batch.empty() &&
                       access->rows.value != kUnboundedExtent &&
                       access->cols.value != kUnboundedExtent;
    wanted |= plainMatrix && llvm::any_of(mmaDots, [&](DotOp dot) {
      bool isA = dot.getA() == load.getResult();
      if (!isA && dot.getB() != load.getResult())
        return false;
      return mmaOperands.contains(isA ? 'a' : 'b') && fitsSwizzledMmaOperand(load, isA);
    });
    int64_t elementBytes = getElementTypeOrSelf(load.getType()).getIntOrFloatBitWidth() / 8;
    // The pointer's divisibility is in bytes, the strides' in elements.
    auto aligned = [&](const ArgOrConstant &stride) {
      return isKnownMultiple(load, stride, 16 / elementBytes);
    };
    bool ok = wanted && succeeded(access);
    if (ok) {
      ArgOrConstant base;
      base.argument = access->baseArgument;
      ok = isKnownMultiple(load, base, 16) && aligned(access->rowStride) &&
           llvm::all_of(access->batch, [&](const BatchIndex &outer) {
             return aligned(outer.stride);
           });
    }
    viaTma.push_back(ok);
  }
  return viaTma;
}

/// Loads of `loop` that can be pipelined (see the pass description).
SmallVector<LoadOp> findPipelinableLoads(scf::ForOp loop, unsigned numWarps, StringRef arch,
                                         llvm::SetVector<Operation *> &slice) {
  SmallVector<LoadOp> loads;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto dot = dyn_cast<DotOp>(op);
    if (!dot)
      continue;
    for (Value operand : {dot.getA(), dot.getB()}) {
      // B = trans(load): the ring holds the loaded tile, and the dot reads the slot
      // transposed. It, and a load with several uses, only for register-A wgmma B's.
      auto trans = operand.getDefiningOp<TransOp>();
      if (trans && operand == dot.getB())
        operand = trans.getSrc();
      auto load = operand.getDefiningOp<LoadOp>();
      if (!load || load->getBlock() != loop.getBody() || llvm::is_contained(loads, load))
        continue;
      if ((trans || !load->hasOneUse()) && !feedsOnlyRegisterWgmmaB(load, numWarps, arch))
        continue;
      auto type = dyn_cast<RankedTensorType>(load.getType());
      if (!type || type.getRank() != 2 || type.getElementType().getIntOrFloatBitWidth() < 8)
        continue;
      if (load.getOther() && !isZeroTile(load.getOther()))
        continue;
      llvm::SetVector<Operation *> loadSlice;
      if (failed(collectSlice(loop, load.getPtr(), loadSlice)) ||
          (load.getMask() && failed(collectSlice(loop, load.getMask(), loadSlice))))
        continue;
      slice.insert(loadSlice.begin(), loadSlice.end());
      loads.push_back(load);
    }
  }
  return loads;
}

bool onTf32Wgmma(const PipelinePlan &p, DotOp dot, unsigned numWarps, StringRef arch) {
  // tf32 dots whose operands both come by TMA run transposed on wgmma on sm_90a
  // (WgmmaLayout.h), in flight like the others.
  auto byTma = [&](Value operand) {
    auto *it = llvm::find(p.loads, operand.getDefiningOp<LoadOp>());
    return it != p.loads.end() && p.viaTma[it - p.loads.begin()];
  };
  auto a = cast<ShapedType>(dot.getA().getType());
  auto b = cast<ShapedType>(dot.getB().getType());
  return byTma(dot.getA()) && byTma(dot.getB()) &&
         canUseTf32Wgmma(dot, a.getDimSize(0), b.getDimSize(1), a.getDimSize(1), numWarps, arch);
}

SharedLayout ringLayout(const PipelinePlan &p, LoadOp load, unsigned numWarps,
                        StringRef arch) {
  // The layout of an mma.sync operand's ring: "swizzled", except tf32 mma.sync's B,
  // "interleaved" (WgmmaLayout.h: its fragment loads are then free of bank conflicts)
  // when its matrix's rows are known to come in groups of 8.
  for (DotOp dot : p.mmaDots)
    if (dot.getB() == load.getResult() && getMmaK(dot) == 8 &&
        !onTf32Wgmma(p, dot, numWarps, arch) &&
        isKnownMultiple(load, matchBlockAccess(load)->rows, 8))
      return SharedLayout::Interleaved;
  return SharedLayout::Swizzled;
}

/// Whether the values the copies of `loop` need from outside it (its bounds, the
/// operands of their address slice) come from pure, region-free ops of the function's
/// body, which a producer partition can compute again for itself. The loop lies in the
/// function's body, or in the consumers' partition an earlier loop of it became, either
/// directly or inside loops (a persistent kernel's loop over tiles) that the producer
/// runs too: their bounds count as needed, and of their block arguments only the
/// induction variables (the producer's loops have their own).
bool producerCanRecompute(scf::ForOp loop, const PipelinePlan &p) {
  SmallVector<Value> worklist{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  llvm::SmallPtrSet<Value, 4> outerIvs;
  Operation *parent = loop->getParentOp();
  for (; auto outer = dyn_cast<scf::ForOp>(parent); parent = outer->getParentOp()) {
    llvm::append_range(worklist, ValueRange{outer.getLowerBound(), outer.getUpperBound(),
                                            outer.getStep()});
    outerIvs.insert(outer.getInductionVar());
  }
  auto ws = dyn_cast<WarpSpecializeOp>(parent);
  if (ws && ws.getConsumers().isAncestor(loop->getParentRegion()))
    parent = ws->getParentOp();
  if (!isa<func::FuncOp>(parent))
    return false;
  for (Operation *op : p.slice)
    for (Value operand : op->getOperands())
      if (!loop->isAncestor(operand.getParentBlock()->getParentOp()))
        worklist.push_back(operand);
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *def = value.getDefiningOp();
    if (!def) {
      // A function argument, or an enclosing loop's induction variable.
      if (isa<scf::ForOp>(value.getParentBlock()->getParentOp()) && !outerIvs.contains(value))
        return false;
      continue;
    }
    if (!seen.insert(def).second)
      continue;
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return false;
    llvm::append_range(worklist, def->getOperands());
  }
  return true;
}

} // namespace

/// Whether `load` feeds a dot as its A operand.
bool pipeline::isAOperand(LoadOp load) {
  return llvm::any_of(load->getUsers(), [&](Operation *user) {
    auto dot = dyn_cast<DotOp>(user);
    return dot && dot.getA() == load.getResult();
  });
}

std::optional<PipelinePlan> pipeline::planPipeline(scf::ForOp loop, unsigned stages,
                                                   unsigned numWarps, StringRef arch,
                                                   const PipelineOptions &options) {
  PipelinePlan p;
  p.stages = stages;
  p.numWarps = numWarps;
  std::optional<int64_t> constantStep = getConstantIntValue(loop.getStep());
  if (!constantStep || *constantStep <= 0)
    return std::nullopt;
  p.step = *constantStep;
  p.loads = findPipelinableLoads(loop, numWarps, arch, p.slice);
  if (p.loads.empty())
    return std::nullopt;
  if (stages >= 3)
    p.asyncDots = findAsyncDots(
        loop, p.loads, [&](DotOp dot) { return hasWgmmaShape(dot, numWarps, arch); });
  // Whether every dot of the loop runs on mma.sync or tf32 wgmma (none on f16/bf16
  // wgmma, shared-A or register-A, whose buffers have their own layouts).
  p.mmaPath = llvm::none_of(loop.getBody()->getOps<DotOp>(), [&](DotOp dot) {
    return hasWgmmaShape(dot, numWarps, arch) || onRegisterWgmma(dot, numWarps, arch);
  });
  // mma.sync dots on targets with the bulk tensor engine whose result will take the
  // mma accumulator layout (the path that reads swizzled buffers).
  if (p.mmaPath && Target(arch).hasBulkTensorCopies())
    for (DotOp dot : loop.getBody()->getOps<DotOp>())
      if (getMmaK(dot) != 0 && getPreferredDotLayout(dot, numWarps))
        p.mmaDots.push_back(dot);
  p.viaTma = findTmaLoads(p.loads, p.asyncDots, p.mmaDots, options.tmaOperands,
                          options.mmaTmaOperands, p.mmaPath, numWarps, arch);
  if (stages >= 3)
    llvm::append_range(p.asyncDots,
                       findAsyncDots(loop, p.loads, [&](DotOp dot) {
                         return onTf32Wgmma(p, dot, numWarps, arch);
                       }));
  // Decided once per load: the ring's attribute and the tensor map's recipe follow it.
  for (auto [load, tma] : llvm::zip(p.loads, p.viaTma))
    p.ringLayouts.push_back(tma && p.mmaPath ? ringLayout(p, load, numWarps, arch)
                                             : SharedLayout::Padded);
  // Iterations copied ahead: one less while a dot may still read last iteration's slot.
  p.distance = p.asyncDots.empty() ? stages - 1 : stages - 2;
  p.tmaCount = unsigned(llvm::count(p.viaTma, true));
  p.anyCpAsync = p.tmaCount < p.loads.size();
  // Where the in-loop copies go. After the dots when every dot runs on mma.sync and
  // some copies are cp.async, so the tensor cores start on the landed slot right after
  // the barrier and the copies' issue and address arithmetic overlap the mma stream
  // (ptxas cannot hoist an ldmatrix over a cp.async, which may write the same shared
  // memory): +19% at 4096^3. Bulk copies only (a few lanes issue a few instructions each) also
  // go after the dots from 3 stages on (measured 5-10% faster than first), but with 2
  // stages first, or they would be requested just before they are needed (+14%).
  // wgmma dots keep them first: the asynchronous wgmma runs while they are issued.
  p.copiesLast = p.mmaPath && p.asyncDots.empty() && (p.anyCpAsync || stages > 2);
  p.warpSpecialize = options.warpSpecialize && options.multicastB <= 1 && !p.anyCpAsync &&
                     !p.mmaPath && numWarps % 4 == 0 &&
                     numWarps + kProducerWarps <= 32 && producerCanRecompute(loop, p);
  return p;
}
