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
#include <functional>
#include <random>
#include <tuple>

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
    fillNormal(array, rng, scale);
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

/// Checks a rows x ld f32 matrix whose first `cols` columns hold sums and the rest is
/// padding that must still be NaN: `sum(i, j)` gives the exact sum and the sum of its
/// terms' magnitudes, to which the tolerance `relative` applies (f32 accumulation order).
void expectSumsAndUntouchedPadding(const HostArray &out, int64_t rows, int64_t ld, int64_t cols,
                                   const std::function<std::pair<double, double>(int64_t, int64_t)> &sum,
                                   double relative) {
  int64_t bad = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < ld; ++j) {
      double got = out.get(i * ld + j);
      if (j >= cols) {
        if (!std::isnan(got) && bad++ < 5)
          ADD_FAILURE() << "wrote padding [" << i << "][" << j << "]";
        continue;
      }
      auto [want, size] = sum(i, j);
      if (!(std::abs(got - want) <= relative * size + 1e-6) && bad++ < 5)
        ADD_FAILURE() << "[" << i << "][" << j << "] = " << got << ", expected " << want;
    }
  EXPECT_EQ(bad, 0);
  EXPECT_TRUE(out.guardIntact());
}

// Tensor descriptors (test/gpu/kernels/descriptor_matmul.tsl): C = A B with every block
// shifted by `shift`, so blocks hang over each edge of A, B and C, the first ones before
// index 0. Inside C the product must match; outside it (its padding columns) nothing may
// be written. Sizes divisible by 16 take the specialised variant, whose pipelined loop
// copies the blocks by TMA, negative coordinates included; the others use masked loads.
TEST(DescriptorKernel, BlocksOverEveryEdge) {
  if (std::string why = whyNoGpuOrPackages(TESSEL_KERNEL_PACKAGE_DIR); !why.empty())
    GTEST_SKIP() << why;
  Package package =
      Package::load(std::string(TESSEL_KERNEL_PACKAGE_DIR) + "/descriptor_matmul_bf16.tslpkg");
  Kernel kernel = Kernel::load(package, "descriptor_matmul");
  unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  struct Case { int64_t m, n, k, lda, ldb, ldc, shift; };
  for (Case c : {Case{150, 192, 160, 176, 208, 224, -48}, Case{64, 64, 64, 64, 64, 80, 0},
                 Case{150, 192, 160, 176, 208, 224, -16}, Case{77, 45, 37, 41, 50, 53, -5},
                 Case{1, 1, 1, 1, 1, 3, -63}}) {
    for (int config : {0, 1}) {
      SCOPED_TRACE("m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" +
                   std::to_string(c.k) + " shift=" + std::to_string(c.shift) + " config " +
                   std::to_string(config) + " seed " + std::to_string(seed));
      HostArray a(Storage::BF16, c.m * c.lda), b(Storage::BF16, c.k * c.ldb),
          out(Storage::F32, c.m * c.ldc);
      fillNormal(a, rng);
      fillNormal(b, rng);
      out.poison();
      DeviceArray dA(a), dB(b), dOut(out);
      Grid grid((c.m - c.shift + 63) / 64, (c.n - c.shift + 63) / 64);
      kernel.launch(grid,
                    {dOut.pointer(), dA.pointer(), dB.pointer(), int32_t(c.m), int32_t(c.n),
                     int32_t(c.k), int32_t(c.lda), int32_t(c.ldb), int32_t(c.ldc),
                     int32_t(c.shift)},
                    nullptr, config);
      dOut.download(out);
      expectSumsAndUntouchedPadding(out, c.m, c.ldc, c.n, [&](int64_t i, int64_t j) {
        double sum = 0, size = 0;
        for (int64_t l = 0; l < c.k; ++l) {
          double term = double(a.get(i * c.lda + l)) * double(b.get(l * c.ldb + j));
          sum += term;
          size += std::abs(term);
        }
        return std::pair(sum, size);
      }, 1e-4);
    }
  }
}

// Atomic adds of whole rows (test/gpu/kernels/tile_adds.tsl): a grid of (row tiles, slabs)
// adds every slab into the same rows of acc at once. Row strides that are multiples of 16
// take the bulk reductions (one cp.reduce.async.bulk a row), the others red.global an
// element; both must sum every row of every slab once and leave acc's padding alone.
TEST(BulkReductions, TileAddsSumEveryRow) {
  if (std::string why = whyNoGpuOrPackages(TESSEL_KERNEL_PACKAGE_DIR); !why.empty())
    GTEST_SKIP() << why;
  Package package = Package::load(std::string(TESSEL_KERNEL_PACKAGE_DIR) + "/tile_adds_f32.tslpkg");
  Kernel kernel = Kernel::load(package, "tile_adds");
  unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  const int64_t cols = 128;
  for (auto [m, ld, slabs] : {std::tuple<int64_t, int64_t, int64_t>{200, 128, 7}, {200, 144, 33},
                              {200, 130, 7}, {1, 128, 5}, {64, 144, 64}}) {
    for (int config : {0, 1}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " ld=" + std::to_string(ld) + " slabs=" +
                   std::to_string(slabs) + " config " + std::to_string(config) + " seed " +
                   std::to_string(seed));
      HostArray x(Storage::F32, slabs * m * cols), acc(Storage::F32, m * ld);
      fillNormal(x, rng);
      acc.poison(); // NaN: the padding columns must stay so
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < cols; ++c)
          acc.set(r * ld + c, 0.f);
      DeviceArray dX(x), dAcc(acc);
      kernel.launch(Grid((m + 63) / 64, slabs),
                    {dAcc.pointer(), dX.pointer(), int32_t(m), int32_t(ld)}, nullptr, config);
      dAcc.download(acc);
      expectSumsAndUntouchedPadding(acc, m, ld, cols, [&](int64_t r, int64_t c) {
        double sum = 0, size = 0;
        for (int64_t j = 0; j < slabs; ++j) {
          double v = x.get((j * m + r) * cols + c);
          sum += v;
          size += std::abs(v);
        }
        return std::pair(sum, size);
      }, 1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, KernelTest,
                         ::testing::Values(Storage::F32, Storage::BF16, Storage::F16),
                         [](const auto &info) { return std::string(name(info.param)); });

} // namespace
