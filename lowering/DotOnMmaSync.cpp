//===- DotOnMmaSync.cpp - tessel.dot on mma.sync, operands by ldmatrix ----===//
//
// Per K step, A fragments by `ldmatrix.x4` (or from registers in the mma rows layout), B
// fragments by `ldmatrix.x4.trans` (f16/bf16) or ld.shared (tf32, rounded as staged or
// as loaded), one `mma.sync` per 16x8 instruction tile of the warp (MmaLayout.h).
// Operands come from the padded scratch rows or from 128-byte-swizzled rings.
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/DotEmitters.h"
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::dot;

namespace {
SmallVector<Value> ldmatrix(OpBuilder &b, Location loc, Value address, unsigned num,
                            bool transpose) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Type resultType = num == 1 ? i32
                             : Type(LLVM::LLVMStructType::getLiteral(
                                   ctx, SmallVector<Type>(num, i32)));
  Value loaded = NVVM::LdMatrixOp::create(
      b, loc, resultType, address, num, transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  if (num == 1)
    return {loaded};
  SmallVector<Value> regs;
  for (unsigned i = 0; i < num; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, loaded, i));
  return regs;
}
} // namespace

/// The mma.sync K loop; `acc` holds the accumulator registers (updated in place).
/// `roundA`/`roundB`: tf32 operands still hold full f32 bits and are rounded as loaded.
/// `aRegs`: A's registers when staging.aInRegisters (in the mma rows layout).
void dot::emitMma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
                  const Staging &staging, Value aBase, Value bBase, ValueRange aRegs,
                  const ThreadIndex &thread, bool roundA, bool roundB, bool hopper,
                  SmallVectorImpl<Value> &acc) {
  MLIRContext *ctx = b.getContext();
  Type elem = getElementTypeOrSelf(op.getA().getType());
  int64_t k = cast<ShapedType>(op.getA().getType()).getDimSize(1);
  unsigned kStep = getMmaK(op);
  bool tf32 = elem.isF32();
  int64_t bytes = staging.elementBytes;
  BlockedEncodingAttr root = layout.getRoot();
  unsigned wm = root.getWarpsPerCTA()[0], wn = root.getWarpsPerCTA()[1];
  unsigned pairsM = layout.getRegistersAlong(0) / 2; // 16-row instruction tiles
  unsigned blocksN = layout.getRegistersAlong(1) / 2; // 8-column instruction tiles

  Value lane = thread.lane;
  Value warpN = arith::AndIOp::create(b, loc, thread.warp, createI32(b, loc, wn - 1));
  Value warpM = arith::ShRUIOp::create(b, loc, thread.warp,
                                       createI32(b, loc, llvm::Log2_32(wn)));
  warpM = arith::AndIOp::create(b, loc, warpM, createI32(b, loc, wm - 1));
  auto bits = [&](Value v, unsigned shift, unsigned mask) {
    Value s = shift ? arith::ShRUIOp::create(b, loc, v, createI32(b, loc, shift)).getResult() : v;
    return arith::AndIOp::create(b, loc, s, createI32(b, loc, mask)).getResult();
  };
  Value r8 = bits(lane, 0, 7);     // row within an 8x8 matrix
  Value mat01 = bits(lane, 3, 1);  // matrix index bit 0
  Value mat1 = bits(lane, 4, 1);   // matrix index bit 1
  // Operands the bulk tensor engine put in 128-byte-swizzled buffers (WgmmaLayout.h):
  // 16-byte chunk c of row r of a 128-byte column block sits at chunk c ^ (r % 8). The
  // lane's part of each address is computed once below, not per element through
  // getWgmmaSharedOffset: that costs 30-40 more registers (94 -> 128 for 128x128 with
  // 8 warps, 166 -> 205 with 4), and with them the CTAs that share an SM.
  bool aSwizzled = getSharedLayout(op.getA()) == SharedLayout::Swizzled;
  // (wgmma_b is the same layout: a ring marked for register-A wgmma, should one land here.)
  bool bSwizzled = getSharedLayout(op.getB()) == SharedLayout::Swizzled ||
                   getSharedLayout(op.getB()) == SharedLayout::WgmmaB;
  auto shl = [&](Value v, unsigned shift) {
    return arith::ShLIOp::create(b, loc, v, createI32(b, loc, shift)).getResult();
  };
  auto xorWith = [&](Value v, Value x) { return arith::XOrIOp::create(b, loc, v, x).getResult(); };

  // A, ldmatrix.x4: matrix j = (rows 8-15 if j&1) x (k + 8 if j&2) of the 16x16 tile
  // (8-byte k halves, i.e. 4 elements, for tf32). Row of matrix row r: register row
  // 2p + (j&1) of this warp, i.e. (2p + (j&1)) * 8wm + warpM * 8 + r.
  Value aRow = arith::AddIOp::create(b, loc, mul(b, loc, warpM, 8), r8);
  aRow = arith::AddIOp::create(b, loc, aRow, mul(b, loc, mat01, 8 * wm));
  Value aCol = mul(b, loc, mat1, kStep / 2);
  Value aLane = arith::AddIOp::create(b, loc, mul(b, loc, aRow, staging.aStride), aCol);
  aLane = mul(b, loc, aLane, bytes);
  // Swizzled A (one 128-byte row per tile row): the lane's row, and its chunk
  // (k bytes / 16 + matrix bit 1) ^ row % 8 = (k bytes / 16) ^ x, k bytes / 16 being even.
  Value aSwizzledRow = shl(aRow, 7), aChunkXor = xorWith(mat1, r8);
  auto aAddress = [&](unsigned p, int64_t kk) -> Value {
    if (!aSwizzled) {
      int64_t offset = (int64_t(p) * 16 * wm * staging.aStride + kk) * bytes;
      return byteOffset(b, loc, aBase, add(b, loc, aLane, offset));
    }
    Value chunk = xorWith(aChunkXor, createI32(b, loc, kk * bytes / 16));
    Value offset = arith::AddIOp::create(b, loc, aSwizzledRow, shl(chunk, 4));
    return byteOffset(b, loc, aBase, add(b, loc, offset, int64_t(p) * 16 * wm * 128));
  };

  // B for f16/bf16, ldmatrix.x4.trans over two 8-column blocks: matrix j = (k + 8 if j&1)
  // x (block 2q + (j>>1)); rows are k, the 8 columns of a block are contiguous.
  bool bPairs = blocksN >= 2;
  Value bLane;
  if (staging.bTransposed) {
    // B^T (N rows of K): ldmatrix.x4 without .trans, matrix j = (block 2q + (j>>1)) x
    // (k + 8 if j&1): its rows are n, the 8 k of a row are contiguous. tf32: b0 =
    // B^T[n + lane/4][k + lane%4], b1 = 4 further along the row.
    Value bRow = arith::AddIOp::create(b, loc, mul(b, loc, warpN, 8),
                                       tf32 ? bits(lane, 2, 7) : r8);
    if (bPairs && !tf32)
      bRow = arith::AddIOp::create(b, loc, bRow, mul(b, loc, mat1, 8 * wn));
    Value bCol = tf32 ? bits(lane, 0, 3) : mul(b, loc, mat01, 8);
    bLane = arith::AddIOp::create(b, loc, mul(b, loc, bRow, staging.bStride), bCol);
  } else if (!tf32) {
    Value bRow = arith::AddIOp::create(b, loc, mul(b, loc, mat01, 8), r8);
    Value bCol = mul(b, loc, warpN, 8);
    if (bPairs)
      bCol = arith::AddIOp::create(b, loc, bCol, mul(b, loc, mat1, 8 * wn));
    bLane = arith::AddIOp::create(b, loc, mul(b, loc, bRow, staging.bStride), bCol);
  } else {
    // tf32: b0 = B[k + lane%4][n + lane/4], b1 = 4 rows further; plain loads.
    Value bRow = bits(lane, 0, 3);
    Value bCol = arith::AddIOp::create(b, loc, mul(b, loc, warpN, 8), bits(lane, 2, 7));
    bLane = arith::AddIOp::create(b, loc, mul(b, loc, bRow, staging.bStride), bCol);
  }
  bLane = mul(b, loc, bLane, bytes);
  // Swizzled B (blocks of 128 bytes of columns by K rows): the lane's 8-column group
  // g = warpN + wn * (q + matrix bit 1) lives in block g / 8 at chunk (g % 8) ^ (k % 8).
  int64_t kRows = cast<ShapedType>(op.getB().getType()).getDimSize(0);
  Value bGroup = warpN, bSwizzledRow;
  if (bSwizzled && !tf32) {
    if (bPairs)
      bGroup = arith::AddIOp::create(b, loc, warpN, mul(b, loc, mat1, wn));
    bSwizzledRow = shl(arith::AddIOp::create(b, loc, mul(b, loc, mat01, 8), r8), 7);
  }
  auto bAddress = [&](unsigned q, int64_t kk) -> Value {
    if (staging.bTransposed) {
      int64_t offset = (int64_t(q) * 8 * wn * staging.bStride + kk) * bytes;
      return byteOffset(b, loc, bBase, add(b, loc, bLane, offset));
    }
    if (!bSwizzled) {
      int64_t offset = (kk * staging.bStride + int64_t(q) * 8 * wn) * bytes;
      return byteOffset(b, loc, bBase, add(b, loc, bLane, offset));
    }
    Value g = add(b, loc, bGroup, int64_t(q) * wn);
    Value block = mul(b, loc, arith::ShRUIOp::create(b, loc, g, createI32(b, loc, 3)), kRows * 128);
    Value chunk = xorWith(bits(g, 0, 7), r8);
    Value offset = arith::AddIOp::create(b, loc, block, bSwizzledRow);
    offset = arith::AddIOp::create(b, loc, offset, shl(chunk, 4));
    return byteOffset(b, loc, bBase, add(b, loc, offset, kk * 128));
  };
  // tf32 B element (k = kk + 4 half + lane % 4, n = 8 (q wn + warpN) + lane / 4) in a
  // swizzled buffer: block n / 32, chunk ((n % 32) / 4) ^ (k % 8), word n % 4; in an
  // interleaved one the row sits at 2 (k % 4) + half instead (WgmmaLayout.h).
  bool bInterleaved = getSharedLayout(op.getB()) == SharedLayout::Interleaved;
  bSwizzled |= bInterleaved;
  Value tf32Col = arith::AddIOp::create(b, loc, mul(b, loc, warpN, 8), bits(lane, 2, 7));
  Value tf32Row = bits(lane, 0, 3);
  auto bAddressTf32 = [&](unsigned q, int64_t half, int64_t kk) -> Value {
    if (staging.bTransposed) {
      int64_t offset = (int64_t(q) * 8 * wn * staging.bStride + kk + 4 * half) * bytes;
      return byteOffset(b, loc, bBase, add(b, loc, bLane, offset));
    }
    if (!bSwizzled) {
      int64_t offset = ((kk + 4 * half) * staging.bStride + int64_t(q) * 8 * wn) * bytes;
      return byteOffset(b, loc, bBase, add(b, loc, bLane, offset));
    }
    Value n = add(b, loc, tf32Col, int64_t(q) * 8 * wn);
    // k % 8 (kk is a multiple of 8), or its position 2 (k % 4) + half when interleaved.
    Value k8 = bInterleaved ? add(b, loc, shl(tf32Row, 1), half)
                            : add(b, loc, tf32Row, 4 * half);
    Value block = mul(b, loc, arith::ShRUIOp::create(b, loc, n, createI32(b, loc, 5)), kRows * 128);
    Value chunk = xorWith(bits(n, 2, 7), k8);
    Value offset = arith::AddIOp::create(b, loc, block, shl(k8, 7));
    offset = arith::AddIOp::create(b, loc, offset, shl(chunk, 4));
    offset = arith::AddIOp::create(b, loc, offset, shl(bits(n, 0, 3), 2));
    return byteOffset(b, loc, bBase, add(b, loc, offset, kk * 128));
  };

  Type i32 = b.getI32Type();
  Type f32 = b.getF32Type();
  auto accType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(4, f32));
  NVVM::MMATypes ptxType = tf32                ? NVVM::MMATypes::tf32
                           : elem.isBF16()     ? NVVM::MMATypes::bf16
                                               : NVVM::MMATypes::f16;
  auto asOperand = [&](Value reg) -> Value {
    if (elem.isF16())
      return LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()), reg);
    return reg;
  };

  std::optional<TileLayout> aLayout;
  if (staging.aInRegisters)
    aLayout = *TileLayout::get(cast<RankedTensorType>(op.getA().getType()));
  auto packA = [&](unsigned row, unsigned col) -> Value {
    return asOperand(packOperandA(b, loc, aRegs, *aLayout, elem, row, col));
  };

  for (int64_t kk = 0; kk < k; kk += kStep) {
    SmallVector<SmallVector<Value>> aFrags;
    for (unsigned p = 0; p < pairsM; ++p) {
      SmallVector<Value> frag;
      if (aLayout) {
        unsigned col = unsigned(kk / 4); // 4 registers per 16 columns
        frag = {packA(2 * p, col), packA(2 * p + 1, col), packA(2 * p, col + 2),
                packA(2 * p + 1, col + 2)};
      } else {
        for (Value reg : ldmatrix(b, loc, aAddress(p, kk), 4, /*transpose=*/false))
          frag.push_back(roundA ? roundToTF32(b, loc, reg, hopper) : asOperand(reg));
      }
      aFrags.push_back(frag);
    }
    SmallVector<SmallVector<Value>> bFrags(blocksN);
    if (!tf32) {
      for (unsigned q = 0; q < blocksN; q += bPairs ? 2 : 1) {
        SmallVector<Value> regs = ldmatrix(b, loc, bAddress(q, kk), bPairs ? 4 : 2,
                                           /*transpose=*/!staging.bTransposed);
        bFrags[q] = {asOperand(regs[0]), asOperand(regs[1])};
        if (bPairs)
          bFrags[q + 1] = {asOperand(regs[2]), asOperand(regs[3])};
      }
    } else {
      for (unsigned q = 0; q < blocksN; ++q) {
        for (int64_t half = 0; half < 2; ++half) {
          Value reg = LLVM::LoadOp::create(b, loc, i32, bAddressTf32(q, half, kk), 4);
          bFrags[q].push_back(roundB ? roundToTF32(b, loc, reg, hopper) : reg);
        }
      }
    }
    for (unsigned p = 0; p < pairsM; ++p) {
      for (unsigned q = 0; q < blocksN; ++q) {
        unsigned regs[4] = {layout.getRegister({2 * p, 2 * q}),
                            layout.getRegister({2 * p, 2 * q + 1}),
                            layout.getRegister({2 * p + 1, 2 * q}),
                            layout.getRegister({2 * p + 1, 2 * q + 1})};
        SmallVector<Value> c;
        for (unsigned r : regs)
          c.push_back(acc[r]);
        int64_t shape[3] = {16, 8, int64_t(kStep)};
        Value d = NVVM::MmaOp::create(
            b, loc, accType, aFrags[p], bFrags[q], c, shape, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (unsigned i = 0; i < 4; ++i)
          acc[regs[i]] = LLVM::ExtractValueOp::create(b, loc, d, i);
      }
    }
  }
}
