//===- DotEmitters.h - tessel.dot, one file per instruction family -------===//
//
// DotToLLVM.cpp picks a dot's instruction family, stages its register operands in the
// scratch (DotStaging.cpp) and calls one emitter: mma.sync (DotOnMmaSync.cpp), the three
// wgmma forms (DotOnWgmma.cpp) or FMAs (DotOnFma.cpp). Every emitter updates the
// accumulator registers `acc` in place.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_DOTEMITTERS_H
#define TESSEL_LOWERING_DOTEMITTERS_H

#include "dialect/TesselDialect.h"
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::tessel::dot {

/// Where a and b live in shared memory (strides in elements). Register operands are
/// staged in the scratch area (a from 0, b from `bOffset`); `!tessel.shared` operands are
/// read where the software pipeliner's copies put them, with the same padded rows. An A
/// in the mma rows layout is not staged (its registers are the fragments); a B whose
/// registers run along K is staged as B^T, N rows of K (MmaLayout.h).
struct Staging {
  int64_t elementBytes;
  int64_t aStride; // elements per row of a, padding included
  int64_t bStride; // elements per row of b (of b^T when bTransposed)
  int64_t bOffset;
  int64_t totalBytes; // scratch needed for the register operands
  bool aInRegisters;
  bool bTransposed;
  explicit Staging(DotOp dot);
};

inline Value add(OpBuilder &b, Location loc, Value x, int64_t c) {
  if (c == 0)
    return x;
  return arith::AddIOp::create(b, loc, x, createI32(b, loc, c));
}

inline Value mul(OpBuilder &b, Location loc, Value x, int64_t c) {
  return arith::MulIOp::create(b, loc, x, createI32(b, loc, c));
}

/// Rounds an f32 (or its bits in an i32, as cp.async leaves operands in shared memory) to
/// tf32, to nearest; the result has the operand's type. sm_90 has `cvt.rn.tf32.f32`
/// (ties to even), one instruction (F2FP.TF32); before it, `cvt.rna` (ties away), which
/// ptxas builds from three (an add, a compare against infinity, a select).
Value roundToTF32(OpBuilder &b, Location loc, Value value, bool hopper);

/// Writes a thread's registers of a tile to shared memory (row-major, `stride` elements
/// per row, from `base`; the transpose when `transposed`), as vectors of up to 16 bytes
/// where the layout holds runs along the stored rows. With `swizzledRows` the stored tile
/// (of that many rows) goes in wgmma's 128-byte-swizzled wgmma_b layout instead of padded
/// rows (WgmmaLayout.h); a run never crosses a 16-byte chunk.
void stageTile(OpBuilder &b, Location loc, ValueRange regs, RankedTensorType type,
               Value base, int64_t stride, int64_t elementBytes, const ThreadIndex &thread,
               bool toTF32, bool hopper, bool transposed = false, int64_t swizzledRows = 0);

/// One 32-bit A-operand register of a 16-bit A held in the mma rows layout (MmaLayout.h):
/// elements (row, col) and (row, col + 1) of the thread's registers, `row` and `col`
/// counted in registers. mma.sync and register-A wgmma take the same fragments:
/// {(2p, c), (2p + 1, c), (2p, c + 2), (2p + 1, c + 2)} for 16-row pair p, c = k / 4.
Value packOperandA(OpBuilder &b, Location loc, ValueRange aRegs, const TileLayout &aLayout,
                   Type elem, unsigned row, unsigned col);

/// The mma.sync K loop; `acc` holds the accumulator registers (updated in place).
/// `roundA`/`roundB`: tf32 operands still hold full f32 bits and are rounded as loaded.
/// `aRegs`: A's registers when staging.aInRegisters (in the mma rows layout).
void emitMma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
             const Staging &staging, Value aBase, Value bBase, ValueRange aRegs,
             const ThreadIndex &thread, bool roundA, bool roundB, bool hopper,
             SmallVectorImpl<Value> &acc);

/// `wgmma.wait_group pending`: takes and returns the accumulator registers `regs` (in
/// chunks the asm can take), so nothing reads them before the wait.
void waitForWgmma(OpBuilder &b, Location loc, unsigned pending, SmallVectorImpl<Value> &regs);

/// Register-A wgmma (WgmmaLayout.h): per warpgroup and 64-row instruction, K / 16
/// `wgmma.mma_async` whose A fragments are the thread's registers of A (the mma rows
/// layout) and whose B is a descriptor into a 128-byte-swizzled buffer: K-major (B^T
/// stored as N rows of K, blocks of 64 columns N * 128 bytes apart) or N-major (a wgmma_b
/// buffer of K rows).
void emitRegisterWgmma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
                       ValueRange aRegs, Value bBase, bool bKMajor, SmallVectorImpl<Value> &acc);

/// The wgmma K loop (WgmmaLayout.h): per warpgroup and 64-row instruction, K / 16
/// `wgmma.mma_async` on descriptors into the swizzled buffers (B N-major, or K-major: a
/// transposed view of a wgmma_b slot), then one commit and, for a synchronous dot, a wait
/// for all (an `async` dot leaves that to tessel.dot_wait).
void emitWgmma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout, Value aBase,
               Value bBase, bool bKMajor, const ThreadIndex &thread,
               SmallVectorImpl<Value> &acc);

/// tf32 on wgmma, transposed (WgmmaLayout.h): C^T = B^T A^T. Per K step of 8 and pair of
/// column repetitions, one `wgmma.mma_async m64nMk8` whose A (B^T) each warp loads into
/// registers from the swizzled B buffer, rounded to tf32, and whose B is the swizzled A
/// buffer (K-major, 128-byte rows) through a descriptor. A synchronous dot commits once
/// and waits; an async one commits per K step (DotOnWgmma.cpp says why).
void emitWgmmaTf32(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout, Value aBase,
                   Value bBase, const ThreadIndex &thread, SmallVectorImpl<Value> &acc);

/// The FMA loop for any accumulator layout; exact f32 products.
void emitFma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
             const Staging &staging, Value aBase, Value bBase, const ThreadIndex &thread,
             SmallVectorImpl<Value> &acc);

} // namespace mlir::tessel::dot

#endif // TESSEL_LOWERING_DOTEMITTERS_H
