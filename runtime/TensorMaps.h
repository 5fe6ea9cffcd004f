//===- runtime/TensorMaps.h - Tensor maps encoded per launch ----*- C++ -*-===//
//
// A variant that copies tiles with the Hopper bulk-copy engine takes CUtensorMaps as
// extra (__grid_constant__) parameters: the package says what each describes (which
// pointer, which bounds and stride, box, swizzle, interleave, multicast), the launch's
// arguments give the numbers. Encoding is a driver call, so maps encoded for the same
// arguments are reused: a training step or a benchmark launches on the same tensors.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TENSORMAPS_H
#define TESSEL_RUNTIME_TENSORMAPS_H

#include "runtime/Args.h"
#include "runtime/Driver.h"
#include "package/Package.h"

#include <cuda.h>

#include <cstddef>
#include <array>
#include <mutex>
#include <vector>

namespace tessel {

class TensorMapEncoder {
public:
  explicit TensorMapEncoder(Driver *driver = nullptr) : driver_(driver) {}
  void setDriver(Driver *driver) { driver_ = driver; }

  /// Encodes `variant`'s tensor maps (variant `variantIndex` of kernel `info`, for
  /// messages) from the launch's packed arguments into `maps`, or takes them from the
  /// maps encoded for the same arguments. Throws tessel::Error naming the param when
  /// the driver refuses one (a row stride not a multiple of 16 bytes, a misaligned base).
  void encode(const KernelInfo &info, const Variant &variant, int variantIndex,
              PackedArgs &packed, CUtensorMap *maps);

private:
  /// What an encoded map depends on, and the map.
  struct EncodedMap {
    int variant;
    size_t map;
    const void *base;
    cuuint64_t cols, rows, rowStride;
    std::array<cuuint64_t, 2> batchStrides; // 0 where the map has no such dimension
    CUtensorMap encoded;
  };
  static constexpr size_t kCacheSize = 64;

  Driver *driver_;
  std::mutex mutex_;
  std::vector<EncodedMap> cache_; // guarded by mutex_
  size_t next_ = 0;               // the entry replaced next once the cache is full
};

} // namespace tessel

#endif // TESSEL_RUNTIME_TENSORMAPS_H
