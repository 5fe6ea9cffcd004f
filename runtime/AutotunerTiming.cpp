//===- runtime/AutotunerTiming.cpp - Timing a kernel's configurations -----===//
//
// Each configuration that fits is warmed up, then timed with CUDA events over repeated
// launches, with the params the kernel overwrites restored before every run, so that every
// run sees the caller's data; the fastest median wins. The runs go in rounds, each round
// one run of every configuration, back to back, each between its own pair of events; the
// host waits once, at the end. Timing the configurations one after the other ranked the
// first ones ahead (they ran on a cooler GPU: attention's d 128 forward picked a tile that
// is 7-16% slower in sustained runs), and waiting after every run left the GPU idle
// between runs.
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
  std::vector<CUevent> events;
  std::vector<CUdeviceptr> copies;
  explicit TimingResources(Driver &driver) : driver(driver) {}
  ~TimingResources() {
    for (CUevent event : events)
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

  // Warm every configuration up first (a grid function that throws or a grid out of
  // range is the caller's error, not the config's: it propagates).
  struct Candidate {
    int config;
    Grid grid;
    std::vector<CUevent> starts, ends; // one pair per timed run
    bool failed = false;
  };
  std::vector<Candidate> candidates;
  int launches = 0;
  bool progressShown = false;
  auto fail = [&](int c, const Error &error) {
    result.timings[size_t(c)].skipped = std::string("failed: ") + error.what();
    result.timings[size_t(c)].ms = -1;
  };
  for (int c : valid) {
    Grid g = grid(info.configs[size_t(c)]);
    checkGrid(g, info.name);
    try {
      d.kernel.preload(c);
      for (int w = 0; w < warmup; ++w) {
        restore();
        d.kernel.launchPacked(g, packed, stream, c);
        ++launches;
      }
      candidates.push_back({c, g, {}, {}});
    } catch (const Error &error) {
      fail(c, error);
    }
  }
  for (Candidate &candidate : candidates)
    for (std::vector<CUevent> *events : {&candidate.starts, &candidate.ends})
      for (int r = 0; r < repeats; ++r) {
        CUevent event = nullptr;
        drv.check(drv.eventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
        resources.events.push_back(event);
        events->push_back(event);
      }
  // Rounds: each runs every configuration once (see the top of the file).
  for (int r = 0; r < repeats; ++r) {
    for (Candidate &candidate : candidates) {
      if (candidate.failed)
        continue;
      try {
        restore();
        drv.check(drv.eventRecord(candidate.starts[size_t(r)], stream), "cuEventRecord");
        d.kernel.launchPacked(candidate.grid, packed, stream, candidate.config);
        ++launches;
        drv.check(drv.eventRecord(candidate.ends[size_t(r)], stream), "cuEventRecord");
      } catch (const Error &error) {
        fail(candidate.config, error);
        candidate.failed = true;
      }
    }
    double elapsed = secondsSince(start);
    if (elapsed > progressAfterSeconds && r + 1 < repeats) {
      char line[160];
      std::snprintf(line, sizeof(line), "round %d/%d of %zu configs, %.1f s", r + 1, repeats,
                    candidates.size(), elapsed);
      log("tessel: autotuning " + info.name + " [" + result.key + "]: " + line);
      progressShown = true;
    }
  }
  drv.check(drv.streamSynchronize(stream), "cuStreamSynchronize");
  for (const Candidate &candidate : candidates) {
    if (candidate.failed)
      continue;
    std::vector<float> times;
    for (int r = 0; r < repeats; ++r) {
      float ms = 0;
      drv.check(drv.eventElapsedTime(&ms, candidate.starts[size_t(r)], candidate.ends[size_t(r)]),
                "cuEventElapsedTime");
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    result.timings[size_t(candidate.config)].ms =
        n % 2 ? times[n / 2] : (double(times[n / 2 - 1]) + times[n / 2]) / 2;
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
