//===- runtime/Autotuner.cpp - Autotuned kernels --------------------------===//
//
// Hot path: packArgs, build the key from the arguments (no allocation), probe
// a lock-free open-addressing table (ConfigTable.h), evaluate the grid,
// Kernel::launchPacked. Slow path (a key seen for the first time on a device):
// under that device's tuning mutex, consult the disk cache, prune, check fits,
// time (AutotunerTiming.cpp), publish.
//
//===----------------------------------------------------------------------===//
#include "runtime/TunedKernelImpl.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

using namespace tessel;
using namespace tessel::tuning;

bool tuning::envFlag(const char *name, bool fallback) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    return fallback;
  std::string text(value);
  return !(text == "0" || text == "false" || text == "off" || text == "no");
}

std::string tuning::formatMs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f ms", ms);
  return buf;
}

double tuning::secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int TunedKernel::Impl::tune(DeviceState &d, const GridRef &grid,
                            const Arg *args, size_t count, PackedArgs &packed,
                            CUstream stream, const Key &key, uint64_t hash) {
  std::lock_guard<std::mutex> lock(d.tuneMutex);
  if (const Entry *entry = d.table.find(key, hash))
    return entry->config;
  Clock::time_point start = Clock::now();
  TuningResult result;
  result.key = keyText(args, packed);
  result.device = d.device;
  const DeviceInfo &device = d.kernel.deviceInfo();
  TuningKey cacheKey{info.name, packageHash, result.key, device.name,
                     device.driverVersion};

  // The disk cache, trusted only for a config that still exists, is the same
  // configuration, survives pruning and fits.
  if (autotune && cache && cache->enabled()) {
    if (std::optional<TuningRecord> record = cache->load(cacheKey)) {
      int c = record->config;
      std::string problem;
      if (c >= int(info.configs.size()))
        problem = "names config " + std::to_string(c) + " of " +
                  std::to_string(info.configs.size());
      else if (record->configText != info.configs[size_t(c)].text())
        problem = "names config " + std::to_string(c) + " as '" +
                  record->configText + "', the package has '" +
                  info.configs[size_t(c)].text() + "'";
      else if (!(problem = pruneReason(c, args)).empty() ||
               !(problem = fitReason(d, c, args, count)).empty())
        problem = "config " + std::to_string(c) + " " + problem;
      if (problem.empty()) {
        result.config = c;
        result.source = "cache";
        result.tuningSeconds = secondsSince(start);
        {
          std::lock_guard<std::mutex> statsLock(resultsMutex);
          ++stats.cacheHits;
        }
        if (print)
          printResult(result, d);
        publish(d, key, hash, result);
        return c;
      }
      log("tessel: warning: ignoring autotune cache file " +
          cache->pathFor(cacheKey) + " (" + problem +
          "); it will be rewritten");
    }
  }

  std::vector<int> valid;
  for (int c = 0; c < int(info.configs.size()); ++c) {
    ConfigTiming timing;
    timing.config = c;
    timing.skipped = pruneReason(c, args);
    if (timing.skipped.empty())
      timing.skipped = fitReason(d, c, args, count);
    if (timing.skipped.empty())
      valid.push_back(c);
    result.timings.push_back(std::move(timing));
  }
  if (valid.empty()) {
    std::string reasons;
    for (const ConfigTiming &timing : result.timings)
      reasons += "\n  config " + std::to_string(timing.config) + " (" +
                 info.configs[size_t(timing.config)].text() + "): " + timing.skipped;
    throw Error(info.name + ": no configuration can run for [" + result.key +
                "] on " + device.name + ":" + reasons);
  }

  if (!autotune || valid.size() == 1) {
    result.config = valid.front();
    result.source = autotune ? "only-valid" : "first-valid";
    std::lock_guard<std::mutex> statsLock(resultsMutex);
    ++stats.untimed;
  } else {
    time(d, grid, args, packed, stream, result, valid, start);
    result.source = "timed";
  }
  result.tuningSeconds = secondsSince(start);
  if (print)
    printResult(result, d);
  if (result.source == "timed" && cache && cache->enabled()) {
    TuningRecord record;
    record.config = result.config;
    record.configText = info.configs[size_t(result.config)].text();
    for (const ConfigTiming &timing : result.timings)
      record.timesMs.push_back(timing.ms);
    if (cache->store(cacheKey, record)) {
      std::lock_guard<std::mutex> statsLock(resultsMutex);
      ++stats.cacheWrites;
    }
  }
  int chosen = result.config;
  publish(d, key, hash, std::move(result));
  return chosen;
}

//===----------------------------------------------------------------------===//
// TunedKernel
//===----------------------------------------------------------------------===//

TunedKernel TunedKernel::load(const Package &package, std::string_view name,
                              TuneOptions options) {
  const KernelInfo &info = package.kernel(name);
  auto impl = std::make_shared<Impl>();
  Impl &k = *impl;
  k.driver = &Driver::get();
  k.info = info;
  for (const std::string &key : info.autotuneKey)
    k.keyParams.push_back(info.paramIndex(key));
  if (k.keyParams.size() > kMaxKeyParams)
    throw Error(info.name + " has " + std::to_string(k.keyParams.size()) +
                " autotune key params; at most " +
                std::to_string(kMaxKeyParams) + " are supported");

  auto addRestore = [&](const std::string &param, const char *from) {
    int index = info.paramIndex(param);
    if (index < 0 || !info.params[size_t(index)].isPointer())
      throw Error(std::string(from) + " names '" + param +
                  "', which is not a pointer param of " + info.signature());
    if (std::find(k.restoreParams.begin(), k.restoreParams.end(), index) ==
        k.restoreParams.end()) {
      k.restoreParams.push_back(index);
      k.restoreBytes.push_back(0);
    }
  };
  for (const std::string &param : info.autotuneRestore)
    addRestore(param, "autotune_restore");
  for (const std::string &param : options.restore)
    addRestore(param, "TuneOptions::restore");
  for (const auto &[param, bytes] : options.restoreBytes) {
    addRestore(param, "TuneOptions::restoreBytes");
    auto at = std::find(k.restoreParams.begin(), k.restoreParams.end(),
                        info.paramIndex(param));
    k.restoreBytes[size_t(at - k.restoreParams.begin())] = bytes;
  }
  if (!options.prune.empty()) {
    ConfigExpr::parse(options.prune)
        .checkNames(pruneNames(info), "TuneOptions::prune");
    k.prune = ConfigExpr::parse(
        info.autotunePrune.empty()
            ? options.prune
            : "(" + info.autotunePrune + ") or (" + options.prune + ")");
  } else if (!info.autotunePrune.empty()) {
    k.prune = ConfigExpr::parse(info.autotunePrune);
  }

  k.autotune = options.autotune.value_or(envFlag("TESSEL_AUTOTUNE", true));
  k.print = options.print.value_or(envFlag("TESSEL_PRINT_AUTOTUNING", false));
  if (options.warmup < 0 || options.repeats < 1)
    throw Error("TuneOptions: warmup must be >= 0 and repeats >= 1");
  k.warmup = options.warmup;
  k.repeats = options.repeats;
  k.progressAfterSeconds = options.progressAfterSeconds;
  k.logSink = options.log;
  k.cache = std::make_unique<TuningCache>(
      options.cacheDir.value_or(TuningCache::defaultDirectory()),
      k.logSink);

  int count = k.driver->deviceCount();
  if (options.device >= 0 || count == 1)
    k.fixedDevice = options.device >= 0 ? options.device : 0;
  k.devices.resize(size_t(std::max(count, k.fixedDevice + 1)));
  for (int device = 0; device < int(k.devices.size()); ++device) {
    if (k.fixedDevice >= 0 && device != k.fixedDevice)
      continue;
    auto state = std::make_unique<DeviceState>();
    state->device = device;
    state->kernel = Kernel::load(package, name, device);
    k.devices[size_t(device)] = std::move(state);
  }
  k.packageHash = k.devices[size_t(std::max(k.fixedDevice, 0))]->kernel.packageHash();
  TunedKernel kernel;
  kernel.impl_ = std::move(impl);
  return kernel;
}

static TunedKernel::Impl &requireImpl(
    const std::shared_ptr<TunedKernel::Impl> &impl) {
  if (!impl)
    throw Error("tessel::TunedKernel is empty (use TunedKernel::load)");
  return *impl;
}

const KernelInfo &TunedKernel::info() const { return requireImpl(impl_).info; }
int TunedKernel::configCount() const {
  return int(requireImpl(impl_).info.configs.size());
}

const Config &TunedKernel::config(int index) const {
  Impl &k = requireImpl(impl_);
  if (index < 0 || index >= int(k.info.configs.size()))
    throw Error(k.info.name + " has " + std::to_string(k.info.configs.size()) +
                " configs, config " + std::to_string(index) + " requested");
  return k.info.configs[size_t(index)];
}

void TunedKernel::launch(GridRef grid, const Arg *args, size_t count,
                         CUstream stream) const {
  Impl &k = requireImpl(impl_);
  PackedArgs packed;
  packArgs(k.info, args, count, packed);
  DeviceState &d = k.deviceState();
  Key key;
  k.makeKey(args, packed, key);
  uint64_t hash = key.hash();
  const Entry *entry = d.table.find(key, hash);
  int config = entry ? entry->config
                     : k.tune(d, grid, args, count, packed, stream, key, hash);
  d.kernel.launchPacked(grid(k.info.configs[size_t(config)]), packed, stream,
                        config);
}

const Config &TunedKernel::choose(GridRef grid, std::initializer_list<Arg> args,
                                  CUstream stream) const {
  Impl &k = requireImpl(impl_);
  PackedArgs packed;
  packArgs(k.info, args.begin(), args.size(), packed);
  DeviceState &d = k.deviceState();
  Key key;
  k.makeKey(args.begin(), packed, key);
  uint64_t hash = key.hash();
  const Entry *entry = d.table.find(key, hash);
  int config = entry ? entry->config
                     : k.tune(d, grid, args.begin(), args.size(), packed,
                              stream, key, hash);
  return k.info.configs[size_t(config)];
}

std::vector<TuningResult> TunedKernel::results() const {
  Impl &k = requireImpl(impl_);
  std::lock_guard<std::mutex> lock(k.resultsMutex);
  return k.results;
}

TuneStats TunedKernel::stats() const {
  Impl &k = requireImpl(impl_);
  std::lock_guard<std::mutex> lock(k.resultsMutex);
  return k.stats;
}

std::string TunedKernel::keyText(std::initializer_list<Arg> args) const {
  Impl &k = requireImpl(impl_);
  PackedArgs packed;
  packArgs(k.info, args.begin(), args.size(), packed);
  return k.keyText(args.begin(), packed);
}

Kernel TunedKernel::kernel(int device) const {
  Impl &k = requireImpl(impl_);
  if (device < 0)
    return k.deviceState().kernel;
  if (size_t(device) >= k.devices.size() || !k.devices[size_t(device)])
    throw Error(k.info.name + ": device " + std::to_string(device) +
                " is not one this TunedKernel was loaded for");
  return k.devices[size_t(device)]->kernel;
}
