//===- runtime/TunedKernelImpl.h - The autotuner's state --------*- C++ -*-===//
//
// What a TunedKernel holds, shared by its launch path and tables (Autotuner.cpp) and its
// timing of configurations (AutotunerTiming.cpp). Internal to the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TUNEDKERNELIMPL_H
#define TESSEL_RUNTIME_TUNEDKERNELIMPL_H

#include "package/ConfigExpr.h"
#include "runtime/Autotuner.h"
#include "runtime/ConfigTable.h"

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessel {
namespace tuning {

/// One device a TunedKernel runs on: its Kernel, its table, the mutex tuning holds.
struct DeviceState {
  int device = 0;
  Kernel kernel;
  ConfigTable table;
  std::mutex tuneMutex;
};

/// A boolean environment variable: unset or empty gives `fallback`; 0, false, off and no
/// are false, anything else true.
bool envFlag(const char *name, bool fallback);
/// "0.1234 ms".
std::string formatMs(double ms);
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start);

} // namespace tuning

class TunedKernel::Impl {
public:
  Driver *driver = nullptr;
  KernelInfo info;
  std::string packageHash;
  std::vector<int> keyParams;
  std::vector<int> restoreParams;
  std::vector<size_t> restoreBytes; // per restoreParams entry; 0: whole rest
  ConfigExpr prune;
  bool autotune = true;
  bool print = false;
  int warmup = 3;
  int repeats = 10;
  double progressAfterSeconds = 2.0;
  std::function<void(const std::string &)> logSink;
  std::unique_ptr<TuningCache> cache;
  /// Indexed by device ordinal; null for devices this kernel does not use.
  std::vector<std::unique_ptr<tuning::DeviceState>> devices;
  /// >= 0: always this device (no per-launch device lookup).
  int fixedDevice = -1;

  mutable std::mutex resultsMutex;
  std::vector<TuningResult> results;
  TuneStats stats;

  void log(const std::string &line) const {
    if (logSink)
      logSink(line);
    else
      std::cerr << line << std::endl;
  }

  tuning::DeviceState &deviceState() const {
    int device = fixedDevice >= 0 ? fixedDevice : driver->currentDevice();
    if (device < 0 || size_t(device) >= devices.size() || !devices[size_t(device)])
      throw Error(info.name + ": device " + std::to_string(device) +
                  " is not one this TunedKernel was loaded for");
    return *devices[size_t(device)];
  }

  void makeKey(const Arg *args, const PackedArgs &packed, tuning::Key &key) const {
    key.mask = packed.divisibleMask();
    key.count = uint32_t(keyParams.size());
    for (size_t i = 0; i < keyParams.size(); ++i) {
      const Arg &arg = args[size_t(keyParams[i])];
      int64_t value = 0;
      if (arg.isPointer()) {
        value = (arg.address() % 16) == 0;
      } else if (arg.isFloat()) {
        double d = arg.floatValue();
        std::memcpy(&value, &d, sizeof(value));
      } else {
        value = arg.intValue();
      }
      key.values[i] = value;
    }
  }

  std::string keyText(const Arg *args, const PackedArgs &packed) const {
    std::string text;
    for (int index : keyParams) {
      const Arg &arg = args[size_t(index)];
      text += (text.empty() ? "" : ", ") + info.params[size_t(index)].name +
              "=" +
              (arg.isPointer() ? (arg.address() % 16 ? "unaligned" : "aligned")
                               : arg.valueText());
    }
    std::string aligned;
    for (size_t i = 0; i < info.params.size() && i < 64; ++i)
      if (packed.divisibleMask() & (uint64_t(1) << i))
        aligned += (aligned.empty() ? "" : ",") + info.params[i].name;
    return text + (text.empty() ? "" : "; ") + "aligned=" +
           (aligned.empty() ? "-" : aligned);
  }

  /// Why config `c` is pruned for these key values, or empty.
  std::string pruneReason(int c, const Arg *args) const {
    return tessel::pruneReason(info, prune, info.configs[size_t(c)], args);
  }

  /// Why config `c` cannot run these arguments on the device, or empty.
  std::string fitReason(tuning::DeviceState &d, int c, const Arg *args,
                        size_t count) const {
    ConfigFit fit = d.kernel.checkConfig(c);
    if (!fit.fits)
      return "does not fit: " + fit.reason;
    try {
      d.kernel.chooseVariant(args, count, c);
    } catch (const Error &error) {
      return std::string("no variant: ") + error.what();
    }
    return {};
  }

  void publish(tuning::DeviceState &d, const tuning::Key &key, uint64_t hash,
               TuningResult result) {
    d.table.insert(key, hash, result.config);
    std::lock_guard<std::mutex> lock(resultsMutex);
    results.push_back(std::move(result));
  }

  void printResult(const TuningResult &result, const tuning::DeviceState &d) const {
    const Config &chosen = info.configs[size_t(result.config)];
    std::string head = "tessel: " + info.name + " [" + result.key + "] on " +
                       d.kernel.deviceInfo().name + ": ";
    if (result.source == "cache") {
      log(head + "config " + std::to_string(result.config) + " (" +
          chosen.text() + ") from the autotune cache");
      return;
    }
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.3f s", result.tuningSeconds);
    log(head + (result.source == "timed" ? "tuned in " + std::string(seconds)
                                         : result.source + " choice"));
    for (const ConfigTiming &timing : result.timings)
      log("tessel:   config " + std::to_string(timing.config) + " (" +
          info.configs[size_t(timing.config)].text() + "): " +
          (timing.skipped.empty() ? (timing.ms >= 0 ? tuning::formatMs(timing.ms)
                                                    : std::string("not timed"))
                                  : timing.skipped));
    log("tessel:   -> config " + std::to_string(result.config) + " (" +
        chosen.text() + ")");
  }

  int tune(tuning::DeviceState &d, const GridRef &grid, const Arg *args, size_t count,
           PackedArgs &packed, CUstream stream, const tuning::Key &key,
           uint64_t hash);

  void time(tuning::DeviceState &d, const GridRef &grid, const Arg *args,
            PackedArgs &packed, CUstream stream, TuningResult &result,
            const std::vector<int> &valid, tuning::Clock::time_point start);
};

} // namespace tessel

#endif // TESSEL_RUNTIME_TUNEDKERNELIMPL_H
