//===- runtime/Driver.h - The CUDA driver, loaded at run time ---*- C++ -*-===//
//
// The runtime never links libcuda: it dlopen()s "libcuda.so.1" on first use,
// so it builds and its non-GPU tests run on machines without a driver, and a
// launch there fails with a clear message instead of a loader error. cuda.h
// is used for types and enums only; every entry point is resolved by its real
// (versioned) symbol name.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_DRIVER_H
#define TESSEL_RUNTIME_DRIVER_H

#include "package/Error.h"

#include <cuda.h>

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

/// The driver entry points the runtime uses: X(member, real symbol).
#define TESSEL_DRIVER_FUNCTIONS(X)                                             \
  X(init, cuInit)                                                              \
  X(driverGetVersion, cuDriverGetVersion)                                      \
  X(getErrorName, cuGetErrorName)                                              \
  X(getErrorString, cuGetErrorString)                                          \
  X(deviceGet, cuDeviceGet)                                                    \
  X(deviceGetCount, cuDeviceGetCount)                                          \
  X(deviceGetName, cuDeviceGetName)                                            \
  X(deviceGetAttribute, cuDeviceGetAttribute)                                  \
  X(deviceTotalMem, cuDeviceTotalMem_v2)                                       \
  X(devicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)                          \
  X(devicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)                     \
  X(ctxGetCurrent, cuCtxGetCurrent)                                            \
  X(ctxSetCurrent, cuCtxSetCurrent)                                            \
  X(ctxPushCurrent, cuCtxPushCurrent_v2)                                       \
  X(ctxPopCurrent, cuCtxPopCurrent_v2)                                         \
  X(ctxGetDevice, cuCtxGetDevice)                                              \
  X(ctxSynchronize, cuCtxSynchronize)                                          \
  X(moduleLoadDataEx, cuModuleLoadDataEx)                                      \
  X(moduleUnload, cuModuleUnload)                                              \
  X(moduleGetFunction, cuModuleGetFunction)                                    \
  X(funcGetAttribute, cuFuncGetAttribute)                                      \
  X(funcSetAttribute, cuFuncSetAttribute)                                      \
  X(launchKernel, cuLaunchKernel)                                              \
  X(launchKernelEx, cuLaunchKernelEx)                                          \
  X(memAlloc, cuMemAlloc_v2)                                                   \
  X(memFree, cuMemFree_v2)                                                     \
  X(memGetInfo, cuMemGetInfo_v2)                                               \
  X(memGetAddressRange, cuMemGetAddressRange_v2)                               \
  X(memcpyHtoD, cuMemcpyHtoD_v2)                                               \
  X(memcpyDtoH, cuMemcpyDtoH_v2)                                               \
  X(memcpyDtoD, cuMemcpyDtoD_v2)                                               \
  X(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2)                                     \
  X(memcpyDtoHAsync, cuMemcpyDtoHAsync_v2)                                     \
  X(memcpyDtoDAsync, cuMemcpyDtoDAsync_v2)                                     \
  X(memsetD8, cuMemsetD8_v2)                                                   \
  X(memsetD8Async, cuMemsetD8Async)                                            \
  X(memsetD32, cuMemsetD32_v2)                                                 \
  X(streamCreate, cuStreamCreate)                                              \
  X(streamDestroy, cuStreamDestroy_v2)                                         \
  X(streamSynchronize, cuStreamSynchronize)                                    \
  X(eventCreate, cuEventCreate)                                                \
  X(eventDestroy, cuEventDestroy_v2)                                           \
  X(eventRecord, cuEventRecord)                                                \
  X(eventSynchronize, cuEventSynchronize)                                      \
  X(eventElapsedTime, cuEventElapsedTime_v2)                                   \
  X(tensorMapEncodeTiled, cuTensorMapEncodeTiled)

/// What the runtime needs to know about a device.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  /// Shared memory per block without / with opting in
  /// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
  int maxSharedPerBlock = 0;
  int maxSharedPerBlockOptin = 0;
  int maxThreadsPerBlock = 0;
  int registersPerBlock = 0;
  size_t totalMemory = 0;
  /// Driver version as cuDriverGetVersion reports it (13000 = 13.0).
  int driverVersion = 0;

  /// major*10+minor, e.g. 90 for an H100.
  int capability() const { return major * 10 + minor; }
  /// "sm_90"
  std::string arch() const;
};

class Driver {
public:
  /// The loaded driver; throws tessel::Error when libcuda.so.1 cannot be
  /// loaded, lacks a symbol, fails cuInit, or there is no device. The outcome
  /// is decided once per process.
  static Driver &get();
  /// True when get() would succeed. Never throws.
  static bool isAvailable() noexcept;
  /// Why get() fails; empty when it would not. Never throws.
  static std::string unavailableReason() noexcept;

#define TESSEL_DRIVER_MEMBER(member, symbol) decltype(&::symbol) member = nullptr;
  TESSEL_DRIVER_FUNCTIONS(TESSEL_DRIVER_MEMBER)
#undef TESSEL_DRIVER_MEMBER

  /// "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)".
  std::string errorText(CUresult result) const;
  /// Throws "<what> failed: <errorText>[: <detail>]" unless CUDA_SUCCESS.
  void check(CUresult result, std::string_view what,
             std::string_view detail = {}) const {
    if (result != CUDA_SUCCESS)
      fail(result, what, detail);
  }
  [[noreturn]] void fail(CUresult result, std::string_view what,
                         std::string_view detail = {}) const;

  int deviceCount() const { return deviceCount_; }
  int driverVersion() const { return driverVersion_; }
  /// Cached per device; throws for a bad ordinal.
  const DeviceInfo &deviceInfo(int device);

  /// The device of the current context, or 0 when there is none.
  int currentDevice();
  /// A context for `device` (negative: currentDevice()): the current
  /// context when it belongs to that device (so the runtime shares
  /// PyTorch's primary context), else the device's primary context, retained
  /// once and kept for the life of the process. Does not change the current
  /// context.
  CUcontext contextFor(int device);
  /// Makes a context for `device` current when none is (like the CUDA
  /// runtime's lazy initialisation) and returns it.
  CUcontext ensureCurrent(int device);

private:
  Driver() = default;
  Driver(const Driver &) = delete;
  void load();
  struct Outcome;
  static const Outcome &outcome();

  void *library_ = nullptr;
  int deviceCount_ = 0;
  int driverVersion_ = 0;
  std::mutex mutex_;
  std::vector<DeviceInfo> devices_;
  std::vector<bool> haveInfo_;
  std::vector<CUcontext> primary_;
};

/// Saves the current context, makes `context` current, restores on exit.
/// Cheap when `context` already is current.
class ScopedContext {
public:
  ScopedContext(Driver &driver, CUcontext context);
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

private:
  Driver &driver_;
  bool pushed_ = false;
};

} // namespace tessel

#endif // TESSEL_RUNTIME_DRIVER_H
