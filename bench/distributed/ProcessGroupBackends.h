//===- bench/distributed/ProcessGroupBackends.h - Backend factories -*- C++ -*-===//
//
// Private to ProcessGroup.cpp: each backend is created in its own file so that
// only ProcessGroupNccl.cpp needs CUDA and NCCL headers and only
// ProcessGroupGloo.cpp needs the Gloo declarations (see gloo-shim/README.md).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_PROCESSGROUPBACKENDS_H
#define TESSEL_BENCH_DISTRIBUTED_PROCESSGROUPBACKENDS_H

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/types.h>

#include <chrono>

namespace tessel::dist::detail {

c10::intrusive_ptr<c10d::Backend> createGlooBackend(const c10::intrusive_ptr<c10d::Store> &store,
                                                    int rank, int size,
                                                    std::chrono::milliseconds timeout);
/// The worker threads of a Gloo backend (ProcessGroupGloo::getNumThreads): 1, see
/// createGlooBackend.
int glooWorkerThreads(c10d::Backend &gloo);
/// Binds this process to cuda:localRank first. Throws where NCCL is not compiled in.
c10::intrusive_ptr<c10d::Backend> createNcclBackend(const c10::intrusive_ptr<c10d::Store> &store,
                                                    int rank, int size, int localRank,
                                                    std::chrono::milliseconds timeout,
                                                    bool highPriorityStream);
void synchronizeCurrentStream(torch::Device device);

} // namespace tessel::dist::detail

#endif // TESSEL_BENCH_DISTRIBUTED_PROCESSGROUPBACKENDS_H
