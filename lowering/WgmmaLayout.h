//===- WgmmaLayout.h - Hopper warpgroup MMA: when, and where operands live -===//
//
// On sm_90a a dot whose operands the software pipeliner put in shared memory can run
// on `wgmma.mma_async` (four warps, a warpgroup, per 64-row instruction, operands read
// from shared memory through descriptors). Conditions: f16/bf16 operands, K = 64 per
// dot (a row of A is one 128-byte swizzle row), N in {64, 128, 256}, num_warps a
// multiple of 4, M a multiple of 16 * num_warps. An A that stays in shared memory for a
// whole loop (-tessel-invariant-operands-to-shared) may have K in several 128-byte
// blocks, and B may then be a transposed view of a ring slot (read K-major, N of 8 up to
// 256), as register-A wgmma reads it.
//
// Accumulator: the blocked layout sizePerThread = [1, 2], threadsPerWarp = [8, 4],
// warpsPerCTA = [num_warps, 1], order = [1, 0] (as for mma.sync, all warps along M).
// Warp w holds rows r * 8W + 8w + lane/4 for repetitions r = 0 .. R-1 (R = M / 8W);
// wgmma gives warp w%4 of warpgroup g rows 16(w%4) + lane/4 + 8h of a 64-row
// instruction. Pairing repetitions (r = 2i + h) with instructions i makes the two agree
// once A's rows are permuted in shared memory (the copy does it for free):
//   tile row t -> shared row 32R*g + 64*(r/2) + 16*(w%4) + 8*(r%2) + t%8,
//   r = t / 8W, w = (t / 8) % W, g = w / 4.
// Shared layouts (128-byte swizzle, 16-byte chunk c of a 128-byte row s stored at chunk
// c ^ (s % 8)):
//   A (K-major, 64 x 2 bytes per row): row s at s * 128; 8-row groups 1024 bytes apart;
//   a wider A in blocks of 64 columns, M * 128 bytes apart.
//   B (N-major): 64-column x 8-row atoms of 1024 bytes, k-groups of 8 rows 1024 bytes
//   apart, 64-column blocks K * 128 bytes apart.
// The same swizzled layout without A's row permutation ("swizzled": blocks of 128 bytes
// of columns, row r of a block at r * 128) holds mma.sync operands that the bulk tensor
// engine fills on sm_90 (one box per block); ldmatrix reads it without bank conflicts,
// since the eight rows of an 8x8 matrix sit in eight different 16-byte chunks.
//
// tf32 (f32 operands, inputPrecision "tf32"): wgmma reads tf32 from shared memory only
// K-major, and B is N-major. So the dot runs transposed, C^T = B^T A^T (CUTLASS's
// register-A wgmma): wgmma's A is B^T, loaded by each warp into registers from the
// "swizzled" B buffer (rounded to tf32 there); wgmma's B is the "swizzled" A buffer, whose
// 128-byte rows (BLOCK_K = 32) are exactly a K-major operand. One m64nMk8 instruction per
// 64 columns of C a warpgroup owns, M = the tile's rows (8..256). Its accumulator holds C^T,
// which is the blocked layout sizePerThread = [2, 1], threadsPerWarp = [4, 8],
// warpsPerCTA = [1, num_warps], order = [0, 1]: thread (warp w, lane l) holds rows
// 8c + 2(l%4) + {0,1} and columns r * 8W + 8w + l/4 for repetitions r. Instruction i of
// warpgroup g pairs repetitions 2i and 2i + 1 with its 64 rows, warp w%4 owning 16 of
// them; since every warp loads its own A rows, any columns can play those rows and no
// shared layout changes. Conditions: K = 32, num_warps a multiple of 4, N a multiple of
// 16 * num_warps, M a multiple of 8 up to 256, both operands in "swizzled" buffers.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_WGMMALAYOUT_H
#define TESSEL_LOWERING_WGMMALAYOUT_H

#include "dialect/Layout.h"

#include "mlir/IR/Builders.h"

namespace mlir::tessel {

/// The swizzled layouts of a `!tessel.shared` buffer (its type's SharedLayout): wgmma_a
/// or wgmma_b (a wgmma dot reads it), swizzled (an mma.sync or tf32 wgmma dot reads it,
/// the bulk tensor engine fills it), or interleaved: swizzled with the rows of each group
/// of 8 stored in the order 0 4 1 5 2 6 3 7 (row k at position 2 (k % 4) + (k % 8) / 4),
/// tf32 mma.sync's B. Its fragment loads (lane l: row l % 4 or 4 + l % 4, column l / 4 of
/// an 8-column group) then meet swizzle masks 0 2 4 6 (or 1 3 5 7) instead of 0 1 2 3,
/// which send the group's two 16-byte chunks to eight different chunk positions: 32
/// banks instead of 16. wgmma_b, swizzled and interleaved place 128-byte blocks alike.

/// Columns of `elementType` in one 128-byte swizzle block (a row of a bulk copy's box).
inline int64_t getSwizzleBlockColumns(Type elementType) {
  return 128 / (elementType.getIntOrFloatBitWidth() / 8);
}

/// True when a dot of `elementType` operands, MxK by KxN, read from shared memory, can
/// run on wgmma with `numWarps` warps for `arch`.
bool canUseWgmma(Type elementType, int64_t m, int64_t n, int64_t k, unsigned numWarps,
                 StringRef arch);

/// True when `dot` (both operands in shared memory) can run on wgmma.
bool canUseWgmma(DotOp dot, unsigned numWarps, StringRef arch);

/// The same for operand shapes: A (M x K) in whole 128-byte blocks, B (K x N) N-major or,
/// `bKMajor`, a transposed view of a ring slot.
bool canUseWgmmaFromDescriptors(Type elementType, int64_t m, int64_t n, int64_t k,
                                bool bKMajor, unsigned numWarps, StringRef arch);

/// The accumulator layout of a wgmma dot.
BlockedEncodingAttr getWgmmaAccumulatorLayout(MLIRContext *ctx, unsigned numWarps);

/// True when `dot` can run on wgmma with A in registers (sm_90a, f16/bf16, num_warps a
/// multiple of 4, M of 16 * num_warps, K of 16, N of 8 up to 256). Its result takes the
/// accumulator layout above, which is also the mma rows layout (MmaLayout.h): A, converted
/// to it, holds wgmma's A fragments in its registers as it holds mma.sync's, and rows
/// need no permutation since A's registers and the accumulator's name the same rows.
/// B comes from shared memory through a descriptor, 128-byte swizzled: a register B is
/// staged by the dot K-major (N rows of K, as a wgmma_b buffer of B^T) when K fills whole
/// 128-byte rows, else N-major (a wgmma_b buffer) when N does; a pipelined B is read from its
/// ring, which must be (or become) a wgmma_b or swizzled buffer with N in whole rows, or,
/// through `tessel.trans` of the slot (B = trans(load)), a wgmma_b buffer of the N x K tile
/// with K in whole rows, read K-major.
/// This carries dots whose operands do not both come from the bulk copies: attention's
/// S = Q K^T and O += P V, where Q and P never leave registers.
bool canUseRegisterWgmma(DotOp dot, unsigned numWarps, StringRef arch);

/// True when `dot`, its layouts assigned, lowers to register-A wgmma: the module's
/// arch allows it (above), A holds the mma rows layout in registers, the result the
/// accumulator layout, and B is a register tile (staged by the dot) or a wgmma_b or
/// swizzled buffer (or a transposed view of one).
bool runsOnRegisterWgmma(DotOp dot);

/// True when `dot` runs on wgmma from two descriptors with an A buffer that its block does
/// not write (a slot chosen outside the loop: -tessel-invariant-operands-to-shared).
bool readsLoopInvariantWgmmaA(DotOp dot);
/// True when a tf32 dot (f32 operands, inputPrecision "tf32"), MxK by KxN, can run
/// transposed on wgmma for `arch` once both operands are in "swizzled" buffers.
bool canUseTf32Wgmma(DotOp dot, int64_t m, int64_t n, int64_t k, unsigned numWarps,
                     StringRef arch);

/// True when `dot` reads both operands from "swizzled" buffers and can run on tf32 wgmma.
bool canUseTf32Wgmma(DotOp dot, unsigned numWarps, StringRef arch);

/// wgmma groups an asynchronous tf32 dot commits: one per K step of 8 (K = 32), so that
/// each step's register operand can be reloaded once the previous dot's step is done.
inline constexpr unsigned kTf32WgmmaGroups = 4;

/// The (transposed) accumulator layout of a tf32 wgmma dot.
BlockedEncodingAttr getTf32WgmmaAccumulatorLayout(MLIRContext *ctx, unsigned numWarps);

/// The tessel.local_alloc a shared tile comes from (through local_index), or null.
LocalAllocOp getSharedAlloc(Value shared);

/// The layout of a shared tile's buffer; Padded for a register tile.
inline SharedLayout getSharedLayout(Value tile) {
  auto shared = dyn_cast<SharedType>(tile.getType());
  return shared ? shared.getLayout() : SharedLayout::Padded;
}

/// True when a wgmma dot reads the buffer (through the async proxy).
inline bool isWgmmaOperand(Value shared) {
  SharedLayout layout = getSharedLayout(shared);
  return layout == SharedLayout::WgmmaA || layout == SharedLayout::WgmmaB;
}

/// Gives `alloc`'s buffer `layout`: retypes it and the tiles and views taken of it.
void setSharedLayout(LocalAllocOp alloc, SharedLayout layout);

/// Byte offset in a swizzled tile where a box the bulk tensor engine copies starts: for
/// wgmma_a the 8-row group of tile row `row` (a multiple of 8), for the others the
/// 64-column (128-byte) block of tile column `col`. The same placement as below.
int64_t getWgmmaBoxOffset(SharedLayout layout, int64_t row, int64_t col, int64_t rows,
                          unsigned numWarps, unsigned elementBytes);

/// Byte offset (i32) in a swizzled tile of element (row, col) of the tile. `numWarps`
/// matters for wgmma_a (its row permutation).
Value getWgmmaSharedOffset(OpBuilder &b, Location loc, SharedLayout layout, Value row, Value col,
                           int64_t rows, int64_t cols, unsigned numWarps, unsigned elementBytes);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_WGMMALAYOUT_H
