//===- runtime/Kernel.cpp - Loading and launching package kernels ---------===//
//
// Per variant, up to kSlots (context -> CUfunction) entries are published
// lock-free: a writer fills a slot under the mutex and then bumps `used`
// with release order; launches read `used` with acquire order and scan the
// slots. Further contexts (rare) go to a mutex-protected overflow list.
//
//===----------------------------------------------------------------------===//
#include "runtime/Kernel.h"
#include "package/ConfigExpr.h"
#include "runtime/Interpret.h"
#include "runtime/KernelConfig.h"
#include "runtime/TensorMaps.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

using namespace tessel;

//===----------------------------------------------------------------------===//
// Pure helpers
//===----------------------------------------------------------------------===//

void tessel::checkGrid(const Grid &grid, std::string_view kernelName) {
  auto check = [&](int64_t value, int64_t max, const char *axis) {
    if (value < 0 || value > max)
      throw Error("grid of " + std::string(kernelName) + ": " + axis + " is " +
                  std::to_string(value) + ", expected a value in [0, " +
                  std::to_string(max) + "]");
  };
  check(grid.x, INT32_MAX, "x");
  check(grid.y, 65535, "y");
  check(grid.z, 65535, "z");
}

//===----------------------------------------------------------------------===//
// Kernel::Impl
//===----------------------------------------------------------------------===//

namespace {
/// A variant's module loaded in one context.
struct LoadedFunction {
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  int registers = 0;
  int maxThreads = 0;
};

struct VariantState {
  static constexpr int kSlots = 4;
  LoadedFunction slots[kSlots];
  std::atomic<int> used{0};
  std::vector<LoadedFunction> overflow; // guarded by Impl::mutex
};
} // namespace

class Kernel::Impl {
public:
  Driver *driver = nullptr;
  KernelInfo info;
  int device = 0;
  DeviceInfo deviceInfo;
  std::string packageHash;
  int configs = 0;
  /// Every variant of `info`, configuration by configuration (KernelInfo::allVariants).
  std::vector<const Variant *> variants;
  std::unique_ptr<VariantState[]> states;
  /// Per config: usable variants, best first.
  std::vector<std::vector<VariantCandidate>> candidates;
  /// The package's @autotune prune condition (empty: none): an explicit launch of a
  /// pruned config is refused.
  ConfigExpr prune;
  mutable std::mutex mutex;

  void setInfo(const KernelInfo &kernelInfo) {
    info = kernelInfo;
    configs = info.configCount();
    variants = info.allVariants();
    tensorMaps.setDriver(driver);
    states.reset(new VariantState[variants.size()]);
    if (!info.autotunePrune.empty())
      prune = ConfigExpr::parse(info.autotunePrune);
  }

  /// Throws when the prune condition rules config `config` out for `args`.
  void checkNotPruned(int config, const Arg *args) const {
    if (!prune.empty())
      checkConfigServes(info, prune, info.configs[size_t(config)], args);
  }

  /// The tensor maps of the variants that have them, encoded per launch.
  TensorMapEncoder tensorMaps;

  ~Impl();

  /// "softmax, config 0, variant 1"
  std::string where(int variant) const {
    return info.name + ", config " + std::to_string(variants[size_t(variant)]->config) +
           ", variant " + std::to_string(variant);
  }

  void checkConfigIndex(int config) const {
    if (config < 0 || config >= configs)
      throw Error(info.name + " has " + std::to_string(configs) +
                  " config" + (configs == 1 ? "" : "s") + ", config " +
                  std::to_string(config) + " requested");
  }

  int select(int config, uint64_t mask) const {
    int variant = firstMet(candidates[size_t(config)], mask);
    if (variant < 0)
      throw Error(noVariantReason(config));
    return variant;
  }

  std::string noVariantReason(int config) const {
    std::string archs;
    for (const Variant &variant : info.configs[size_t(config)].variants)
      archs += (archs.empty() ? "" : ", ") + variant.arch;
    return info.name + " config " + std::to_string(config) +
           " has no variant that runs on " + deviceInfo.name + " (" +
           deviceInfo.arch() + "); its variants target " + archs +
           " (every config needs a generic variant, divisible_by_16 = [])";
  }

  /// Whether to load the variant's cubin: it has one, built for exactly this
  /// device's compute capability, and TESSEL_CUBIN is not 0.
  bool runsCubin(const Variant &variant) const {
    if (variant.cubin.empty())
      return false;
    static const bool enabled = [] {
      const char *value = std::getenv("TESSEL_CUBIN");
      return !value || std::string_view(value) != "0";
    }();
    int capability = 0;
    char suffix = 0;
    return enabled && parseArch(variant.arch, capability, suffix) &&
           capability == deviceInfo.capability();
  }

  /// Why a variant cannot run on the device, from metadata alone.
  std::string staticProblem(int variantIndex) const {
    const Variant &variant = *variants[size_t(variantIndex)];
    const Config &config = info.configs[size_t(variant.config)];
    std::string what = info.name + " config " + std::to_string(config.index) + " (" +
                       config.text() + ")";
    int threads = variant.threadsPerBlock(config.numWarps);
    if (threads > deviceInfo.maxThreadsPerBlock)
      return what + " needs " + std::to_string(threads) +
             " threads per block; " + deviceInfo.name + " allows at most " +
             std::to_string(deviceInfo.maxThreadsPerBlock);
    if (variant.sharedBytes > deviceInfo.maxSharedPerBlockOptin)
      return what + " needs " + std::to_string(variant.sharedBytes) +
             " bytes of shared memory; " + deviceInfo.name +
             " allows at most " +
             std::to_string(deviceInfo.maxSharedPerBlockOptin) +
             " bytes per block (opt-in)";
    return {};
  }

  const LoadedFunction *find(int variant, CUcontext context) const {
    const VariantState &state = states[size_t(variant)];
    int used = state.used.load(std::memory_order_acquire);
    for (int i = 0; i < used; ++i)
      if (state.slots[i].context == context)
        return &state.slots[i];
    if (used < VariantState::kSlots)
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    for (const LoadedFunction &entry : state.overflow)
      if (entry.context == context)
        return &entry;
    return nullptr;
  }

  /// Loads `variant` into `context`, which must be current.
  const LoadedFunction &getOrLoad(int variant, CUcontext context) {
    if (const LoadedFunction *found = find(variant, context))
      return *found;
    std::lock_guard<std::mutex> lock(mutex);
    VariantState &state = states[size_t(variant)];
    int used = state.used.load(std::memory_order_relaxed);
    for (int i = 0; i < used; ++i)
      if (state.slots[i].context == context)
        return state.slots[i];
    for (const LoadedFunction &entry : state.overflow)
      if (entry.context == context)
        return entry;
    LoadedFunction loaded = loadIn(variant, context);
    if (used < VariantState::kSlots) {
      state.slots[used] = loaded;
      state.used.store(used + 1, std::memory_order_release);
      return state.slots[used];
    }
    // Overflow entries are never erased, but the vector may reallocate:
    // reserve generously so returned references stay valid in practice.
    if (state.overflow.capacity() == state.overflow.size())
      state.overflow.reserve(std::max<size_t>(64, state.overflow.size() * 2));
    state.overflow.push_back(loaded);
    return state.overflow.back();
  }

  LoadedFunction loadIn(int variantIndex, CUcontext context) {
    const Variant &variant = *variants[size_t(variantIndex)];
    const Config &config = info.configs[size_t(variant.config)];
    std::string problem = staticProblem(variantIndex);
    if (!problem.empty())
      throw Error(problem);

    char errorLog[16384] = {};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {errorLog,
                      reinterpret_cast<void *>(uintptr_t(sizeof(errorLog) - 1))};
    LoadedFunction loaded;
    loaded.context = context;
    // Machine code where the package has it for this device, else the PTX (JIT); a
    // cubin the driver refuses (a newer ELF than it reads) falls back to the PTX.
    CUresult result = CUDA_ERROR_INVALID_IMAGE;
    if (runsCubin(variant))
      result = driver->moduleLoadDataEx(&loaded.module, variant.cubin.data(), 2,
                                        options, values);
    if (result != CUDA_SUCCESS) {
      errorLog[0] = 0;
      result = driver->moduleLoadDataEx(&loaded.module, variant.ptx.c_str(), 2,
                                        options, values);
    }
    if (result != CUDA_SUCCESS)
      driver->fail(result, "cuModuleLoadDataEx(" + where(variantIndex) + ")",
                   errorLog[0] ? std::string(errorLog)
                               : "(the JIT left no error log)");
    try {
      driver->check(
          driver->moduleGetFunction(&loaded.function, loaded.module,
                                    variant.entry.c_str()),
          "cuModuleGetFunction(" + where(variantIndex) + ", entry '" +
              variant.entry + "')");
      int staticShared = 0;
      driver->check(driver->funcGetAttribute(&loaded.registers,
                                             CU_FUNC_ATTRIBUTE_NUM_REGS,
                                             loaded.function),
                    "cuFuncGetAttribute(NUM_REGS)");
      driver->check(
          driver->funcGetAttribute(&loaded.maxThreads,
                                   CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                   loaded.function),
          "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
      driver->check(driver->funcGetAttribute(&staticShared,
                                             CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                             loaded.function),
                    "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
      std::string what = info.name + " config " + std::to_string(config.index) + " (" +
                         config.text() + ")";
      int threads = variant.threadsPerBlock(config.numWarps);
      if (threads > loaded.maxThreads ||
          int64_t(loaded.registers) * threads > deviceInfo.registersPerBlock)
        throw Error(what + " needs " + std::to_string(threads) +
                    " threads per block at " +
                    std::to_string(loaded.registers) +
                    " registers per thread; " + deviceInfo.name + " has " +
                    std::to_string(deviceInfo.registersPerBlock) +
                    " registers per block (at most " +
                    std::to_string(loaded.maxThreads) +
                    " threads of this kernel)");
      int64_t totalShared = int64_t(staticShared) + variant.sharedBytes;
      if (totalShared > deviceInfo.maxSharedPerBlockOptin)
        throw Error(what + " needs " + std::to_string(totalShared) +
                    " bytes of shared memory; " + deviceInfo.name +
                    " allows at most " +
                    std::to_string(deviceInfo.maxSharedPerBlockOptin) +
                    " bytes per block (opt-in)");
      // Above the default 48 KiB a kernel must opt in to more.
      if (totalShared > 48 * 1024)
        driver->check(
            driver->funcSetAttribute(
                loaded.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                int(variant.sharedBytes)),
            "cuFuncSetAttribute(" + where(variantIndex) +
                ", MAX_DYNAMIC_SHARED_SIZE_BYTES=" +
                std::to_string(variant.sharedBytes) + ")");
    } catch (...) {
      driver->moduleUnload(loaded.module);
      throw;
    }
    return loaded;
  }

  /// Runs `body(context)` with a context of this kernel's device current:
  /// the current one when it belongs to the device, else the device's
  /// primary context (made current when there is none, pushed around the
  /// call when another device's context is current).
  template <typename Body> void withContext(Body &&body) {
    CUcontext current = nullptr;
    driver->check(driver->ctxGetCurrent(&current), "cuCtxGetCurrent");
    if (!current) {
      body(driver->ensureCurrent(device));
      return;
    }
    CUdevice currentDevice = 0;
    driver->check(driver->ctxGetDevice(&currentDevice), "cuCtxGetDevice");
    if (int(currentDevice) == device) {
      body(current);
      return;
    }
    CUcontext primary = driver->contextFor(device);
    ScopedContext scope(*driver, primary);
    body(primary);
  }

  void launchWith(const LoadedFunction &loaded, int variantIndex,
                  const Grid &grid, CUstream stream, PackedArgs &packed) {
    const Variant &variant = *variants[size_t(variantIndex)];
    const int threads = variant.threadsPerBlock(info.configs[size_t(variant.config)].numWarps);
    void **params = packed.pointers();
    // Tensor maps are extra __grid_constant__ params after the kernel's own.
    // (Attention's backward copies four tiles in each of its three loops.)
    constexpr size_t kMaxMaps = 12, kMaxParams = 64;
    alignas(64) CUtensorMap maps[kMaxMaps];
    void *withMaps[kMaxParams];
    if (!variant.tensorMaps.empty()) {
      if (variant.tensorMaps.size() > kMaxMaps ||
          packed.size() + variant.tensorMaps.size() > kMaxParams)
        throw Error(where(variantIndex) + ": " + std::to_string(variant.tensorMaps.size()) +
                    " tensor maps and " + std::to_string(packed.size()) +
                    " params: more than supported (" + std::to_string(kMaxMaps) + ", " +
                    std::to_string(kMaxParams) + " in all)");
      tensorMaps.encode(info, variant, variantIndex, packed, maps);
      for (size_t i = 0; i < packed.size(); ++i)
        withMaps[i] = params[i];
      for (size_t m = 0; m < variant.tensorMaps.size(); ++m)
        withMaps[packed.size() + m] = &maps[m];
      params = withMaps;
    }
    // A variant whose copies are shared by a cluster (multicast) runs in clusters along
    // x where the grid is whole clusters, on Hopper (where multicast is fast: PTX for
    // sm_90 would run it on later GPUs too, much slower). Elsewhere it runs without a
    // cluster and each program fetches its whole tiles itself (the kernel tests its
    // cluster size).
    unsigned cluster = unsigned(variant.clusterSize());
    if (cluster > 1 && (grid.x % cluster != 0 || deviceInfo.major != 9))
      cluster = 1;
    auto what = [&] {
      return "grid (" + std::to_string(grid.x) + ", " + std::to_string(grid.y) + ", " +
             std::to_string(grid.z) + "), " + std::to_string(threads) +
             " threads, " + std::to_string(variant.sharedBytes) + " bytes of shared memory";
    };
    if (cluster > 1) {
      CUlaunchAttribute attribute = {};
      attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attribute.value.clusterDim.x = cluster;
      attribute.value.clusterDim.y = 1;
      attribute.value.clusterDim.z = 1;
      CUlaunchConfig config = {};
      config.gridDimX = unsigned(grid.x);
      config.gridDimY = unsigned(grid.y);
      config.gridDimZ = unsigned(grid.z);
      config.blockDimX = unsigned(threads);
      config.blockDimY = 1;
      config.blockDimZ = 1;
      config.sharedMemBytes = unsigned(variant.sharedBytes);
      config.hStream = stream;
      config.attrs = &attribute;
      config.numAttrs = 1;
      CUresult result = driver->launchKernelEx(&config, loaded.function, params, nullptr);
      if (result != CUDA_SUCCESS)
        driver->fail(result, "cuLaunchKernelEx(" + where(variantIndex) + ")",
                     what() + ", clusters of " + std::to_string(cluster) + " programs");
      return;
    }
    CUresult result = driver->launchKernel(
        loaded.function, unsigned(grid.x), unsigned(grid.y), unsigned(grid.z),
        unsigned(threads), 1, 1,
        unsigned(variant.sharedBytes), stream, params, nullptr);
    if (result != CUDA_SUCCESS)
      driver->fail(result, "cuLaunchKernel(" + where(variantIndex) + ")", what());
  }
};

Kernel::Impl::~Impl() {
  // Best effort: the context may already be gone at process exit.
  auto unload = [&](const LoadedFunction &loaded) {
    CUcontext current = nullptr;
    if (driver->ctxGetCurrent(&current) != CUDA_SUCCESS)
      return;
    bool push = current != loaded.context;
    if (push && driver->ctxPushCurrent(loaded.context) != CUDA_SUCCESS)
      return;
    driver->moduleUnload(loaded.module);
    if (push) {
      CUcontext popped = nullptr;
      driver->ctxPopCurrent(&popped);
    }
  };
  for (size_t v = 0; v < variants.size(); ++v) {
    VariantState &state = states[v];
    for (int i = 0; i < state.used.load(); ++i)
      unload(state.slots[i]);
    for (const LoadedFunction &entry : state.overflow)
      unload(entry);
  }
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

Kernel Kernel::load(const Package &package, std::string_view name,
                    int device) {
  const KernelInfo &info = package.kernel(name);
  if (interpretEnabled()) {
    // TESSEL_INTERPRET=1: launches run in the CPU interpreter; no driver, no device.
    auto impl = std::make_shared<Impl>();
    impl->setInfo(info);
    impl->device = device < 0 ? 0 : device;
    impl->packageHash = package.contentHash();
    impl->candidates.resize(size_t(impl->configs));
    Kernel kernel;
    kernel.impl_ = std::move(impl);
    return kernel;
  }
  Driver &driver = Driver::get();
  if (device < 0)
    device = driver.currentDevice();
  auto impl = std::make_shared<Impl>();
  impl->driver = &driver;
  impl->setInfo(info);
  impl->device = device;
  impl->deviceInfo = driver.deviceInfo(device);
  impl->packageHash = package.contentHash();
  for (int config = 0; config < impl->configs; ++config)
    impl->candidates.push_back(
        orderedCandidates(impl->info, config, impl->deviceInfo.capability()));
  Kernel kernel;
  kernel.impl_ = std::move(impl);
  return kernel;
}

static Kernel::Impl &requireImpl(const std::shared_ptr<Kernel::Impl> &impl) {
  if (!impl)
    throw Error("tessel::Kernel is empty (use Kernel::load)");
  return *impl;
}

const KernelInfo &Kernel::info() const { return requireImpl(impl_).info; }
int Kernel::device() const { return requireImpl(impl_).device; }
const DeviceInfo &Kernel::deviceInfo() const {
  return requireImpl(impl_).deviceInfo;
}
const std::string &Kernel::packageHash() const {
  return requireImpl(impl_).packageHash;
}

void Kernel::launch(Grid grid, const Arg *args, size_t count, CUstream stream,
                    int config) const {
  Impl &k = requireImpl(impl_);
  k.checkConfigIndex(config);
  PackedArgs packed;
  packArgs(k.info, args, count, packed);
  k.checkNotPruned(config, args);
  if (!k.driver) { // interpreting (Kernel::load under TESSEL_INTERPRET=1)
    checkGrid(grid, k.info.name);
    const Variant *variant = interpretedVariant(k.info, config);
    if (grid.empty() || !variant)
      return;
    InterpretLaunch launch;
    launch.kernel = &k.info;
    launch.variant = variant;
    launch.grid[0] = grid.x, launch.grid[1] = grid.y, launch.grid[2] = grid.z;
    launch.args = args;
    launch.count = count;
    interpretLaunch(launch);
    return;
  }
  launchPacked(grid, packed, stream, config);
}

void Kernel::launchPacked(Grid grid, PackedArgs &packed, CUstream stream,
                          int config) const {
  Impl &k = requireImpl(impl_);
  k.checkConfigIndex(config);
  if (!k.driver)
    throw Error(k.info.name + ": packed launches cannot be interpreted; use Kernel::launch");
  int variant = k.select(config, packed.divisibleMask());
  checkGrid(grid, k.info.name);
  if (grid.empty())
    return;
  CUcontext current = nullptr;
  k.driver->check(k.driver->ctxGetCurrent(&current), "cuCtxGetCurrent");
  if (current) {
    if (const LoadedFunction *loaded = k.find(variant, current)) {
      k.launchWith(*loaded, variant, grid, stream, packed);
      return;
    }
  }
  // First launch of this variant in this context.
  k.withContext([&](CUcontext context) {
    k.launchWith(k.getOrLoad(variant, context), variant, grid, stream, packed);
  });
}

int Kernel::chooseVariant(const Arg *args, size_t count, int config) const {
  Impl &k = requireImpl(impl_);
  k.checkConfigIndex(config);
  PackedArgs packed;
  packArgs(k.info, args, count, packed);
  return k.select(config, packed.divisibleMask());
}

ConfigFit Kernel::checkConfig(int config) const {
  Impl &k = requireImpl(impl_);
  k.checkConfigIndex(config);
  ConfigFit fit;
  fit.config = config;
  auto reject = [&](std::string reason) {
    fit.fits = false;
    fit.reason = std::move(reason);
    return fit;
  };
  if (!k.driver) // interpreting: every config runs
    return fit;
  const std::vector<VariantCandidate> &candidates = k.candidates[size_t(config)];
  if (candidates.empty())
    return reject(k.noVariantReason(config));
  for (const VariantCandidate &candidate : candidates) {
    fit.sharedBytes = std::max(
        fit.sharedBytes, k.variants[size_t(candidate.variant)]->sharedBytes);
    std::string problem = k.staticProblem(candidate.variant);
    if (!problem.empty())
      return reject(problem);
  }
  try {
    k.withContext([&](CUcontext context) {
      for (const VariantCandidate &candidate : candidates)
        fit.registers = std::max(
            fit.registers, k.getOrLoad(candidate.variant, context).registers);
    });
  } catch (const Error &error) {
    return reject(error.what());
  }
  return fit;
}

std::vector<ConfigFit> Kernel::checkConfigs() const {
  std::vector<ConfigFit> fits;
  for (int config = 0; config < configCount(); ++config)
    fits.push_back(checkConfig(config));
  return fits;
}

void Kernel::preload(int config) const {
  Impl &k = requireImpl(impl_);
  if (config >= 0)
    k.checkConfigIndex(config);
  if (!k.driver) // interpreting: nothing to load
    return;
  k.withContext([&](CUcontext context) {
    for (int c = 0; c < k.configs; ++c) {
      if (config >= 0 && c != config)
        continue;
      for (const VariantCandidate &candidate : k.candidates[size_t(c)])
        k.getOrLoad(candidate.variant, context);
    }
  });
}

std::vector<std::string> Kernel::explainVariants() const {
  Impl &k = requireImpl(impl_);
  std::vector<std::string> lines;
  for (size_t i = 0; i < k.variants.size(); ++i) {
    const Variant &variant = *k.variants[i];
    std::string line = "variant " + std::to_string(i) + ": config " +
                       std::to_string(variant.config) + " [" +
                       k.info.configs[size_t(variant.config)].text() + "] " +
                       variant.arch + ", " +
                       std::to_string(variant.sharedBytes) + " B shared, ";
    if (variant.isGeneric()) {
      line += "generic";
    } else {
      line += "assumes 16 | ";
      for (size_t j = 0; j < variant.divisibleBy16.size(); ++j)
        line += (j ? ", " : "") + variant.divisibleBy16[j];
    }
    uint64_t required = 0;
    std::string problem = k.staticProblem(int(i));
    if (!archSupported(variant.arch, k.deviceInfo.capability()))
      line += ": not usable on " + k.deviceInfo.arch();
    else if (!requiredDivisibility(k.info, variant, required))
      line += ": not usable (assumes a parameter beyond the 64th)";
    else if (!problem.empty())
      line += ": does not fit: " + problem;
    else
      line += ": usable";
    lines.push_back(std::move(line));
  }
  return lines;
}
