//===- bench/tools/CudaSupport.cpp - CUDA pieces of the benchmarks --------===//

#include "bench/tools/CudaSupport.h"
#include "bench/tools/Report.h"

#include <torch/cuda.h>

#include <cstdlib>
#include <stdexcept>

#ifdef TESSEL_HAVE_TORCH_CUDA
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/cuda/memory_snapshot.h>
#endif

namespace tessel::bench {

#ifdef TESSEL_HAVE_TORCH_CUDA

bool cudaUsable() {
  // The caching allocator's statistics calls fail ("Invalid device argument") until
  // LibTorch has initialised CUDA, which its first allocation does.
  static const bool usable = [] {
    if (!torch::cuda::is_available())
      return false;
    at::empty({1}, at::TensorOptions().device(at::kCUDA));
    return true;
  }();
  return usable;
}

std::string cudaDeviceName() {
  if (!cudaUsable())
    return "";
  return at::cuda::getDeviceProperties(0)->name;
}

void cudaSynchronize() {
  if (cudaUsable())
    torch::cuda::synchronize();
}

static size_t aggregate() {
  return static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
}

int64_t cudaAllocatedBytes() {
  if (!cudaUsable())
    return 0;
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  return stats.allocated_bytes[aggregate()].current;
}

int64_t cudaPeakAllocatedBytes() {
  if (!cudaUsable())
    return 0;
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  return stats.allocated_bytes[aggregate()].peak;
}

void cudaResetPeak() {
  if (cudaUsable())
    c10::cuda::CUDACachingAllocator::resetPeakStats(c10::cuda::current_device());
}

void cudaEmptyCache() {
  if (cudaUsable())
    c10::cuda::CUDACachingAllocator::emptyCache();
}

void cudaRecordMemoryHistory(bool enabled, int64_t maxEntries) {
  if (!cudaUsable())
    throw std::runtime_error("memory history needs a CUDA GPU");
  if (!enabled) {
    torch::cuda::_record_memory_history(std::optional<std::string>());
    return;
  }
  // stacks="all" records C++ frames (LibTorch accepts only "python" or "all").
  // Symbolising C++ frames with addr2line over libtorch_cuda takes minutes; dladdr is instant.
  ::setenv("TORCH_SYMBOLIZE_MODE", "dladdr", /*overwrite=*/0);
  torch::cuda::_record_memory_history(std::optional<std::string>("all"),
                                      std::optional<std::string>("all"), "all",
                                      static_cast<size_t>(maxEntries));
}

void cudaWriteMemorySnapshot(const std::string &path) {
  std::string pickle = torch::cuda::_memory_snapshot_pickled();
  writeFile(path, [&](std::ostream &out) { out.write(pickle.data(), pickle.size()); });
}

void cudaRunOnSideStream(const std::function<void()> &fn) {
  c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  // side waits for current, runs fn, then current waits for side.
  at::cuda::CUDAEvent ready, done;
  ready.record(current);
  ready.block(side);
  {
    c10::cuda::CUDAStreamGuard guard(side);
    fn();
  }
  done.record(side);
  done.block(current);
}

struct CudaGraph::Impl {
  at::cuda::CUDAGraph graph;
};

CudaGraph::CudaGraph() : impl_(std::make_unique<Impl>()) {}
CudaGraph::~CudaGraph() = default;

void CudaGraph::capture(const std::function<void()> &fn) {
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  cudaSynchronize();
  c10::cuda::CUDAStreamGuard guard(side);
  bool cacheWasEnabled = at::autocast::is_autocast_cache_enabled();
  at::autocast::set_autocast_cache_enabled(false);
  try {
    impl_->graph.capture_begin();
    fn();
    impl_->graph.capture_end();
  } catch (...) {
    at::autocast::set_autocast_cache_enabled(cacheWasEnabled);
    throw;
  }
  at::autocast::set_autocast_cache_enabled(cacheWasEnabled);
}

void CudaGraph::replay() { impl_->graph.replay(); }

#else // !TESSEL_HAVE_TORCH_CUDA

static void unavailable() {
  throw std::runtime_error("this tessel-bench was built against a LibTorch without CUDA");
}

bool cudaUsable() { return false; }
std::string cudaDeviceName() { return ""; }
void cudaSynchronize() {}
int64_t cudaAllocatedBytes() { return 0; }
int64_t cudaPeakAllocatedBytes() { return 0; }
void cudaResetPeak() {}
void cudaEmptyCache() {}
void cudaRecordMemoryHistory(bool, int64_t) { unavailable(); }
void cudaWriteMemorySnapshot(const std::string &) { unavailable(); }
void cudaRunOnSideStream(const std::function<void()> &fn) { fn(); }
struct CudaGraph::Impl {};
CudaGraph::CudaGraph() : impl_(std::make_unique<Impl>()) {}
CudaGraph::~CudaGraph() = default;
void CudaGraph::capture(const std::function<void()> &) { unavailable(); }
void CudaGraph::replay() { unavailable(); }

#endif

} // namespace tessel::bench
