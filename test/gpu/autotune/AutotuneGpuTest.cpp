//===- test/gpu/autotune/AutotuneGpuTest.cpp - The autotuner on a real GPU ===//
//
// On the GPU: the tuner picks a config that fits and is not the deliberately
// slow one, restores the in-place output (the result is exactly one
// application), works on several streams and devices, and a second process
// starts from the disk cache with no timing runs (measured: both processes'
// start-to-first-result times are printed). Skips without a driver/device.
//
//===----------------------------------------------------------------------===//
#include "ScaleAddPackage.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace tessel;

#ifndef TESSEL_SCALE_ADD_PTX
#error "TESSEL_SCALE_ADD_PTX must name scale_add.ptx"
#endif

namespace {
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes) : driver_(Driver::get()) {
    driver_.check(driver_.memAlloc(&address_, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() { driver_.memFree(address_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *pointer() const { return reinterpret_cast<void *>(address_); }
  void upload(const std::vector<float> &data) {
    driver_.check(driver_.memcpyHtoD(address_, data.data(), data.size() * 4),
                  "cuMemcpyHtoD");
  }
  std::vector<float> download(size_t count) {
    std::vector<float> data(count);
    driver_.check(driver_.memcpyDtoH(data.data(), address_, count * 4),
                  "cuMemcpyDtoH");
    return data;
  }

private:
  Driver &driver_;
  CUdeviceptr address_ = 0;
};

std::string makeTempDir() {
  char pattern[] = "/tmp/tessel-autotune-gpu-XXXXXX";
  return mkdtemp(pattern);
}

/// Runs scale_add once through a fresh TunedKernel (cache in `cacheDir`) and
/// checks the result; returns false with a message on failure.
struct RunReport {
  double startToResultMs = 0;
  TuneStats stats;
  TuningResult result;
};

RunReport runOnce(const std::string &cacheDir, int n, CUstream stream,
                  bool print = false) {
  auto start = std::chrono::steady_clock::now();
  Driver::get().ensureCurrent(0);
  TuneOptions options;
  options.cacheDir = cacheDir;
  options.print = print;
  TunedKernel kernel = TunedKernel::load(
      test::scaleAddPackage(TESSEL_SCALE_ADD_PTX), "scale_add", options);
  std::vector<float> out(static_cast<size_t>(n)), x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    out[size_t(i)] = float(i % 97);
    x[size_t(i)] = float(i % 13);
  }
  DeviceBuffer outBuffer(size_t(n) * 4), xBuffer(size_t(n) * 4);
  outBuffer.upload(out);
  xBuffer.upload(x);
  float alpha = 2.0f;
  kernel.launch([&](const Config &c) { return test::scaleAddGrid(n, c); },
                {outBuffer.pointer(), xBuffer.pointer(), n, alpha}, stream);
  Driver &driver = Driver::get();
  driver.check(driver.streamSynchronize(stream), "cuStreamSynchronize");
  std::vector<float> result = outBuffer.download(size_t(n));
  RunReport report;
  report.startToResultMs = std::chrono::duration<double, std::milli>(
                               std::chrono::steady_clock::now() - start)
                               .count();
  for (int i = 0; i < n; ++i) {
    float expected = out[size_t(i)] * alpha + x[size_t(i)];
    if (result[size_t(i)] != expected)
      throw Error("element " + std::to_string(i) + " is " +
                  std::to_string(result[size_t(i)]) + ", expected " +
                  std::to_string(expected) +
                  " (was the in-place output restored between timing runs?)");
  }
  report.stats = kernel.stats();
  report.result = kernel.results().back();
  return report;
}

class AutotuneGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!Driver::isAvailable())
      GTEST_SKIP() << Driver::unavailableReason();
  }
};
} // namespace

TEST_F(AutotuneGpu, PicksAValidFastConfigAndRestoresTheOutput) {
  std::string dir = makeTempDir();
  RunReport report = runOnce(dir, 1 << 22, nullptr, /*print=*/true);
  const TuningResult &r = report.result;
  EXPECT_EQ(r.source, "timed");
  EXPECT_NE(r.config, 0) << "picked the deliberately slow config";
  EXPECT_NE(r.config, 3) << "picked a config that cannot fit";
  EXPECT_TRUE(r.timings[3].skipped.rfind("does not fit", 0) == 0)
      << r.timings[3].skipped;
  for (int c : {0, 1, 2, 4})
    EXPECT_GT(r.timings[size_t(c)].ms, 0) << c;
  EXPECT_GT(r.timings[0].ms, r.timings[size_t(r.config)].ms);
  std::printf("[ tuning   ] %.1f ms, %d timed launches\n",
              r.tuningSeconds * 1e3, report.stats.timedLaunches);
}

TEST_F(AutotuneGpu, WorksOnSeveralStreams) {
  Driver &driver = Driver::get();
  driver.ensureCurrent(0);
  std::string dir = makeTempDir();
  CUstream streams[2] = {};
  for (CUstream &stream : streams)
    driver.check(driver.streamCreate(&stream, CU_STREAM_NON_BLOCKING),
                 "cuStreamCreate");
  for (CUstream stream : streams)
    EXPECT_NO_THROW(runOnce(dir, 100000, stream));
  for (CUstream stream : streams)
    driver.streamDestroy(stream);
}

TEST_F(AutotuneGpu, TunesPerDevice) {
  Driver &driver = Driver::get();
  if (driver.deviceCount() < 2)
    GTEST_SKIP() << "one device";
  TuneOptions options;
  options.cacheDir = makeTempDir();
  TunedKernel kernel = TunedKernel::load(
      test::scaleAddPackage(TESSEL_SCALE_ADD_PTX), "scale_add", options);
  int n = 1 << 20;
  for (int device = 0; device < 2; ++device) {
    ScopedContext scope(driver, driver.contextFor(device));
    DeviceBuffer out(size_t(n) * 4), x(size_t(n) * 4);
    out.upload(std::vector<float>(size_t(n), 1.0f));
    x.upload(std::vector<float>(size_t(n), 1.0f));
    kernel.launch([&](const Config &c) { return test::scaleAddGrid(n, c); },
                  {out.pointer(), x.pointer(), n, 3.0f});
    driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");
    EXPECT_EQ(out.download(4), std::vector<float>(4, 4.0f));
  }
  std::vector<TuningResult> results = kernel.results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].device, 0);
  EXPECT_EQ(results[1].device, 1);
}

// Run by SecondProcessStartsFromTheCache in a child process.
TEST_F(AutotuneGpu, DISABLED_ChildProcess) {
  const char *cacheDir = std::getenv("TESSEL_CHILD_CACHE_DIR");
  const char *outPath = std::getenv("TESSEL_CHILD_REPORT");
  ASSERT_TRUE(cacheDir && outPath);
  RunReport report = runOnce(cacheDir, 1 << 22, nullptr);
  std::ofstream(outPath) << report.startToResultMs << " "
                         << report.stats.timedLaunches << " "
                         << report.stats.cacheHits << " "
                         << report.result.source << " "
                         << report.result.config << "\n";
}

TEST_F(AutotuneGpu, SecondProcessStartsFromTheCache) {
  std::string dir = makeTempDir();
  auto child = [&](const std::string &report) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("TESSEL_CHILD_CACHE_DIR", dir.c_str(), 1);
      ::setenv("TESSEL_CHILD_REPORT", report.c_str(), 1);
      ::execl("/proc/self/exe", "autotune-child",
              "--gtest_filter=AutotuneGpu.DISABLED_ChildProcess",
              "--gtest_also_run_disabled_tests", (char *)nullptr);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::ifstream in(report);
    double ms = 0;
    int timed = -1, hits = -1, config = -1;
    std::string source;
    in >> ms >> timed >> hits >> source >> config;
    return std::make_tuple(ms, timed, hits, source, config);
  };
  auto [coldMs, coldTimed, coldHits, coldSource, coldConfig] =
      child(dir + "/cold.txt");
  auto [warmMs, warmTimed, warmHits, warmSource, warmConfig] =
      child(dir + "/warm.txt");
  EXPECT_EQ(coldSource, "timed");
  EXPECT_GT(coldTimed, 0);
  EXPECT_EQ(warmSource, "cache");
  EXPECT_EQ(warmTimed, 0);
  EXPECT_EQ(warmHits, 1);
  EXPECT_EQ(warmConfig, coldConfig);
  std::printf("[ measured ] first process: %.1f ms from load to checked result "
              "(%d timed launches); second process: %.1f ms (%d timed launches, "
              "choice from the cache)\n",
              coldMs, coldTimed, warmMs, warmTimed);
}
