//===- DotStaging.cpp - tessel.dot's register operands into the scratch ----===//
//
// Register operands go to shared memory before a dot reads them (DotEmitters.h): padded
// rows for ldmatrix and the FMAs, 128-byte-swizzled rows for register-A wgmma.
//
//===----------------------------------------------------------------------===//
#include "lowering/DotEmitters.h"
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

dot::Staging::Staging(DotOp dot) {
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

/// Rounds an f32 (or its bits in an i32, as cp.async leaves operands in shared memory) to
/// tf32, to nearest; the result has the operand's type. sm_90 has `cvt.rn.tf32.f32`
/// (ties to even), one instruction (F2FP.TF32); before it, `cvt.rna` (ties away), which
/// ptxas builds from three (an add, a compare against infinity, a select).
Value dot::roundToTF32(OpBuilder &b, Location loc, Value value, bool hopper) {
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
/// (of that many rows) goes in wgmma's 128-byte-swizzled wgmma_b layout instead of padded
/// rows (WgmmaLayout.h); a run never crosses a 16-byte chunk.
void dot::stageTile(OpBuilder &b, Location loc, ValueRange regs, RankedTensorType type,
                    Value base, int64_t stride, int64_t elementBytes,
                    const ThreadIndex &thread, bool toTF32, bool hopper, bool transposed,
                    int64_t swizzledRows) {
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
      offset = getWgmmaSharedOffset(b, loc, SharedLayout::WgmmaB, coords[i][rowDim],
                                    coords[i][colDim], swizzledRows, 0, 4,
                                    unsigned(elementBytes));
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

/// One 32-bit A-operand register of a 16-bit A held in the mma rows layout (MmaLayout.h):
/// elements (row, col) and (row, col + 1) of the thread's registers, `row` and `col`
/// counted in registers. mma.sync and register-A wgmma take the same fragments:
/// {(2p, c), (2p + 1, c), (2p, c + 2), (2p + 1, c + 2)} for 16-row pair p, c = k / 4.
Value dot::packOperandA(OpBuilder &b, Location loc, ValueRange aRegs,
                        const TileLayout &aLayout, Type elem, unsigned row, unsigned col) {
  Value pair = LLVM::PoisonOp::create(b, loc, VectorType::get({2}, elem));
  for (unsigned j = 0; j < 2; ++j)
    pair = LLVM::InsertElementOp::create(b, loc, pair, aRegs[aLayout.getRegister({row, col + j})],
                                         createI32(b, loc, j));
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
}
