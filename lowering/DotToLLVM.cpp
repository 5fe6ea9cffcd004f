//===- DotToLLVM.cpp - tessel.dot on tensor cores (mma.sync) or FMAs ------===//
//
// Both paths stage the operands through shared memory: every thread writes its registers
// of a (MxK) and b (KxN) row-major, each row padded by 16 bytes so that the eight 16-byte
// rows one ldmatrix reads for an 8x8 matrix land in distinct banks; then a barrier.
//  - mma.sync path (the result has the accumulator layout of MmaLayout.h and the operands
//    are f16/bf16, or f32 with inputPrecision = "tf32"): per K step, A fragments by
//    `ldmatrix.x4`, B fragments by `ldmatrix.x4.trans` (f16/bf16) or ld.shared (tf32, rounded
//    to tf32 when staged), one `mma.sync` per 16x8 instruction tile of the warp.
//  - wgmma paths (sm_90a, WgmmaLayout.h): f16/bf16 from two descriptors into the bulk
//    copies' buffers; f16/bf16 with A from registers (the mma rows layout) and B by
//    descriptor, from its ring or staged 128-byte swizzled; tf32 transposed, B^T from
//    registers and A by descriptor.
//  - FMA path (any layout; f32 "ieee", or tiles too small for every warp to hold whole
//    instruction tiles): each thread reads the rows of a and the columns of b its
//    accumulator registers need and accumulates with fma in f32.
// A final barrier: the scratch is shared with the next op. Operands already in shared
// memory (`!tessel.shared`, filled by the software pipeliner's cp.async copies) are read
// in place: no staging and no barriers here (-tessel-insert-barriers places them).
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/MmaLayout.h"
#include "lowering/TileToLLVMUtils.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

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

  explicit Staging(DotOp dot) {
    auto a = cast<ShapedType>(dot.getA().getType()), b = cast<ShapedType>(dot.getB().getType());
    elementBytes = getScratchElementBytes(a.getElementType());
    aInRegisters = readsMmaOperandAFromRegisters(dot);
    bTransposed = stagesMmaOperandBTransposed(dot);
    int64_t pad = 16 / elementBytes;
    int64_t bRows = bTransposed ? b.getDimSize(1) : b.getDimSize(0);
    aStride = a.getDimSize(1) + pad;
    bStride = (bTransposed ? b.getDimSize(0) : b.getDimSize(1)) + pad;
    bOffset = isa<SharedType>(a) || aInRegisters ? 0 : a.getDimSize(0) * aStride;
    totalBytes = (bOffset + (isa<SharedType>(b) ? 0 : bRows * bStride)) * elementBytes;
  }
};

Value add(OpBuilder &b, Location loc, Value x, int64_t c) {
  if (c == 0)
    return x;
  return arith::AddIOp::create(b, loc, x, createI32(b, loc, c));
}

Value mul(OpBuilder &b, Location loc, Value x, int64_t c) {
  return arith::MulIOp::create(b, loc, x, createI32(b, loc, c));
}

/// Rounds an f32 (or its bits in an i32, as cp.async leaves operands in shared memory) to
/// tf32, to nearest; the result has the operand's type. sm_90 has `cvt.rn.tf32.f32`
/// (ties to even), one instruction (F2FP.TF32); before it, `cvt.rna` (ties away), which
/// ptxas builds from three (an add, a compare against infinity, a select).
Value roundToTF32(OpBuilder &b, Location loc, Value value, bool hopper) {
  bool bits = value.getType().isInteger(32);
  Value rounded = createInlinePtx(b, loc, b.getI32Type(), value,
                                  hopper ? "cvt.rn.tf32.f32 $0, $1;" : "cvt.rna.tf32.f32 $0, $1;",
                                  bits ? "=r,r" : "=r,f", /*sideEffects=*/false)
                      .getResult(0);
  return bits ? rounded : LLVM::BitcastOp::create(b, loc, b.getF32Type(), rounded).getResult();
}

/// Writes a thread's registers of a tile to shared memory (row-major, `stride` elements
/// per row, from `base`; the transpose when `transposed`), as vectors of up to 16 bytes
/// where the layout holds runs along the stored rows. With `swizzledRows` the stored tile
/// (of that many rows) goes in wgmma's 128-byte-swizzled "b" layout instead of padded
/// rows (WgmmaLayout.h); a run never crosses a 16-byte chunk.
void stageTile(OpBuilder &b, Location loc, ValueRange regs, RankedTensorType type,
               Value base, int64_t stride, int64_t elementBytes, const ThreadIndex &thread,
               bool toTF32, bool hopper, bool transposed = false, int64_t swizzledRows = 0) {
  TileLayout layout = *TileLayout::get(type);
  auto coords = getCoordinates(b, loc, layout, thread);
  unsigned rowDim = transposed ? 1 : 0, colDim = 1 - rowDim;
  unsigned run = 1;
  if (layout.getOrder().front() == colDim) {
    unsigned spt = layout.getRoot().getSizePerThread()[layout.getRootDim(colDim)];
    run = std::min<int64_t>({spt, 16 / elementBytes, layout.getRegistersAlong(colDim),
                             type.getDimSize(colDim)});
  }
  Type elementType = type.getElementType();
  for (unsigned i = 0, e = regs.size(); i < e; i += run) {
    Value offset;
    if (swizzledRows) {
      offset = getWgmmaSharedOffset(b, loc, "b", coords[i][rowDim], coords[i][colDim],
                                    swizzledRows, 0, 4, unsigned(elementBytes));
    } else {
      Value index = mul(b, loc, coords[i][rowDim], stride);
      index = arith::AddIOp::create(b, loc, index, coords[i][colDim]);
      offset = mul(b, loc, index, elementBytes);
    }
    Value address = byteOffset(b, loc, base, offset);
    auto value = [&](unsigned j) {
      Value v = regs[i + j];
      return toTF32 ? roundToTF32(b, loc, v, hopper) : v;
    };
    if (run == 1) {
      LLVM::StoreOp::create(b, loc, value(0), address, elementBytes);
      continue;
    }
    Value packed = LLVM::PoisonOp::create(b, loc, VectorType::get({run}, elementType));
    for (unsigned j = 0; j < run; ++j)
      packed = LLVM::InsertElementOp::create(b, loc, packed, value(j), createI32(b, loc, j));
    LLVM::StoreOp::create(b, loc, packed, address, run * elementBytes);
  }
}

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

/// One 32-bit A-operand register of a 16-bit A held in the mma rows layout (MmaLayout.h):
/// elements (row, col) and (row, col + 1) of the thread's registers, `row` and `col`
/// counted in registers. mma.sync and register-A wgmma take the same fragments:
/// {(2p, c), (2p + 1, c), (2p, c + 2), (2p + 1, c + 2)} for 16-row pair p, c = k / 4.
Value packOperandA(OpBuilder &b, Location loc, ValueRange aRegs, const TileLayout &aLayout,
                   Type elem, unsigned row, unsigned col) {
  Value pair = LLVM::PoisonOp::create(b, loc, VectorType::get({2}, elem));
  for (unsigned j = 0; j < 2; ++j)
    pair = LLVM::InsertElementOp::create(b, loc, pair, aRegs[aLayout.getRegister({row, col + j})],
                                         createI32(b, loc, j));
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
}

/// The mma.sync K loop; `acc` holds the accumulator registers (updated in place).
/// `roundA`/`roundB`: tf32 operands still hold full f32 bits and are rounded as loaded.
/// `aRegs`: A's registers when staging.aInRegisters (in the mma rows layout).
void emitMma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
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
  bool aSwizzled = getWgmmaOperand(op.getA()) == kSwizzledOperand;
  // ("b" is the same layout: a ring marked for register-A wgmma, should one land here.)
  bool bSwizzled = getWgmmaOperand(op.getB()) == kSwizzledOperand ||
                   getWgmmaOperand(op.getB()) == "b";
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
  bool bInterleaved = getWgmmaOperand(op.getB()) == kInterleavedOperand;
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

/// A wgmma shared-memory matrix descriptor: start address, leading and stride byte
/// offsets (16-byte units) and the 128-byte swizzle mode.
Value wgmmaDescriptor(OpBuilder &b, Location loc, Value address, int64_t leading, int64_t stride) {
  Type i64 = b.getI64Type();
  Value start = arith::ShRUIOp::create(b, loc, address, createI32(b, loc, 4));
  start = arith::AndIOp::create(b, loc, start, createI32(b, loc, 0x3FFF));
  start = arith::ExtUIOp::create(b, loc, i64, start);
  uint64_t fixed = (uint64_t((leading >> 4) & 0x3FFF) << 16) |
                   (uint64_t((stride >> 4) & 0x3FFF) << 32) | (uint64_t(1) << 62);
  Value constant = arith::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(int64_t(fixed)));
  return arith::OrIOp::create(b, loc, start, constant);
}

/// `wgmma.wait_group pending`: takes and returns the accumulator registers `regs` (in
/// chunks the asm can take), so nothing reads them before the wait.
void waitForWgmma(OpBuilder &b, Location loc, unsigned pending, SmallVectorImpl<Value> &regs) {
  constexpr unsigned kChunk = 128;
  std::string text = "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";";
  for (unsigned start = 0, e = regs.size(); start < e; start += kChunk) {
    unsigned count = std::min(kChunk, e - start);
    std::string constraints;
    for (unsigned i = 0; i < count; ++i)
      constraints += std::string(i ? ",=f" : "=f");
    for (unsigned i = 0; i < count; ++i)
      constraints += "," + std::to_string(i);
    auto type = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(count, b.getF32Type()));
    ValueRange chunk = ValueRange(regs).slice(start, count);
    Value d = createInlinePtx(b, loc, type, chunk, text, constraints).getResult(0);
    for (unsigned i = 0; i < count; ++i)
      regs[start + i] = LLVM::ExtractValueOp::create(b, loc, d, i);
  }
}

/// One `wgmma.mma_async` as inline PTX on `count` f32 accumulator registers: outputs
/// $0..count-1, then the instruction's inputs (`input(i)` names input i), the last of
/// them scale-d (set into a predicate), then the accumulators again, tied to the outputs.
/// `overwrite()` is the same instruction without the tied accumulators, for scale-d = 0
/// (D = A B): a zero accumulator then costs no moves into the output registers, which
/// ptxas would otherwise fence with a warpgroup.arrive (C7519).
struct WgmmaInstruction {
  unsigned count;
  std::string text, constraints;
  Type accType;
  bool tied = true;

  WgmmaInstruction overwrite() const {
    WgmmaInstruction copy = *this;
    copy.tied = false;
    copy.constraints = constraints.substr(0, untiedLength);
    return copy;
  }

  WgmmaInstruction(MLIRContext *ctx, unsigned count) : count(count) {
    accType = LLVM::LLVMStructType::getLiteral(ctx,
                                               SmallVector<Type>(count, Float32Type::get(ctx)));
  }
  std::string input(unsigned i) const { return "$" + std::to_string(count + i); }

  /// `opcode {accumulators}, operands, p, immediates;` with `numInputs` inputs of
  /// `inputConstraints`, the last one scale-d.
  void define(StringRef opcode, StringRef operands, unsigned numInputs,
              StringRef inputConstraints, StringRef immediates) {
    std::string outputs, ties, regList;
    for (unsigned i = 0; i < count; ++i) {
      outputs += std::string(i ? ",=f" : "=f");
      ties += "," + std::to_string(i);
      regList += (i ? ", $" : "$") + std::to_string(i);
    }
    text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + input(numInputs - 1) + ", 0;\n" +
           opcode.str() + " {" + regList + "}, " + operands.str() + ", p, " + immediates.str() +
           ";\n}";
    constraints = outputs + "," + inputConstraints.str() + ties;
    untiedLength = constraints.size() - ties.size();
  }

  /// Issues it on `inputs` and the accumulator registers `regs` of `acc` (updated).
  void issue(OpBuilder &b, Location loc, SmallVector<Value> inputs, ArrayRef<unsigned> regs,
             SmallVectorImpl<Value> &acc) const {
    if (tied)
      for (unsigned r : regs)
        inputs.push_back(acc[r]);
    Value d = createInlinePtx(b, loc, accType, inputs, text, constraints).getResult(0);
    for (unsigned i = 0; i < count; ++i)
      acc[regs[i]] = LLVM::ExtractValueOp::create(b, loc, d, i);
  }

private:
  size_t untiedLength = 0;
};

/// Orders this warp's register writes before the wgmma that follow (`wgmma.fence`).
void fenceWgmma(OpBuilder &b, Location loc) {
  createInlinePtx(b, loc, Type(), ValueRange(), "wgmma.fence.sync.aligned;", "");
}

/// The end of a dot's wgmma: one commit group and, for a synchronous dot, a wait for it
/// (an `async` dot leaves that to tessel.dot_wait).
void commitWgmma(OpBuilder &b, Location loc, DotOp op, SmallVectorImpl<Value> &acc) {
  createInlinePtx(b, loc, Type(), ValueRange(), "wgmma.commit_group.sync.aligned;", "");
  if (!op.getAsync())
    waitForWgmma(b, loc, 0, acc);
}

/// The accumulator registers of 64-row instruction `inst` of an N-column f16/bf16 wgmma
/// (WgmmaLayout.h): d[4c + 2h + j] is repetition 2 inst + h, column register 2c + j.
SmallVector<unsigned> getWgmmaInstructionRegisters(const TileLayout &layout, int64_t inst,
                                                   int64_t n) {
  SmallVector<unsigned> regs(n / 2);
  for (unsigned c = 0; c < n / 8; ++c)
    for (unsigned h = 0; h < 2; ++h)
      for (unsigned j = 0; j < 2; ++j)
        regs[4 * c + 2 * h + j] = layout.getRegister({unsigned(2 * inst + h), 2 * c + j});
  return regs;
}

/// Register-A wgmma (WgmmaLayout.h): per warpgroup and 64-row instruction, K / 16
/// `wgmma.mma_async` whose A fragments are the thread's registers of A (the mma rows
/// layout) and whose B is a descriptor into a 128-byte-swizzled buffer: K-major (B^T
/// stored as N rows of K, blocks of 64 columns N * 128 bytes apart) or N-major (a "b"
/// buffer of K rows).
void emitRegisterWgmma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
                       ValueRange aRegs, Value bBase, bool bKMajor, SmallVectorImpl<Value> &acc) {
  auto aType = cast<RankedTensorType>(op.getA().getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  int64_t n = cast<ShapedType>(op.getB().getType()).getDimSize(1);
  unsigned warps = layout.getRoot().getWarpsPerCTA()[0];
  int64_t repeats = m / (8 * warps);
  Type elem = aType.getElementType();
  int64_t bytes = elem.getIntOrFloatBitWidth() / 8, perRow = getSwizzleBlockColumns(elem);
  TileLayout aLayout = *TileLayout::get(aType);
  std::string name = elem.isBF16() ? "bf16" : "f16";

  WgmmaInstruction mma(b.getContext(), unsigned(n / 2));
  mma.define("wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + name + "." +
                 name,
             "{" + mma.input(0) + ", " + mma.input(1) + ", " + mma.input(2) + ", " +
                 mma.input(3) + "}, " + mma.input(4),
             6, "r,r,r,r,l,r", bKMajor ? "1, 1, 0" : "1, 1, 1");
  Value bAddress = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), bBase);
  Value one = createI32(b, loc, 1);
  // A zero accumulator (S = Q K^T) is not read: the first K step overwrites it.
  Value accIn = op.getAcc();
  if (auto splat = accIn.getDefiningOp<SplatOp>())
    accIn = splat.getSrc();
  bool zeroAcc = matchPattern(accIn, m_AnyZeroFloat());
  WgmmaInstruction first = zeroAcc ? mma.overwrite() : mma;
  // Every fragment is packed before the fence: a register written between wgmma makes
  // ptxas insert a warpgroup.arrive before the next one (C7519).
  SmallVector<SmallVector<Value>> inputs;
  for (int64_t inst = 0; inst < repeats / 2; ++inst) {
    for (int64_t kk = 0; kk < k; kk += 16) {
      auto row = [&](int64_t r) { return unsigned(2 * inst + r); };
      unsigned col = unsigned(kk / 4);
      SmallVector<Value> &in = inputs.emplace_back();
      in = {packOperandA(b, loc, aRegs, aLayout, elem, row(0), col),
            packOperandA(b, loc, aRegs, aLayout, elem, row(1), col),
            packOperandA(b, loc, aRegs, aLayout, elem, row(0), col + 2),
            packOperandA(b, loc, aRegs, aLayout, elem, row(1), col + 2)};
      if (bKMajor)
        in.push_back(wgmmaDescriptor(
            b, loc, add(b, loc, bAddress, kk / perRow * n * 128 + kk % perRow * bytes), 16, 1024));
      else
        in.push_back(wgmmaDescriptor(b, loc, add(b, loc, bAddress, kk / 8 * 1024), k * 128, 1024));
      in.push_back(zeroAcc && kk == 0 ? createI32(b, loc, 0) : one);
    }
  }
  fenceWgmma(b, loc);
  for (int64_t inst = 0; inst < repeats / 2; ++inst) {
    SmallVector<unsigned> regs = getWgmmaInstructionRegisters(layout, inst, n);
    for (int64_t step = 0; step < k / 16; ++step)
      (step == 0 ? first : mma).issue(b, loc, inputs[inst * (k / 16) + step], regs, acc);
  }
  commitWgmma(b, loc, op, acc);
}

/// The wgmma K loop (WgmmaLayout.h): per warpgroup and 64-row instruction, K / 16
/// `wgmma.mma_async` on descriptors into the swizzled buffers, then one commit and, for
/// a synchronous dot, a wait for all (an `async` dot leaves that to tessel.dot_wait).
void emitWgmma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout, Value aBase,
               Value bBase, const ThreadIndex &thread, SmallVectorImpl<Value> &acc) {
  auto aType = cast<SharedType>(op.getA().getType());
  auto bType = cast<SharedType>(op.getB().getType());
  int64_t m = aType.getShape()[0], k = aType.getShape()[1], n = bType.getShape()[1];
  unsigned warps = layout.getRoot().getWarpsPerCTA()[0];
  int64_t repeats = m / (8 * warps);
  std::string elem = aType.getElementType().isBF16() ? "bf16" : "f16";
  Type i32 = b.getI32Type();
  Value warpGroup = arith::ShRUIOp::create(b, loc, thread.warp, createI32(b, loc, 2));
  Value aAddress = LLVM::PtrToIntOp::create(b, loc, i32, aBase);
  aAddress = arith::AddIOp::create(
      b, loc, aAddress, arith::MulIOp::create(b, loc, warpGroup, createI32(b, loc, 32 * repeats * 128)));
  Value bAddress = LLVM::PtrToIntOp::create(b, loc, i32, bBase);
  Value one = createI32(b, loc, 1);

  unsigned count = unsigned(n / 2); // accumulator registers per instruction
  WgmmaInstruction mma(b.getContext(), count);
  mma.define("wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + elem + "." +
                 elem,
             mma.input(0) + ", " + mma.input(1), 3, "l,l,r", "1, 1, 0, 1");

  fenceWgmma(b, loc);
  for (int64_t inst = 0; inst < repeats / 2; ++inst) {
    SmallVector<unsigned> regs = getWgmmaInstructionRegisters(layout, inst, n);
    for (int64_t kk = 0; kk < k; kk += 16) {
      Value aStart = arith::AddIOp::create(b, loc, aAddress,
                                           createI32(b, loc, inst * 64 * 128 + kk * 2));
      Value bStart = arith::AddIOp::create(b, loc, bAddress, createI32(b, loc, (kk / 8) * 1024));
      mma.issue(b, loc,
                {wgmmaDescriptor(b, loc, aStart, 16, 1024),
                 wgmmaDescriptor(b, loc, bStart, k * 128, 1024), one},
                regs, acc);
    }
  }
  commitWgmma(b, loc, op, acc);
}

/// tf32 on wgmma, transposed (WgmmaLayout.h): C^T = B^T A^T. Per K step of 8 and pair of
/// column repetitions, one `wgmma.mma_async m64nMk8` whose A (B^T) each warp loads into
/// registers from the swizzled B buffer, rounded to tf32, and whose B is the swizzled A
/// buffer (K-major, 128-byte rows) through a descriptor. A synchronous dot commits once
/// and waits; an async one commits per K step (see below).
void emitWgmmaTf32(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout, Value aBase,
                   Value bBase, const ThreadIndex &thread, SmallVectorImpl<Value> &acc) {
  auto aType = cast<SharedType>(op.getA().getType());
  auto bType = cast<SharedType>(op.getB().getType());
  int64_t m = aType.getShape()[0], k = aType.getShape()[1], n = bType.getShape()[1];
  unsigned warps = layout.getRoot().getWarpsPerCTA()[1];
  int64_t repeats = n / (8 * warps); // column repetitions, two per instruction
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) { return createI32(b, loc, v); };
  auto shr = [&](Value v, unsigned s) { return arith::ShRUIOp::create(b, loc, v, c(s)).getResult(); };
  auto shl = [&](Value v, unsigned s) { return arith::ShLIOp::create(b, loc, v, c(s)).getResult(); };
  auto andi = [&](Value v, int64_t x) { return arith::AndIOp::create(b, loc, v, c(x)).getResult(); };
  auto addv = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };

  // The lane's column n = 8 warp + lane / 4 and rows k % 8 = lane % 4 (+ 4): in the
  // swizzled B buffer, block n / 32 (K rows of 128 bytes each), row k, chunk
  // ((n % 32) / 4) ^ (k % 8), word n % 4. A repetition moves n by 8W, a multiple of 32:
  // whole blocks.
  Value col = addv(mul(b, loc, thread.warp, 8), shr(thread.lane, 2));
  Value row = andi(thread.lane, 3);
  Value colPart = addv(mul(b, loc, shr(col, 5), k * 128), shl(andi(col, 3), 2));
  Value laneOffset[2];
  for (int64_t half = 0; half < 2; ++half) {
    Value k8 = add(b, loc, row, 4 * half);
    Value chunk = arith::XOrIOp::create(b, loc, andi(shr(col, 2), 7), k8);
    laneOffset[half] = addv(addv(colPart, shl(k8, 7)), shl(chunk, 4));
  }
  auto loadB = [&](int64_t rep, int64_t half, int64_t kk) {
    int64_t offset = rep * (8 * warps / 32) * k * 128 + kk * 128;
    Value address = byteOffset(b, loc, bBase, add(b, loc, laneOffset[half], offset));
    return roundToTF32(b, loc, LLVM::LoadOp::create(b, loc, i32, address, 4), /*hopper=*/true);
  };
  // wgmma reads its register operand while in flight: overwriting it before a wait that
  // covers the instruction is undefined (and measurably wrong once the next iteration's
  // loads come early). An async dot (its last group still running when the next
  // iteration's dot starts) therefore commits one group per K step and, before loading
  // a step's fragments, waits for the previous dot's group of that step
  // (kTf32WgmmaGroups - 1 younger groups may stay in flight; tessel.dot_wait scales).
  bool async = op.getAsync();
  SmallVector<SmallVector<Value>> aFrags(repeats / 2 * (k / 8)); // [instruction][k step]
  auto loadStep = [&](int64_t kk) {
    for (int64_t inst = 0; inst < repeats / 2; ++inst)
      aFrags[inst * (k / 8) + kk / 8] = {loadB(2 * inst, 0, kk), loadB(2 * inst + 1, 0, kk),
                                         loadB(2 * inst, 1, kk), loadB(2 * inst + 1, 1, kk)};
  };
  if (!async)
    for (int64_t kk = 0; kk < k; kk += 8)
      loadStep(kk);

  unsigned count = unsigned(m / 2); // accumulator registers per instruction
  WgmmaInstruction mma(b.getContext(), count);
  mma.define("wgmma.mma_async.sync.aligned.m64n" + std::to_string(m) + "k8.f32.tf32.tf32",
             "{" + mma.input(0) + ", " + mma.input(1) + ", " + mma.input(2) + ", " +
                 mma.input(3) + "}, " + mma.input(4),
             6, "r,r,r,r,l,r", "1, 1");
  Value aAddress = LLVM::PtrToIntOp::create(b, loc, i32, aBase);
  Value one = c(1);

  // D^T's rows 16 (w % 4) + lane / 4 + 8h are repetition 2 inst + h; its columns
  // 8c + 2 (lane % 4) + j are the accumulator's rows.
  SmallVector<SmallVector<unsigned>> regs(repeats / 2, SmallVector<unsigned>(count));
  for (int64_t inst = 0; inst < repeats / 2; ++inst)
    for (unsigned col8 = 0; col8 < m / 8; ++col8)
      for (unsigned h = 0; h < 2; ++h)
        for (unsigned j = 0; j < 2; ++j)
          regs[inst][4 * col8 + 2 * h + j] =
              layout.getRegister({2 * col8 + j, unsigned(2 * inst + h)});
  auto issueStep = [&](int64_t kk) {
    Value start = arith::AddIOp::create(b, loc, aAddress, c(kk * 4));
    for (int64_t inst = 0; inst < repeats / 2; ++inst) {
      SmallVector<Value> inputs(aFrags[inst * (k / 8) + kk / 8]);
      inputs.push_back(wgmmaDescriptor(b, loc, start, 16, 1024));
      inputs.push_back(one);
      mma.issue(b, loc, inputs, regs[inst], acc);
    }
  };
  if (!async) {
    fenceWgmma(b, loc);
    for (int64_t kk = 0; kk < k; kk += 8)
      issueStep(kk);
    commitWgmma(b, loc, op, acc);
    return;
  }
  for (int64_t kk = 0; kk < k; kk += 8) {
    waitForWgmma(b, loc, kTf32WgmmaGroups - 1, acc);
    loadStep(kk);
    fenceWgmma(b, loc);
    issueStep(kk);
    commitWgmma(b, loc, op, acc); // async: no wait
  }
}

/// The FMA loop for any accumulator layout; exact f32 products.
void emitFma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
             const Staging &staging, Value aBase, Value bBase, const ThreadIndex &thread,
             SmallVectorImpl<Value> &acc) {
  Type elem = getElementTypeOrSelf(op.getA().getType());
  Type f32 = b.getF32Type();
  int64_t k = cast<ShapedType>(op.getA().getType()).getDimSize(1);
  int64_t bytes = staging.elementBytes;
  auto coords = getCoordinates(b, loc, layout, thread);
  unsigned rows = layout.getRegistersAlong(0), cols = layout.getRegistersAlong(1);
  SmallVector<Value> rowOffset, colOffset;
  for (unsigned i = 0; i < rows; ++i)
    rowOffset.push_back(mul(b, loc, coords[layout.getRegister({i, 0})][0],
                            staging.aStride * bytes));
  for (unsigned j = 0; j < cols; ++j)
    colOffset.push_back(mul(b, loc, coords[layout.getRegister({0, j})][1], bytes));
  auto load = [&](Value base, Value offset) -> Value {
    Value v = LLVM::LoadOp::create(b, loc, elem, byteOffset(b, loc, base, offset), bytes);
    if (!elem.isF32())
      v = LLVM::FPExtOp::create(b, loc, f32, v);
    return v;
  };
  for (int64_t kk = 0; kk < k; ++kk) {
    SmallVector<Value> aValues, bValues;
    for (unsigned i = 0; i < rows; ++i)
      aValues.push_back(load(aBase, add(b, loc, rowOffset[i], kk * bytes)));
    for (unsigned j = 0; j < cols; ++j)
      bValues.push_back(load(bBase, add(b, loc, colOffset[j], kk * staging.bStride * bytes)));
    for (unsigned i = 0; i < rows; ++i)
      for (unsigned j = 0; j < cols; ++j) {
        unsigned r = layout.getRegister({i, j});
        acc[r] = LLVM::FMAOp::create(b, loc, aValues[i], bValues[j], acc[r]);
      }
  }
}

struct DotLowering : OpConversionPattern<DotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(DotOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<TileLayout> layout = TileLayout::get(op.getType());
    bool aShared = isa<SharedType>(op.getA().getType());
    bool bShared = isa<SharedType>(op.getB().getType());
    if (failed(layout) ||
        (!aShared && failed(TileLayout::get(cast<RankedTensorType>(op.getA().getType())))) ||
        (!bShared && failed(TileLayout::get(cast<RankedTensorType>(op.getB().getType())))))
      return rewriter.notifyMatchFailure(op, "tiles have no layout");
    Staging staging(op);
    ThreadIndex thread = getThreadIndex(rewriter, loc);
    Value scratch = getSharedMemoryBase(rewriter, loc);
    bool useMma = getMmaK(op) != 0 && isMmaAccumulatorLayout(*layout);
    bool tf32 = useMma && getElementTypeOrSelf(op.getA().getType()).isF32();
    Target target = Target::of(op);
    unsigned numWarps = layout->getRoot().getNumWarps();
    bool hopper = target.hasRoundToNearestTf32();
    bool tf32Wgmma = canUseTf32Wgmma(op, numWarps, target.arch()) &&
                     layout->getRoot() == getTf32WgmmaAccumulatorLayout(op.getContext(), numWarps);
    if (getWgmmaOperand(op.getA()) == kInterleavedOperand ||
        (getWgmmaOperand(op.getB()) == kInterleavedOperand && !(useMma && tf32)))
      return op.emitOpError("reads an interleaved buffer but is not a tf32 dot on mma.sync "
                            "reading it as B");
    for (Value operand : {op.getA(), op.getB()}) {
      if (tf32Wgmma || getWgmmaOperand(operand) != kSwizzledOperand)
        continue;
      auto type = cast<SharedType>(operand.getType());
      int64_t rowBytes = type.getShape()[1] * (type.getElementType().getIntOrFloatBitWidth() / 8);
      if (!useMma || rowBytes % 128 != 0 || (operand == op.getA() && rowBytes != 128))
        return op.emitOpError("reads a swizzled buffer but does not run on mma.sync with "
                              "128-byte rows of A");
    }
    // Register-A wgmma (WgmmaLayout.h): B from its "b"/"swizzled" ring, or staged
    // swizzled, K-major where K fills 128-byte rows and B's registers run along K (or N
    // does not fill them).
    bool registerWgmma = runsOnRegisterWgmma(op);
    auto bType = cast<ShapedType>(op.getB().getType());
    int64_t perRow = getSwizzleBlockColumns(bType.getElementType());
    // A transposed view of a ring slot (SoftwarePipeline.cpp) is read K-major, and only so.
    bool bSharedTransposed = bShared && op.getB().getDefiningOp<TransOp>();
    if (bSharedTransposed && !registerWgmma)
      return op.emitOpError("reads a transposed shared tile but does not run on register-A "
                            "wgmma (sm_90a, A in registers, K in 128-byte rows)");
    bool bKMajor = bSharedTransposed ||
                   (registerWgmma && !bShared && bType.getDimSize(0) % perRow == 0 &&
                    (bType.getDimSize(1) % perRow != 0 || staging.bTransposed));
    // Register operands go to the scratch (rounded to tf32 there); shared ones are read
    // in place, and -tessel-insert-barriers has ordered their copies.
    Value aBase = scratch, bBase;
    bool aStaged = !aShared && !staging.aInRegisters;
    if (aShared)
      aBase = adaptor.getA().front();
    else if (aStaged)
      stageTile(rewriter, loc, adaptor.getA(), cast<RankedTensorType>(op.getA().getType()),
                aBase, staging.aStride, staging.elementBytes, thread, tf32, hopper);
    if (bShared) {
      bBase = adaptor.getB().front();
    } else {
      bBase = byteOffset(rewriter, loc, scratch,
                          createI32(rewriter, loc, staging.bOffset * staging.elementBytes));
      if (registerWgmma)
        stageTile(rewriter, loc, adaptor.getB(), cast<RankedTensorType>(op.getB().getType()),
                  bBase, 0, staging.elementBytes, thread, false, hopper, bKMajor,
                  bKMajor ? bType.getDimSize(1) : bType.getDimSize(0));
      else
        stageTile(rewriter, loc, adaptor.getB(), cast<RankedTensorType>(op.getB().getType()),
                  bBase, staging.bStride, staging.elementBytes, thread, tf32, hopper,
                  staging.bTransposed);
    }
    bool staged = aStaged || !bShared;
    // wgmma reads the staged B through the async proxy.
    if (registerWgmma && staged)
      createAsyncProxyFence(rewriter, loc);
    if (staged)
      createBarrier(rewriter, loc);
    SmallVector<Value> acc(adaptor.getAcc().begin(), adaptor.getAcc().end());
    if (registerWgmma)
      emitRegisterWgmma(rewriter, loc, op, *layout, adaptor.getA(), bBase, bKMajor, acc);
    else if (aShared && bShared && getWgmmaOperand(op.getA()) == "a" &&
             getWgmmaOperand(op.getB()) == "b")
      emitWgmma(rewriter, loc, op, *layout, aBase, bBase, thread, acc);
    else if (tf32Wgmma)
      emitWgmmaTf32(rewriter, loc, op, *layout, aBase, bBase, thread, acc);
    else if (useMma)
      emitMma(rewriter, loc, op, *layout, staging, aBase, bBase, adaptor.getA(), thread,
              tf32 && aShared, tf32 && bShared, hopper, acc);
    else
      emitFma(rewriter, loc, op, *layout, staging, aBase, bBase, thread, acc);
    if (staged)
      createBarrier(rewriter, loc);
    rewriter.replaceOpWithMultiple(op, {acc});
    return success();
  }
};
/// tessel.dot_wait: wgmma.wait_group on sm_90a (the only target with asynchronous dots);
/// elsewhere the registers pass through unchanged.
struct DotWaitLowering : OpConversionPattern<DotWaitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(DotWaitOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> regs(adaptor.getSrc().begin(), adaptor.getSrc().end());
    if (Target::of(op).hasWgmma()) {
      // An async tf32 dot commits one group per K step (emitWgmmaTf32).
      unsigned pending = op.getPending();
      FailureOr<TileLayout> layout = TileLayout::get(op.getSrc().getType());
      if (succeeded(layout) &&
          layout->getRoot() == getTf32WgmmaAccumulatorLayout(op.getContext(),
                                                               layout->getRoot().getNumWarps()))
        pending *= kTf32WgmmaGroups;
      waitForWgmma(rewriter, op.getLoc(), pending, regs);
    }
    rewriter.replaceOpWithMultiple(op, {regs});
    return success();
  }
};
} // namespace

int64_t mlir::tessel::getDotScratchBytes(DotOp dot) { return Staging(dot).totalBytes; }

void mlir::tessel::populateDotToLLVMPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<DotLowering, DotWaitLowering>(converter, patterns.getContext());
}
