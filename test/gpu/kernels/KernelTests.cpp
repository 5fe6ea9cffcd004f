//===- KernelTests.cpp - every kernel of kernels/ on the GPU vs the host --===//
//
// Fresh random inputs every run (the seed is printed on failure), sizes that are not
// multiples of the tile, 1-element edges, all storage dtypes. Outputs are poisoned with
// NaN before the launch: every element must be written, and a guard region after the
// last element must stay untouched (masked stores). Skipped without a GPU or packages.
//
//===----------------------------------------------------------------------===//
#include "test/gpu/GpuArrays.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

using namespace tessel;
using namespace tessel::gputest;

namespace {

/// Relative tolerance of the storage dtype's output rounding (plus approximate exp).
double tolerance(Storage s) { return s == Storage::F32 ? 2e-5 : s == Storage::BF16 ? 1e-2 : 2e-3; }

class KernelTest : public ::testing::TestWithParam<Storage> {
protected:
  void SetUp() override {
    if (std::string why = whyNoGpuOrPackages(TESSEL_KERNEL_PACKAGE_DIR); !why.empty())
      GTEST_SKIP() << why;
    seed = std::random_device{}();
    rng.seed(seed);
  }

  Kernel load(const std::string &kernel) {
    std::string path = std::string(TESSEL_KERNEL_PACKAGE_DIR) + "/" + kernel + "_" +
                       name(GetParam()) + ".tslpkg";
    package = Package::load(path);
    return Kernel::load(package, kernel);
  }

  HostArray random(int64_t n, float scale) {
    HostArray array(GetParam(), n);
    std::normal_distribution<float> normal(0.f, scale);
    for (int64_t i = 0; i < n; ++i)
      array.set(i, normal(rng));
    return array;
  }

  /// Compares out[0, n) with the reference and checks the guard.
  void expectClose(const HostArray &out, const std::vector<double> &ref) {
    double tol = tolerance(GetParam());
    int64_t bad = 0;
    for (int64_t i = 0; i < out.size; ++i) {
      double got = out.get(i);
      if (!(std::abs(got - ref[i]) <= tol * std::abs(ref[i]) + tol * 1e-2)) {
        if (bad++ < 5)
          ADD_FAILURE() << "element " << i << ": got " << got << ", expected " << ref[i]
                        << " (seed " << seed << ")";
      }
    }
    EXPECT_EQ(bad, 0) << "mismatches out of " << out.size << " (seed " << seed << ")";
    EXPECT_TRUE(out.guardIntact()) << "a masked store wrote past the end";
  }

  Package package;
  unsigned seed = 0;
  std::mt19937 rng;
};

/// The softmax configuration with the smallest BLOCK that holds a row.
int softmaxConfigFor(const Kernel &kernel, int64_t cols) {
  int best = -1;
  int64_t bestBlock = 0;
  for (const Config &config : kernel.info().configs) {
    int64_t block = config["BLOCK"];
    if (block >= cols && (best < 0 || block < bestBlock)) {
      best = config.index;
      bestBlock = block;
    }
  }
  return best;
}

TEST_P(KernelTest, Softmax) {
  Kernel kernel = load("softmax");
  struct Shape { int64_t rows, cols, pad; };
  for (Shape shape : {Shape{1, 1, 0}, Shape{3, 17, 0}, Shape{4, 255, 1}, Shape{5, 1000, 0},
                      Shape{2, 1024, 0}, Shape{3, 1025, 7}, Shape{2, 4099, 0},
                      Shape{64, 4096, 16}, Shape{2, 16384, 0}}) {
    SCOPED_TRACE(testing::Message() << shape.rows << "x" << shape.cols << " pad " << shape.pad);
    int64_t stride = shape.cols + shape.pad, n = shape.rows * stride;
    HostArray in = random(n, 3.f);
    HostArray out(GetParam(), n);
    out.poison();
    DeviceArray dIn(in), dOut(out);
    int config = softmaxConfigFor(kernel, shape.cols);
    ASSERT_GE(config, 0);
    kernel.launch(Grid(shape.rows),
                  {dOut.pointer(), dIn.pointer(), int32_t(stride), int32_t(stride),
                   int32_t(shape.cols)},
                  nullptr, config);
    dOut.download(out);
    std::vector<double> ref(n);
    for (int64_t r = 0; r < shape.rows; ++r) {
      double mx = -INFINITY, sum = 0;
      for (int64_t c = 0; c < shape.cols; ++c)
        mx = std::max(mx, double(in.get(r * stride + c)));
      for (int64_t c = 0; c < shape.cols; ++c)
        sum += std::exp(double(in.get(r * stride + c)) - mx);
      for (int64_t c = 0; c < stride; ++c)
        ref[r * stride + c] =
            c < shape.cols ? std::exp(double(in.get(r * stride + c)) - mx) / sum : NAN;
    }
    // Padding columns are never written: compare them as NaN-poisoned.
    for (int64_t i = 0; i < n; ++i)
      if (std::isnan(ref[i])) {
        EXPECT_TRUE(std::isnan(out.get(i))) << "padding element " << i << " was written";
        out.set(i, 0.f);
        ref[i] = 0;
      }
    expectClose(out, ref);
  }
}

TEST_P(KernelTest, SoftmaxUsesTheAlignedVariantWhenArgumentsAllowIt) {
  Kernel kernel = load("softmax");
  HostArray in = random(1024, 1.f), out(GetParam(), 1024);
  DeviceArray dIn(in), dOut(out);
  int config = softmaxConfigFor(kernel, 1024);
  int aligned = kernel.chooseVariant(
      {dOut.pointer(), dIn.pointer(), int32_t(1024), int32_t(1024), int32_t(1024)}, config);
  int generic = kernel.chooseVariant(
      {dOut.pointer(), dIn.pointer(), int32_t(1000), int32_t(1000), int32_t(1000)}, config);
  EXPECT_FALSE(kernel.info().allVariants()[size_t(aligned)]->divisibleBy16.empty());
  EXPECT_TRUE(kernel.info().allVariants()[size_t(generic)]->divisibleBy16.empty());
}

TEST_P(KernelTest, VectorAdd) {
  Kernel kernel = load("vector_add");
  for (int64_t n : {1, 17, 1000, 1024, 4099, 100003}) {
    SCOPED_TRACE(n);
    HostArray a = random(n, 1.f), b = random(n, 1.f), out(GetParam(), n);
    out.poison();
    DeviceArray dA(a), dB(b), dOut(out);
    kernel.launch(Grid((n + 1023) / 1024), {dOut.pointer(), dA.pointer(), dB.pointer(), int32_t(n)});
    dOut.download(out);
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i)
      ref[i] = double(a.get(i)) + double(b.get(i));
    expectClose(out, ref);
  }
}

TEST_P(KernelTest, SiluMul) {
  Kernel kernel = load("silu_mul");
  for (int64_t n : {1, 17, 1000, 1024, 4099, 100003}) {
    SCOPED_TRACE(n);
    HostArray a = random(n, 2.f), b = random(n, 1.f), out(GetParam(), n);
    out.poison();
    DeviceArray dA(a), dB(b), dOut(out);
    kernel.launch(Grid((n + 1023) / 1024), {dOut.pointer(), dA.pointer(), dB.pointer(), int32_t(n)});
    dOut.download(out);
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i) {
      double x = a.get(i);
      ref[i] = x / (1 + std::exp(-x)) * double(b.get(i));
    }
    expectClose(out, ref);
  }
}

TEST_P(KernelTest, AddScale) {
  Kernel kernel = load("add_scale");
  for (int64_t n : {1, 17, 1000, 1024, 4099, 100003}) {
    SCOPED_TRACE(n);
    HostArray x = random(n, 1.f), r = random(n, 1.f), out(GetParam(), n);
    out.poison();
    DeviceArray dX(x), dR(r), dOut(out);
    float scale = 0.7071f;
    kernel.launch(Grid((n + 1023) / 1024),
                  {dOut.pointer(), dX.pointer(), dR.pointer(), scale, int32_t(n)});
    dOut.download(out);
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i)
      ref[i] = (double(x.get(i)) + double(r.get(i))) * double(scale);
    expectClose(out, ref);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KernelTest,
                         ::testing::Values(Storage::F32, Storage::BF16, Storage::F16),
                         [](const auto &info) { return std::string(name(info.param)); });

} // namespace
