//===- Layout.cpp - index arithmetic of tile layouts ----------------------===//
#include "dialect/Layout.h"

using namespace mlir;
using namespace mlir::tessel;

FailureOr<TileLayout> TileLayout::get(RankedTensorType type) {
  return get(type.getShape(), type.getEncoding());
}

FailureOr<TileLayout> TileLayout::get(ArrayRef<int64_t> shape, Attribute encoding) {
  if (!encoding)
    return failure();
  // Peel slices down to the blocked root, tracking which root dims remain.
  SmallVector<unsigned> removed;
  Attribute current = encoding;
  while (auto slice = dyn_cast<SliceEncodingAttr>(current)) {
    removed.push_back(slice.getDim());
    current = slice.getParent();
  }
  auto root = dyn_cast<BlockedEncodingAttr>(current);
  if (!root)
    return failure();
  unsigned rootRank = root.getOrder().size();
  SmallVector<unsigned> dims = llvm::to_vector(llvm::seq<unsigned>(0, rootRank));
  // The innermost slice was applied to the root first.
  for (unsigned dim : llvm::reverse(removed)) {
    if (dim >= dims.size())
      return failure();
    dims.erase(dims.begin() + dim);
  }
  if (dims.size() != shape.size())
    return failure();

  TileLayout layout;
  layout.root = root;
  layout.shape.assign(shape.begin(), shape.end());
  layout.rootDims = dims;
  for (unsigned rootDim : root.getOrder())
    for (unsigned d = 0; d < dims.size(); ++d)
      if (dims[d] == rootDim)
        layout.order.push_back(d);
  for (unsigned d = 0; d < dims.size(); ++d) {
    unsigned r = dims[d];
    int64_t coverage = int64_t(root.getSizePerThread()[r]) * root.getThreadsPerWarp()[r] *
                       root.getWarpsPerCTA()[r];
    int64_t reps = std::max<int64_t>(1, shape[d] / coverage);
    layout.regsPerDim.push_back(reps * root.getSizePerThread()[r]);
  }
  return layout;
}

unsigned TileLayout::getNumRegisters() const {
  unsigned n = 1;
  for (unsigned e : regsPerDim)
    n *= e;
  return n;
}

SmallVector<unsigned> TileLayout::getRegisterIndex(unsigned reg) const {
  SmallVector<unsigned> index(getRank(), 0);
  for (unsigned d : order) {
    index[d] = reg % regsPerDim[d];
    reg /= regsPerDim[d];
  }
  return index;
}

unsigned TileLayout::getRegister(ArrayRef<unsigned> index) const {
  unsigned reg = 0, stride = 1;
  for (unsigned d : order) {
    reg += index[d] * stride;
    stride *= regsPerDim[d];
  }
  return reg;
}

int64_t TileLayout::getRegisterOffset(unsigned dim, unsigned k) const {
  unsigned r = rootDims[dim];
  int64_t spt = root.getSizePerThread()[r];
  int64_t coverage = spt * root.getThreadsPerWarp()[r] * root.getWarpsPerCTA()[r];
  return (k / spt) * coverage + k % spt;
}

unsigned TileLayout::getThreadStride(unsigned dim) const {
  return root.getSizePerThread()[rootDims[dim]];
}

bool TileLayout::wraps(unsigned dim) const {
  unsigned r = rootDims[dim];
  int64_t coverage = int64_t(root.getSizePerThread()[r]) * root.getThreadsPerWarp()[r] *
                     root.getWarpsPerCTA()[r];
  return shape[dim] < coverage;
}

unsigned TileLayout::getLaneStride(unsigned rootDim) const {
  unsigned stride = 1;
  for (unsigned r : root.getOrder()) {
    if (r == rootDim)
      return stride;
    stride *= root.getThreadsPerWarp()[r];
  }
  llvm_unreachable("root dimension not in order");
}

unsigned TileLayout::getWarpStride(unsigned rootDim) const {
  unsigned stride = 1;
  for (unsigned r : root.getOrder()) {
    if (r == rootDim)
      return stride;
    stride *= root.getWarpsPerCTA()[r];
  }
  llvm_unreachable("root dimension not in order");
}

int64_t TileLayout::getNumElements() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

BlockedEncodingAttr mlir::tessel::getDefaultBlockedLayout(MLIRContext *ctx,
                                                          ArrayRef<int64_t> shape,
                                                          unsigned numWarps, unsigned vector) {
  unsigned rank = shape.size();
  SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpc(rank, 1), order;
  for (unsigned d = rank; d-- > 0;)
    order.push_back(d);
  int64_t numel = 1;
  for (int64_t s : shape)
    numel *= s;
  // Contiguous elements per thread along the fastest dimension, without replicating.
  unsigned fast = order.front();
  int64_t perThread = std::max<int64_t>(1, numel / (32 * numWarps));
  spt[fast] = std::max<int64_t>(1, std::min<int64_t>({vector, perThread, shape[fast]}));
  // Lanes, then warps, from the fastest dimension outwards.
  unsigned lanesLeft = 32, warpsLeft = numWarps;
  for (unsigned d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
    unsigned lanes = std::min<int64_t>(lanesLeft, room);
    tpw[d] = lanes;
    lanesLeft /= lanes;
  }
  tpw[order.back()] *= lanesLeft;
  for (unsigned d : llvm::reverse(order)) {
    int64_t room = std::max<int64_t>(1, shape[d] / (spt[d] * tpw[d]));
    unsigned warps = std::min<int64_t>(warpsLeft, room);
    wpc[d] = warps;
    warpsLeft /= warps;
  }
  wpc[order.front()] *= warpsLeft;
  return BlockedEncodingAttr::get(ctx, spt, tpw, wpc, order);
}

RankedTensorType mlir::tessel::withEncoding(RankedTensorType type, Attribute encoding) {
  return RankedTensorType::get(type.getShape(), type.getElementType(), encoding);
}

BlockedEncodingAttr mlir::tessel::getTransposedLayout(BlockedEncodingAttr layout) {
  auto swap = [](ArrayRef<unsigned> v) { return SmallVector<unsigned>{v[1], v[0]}; };
  ArrayRef<unsigned> order = layout.getOrder();
  return BlockedEncodingAttr::get(layout.getContext(), swap(layout.getSizePerThread()),
                                  swap(layout.getThreadsPerWarp()),
                                  swap(layout.getWarpsPerCTA()),
                                  {1 - order[0], 1 - order[1]});
}
