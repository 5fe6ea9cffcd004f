//===- test/unit/FakeCuda.h - State of the fake CUDA driver -----*- C++ -*-===//
//
// FakeCuda.cpp builds a shared library exporting the driver entry points the
// runtime resolves, backed by host memory and a log of calls, so the launch
// path (contexts, lazy module loading, variant choice, shared-memory opt-in,
// JIT errors) is tested without a GPU. Tests reach this state through the
// exported fakeCudaState().
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_UNIT_FAKECUDA_H
#define TESSEL_TEST_UNIT_FAKECUDA_H

#include <cstdint>
#include <string>
#include <vector>

namespace fakecuda {

struct LaunchRecord {
  std::string entry;
  unsigned grid[3];
  unsigned block[3];
  unsigned sharedBytes;
  void *stream;
  /// The first 8 bytes behind each kernel parameter (count = the entry's
  /// parameter count as declared by "// params N" in the PTX).
  std::vector<uint64_t> params;
  /// Programs per cluster along x (cuLaunchKernelEx's cluster dimension; 1: none).
  unsigned cluster = 1;
};

struct State {
  // Device properties the fake reports.
  int major = 9, minor = 0;
  int sharedOptin = 232448;
  int registersPerBlock = 65536;
  // Per-function attributes; PTX may override with "// regs N".
  int defaultRegisters = 32;
  // Timing: every launch advances a virtual clock by the function's
  // "// time_us N" (default 1); events record the clock, so
  // cuEventElapsedTime measures the launches between two events. A function
  // whose PTX says "// increments param 0" adds 1 to the int32 behind its
  // first (pointer) parameter, so tests can see whether outputs were
  // restored between timing runs.
  double clockUs = 0;
  /// A GPU that slows as it warms: launch n takes n times this much longer.
  double slowdownUsPerLaunch = 0;
  int eventsCreated = 0;
  int eventsDestroyed = 0;
  int deviceCount = 1;

  // Observations.
  void *currentContext = nullptr;
  int moduleLoads = 0;
  /// Of those, images that began with the ELF magic (a package's cubin). A fake
  /// cubin is the magic followed by PTX-like text; one saying "unreadable" is
  /// refused with CUDA_ERROR_INVALID_IMAGE, as a driver refuses a newer ELF.
  int cubinLoads = 0;
  int moduleUnloads = 0;
  std::vector<std::pair<std::string, int>> maxDynamicShared; // entry, value
  std::vector<LaunchRecord> launches;
  /// cuTensorMapEncodeTiled calls: {cols, rows, row stride in bytes, box cols, box rows};
  /// rank r > 2: {dims x r, strides x r-1, box x r}.
  std::vector<std::vector<uint64_t>> tensorMaps;

  void reset() { *this = State(); }
};

} // namespace fakecuda

extern "C" fakecuda::State *fakeCudaState();

#endif // TESSEL_TEST_UNIT_FAKECUDA_H
