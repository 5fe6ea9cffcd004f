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

BlockedEncodingAttr mlir::tessel::getMmaRowsLayout(MLIRContext *ctx, int64_t m, int64_t n,
                                                   unsigned numWarps) {
  if (numWarps == 0 || m < 16 * int64_t(numWarps) || n < 8)
    return {};
  return BlockedEncodingAttr::get(ctx, {1, 2}, {8, 4}, {numWarps, 1}, {1, 0});
}

/// The dot's result layout when the dot runs on mma.sync, else failure.
static FailureOr<TileLayout> getMmaResultLayout(DotOp dot) {
  if (getMmaK(dot) == 0)
    return failure();
  FailureOr<TileLayout> layout = TileLayout::get(dot.getType());
  if (failed(layout) || !isMmaAccumulatorLayout(*layout))
    return failure();
  return layout;
}

bool mlir::tessel::readsMmaOperandAFromRegisters(DotOp dot) {
  auto a = dyn_cast<RankedTensorType>(dot.getA().getType());
  if (!a || getMmaK(dot) != 16)
    return false;
  FailureOr<TileLayout> result = getMmaResultLayout(dot);
  if (failed(result) || a.getDimSize(1) % 16 != 0)
    return false;
  BlockedEncodingAttr rows = getMmaRowsLayout(dot.getContext(), a.getDimSize(0),
                                              a.getDimSize(1), result->getRoot().getNumWarps());
  return rows && result->getRoot() == rows && a.getEncoding() == rows;
}

bool mlir::tessel::stagesMmaOperandBTransposed(DotOp dot) {
  auto b = dyn_cast<RankedTensorType>(dot.getB().getType());
  if (!b || failed(getMmaResultLayout(dot)))
    return false;
  FailureOr<TileLayout> layout = TileLayout::get(b);
  if (failed(layout) || layout->getRank() != 2 || layout->getOrder().front() != 0)
    return false;
  return layout->getRoot().getSizePerThread()[layout->getRootDim(0)] >= 2 &&
         layout->getRegistersAlong(0) >= 2;
}
