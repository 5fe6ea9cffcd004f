//===- KernelBench.h - timing and reporting shared by the kernel benchmarks -===//
//
// Each sample is one run of the work timed with CUDA events on the legacy default stream
// (where LibTorch and Tessel's launches both go); the median of the samples is reported.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_KERNELS_KERNELBENCH_H
#define TESSEL_BENCH_KERNELS_KERNELBENCH_H

#include "bench/tools/Report.h"
#include "runtime/Runtime.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

namespace tessel::bench {

/// The driver with LibTorch's primary context current on device 0, or nullptr after
/// printing why `tool` ("tessel-bench softmax") cannot time kernels here.
inline Driver *timingDriver(const char *tool) {
  if (!torch::cuda::is_available() || !Driver::isAvailable()) {
    std::cerr << tool << ": needs a GPU ("
              << (Driver::isAvailable() ? "LibTorch sees no CUDA device" : Driver::unavailableReason())
              << ")\n";
    return nullptr;
  }
  Driver &driver = Driver::get();
  torch::zeros({1}, torch::kCUDA); // LibTorch's primary context becomes current
  driver.ensureCurrent(0);
  return &driver;
}

/// The median (the upper one of an even count) of `values`, not empty.
inline double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Median ms of `samples` runs after `warmup` untimed ones. `run` takes the run's index
/// (to rotate inputs) or nothing.
template <typename Fn>
double medianMs(Driver &driver, int64_t warmup, int64_t samples, Fn run) {
  auto once = [&](int64_t i) {
    if constexpr (std::is_invocable_v<Fn, int64_t>)
      run(i);
    else
      run();
  };
  CUevent start, stop;
  driver.check(driver.eventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  driver.check(driver.eventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int64_t i = 0; i < warmup; ++i)
    once(i);
  std::vector<double> times;
  for (int64_t i = 0; i < samples; ++i) {
    driver.check(driver.eventRecord(start, nullptr), "cuEventRecord");
    once(warmup + i);
    driver.check(driver.eventRecord(stop, nullptr), "cuEventRecord");
    driver.check(driver.eventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    driver.check(driver.eventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    times.push_back(ms);
  }
  driver.eventDestroy(start);
  driver.eventDestroy(stop);
  return medianOf(std::move(times));
}

/// Median ms of `samples` runs of `run` after `warmup` untimed ones, each timed alone with
/// CUDA events after `clear` (untimed) has evicted the L2 cache, as Triton's do_bench does
/// (it zeroes a 256 MB buffer before every run).
template <typename Fn, typename Clear>
double medianMsColdL2(Driver &driver, int64_t warmup, int64_t samples, Fn run, Clear clear) {
  for (int64_t i = 0; i < warmup; ++i)
    run();
  std::vector<double> times;
  for (int64_t i = 0; i < samples; ++i) {
    clear();
    times.push_back(medianMs(driver, 0, 1, run));
  }
  return medianOf(std::move(times));
}

/// Each of `fns` timed in alternating rounds of `perRound` launches (`samples` launches
/// in all per function; `warmup` untimed launches before the first round, one before the
/// others): the rounds' medians (ms) per function, sorted. Clock and temperature drift
/// during the run then weighs on every function alike.
inline std::vector<std::vector<double>>
roundMediansMs(Driver &driver, int64_t warmup, int64_t samples, int64_t perRound,
               const std::vector<std::function<void()>> &fns) {
  std::vector<std::vector<double>> rounds(fns.size());
  for (int64_t done = 0; done < samples; done += perRound) {
    int64_t n = std::min(perRound, samples - done);
    for (size_t i = 0; i < fns.size(); ++i)
      rounds[i].push_back(medianMs(driver, done == 0 ? warmup : 1, n, fns[i]));
  }
  for (std::vector<double> &r : rounds)
    std::sort(r.begin(), r.end());
  return rounds;
}

/// Median ms of `run` launched alone, sample after sample, for `seconds` of wall time,
/// over the second half of the samples: the steady state under sustained load, once the
/// clocks have settled at the board's power or thermal limit. Prints (stderr) when it
/// started, UTC, under `label`, to line up with clock samples taken beside it.
template <typename Fn>
double sustainedMedianMs(Driver &driver, double seconds, Fn run, const std::string &label) {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::gmtime(&now));
  std::cerr << "  sustained " << label << " from " << stamp << " UTC for " << seconds << " s\n";
  std::vector<double> times;
  auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds)
    times.push_back(medianMs(driver, 0, 1, run));
  return medianOf(std::vector<double>(times.begin() + times.size() / 2, times.end()));
}

/// Medians (ms) of `a` and `b` over alternating rounds (roundMediansMs).
inline std::pair<double, double> interleavedMediansMs(Driver &driver, int64_t warmup,
                                                      int64_t samples, int64_t perRound,
                                                      std::function<void()> a,
                                                      std::function<void()> b) {
  auto rounds = roundMediansMs(driver, warmup, samples, perRound, {std::move(a), std::move(b)});
  return {rounds[0][rounds[0].size() / 2], rounds[1][rounds[1].size() / 2]};
}


/// Prints the table and writes JSON/markdown with the device, driver and date.
inline void writeKernelReport(const DeviceInfo &device, Record meta,
                              const std::vector<Record> &records,
                              const std::vector<Column> &columns, const std::string &json,
                              const std::string &markdown) {
  std::cout << "device: " << device.name << ", driver " << device.driverVersion << "\n"
            << formatTable(records, columns);
  meta.set("device", device.name);
  meta.set("driver_version", int64_t(device.driverVersion));
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  meta.set("date", std::string(date));
  if (!json.empty())
    writeFile(json, [&](std::ostream &out) { writeJson(out, meta, records); });
  if (!markdown.empty())
    writeFile(markdown, [&](std::ostream &out) { out << formatTable(records, columns, true); });
}

} // namespace tessel::bench

#endif // TESSEL_BENCH_KERNELS_KERNELBENCH_H
