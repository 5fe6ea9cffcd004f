//===- test/unit/FakeCuda.cpp - A fake CUDA driver for unit tests ---------===//
//
// Implements just enough of the driver API, on the host, for the runtime's
// launch path. Symbols are exported under their real (versioned) names.
//
//===----------------------------------------------------------------------===//
#include "FakeCuda.h"

#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using fakecuda::State;

static State state;
// Launches, memory and events may come from several threads (tuner tests).
static std::recursive_mutex fakeMutex;
static int primaryContextTag; // its address is the primary context
static std::vector<void *> contextStack;

namespace {
struct FakeFunction {
  std::string entry;
  int registers;
  int params;
  int timeUs;
  bool increments;
};
struct FakeEvent {
  double clockUs = 0;
};
struct FakeModule {
  std::string ptx;
  // Functions live as long as their module, as in CUDA.
  std::vector<std::unique_ptr<FakeFunction>> functions;
};
} // namespace

static int ptxNumber(const std::string &ptx, const char *key, int fallback) {
  size_t at = ptx.find(key);
  return at == std::string::npos ? fallback
                                 : std::atoi(ptx.c_str() + at + strlen(key));
}

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT State *fakeCudaState() { return &state; }

EXPORT CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
EXPORT CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = error == CUDA_ERROR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX"
          : error == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND"
                                          : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}
EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
  *text = error == CUDA_ERROR_INVALID_PTX ? "a PTX JIT compilation failed"
                                          : "fake error";
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  *device = ordinal;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetCount(int *count) {
  *count = state.deviceCount;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice) {
  std::strncpy(name, "Fake GPU", size_t(length));
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                     CUdevice) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = state.major;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = state.minor;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *value = 49152;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = state.sharedOptin;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    *value = state.registersPerBlock;
    break;
  default:
    *value = 0;
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice) {
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  *context = reinterpret_cast<CUcontext>(&primaryContextTag);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return CUDA_SUCCESS; }
EXPORT CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = static_cast<CUcontext>(state.currentContext);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  state.currentContext = context;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) {
  contextStack.push_back(state.currentContext);
  state.currentContext = context;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *context) {
  if (context)
    *context = static_cast<CUcontext>(state.currentContext);
  state.currentContext = contextStack.empty() ? nullptr : contextStack.back();
  if (!contextStack.empty())
    contextStack.pop_back();
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxGetDevice(CUdevice *device) {
  *device = 0;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                                   unsigned count, CUjit_option *options,
                                   void **values) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  std::string ptx = static_cast<const char *>(image);
  bool cubin = ptx.rfind("\x7f" "ELF", 0) == 0;
  if (cubin && ptx.find("unreadable") != std::string::npos)
    return CUDA_ERROR_INVALID_IMAGE;
  if (ptx.find("syntax error") != std::string::npos) {
    for (unsigned i = 0; i < count; ++i)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
        std::strcpy(static_cast<char *>(values[i]),
                    "ptxas application ptx input, line 3; error: syntax error");
    return CUDA_ERROR_INVALID_PTX;
  }
  ++state.moduleLoads;
  state.cubinLoads += cubin;
  *module = reinterpret_cast<CUmodule>(new FakeModule{ptx, {}});
  return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleUnload(CUmodule module) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  ++state.moduleUnloads;
  delete reinterpret_cast<FakeModule *>(module);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                                    const char *name) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  auto *fake = reinterpret_cast<FakeModule *>(module);
  const std::string &ptx = fake->ptx;
  if (ptx.find(std::string(".entry ") + name) == std::string::npos)
    return CUDA_ERROR_NOT_FOUND;
  fake->functions.push_back(std::make_unique<FakeFunction>(
      FakeFunction{name, ptxNumber(ptx, "// regs ", state.defaultRegisters),
                   ptxNumber(ptx, "// params ", 0),
                   ptxNumber(ptx, "// time_us ", 1),
                   ptx.find("// increments param 0") != std::string::npos}));
  *function = reinterpret_cast<CUfunction>(fake->functions.back().get());
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                                   CUfunction function) {
  auto *fn = reinterpret_cast<FakeFunction *>(function);
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *value = fn->registers;
    break;
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: {
    int threads = state.registersPerBlock / (fn->registers ? fn->registers : 1);
    threads = threads / 32 * 32;
    *value = threads < 1024 ? threads : 1024;
    break;
  }
  default:
    *value = 0;
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuFuncSetAttribute(CUfunction function,
                                   CUfunction_attribute attribute, int value) {
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    state.maxDynamicShared.emplace_back(
        reinterpret_cast<FakeFunction *>(function)->entry, value);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy,
                               unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, CUstream stream,
                               void **params, void **) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  auto *fn = reinterpret_cast<FakeFunction *>(function);
  fakecuda::LaunchRecord record{fn->entry, {gx, gy, gz}, {bx, by, bz},
                                shared,    stream,       {}};
  for (int i = 0; i < fn->params; ++i) {
    uint64_t value = 0;
    std::memcpy(&value, params[i], sizeof(value));
    record.params.push_back(value);
  }
  state.clockUs += fn->timeUs + state.slowdownUsPerLaunch * double(state.launches.size());
  state.launches.push_back(record);
  if (fn->increments) {
    void *target = nullptr;
    std::memcpy(&target, params[0], sizeof(target));
    if (target)
      ++*static_cast<int32_t *>(target);
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction function,
                                 void **params, void **extra) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  unsigned cluster = 1;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute &attr = config->attrs[i];
    if (attr.id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      continue;
    // As the real driver: the grid must be whole clusters.
    if (config->gridDimX % attr.value.clusterDim.x != 0 || attr.value.clusterDim.y != 1 ||
        attr.value.clusterDim.z != 1)
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    cluster = attr.value.clusterDim.x;
  }
  CUresult result = cuLaunchKernel(function, config->gridDimX, config->gridDimY,
                                   config->gridDimZ, config->blockDimX, config->blockDimY,
                                   config->blockDimZ, config->sharedMemBytes, config->hStream,
                                   params, extra);
  state.launches.back().cluster = cluster;
  return result;
}

// Memory: host-backed; copies are real. Streams: no-ops. Events: the clock.
static std::map<uintptr_t, size_t> allocations;

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  void *memory = std::calloc(bytes ? bytes : 1, 1);
  allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  *pointer = CUdeviceptr(reinterpret_cast<uintptr_t>(memory));
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  allocations.erase(uintptr_t(pointer));
  std::free(reinterpret_cast<void *>(uintptr_t(pointer)));
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = *total = size_t(80) << 30;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size,
                                        CUdeviceptr pointer) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  auto it = allocations.upper_bound(uintptr_t(pointer));
  if (it == allocations.begin())
    return CUDA_ERROR_NOT_FOUND;
  --it;
  if (uintptr_t(pointer) >= it->first + it->second)
    return CUDA_ERROR_NOT_FOUND;
  if (base)
    *base = CUdeviceptr(it->first);
  if (size)
    *size = it->second;
  return CUDA_SUCCESS;
}
static void *host(CUdeviceptr pointer) {
  return reinterpret_cast<void *>(uintptr_t(pointer));
}
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void *from,
                                size_t bytes) {
  std::memcpy(host(to), from, bytes);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyDtoH_v2(void *to, CUdeviceptr from, size_t bytes) {
  std::memcpy(to, host(from), bytes);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr to, CUdeviceptr from,
                                size_t bytes) {
  std::memmove(host(to), host(from), bytes);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void *from,
                                     size_t bytes, CUstream) {
  return cuMemcpyHtoD_v2(to, from, bytes);
}
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *to, CUdeviceptr from, size_t bytes,
                                     CUstream) {
  return cuMemcpyDtoH_v2(to, from, bytes);
}
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from,
                                     size_t bytes, CUstream) {
  return cuMemcpyDtoD_v2(to, from, bytes);
}
EXPORT CUresult cuMemsetD8_v2(CUdeviceptr to, unsigned char value,
                              size_t count) {
  std::memset(host(to), value, count);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr to, unsigned char value,
                                size_t count, CUstream) {
  return cuMemsetD8_v2(to, value, count);
}
EXPORT CUresult cuMemsetD32_v2(CUdeviceptr to, unsigned value, size_t count) {
  auto *words = static_cast<unsigned *>(host(to));
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned) {
  static int tags[64];
  static int next = 0;
  *stream = reinterpret_cast<CUstream>(&tags[next++ % 64]);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamDestroy_v2(CUstream) { return CUDA_SUCCESS; }
EXPORT CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
EXPORT CUresult cuEventCreate(CUevent *event, unsigned) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  ++state.eventsCreated;
  *event = reinterpret_cast<CUevent>(new FakeEvent);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  ++state.eventsDestroyed;
  delete reinterpret_cast<FakeEvent *>(event);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventRecord(CUevent event, CUstream) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  reinterpret_cast<FakeEvent *>(event)->clockUs = state.clockUs;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType, cuuint32_t rank,
                                       void *, const cuuint64_t *dims,
                                       const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *, CUtensorMapInterleave,
                                       CUtensorMapSwizzle, CUtensorMapL2promotion,
                                       CUtensorMapFloatOOBfill) {
  std::lock_guard<std::recursive_mutex> lock(fakeMutex);
  // The real encoder's limits on what Tessel asks for: ranks 2 to 5, strides in 16-byte
  // multiples, boxes of at most 256 per dimension.
  if (rank < 2 || rank > 5)
    return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t i = 0; i < rank; ++i)
    if ((i + 1 < rank && strides[i] % 16 != 0) || box[i] < 1 || box[i] > 256)
      return CUDA_ERROR_INVALID_VALUE;
  *map = CUtensorMap{};
  if (rank == 2) {
    state.tensorMaps.push_back({dims[0], dims[1], strides[0], box[0], box[1]});
  } else {
    std::vector<uint64_t> record(dims, dims + rank);
    record.insert(record.end(), strides, strides + rank - 1);
    record.insert(record.end(), box, box + rank);
    state.tensorMaps.push_back(record);
  }
  return CUDA_SUCCESS;
}
EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end) {
  *ms = float((reinterpret_cast<FakeEvent *>(end)->clockUs -
               reinterpret_cast<FakeEvent *>(start)->clockUs) /
              1000.0);
  return CUDA_SUCCESS;
}
