//===- bench/tools/CudaSupport.h - CUDA pieces of the benchmarks -*- C++ -*-===//
//
// Everything tessel-bench needs from LibTorch's CUDA side (caching-allocator
// statistics and snapshots, side streams, CUDA graphs) behind one small
// interface, implemented in CudaSupport.cpp. Built against a LibTorch without
// CUDA, the same calls exist and report "not available".
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_TOOLS_CUDASUPPORT_H
#define TESSEL_BENCH_TOOLS_CUDASUPPORT_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace tessel::bench {

/// Whether this build can use CUDA and a GPU is present.
bool cudaUsable();
/// Name of GPU 0 ("" without one).
std::string cudaDeviceName();
/// Waits for all work on the current GPU (no-op without CUDA).
void cudaSynchronize();

/// Caching-allocator statistics of the current GPU, in bytes.
int64_t cudaAllocatedBytes();
int64_t cudaPeakAllocatedBytes();
void cudaResetPeak();
/// Returns cached blocks to the driver (between sweep configurations).
void cudaEmptyCache();
/// Starts (or stops) recording allocation history with C++ stack traces, at
/// most `maxEntries` events, for cudaWriteMemorySnapshot.
void cudaRecordMemoryHistory(bool enabled, int64_t maxEntries = 100000);
/// Writes the caching allocator's snapshot (a pickle pytorch.org/memory_viz opens).
void cudaWriteMemorySnapshot(const std::string &path);

/// Runs `fn` on a fresh side stream, then makes the current stream wait for it
/// (the warm-up recipe before capturing a CUDA graph).
void cudaRunOnSideStream(const std::function<void()> &fn);

/// One captured CUDA graph.
class CudaGraph {
public:
  CudaGraph();
  ~CudaGraph();
  /// Captures the work `fn` enqueues (on a side stream; nothing runs). The
  /// autocast weight cache is off during capture, as graphs require.
  void capture(const std::function<void()> &fn);
  void replay();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessel::bench

#endif // TESSEL_BENCH_TOOLS_CUDASUPPORT_H
