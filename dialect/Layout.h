//===- Layout.h - which thread holds which element of a tile -----------===//
//
// A layout encoding (#tessel.blocked, #tessel.slice) applied to one tile shape. Pure
// index arithmetic shared by layout assignment, shared-memory sizing and the lowering,
// which adds the thread's lane and warp ids.
//
// For tile dimension d mapped to root (blocked) dimension r:
//   coverage C = sizePerThread[r] * threadsPerWarp[r] * warpsPerCTA[r]
//   registers along d: E_d = max(1, S_d / C) * sizePerThread[r]
//   coordinate of register index k_d held by (lane, warp):
//     ((k_d / spt) * C + (warp_r * tpw_r + lane_r) * spt + k_d % spt) mod S_d
// Registers are numbered with the layout's `order` (fastest dimension first).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_LAYOUT_H
#define TESSEL_DIALECT_LAYOUT_H

#include "dialect/TesselDialect.h"

namespace mlir::tessel {

class TileLayout {
public:
  /// The distributed view of `type`; fails when it has no tessel layout encoding.
  static FailureOr<TileLayout> get(RankedTensorType type);
  static FailureOr<TileLayout> get(ArrayRef<int64_t> shape, Attribute encoding);

  unsigned getRank() const { return shape.size(); }
  int64_t getDimSize(unsigned dim) const { return shape[dim]; }
  BlockedEncodingAttr getRoot() const { return root; }
  /// The root (blocked) dimension that tile dimension `dim` maps to.
  unsigned getRootDim(unsigned dim) const { return rootDims[dim]; }
  /// Tile dimensions from fastest- to slowest-varying register index.
  ArrayRef<unsigned> getOrder() const { return order; }

  /// Number of elements each thread holds.
  unsigned getNumRegisters() const;
  /// Registers along tile dimension `dim`.
  unsigned getRegistersAlong(unsigned dim) const { return regsPerDim[dim]; }
  /// Per-dimension register index of register `reg`, and back.
  SmallVector<unsigned> getRegisterIndex(unsigned reg) const;
  unsigned getRegister(ArrayRef<unsigned> index) const;

  /// The part of a register's coordinate that does not depend on the thread.
  int64_t getRegisterOffset(unsigned dim, unsigned k) const;
  /// Multiplier of (warp_r * tpw_r + lane_r) in the coordinate along `dim`.
  unsigned getThreadStride(unsigned dim) const;
  /// True when coordinates along `dim` must wrap (the tile is smaller than the coverage).
  bool wraps(unsigned dim) const;

  /// Lane-id and warp-id strides of root dimension `rootDim` in the linear lane/warp id.
  unsigned getLaneStride(unsigned rootDim) const;
  unsigned getWarpStride(unsigned rootDim) const;

  /// Number of distinct elements held (the tile's size) and of threads in the block.
  int64_t getNumElements() const;
  unsigned getNumThreads() const { return root.getNumWarps() * 32; }

private:
  BlockedEncodingAttr root;
  SmallVector<int64_t> shape;
  SmallVector<unsigned> rootDims;
  SmallVector<unsigned> order;
  SmallVector<unsigned> regsPerDim;
};

/// The default blocked layout for a tile of `shape` on `numWarps` warps whose fastest
/// dimension is the last: `vector` contiguous elements per thread along it (capped so a
/// small tile is not replicated), lanes then warps spread from the fastest dimension.
BlockedEncodingAttr getDefaultBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                            unsigned numWarps, unsigned vector);

/// The rank-2 blocked layout that holds the transpose of what `layout` holds: thread t's
/// register i is element (c, r) where in `layout` it is (r, c). So `tessel.trans` between
/// the two moves no data.
BlockedEncodingAttr getTransposedLayout(BlockedEncodingAttr layout);

/// `type` with the layout encoding replaced.
RankedTensorType withEncoding(RankedTensorType type, Attribute encoding);

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_LAYOUT_H
