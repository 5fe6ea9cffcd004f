//===- runtime/Autotuner.cpp - Autotuned kernels --------------------------===//
//
// Hot path: packArgs, build the key from the arguments (no allocation), probe
// a lock-free open-addressing table, evaluate the grid, Kernel::launchPacked.
// Slow path (a key seen for the first time on a device): under that device's
// tuning mutex, consult the disk cache, prune, check fits, time, publish.
//
// The table is write-once per entry: a writer (holding the tuning mutex)
// fills an entry and publishes its pointer with release order; readers load
// slots with acquire order. Growing builds a new table and publishes it;
// retired tables stay alive until the TunedKernel dies, so readers never
// touch freed memory.
//
//===----------------------------------------------------------------------===//
#include "runtime/Autotuner.h"

#include "runtime/ConfigExpr.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

using namespace tessel;

//===----------------------------------------------------------------------===//
// Keys and the lock-free table
//===----------------------------------------------------------------------===//

namespace {
constexpr size_t kMaxKeyParams = 16;

struct Key {
  uint64_t mask = 0;
  uint32_t count = 0;
  int64_t values[kMaxKeyParams];

  bool operator==(const Key &other) const {
    if (mask != other.mask || count != other.count)
      return false;
    for (uint32_t i = 0; i < count; ++i)
      if (values[i] != other.values[i])
        return false;
    return true;
  }
  uint64_t hash() const {
    uint64_t h = mask * 0x9e3779b97f4a7c15ull ^ count;
    for (uint32_t i = 0; i < count; ++i) {
      h ^= uint64_t(values[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 33);
  }
};

struct Entry {
  uint64_t hash;
  Key key;
  int config;
};

class ConfigTable {
public:
  const Entry *find(const Key &key, uint64_t hash) const {
    const Table *table = current_.load(std::memory_order_acquire);
    if (!table)
      return nullptr;
    for (size_t i = hash & table->mask;; i = (i + 1) & table->mask) {
      const Entry *entry = table->slots[i].load(std::memory_order_acquire);
      if (!entry)
        return nullptr;
      if (entry->hash == hash && entry->key == key)
        return entry;
    }
  }

  /// The caller serialises inserts.
  void insert(const Key &key, uint64_t hash, int config) {
    entries_.push_back(std::make_unique<Entry>(Entry{hash, key, config}));
    const Table *table = current_.load(std::memory_order_relaxed);
    if (!table || entries_.size() * 2 > table->mask + 1) {
      size_t capacity = table ? (table->mask + 1) * 2 : 16;
      auto grown = std::make_unique<Table>(capacity);
      for (const std::unique_ptr<Entry> &entry : entries_)
        place(*grown, entry.get());
      current_.store(grown.get(), std::memory_order_release);
      tables_.push_back(std::move(grown));
      return;
    }
    place(*const_cast<Table *>(table), entries_.back().get());
  }

private:
  struct Table {
    explicit Table(size_t capacity)
        : mask(capacity - 1),
          slots(new std::atomic<const Entry *>[capacity]) {
      for (size_t i = 0; i < capacity; ++i)
        slots[i].store(nullptr, std::memory_order_relaxed);
    }
    size_t mask;
    std::unique_ptr<std::atomic<const Entry *>[]> slots;
  };

  static void place(Table &table, const Entry *entry) {
    for (size_t i = entry->hash & table.mask;; i = (i + 1) & table.mask)
      if (!table.slots[i].load(std::memory_order_relaxed)) {
        table.slots[i].store(entry, std::memory_order_release);
        return;
      }
  }

  std::atomic<const Table *> current_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

struct DeviceState {
  int device = 0;
  Kernel kernel;
  ConfigTable table;
  std::mutex tuneMutex;
};

bool envFlag(const char *name, bool fallback) {
  const char *value = std::getenv(name);
  if (!value || !*value)
    return fallback;
  std::string text(value);
  return !(text == "0" || text == "false" || text == "off" || text == "no");
}

std::string formatMs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f ms", ms);
  return buf;
}

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Destroys events and frees the restore copies however tuning ends.
struct TimingResources {
  Driver &driver;
  CUevent start = nullptr, end = nullptr;
  std::vector<CUdeviceptr> copies;
  explicit TimingResources(Driver &driver) : driver(driver) {}
  ~TimingResources() {
    if (start)
      driver.eventDestroy(start);
    if (end)
      driver.eventDestroy(end);
    for (CUdeviceptr copy : copies)
      driver.memFree(copy);
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// TunedKernel::Impl
//===----------------------------------------------------------------------===//

class TunedKernel::Impl {
public:
  Driver *driver = nullptr;
  KernelInfo info;
  std::string packageHash;
  std::vector<Config> configs;
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
  std::vector<std::unique_ptr<DeviceState>> devices;
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

  DeviceState &deviceState() const {
    int device = fixedDevice >= 0 ? fixedDevice : driver->currentDevice();
    if (device < 0 || size_t(device) >= devices.size() || !devices[size_t(device)])
      throw Error(info.name + ": device " + std::to_string(device) +
                  " is not one this TunedKernel was loaded for");
    return *devices[size_t(device)];
  }

  void makeKey(const Arg *args, const PackedArgs &packed, Key &key) const {
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
    return tessel::pruneReason(info, prune, configs[size_t(c)], args);
  }

  /// Why config `c` cannot run these arguments on the device, or empty.
  std::string fitReason(DeviceState &d, int c, const Arg *args,
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

  void publish(DeviceState &d, const Key &key, uint64_t hash,
               TuningResult result) {
    d.table.insert(key, hash, result.config);
    std::lock_guard<std::mutex> lock(resultsMutex);
    results.push_back(std::move(result));
  }

  void printResult(const TuningResult &result, const DeviceState &d) const {
    const Config &chosen = configs[size_t(result.config)];
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
          configs[size_t(timing.config)].text() + "): " +
          (timing.skipped.empty() ? (timing.ms >= 0 ? formatMs(timing.ms)
                                                    : std::string("not timed"))
                                  : timing.skipped));
    log("tessel:   -> config " + std::to_string(result.config) + " (" +
        chosen.text() + ")");
  }

  int tune(DeviceState &d, const GridRef &grid, const Arg *args, size_t count,
           PackedArgs &packed, CUstream stream, const Key &key,
           uint64_t hash);

  void time(DeviceState &d, const GridRef &grid, const Arg *args,
            PackedArgs &packed, CUstream stream, TuningResult &result,
            const std::vector<int> &valid, Clock::time_point start);
};

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
      if (c >= int(configs.size()))
        problem = "names config " + std::to_string(c) + " of " +
                  std::to_string(configs.size());
      else if (record->configText != configs[size_t(c)].text())
        problem = "names config " + std::to_string(c) + " as '" +
                  record->configText + "', the package has '" +
                  configs[size_t(c)].text() + "'";
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
  for (int c = 0; c < int(configs.size()); ++c) {
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
                 configs[size_t(timing.config)].text() + "): " + timing.skipped;
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
    record.configText = configs[size_t(result.config)].text();
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
  drv.check(drv.eventCreate(&resources.start, CU_EVENT_DEFAULT),
            "cuEventCreate");
  drv.check(drv.eventCreate(&resources.end, CU_EVENT_DEFAULT),
            "cuEventCreate");

  int launches = 0;
  size_t done = 0;
  bool progressShown = false;
  for (int c : valid) {
    ConfigTiming &timing = result.timings[size_t(c)];
    // A grid function that throws or a grid out of range is the caller's
    // error, not the config's: it propagates.
    Grid g = grid(configs[size_t(c)]);
    checkGrid(g, info.name);
    try {
      d.kernel.preload(c);
      for (int w = 0; w < warmup; ++w) {
        restore();
        d.kernel.launchPacked(g, packed, stream, c);
        ++launches;
      }
      std::vector<float> times;
      for (int r = 0; r < repeats; ++r) {
        restore();
        drv.check(drv.eventRecord(resources.start, stream), "cuEventRecord");
        d.kernel.launchPacked(g, packed, stream, c);
        ++launches;
        drv.check(drv.eventRecord(resources.end, stream), "cuEventRecord");
        drv.check(drv.eventSynchronize(resources.end), "cuEventSynchronize");
        float ms = 0;
        drv.check(drv.eventElapsedTime(&ms, resources.start, resources.end),
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
        std::to_string(best) + " (" + configs[size_t(best)].text() + ")");
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
  for (int c = 0; c < info.configCount(); ++c)
    k.configs.emplace_back(info, c);
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
  return int(requireImpl(impl_).configs.size());
}

const Config &TunedKernel::config(int index) const {
  Impl &k = requireImpl(impl_);
  if (index < 0 || index >= int(k.configs.size()))
    throw Error(k.info.name + " has " + std::to_string(k.configs.size()) +
                " configs, config " + std::to_string(index) + " requested");
  return k.configs[size_t(index)];
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
  d.kernel.launchPacked(grid(k.configs[size_t(config)]), packed, stream,
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
  return k.configs[size_t(config)];
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
