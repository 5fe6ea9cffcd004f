//===- MmaLayout.h - the mma.sync accumulator layout as a blocked layout --===//
//
// The accumulator fragment of mma.sync m16n8kK gives lane l the elements
// (l/4, 2*(l%4) + {0,1}) and (l/4 + 8, ...) of a 16x8 tile. That is the blocked layout
//   sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [wm, wn], order = [1, 0]
// once one reads the two 8-row halves of an instruction's 16 rows as consecutive
// repetitions along M (rows m and m + 8*wm): mma does not care which 16 rows of the
// output it computes as long as the A fragment holds the same rows, and ldmatrix takes a
// row address per lane. So the accumulator, and every tile computed from it, uses the
// ordinary 1:N machinery; only `tessel.dot` knows the register -> fragment pairing:
//   instruction (p, j): c0,c1 = registers (m=2p, n=2j, 2j+1), c2,c3 = (m=2p+1, ...).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_MMALAYOUT_H
#define TESSEL_LOWERING_MMALAYOUT_H

#include "dialect/Layout.h"

namespace mlir::tessel {

/// Elements of K one mma.sync instruction consumes: 16 for f16/bf16, 8 for tf32; 0 when
/// the dot runs on FMAs (f32 with inputPrecision = "ieee").
unsigned getMmaK(DotOp dot);

/// The accumulator layout for an MxN dot result on `numWarps` warps, or null when the
/// tile is too small for every warp to own whole 16x8 instruction tiles.
BlockedEncodingAttr getMmaAccumulatorLayout(MLIRContext *ctx, int64_t m, int64_t n,
                                            unsigned numWarps);

/// The layout `tessel.dot`'s result should take (null: no preference, FMA path).
BlockedEncodingAttr getPreferredDotLayout(DotOp dot, unsigned numWarps);

/// True when `layout` (of an MxN tile) is an mma accumulator layout without replication.
bool isMmaAccumulatorLayout(const TileLayout &layout);

/// The accumulator layout with every warp along M, for an MxN dot result on `numWarps`
/// warps (null when M < 16 * numWarps or N < 8). A 16-bit A operand held in this layout
/// feeds mma.sync from its registers: the four registers of a 16x16 A fragment are the
/// accumulator registers (rows 2p, 2p + 1) x (columns 4t .. 4t + 3) of the same thread,
/// since lane l holds rows l/4 (+ 8) and columns 2 (l % 4) + {0, 1} (+ 8) in both. So a
/// product of dots (FlashAttention's P = softmax(Q K^T), then P V) never leaves registers.
BlockedEncodingAttr getMmaRowsLayout(MLIRContext *ctx, int64_t m, int64_t n,
                                     unsigned numWarps);

/// True when `dot` (laid out) reads its register A operand straight from the registers:
/// f16/bf16, the mma path, A and the result both in the getMmaRowsLayout layout.
bool readsMmaOperandAFromRegisters(DotOp dot);

/// True when `dot` (laid out, mma path) stages its register B operand K-contiguous, as
/// B^T row-major: its layout holds runs along K (B = trans(x) of a row-major x), which
/// are then stored as vectors and read back by ldmatrix without .trans.
bool stagesMmaOperandBTransposed(DotOp dot);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_MMALAYOUT_H
