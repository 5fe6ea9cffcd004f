//===- test/interpreter/KernelsTest.cpp - every kernel of kernels/ on the CPU ===//
//
// Each kernel runs in the interpreter for each storage dtype on ragged sizes
// (masked edges included) against a plain C++ reference computed from the same
// (rounded) inputs. Also: a planted unmasked access in .tsl source is reported
// with its source line.
//
//===----------------------------------------------------------------------===//
#include "interpreter/FloatBits.h"
#include "interpreter/Source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::interp;

namespace {

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

HostTensor randomTensor(const std::string &dtype, size_t n, unsigned seed, float scale = 2.0f) {
  HostTensor t(dtype, n);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (size_t i = 0; i < n; ++i)
    t.set(i, normal(rng));
  return t;
}

SourceKernel compileKernel(const std::string &file, const std::string &kernel,
                           std::vector<std::string> defines) {
  SourceOptions opts;
  opts.kernel = kernel;
  opts.defines = std::move(defines);
  auto compiled = compileSourceFile(std::string(TESSEL_KERNELS_DIR) + "/" + file, opts);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return SourceKernel();
  }
  return std::move(*compiled);
}

std::string run(const SourceKernel &k, LaunchGrid grid, std::vector<Arg> args,
                const MemoryMap &memory) {
  llvm::Error e = k.kernel.run(grid, args, memory);
  return e ? llvm::toString(std::move(e)) : std::string();
}

const char *kDTypes[] = {"f32", "bf16", "f16"};

class KernelsTest : public ::testing::TestWithParam<const char *> {};

TEST_P(KernelsTest, VectorAdd) {
  std::string dt = GetParam();
  SourceKernel k = compileKernel("vector_add.tsl", "vector_add", {"T=" + dt, "BLOCK=128"});
  ASSERT_TRUE(k.kernel);
  for (size_t n : {1, 127, 128, 129, 1000}) {
    HostTensor a = randomTensor(dt, n, 1), b = randomTensor(dt, n, 2), out(dt, n);
    MemoryMap mem;
    mem.add(a.data(), a.bytes.size(), "a");
    mem.add(b.data(), b.bytes.size(), "b");
    mem.add(out.data(), out.bytes.size(), "out");
    ASSERT_EQ(run(k, {int64_t((n + 127) / 128)}, {out.data(), a.data(), b.data(), int(n)}, mem),
              "");
    for (size_t i = 0; i < n; ++i) // one rounding in T: bit-exact
      ASSERT_EQ(out.get(i), out.round(a.get(i) + b.get(i))) << dt << " n=" << n << " i=" << i;
  }
}

TEST_P(KernelsTest, Softmax) {
  std::string dt = GetParam();
  for (auto [block, cols] : {std::pair{256, 1}, {256, 200}, {256, 256}, {1024, 1000}}) {
    SourceKernel k = compileKernel("softmax.tsl", "softmax",
                                   {"T=" + dt, "BLOCK=" + std::to_string(block)});
    ASSERT_TRUE(k.kernel);
    int rows = 3, inStride = cols + 5, outStride = cols + 1;
    HostTensor in = randomTensor(dt, size_t(rows * inStride), 3), out(dt, size_t(rows * outStride));
    for (size_t i = 0; i < out.size(); ++i)
      out.set(i, 42.0f);
    MemoryMap mem;
    mem.add(in.data(), in.bytes.size(), "inp");
    mem.add(out.data(), out.bytes.size(), "out");
    ASSERT_EQ(run(k, {rows}, {out.data(), in.data(), inStride, outStride, cols}, mem), "");
    for (int r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0;
      for (int c = 0; c < cols; ++c)
        m = std::max(m, double(in.get(size_t(r * inStride + c))));
      for (int c = 0; c < cols; ++c)
        s += std::exp(double(in.get(size_t(r * inStride + c))) - m);
      for (int c = 0; c < cols; ++c) {
        double ref = std::exp(double(in.get(size_t(r * inStride + c))) - m) / s;
        ASSERT_NEAR(out.get(size_t(r * outStride + c)), ref, ref * out.ulp() + 1e-7)
            << dt << " cols=" << cols << " r=" << r << " c=" << c;
      }
      if (r + 1 < rows) { // the gap between rows is masked off: untouched
        ASSERT_EQ(out.get(size_t(r * outStride + cols)), 42.0f);
      }
    }
  }
}

TEST_P(KernelsTest, SiluMul) {
  std::string dt = GetParam();
  SourceKernel k = compileKernel("silu_mul.tsl", "silu_mul", {"T=" + dt, "BLOCK=256"});
  ASSERT_TRUE(k.kernel);
  for (size_t n : {3, 256, 700}) {
    HostTensor a = randomTensor(dt, n, 4), b = randomTensor(dt, n, 5), out(dt, n);
    MemoryMap mem;
    mem.add(a.data(), a.bytes.size(), "a");
    mem.add(b.data(), b.bytes.size(), "b");
    mem.add(out.data(), out.bytes.size(), "out");
    ASSERT_EQ(run(k, {int64_t((n + 255) / 256)}, {out.data(), a.data(), b.data(), int(n)}, mem),
              "");
    for (size_t i = 0; i < n; ++i) {
      double x = a.get(i), ref = x / (1 + std::exp(-x)) * b.get(i);
      ASSERT_NEAR(out.get(i), ref, std::fabs(ref) * out.ulp() + 1e-6) << dt << " i=" << i;
    }
  }
}

TEST_P(KernelsTest, AddScale) {
  std::string dt = GetParam();
  SourceKernel k = compileKernel("add_scale.tsl", "add_scale", {"T=" + dt, "BLOCK=128"});
  ASSERT_TRUE(k.kernel);
  for (size_t n : {1, 128, 333}) {
    HostTensor x = randomTensor(dt, n, 6), r = randomTensor(dt, n, 7), out(dt, n);
    MemoryMap mem;
    mem.add(x.data(), x.bytes.size(), "x");
    mem.add(r.data(), r.bytes.size(), "residual");
    mem.add(out.data(), out.bytes.size(), "out");
    float scale = 0.37f;
    ASSERT_EQ(run(k, {int64_t((n + 127) / 128)}, {out.data(), x.data(), r.data(), scale, int(n)},
                  mem),
              "");
    for (size_t i = 0; i < n; ++i) // computed in f32, one rounding to T: bit-exact
      ASSERT_EQ(out.get(i), out.round((x.get(i) + r.get(i)) * scale)) << dt << " i=" << i;
  }
}

INSTANTIATE_TEST_SUITE_P(DTypes, KernelsTest, ::testing::ValuesIn(kDTypes));

// A kernel whose second load and whose store lack the mask.
const char *kPlanted = R"(@kernel
def planted(out: *f32, a: *f32, b: *f32, n: i32, BLOCK: constexpr = 64):
    offsets = program_id(0) * BLOCK + arange(0, BLOCK)
    mask = offsets < n
    x = load(a + offsets, mask=mask)
    y = load(b + offsets)
    store(out + offsets, x + y)
)";

TEST(PlantedOutOfBounds, LoadReportedWithSourceLine) {
  std::string path = ::testing::TempDir() + "planted.tsl";
  std::ofstream(path) << kPlanted;
  SourceOptions opts;
  auto k = compileSourceFile(path, opts);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  std::vector<float> a(100), b(100), out(100);
  MemoryMap mem;
  mem.add(a.data(), 400, "a");
  mem.add(b.data(), 400, "b");
  mem.add(out.data(), 400, "out");
  llvm::Error e = k->kernel.run({2}, {out.data(), a.data(), b.data(), 100}, mem);
  ASSERT_TRUE(bool(e));
  std::string error = llvm::toString(std::move(e));
  EXPECT_NE(error.find(path + ":6:"), std::string::npos) << error;
  EXPECT_NE(error.find("out-of-bounds load"), std::string::npos) << error;
  EXPECT_NE(error.find("program (1, 0, 0)"), std::string::npos) << error;
  EXPECT_NE(error.find("element 36 "), std::string::npos) << error;
  EXPECT_NE(error.find("    y = load(b + offsets)\n"), std::string::npos) << error;
  std::remove(path.c_str());
}

TEST(PlantedOutOfBounds, StoreReportedWithSourceLine) {
  std::string path = ::testing::TempDir() + "planted_store.tsl";
  std::string text = kPlanted;
  text.replace(text.find("y = load(b + offsets)"), 21, "y = load(b + offsets, mask=mask)");
  std::ofstream(path) << text;
  auto k = compileSourceFile(path, SourceOptions());
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  std::vector<float> a(100), b(100), out(100);
  MemoryMap mem;
  mem.add(a.data(), 400, "a");
  mem.add(b.data(), 400, "b");
  mem.add(out.data(), 400, "out");
  llvm::Error e = k->kernel.run({2}, {out.data(), a.data(), b.data(), 100}, mem);
  ASSERT_TRUE(bool(e));
  std::string error = llvm::toString(std::move(e));
  EXPECT_NE(error.find(path + ":7:"), std::string::npos) << error;
  EXPECT_NE(error.find("out-of-bounds store"), std::string::npos) << error;
  EXPECT_NE(error.find("past the end of buffer 'out'"), std::string::npos) << error;
  std::remove(path.c_str());
}

} // namespace
