//===- WgmmaLayout.cpp - when a dot runs on wgmma, and its shared layouts --===//
#include "dialect/Target.h"
#include "lowering/WgmmaLayout.h"
#include "lowering/MmaLayout.h"
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tessel;

bool mlir::tessel::canUseWgmma(Type elementType, int64_t m, int64_t n, int64_t k,
                               unsigned numWarps, StringRef arch) {
  if (!Target(arch).hasWgmma() || numWarps == 0 || numWarps % 4 != 0)
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
  return canUseWgmmaFromDescriptors(a.getElementType(), a.getShape()[0], b.getShape()[1],
                                    a.getShape()[1], bool(dot.getB().getDefiningOp<TransOp>()),
                                    numWarps, arch);
}

bool mlir::tessel::canUseWgmmaFromDescriptors(Type elementType, int64_t m, int64_t n,
                                              int64_t k, bool bKMajor, unsigned numWarps,
                                              StringRef arch) {
  // A may be several 128-byte blocks wide (an A loaded once before its loop,
  // -tessel-invariant-operands-to-shared; the pipeliner's rings of A are one block wide)
  // and B a transposed view of a ring slot, read K-major (any N of 8 up to 256).
  int64_t perRow = getSwizzleBlockColumns(elementType);
  if (k % perRow != 0 || !canUseWgmma(elementType, m, 64, perRow, numWarps, arch))
    return false;
  if (bKMajor)
    return n % 8 == 0 && n <= 256;
  return n == 64 || n == 128 || n == 256;
}

bool mlir::tessel::canUseRegisterWgmma(DotOp dot, unsigned numWarps, StringRef arch) {
  if (!Target(arch).hasWgmma() || numWarps == 0 || numWarps % 4 != 0)
    return false;
  auto a = dyn_cast<RankedTensorType>(dot.getA().getType());
  auto b = cast<ShapedType>(dot.getB().getType());
  if (!a || (!a.getElementType().isBF16() && !a.getElementType().isF16()))
    return false;
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
  if (m % (16 * numWarps) != 0 || k % 16 != 0 || n % 8 != 0 || n > 256)
    return false;
  int64_t perRow = getSwizzleBlockColumns(a.getElementType());
  if (isa<RankedTensorType>(b))
    return k % perRow == 0 || n % perRow == 0;
  // A ring's tile read as is (N-major), or transposed (K-major: trans of a slot).
  bool kMajor = bool(dot.getB().getDefiningOp<TransOp>());
  SharedLayout layout = getSharedLayout(dot.getB());
  return getSharedAlloc(dot.getB()) && (kMajor ? k : n) % perRow == 0 &&
         (layout == SharedLayout::Padded || layout == SharedLayout::WgmmaB ||
          (layout == SharedLayout::Swizzled && !kMajor));
}

bool mlir::tessel::readsLoopInvariantWgmmaA(DotOp dot) {
  Value a = dot.getA();
  return getSharedLayout(a) == SharedLayout::WgmmaA &&
         getSharedLayout(dot.getB()) == SharedLayout::WgmmaB && !a.getDefiningOp<TransOp>() &&
         a.getParentBlock() != dot->getBlock();
}

bool mlir::tessel::runsOnRegisterWgmma(DotOp dot) {
  StringRef arch = Target::of(dot).arch();
  FailureOr<TileLayout> layout = TileLayout::get(dot.getType());
  if (arch.empty() || failed(layout) || !readsMmaOperandAFromRegisters(dot))
    return false;
  unsigned numWarps = layout->getRoot().getNumWarps();
  SharedLayout bLayout = getSharedLayout(dot.getB());
  return canUseRegisterWgmma(dot, numWarps, arch) &&
         layout->getRoot() == getWgmmaAccumulatorLayout(dot.getContext(), numWarps) &&
         (!isa<SharedType>(dot.getB().getType()) || bLayout == SharedLayout::WgmmaB ||
          bLayout == SharedLayout::Swizzled);
}

BlockedEncodingAttr mlir::tessel::getWgmmaAccumulatorLayout(MLIRContext *ctx,
                                                            unsigned numWarps) {
  return BlockedEncodingAttr::get(ctx, {1, 2}, {8, 4}, {numWarps, 1}, {1, 0});
}

bool mlir::tessel::canUseTf32Wgmma(DotOp dot, int64_t m, int64_t n, int64_t k,
                                   unsigned numWarps, StringRef arch) {
  if (!Target(arch).hasWgmma() || numWarps == 0 || numWarps % 4 != 0)
    return false;
  if (!getElementTypeOrSelf(dot.getA().getType()).isF32() || dot.getInputPrecision() != "tf32")
    return false;
  return k == 32 && n % (16 * numWarps) == 0 && m % 8 == 0 && m >= 8 && m <= 256;
}

bool mlir::tessel::canUseTf32Wgmma(DotOp dot, unsigned numWarps, StringRef arch) {
  auto a = dyn_cast<SharedType>(dot.getA().getType());
  auto b = dyn_cast<SharedType>(dot.getB().getType());
  if (!a || !b || a.getLayout() != SharedLayout::Swizzled ||
      b.getLayout() != SharedLayout::Swizzled)
    return false;
  return canUseTf32Wgmma(dot, a.getShape()[0], b.getShape()[1], a.getShape()[1], numWarps,
                         arch);
}

BlockedEncodingAttr mlir::tessel::getTf32WgmmaAccumulatorLayout(MLIRContext *ctx,
                                                               unsigned numWarps) {
  return BlockedEncodingAttr::get(ctx, {2, 1}, {4, 8}, {1, numWarps}, {0, 1});
}

LocalAllocOp mlir::tessel::getSharedAlloc(Value shared) {
  if (auto trans = shared.getDefiningOp<TransOp>())
    shared = trans.getSrc();
  while (auto index = shared.getDefiningOp<LocalIndexOp>())
    shared = index.getSrc();
  return shared.getDefiningOp<LocalAllocOp>();
}

void mlir::tessel::setSharedLayout(LocalAllocOp alloc, SharedLayout layout) {
  SmallVector<Value> worklist{alloc.getResult()};
  while (!worklist.empty()) {
    Value buffer = worklist.pop_back_val();
    buffer.setType(cast<SharedType>(buffer.getType()).withLayout(layout));
    for (Operation *user : buffer.getUsers())
      if (isa<LocalIndexOp, TransOp>(user))
        worklist.push_back(user->getResult(0));
  }
}

/// Shared row of A's tile row t (WgmmaLayout.h); one formula for constants and values.
template <typename Int, typename Ops>
static Int sharedRowOfA(Int t, int64_t rows, unsigned numWarps, Ops ops) {
  int64_t w8 = 8 * numWarps, repeats = rows / w8;
  Int r = ops.div(t, w8);
  Int w = ops.andi(ops.shr(t, 3), numWarps - 1);
  Int g = ops.shr(w, 2);
  Int s = ops.mul(g, 32 * repeats);
  s = ops.add(s, ops.mul(ops.shr(r, 1), 64));
  s = ops.add(s, ops.mul(ops.andi(w, 3), 16));
  s = ops.add(s, ops.mul(ops.andi(r, 1), 8));
  return ops.add(s, ops.andi(t, 7));
}

namespace {
struct ConstantOps {
  int64_t div(int64_t x, int64_t c) const { return x / c; }
  int64_t shr(int64_t x, unsigned c) const { return x >> c; }
  int64_t andi(int64_t x, int64_t c) const { return x & c; }
  int64_t mul(int64_t x, int64_t c) const { return x * c; }
  int64_t add(int64_t x, int64_t y) const { return x + y; }
};
struct ValueOps {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) const { return createI32(b, loc, v); }
  Value div(Value x, int64_t v) const { return arith::DivUIOp::create(b, loc, x, c(v)); }
  Value shr(Value x, unsigned v) const { return arith::ShRUIOp::create(b, loc, x, c(v)); }
  Value andi(Value x, int64_t v) const { return arith::AndIOp::create(b, loc, x, c(v)); }
  Value mul(Value x, int64_t v) const { return arith::MulIOp::create(b, loc, x, c(v)); }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
};
} // namespace

int64_t mlir::tessel::getWgmmaBoxOffset(SharedLayout layout, int64_t row, int64_t col,
                                        int64_t rows, unsigned numWarps,
                                        unsigned elementBytes) {
  if (layout == SharedLayout::WgmmaA)
    return sharedRowOfA<int64_t>(row, rows, numWarps, ConstantOps()) * 128;
  // B: 64-column blocks `rows` 128-byte rows apart.
  return col / (128 / elementBytes) * rows * 128;
}

Value mlir::tessel::getWgmmaSharedOffset(OpBuilder &b, Location loc, SharedLayout layout,
                                         Value row, Value col, int64_t rows, int64_t cols,
                                         unsigned numWarps, unsigned elementBytes) {
  auto c = [&](int64_t v) { return createI32(b, loc, v); };
  auto shr = [&](Value v, unsigned s) { return arith::ShRUIOp::create(b, loc, v, c(s)).getResult(); };
  auto andi = [&](Value v, int64_t m) { return arith::AndIOp::create(b, loc, v, c(m)).getResult(); };
  auto mul = [&](Value v, int64_t m) { return arith::MulIOp::create(b, loc, v, c(m)).getResult(); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
  unsigned perChunk = 16 / elementBytes; // elements per 16-byte chunk
  unsigned perRow = 128 / elementBytes;  // elements per 128-byte swizzle row
  if (layout == SharedLayout::WgmmaA) {
    // Shared row of tile row t (see the header), then the swizzled chunk; an A wider than
    // one block has its blocks `rows` 128-byte rows apart.
    Value s = sharedRowOfA<Value>(row, rows, numWarps, ValueOps{b, loc});
    Value block;
    if (cols > perRow) {
      block = arith::DivUIOp::create(b, loc, col, c(perRow));
      col = andi(col, perRow - 1);
    }
    Value chunk = arith::XOrIOp::create(b, loc, arith::DivUIOp::create(b, loc, col, c(perChunk)),
                                        andi(s, 7));
    Value offset = add(mul(s, 128), mul(chunk, 16));
    if (block)
      offset = add(offset, mul(block, rows * 128));
    return add(offset, mul(andi(col, perChunk - 1), elementBytes));
  }
  // B: atom (k / 8, n / perRow); inside, row k % 8 of 128 bytes, chunk swizzled by it.
  if (layout == SharedLayout::Interleaved) // k % 8 -> 2 (k % 4) + (k % 8) / 4
    row = add(add(mul(shr(row, 3), 8), mul(andi(row, 3), 2)), andi(shr(row, 2), 1));
  Value kGroup = shr(row, 3), k8 = andi(row, 7);
  Value block = arith::DivUIOp::create(b, loc, col, c(perRow));
  Value inRow = andi(col, perRow - 1);
  Value chunk = arith::XOrIOp::create(b, loc, arith::DivUIOp::create(b, loc, inRow, c(perChunk)), k8);
  Value offset = add(mul(block, rows * 128), mul(kGroup, 1024));
  offset = add(offset, mul(k8, 128));
  offset = add(offset, mul(chunk, 16));
  return add(offset, mul(andi(col, perChunk - 1), elementBytes));
}
