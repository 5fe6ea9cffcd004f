//===- test/unit/AutotunerTest.cpp - The tuner's control flow on a fake driver ===//
//
// TunedKernel against FakeCuda.cpp: each config's PTX declares how long a
// launch takes ("// time_us N", seen through fake CUDA events) and the kernel
// increments *out ("// increments param 0"), so these tests check which config
// wins, what is pruned or does not fit and why, that in-place outputs are
// restored, the environment switches, the disk cache (hits, invalidation,
// corrupt files), grids computed from the config, argument errors and
// concurrent first launches.
//
//===----------------------------------------------------------------------===//
#include "UseFakeDriver.h"

#include "package/PackageBuilder.h"
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <thread>

using namespace tessel;

namespace {
constexpr int kWarmup = 2, kRepeats = 5;

/// inc(out: *i32, x: *f32, n: i32) with BLOCK in {128, 256, 512, 1024}:
/// 50, 20, 30 us per launch; BLOCK=1024 needs more shared memory than the
/// device has. Config 1 (BLOCK=256) is the fastest that runs.
Package incPackage(int slowest = 50) {
  PackageBuilder builder("inc.tslpkg");
  builder.kernel("inc",
                 {{"out", ParamKind::Pointer, DType::I32},
                  {"x", ParamKind::Pointer, DType::F32},
                  {"n", ParamKind::Scalar, DType::I32}},
                 {"BLOCK"}, {"n"});
  int times[] = {slowest, 20, 30, 10};
  for (int c = 0; c < 4; ++c) {
    int block = 128 << c;
    std::string entry = "inc_" + std::to_string(block);
    builder.config({{"BLOCK", Json(block)}});
    builder.variant(entry,
                    ".version 8.0\n// params 3\n// increments param 0\n// time_us " +
                        std::to_string(times[c]) + "\n.visible .entry " + entry +
                        "(...)\n{\n ret;\n}\n")
        .sharedBytes = c == 3 ? 300000 : 0;
  }
  return builder.build();
}

std::string makeTempDir() {
  char pattern[] = "/tmp/tessel-autotuner-test-XXXXXX";
  return mkdtemp(pattern);
}

std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const Error &error) {
    return error.what();
  }
  return "(no error)";
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

class Autotuner : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(Driver::isAvailable()) << Driver::unavailableReason();
    fake().reset();
    Driver &driver = Driver::get();
    ASSERT_EQ(driver.memAlloc(&out, 64), CUDA_SUCCESS);
    setOut(0);
    cacheDir = makeTempDir();
  }
  void TearDown() override { Driver::get().memFree(out); }

  TuneOptions options() {
    TuneOptions o;
    o.cacheDir = cacheDir;
    o.warmup = kWarmup;
    o.repeats = kRepeats;
    o.autotune = true;
    o.print = false;
    o.log = [this](const std::string &line) { log.push_back(line); };
    return o;
  }
  void setOut(int32_t value) {
    Driver::get().memcpyHtoD(out, &value, sizeof(value));
  }
  int32_t outValue() {
    int32_t value = 0;
    Driver::get().memcpyDtoH(&value, out, sizeof(value));
    return value;
  }
  std::string logText() const {
    std::string text;
    for (const std::string &line : log)
      text += line + "\n";
    return text;
  }
  void *outPtr() const { return reinterpret_cast<void *>(uintptr_t(out)); }

  CUdeviceptr out = 0;
  alignas(16) float x[16] = {};
  std::string cacheDir;
  std::vector<std::string> log;
};
} // namespace

TEST_F(Autotuner, TimesEveryFittingConfigAndPicksTheFastest) {
  TunedKernel inc = TunedKernel::load(incPackage(), "inc", options());
  int n = 1000;
  auto grid = [&](const Config &c) { return cdiv(n, c["BLOCK"]); };
  inc.launch(grid, {outPtr(), x, n});

  std::vector<TuningResult> results = inc.results();
  ASSERT_EQ(results.size(), 1u);
  const TuningResult &r = results[0];
  EXPECT_EQ(r.source, "timed");
  EXPECT_EQ(r.config, 1);
  EXPECT_EQ(r.key, "n=1000; aligned=out,x");
  ASSERT_EQ(r.timings.size(), 4u);
  EXPECT_NEAR(r.timings[0].ms, 0.050, 1e-6);
  EXPECT_NEAR(r.timings[1].ms, 0.020, 1e-6);
  EXPECT_NEAR(r.timings[2].ms, 0.030, 1e-6);
  EXPECT_LT(r.timings[3].ms, 0);
  EXPECT_TRUE(contains(r.timings[3].skipped,
                       "does not fit: inc config 3 (BLOCK=1024 num_warps=4 "
                       "num_stages=1) needs 300000 bytes of shared memory"))
      << r.timings[3].skipped;
  TuneStats stats = inc.stats();
  EXPECT_EQ(stats.tunings, 1);
  EXPECT_EQ(stats.timedLaunches, 3 * (kWarmup + kRepeats));
  EXPECT_EQ(stats.cacheWrites, 1);

  // The real launch: the chosen config, its grid.
  ASSERT_FALSE(fake().launches.empty());
  EXPECT_EQ(fake().launches.back().entry, "inc_256");
  EXPECT_EQ(fake().launches.back().grid[0], 4u); // cdiv(1000, 256)
  EXPECT_EQ(fake().launches.back().block[0], 128u);
  EXPECT_EQ(fake().eventsCreated, fake().eventsDestroyed);

  // Same key: one more launch, no tuning. New key: tunes again.
  size_t launches = fake().launches.size();
  inc.launch(grid, {outPtr(), x, n});
  EXPECT_EQ(fake().launches.size(), launches + 1);
  EXPECT_EQ(inc.stats().tunings, 1);
  n = 5000;
  inc.launch(grid, {outPtr(), x, n});
  EXPECT_EQ(inc.stats().tunings, 2);
  EXPECT_EQ(fake().launches.back().grid[0], 20u); // cdiv(5000, 256)
  EXPECT_EQ(inc.choose(grid, {outPtr(), x, n}).text(),
            "BLOCK=256 num_warps=4 num_stages=1");
}

TEST_F(Autotuner, KeyIncludesArgumentAlignment) {
  TunedKernel inc = TunedKernel::load(incPackage(), "inc", options());
  void *misaligned = reinterpret_cast<char *>(x) + 4;
  EXPECT_EQ(inc.keyText({outPtr(), x, 64}), "n=64; aligned=out,x,n");
  EXPECT_EQ(inc.keyText({outPtr(), misaligned, 64}), "n=64; aligned=out,n");
  inc.launch(1, {outPtr(), x, 64});
  inc.launch(1, {outPtr(), misaligned, 64});
  EXPECT_EQ(inc.stats().tunings, 2);
}

TEST_F(Autotuner, RestoresInPlaceOutputs) {
  // Without restore every timing run increments *out.
  {
    TunedKernel inc = TunedKernel::load(incPackage(), "inc", options());
    inc.launch(1, {outPtr(), x, 10});
    EXPECT_EQ(outValue(), 3 * (kWarmup + kRepeats) + 1);
  }
  // From the package (autotune_restore) ...
  Package package = incPackage();
  package.kernels[0].autotuneRestore = {"out"};
  setOut(41);
  TunedKernel fromPackage = TunedKernel::load(package, "inc", options());
  fromPackage.launch(1, {outPtr(), x, 11});
  EXPECT_EQ(outValue(), 42);
  // ... or from the API, with an explicit size.
  setOut(7);
  TuneOptions o = options();
  o.restoreBytes = {{"out", 4}};
  TunedKernel fromApi = TunedKernel::load(incPackage(), "inc", o);
  fromApi.launch(1, {outPtr(), x, 12});
  EXPECT_EQ(outValue(), 8);
  EXPECT_EQ(fromApi.stats().tunings, 1);
}

TEST_F(Autotuner, PruneConditionDropsConfigsPerKey) {
  Package package = incPackage();
  package.kernels[0].autotunePrune = "BLOCK > n";
  TunedKernel inc = TunedKernel::load(package, "inc", options());
  // n = 300: BLOCK 512 and 1024 pruned; 128 and 256 timed.
  inc.launch(1, {outPtr(), x, 300});
  TuningResult r = inc.results().back();
  EXPECT_EQ(r.source, "timed");
  EXPECT_EQ(r.config, 1);
  EXPECT_EQ(r.timings[2].skipped, "pruned by 'BLOCK > n'");
  // n = 200: only BLOCK=128 survives: chosen without timing.
  inc.launch(1, {outPtr(), x, 200});
  r = inc.results().back();
  EXPECT_EQ(r.source, "only-valid");
  EXPECT_EQ(r.config, 0);
  EXPECT_EQ(inc.stats().timedLaunches, 2 * (kWarmup + kRepeats));
  // n = 100: nothing survives: an error with every reason.
  std::string error = errorOf([&] { inc.launch(1, {outPtr(), x, 100}); });
  EXPECT_TRUE(contains(error, "inc: no configuration can run for "
                              "[n=100; aligned=out,x] on Fake GPU:\n"
                              "  config 0 (BLOCK=128 num_warps=4 "
                              "num_stages=1): pruned by 'BLOCK > n'"))
      << error;
}

TEST_F(Autotuner, ExplicitLaunchOfAPrunedConfigIsRefused) {
  // The package's prune condition also guards Kernel::launch with an explicit config
  // (softmax with a block shorter than the row would leave columns unwritten).
  Package package = incPackage();
  package.kernels[0].autotunePrune = "BLOCK < n";
  Kernel inc = Kernel::load(package, "inc");
  std::string error = errorOf([&] { inc.launch(1, {outPtr(), x, 300}, nullptr, 0); });
  EXPECT_EQ(error, "inc: config 0 (BLOCK=128 num_warps=4 num_stages=1) cannot serve this "
                   "launch: pruned by 'BLOCK < n' (the autotuner skips it; launch another "
                   "config or the TunedKernel)");
  setOut(41);
  EXPECT_NO_THROW(inc.launch(1, {outPtr(), x, 300}, nullptr, 2)); // BLOCK=512 >= 300
  EXPECT_EQ(outValue(), 42);
}

TEST_F(Autotuner, PruneFromTheApiIsOredWithThePackages) {
  Package package = incPackage();
  package.kernels[0].autotunePrune = "BLOCK == 256";
  TuneOptions o = options();
  o.prune = "BLOCK > n";
  TunedKernel inc = TunedKernel::load(package, "inc", o);
  inc.launch(1, {outPtr(), x, 300}); // 256 (package) and 512 (API) pruned
  TuningResult r = inc.results().back();
  EXPECT_EQ(r.source, "only-valid");
  EXPECT_EQ(r.config, 0);
  EXPECT_EQ(r.timings[1].skipped, "pruned by '(BLOCK == 256) or (BLOCK > n)'");
  o.prune = "BLOCK > m";
  EXPECT_EQ(errorOf([&] { TunedKernel::load(package, "inc", o); }),
            "TuneOptions::prune 'BLOCK > m' uses 'm', which is not one of "
            "BLOCK, num_warps, num_stages, warp_specialize, n");
}

TEST_F(Autotuner, AutotuneOffTakesTheFirstValidConfig) {
  TuneOptions o = options();
  o.autotune = false;
  Package package = incPackage();
  package.kernels[0].autotunePrune = "BLOCK < 256"; // config 0 pruned
  TunedKernel inc = TunedKernel::load(package, "inc", o);
  inc.launch(1, {outPtr(), x, 1000});
  EXPECT_EQ(inc.results().back().source, "first-valid");
  EXPECT_EQ(inc.results().back().config, 1);
  EXPECT_EQ(inc.stats().timedLaunches, 0);
  EXPECT_EQ(inc.stats().cacheWrites, 0);

  // The same through the environment.
  ::setenv("TESSEL_AUTOTUNE", "0", 1);
  TuneOptions fromEnv = options();
  fromEnv.autotune.reset();
  TunedKernel viaEnv = TunedKernel::load(incPackage(), "inc", fromEnv);
  ::unsetenv("TESSEL_AUTOTUNE");
  viaEnv.launch(1, {outPtr(), x, 1000});
  EXPECT_EQ(viaEnv.results().back().source, "first-valid");
  EXPECT_EQ(viaEnv.results().back().config, 0);
}

TEST_F(Autotuner, PrintAutotuningShowsEveryConfigAndTheChoice) {
  ::setenv("TESSEL_PRINT_AUTOTUNING", "1", 1);
  TuneOptions o = options();
  o.print.reset();
  TunedKernel inc = TunedKernel::load(incPackage(), "inc", o);
  ::unsetenv("TESSEL_PRINT_AUTOTUNING");
  inc.launch(1, {outPtr(), x, 1000});
  std::string text = logText();
  EXPECT_TRUE(contains(text, "tessel: inc [n=1000; aligned=out,x] on Fake GPU: "
                             "tuned in "))
      << text;
  EXPECT_TRUE(contains(
      text, "tessel:   config 0 (BLOCK=128 num_warps=4 num_stages=1): 0.0500 ms"))
      << text;
  EXPECT_TRUE(contains(
      text, "tessel:   config 1 (BLOCK=256 num_warps=4 num_stages=1): 0.0200 ms"))
      << text;
  EXPECT_TRUE(contains(text, "config 3 (BLOCK=1024 num_warps=4 num_stages=1): "
                             "does not fit"))
      << text;
  EXPECT_TRUE(contains(text, "tessel:   -> config 1 (BLOCK=256 num_warps=4 "
                             "num_stages=1)"))
      << text;
}

// A GPU whose launches slow down as it runs (clocks falling as it warms): configs timed
// one after the other would favour the first (config 0, 21 us, measured before config 1,
// 20 us, had the GPU slow down); in rounds both see the same stretch, and config 1 wins.
TEST_F(Autotuner, ASlowingGpuDoesNotFavourTheConfigsTimedFirst) {
  fake().slowdownUsPerLaunch = 0.5;
  TunedKernel inc = TunedKernel::load(incPackage(21), "inc", options());
  inc.launch(1, {outPtr(), x, 1000});
  fake().slowdownUsPerLaunch = 0;
  EXPECT_EQ(inc.results().back().config, 1);
}

TEST_F(Autotuner, LongTuningShowsProgress) {
  TuneOptions o = options();
  o.progressAfterSeconds = 0;
  TunedKernel inc = TunedKernel::load(incPackage(), "inc", o);
  inc.launch(1, {outPtr(), x, 1000});
  std::string text = logText();
  EXPECT_TRUE(contains(text, "tessel: autotuning inc [n=1000; aligned=out,x]: round 1/" +
                                 std::to_string(kRepeats) + " of 3 configs"))
      << text;
  EXPECT_TRUE(contains(text, "done, config 1")) << text;
}

TEST_F(Autotuner, SecondProcessStartsFromTheDiskCache) {
  {
    TunedKernel first = TunedKernel::load(incPackage(), "inc", options());
    first.launch(1, {outPtr(), x, 1000});
    EXPECT_EQ(first.stats().cacheWrites, 1);
  }
  // A new TunedKernel (as in a new process): no timing at all.
  TunedKernel second = TunedKernel::load(incPackage(), "inc", options());
  second.launch(1, {outPtr(), x, 1000});
  EXPECT_EQ(second.stats().cacheHits, 1);
  EXPECT_EQ(second.stats().timedLaunches, 0);
  EXPECT_EQ(second.results().back().source, "cache");
  EXPECT_EQ(second.results().back().config, 1);
  EXPECT_EQ(fake().launches.back().entry, "inc_256");

  // A changed package (new hash) does not reuse it: now config 0 is fastest.
  TunedKernel changed = TunedKernel::load(incPackage(5), "inc", options());
  changed.launch(1, {outPtr(), x, 1000});
  EXPECT_EQ(changed.results().back().source, "timed");
  EXPECT_EQ(changed.results().back().config, 0);
  EXPECT_TRUE(log.empty()) << logText();
}

TEST_F(Autotuner, CorruptCacheFileIsWarnedAboutAndRewritten) {
  TunedKernel first = TunedKernel::load(incPackage(), "inc", options());
  first.launch(1, {outPtr(), x, 1000});
  TuningKey key{"inc", first.kernel().packageHash(), "n=1000; aligned=out,x",
                "Fake GPU", 13000};
  std::string path = TuningCache(cacheDir).pathFor(key);
  std::ofstream(path, std::ios::trunc) << "{\"format\": \"tessel-autotune\", \"ver";

  TunedKernel second = TunedKernel::load(incPackage(), "inc", options());
  second.launch(1, {outPtr(), x, 1000});
  ASSERT_EQ(log.size(), 1u) << logText();
  EXPECT_TRUE(contains(log[0], "tessel: warning: ignoring autotune cache file " +
                                   path))
      << log[0];
  EXPECT_EQ(second.results().back().source, "timed");
  EXPECT_EQ(TuningCache(cacheDir).load(key)->config, 1);

  // A cached config that is no longer valid for the package is not trusted.
  TuningRecord stale{3, "BLOCK=1024 num_warps=4 num_stages=1", {}};
  TuningCache(cacheDir).store(key, stale);
  log.clear();
  TunedKernel third = TunedKernel::load(incPackage(), "inc", options());
  third.launch(1, {outPtr(), x, 1000});
  ASSERT_EQ(log.size(), 1u) << logText();
  EXPECT_TRUE(contains(log[0], "config 3 does not fit")) << log[0];
  EXPECT_EQ(third.results().back().config, 1);
}

TEST_F(Autotuner, ArgumentErrorsNameTheParameter) {
  TunedKernel inc = TunedKernel::load(incPackage(), "inc", options());
  EXPECT_EQ(errorOf([&] { inc.launch(1, {outPtr(), x}); }),
            "inc expects 3 arguments (out, x, n), got 2");
  EXPECT_EQ(errorOf([&] { inc.launch(1, {outPtr(), x, 1.5f}); }),
            "argument 3 'n' of inc: expected i32, got f32");
  EXPECT_EQ(errorOf([&] { inc.launch(1, {outPtr(), 3, 4}); }),
            "argument 2 'x' of inc: expected a pointer (*f32), got i32 3");
  EXPECT_EQ(errorOf([&] {
              inc.launch([](const Config &c) { return c["BLOCKK"]; },
                         {outPtr(), x, 4});
            }),
            "config 0 (BLOCK=128 num_warps=4 num_stages=1) has no constexpr 'BLOCKK' (it has: BLOCK)");
  TuneOptions o = options();
  o.restore = {"n"};
  EXPECT_EQ(errorOf([&] { TunedKernel::load(incPackage(), "inc", o); }),
            "TuneOptions::restore names 'n', which is not a pointer param of "
            "inc(out: *i32, x: *f32, n: i32)");
  EXPECT_EQ(errorOf([&] { TunedKernel().launch(1, {}); }),
            "tessel::TunedKernel is empty (use TunedKernel::load)");
  EXPECT_EQ(errorOf([&] { inc.launch({1, 70000, 1}, {outPtr(), x, 4}); }),
            "grid of inc: y is 70000, expected a value in [0, 65535]");
}

TEST_F(Autotuner, ConcurrentFirstLaunchesTuneEachKeyOnce) {
  TunedKernel inc = TunedKernel::load(incPackage(), "inc", options());
  constexpr int kThreads = 4, kKeys = 8;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeys * 4; ++i) {
        int n = 1000 + (i + t) % kKeys;
        try {
          inc.launch([&](const Config &c) { return cdiv(n, c["BLOCK"]); },
                     {outPtr(), x, n});
        } catch (const Error &) {
          ++failures;
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(inc.stats().tunings, kKeys);
  EXPECT_EQ(inc.results().size(), size_t(kKeys));
  for (const TuningResult &r : inc.results())
    EXPECT_EQ(r.config, 1);
}

TEST_F(Autotuner, ManyKeysGrowTheTable) {
  TuneOptions o = options();
  o.autotune = false;
  TunedKernel inc = TunedKernel::load(incPackage(), "inc", o);
  for (int round = 0; round < 2; ++round)
    for (int n = 1; n <= 300; ++n)
      inc.launch(1, {outPtr(), x, n});
  EXPECT_EQ(inc.results().size(), 300u);
  EXPECT_EQ(inc.stats().untimed, 300);
}
