//===- bench/distributed/ProcessGroupGloo.cpp - The Gloo backend (CPU tensors) ---===//
//
// Compiled against the real Gloo headers when CMake finds them, else against
// gloo-shim/ (declarations only; see gloo-shim/README.md).
//
//===----------------------------------------------------------------------===//

#include "bench/distributed/ProcessGroupBackends.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdlib>

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
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

} // namespace tessel::dist::detail
