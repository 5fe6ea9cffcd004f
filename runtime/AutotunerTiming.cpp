//===- runtime/AutotunerTiming.cpp - Timing a kernel's configurations -----===//
//
// Each configuration that fits is warmed up, then timed with CUDA events over repeated
// launches, with the params the kernel overwrites restored before every run, so that every
// run sees the caller's data; the fastest median wins. The runs go back to back, each
// between its own pair of events, and the host waits once a configuration: a wait after
// every run leaves the GPU idle between them, which is not how a kernel runs in a model,
// and ranked a tile that is slower in sustained use first (attention's d 128 forward).
//
//===----------------------------------------------------------------------===//
#include "runtime/TunedKernelImpl.h"

#include <algorithm>
#include <cstdio>

using namespace tessel;
using namespace tessel::tuning;

namespace {
/// Destroys events and frees the restore copies however tuning ends.
struct TimingResources {
  Driver &driver;
  std::vector<CUevent> starts, ends; // one pair per timed run
  std::vector<CUdeviceptr> copies;
  explicit TimingResources(Driver &driver) : driver(driver) {}
  ~TimingResources() {
    for (CUevent event : starts)
      driver.eventDestroy(event);
    for (CUevent event : ends)
      driver.eventDestroy(event);
    for (CUdeviceptr copy : copies)
      driver.memFree(copy);
  }
};
} // namespace

void TunedKernel::Impl::time(DeviceState &d, const GridRef &grid,
                             const Arg *args, PackedArgs &packed,
                             CUstream stream, TuningResult &result,
                             const std::vector<int> &valid,
                             Clock::time_point start) {
  Driver &drv = *driver;
  ScopedContext scope(drv, drv.contextFor(d.device));
  TimingResources resources(drv);

  // Save what the kernel overwrites, so every run sees the caller's data.
  struct Saved {
    CUdeviceptr target, copy;
    size_t bytes;
  };
  std::vector<Saved> saved;
  for (size_t i = 0; i < restoreParams.size(); ++i) {
    const std::string &param = info.params[size_t(restoreParams[i])].name;
    CUdeviceptr target = CUdeviceptr(args[size_t(restoreParams[i])].address());
    if (!target)
      continue;
    size_t bytes = restoreBytes[i];
    if (bytes == 0) {
      CUdeviceptr base = 0;
      size_t size = 0;
      drv.check(drv.memGetAddressRange(&base, &size, target),
                "cuMemGetAddressRange(argument '" + param + "' of " +
                    info.name + ")",
                "the tuner restores '" + param +
                    "' between timing runs and needs its size: pass a device "
                    "allocation or set TuneOptions::restoreBytes");
      bytes = size_t(base + size - target);
    }
    CUdeviceptr copy = 0;
    drv.check(drv.memAlloc(&copy, bytes),
              "cuMemAlloc(" + std::to_string(bytes) +
                  " bytes to save argument '" + param + "' while autotuning " +
                  info.name + ")");
    resources.copies.push_back(copy);
    drv.check(drv.memcpyDtoDAsync(copy, target, bytes, stream),
              "cuMemcpyDtoDAsync(save '" + param + "')");
    saved.push_back({target, copy, bytes});
  }
  auto restore = [&] {
    for (const Saved &s : saved)
      drv.check(drv.memcpyDtoDAsync(s.target, s.copy, s.bytes, stream),
                "cuMemcpyDtoDAsync(restore)");
  };
  for (std::vector<CUevent> *events : {&resources.starts, &resources.ends})
    for (int r = 0; r < repeats; ++r) {
      CUevent event = nullptr;
      drv.check(drv.eventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
      events->push_back(event);
    }

  int launches = 0;
  size_t done = 0;
  bool progressShown = false;
  for (int c : valid) {
    ConfigTiming &timing = result.timings[size_t(c)];
    // A grid function that throws or a grid out of range is the caller's
    // error, not the config's: it propagates.
    Grid g = grid(info.configs[size_t(c)]);
    checkGrid(g, info.name);
    try {
      d.kernel.preload(c);
      for (int w = 0; w < warmup; ++w) {
        restore();
        d.kernel.launchPacked(g, packed, stream, c);
        ++launches;
      }
      for (int r = 0; r < repeats; ++r) {
        restore();
        drv.check(drv.eventRecord(resources.starts[size_t(r)], stream),
                  "cuEventRecord");
        d.kernel.launchPacked(g, packed, stream, c);
        ++launches;
        drv.check(drv.eventRecord(resources.ends[size_t(r)], stream),
                  "cuEventRecord");
      }
      drv.check(drv.eventSynchronize(resources.ends.back()),
                "cuEventSynchronize");
      std::vector<float> times;
      for (int r = 0; r < repeats; ++r) {
        float ms = 0;
        drv.check(drv.eventElapsedTime(&ms, resources.starts[size_t(r)],
                                       resources.ends[size_t(r)]),
                  "cuEventElapsedTime");
        times.push_back(ms);
      }
      std::sort(times.begin(), times.end());
      size_t n = times.size();
      timing.ms = n % 2 ? times[n / 2]
                        : (double(times[n / 2 - 1]) + times[n / 2]) / 2;
    } catch (const Error &error) {
      timing.skipped = std::string("failed: ") + error.what();
      timing.ms = -1;
    }
    ++done;
    double elapsed = secondsSince(start);
    if (elapsed > progressAfterSeconds && done < valid.size()) {
      char line[160];
      std::snprintf(line, sizeof(line), "%zu/%zu configs timed, %.1f s", done,
                    valid.size(), elapsed);
      log("tessel: autotuning " + info.name + " [" + result.key + "]: " + line);
      progressShown = true;
    }
  }
  restore();
  drv.check(drv.streamSynchronize(stream), "cuStreamSynchronize");
  {
    std::lock_guard<std::mutex> lock(resultsMutex);
    stats.timedLaunches += launches;
    ++stats.tunings;
  }

  int best = -1;
  for (int c : valid) {
    const ConfigTiming &timing = result.timings[size_t(c)];
    if (timing.skipped.empty() &&
        (best < 0 || timing.ms < result.timings[size_t(best)].ms))
      best = c;
  }
  if (best < 0) {
    std::string reasons;
    for (int c : valid)
      reasons += "\n  config " + std::to_string(c) + ": " +
                 result.timings[size_t(c)].skipped;
    throw Error(info.name + ": every configuration failed while autotuning [" +
                result.key + "]:" + reasons);
  }
  result.config = best;
  if (progressShown)
    log("tessel: autotuning " + info.name + " [" + result.key + "]: done, config " +
        std::to_string(best) + " (" + info.configs[size_t(best)].text() + ")");
}
