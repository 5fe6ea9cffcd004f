//===- GpuArrays.h - host and device arrays for the GPU tests ------------===//
//
// Storage dtypes (f32, bf16, f16) with exact host conversions, host arrays with a guard
// region after the last element (poisoned with 0xFF, NaN in every dtype, so unwritten
// outputs and out-of-bounds stores both show), and device copies through the driver.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_GPU_GPUARRAYS_H
#define TESSEL_TEST_GPU_GPUARRAYS_H

#include "runtime/Runtime.h"

#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace tessel::gputest {

/// Why the tests that run the kernel packages in `packageDir` cannot run here, or "" when
/// they can (the GPU is then current).
inline std::string whyNoGpuOrPackages(const char *packageDir) {
  if (!Driver::isAvailable())
    return "no GPU: " + Driver::unavailableReason();
  if (std::string(packageDir).empty())
    return "no kernel packages (build with the compiler or TESSEL_PACKAGE_DIR)";
  Driver::get().ensureCurrent(0);
  return "";
}

inline constexpr int64_t kGuard = 64; // elements after the end that must stay untouched

enum class Storage { F32, BF16, F16 };
inline const char *name(Storage s) { return s == Storage::F32 ? "f32" : s == Storage::BF16 ? "bf16" : "f16"; }
/// Test names and CTest entries read "f32", not a byte dump.
inline void PrintTo(Storage s, std::ostream *os) { *os << name(s); }
inline size_t bytesOf(Storage s) { return s == Storage::F32 ? 4 : 2; }

inline float bf16ToFloat(uint16_t bits) {
  uint32_t word = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0)
    value = std::ldexp(float(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(float(mantissa | 0x400), int(exponent) - 25);
  return sign ? -value : value;
}

/// A host array in one storage dtype, plus the guard region.
struct HostArray {
  Storage storage;
  int64_t size;
  std::vector<uint8_t> bytes;

  HostArray(Storage storage, int64_t size)
      : storage(storage), size(size), bytes((size + kGuard) * bytesOf(storage), 0) {}
  size_t byteSize() const { return bytes.size(); }
  float get(int64_t i) const {
    if (storage == Storage::F32) {
      float f;
      std::memcpy(&f, &bytes[i * 4], 4);
      return f;
    }
    uint16_t bits;
    std::memcpy(&bits, &bytes[i * 2], 2);
    return storage == Storage::BF16 ? bf16ToFloat(bits) : halfToFloat(bits);
  }
  void set(int64_t i, float value) {
    if (storage == Storage::F32) {
      std::memcpy(&bytes[i * 4], &value, 4);
      return;
    }
    uint16_t bits = storage == Storage::BF16 ? floatToBFloat16Bits(value) : floatToHalfBits(value);
    std::memcpy(&bytes[i * 2], &bits, 2);
  }
  void poison() { std::fill(bytes.begin(), bytes.end(), 0xFF); } // NaN in every dtype
  bool guardIntact() const {
    for (size_t i = size * bytesOf(storage); i < bytes.size(); ++i)
      if (bytes[i] != 0xFF)
        return false;
    return true;
  }
};

/// `array` filled with normal(0, scale) values drawn from `rng` (fresh inputs each run).
inline void fillNormal(HostArray &array, std::mt19937 &rng, float scale = 1.f) {
  std::normal_distribution<float> normal(0.f, scale);
  for (int64_t i = 0; i < array.size; ++i)
    array.set(i, normal(rng));
}

class DeviceArray {
public:
  explicit DeviceArray(const HostArray &host) : driver_(Driver::get()), bytes_(host.byteSize()) {
    driver_.check(driver_.memAlloc(&address_, bytes_), "cuMemAlloc");
    upload(host);
  }
  ~DeviceArray() { driver_.memFree(address_); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  void upload(const HostArray &host) {
    driver_.check(driver_.memcpyHtoD(address_, host.bytes.data(), bytes_), "cuMemcpyHtoD");
  }
  void download(HostArray &host) const {
    driver_.check(driver_.ctxSynchronize(), "cuCtxSynchronize");
    driver_.check(driver_.memcpyDtoH(host.bytes.data(), address_, bytes_), "cuMemcpyDtoH");
  }
  void *pointer() const { return reinterpret_cast<void *>(address_); }

private:
  Driver &driver_;
  size_t bytes_;
  CUdeviceptr address_ = 0;
};

} // namespace tessel::gputest

#endif // TESSEL_TEST_GPU_GPUARRAYS_H
