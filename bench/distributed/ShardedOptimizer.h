//===- bench/distributed/ShardedOptimizer.h - Optimizer-state sharding and ZeRO-1 -*- C++ -*-===//
//
// Each parameter is owned by one rank (greedy, largest first, to the least
// loaded rank); a rank keeps optimizer state only for the parameters it owns
// and steps only those, then every rank's parameters are brought up to date.
//
//   Broadcast mode (PyTorch's ZeroRedundancyOptimizer): gradients are already
//     averaged (by DataParallel); after the local step each owner broadcasts
//     its parameters, all owners in one collective (an all-gather of the
//     owners' regions of the flat parameter buffer, Psi bytes on the wire).
//   Zero1 mode (the ZeRO paper's stage 1): no DataParallel; step() reduce-
//     scatters the raw gradients so each rank receives the average of its own
//     shard only, steps it, and all-gathers the parameters: 2 x Psi bytes on the
//     wire per step, as much as one all-reduce.
//
// Both modes lay the parameters out in one flat buffer: the rank regions one
// after the other (each padded to the largest),
// and make every parameter's data a view into it, so the broadcast / all-gather
// needs no copies and no extra memory. Zero1 keeps the gradients in a second
// flat buffer of the same layout for the reduce-scatter.
//
//   auto shard = tessel::dist::ShardedOptimizer(model->parameters(), pg,
//       tessel::dist::torchAdamW(torch::optim::AdamWOptions(1e-3)),
//       tessel::dist::ShardMode::Zero1);
//   loss.backward(); shard.step(); shard.zeroGrad();
//
// saveConsolidated() writes one file holding every parameter and every
// parameter's optimizer state, whatever the world size; loadConsolidated()
// reads it at any world size.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_SHARDEDOPTIMIZER_H
#define TESSEL_BENCH_DISTRIBUTED_SHARDEDOPTIMIZER_H

#include "bench/distributed/ProcessGroup.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessel::model {
struct AdamWOptions;
}

namespace tessel::dist {

/// Named state tensors of one parameter (e.g. {"step", "exp_avg", "exp_avg_sq"}).
using ParamState = std::vector<std::pair<std::string, torch::Tensor>>;

/// The optimizer a rank runs on its own shard. Adapters exist for LibTorch's
/// optimizers (torchAdamW, torchAdam, torchSGD) and the harness's fused AdamW.
class LocalOptimizer {
public:
  virtual ~LocalOptimizer() = default;
  virtual void step() = 0;
  /// State of the i-th parameter given to the factory (empty before any step).
  virtual ParamState state(size_t i) const = 0;
  /// Restores state(i) as saved (tensors are moved to the parameter's device).
  virtual void loadState(size_t i, const ParamState &state) = 0;
};
using OptimizerFactory =
    std::function<std::unique_ptr<LocalOptimizer>(std::vector<torch::Tensor> params)>;

OptimizerFactory torchAdamW(torch::optim::AdamWOptions options);
OptimizerFactory torchAdam(torch::optim::AdamOptions options);
OptimizerFactory torchSGD(torch::optim::SGDOptions options);
/// The harness's AdamW (bench/model/AdamW.h); its state cannot be loaded back,
/// so consolidated checkpoints need one of the LibTorch optimizers.
OptimizerFactory tesselAdamW(const tessel::model::AdamWOptions &options);

enum class ShardMode { Broadcast, Zero1 };
ShardMode parseShardMode(const std::string &name); ///< "broadcast" | "zero1"
const char *toString(ShardMode mode);

class ShardedOptimizer {
public:
  /// Broadcasts rank 0's parameter values (so it can be used without DataParallel).
  ShardedOptimizer(std::vector<torch::Tensor> params, std::shared_ptr<ProcessGroup> pg,
                   OptimizerFactory factory, ShardMode mode = ShardMode::Broadcast);
  /// Zero1 takes each parameter's post-accumulate-grad hook slot while it lives.
  ~ShardedOptimizer();
  ShardedOptimizer(const ShardedOptimizer &) = delete;
  ShardedOptimizer &operator=(const ShardedOptimizer &) = delete;

  /// Broadcast: steps the own shard and broadcasts it. Zero1: reduce-scatters
  /// the gradients, steps the own shard, all-gathers the parameters. Parameters
  /// without a gradient are left alone by the optimizers, as plain AdamW does:
  /// in Broadcast mode those DataParallel left without one; in Zero1 those that
  /// had no gradient on any rank (no weight decay, no momentum, no step count).
  void step();
  /// `mark(i)` is called on the compute stream's side of each collective the step
  /// waits for: 0 and 1 around the gradient reduce-scatter (Zero1), 2 and 3 around
  /// the parameter all-gather, so a caller can time the communication it exposes.
  void onCommunication(std::function<void(int)> mark) { mark_ = std::move(mark); }
  /// Gradients become undefined. Zero1: during the next backward a hook copies
  /// each new gradient into the flat gradient buffer as soon as it is
  /// accumulated (autograd's copy is freed at once) and leaves .grad() as a
  /// view into it. With DataParallel, call its zeroGrad() instead.
  void zeroGrad();

  ShardMode mode() const { return mode_; }
  const std::vector<torch::Tensor> &parameters() const { return params_; }
  const std::vector<int> &owners() const { return owners_; }
  /// Bytes of optimizer state this rank holds / of this rank's parameters.
  int64_t localStateBytes() const;
  int64_t localParameterBytes() const;

  /// Collective: gathers every rank's state to rank 0, which writes `path`.
  void saveConsolidated(const std::string &path);
  /// Collective: rank 0 reads `path` and broadcasts it; every rank takes all
  /// parameter values and the state of the parameters it owns. The world size
  /// may differ from the one that saved it.
  void loadConsolidated(const std::string &path);

private:
  void markCommunication(int i) const {
    if (mark_)
      mark_(i);
  }

  std::function<void(int)> mark_;
  std::vector<torch::Tensor> params_;
  std::shared_ptr<ProcessGroup> pg_;
  ShardMode mode_;
  std::vector<int> owners_;
  std::vector<int> ownIndices_; ///< global indices of this rank's parameters
  std::unique_ptr<LocalOptimizer> local_;
  // Flat layout: region r holds rank r's parameters in registration order.
  int64_t regionElements_ = 0;
  std::vector<int64_t> offsets_; ///< element offset of each parameter in the flat buffers
  torch::Tensor flatParams_, flatGrads_;
  /// Zero1: after its owner's parameters, each region holds one flag per owned
  /// parameter: every rank writes 1 where it has a gradient, and the gradients'
  /// reduce-scatter sums them, so the owner learns which had one on some rank
  /// without another collective. flagIndex_ (on the device) lists the flags'
  /// offsets in parameter order.
  torch::Tensor flagIndex_;
  std::vector<int64_t> flagOffsets_;
  /// Zero1: hides the gradient of each own parameter that had none on any rank
  /// from the local optimizer; returns them, to be given their slots back.
  std::vector<int> hideGradientsNobodyHad(const std::vector<bool> &hadLocally);
  /// Brings every rank's parameters up to date from their owners: one
  /// all-gather of the owners' regions of the flat buffer.
  void allGatherParameters();
  /// Zero1: parameter i's gradient slot in flatGrads_.
  torch::Tensor gradSlot(size_t i) const;
};

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_SHARDEDOPTIMIZER_H
