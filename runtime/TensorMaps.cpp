//===- runtime/TensorMaps.cpp - Tensor maps encoded per launch ------------===//
#include "runtime/TensorMaps.h"

#include <algorithm>
#include <string>

using namespace tessel;

/// The value of integer param `pv.param` of a launch (or the constant).
static int64_t scalarArg(const KernelInfo &info, PackedArgs &packed, const ParamOrValue &pv) {
  if (pv.param < 0)
    return pv.value;
  const void *slot = packed.slot(size_t(pv.param));
  switch (info.params[size_t(pv.param)].dtype) {
  case DType::I64: return *static_cast<const int64_t *>(slot);
  case DType::I32: return *static_cast<const int32_t *>(slot);
  case DType::I16: return *static_cast<const int16_t *>(slot);
  default: return *static_cast<const int8_t *>(slot);
  }
}

void TensorMapEncoder::encode(const KernelInfo &info, const Variant &variant, int variantIndex,
                              PackedArgs &packed, CUtensorMap *maps) {
  auto where = [&] {
    return info.name + ", config " + std::to_string(variant.config) + ", variant " +
           std::to_string(variantIndex);
  };
  for (size_t m = 0; m < variant.tensorMaps.size(); ++m) {
    const TensorMapSpec &spec = variant.tensorMaps[m];
    void *base = *static_cast<void *const *>(packed.slot(size_t(spec.pointer)));
    // An empty matrix is never read (its copies are predicated off); the encoder
    // still wants sizes of at least 1.
    cuuint64_t dims[2] = {cuuint64_t(std::max<int64_t>(1, scalarArg(info, packed, spec.cols))),
                          cuuint64_t(std::max<int64_t>(1, scalarArg(info, packed, spec.rows)))};
    cuuint64_t strides[1] = {cuuint64_t(scalarArg(info, packed, spec.rowStride)) *
                             dtypeSize(spec.dtype)};
    EncodedMap key{variantIndex, m, base, dims[0], dims[1], strides[0], {0, 0}, {}};
    for (size_t i = 0; i < spec.batchStrides.size() && i < 2; ++i)
      key.batchStrides[i] =
          cuuint64_t(scalarArg(info, packed, spec.batchStrides[i])) * dtypeSize(spec.dtype);
    auto same = [&](const EncodedMap &e) {
      return e.variant == key.variant && e.map == key.map && e.base == key.base &&
             e.cols == key.cols && e.rows == key.rows && e.rowStride == key.rowStride &&
             e.batchStrides == key.batchStrides;
    };
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto hit = std::find_if(cache_.begin(), cache_.end(), same);
      if (hit != cache_.end()) {
        maps[m] = hit->encoded;
        continue;
      }
    }
    // Dimensions innermost first: columns, rows; strides from the second on, in bytes.
    std::vector<cuuint64_t> globalDims{dims[0], dims[1]}, globalStrides{strides[0]};
    std::vector<cuuint32_t> boxDims{cuuint32_t(spec.boxCols), cuuint32_t(spec.boxRows)};
    if (spec.interleave8) {
      // Rows as (k / 4 % 2, k % 4, k / 8), box (2, 4, box rows / 8), so the copy writes
      // row k to position 2 (k % 4) + (k % 8) / 4 of its group of 8.
      if (dims[1] % 8 != 0)
        throw Error(where() + ": tensor map " + std::to_string(m) +
                    " of param '" + info.params[size_t(spec.pointer)].name +
                    "' interleaves rows in groups of 8, but the matrix has " +
                    std::to_string(dims[1]) + " rows");
      globalDims = {dims[0], 2, 4, dims[1] / 8};
      globalStrides = {4 * strides[0], strides[0], 8 * strides[0]};
      boxDims = {boxDims[0], 2, 4, cuuint32_t(spec.boxRows / 8)};
    }
    if (spec.colBlocks > 1 && dims[0] % cuuint64_t(spec.boxCols) == 0) {
      // Whole column blocks: the block becomes the outermost dimension (the kernel
      // tests the same column count and copies the tile in one box).
      globalDims[0] = cuuint64_t(spec.boxCols);
      globalDims.push_back(dims[0] / cuuint64_t(spec.boxCols));
      globalStrides.push_back(cuuint64_t(spec.boxCols) * dtypeSize(spec.dtype));
      // Multicast: each program of the cluster fetches 1/multicast of the tile's blocks.
      boxDims.push_back(cuuint32_t(spec.colBlocks / spec.multicast));
    }
    // A batched matrix: one more dimension per batch stride, as far as an i32 coordinate
    // reaches (the kernel computes the indices; what lies between matrices is never read).
    for (size_t i = 0; i < spec.batchStrides.size(); ++i) {
      globalDims.push_back(cuuint64_t(1) << 31);
      globalStrides.push_back(key.batchStrides[i]);
      boxDims.push_back(1);
    }
    if (globalDims.size() > 5)
      throw Error(where() + ": tensor map " + std::to_string(m) + " has " +
                  std::to_string(globalDims.size()) + " dimensions (at most 5)");
    cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
    CUresult result = driver_->tensorMapEncodeTiled(
        &maps[m],
        spec.dtype == DType::F16   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
        : spec.dtype == DType::F32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        cuuint32_t(globalDims.size()), base, globalDims.data(), globalStrides.data(),
        boxDims.data(), elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS)
      driver_->fail(result, "cuTensorMapEncodeTiled(" + where() + ", tensor map " +
                               std::to_string(m) + " of param '" +
                               info.params[size_t(spec.pointer)].name + "')",
                   std::to_string(dims[1]) + " x " + std::to_string(dims[0]) +
                       " elements, row stride " + std::to_string(strides[0]) +
                       " bytes (a multiple of 16 is required), base " +
                       std::to_string(uintptr_t(base)) + " (16-byte aligned required)");
    key.encoded = maps[m];
    std::lock_guard<std::mutex> lock(mutex_);
    if (cache_.size() < kCacheSize) {
      cache_.push_back(key);
    } else {
      cache_[next_] = key;
      next_ = (next_ + 1) % kCacheSize;
    }
  }
}
