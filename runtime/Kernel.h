//===- runtime/Kernel.h - Loading and launching package kernels -*- C++ -*-===//
//
// tessel::Kernel is one kernel of a package bound to one device. Each variant's
// PTX is JIT-loaded (cuModuleLoadDataEx) on first use and its CUfunction cached
// per CUDA context; a launch checks and packs the arguments, picks the most
// specialised variant of the requested config that the arguments and the
// device allow, and calls cuLaunchKernel. After the first launch of a variant
// in a context the launch path takes no lock and does not allocate.
//
// The pieces the autotuner needs are public: per-config fit checks (arch,
// shared memory, registers) with reasons, variant choice for given arguments,
// and preloading (so JIT time is not timed).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_KERNEL_H
#define TESSEL_RUNTIME_KERNEL_H

#include "runtime/Args.h"
#include "runtime/Driver.h"
#include "runtime/VariantSelect.h"
#include "package/Package.h"

#include <cuda.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

/// Launch grid in blocks. Grid(n) is {n, 1, 1}.
struct Grid {
  int64_t x = 1, y = 1, z = 1;
  Grid(int64_t x) : x(x) {}
  Grid(int64_t x, int64_t y, int64_t z = 1) : x(x), y(y), z(z) {}
  bool empty() const { return x == 0 || y == 0 || z == 0; }
};

/// Throws when a grid dimension is negative or above the CUDA limits
/// (x < 2^31, y and z < 65536). An empty grid is valid (launch is a no-op).
void checkGrid(const Grid &grid, std::string_view kernelName);

/// Whether a configuration can run on the device, and why not.
struct ConfigFit {
  int config = 0;
  bool fits = true;
  /// Empty when it fits, else e.g. "needs 262144 bytes of shared memory,
  /// NVIDIA H100 80GB HBM3 allows at most 232448 per block (opt-in)".
  std::string reason;
  /// Largest over the config's variants (registers per thread, bytes).
  int registers = 0;
  int64_t sharedBytes = 0;
};

class Kernel {
public:
  /// An empty handle; launching it throws.
  Kernel() = default;

  /// Binds kernel `name` of `package` to `device` (negative: the device of the
  /// current context, or 0). Copies what it needs from the package. Throws
  /// when the driver is unavailable, the device or the kernel does not exist.
  /// Loads no PTX yet.
  static Kernel load(const Package &package, std::string_view name,
                     int device = -1);

  explicit operator bool() const { return impl_ != nullptr; }
  const KernelInfo &info() const;
  const std::string &name() const { return info().name; }
  int device() const;
  const DeviceInfo &deviceInfo() const;
  /// Package::contentHash() of the package this kernel came from.
  const std::string &packageHash() const;
  int configCount() const { return info().configCount(); }

  /// Launches config `config` on `stream` (nullptr: the legacy default
  /// stream). Throws tessel::Error for argument mismatches, configs that do not
  /// fit the device, configs the package's @autotune prune condition rules out
  /// for these arguments (KernelConfig.h) and driver errors. An empty grid
  /// launches nothing.
  void launch(Grid grid, std::initializer_list<Arg> args,
              CUstream stream = nullptr, int config = 0) const {
    launch(grid, args.begin(), args.size(), stream, config);
  }
  void launch(Grid grid, const std::vector<Arg> &args,
              CUstream stream = nullptr, int config = 0) const {
    launch(grid, args.data(), args.size(), stream, config);
  }
  void launch(Grid grid, const Arg *args, size_t count, CUstream stream,
              int config) const;
  /// The launch after argument packing: `packed` must come from
  /// packArgs(info(), ...). The autotuner packs once, reads its key from the
  /// arguments and launches through this.
  void launchPacked(Grid grid, PackedArgs &packed, CUstream stream,
                    int config) const;

  /// The variant (index into info().allVariants()) a launch with `args` would use.
  int chooseVariant(const Arg *args, size_t count, int config) const;
  int chooseVariant(std::initializer_list<Arg> args, int config) const {
    return chooseVariant(args.begin(), args.size(), config);
  }

  /// Whether `config` runs on this device: arch, threads, shared memory and,
  /// after loading its variants in the current context, registers. PTX that
  /// fails to load makes the config not fit (reason: the JIT error).
  ConfigFit checkConfig(int config) const;
  std::vector<ConfigFit> checkConfigs() const;
  /// JIT-loads every usable variant of `config` (all configs when negative)
  /// into the current context, so later launches and timings exclude JIT.
  void preload(int config = -1) const;

  /// One line per variant: config, constexprs, arch, assumptions, and whether
  /// the device can use it.
  std::vector<std::string> explainVariants() const;

  class Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace tessel

#endif // TESSEL_RUNTIME_KERNEL_H
