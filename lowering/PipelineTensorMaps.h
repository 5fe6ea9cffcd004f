//===- PipelineTensorMaps.h - what the pipeliner's bulk copies need ---------===//
//
// For each load the software pipeliner copies with the bulk tensor engine: the recipe
// the runtime encodes its tensor map from, how many 128-byte column blocks one box
// brings, and the kernel's run-time tests for whole blocks and for a cluster that shares
// the tile (TMA multicast).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_PIPELINETENSORMAPS_H
#define TESSEL_LOWERING_PIPELINETENSORMAPS_H

#include "dialect/TesselDialect.h"
#include "lowering/AxisInfo.h"
#include "lowering/BlockAccess.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tessel::pipeline {

/// What the runtime needs to encode the tensor map of `access` (parameter `index`):
/// {param, pointer, rows, cols, row_stride, box = [rows, cols], dtype[, batch_strides]
/// [, row_order][, col_blocks]}.
/// Bounds and strides are {"param": i} or {"value": v}; batch_strides, one per outer
/// dimension of a batched matrix (in elements); row_order "interleave8" for an
/// "interleaved" ring. A wgmma A's box is 8 rows (its 8-row groups are
/// permuted in shared memory for the wgmma accumulator layout); every other box is the
/// tile's rows by 128 bytes of columns (one swizzle block); col_blocks > 1: how many
/// blocks one box brings where the matrix's columns are whole blocks.
DictionaryAttr tensorMapRecipe(OpBuilder &b, LoadOp load, const BlockAccess &access,
                               unsigned index, bool wgmma, bool interleaved,
                               int64_t colBlocks);

/// How many 128-byte column blocks of `access` one box may bring at once: a tile several
/// blocks wide whose boxes hold all its rows (not a wgmma A's 8-row boxes), starting at a
/// column the analysis proves is a block's first. 1: a box per block.
int64_t wholeColumnBlocks(LoadOp load, const BlockAccess &access, bool wgmma,
                          const AxisInfoAnalysis &axisInfo);

/// The kernel's test that the matrix of `access` has whole column blocks (`cols` a
/// multiple of `perBlock`): the runtime makes the same one before encoding the block as a
/// dimension of the map.
Value buildWholeBlocksTest(OpBuilder &b, Location loc, func::FuncOp func,
                           const BlockAccess &access, int64_t perBlock);

/// Whether `value` is the same in every program whose ids differ only along axis 0: it
/// is computed by pure ops from constants, kernel arguments, other axes' program ids and
/// `loop`'s induction variable.
bool isSameAlongProgramAxis0(Value value, scf::ForOp loop);

/// The kernel's test that the `ctas` programs of its cluster (consecutive ids along axis
/// 0, this one's id rounded down to a multiple of `ctas` first) all copy the block of
/// columns that `access` starts at: `access.col` recomputed for each of their ids. Null
/// where that column is not computed from program ids, arguments and constants alone.
Value buildClusterSharesTileTest(OpBuilder &b, Location loc, const BlockAccess &access,
                                 int64_t ctas);

} // namespace mlir::tessel::pipeline

#endif // TESSEL_LOWERING_PIPELINETENSORMAPS_H
