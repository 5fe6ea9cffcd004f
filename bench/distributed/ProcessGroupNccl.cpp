//===- bench/distributed/ProcessGroupNccl.cpp - The NCCL backend (CUDA tensors) ---===//
//
// Built with TESSEL_HAVE_NCCL when LibTorch has CUDA and nccl.h is found (the
// one from the nvidia-nccl wheel PyTorch was built with comes first);
// otherwise the factory throws and ProcessGroup falls back to Gloo.
//
//===----------------------------------------------------------------------===//

#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/ProcessGroupBackends.h"

#ifdef TESSEL_HAVE_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <stdexcept>

namespace tessel::dist {

bool ncclCompiledIn() {
#ifdef TESSEL_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

namespace detail {

c10::intrusive_ptr<c10d::Backend> createNcclBackend(const c10::intrusive_ptr<c10d::Store> &store,
                                                    int rank, int size, int localRank,
                                                    std::chrono::milliseconds timeout,
                                                    bool highPriorityStream) {
#ifdef TESSEL_HAVE_NCCL
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(localRank));
  auto options = c10d::ProcessGroupNCCL::Options::create(highPriorityStream);
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
#else
  (void)store, (void)rank, (void)size, (void)localRank, (void)timeout, (void)highPriorityStream;
  throw std::invalid_argument("this build has no NCCL support");
#endif
}

void synchronizeCurrentStream(torch::Device device) {
#ifdef TESSEL_HAVE_NCCL
  c10::cuda::getCurrentCUDAStream(device.index()).synchronize();
#else
  (void)device;
#endif
}

} // namespace detail
} // namespace tessel::dist
