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
// Operands of such dots named by the `tma` option ("b" by default) that read one block of
// a row-major matrix (BlockAccess.h), 16-byte aligned, come by the bulk tensor engine
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
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELSOFTWAREPIPELINE
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isZeroTile(Value value) {
  if (matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero()))
    return true;
  if (auto splat = value.getDefiningOp<SplatOp>())
    return isZeroTile(splat.getSrc());
  return false;
}

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

/// Whether each load of `loop` is copied by the bulk tensor engine (TMA): loads feeding
/// an async (wgmma) dot as an operand named in `operands` (their buffers get wgmma's
/// swizzled layout), or, on sm_90 and up, an mma.sync dot as an operand named in
/// `mmaOperands` (their buffers get the plain swizzled layout), that read one block of a
/// row-major matrix (BlockAccess.h) whose base and row stride are 16-byte aligned (the
/// tensor map's requirement: the divisible-by-16 variant).
SmallVector<bool> findTmaLoads(ArrayRef<LoadOp> loads, ArrayRef<DotOp> asyncDots,
                               ArrayRef<DotOp> mmaDots, StringRef operands,
                               StringRef mmaOperands) {
  SmallVector<bool> viaTma;
  for (LoadOp load : loads) {
    bool wanted = llvm::any_of(asyncDots, [&](DotOp dot) {
      return (dot.getA() == load.getResult() && operands.contains('a')) ||
             (dot.getB() == load.getResult() && operands.contains('b'));
    });
    wanted |= llvm::any_of(mmaDots, [&](DotOp dot) {
      bool isA = dot.getA() == load.getResult();
      if (!isA && dot.getB() != load.getResult())
        return false;
      return mmaOperands.contains(isA ? 'a' : 'b') && fitsSwizzledMmaOperand(load, isA);
    });
    FailureOr<BlockAccess> access = matchBlockAccess(load);
    auto aligned = [&](const ArgOrConstant &v, int64_t multiple) {
      return isKnownMultiple(load, v, multiple);
    };
    bool ok = wanted && succeeded(access);
    if (ok) {
      ArgOrConstant base;
      base.argument = access->baseArgument;
      // The pointer's divisibility is in bytes, the stride's in elements (2 bytes here).
      ok = aligned(base, 16) && aligned(access->rowStride, 8);
    }
    viaTma.push_back(ok);
  }
  return viaTma;
}

/// Loads of `loop` that can be pipelined (see the pass description).
/// Whether every use of `load` is the B operand of a register-A wgmma dot (WgmmaLayout.h),
/// as is (N filling 128-byte rows: read N-major) or through a `tessel.trans` that only
/// that dot uses (K filling them: read K-major). One ring in the "b" layout then serves
/// them all (the backward's Q and dO feed one dot each way).
bool feedsOnlyRegisterWgmmaB(LoadOp load, unsigned numWarps, StringRef arch) {
  int64_t perRow = getSwizzleBlockColumns(getElementTypeOrSelf(load.getType()));
  // `user` reads `operand` as B only, K-major (its K in whole rows) or N-major (its N).
  auto wgmmaB = [&](Operation *user, Value operand, bool kMajor) {
    auto dot = dyn_cast_or_null<DotOp>(user);
    if (!dot || dot.getB() != operand || dot.getA() == operand ||
        !canUseRegisterWgmma(dot, numWarps, arch))
      return false;
    // An A loaded in the same loop gets a ring of its own and is read from shared memory:
    // the dot then runs on shared-A wgmma or mma.sync, neither of which reads this ring's
    // transposed view (matmul with a column-major B on sm_90a).
    if (auto aLoad = dot.getA().getDefiningOp<LoadOp>();
        aLoad && aLoad->getBlock() == dot->getBlock())
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

/// Slot `slot` of a stack of shared buffers (a ring of tiles or of mbarriers).
Value slotOf(OpBuilder &b, Location loc, Value stack, Value slot) {
  auto type = cast<SharedType>(stack.getType());
  return LocalIndexOp::create(
      b, loc, SharedType::get(b.getContext(), type.getShape().drop_front(), type.getElementType()),
      stack, slot);
}

/// Whether `load` feeds a dot as its A operand.
bool isAOperand(LoadOp load) {
  return llvm::any_of(load->getUsers(), [&](Operation *user) {
    auto dot = dyn_cast<DotOp>(user);
    return dot && dot.getA() == load.getResult();
  });
}

/// What the runtime needs to encode the tensor map of `access` (parameter `index`):
/// {param, pointer, rows, cols, row_stride, box = [rows, cols], dtype[, row_order]
/// [, col_blocks]}.
/// Bounds and stride are {"param": i} or {"value": v}; row_order "interleave8" for an
/// "interleaved" ring. A wgmma A's box is 8 rows (its 8-row groups are
/// permuted in shared memory for the wgmma accumulator layout); every other box is the
/// tile's rows by 128 bytes of columns (one swizzle block); col_blocks > 1: how many
/// blocks one box brings where the matrix's columns are whole blocks.
DictionaryAttr tensorMapRecipe(OpBuilder &b, LoadOp load, const BlockAccess &access,
                               unsigned index, bool wgmma, bool interleaved,
                               int64_t colBlocks) {
  auto scalar = [&](const ArgOrConstant &v) {
    NamedAttrList fields;
    if (v.argument >= 0)
      fields.set("param", b.getI64IntegerAttr(v.argument));
    else
      fields.set("value", b.getI64IntegerAttr(v.value));
    return fields.getDictionary(b.getContext());
  };
  bool isA = isAOperand(load);
  Type elem = getElementTypeOrSelf(load.getType());
  int64_t boxRows = isA && wgmma ? 8 : access.blockRows;
  int64_t boxCols = getSwizzleBlockColumns(elem);
  NamedAttrList fields;
  fields.set("param", b.getI64IntegerAttr(index));
  fields.set("pointer", b.getI64IntegerAttr(access.baseArgument));
  fields.set("rows", scalar(access.rows));
  fields.set("cols", scalar(access.cols));
  fields.set("row_stride", scalar(access.rowStride));
  fields.set("box", b.getI64ArrayAttr({boxRows, boxCols}));
  fields.set("dtype", b.getStringAttr(elem.isBF16() ? "bf16" : elem.isF16() ? "f16" : "f32"));
  if (interleaved)
    fields.set("row_order", b.getStringAttr("interleave8"));
  if (colBlocks > 1)
    fields.set("col_blocks", b.getI64IntegerAttr(colBlocks));
  return fields.getDictionary(b.getContext());
}

/// How many 128-byte column blocks of `access` one box may bring at once: a tile several
/// blocks wide whose boxes hold all its rows (not a wgmma A's 8-row boxes), starting at a
/// column the analysis proves is a block's first. 1: a box per block.
int64_t wholeColumnBlocks(LoadOp load, const BlockAccess &access, bool wgmma,
                          const AxisInfoAnalysis &axisInfo) {
  bool isA = isAOperand(load);
  int64_t perBlock = getSwizzleBlockColumns(getElementTypeOrSelf(load.getType()));
  if ((isA && wgmma) || access.blockCols <= perBlock || access.blockCols % perBlock != 0)
    return 1;
  if (access.col && axisInfo.get(access.col).divisibility[0] % perBlock != 0)
    return 1;
  return access.blockCols / perBlock;
}

/// The kernel's test that the matrix of `access` has whole column blocks (`cols` a
/// multiple of `perBlock`): the runtime makes the same one before encoding the block as a
/// dimension of the map.
Value buildWholeBlocksTest(OpBuilder &b, Location loc, func::FuncOp func,
                           const BlockAccess &access, int64_t perBlock) {
  if (access.cols.argument < 0)
    return arith::ConstantOp::create(b, loc, b.getI1Type(),
                                     b.getBoolAttr(access.cols.value % perBlock == 0));
  Value cols = func.getArgument(access.cols.argument);
  Value rem = arith::RemSIOp::create(
      b, loc, cols, arith::ConstantIntOp::create(b, loc, cols.getType(), perBlock));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem,
                               arith::ConstantIntOp::create(b, loc, cols.getType(), 0));
}

/// Whether `value` is the same in every program whose ids differ only along axis 0: it
/// is computed by pure ops from constants, kernel arguments, other axes' program ids and
/// `loop`'s induction variable.
bool isSameAlongProgramAxis0(Value value, scf::ForOp loop) {
  if (value == loop.getInductionVar())
    return true;
  Operation *def = value.getDefiningOp();
  if (!def) // a kernel argument, or a loop-carried value
    return isa<func::FuncOp>(cast<BlockArgument>(value).getOwner()->getParentOp());
  if (auto pid = dyn_cast<ProgramIdOp>(def))
    return pid.getAxis() != 0;
  if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value operand) { return isSameAlongProgramAxis0(operand, loop); });
}

/// The ops that compute `value` from constants, kernel arguments and program ids (pure,
/// no regions), operands first; fails for anything else.
LogicalResult collectProgramSlice(Value value, llvm::SetVector<Operation *> &slice) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return success(isa<func::FuncOp>(cast<BlockArgument>(value).getOwner()->getParentOp()));
  if (slice.contains(def))
    return success();
  if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return failure();
  if (!isa<ProgramIdOp>(def))
    for (Value operand : def->getOperands())
      if (failed(collectProgramSlice(operand, slice)))
        return failure();
  slice.insert(def);
  return success();
}

/// The kernel's test that the `ctas` programs of its cluster (consecutive ids along axis
/// 0, this one's id rounded down to a multiple of `ctas` first) all copy the block of
/// columns that `access` starts at: `access.col` recomputed for each of their ids. Null
/// where that column is not computed from program ids, arguments and constants alone.
Value buildClusterSharesTileTest(OpBuilder &b, Location loc, const BlockAccess &access,
                                 int64_t ctas) {
  if (!access.col)
    return arith::ConstantOp::create(b, loc, b.getI1Type(), b.getBoolAttr(true));
  llvm::SetVector<Operation *> slice;
  if (failed(collectProgramSlice(access.col, slice)))
    return Value();
  Type i32 = b.getI32Type();
  auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v); };
  Value id = ProgramIdOp::create(b, loc, i32, b.getI32IntegerAttr(0));
  Value first = arith::AndIOp::create(b, loc, id, constant(~(ctas - 1)));
  auto columnOf = [&](Value program) {
    IRMapping mapping;
    for (Operation *op : slice) {
      auto pid = dyn_cast<ProgramIdOp>(op);
      if (pid && pid.getAxis() == 0)
        mapping.map(pid.getResult(), program);
      else
        b.clone(*op, mapping);
    }
    return mapping.lookupOrDefault(access.col);
  };
  Value col0 = columnOf(first);
  Value shared;
  for (int64_t q = 1; q < ctas; ++q) {
    Value same = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        columnOf(arith::OrIOp::create(b, loc, first, constant(q))), col0);
    shared = shared ? arith::AndIOp::create(b, loc, shared, same).getResult() : same;
  }
  return shared;
}
struct PipelineOptions {
  StringRef tmaOperands, mmaTmaOperands;
  unsigned multicastB;
};

/// One loop's pipeline, in three steps: plan() decides what is copied ahead and how
/// (cp.async or TMA, ring layouts, which dots stay in flight, where copies go);
/// allocate() creates the rings, mbarriers and tensor-map parameters before the loop;
/// rewrite() emits the prologue's copies, the loop's slots and waits, and the copies
/// ahead in the body, and retires what is in flight.
class LoopPipeliner {
public:
  LoopPipeliner(scf::ForOp loop, unsigned stages, unsigned numWarps, StringRef arch,
                PipelineOptions options)
      : loop(loop), stages(stages), numWarps(numWarps), arch(arch), options(options),
        loc(loop.getLoc()), rewriter(loop.getContext()), i32(rewriter.getI32Type()),
        ivType(loop.getInductionVar().getType()) {}

  /// False when the loop has nothing to pipeline.
  bool plan();
  LogicalResult allocate();
  LogicalResult rewrite();

private:
  bool onTf32Wgmma(DotOp dot) const;
  StringRef ringLayout(LoadOp load) const;
  Value constant(OpBuilder &b, Type type, int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, type, v);
  }
  /// One mbarrier per slot, each expecting `count` arrivals a phase.
  Value barrierRing(unsigned count);
  LogicalResult allocateTensorMaps();
  /// Copies of iteration `iv` into `slot` of every ring, as one commit group.
  void emitCopies(OpBuilder &b, Value iv, Value slot);
  /// The parity of the phase a slot's mbarrier completes for iteration j - `back`.
  Value phaseParity(int64_t back);
  /// Multicast: releases this iteration's slot and sets up the wait for the next one.
  void releaseSharedSlot(Value ahead, Value readSlot, Value writeSlot);
  void replaceLoadsBySlots(Value readSlot);
  void retireAsyncDots();

  scf::ForOp loop, newLoop;
  unsigned stages, numWarps;
  StringRef arch;
  PipelineOptions options;
  Location loc;
  IRRewriter rewriter;
  Type i32, ivType;

  // plan()
  int64_t step = 0;
  llvm::SetVector<Operation *> slice;
  SmallVector<LoadOp> loads;
  SmallVector<DotOp> asyncDots, mmaDots;
  SmallVector<bool> viaTma;
  SmallVector<StringRef> ringLayouts;
  bool mmaPath = false, anyCpAsync = false, copiesLast = false;
  unsigned distance = 0, tmaCount = 0;

  // allocate()
  SmallVector<Value> rings;
  Value barriers;
  SmallVector<Value> tensorMaps;  // null for loads copied with cp.async
  SmallVector<Value> wholeBlocks; // i1: one box brings the tile (null: a box per block)
  SmallVector<Value> multicasts;  // i1: the cluster copies the same tile (null: no multicast)
  Value active;  // i1: the copies are shared now (a cluster of multicastB, same tiles)
  Value empties; // the slots' "empty" mbarriers (multicast)

  // rewrite()
  SmallVector<Value, 3> emptyWait; // in the loop: the empty mbarrier, phase and condition
};

bool LoopPipeliner::onTf32Wgmma(DotOp dot) const {
  // tf32 dots whose operands both come by TMA run transposed on wgmma on sm_90a
  // (WgmmaLayout.h), in flight like the others.
  auto byTma = [&](Value operand) {
    auto *it = llvm::find(loads, operand.getDefiningOp<LoadOp>());
    return it != loads.end() && viaTma[it - loads.begin()];
  };
  auto a = cast<ShapedType>(dot.getA().getType());
  auto b = cast<ShapedType>(dot.getB().getType());
  return byTma(dot.getA()) && byTma(dot.getB()) &&
         canUseTf32Wgmma(dot, a.getDimSize(0), b.getDimSize(1), a.getDimSize(1), numWarps, arch);
}

StringRef LoopPipeliner::ringLayout(LoadOp load) const {
  // The layout of an mma.sync operand's ring: "swizzled", except tf32 mma.sync's B,
  // "interleaved" (WgmmaLayout.h: its fragment loads are then free of bank conflicts)
  // when its matrix's rows are known to come in groups of 8.
  for (DotOp dot : mmaDots)
    if (dot.getB() == load.getResult() && getMmaK(dot) == 8 && !onTf32Wgmma(dot) &&
        isKnownMultiple(load, matchBlockAccess(load)->rows, 8))
      return kInterleavedOperand;
  return kSwizzledOperand;
}

bool LoopPipeliner::plan() {
  std::optional<int64_t> constantStep = getConstantIntValue(loop.getStep());
  if (!constantStep || *constantStep <= 0)
    return false;
  step = *constantStep;
  loads = findPipelinableLoads(loop, numWarps, arch, slice);
  if (loads.empty())
    return false;
  if (stages >= 3)
    asyncDots = findAsyncDots(
        loop, loads, [&](DotOp dot) { return hasWgmmaShape(dot, numWarps, arch); });
  // Whether every dot of the loop runs on mma.sync or tf32 wgmma (none on f16/bf16
  // wgmma, whose buffers have their own layouts).
  mmaPath = llvm::none_of(loop.getBody()->getOps<DotOp>(), [&](DotOp dot) {
    return hasWgmmaShape(dot, numWarps, arch);
  });
  // mma.sync dots on targets with the bulk tensor engine whose result will take the
  // mma accumulator layout (the path that reads swizzled buffers).
  if (mmaPath && Target(arch).hasBulkTensorCopies())
    for (DotOp dot : loop.getBody()->getOps<DotOp>())
      if (getMmaK(dot) != 0 && getPreferredDotLayout(dot, numWarps))
        mmaDots.push_back(dot);
  viaTma = findTmaLoads(loads, asyncDots, mmaDots, options.tmaOperands, options.mmaTmaOperands);
  // A ring read through tessel.trans is a "b" buffer, filled by cp.async.
  for (auto [load, tma] : llvm::zip(loads, viaTma))
    if (llvm::any_of(load->getUsers(), [](Operation *user) { return isa<TransOp>(user); }))
      tma = false;
  if (stages >= 3)
    llvm::append_range(asyncDots,
                       findAsyncDots(loop, loads, [&](DotOp dot) { return onTf32Wgmma(dot); }));
  // Decided once per load: the ring's attribute and the tensor map's recipe follow it.
  for (auto [load, tma] : llvm::zip(loads, viaTma))
    ringLayouts.push_back(tma && mmaPath ? ringLayout(load) : StringRef());
  // Iterations copied ahead: one less while a dot may still read last iteration's slot.
  distance = asyncDots.empty() ? stages - 1 : stages - 2;
  tmaCount = unsigned(llvm::count(viaTma, true));
  anyCpAsync = tmaCount < loads.size();
  // Where the in-loop copies go. After the dots when every dot runs on mma.sync and
  // some copies are cp.async, so the tensor cores start on the landed slot right after
  // the barrier and the copies' issue and address arithmetic overlap the mma stream
  // (ptxas cannot hoist an ldmatrix over a cp.async, which may write the same shared
  // memory): +19% at 4096^3. Bulk copies only (a few lanes issue a few instructions each) also
  // go after the dots from 3 stages on (measured 5-10% faster than first), but with 2
  // stages first, or they would be requested just before they are needed (+14%).
  // wgmma dots keep them first: the asynchronous wgmma runs while they are issued.
  copiesLast = mmaPath && asyncDots.empty() && (anyCpAsync || stages > 2);
  return true;
}

Value LoopPipeliner::barrierRing(unsigned count) {
  Value ring = LocalAllocOp::create(
      rewriter, loc,
      SharedType::get(rewriter.getContext(), {int64_t(stages), 1, 1}, rewriter.getI64Type()),
      IntegerAttr());
  for (unsigned s = 0; s < stages; ++s)
    MBarrierInitOp::create(rewriter, loc, slotOf(rewriter, loc, ring, constant(rewriter, i32, s)),
                           count);
  return ring;
}

LogicalResult LoopPipeliner::allocate() {
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPoint(loop);
  for (auto [load, layout] : llvm::zip(loads, ringLayouts)) {
    auto type = cast<RankedTensorType>(load.getType());
    SmallVector<int64_t> shape{int64_t(stages)};
    shape.append(type.getShape().begin(), type.getShape().end());
    auto ring = LocalAllocOp::create(
        rewriter, loc, SharedType::get(ctx, shape, type.getElementType()), IntegerAttr());
    // mma.sync operands copied by the bulk tensor engine land 128-byte swizzled
    // (wgmma's buffers are marked by -tessel-assign-layouts).
    if (!layout.empty())
      ring->setAttr(kWgmmaOperandAttr, rewriter.getStringAttr(layout));
    rings.push_back(ring);
  }
  if (tmaCount)
    return allocateTensorMaps();
  tensorMaps.assign(loads.size(), Value());
  wholeBlocks.assign(loads.size(), Value());
  multicasts.assign(loads.size(), Value());
  return success();
}

// TMA: one mbarrier per slot (both copies of a stage arrive on it), and a tensor map
// per load, a kernel parameter the runtime encodes (recorded in tessel.tensor_maps).
LogicalResult LoopPipeliner::allocateTensorMaps() {
  MLIRContext *ctx = rewriter.getContext();
  unsigned multicastB = options.multicastB;
  barriers = barrierRing(tmaCount);
  // A cluster barrier where copies are multicast: the other programs' copies signal
  // this one's mbarriers.
  auto initialised = BarrierOp::create(rewriter, loc);
  auto func = loop->getParentOfType<func::FuncOp>();
  ModuleOp module = func->getParentOfType<ModuleOp>();
  SmallVector<Attribute> recipes;
  AxisInfoAnalysis axisInfo(func);
  if (auto existing = module->getAttrOfType<ArrayAttr>("tessel.tensor_maps"))
    recipes.append(existing.begin(), existing.end());
  for (auto [load, tma, layout] : llvm::zip(loads, viaTma, ringLayouts)) {
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
    int64_t colBlocks = wholeColumnBlocks(load, access, /*wgmma=*/!mmaPath, axisInfo);
    // Multicast of a B tile of whole blocks: the programs of a cluster must run the
    // same iterations over the same rows, and the kernel tests that they copy the
    // same columns.
    Value shared;
    if (multicastB > 1 && copiesLast && colBlocks % int64_t(multicastB) == 0 &&
        !isAOperand(load) &&
        llvm::all_of(ValueRange{loop.getLowerBound(), loop.getUpperBound(), loop.getStep()},
                     [&](Value v) { return isSameAlongProgramAxis0(v, loop); }) &&
        (!access.row || isSameAlongProgramAxis0(access.row, loop)))
      shared = buildClusterSharesTileTest(rewriter, loc, access, multicastB);
    DictionaryAttr recipe = tensorMapRecipe(rewriter, load, access, index,
                                            /*wgmma=*/!mmaPath,
                                            /*interleaved=*/layout == kInterleavedOperand,
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
    if (slice.contains(&op))
      b.clone(op, mapping);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, ub);
  if (tmaCount) {
    Value barrier = slotOf(b, loc, barriers, slot);
    for (auto [load, ring, map, whole, shared] :
         llvm::zip(loads, rings, tensorMaps, wholeBlocks, multicasts)) {
      if (!map)
        continue;
      // Matched again: the loop (and its induction variable) may have been replaced.
      BlockAccess access = *matchBlockAccess(load);
      Value tile = slotOf(b, loc, ring, slot);
      auto start = [&](Value v) { return v ? mapping.lookupOrDefault(v) : constant(b, i32, 0); };
      bool waits = shared && !emptyWait.empty();
      // One op per statement (argument evaluation order is unspecified).
      Value col = start(access.col), row = start(access.row);
      TmaCopyOp::create(b, loc, map, row, col, tile, barrier, inRange, whole,
                        shared ? active : Value(), waits ? emptyWait[0] : Value(),
                        waits ? emptyWait[1] : Value(), waits ? emptyWait[2] : Value(),
                        shared ? b.getI64IntegerAttr(multicastB) : IntegerAttr());
    }
  }
  if (!anyCpAsync)
    return;
  for (auto [load, ring, map] : llvm::zip(loads, rings, tensorMaps)) {
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

Value LoopPipeliner::phaseParity(int64_t back) {
  // j = (iv - lb) / step: iteration j - back's slot completes its ((j - back) / S)-th phase.
  Value j = arith::SubIOp::create(rewriter, loc, newLoop.getInductionVar(), newLoop.getLowerBound());
  j = arith::DivUIOp::create(rewriter, loc, j, constant(rewriter, ivType, step));
  if (back)
    j = arith::SubIOp::create(rewriter, loc, j, constant(rewriter, ivType, back));
  Value phase = arith::DivUIOp::create(rewriter, loc, j, constant(rewriter, ivType, stages));
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
      rewriter, loc, iv, constant(rewriter, ivType, int64_t(distance + 1) * step));
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
  for (auto [load, ring] : llvm::zip(loads, rings)) {
    rewriter.setInsertionPoint(load);
    Value tile = slotOf(rewriter, load.getLoc(), ring, readSlot);
    load.getResult().replaceAllUsesWith(tile);
    rewriter.eraseOp(load);
    // trans(load) becomes a transposed view of the slot.
    auto slotType = cast<SharedType>(tile.getType());
    for (Operation *user : tile.getUsers())
      if (auto trans = dyn_cast<TransOp>(user))
        trans.getResult().setType(SharedType::get(rewriter.getContext(),
                                                  {slotType.getShape()[1], slotType.getShape()[0]},
                                                  slotType.getElementType()));
  }
}

// Async dots: one group stays in flight into the next iteration; all are retired
// before the loop's result is read.
void LoopPipeliner::retireAsyncDots() {
  for (DotOp dot : asyncDots) {
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
  for (unsigned s = 0; s < distance; ++s) {
    Value iv = s == 0 ? lb
                      : arith::AddIOp::create(rewriter, loc, lb,
                                              constant(rewriter, ivType, int64_t(s) * step))
                            .getResult();
    emitCopies(rewriter, iv, constant(rewriter, i32, s));
  }

  // The loop carries the slot it reads and the slot it fills.
  SmallVector<Value> slotInits{constant(rewriter, i32, 0), constant(rewriter, i32, distance)};
  auto advance = [&](OpBuilder &b, Value slot) -> Value {
    Value next = arith::AddIOp::create(b, loc, slot, constant(b, i32, 1));
    Value wrap =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, next, constant(b, i32, stages));
    return arith::SelectOp::create(b, loc, wrap, constant(b, i32, 0), next);
  };
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, slotInits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location, ArrayRef<BlockArgument> args) -> SmallVector<Value> {
        return {advance(b, args[0]), advance(b, args[1])};
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
  if (anyCpAsync)
    AsyncWaitOp::create(rewriter, loc, distance - 1);
  // Iteration j reads slot j % S: wait for its copies.
  if (tmaCount)
    MBarrierWaitOp::create(rewriter, loc, slotOf(rewriter, loc, barriers, readSlot),
                           phaseParity(0));
  if (copiesLast)
    rewriter.setInsertionPoint(newLoop.getBody()->getTerminator());
  Value ahead = arith::AddIOp::create(rewriter, loc, newLoop.getInductionVar(),
                                      constant(rewriter, ivType, int64_t(distance) * step));
  if (empties)
    releaseSharedSlot(ahead, readSlot, writeSlot);
  emitCopies(rewriter, ahead, writeSlot);

  replaceLoadsBySlots(readSlot);
  rewriter.setInsertionPointAfter(newLoop);
  if (anyCpAsync)
    AsyncWaitOp::create(rewriter, loc, 0);
  retireAsyncDots();
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
    PipelineOptions options{tmaOperands, mmaTmaOperands, multicastB};
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      LoopPipeliner pipeliner(loop, stages, numWarps, arch, options);
      if (!pipeliner.plan())
        continue;
      if (failed(pipeliner.allocate()) || failed(pipeliner.rewrite()))
        return signalPassFailure();
    }
  }
};
} // namespace
