//===- MmaLayout.cpp - choose and recognise mma.sync accumulator layouts --===//
#include "lowering/MmaLayout.h"

using namespace mlir;
using namespace mlir::tessel;

unsigned mlir::tessel::getMmaK(DotOp dot) {
  Type elem = getElementTypeOrSelf(dot.getA().getType());
  if (elem.isF16() || elem.isBF16())
    return 16;
  if (elem.isF32() && dot.getInputPrecision() == "tf32")
    return 8;
  return 0;
}

BlockedEncodingAttr mlir::tessel::getMmaAccumulatorLayout(MLIRContext *ctx, int64_t m,
                                                          int64_t n, unsigned numWarps) {
  if (m < 16 || n < 8)
    return {};
  // Split the warps so each warp's share stays as square as possible.
  unsigned wm = 1, wn = 1;
  while (wm * wn < numWarps) {
    bool canM = m / (2 * wm) >= 16, canN = n / (2 * wn) >= 8;
    if (canM && (!canN || m / wm >= n / wn))
      wm *= 2;
    else if (canN)
      wn *= 2;
    else
      return {};
  }
  return BlockedEncodingAttr::get(ctx, {1, 2}, {8, 4}, {wm, wn}, {1, 0});
}

BlockedEncodingAttr mlir::tessel::getPreferredDotLayout(DotOp dot, unsigned numWarps) {
  if (getMmaK(dot) == 0)
    return {};
  auto type = dot.getType();
  return getMmaAccumulatorLayout(dot.getContext(), type.getDimSize(0), type.getDimSize(1),
                                 numWarps);
}

bool mlir::tessel::isMmaAccumulatorLayout(const TileLayout &layout) {
  if (layout.getRank() != 2 || layout.getRootDim(0) != 0 || layout.getRootDim(1) != 1)
    return false;
  BlockedEncodingAttr root = layout.getRoot();
  if (root.getSizePerThread() != ArrayRef<unsigned>{1, 2} ||
      root.getThreadsPerWarp() != ArrayRef<unsigned>{8, 4} ||
      root.getOrder() != ArrayRef<unsigned>{1, 0})
    return false;
  unsigned wm = root.getWarpsPerCTA()[0], wn = root.getWarpsPerCTA()[1];
  return layout.getDimSize(0) >= 16 * wm && layout.getDimSize(1) >= 8 * wn;
}
