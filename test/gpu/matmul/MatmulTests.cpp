//===- MatmulTests.cpp - kernels/matmul.tsl on the GPU vs float64 ---------===//
//
// Fresh random inputs every run (the seed is printed on failure). The output is poisoned
// with NaN before each launch, so an element left unwritten fails; a guard region after
// C must stay untouched. Every element is checked against a float64 reference computed
// from the same (rounded) inputs, within the error its dtype and reduction allow:
//   |out - ref| <= outputEps |ref| + (productEps + K accumulateEps) sum_p |a_ip b_pj|
// (the output's rounding, each product's rounding of its operands: tf32 and exact f32,
// none for bf16 and f16 whose products are exact in f32, and the f32 sums' rounding);
// NaN never passes, and one wrong tile fails however small it is. Packages (kernels/CMakeLists):
// matmul_<dtype> (f32 through tf32), matmul_f32_ieee, matmul_bf16_relu, matmul_bf16_tt
// (A and B column-major), matmul_{bf16,f16,f32}_sm90a (wgmma where the configuration allows),
// matmul_bf16_ws (warp-specialized: a producer warpgroup copies A and B by TMA).
//
//===----------------------------------------------------------------------===//
#include "test/gpu/GpuArrays.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <random>

using namespace tessel;
using namespace tessel::gputest;

namespace {

struct Mode {
  const char *package; // kernels/<package>.tslpkg
  Storage storage;
  double productEps;   // relative error of one product a_ip b_pj (its operands' rounding)
  bool relu = false;
  bool transposed = false; // A and B column-major
};

void PrintTo(const Mode &mode, std::ostream *os) { *os << mode.package; }


class MatmulTest : public ::testing::TestWithParam<Mode> {
protected:
  void SetUp() override {
    if (std::string why = whyNoGpuOrPackages(TESSEL_KERNEL_PACKAGE_DIR); !why.empty())
      GTEST_SKIP() << why;
    package = Package::load(std::string(TESSEL_KERNEL_PACKAGE_DIR) + "/" + GetParam().package +
                            ".tslpkg");
    kernel = Kernel::load(package, "matmul");
    seed = std::random_device{}();
    rng.seed(seed);
  }

  /// One C = A B on `config`; returns the largest |out - ref| / bound over the elements
  /// (NaN if anything is off) after reporting the first few elements past their bound.
  /// Unaligned: leading dimensions padded by a few elements, so strides differ from the
  /// sizes (the generic variant runs). Aligned: no padding; with sizes that are multiples
  /// of 16 the divisible-by-16 variant (16-byte vector accesses) runs.
  double run(int64_t m, int64_t n, int64_t k, int config, bool aligned) {
    const Mode &mode = GetParam();
    int64_t lda = (mode.transposed ? m : k) + (aligned ? 0 : 3);
    int64_t ldb = (mode.transposed ? k : n) + (aligned ? 0 : 5);
    int64_t ldc = n + (aligned ? 0 : 1);
    HostArray a(mode.storage, (mode.transposed ? k : m) * lda);
    HostArray b(mode.storage, (mode.transposed ? n : k) * ldb);
    HostArray c(mode.storage, m * ldc);
    fillNormal(a, rng);
    fillNormal(b, rng);
    c.poison();
    DeviceArray dA(a), dB(b), dC(c);
    const Config &record = kernel.info().configs[size_t(config)];
    int64_t bm = record["BLOCK_M"], bn = record["BLOCK_N"];
    int64_t grid = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
    kernel.launch(Grid(grid),
                  {dC.pointer(), dA.pointer(), dB.pointer(), int32_t(m), int32_t(n), int32_t(k),
                   int32_t(lda), int32_t(ldb), int32_t(ldc)},
                  nullptr, config);
    dC.download(c);
    EXPECT_TRUE(c.guardIntact()) << "a masked store wrote past C";
    // Row-major float64 copies of A and of B transposed, so the inner loop is contiguous.
    std::vector<double> ad(m * k), btd(n * k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        ad[i * k + p] = mode.transposed ? a.get(p * lda + i) : a.get(i * lda + p);
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        btd[j * k + p] = mode.transposed ? b.get(j * ldb + p) : b.get(p * ldb + j);
    double outputEps = mode.storage == Storage::BF16 ? 0x1p-8
                       : mode.storage == Storage::F16  ? 0x1p-11
                                                       : 0x1p-23;
    double sumEps = mode.productEps + double(k) * 0x1p-22; // f32 sums, in any order
    double worstRatio = 0;
    int64_t bad = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double *bcol = &btd[j * k];
      for (int64_t i = 0; i < m; ++i) {
        const double *arow = &ad[i * k];
        double ref = 0, scale = 0;
        for (int64_t p = 0; p < k; ++p) {
          ref += arow[p] * bcol[p];
          scale += std::abs(arow[p] * bcol[p]);
        }
        if (mode.relu)
          ref = std::max(ref, 0.0);
        double got = c.get(i * ldc + j);
        double bound = outputEps * std::abs(ref) + sumEps * scale + 1e-30;
        double ratio = std::abs(got - ref) / bound;
        if (!(ratio <= 1) && bad++ < 3)
          ADD_FAILURE() << "C[" << i << ", " << j << "] = " << got << ", expected " << ref
                        << " within " << bound << " (seed " << seed << ")";
        worstRatio = std::isnan(ratio) || std::isnan(worstRatio) ? NAN : std::max(worstRatio, ratio);
      }
    }
    // Padding columns of C are never written.
    for (int64_t i = 0; i < m && ldc > n; ++i)
      EXPECT_TRUE(std::isnan(c.get(i * ldc + n))) << "padding of row " << i << " was written";
    return worstRatio;
  }

  /// Configurations too big for this device (f32 tiles with deep pipelines need more
  /// shared memory than an H100 has) are skipped, and said so; the autotuner skips them too.
  bool fits(int config) {
    ConfigFit fit = kernel.checkConfig(config);
    if (!fit.fits && skipped.insert(config).second)
      std::printf("[ SKIPPED  ] %s: %s\n", kernel.info().configs[size_t(config)].text().c_str(),
                  fit.reason.c_str());
    return fit.fits;
  }

  /// The first configuration that fits (the tests' default).
  int firstFitting() {
    for (int config = 0; config < kernel.info().configCount(); ++config)
      if (fits(config))
        return config;
    ADD_FAILURE() << "no configuration fits this device";
    return 0;
  }

  void expectAccurate(int64_t m, int64_t n, int64_t k, int config, bool aligned = false) {
    if (!fits(config))
      return;
    double ratio = run(m, n, k, config, aligned);
    worst = std::isnan(ratio) ? ratio : std::max(worst, ratio);
    EXPECT_TRUE(ratio <= 1)
        << m << "x" << n << "x" << k << (aligned ? " (aligned)" : "") << " on "
        << kernel.info().configs[size_t(config)].text() << ": an element's error is " << ratio
        << " times its bound (seed " << seed << ")";
  }

  // The largest error of the test as a fraction of its element's bound, for the log.
  void TearDown() override {
    if (worst >= 0 || std::isnan(worst))
      std::printf("[ ACCURACY ] %s: worst element error %.3g of its bound\n",
                  GetParam().package, worst);
  }

  Package package;
  Kernel kernel;
  double worst = -1;
  std::set<int> skipped;
  unsigned seed = 0;
  std::mt19937 rng;
};

TEST_P(MatmulTest, EveryConfigOnRaggedSizes) {
  for (int config = 0; config < kernel.info().configCount(); ++config) {
    expectAccurate(100, 100, 100, config);
    expectAccurate(257, 129, 96, config);
  }
}

TEST_P(MatmulTest, SmallAndRaggedSizes) {
  int last = kernel.info().configCount() - 1; // the smallest tiles
  int first = firstFitting();
  for (int64_t s : {1, 17, 100})
    for (int config : {first, last})
      expectAccurate(s, s, s, config);
  expectAccurate(1, 1000, 17, first);
  expectAccurate(1000, 1, 33, first);
  expectAccurate(4099, 64, 100, first);
  expectAccurate(64, 100, 4099, first);
}

TEST_P(MatmulTest, SquareSizes) {
  for (int64_t s : {256, 512})
    for (int config = 0; config < kernel.info().configCount(); config += 2)
      expectAccurate(s, s, s, config);
  expectAccurate(1000, 1000, 1000, firstFitting());
}

// Sizes and strides that are multiples of 16: the divisible-by-16 variant, which the
// benchmark's shapes use. Bulk copies of B bring the whole tile in one box where N is a
// multiple of 128 bytes of columns (256, 128), block by block where it is not (144: 16
// columns past a block for every dtype; 160: for bf16 and f16).
TEST_P(MatmulTest, AlignedVariantOnEveryConfig) {
  for (int config = 0; config < kernel.info().configCount(); ++config) {
    expectAccurate(256, 256, 256, config, /*aligned=*/true);
    expectAccurate(384, 128, 96, config, /*aligned=*/true);
    expectAccurate(384, 144, 96, config, /*aligned=*/true);
  }
  expectAccurate(272, 160, 128, firstFitting(), /*aligned=*/true);
  expectAccurate(1024, 1024, 1024, firstFitting(), /*aligned=*/true);
}

// Packages compiled with --multicast-b 2: programs 2j and 2j+1 run as a cluster (where
// the grid is even) and fetch each B tile once for both where they copy the same one.
// 1152 rows of 128-row tiles leave a last group of one row block (GROUP_M = 8), whose
// consecutive programs read different B tiles: those fetch their own. An odd grid (384 x
// 128) runs without clusters, 144 columns block by block; K = 112 ends in a partial tile.
TEST_P(MatmulTest, ClustersThatShareAndClustersThatDoNot) {
  for (int config = 0; config < kernel.info().configCount(); ++config) {
    expectAccurate(1152, 256, 96, config, /*aligned=*/true);
    expectAccurate(640, 512, 112, config, /*aligned=*/true);
  }
  expectAccurate(384, 128, 96, firstFitting(), /*aligned=*/true);
  expectAccurate(1152, 144, 64, firstFitting(), /*aligned=*/true);
}

INSTANTIATE_TEST_SUITE_P(
    Packages, MatmulTest,
    // Products: exact f32 FMA rounds each to 2^-24; tf32 rounds both operands to 10
    // mantissa bits (2^-11 each, 2^-10 if truncated: 2^-9 for the pair); bf16 and f16
    // products are exact in f32.
    ::testing::Values(Mode{"matmul_f32_ieee", Storage::F32, 0x1p-23},
                      Mode{"matmul_f32", Storage::F32, 0x1p-9},
                      Mode{"matmul_bf16", Storage::BF16, 0},
                      Mode{"matmul_f16", Storage::F16, 0},
                      Mode{"matmul_bf16_relu", Storage::BF16, 0, /*relu=*/true},
                      Mode{"matmul_bf16_tt", Storage::BF16, 0, false, /*transposed=*/true},
                      Mode{"matmul_bf16_sm90a", Storage::BF16, 0},
                      Mode{"matmul_f16_sm90a", Storage::F16, 0},
                      Mode{"matmul_f32_sm90a", Storage::F32, 0x1p-9},
                      Mode{"matmul_f32_mc2", Storage::F32, 0x1p-9},
                      Mode{"matmul_bf16_mc2", Storage::BF16, 0},
                      Mode{"matmul_bf16_ws", Storage::BF16, 0}),
    [](const ::testing::TestParamInfo<Mode> &info) { return std::string(info.param.package); });

} // namespace
