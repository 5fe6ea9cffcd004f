//===- BlockAccess.h - loads that read one block of a row-major matrix -----===//
//
// A 2-D tile load of the form (as the frontend writes `a + rows[:, None] * stride +
// cols[None, :]`, after canonicalisation)
//   ptr  = base + (row + arange(M))[:, None] * stride + (col + arange(N))[None, :]
//   mask = ((row + arange(M))[:, None] < rowBound) & ((col + arange(N))[None, :] < colBound)
// (each compare also before its expand: ((row + arange(M)) < rowBound)[:, None]; each
// also and-ed with `row + arange(M) >= 0`, as a tensor descriptor checks an offset that
// may be negative: TMA fills negative coordinates with zeros too)
// (indices may be sign-extended to i64 before the multiply) reads the block
// [row, row + M) x [col, col + N) of a row-major matrix with rowBound
// rows and colBound columns, zero outside. The bulk tensor copy engine (TMA) does exactly
// that from a tensor map; base, stride and bounds must be kernel arguments (or
// constants) so that the runtime can encode the map before the launch.
//
// The matrix may be one of a batch: base = arg + i * s_i + j * s_j (attention's
// `q + b * q_sb + h * q_sh`), each index any i32 the kernel computes, each stride an
// argument or constant (at most two: a tensor map has five dimensions). Either bound may
// be missing from the mask, or the mask altogether: the load then reads every row (or
// column) it names, and the bound is kUnboundedExtent (columns starting at 0: the tile's
// width, exactly what it reads).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_BLOCKACCESS_H
#define TESSEL_LOWERING_BLOCKACCESS_H

#include "dialect/TesselDialect.h"

namespace mlir::tessel {

/// A kernel argument (index >= 0) or a constant.
struct ArgOrConstant {
  int64_t argument = -1;
  int64_t value = 0;
};

/// One outer dimension of a batched matrix: the base moves by `index` * `stride`.
struct BatchIndex {
  Value index; // i32
  ArgOrConstant stride;
};

/// The bound of a dimension no mask bounds (a tensor map's coordinates are i32).
inline constexpr int64_t kUnboundedExtent = int64_t(1) << 31;

struct BlockAccess {
  int64_t baseArgument;  // the !tessel.ptr kernel argument
  SmallVector<BatchIndex, 2> batch; // where in a batch of matrices (none: one matrix)
  ArgOrConstant rowStride; // elements from one row to the next
  ArgOrConstant rows, cols; // the matrix's bounds
  Value row, col;        // i32 start of the block (null: 0; sign extensions skipped)
  int64_t blockRows, blockCols;
};

/// Matches `load` (see the header); fails for anything else.
FailureOr<BlockAccess> matchBlockAccess(LoadOp load);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_BLOCKACCESS_H
