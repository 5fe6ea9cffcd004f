//===- LargeTensorTests.cpp - kernels on tensors of 2^31 elements or more -===//
//
// Offsets that wrap in i32 past 2^31 elements read and write the wrong place (or fault);
// docs/language.md ("Offsets past 2^31 elements") gives the rule every kernel follows.
// Each test runs one kernel, bf16, on a tensor a little over 2^31 elements (4 GiB): the
// bulk is filled on the device with one value, random values go where it matters (the
// start, across element 2^31, the end), and only those regions are read back and checked
// against a host reference. Skipped, and said so, where the device lacks the memory.
//
//===----------------------------------------------------------------------===//
#include "test/gpu/GpuArrays.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tessel;
using namespace tessel::gputest;

namespace {

constexpr int64_t kTwo31 = int64_t(1) << 31;
constexpr uint8_t kFillByte = 0x3F; // bf16 0x3F3F = 0.74609375
const float kFill = bf16ToFloat(0x3F3F);

/// A device buffer of bf16 elements whose bulk is one value; regions are written and
/// read back through host arrays.
class BigBuffer {
public:
  BigBuffer(int64_t elements, uint8_t fill) : driver_(Driver::get()), elements_(elements) {
    driver_.check(driver_.memAlloc(&address_, size_t(elements) * 2), "cuMemAlloc");
    driver_.check(driver_.memsetD8(address_, fill, size_t(elements) * 2), "cuMemsetD8");
  }
  ~BigBuffer() { driver_.memFree(address_); }
  BigBuffer(const BigBuffer &) = delete;
  BigBuffer &operator=(const BigBuffer &) = delete;

  void write(int64_t first, const HostArray &values) {
    ASSERT_LE(first + values.size, elements_);
    driver_.check(driver_.memcpyHtoD(address_ + CUdeviceptr(first * 2), values.bytes.data(),
                                     size_t(values.size) * 2),
                  "cuMemcpyHtoD");
  }
  HostArray read(int64_t first, int64_t count) {
    HostArray values(Storage::BF16, count);
    values.poison(); // the guard stays intact: it is never copied
    driver_.check(driver_.ctxSynchronize(), "cuCtxSynchronize");
    driver_.check(driver_.memcpyDtoH(values.bytes.data(), address_ + CUdeviceptr(first * 2),
                                     size_t(count) * 2),
                  "cuMemcpyDtoH");
    return values;
  }
  void *pointer() const { return reinterpret_cast<void *>(address_); }

private:
  Driver &driver_;
  int64_t elements_;
  CUdeviceptr address_ = 0;
};

class LargeTensorTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (std::string why = whyNoGpuOrPackages(TESSEL_KERNEL_PACKAGE_DIR); !why.empty())
      GTEST_SKIP() << why;
    seed = std::random_device{}();
    rng.seed(seed);
  }

  /// Skips the test unless `bytes` fit in the device's free memory (with 1 GiB to spare).
  bool haveMemory(double bytes) {
    size_t free = 0, total = 0;
    Driver::get().check(Driver::get().memGetInfo(&free, &total), "cuMemGetInfo");
    if (double(free) >= bytes + double(1 << 30))
      return true;
    std::printf("[ SKIPPED  ] needs %.1f GiB of device memory, %.1f GiB free\n",
                bytes / double(1 << 30), double(free) / double(1 << 30));
    return false;
  }

  Kernel load(const std::string &package, const std::string &kernel) {
    packages.push_back(Package::load(std::string(TESSEL_KERNEL_PACKAGE_DIR) + "/" + package +
                                     ".tslpkg"));
    return Kernel::load(packages.back(), kernel);
  }

  HostArray random(int64_t n, float scale) {
    HostArray array(Storage::BF16, n);
    fillNormal(array, rng, scale);
    return array;
  }

  /// bf16 output rounding (2^-8 relative) plus an absolute floor.
  void expectNear(double got, double ref, const std::string &what) {
    EXPECT_TRUE(std::abs(got - ref) <= 0x1p-8 * std::abs(ref) + 1e-6)
        << what << ": got " << got << ", expected " << ref << " (seed " << seed << ")";
  }

  std::vector<Package> packages;
  unsigned seed = 0;
  std::mt19937 rng;
};

// out = a + b over n = 2^31 + 10017 elements (n is an i64 parameter; programs past 2^31 /
// 1024 address beyond i32).
TEST_F(LargeTensorTest, VectorAddPast2To31Elements) {
  const int64_t n = kTwo31 + 10017, region = 4096;
  if (!haveMemory(3.0 * double(n) * 2))
    return;
  Kernel kernel = load("vector_add_bf16", "vector_add");
  BigBuffer a(n, kFillByte), b(n, kFillByte), out(n, 0xFF);
  std::vector<int64_t> starts = {0, kTwo31 - region / 2, n - region};
  std::vector<HostArray> as, bs;
  for (int64_t start : starts) {
    as.push_back(random(region, 1.f));
    bs.push_back(random(region, 1.f));
    a.write(start, as.back());
    b.write(start, bs.back());
  }
  kernel.launch(Grid((n + 1023) / 1024), {out.pointer(), a.pointer(), b.pointer(), n});
  for (size_t r = 0; r < starts.size(); ++r) {
    HostArray got = out.read(starts[r], region);
    for (int64_t i = 0; i < region; ++i)
      expectNear(got.get(i), double(as[r].get(i)) + double(bs[r].get(i)),
                 "out[" + std::to_string(starts[r] + i) + "]");
  }
  // The bulk between the regions: a sample of fill + fill.
  for (int64_t i : {int64_t(1) << 20, kTwo31 - (int64_t(1) << 20), kTwo31 + 4096})
    expectNear(out.read(i, 1).get(0), double(kFill) * 2, "out[" + std::to_string(i) + "]");
}

// Row softmax over 4097 columns (row stride 4100, not a multiple of the tile) and enough
// rows that the input and output pass 2^31 elements: row * stride wraps in i32.
TEST_F(LargeTensorTest, SoftmaxRowsPast2To31Elements) {
  const int64_t cols = 4097, stride = 4100, rows = kTwo31 / stride + 5, n = rows * stride;
  if (!haveMemory(2.0 * double(n) * 2))
    return;
  Kernel kernel = load("softmax_bf16", "softmax");
  // The configuration with the smallest BLOCK that holds a row (the others are pruned).
  int config = -1;
  int64_t block = 0;
  for (const Config &candidate : kernel.info().configs)
    if (candidate["BLOCK"] >= cols && (config < 0 || candidate["BLOCK"] < block)) {
      config = candidate.index;
      block = candidate["BLOCK"];
    }
  ASSERT_GE(config, 0);
  BigBuffer in(n, kFillByte), out(n, 0xFF);
  std::vector<int64_t> checked = {0, kTwo31 / stride, kTwo31 / stride + 1, rows - 1};
  std::vector<HostArray> inputs;
  for (int64_t row : checked) {
    inputs.push_back(random(cols, 3.f));
    in.write(row * stride, inputs.back());
  }
  kernel.launch(Grid(rows),
                {out.pointer(), in.pointer(), int32_t(stride), int32_t(stride), int32_t(cols)},
                nullptr, config);
  for (size_t r = 0; r < checked.size(); ++r) {
    HostArray got = out.read(checked[r] * stride, stride);
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      mx = std::max(mx, double(inputs[r].get(c)));
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(double(inputs[r].get(c)) - mx);
    for (int64_t c = 0; c < cols; ++c)
      expectNear(got.get(c), std::exp(double(inputs[r].get(c)) - mx) / sum,
                 "row " + std::to_string(checked[r]) + " col " + std::to_string(c));
    for (int64_t c = cols; c < stride; ++c)
      EXPECT_TRUE(std::isnan(got.get(c))) << "padding of row " << checked[r] << " was written";
  }
  // Rows left constant, before and past 2^31 elements: every column 1 / cols.
  for (int64_t row : {int64_t(1000), kTwo31 / stride + 3})
    expectNear(out.read(row * stride + 5, 1).get(0), 1.0 / double(cols),
               "constant row " + std::to_string(row));
}

// C = A B with C of 65541 x 32776 (2^31 + 2.5M elements, a vocabulary-sized product):
// rm * stride_c wraps in i32. A and B are small and random; rows of C are checked where
// they start near 2^31 and at the end.
TEST_F(LargeTensorTest, MatmulOutputPast2To31Elements) {
  const int64_t m = 65541, n = 32776, k = 64;
  if (!haveMemory(double(m * n) * 2))
    return;
  Kernel kernel = load("matmul_bf16", "matmul");
  HostArray a = random(m * k, 1.f), b = random(k * n, 1.f);
  DeviceArray dA(a), dB(b);
  BigBuffer c(m * n, 0xFF);
  int config = 0;
  ConfigFit fit = kernel.checkConfig(config);
  ASSERT_TRUE(fit.fits) << fit.reason;
  int64_t bm = 0, bn = 0;
  for (auto &[name, value] : kernel.info().configs[size_t(config)].constexprs) {
    if (name == "BLOCK_M")
      bm = value.asInt();
    if (name == "BLOCK_N")
      bn = value.asInt();
  }
  kernel.launch(Grid(((m + bm - 1) / bm) * ((n + bn - 1) / bn)),
                {c.pointer(), dA.pointer(), dB.pointer(), int32_t(m), int32_t(n), int32_t(k),
                 int32_t(k), int32_t(n), int32_t(n)},
                nullptr, config);
  for (int64_t row : {int64_t(0), kTwo31 / n - 1, kTwo31 / n, kTwo31 / n + 1, m - 1}) {
    HostArray got = c.read(row * n, n);
    int64_t bad = 0;
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        double product = double(a.get(row * k + p)) * double(b.get(p * n + j));
        ref += product;
        scale += std::abs(product);
      }
      double bound = 0x1p-8 * std::abs(ref) + double(k) * 0x1p-22 * scale;
      if (!(std::abs(got.get(j) - ref) <= bound) && bad++ < 3)
        ADD_FAILURE() << "C[" << row << ", " << j << "] = " << got.get(j) << ", expected "
                      << ref << " (seed " << seed << ")";
    }
    EXPECT_EQ(bad, 0) << "row " << row;
  }
}

} // namespace
