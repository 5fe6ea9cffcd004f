//===- bench/distributed/ProcessGroupGloo.cpp - The Gloo backend (CPU tensors) ---===//
//
// Compiled against the real Gloo headers when CMake finds them, else against
// gloo-shim/ (declarations only; see gloo-shim/README.md).
//
//===----------------------------------------------------------------------===//

#include "bench/distributed/ProcessGroupBackends.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>
#include <stdexcept>

namespace tessel::dist::detail {

c10::intrusive_ptr<c10d::Backend> createGlooBackend(const c10::intrusive_ptr<c10d::Store> &store,
                                                    int rank, int size,
                                                    std::chrono::milliseconds timeout) {
  // As torch.distributed does: GLOO_SOCKET_IFNAME picks the interface, else the
  // address this machine's hostname resolves to (loopback as the fallback).
  c10::intrusive_ptr<c10d::ProcessGroupGloo::Options> options;
  if (const char *ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  } else {
    options = c10d::ProcessGroupGloo::Options::create_default(timeout);
  }
  options->timeout = timeout;
  // One worker thread: Gloo runs our collectives one at a time, in the order issued.
  // PyTorch 2.11's ProcessGroupGloo::runLoop move-assigns the finished op's name to
  // pgStatus_->lastCompletedWorkName after releasing its queue lock, from every worker
  // thread. Two workers finishing at once both free the old buffer when the names are
  // longer than std::string's inline 15 characters: ALLGATHER_COALESCED, ZeRO-1's
  // step-group all-gathers, a double free that corrupted a worker's heap about once in
  // 40 runs under load (issue 37; never seen with one thread). Gloo is the CPU backend
  // of the tests and of machines without NCCL: nothing measured depends on its overlap.
  options->threads = 1;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

int glooWorkerThreads(c10d::Backend &gloo) {
  if (gloo.getBackendName() != "gloo")
    throw std::invalid_argument("glooWorkerThreads: a " + gloo.getBackendName() + " backend");
  return static_cast<c10d::ProcessGroupGloo &>(gloo).getNumThreads();
}

} // namespace tessel::dist::detail
