//===- runtime/Driver.cpp - The CUDA driver, loaded at run time -----------===//
//
// Loading happens once per process; its outcome (the driver or the reason it
// is unusable) is remembered, so every later get() gives the same answer
// cheaply. The library is never dlclose()d: kernels and buffers destroyed
// during static destruction may still call into it.
//
//===----------------------------------------------------------------------===//
#include "runtime/Driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>

using namespace tessel;

std::string DeviceInfo::arch() const {
  return "sm_" + std::to_string(capability());
}

/// The once-per-process outcome of loading the driver.
struct Driver::Outcome {
  Driver *driver = nullptr;
  std::string error;
};

static std::string versionText(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string((version % 1000) / 10);
}

void Driver::load() {
  // TESSEL_CUDA_LIBRARY overrides the library (a compat driver, or the fake
  // driver of the unit tests).
  const char *override = std::getenv("TESSEL_CUDA_LIBRARY");
  std::string name = override && *override ? override : "libcuda.so.1";
  library_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    const char *reason = ::dlerror();
    throw Error("CUDA driver not found: dlopen(" + name + ") failed: " +
                (reason ? reason : "unknown error") +
                " — is an NVIDIA driver installed?");
  }
  // Resolve the version query first so a missing symbol can say how old the
  // driver is.
  auto getVersion = reinterpret_cast<decltype(&::cuDriverGetVersion)>(
      ::dlsym(library_, "cuDriverGetVersion"));
  if (getVersion)
    getVersion(&driverVersion_);
#define TESSEL_DRIVER_RESOLVE(member, symbol)                                  \
  member = reinterpret_cast<decltype(member)>(::dlsym(library_, #symbol));     \
  if (!member)                                                                 \
    throw Error("CUDA driver too old: " + name + " (driver " +                 \
                versionText(driverVersion_) + ") has no symbol '" #symbol     \
                "'; Tessel needs a CUDA 12 or newer driver");
  TESSEL_DRIVER_FUNCTIONS(TESSEL_DRIVER_RESOLVE)
#undef TESSEL_DRIVER_RESOLVE

  CUresult result = init(0);
  if (result == CUDA_ERROR_NO_DEVICE)
    throw Error("no CUDA device found (cuInit: " + errorText(result) + ")");
  check(result, "cuInit");
  check(deviceGetCount(&deviceCount_), "cuDeviceGetCount");
  if (deviceCount_ <= 0)
    throw Error("no CUDA device found (the driver reports 0 devices)");
  devices_.resize(size_t(deviceCount_));
  haveInfo_.assign(size_t(deviceCount_), false);
  primary_.assign(size_t(deviceCount_), nullptr);
}

const Driver::Outcome &Driver::outcome() {
  static const Outcome loaded = [] {
    Outcome result;
    std::unique_ptr<Driver> driver(new Driver());
    try {
      driver->load();
      // Lives for the whole process (see the file comment).
      result.driver = driver.release();
    } catch (const std::exception &error) {
      // A library that was opened stays mapped; only the object goes.
      result.error = error.what();
    }
    return result;
  }();
  return loaded;
}

Driver &Driver::get() {
  const Outcome &result = outcome();
  if (!result.driver)
    throw Error(result.error);
  return *result.driver;
}

bool Driver::isAvailable() noexcept {
  try {
    return outcome().driver != nullptr;
  } catch (...) {
    return false;
  }
}

std::string Driver::unavailableReason() noexcept {
  try {
    return outcome().error;
  } catch (...) {
    return "unknown error while loading the CUDA driver";
  }
}

std::string Driver::errorText(CUresult result) const {
  const char *name = nullptr;
  const char *text = nullptr;
  if (!getErrorName || getErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (!getErrorString || getErrorString(result, &text) != CUDA_SUCCESS ||
      !text)
    text = nullptr;
  std::string out = name ? name : "CUresult " + std::to_string(int(result));
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

void Driver::fail(CUresult result, std::string_view what,
                  std::string_view detail) const {
  std::string message = std::string(what) + " failed: " + errorText(result);
  if (!detail.empty())
    message += ": " + std::string(detail);
  throw Error(message);
}

const DeviceInfo &Driver::deviceInfo(int device) {
  if (device < 0 || device >= deviceCount_)
    throw Error("CUDA device " + std::to_string(device) +
                " does not exist (the driver reports " +
                std::to_string(deviceCount_) + " device(s))");
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceInfo &info = devices_[size_t(device)];
  if (haveInfo_[size_t(device)])
    return info;
  CUdevice handle;
  check(deviceGet(&handle, device), "cuDeviceGet");
  auto attribute = [&](CUdevice_attribute which, const char *what) {
    int value = 0;
    check(deviceGetAttribute(&value, which, handle),
          std::string("cuDeviceGetAttribute(") + what + ")");
    return value;
  };
  char name[256] = {};
  check(deviceGetName(name, sizeof(name) - 1, handle), "cuDeviceGetName");
  info.ordinal = device;
  info.name = name;
  info.major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                         "COMPUTE_CAPABILITY_MAJOR");
  info.minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                         "COMPUTE_CAPABILITY_MINOR");
  info.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   "MULTIPROCESSOR_COUNT");
  info.maxSharedPerBlock =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                "MAX_SHARED_MEMORY_PER_BLOCK");
  info.maxSharedPerBlockOptin =
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN");
  info.maxThreadsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                      "MAX_THREADS_PER_BLOCK");
  info.registersPerBlock = attribute(
      CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "MAX_REGISTERS_PER_BLOCK");
  check(deviceTotalMem(&info.totalMemory, handle), "cuDeviceTotalMem");
  info.driverVersion = driverVersion_;
  haveInfo_[size_t(device)] = true;
  return info;
}

int Driver::currentDevice() {
  CUcontext current = nullptr;
  check(ctxGetCurrent(&current), "cuCtxGetCurrent");
  if (!current)
    return 0;
  CUdevice device = 0;
  check(ctxGetDevice(&device), "cuCtxGetDevice");
  return int(device);
}

CUcontext Driver::contextFor(int device) {
  if (device < 0)
    device = currentDevice();
  deviceInfo(device); // validates the ordinal
  CUcontext current = nullptr;
  check(ctxGetCurrent(&current), "cuCtxGetCurrent");
  if (current) {
    CUdevice currentDev = 0;
    check(ctxGetDevice(&currentDev), "cuCtxGetDevice");
    if (int(currentDev) == device)
      return current;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  CUcontext &primary = primary_[size_t(device)];
  if (!primary) {
    CUdevice handle;
    check(deviceGet(&handle, device), "cuDeviceGet");
    check(devicePrimaryCtxRetain(&primary, handle),
          "cuDevicePrimaryCtxRetain(device " + std::to_string(device) + ")");
  }
  return primary;
}

CUcontext Driver::ensureCurrent(int device) {
  CUcontext context = contextFor(device);
  CUcontext current = nullptr;
  check(ctxGetCurrent(&current), "cuCtxGetCurrent");
  if (!current)
    check(ctxSetCurrent(context), "cuCtxSetCurrent");
  return context;
}

ScopedContext::ScopedContext(Driver &driver, CUcontext context)
    : driver_(driver) {
  CUcontext current = nullptr;
  driver.check(driver.ctxGetCurrent(&current), "cuCtxGetCurrent");
  if (current == context)
    return;
  driver.check(driver.ctxPushCurrent(context), "cuCtxPushCurrent");
  pushed_ = true;
}

ScopedContext::~ScopedContext() {
  if (!pushed_)
    return;
  CUcontext popped = nullptr;
  driver_.ctxPopCurrent(&popped);
}
