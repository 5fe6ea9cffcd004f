//===- test/interpreter/HostTensor.h - host buffers and kernels for CPU kernel tests -===//
//
// Storage-dtype host buffers, seeded random fills, and compiling/running a kernel of
// kernels/ in the interpreter: shared by the kernel tests that check kernels/*.tsl on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_INTERPRETER_HOSTTENSOR_H
#define TESSEL_TEST_INTERPRETER_HOSTTENSOR_H

#include "interpreter/FloatBits.h"
#include "interpreter/Source.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tessel::interp::test {

/// A host buffer of n elements of a storage dtype ("f32", "bf16", "f16").
struct HostTensor {
  std::string dtype;
  std::vector<uint8_t> bytes;

  HostTensor(std::string dtype, size_t n)
      : dtype(std::move(dtype)), bytes(n * (this->dtype == "f32" ? 4 : 2)) {}
  size_t size() const { return bytes.size() / (dtype == "f32" ? 4 : 2); }
  void *data() { return bytes.data(); }
  float get(size_t i) const {
    if (dtype == "f32") {
      float f;
      std::memcpy(&f, &bytes[i * 4], 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[i * 2], 2);
    return dtype == "bf16" ? bf16ToFloat(h) : halfToFloat(h);
  }
  void set(size_t i, float f) {
    if (dtype == "f32") {
      std::memcpy(&bytes[i * 4], &f, 4);
      return;
    }
    uint16_t h = dtype == "bf16" ? floatToBF16(f) : floatToHalf(f);
    std::memcpy(&bytes[i * 2], &h, 2);
  }
  /// Rounds an f32 value to this dtype.
  float round(float f) const {
    return dtype == "f32" ? f : dtype == "bf16" ? roundToBF16(f) : roundToHalf(f);
  }
  /// Relative tolerance of one rounding to this dtype.
  double ulp() const { return dtype == "f32" ? 1e-6 : dtype == "bf16" ? 0x1p-7 : 0x1p-10; }
};

inline HostTensor randomTensor(const std::string &dtype, size_t n, unsigned seed, float scale = 2.0f) {
  HostTensor t(dtype, n);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (size_t i = 0; i < n; ++i)
    t.set(i, normal(rng));
  return t;
}

inline SourceKernel compileKernel(const std::string &file, const std::string &kernel,
                           std::vector<std::string> defines) {
  SourceOptions opts;
  opts.kernel = kernel;
  opts.defines = std::move(defines);
  opts.importDirs = {TESSEL_KERNELS_DIR};
  auto compiled = compileSourceFile(std::string(TESSEL_KERNELS_DIR) + "/" + file, opts);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return SourceKernel();
  }
  return std::move(*compiled);
}

inline std::string run(const SourceKernel &k, LaunchGrid grid, std::vector<Arg> args,
                const MemoryMap &memory) {
  llvm::Error e = k.kernel.run(grid, args, memory);
  return e ? llvm::toString(std::move(e)) : std::string();
}

} // namespace tessel::interp::test

#endif // TESSEL_TEST_INTERPRETER_HOSTTENSOR_H
