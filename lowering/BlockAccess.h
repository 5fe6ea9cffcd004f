//===- BlockAccess.h - loads that read one block of a row-major matrix -----===//
//
// A 2-D tile load of the form (as the frontend writes `a + rows[:, None] * stride +
// cols[None, :]`, after canonicalisation)
//   ptr  = base + (row + arange(M))[:, None] * stride + (col + arange(N))[None, :]
//   mask = ((row + arange(M))[:, None] < rowBound) & ((col + arange(N))[None, :] < colBound)
// (indices may be sign-extended to i64 before the multiply) reads the block
// [row, row + M) x [col, col + N) of a row-major matrix with rowBound
// rows and colBound columns, zero outside. The bulk tensor copy engine (TMA) does exactly
// that from a tensor map; base, stride and bounds must be kernel arguments (or
// constants) so that the runtime can encode the map before the launch.
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

struct BlockAccess {
  int64_t baseArgument;  // the !tessel.ptr kernel argument
  ArgOrConstant rowStride; // elements from one row to the next
  ArgOrConstant rows, cols; // the matrix's bounds
  Value row, col;        // i32 start of the block (null: 0; sign extensions skipped)
  int64_t blockRows, blockCols;
};

/// Matches `load` (see the header); fails for anything else.
FailureOr<BlockAccess> matchBlockAccess(LoadOp load);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_BLOCKACCESS_H
