//===- WgmmaLayout.cpp - when a dot runs on wgmma, and its shared layouts --===//
#include "lowering/WgmmaLayout.h"
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tessel;

bool mlir::tessel::canUseWgmma(Type elementType, int64_t m, int64_t n, int64_t k,
                               unsigned numWarps, StringRef arch) {
  if (arch != "sm_90a" || numWarps == 0 || numWarps % 4 != 0)
    return false;
  if (!elementType.isBF16() && !elementType.isF16())
    return false;
  return k == 64 && (n == 64 || n == 128 || n == 256) && m % (16 * numWarps) == 0;
}

bool mlir::tessel::canUseWgmma(DotOp dot, unsigned numWarps, StringRef arch) {
  auto a = dyn_cast<SharedType>(dot.getA().getType());
  auto b = dyn_cast<SharedType>(dot.getB().getType());
  if (!a || !b)
    return false;
  return canUseWgmma(a.getElementType(), a.getShape()[0], b.getShape()[1], a.getShape()[1],
                     numWarps, arch);
}

BlockedEncodingAttr mlir::tessel::getWgmmaAccumulatorLayout(MLIRContext *ctx,
                                                            unsigned numWarps) {
  return BlockedEncodingAttr::get(ctx, {1, 2}, {8, 4}, {numWarps, 1}, {1, 0});
}

LocalAllocOp mlir::tessel::getSharedAlloc(Value shared) {
  while (auto index = shared.getDefiningOp<LocalIndexOp>())
    shared = index.getSrc();
  return shared.getDefiningOp<LocalAllocOp>();
}

int64_t mlir::tessel::getSharedBytes(SharedType type, bool wgmmaLayout) {
  if (!wgmmaLayout)
    return type.getSizeInBytes();
  int64_t elements = 1;
  for (int64_t dim : type.getShape())
    elements *= dim;
  return elements * (type.getElementType().getIntOrFloatBitWidth() / 8);
}

StringRef mlir::tessel::getWgmmaOperand(Value shared) {
  LocalAllocOp alloc = getSharedAlloc(shared);
  if (!alloc)
    return "";
  auto attr = alloc->getAttrOfType<StringAttr>(kWgmmaOperandAttr);
  return attr ? attr.getValue() : "";
}

Value mlir::tessel::getWgmmaSharedOffset(OpBuilder &b, Location loc, StringRef operand,
                                         Value row, Value col, int64_t rows, int64_t cols,
                                         unsigned numWarps, unsigned elementBytes) {
  auto c = [&](int64_t v) { return createI32(b, loc, v); };
  auto shr = [&](Value v, unsigned s) { return arith::ShRUIOp::create(b, loc, v, c(s)).getResult(); };
  auto andi = [&](Value v, int64_t m) { return arith::AndIOp::create(b, loc, v, c(m)).getResult(); };
  auto mul = [&](Value v, int64_t m) { return arith::MulIOp::create(b, loc, v, c(m)).getResult(); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
  unsigned perChunk = 16 / elementBytes; // elements per 16-byte chunk
  unsigned perRow = 128 / elementBytes;  // elements per 128-byte swizzle row
  if (operand == "a") {
    // Shared row of tile row t (see the header), then the swizzled chunk.
    int64_t w8 = 8 * numWarps, repeats = rows / w8;
    Value r = arith::DivUIOp::create(b, loc, row, c(w8));
    Value w = andi(shr(row, 3), numWarps - 1);
    Value g = shr(w, 2);
    Value s = mul(g, 32 * repeats);
    s = add(s, mul(shr(r, 1), 64));
    s = add(s, mul(andi(w, 3), 16));
    s = add(s, mul(andi(r, 1), 8));
    s = add(s, andi(row, 7));
    Value chunk = arith::XOrIOp::create(b, loc, arith::DivUIOp::create(b, loc, col, c(perChunk)),
                                        andi(s, 7));
    Value offset = add(mul(s, 128), mul(chunk, 16));
    return add(offset, mul(andi(col, perChunk - 1), elementBytes));
  }
  // B: atom (k / 8, n / perRow); inside, row k % 8 of 128 bytes, chunk swizzled by it.
  (void)cols;
  Value kGroup = shr(row, 3), k8 = andi(row, 7);
  Value block = arith::DivUIOp::create(b, loc, col, c(perRow));
  Value inRow = andi(col, perRow - 1);
  Value chunk = arith::XOrIOp::create(b, loc, arith::DivUIOp::create(b, loc, inRow, c(perChunk)), k8);
  Value offset = add(mul(block, rows * 128), mul(kGroup, 1024));
  offset = add(offset, mul(k8, 128));
  offset = add(offset, mul(chunk, 16));
  return add(offset, mul(andi(col, perChunk - 1), elementBytes));
}
