//===- PipelineTensorMaps.cpp - what the pipeliner's bulk copies need -------===//
#include "lowering/PipelineTensorMaps.h"
#include "lowering/PipelinePlan.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::pipeline;

/// What the runtime needs to encode the tensor map of `access` (parameter `index`):
/// {param, pointer, rows, cols, row_stride, box = [rows, cols], dtype[, batch_strides]
/// [, row_order][, col_blocks]}.
/// Bounds and stride are {"param": i} or {"value": v}; row_order "interleave8" for an
/// "interleaved" ring. A wgmma A's box is 8 rows (its 8-row groups are
/// permuted in shared memory for the wgmma accumulator layout); every other box is the
/// tile's rows by 128 bytes of columns (one swizzle block); col_blocks > 1: how many
/// blocks one box brings where the matrix's columns are whole blocks.
DictionaryAttr pipeline::tensorMapRecipe(OpBuilder &b, LoadOp load, const BlockAccess &access,
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
  if (!access.batch.empty()) {
    SmallVector<Attribute> strides;
    for (const BatchIndex &outer : access.batch)
      strides.push_back(scalar(outer.stride));
    fields.set("batch_strides", b.getArrayAttr(strides));
  }
  if (interleaved)
    fields.set("row_order", b.getStringAttr("interleave8"));
  if (colBlocks > 1)
    fields.set("col_blocks", b.getI64IntegerAttr(colBlocks));
  return fields.getDictionary(b.getContext());
}

/// How many 128-byte column blocks of `access` one box may bring at once: a tile several
/// blocks wide whose boxes hold all its rows (not a wgmma A's 8-row boxes), starting at a
/// column the analysis proves is a block's first. 1: a box per block.
int64_t pipeline::wholeColumnBlocks(LoadOp load, const BlockAccess &access, bool wgmma,
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
Value pipeline::buildWholeBlocksTest(OpBuilder &b, Location loc, func::FuncOp func,
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
bool pipeline::isSameAlongProgramAxis0(Value value, scf::ForOp loop) {
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

namespace {
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
} // namespace

/// The kernel's test that the `ctas` programs of its cluster (consecutive ids along axis
/// 0, this one's id rounded down to a multiple of `ctas` first) all copy the block of
/// columns that `access` starts at: `access.col` recomputed for each of their ids. Null
/// where that column is not computed from program ids, arguments and constants alone.
Value pipeline::buildClusterSharesTileTest(OpBuilder &b, Location loc, const BlockAccess &access,
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
