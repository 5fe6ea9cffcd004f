//===- bench/distributed/ProcessGroup.cpp - c10d process groups from the environment ---===//

#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/ProcessGroupBackends.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/cuda.h>

#include <cstdlib>
#include <stdexcept>

namespace tessel::dist {
namespace {

/// c10::Error's what() carries a C++ backtrace; the message alone is clearer.
std::string messageOf(const std::exception &e) {
  if (const auto *error = dynamic_cast<const c10::Error *>(&e))
    return error->what_without_backtrace();
  return e.what();
}

/// Reads an integer variable; `fallback` when unset.
int intFromEnv(const char *name, int fallback) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > (1 << 30))
    throw std::invalid_argument(std::string("environment variable ") + name +
                                " must be a non-negative integer, got '" + text + "'");
  return static_cast<int>(value);
}

} // namespace

BackendKind parseBackendKind(const std::string &name) {
  if (name == "auto")
    return BackendKind::Auto;
  if (name == "nccl")
    return BackendKind::Nccl;
  if (name == "gloo")
    return BackendKind::Gloo;
  throw std::invalid_argument("unknown backend '" + name + "' (expected auto, nccl or gloo)");
}

const char *toString(BackendKind kind) {
  switch (kind) {
  case BackendKind::Auto:
    return "auto";
  case BackendKind::Nccl:
    return "nccl";
  case BackendKind::Gloo:
    return "gloo";
  }
  return "?";
}

Environment Environment::fromEnvironment() {
  Environment env;
  env.rank = intFromEnv("RANK", 0);
  env.worldSize = intFromEnv("WORLD_SIZE", 1);
  env.localRank = intFromEnv("LOCAL_RANK", env.rank);
  // A lone process with no MASTER_PORT serves its store on any free port, so
  // tools also run without a launcher even where 29500 is taken.
  bool alone = env.worldSize == 1 && !std::getenv("MASTER_PORT");
  env.masterPort = alone ? 0 : intFromEnv("MASTER_PORT", 29500);
  if (const char *addr = std::getenv("MASTER_ADDR"); addr && *addr)
    env.masterAddr = addr;
  if (env.worldSize < 1)
    throw std::invalid_argument("WORLD_SIZE must be at least 1");
  if (env.rank >= env.worldSize)
    throw std::invalid_argument("RANK " + std::to_string(env.rank) + " is not below WORLD_SIZE " +
                                std::to_string(env.worldSize));
  if ((env.masterPort < 1 && !alone) || env.masterPort > 65535)
    throw std::invalid_argument("MASTER_PORT must be a port number");
  return env;
}

std::shared_ptr<ProcessGroup> ProcessGroup::fromEnvironment(const ProcessGroupOptions &options) {
  return create(Environment::fromEnvironment(), options);
}

std::shared_ptr<ProcessGroup> ProcessGroup::create(const Environment &env,
                                                   const ProcessGroupOptions &options) {
  BackendKind kind = options.backend;
  if (kind == BackendKind::Auto)
    kind = ncclCompiledIn() && torch::cuda::is_available() ? BackendKind::Nccl : BackendKind::Gloo;
  if (kind == BackendKind::Nccl && !ncclCompiledIn())
    throw std::invalid_argument("this build has no NCCL support (LibTorch without CUDA or no nccl.h)");
  if (kind == BackendKind::Nccl && !torch::cuda::is_available())
    throw std::invalid_argument("the NCCL backend needs a CUDA device, and none is available");

  std::shared_ptr<ProcessGroup> pg(new ProcessGroup());
  pg->rank_ = env.rank;
  pg->size_ = env.worldSize;
  pg->kind_ = kind;

  c10d::TCPStoreOptions storeOptions;
  storeOptions.port = static_cast<uint16_t>(env.masterPort);
  storeOptions.isServer = env.rank == 0;
  storeOptions.numWorkers = static_cast<size_t>(env.worldSize);
  storeOptions.waitWorkers = true;
  storeOptions.timeout = options.timeout;
  try {
    pg->store_ = c10::make_intrusive<c10d::TCPStore>(env.masterAddr, storeOptions);
  } catch (const std::exception &e) {
    throw DistributedError("rank " + std::to_string(env.rank) + ": rendezvous at " +
                           env.masterAddr + ":" + std::to_string(env.masterPort) +
                           " failed (is every rank started, with the same MASTER_ADDR/MASTER_PORT?): " +
                           messageOf(e));
  }
  if (kind == BackendKind::Nccl) {
    pg->device_ = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.localRank));
    pg->backend_ = detail::createNcclBackend(pg->store_, env.rank, env.worldSize, env.localRank,
                                             options.timeout, options.highPriorityStream);
  } else {
    pg->backend_ = detail::createGlooBackend(pg->store_, env.rank, env.worldSize, options.timeout);
  }
  return pg;
}

std::string ProcessGroup::backendName() const { return toString(kind_); }

int64_t CollectiveCall::bytes() const {
  int64_t elements = 0;
  for (int64_t n : numels)
    elements += n;
  return elements * static_cast<int64_t>(c10::elementSize(dtype));
}

void ProcessGroup::record(CollectiveCall::Kind kind, const std::vector<torch::Tensor> &tensors) {
  if (!log_ || tensors.empty())
    return;
  CollectiveCall call;
  call.kind = kind;
  call.dtype = tensors.front().scalar_type();
  for (const torch::Tensor &t : tensors)
    call.numels.push_back(t.numel());
  log_->push_back(std::move(call));
}

Work ProcessGroup::allReduce(torch::Tensor &tensor, c10d::ReduceOp op) {
  record(CollectiveCall::Kind::AllReduce, {tensor});
  std::vector<torch::Tensor> tensors{tensor};
  c10d::AllreduceOptions opts;
  opts.reduceOp = op;
  return backend_->allreduce(tensors, opts);
}

Work ProcessGroup::allReduceMean(torch::Tensor &tensor) {
  if (kind_ == BackendKind::Nccl)
    return allReduce(tensor, c10d::ReduceOp::AVG);
  tensor.div_(size_);
  return allReduce(tensor, c10d::ReduceOp::SUM);
}

Work ProcessGroup::broadcast(torch::Tensor &tensor, int root) {
  record(CollectiveCall::Kind::Broadcast, {tensor});
  std::vector<torch::Tensor> tensors{tensor};
  c10d::BroadcastOptions opts;
  opts.rootRank = root;
  return backend_->broadcast(tensors, opts);
}

Work ProcessGroup::reduceScatter(torch::Tensor &output, torch::Tensor &input,
                                 c10d::ReduceOp op) {
  record(CollectiveCall::Kind::ReduceScatter, {output});
  c10d::ReduceScatterOptions options;
  options.reduceOp = op;
  return backend_->_reduce_scatter_base(output, input, options);
}

Work ProcessGroup::allGather(torch::Tensor &output, torch::Tensor &input) {
  record(CollectiveCall::Kind::AllGather, {input});
  return backend_->_allgather_base(output, input);
}

Work ProcessGroup::allGatherCoalesced(std::vector<torch::Tensor> &outputs,
                                      std::vector<torch::Tensor> &inputs) {
  record(CollectiveCall::Kind::AllGather, inputs);
  return backend_->allgather_into_tensor_coalesced(outputs, inputs);
}

void ProcessGroup::wait(const Work &work, const std::string &what) {
  try {
    work->wait();
  } catch (const std::exception &e) {
    throw DistributedError("rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " +
                           what + " over " + backendName() +
                           " failed (did another rank exit or time out?): " + messageOf(e));
  }
}

void ProcessGroup::barrier() {
  try {
    backend_->barrier()->wait();
  } catch (const std::exception &e) {
    throw DistributedError("rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                           ": barrier over " + backendName() +
                           " failed (did another rank exit or time out?): " + messageOf(e));
  }
}

void ProcessGroup::shutdown() {
  if (!backend_)
    return;
  synchronizeDevice();
  backend_->shutdown();
}

void ProcessGroup::synchronizeDevice() const {
  if (device_.is_cuda())
    detail::synchronizeCurrentStream(device_);
}

} // namespace tessel::dist
