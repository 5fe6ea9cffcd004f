//===- bench/distributed/ProcessGroup.h - c10d process groups from the environment -*- C++ -*-===//
//
// Tessel's data-parallel code talks to other ranks only through LibTorch's
// c10d: a TCPStore for the rendezvous and a ProcessGroupNCCL (CUDA tensors) or
// ProcessGroupGloo (CPU tensors) for the collectives. This file creates them
// from the variables every launcher sets (torchrun, srun wrappers, tessel-run):
//
//   MASTER_ADDR, MASTER_PORT   where rank 0's TCPStore listens
//   RANK, WORLD_SIZE           this process's rank and the number of ranks
//   LOCAL_RANK                 the GPU this rank uses (cuda:LOCAL_RANK)
//
//   auto pg = tessel::dist::ProcessGroup::fromEnvironment();   // NCCL if CUDA is there
//   torch::Tensor t = torch::ones({4}, pg->device());
//   pg->wait(pg->allReduce(t));                                  // t == world size
//
// Failures of a peer (a rank that exited, a timeout) surface as
// tessel::dist::DistributedError naming the rank and the collective.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_PROCESSGROUP_H
#define TESSEL_BENCH_DISTRIBUTED_PROCESSGROUP_H

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/types.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::dist {

/// A collective failed or timed out (usually: a peer died).
class DistributedError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

using Work = c10::intrusive_ptr<c10d::Work>;

/// One collective as a rank issued it: enough to issue it again on its own (CommReplay.h).
struct CollectiveCall {
  enum class Kind { AllReduce, Broadcast, ReduceScatter, AllGather };
  Kind kind = Kind::AllReduce;
  c10::ScalarType dtype = c10::ScalarType::Float;
  /// Elements of each tensor of the call (several: a coalesced all-gather): the all-reduced or
  /// broadcast tensor, the all-gather's input chunk, the reduce-scatter's output chunk.
  std::vector<int64_t> numels;
  int64_t bytes() const; ///< what one rank contributes: sum of numels x element size
};

enum class BackendKind {
  Auto, ///< NCCL when CUDA is available, else Gloo.
  Nccl,
  Gloo,
};
/// "auto" | "nccl" | "gloo"; throws std::invalid_argument otherwise.
BackendKind parseBackendKind(const std::string &name);
const char *toString(BackendKind kind);
/// Whether this build can create an NCCL process group (LibTorch with CUDA and nccl.h).
bool ncclCompiledIn();

/// The launcher's variables. fromEnvironment() defaults to a single process
/// (rank 0 of 1, its store on 127.0.0.1 at any free port) when none are set, so
/// every tool also runs alone; MASTER_PORT defaults to 29500 otherwise.
struct Environment {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500; ///< 0: any free port (single process only)
  /// Throws std::invalid_argument on malformed or inconsistent values.
  static Environment fromEnvironment();
};

struct ProcessGroupOptions {
  BackendKind backend = BackendKind::Auto;
  /// Rendezvous and collective timeout: a peer that is gone makes every other
  /// rank fail after at most this long (Gloo usually fails at once on a closed
  /// connection).
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  /// NCCL: launch the collectives on high-priority CUDA streams
  /// (ProcessGroupNCCL::Options::is_high_priority_stream), so their kernels are
  /// scheduled ahead of compute kernels waiting for SMs. Ignored by Gloo.
  bool highPriorityStream = false;
};

class ProcessGroup {
public:
  /// Rendezvous through a TCPStore (rank 0 serves it) and create the backend.
  static std::shared_ptr<ProcessGroup> create(const Environment &env,
                                              const ProcessGroupOptions &options = {});
  static std::shared_ptr<ProcessGroup> fromEnvironment(const ProcessGroupOptions &options = {});

  int rank() const { return rank_; }
  int size() const { return size_; }
  BackendKind kind() const { return kind_; }
  /// "nccl" or "gloo".
  std::string backendName() const;
  /// Where this rank's tensors live: cuda:LOCAL_RANK for NCCL, cpu for Gloo.
  torch::Device device() const { return device_; }
  c10d::Backend &backend() { return *backend_; }
  const c10::intrusive_ptr<c10d::Store> &store() const { return store_; }

  /// Asynchronous collectives on one dense tensor; wait() on the result. With
  /// NCCL, wait() makes the current CUDA stream wait (the host does not block).
  Work allReduce(torch::Tensor &tensor, c10d::ReduceOp op = c10d::ReduceOp::SUM);
  /// Sum-reduces and divides by size(): ReduceOp::AVG where the backend has it
  /// (NCCL), otherwise the tensor is divided first and summed.
  Work allReduceMean(torch::Tensor &tensor);
  Work broadcast(torch::Tensor &tensor, int root);
  /// input is size() equal chunks; output (one chunk) gets the sum (or `op`) of chunk rank().
  Work reduceScatter(torch::Tensor &output, torch::Tensor &input,
                     c10d::ReduceOp op = c10d::ReduceOp::SUM);
  /// output is size() chunks of input's size; chunk k is rank k's input.
  Work allGather(torch::Tensor &output, torch::Tensor &input);
  /// Several all-gathers as one collective (allgather_into_tensor_coalesced).
  Work allGatherCoalesced(std::vector<torch::Tensor> &outputs, std::vector<torch::Tensor> &inputs);
  /// While set, every collective above is appended to `log` (nullptr: stop).
  void recordCollectives(std::vector<CollectiveCall> *log) { log_ = log; }
  /// Waits for `work`; a failure becomes a DistributedError naming this rank and `what`.
  void wait(const Work &work, const std::string &what = "collective");
  void barrier();
  /// Host-side synchronisation of the device's current stream (no-op on CPU).
  void synchronizeDevice() const;
  /// Ends the backend cleanly (NCCL: finalises its communicators, as
  /// torch.distributed.destroy_process_group does). Call on every rank when done;
  /// no collective may follow.
  void shutdown();

private:
  ProcessGroup() = default;
  int rank_ = 0, size_ = 1;
  BackendKind kind_ = BackendKind::Gloo;
  torch::Device device_{torch::kCPU};
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> backend_;
  std::vector<CollectiveCall> *log_ = nullptr;
  void record(CollectiveCall::Kind kind, const std::vector<torch::Tensor> &tensors);
};

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_PROCESSGROUP_H
