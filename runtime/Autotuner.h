//===- runtime/Autotuner.h - Autotuned kernels ------------------*- C++ -*-===//
//
// tessel::TunedKernel is the launch API most programs use: a package kernel
// whose tile configuration is chosen per autotune key, like Triton's
// @triton.autotune:
//
//   tessel::TunedKernel softmax = tessel::TunedKernel::load(package, "softmax");
//   softmax.launch(nRows, {out, inp, stride, nCols}, stream);
//   add.launch([&](const tessel::Config &c) { return tessel::cdiv(n, c["BLOCK"]); },
//              {out, x, y, n}, stream);
//
// The first launch with a new key (the values of the package's autotune_key
// params plus which arguments are 16-divisible) tunes: configs pruned by the
// package's prune condition or that do not fit the device are dropped (with
// reasons), the rest are timed on the caller's arguments and stream with CUDA
// events (warm-up, then the median of several runs), restoring in-place
// outputs before every run; the fastest is remembered in memory and in the
// on-disk cache (TuningCache.h). Later launches with that key are an argument
// pack, a lock-free hash lookup and cuLaunchKernel.
//
// Environment: TESSEL_AUTOTUNE=0 takes the first config that fits (no
// timing, no disk cache); TESSEL_PRINT_AUTOTUNING=1 prints every config's
// time and the choice; TESSEL_CACHE_DIR moves the cache (default
// ~/.cache/tessel).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_AUTOTUNER_H
#define TESSEL_RUNTIME_AUTOTUNER_H

#include "runtime/Kernel.h"
#include "runtime/KernelConfig.h"
#include "runtime/TuningCache.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel {

/// ceil(a / b) for grid computations.
constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct TuneOptions {
  /// The device to run on; negative: the device of the current context at
  /// each launch (one tuning state per device).
  int device = -1;
  /// Pointer params to restore before each timing run, on top of the
  /// package's autotune_restore (Triton's restore_value).
  std::vector<std::string> restore;
  /// Bytes to save per restored param; by default from the param's pointer
  /// to the end of its allocation (cuMemGetAddressRange), which is always
  /// enough.
  std::vector<std::pair<std::string, size_t>> restoreBytes;
  /// An extra prune condition (same language and names as the package's
  /// autotune_prune, see ConfigExpr.h), or-ed with the package's.
  std::string prune;
  /// Unset: from the environment (TESSEL_AUTOTUNE, TESSEL_PRINT_AUTOTUNING,
  /// TESSEL_CACHE_DIR). An empty cacheDir disables the disk cache.
  std::optional<bool> autotune;
  std::optional<bool> print;
  std::optional<std::string> cacheDir;
  /// Untimed launches per config before timing, and timed runs (median).
  int warmup = 3;
  int repeats = 10;
  /// Progress lines on the log once tuning one key takes longer than this.
  double progressAfterSeconds = 2.0;
  /// Where prints, progress and warnings go (default: stderr).
  std::function<void(const std::string &)> log;
};

/// How one config fared when a key was tuned.
struct ConfigTiming {
  int config = 0;
  /// Median time in ms; negative when not timed.
  double ms = -1;
  /// Why it was not timed ("pruned: ...", "does not fit: ..."); empty when timed.
  std::string skipped;
};

/// One tuning decision.
struct TuningResult {
  /// The key as text: "n_cols=4096; aligned=out,inp".
  std::string key;
  int device = 0;
  int config = 0;
  /// "timed", "cache" (the disk cache), "first-valid" (TESSEL_AUTOTUNE=0),
  /// "only-valid" (one config survived pruning).
  std::string source;
  /// Per config; empty when the choice came from the cache.
  std::vector<ConfigTiming> timings;
  double tuningSeconds = 0;
};

/// Counters, for tests and the benchmark.
struct TuneStats {
  int tunings = 0;       // keys decided by timing
  int cacheHits = 0;     // keys decided by the disk cache
  int untimed = 0;       // keys decided without timing (first/only valid)
  int timedLaunches = 0; // launches made while timing (warm-up included)
  int cacheWrites = 0;
};

/// A grid given by value or computed from the chosen config, without
/// allocating (a reference to the caller's callable).
class GridRef {
public:
  GridRef(Grid grid) : fixed_(grid) {}
  GridRef(int64_t x) : fixed_(x) {}
  GridRef(int64_t x, int64_t y, int64_t z = 1) : fixed_(x, y, z) {}
  template <typename F,
            std::enable_if_t<std::is_invocable_r_v<Grid, const F &,
                                                   const Config &>,
                             int> = 0>
  GridRef(const F &function)
      : fixed_(0), object_(&function), call_([](const void *object,
                                                const Config &config) {
          return Grid(
              (*static_cast<const F *>(object))(config));
        }) {}

  Grid operator()(const Config &config) const {
    return call_ ? call_(object_, config) : fixed_;
  }

private:
  Grid fixed_;
  const void *object_ = nullptr;
  Grid (*call_)(const void *, const Config &) = nullptr;
};

class TunedKernel {
public:
  TunedKernel() = default;

  /// Kernel `name` of `package`. Throws when the driver is unavailable, the
  /// kernel does not exist, or a restore param is not a pointer param.
  static TunedKernel load(const Package &package, std::string_view name,
                          TuneOptions options = {});

  explicit operator bool() const { return impl_ != nullptr; }
  const KernelInfo &info() const;
  const std::string &name() const { return info().name; }
  int configCount() const;
  const Config &config(int index) const;

  /// Launches with the tuned config for these arguments on `stream`. The
  /// grid is a number, {x, y, z} or a callable `Grid(const Config &)`.
  /// Throws tessel::Error for argument errors (naming the parameter), when
  /// every config is pruned or does not fit, and for driver errors.
  void launch(GridRef grid, std::initializer_list<Arg> args,
              CUstream stream = nullptr) const {
    launch(grid, args.begin(), args.size(), stream);
  }
  void launch(GridRef grid, const std::vector<Arg> &args,
              CUstream stream = nullptr) const {
    launch(grid, args.data(), args.size(), stream);
  }
  void launch(GridRef grid, const Arg *args, size_t count,
              CUstream stream) const;
  void operator()(GridRef grid, std::initializer_list<Arg> args,
                  CUstream stream = nullptr) const {
    launch(grid, args.begin(), args.size(), stream);
  }

  /// The config a launch with these arguments uses, tuning first if needed
  /// (the timing runs launch the kernel; nothing else is launched).
  const Config &choose(GridRef grid, std::initializer_list<Arg> args,
                       CUstream stream = nullptr) const;

  /// Every decision taken so far in this process, oldest first.
  std::vector<TuningResult> results() const;
  TuneStats stats() const;
  /// The key text a launch with these arguments has ("n=4096; aligned=out").
  std::string keyText(std::initializer_list<Arg> args) const;
  /// The underlying Kernel on `device` (negative: the current one).
  Kernel kernel(int device = -1) const;

  class Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace tessel

#endif // TESSEL_RUNTIME_AUTOTUNER_H
