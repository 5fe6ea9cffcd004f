//===- runtime/Interpret.h - launching kernels in the CPU interpreter -*- C++ -*-===//
//
// With TESSEL_INTERPRET=1 (or setInterpretMode(true)) a launch runs in the
// CPU interpreter instead of on the GPU, with the same arguments on host
// pointers. The runtime has no MLIR, so the interpreter (TesselInterpreter,
// built with the compiler) registers itself here through a function pointer:
// call tessel::interp::installRuntimeHook() once. The interpreter executes
// the variant's tessel-dialect IR (the package's optional "tessel_ir").
//
// Host buffers the kernel may touch are registered in a process-wide table
// (ScopedHostBuffer): every interpreted load and store must fall inside one,
// so an out-of-bounds access is reported instead of reading garbage.
//
// Header-only: the runtime library itself does not change when it is built
// without the interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_INTERPRET_H
#define TESSEL_RUNTIME_INTERPRET_H

#include "runtime/Args.h"
#include "package/Error.h"
#include "package/Package.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// One launch handed to the interpreter.
struct InterpretLaunch {
  const KernelInfo *kernel = nullptr;
  const Variant *variant = nullptr;
  int64_t grid[3] = {1, 1, 1};
  const Arg *args = nullptr;
  size_t count = 0;
};

/// Runs a launch; returns "" on success, else the error message.
using InterpretHook = std::string (*)(const InterpretLaunch &launch);

namespace detail {
inline std::atomic<InterpretHook> &interpretHookSlot() {
  static std::atomic<InterpretHook> hook{nullptr};
  return hook;
}
/// -1: follow TESSEL_INTERPRET; 0: off; 1: on.
inline std::atomic<int> &interpretModeSlot() {
  static std::atomic<int> mode{-1};
  return mode;
}
struct HostBufferTable {
  std::mutex mutex;
  std::map<const void *, std::pair<size_t, std::string>> buffers;
};
inline HostBufferTable &hostBufferTable() {
  static HostBufferTable table;
  return table;
}
} // namespace detail

inline void setInterpretHook(InterpretHook hook) { detail::interpretHookSlot() = hook; }
inline InterpretHook interpretHook() { return detail::interpretHookSlot(); }

/// Forces interpretation on or off; nullopt: follow TESSEL_INTERPRET again.
inline void setInterpretMode(std::optional<bool> on) {
  detail::interpretModeSlot() = on ? int(*on) : -1;
}
/// Whether launches run in the interpreter.
inline bool interpretEnabled() {
  int mode = detail::interpretModeSlot();
  if (mode >= 0)
    return mode == 1;
  const char *env = std::getenv("TESSEL_INTERPRET");
  return env && (std::strcmp(env, "1") == 0 || std::strcmp(env, "true") == 0);
}

struct HostBufferInfo {
  const void *base = nullptr;
  size_t bytes = 0;
  std::string name;
};

/// Registers [base, base + bytes) as memory interpreted kernels may access
/// (re-registering a base replaces its entry).
inline void registerHostBuffer(const void *base, size_t bytes, std::string name = "") {
  auto &table = detail::hostBufferTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.buffers[base] = {bytes, std::move(name)};
}
inline void unregisterHostBuffer(const void *base) {
  auto &table = detail::hostBufferTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.buffers.erase(base);
}
inline std::vector<HostBufferInfo> hostBuffers() {
  auto &table = detail::hostBufferTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  std::vector<HostBufferInfo> out;
  for (const auto &[base, entry] : table.buffers)
    out.push_back({base, entry.first, entry.second});
  return out;
}

/// Registers a host buffer for its lifetime.
class ScopedHostBuffer {
public:
  ScopedHostBuffer(const void *base, size_t bytes, std::string name = "") : base_(base) {
    registerHostBuffer(base, bytes, std::move(name));
  }
  ~ScopedHostBuffer() { unregisterHostBuffer(base_); }
  ScopedHostBuffer(const ScopedHostBuffer &) = delete;
  ScopedHostBuffer &operator=(const ScopedHostBuffer &) = delete;

private:
  const void *base_;
};

/// The variant an interpreted launch of `config` runs: its generic variant
/// (the interpreter needs no alignment specialisation), else its first.
inline const Variant *interpretedVariant(const KernelInfo &kernel, int config) {
  const std::vector<Variant> &variants = kernel.configs[size_t(config)].variants;
  for (const Variant &variant : variants)
    if (variant.isGeneric())
      return &variant;
  return variants.empty() ? nullptr : &variants.front();
}

/// Runs `launch` through the registered interpreter; throws tessel::Error
/// when none is registered or the run fails.
inline void interpretLaunch(const InterpretLaunch &launch) {
  InterpretHook hook = interpretHook();
  if (!hook)
    throw Error("TESSEL_INTERPRET is set but no interpreter is linked: link TesselInterpreter "
                "and call tessel::interp::installRuntimeHook()");
  std::string error = hook(launch);
  if (!error.empty())
    throw Error(error);
}

} // namespace tessel

#endif // TESSEL_RUNTIME_INTERPRET_H
