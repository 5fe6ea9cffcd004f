//===- bench/distributed/FullySharded.h - Fully sharded data parallel (ZeRO-3) -*- C++ -*-===//
//
// Parameters, gradients and optimizer state all sharded over the ranks, unit by unit (as
// PyTorch's FSDP2 `fully_shard` per block, or DeepSpeed's ZeRO-3):
//
//   - Each unit (a module: a Transformer block, the embeddings, ...) lays its parameters
//     out in one flat buffer, padded to divide evenly; rank r keeps the r-th chunk as its
//     f32 master shard, on the process group's device. The module's parameters are views,
//     set once, into a gathered buffer whose storage exists only while the unit is gathered
//     (so what autograd saves of them, W^T say, holds no memory in between).
//   - beforeForward(unit) all-gathers the unit's parameters (in paramDtype: the cast from
//     the master shard happens once per gather) into a transient buffer and makes each
//     parameter a view into it; it also launches the next units' all-gathers (prefetch),
//     so they travel while this unit computes. afterForward(unit, outputs) frees the
//     buffer again (all units but the last, whose backward comes first) and hooks the
//     outputs: when their gradient arrives, the unit is gathered again for its backward
//     (and the units before it are prefetched).
//   - Once every parameter of a unit has its gradient, the unit's gradients are copied into
//     one flat buffer (in reduceDtype) and reduce-scattered asynchronously, so the
//     communication overlaps the rest of the backward; the gradients and the gathered
//     parameters are freed at once. Units are launched in reverse order on every rank (a
//     ready unit waits for the ones after it), so the ranks issue the same collectives;
//     launching one makes the stream wait for the one before (FSDP2's post-backward), so
//     at most two units' flat gradients are alive.
//   - step() launches what the backward did not (zeros for gradients a rank lacks), waits,
//     averages, and steps the master shards with the local optimizer (AdamW is
//     elementwise, so stepping the flat shards is exact). No all-gather here: the next
//     forward's gathers carry the update.
//
// Collectives are waited for on the current stream (NCCL: the host does not block), so
// the steady state has no host synchronisation. The parameters of the units may live on
// the host when this is built (the model built in host memory): only the shards reach the
// device. At construction every rank checks that its parameters equal the others' (a
// fingerprint per unit) and throws otherwise.
//
// Limitations: a parameter no rank gave a gradient is still stepped (with a zero
// gradient: AdamW decays it); every unit must be gathered in the same order on every rank.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_FULLYSHARDED_H
#define TESSEL_BENCH_DISTRIBUTED_FULLYSHARDED_H

#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/ShardedOptimizer.h"

#include <torch/nn/module.h>
#include <torch/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tessel::dist {

struct FullyShardedOptions {
  /// The dtype parameters are all-gathered in and computed with (the master stays f32).
  torch::ScalarType paramDtype = torch::kFloat;
  /// The dtype gradients are reduce-scattered in.
  torch::ScalarType reduceDtype = torch::kFloat;
  /// How many units ahead the forward (and behind, the backward) all-gathers.
  int prefetch = 1;
  /// No prefetch is launched while this many units are gathered or gathering (FSDP1's
  /// limit_all_gathers): deep prefetching cannot hold more than this many units' full
  /// parameters. The unit computing now is gathered regardless, and in the backward so is
  /// the one after it until its gradients are reduced, so the bound is max(this, 2).
  int maxGatheredUnits = 3;
  /// Called on each unit, in order, before its parameters are read: a model built on the
  /// meta device initialises the unit here (TransformerLM::materialize), so that only one
  /// unit is ever whole in host memory. Empty: the parameters hold their values already.
  std::function<void(torch::nn::Module &)> materialize;
};

class FullySharded {
public:
  /// `units` in forward order; their parameters (those with requires_grad) must be
  /// disjoint, f32, and all on one device or the host.
  FullySharded(std::vector<torch::nn::Module *> units, std::shared_ptr<ProcessGroup> pg,
               OptimizerFactory factory, FullyShardedOptions options = {});
  /// Takes each parameter's post-accumulate-grad hook slot while it lives.
  ~FullySharded();
  FullySharded(const FullySharded &) = delete;
  FullySharded &operator=(const FullySharded &) = delete;

  /// The model's hooks (TransformerLM::setBeforeForward / setAfterForward).
  void beforeForward(torch::nn::Module &unit);
  void afterForward(torch::nn::Module &unit, const std::vector<torch::Tensor> &outputs);

  /// Before each backward: forgets the last step's bookkeeping and any accumulated
  /// gradients (throws between a backward and its step(): reductions are in flight).
  void zeroGrad();
  /// Gradient accumulation (FSDP2's set_requires_gradient_sync): while false, a backward
  /// adds each unit's gradients into a full-size f32 buffer of the unit (the memory of
  /// unsharded gradients) and sends nothing; the next backward with sync on reduces the
  /// sum. Every unit must get all its gradients in each such backward.
  void setRequiresGradientSync(bool sync) { sync_ = sync; }
  /// Reductions finished, gradients averaged, master shards stepped.
  void step();
  /// Gathers every unit and leaves it so: each parameter holds its full value (checksums,
  /// consolidated saves). The next forward frees them again as it goes.
  void gatherAll();
  /// As ShardedOptimizer::onCommunication: `mark(i)` on the compute stream, 0 and 1 around
  /// step()'s wait for the reductions, 2 and 3 around each other wait: for an all-gather,
  /// and, in the backward, for the previous unit's reduction (at most 3 per unit a step).
  void onCommunication(std::function<void(int)> mark) { mark_ = std::move(mark); }

  /// Collective: writes a consolidated checkpoint (ConsolidatedCheckpoint.h) of the f32
  /// masters and the optimizer state; parameters are numbered unit by unit, in order. The
  /// file loads at any world size, and by ShardedOptimizer over the same parameters.
  void saveConsolidated(const std::string &path);
  /// Collective: each rank takes its shards' values and state from the file (the local
  /// optimizer must be able to load state: torchAdamW, not tesselAdamW); every unit is
  /// freed, so the next forward gathers the loaded values.
  void loadConsolidated(const std::string &path);
  /// Collective: each rank writes its own master shards and optimizer state to
  /// `directory`/rank<r>.pt (no gather: as fast as the disk) and rank 0 an index.pt naming
  /// the world size and the unit layout; the directory (created, its parent must exist)
  /// must be shared by the ranks.
  void saveSharded(const std::string &directory);
  /// Collective: each rank reads its own file back. Throws unless the index matches this
  /// run's world size and units (load a consolidated checkpoint to change them).
  void loadSharded(const std::string &directory);

  size_t numUnits() const { return units_.size(); }
  /// Units whose reduce-scatter the backward's hooks launched in the last step.
  int unitsReducedDuringBackward() const { return reducedByHooks_; }
  /// The most units gathered or gathering at once since the last zeroGrad().
  int peakGatheredUnits() const { return peakGathered_; }
  int64_t shardBytes() const;         ///< this rank's f32 master shards
  int64_t gradientShardBytes() const; ///< this rank's reduced gradient chunks
  int64_t stateBytes() const;         ///< this rank's optimizer state

private:
  enum class State { Free, Gathering, Gathered };
  struct Unit {
    std::string name;
    std::vector<torch::Tensor> params;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<int64_t> offsets, numels;
    int64_t chunk = 0;  ///< elements per rank (the flat buffer holds world * chunk)
    torch::Tensor shard; ///< f32 master, [chunk]
    State state = State::Free;
    torch::Tensor full; ///< [world * chunk] in paramDtype; storage freed while State::Free
    torch::Tensor gatherInput;
    Work gather;
    torch::Tensor gradInput, gradShard;
    torch::Tensor accumulated; ///< f32 [world * chunk]: gradients of no-sync backwards
    Work reduce;
    size_t gradsIn = 0;
    bool ready = false, backwardGathered = false;
  };

  void mark(int i) const {
    if (mark_)
      mark_(i);
  }
  size_t indexOf(const torch::nn::Module &unit) const;
  /// `fingerprints`: per unit, the sum and the sum of squares of its flat parameters (f64).
  void checkRanksAgree(const torch::Tensor &fingerprints);
  void launchGather(Unit &u);
  /// Launches unit k's gather ahead of its use unless it is gathered already or the
  /// limit on gathered units is reached.
  void prefetch(size_t k);
  void ensureGathered(size_t u);
  void reshard(Unit &u);
  void preBackward(size_t u);
  void onGradReady(size_t u);
  void launchReadyReductions(bool fromHook);
  void launchReduction(Unit &u);
  /// A no-sync backward: unit u's gradients into u.accumulated, freed with its parameters.
  void accumulate(Unit &u);
  /// Unit k's parameters that overlap this rank's chunk: (index in the unit, first element
  /// of the overlap in the parameter, in the chunk, length).
  struct Overlap {
    size_t param;
    int64_t inParam, inChunk, numel;
  };
  std::vector<Overlap> overlapsOfShard(size_t k) const;
  /// Checkpoints are taken between steps; throws naming `call` otherwise.
  void requireNoBackwardInFlight(const char *call) const;
  /// Every unit freed (a gather in flight waited for first), before loading new shards.
  void freeAllUnits();

  std::shared_ptr<ProcessGroup> pg_;
  FullyShardedOptions options_;
  std::vector<Unit> units_;
  std::vector<size_t> firstParam_; ///< per unit, the checkpoint number of its first parameter
  std::unordered_map<const torch::nn::Module *, size_t> unitIndex_;
  std::unique_ptr<LocalOptimizer> local_;
  std::function<void(int)> mark_;
  std::mutex mutex_; ///< the hooks run on autograd's threads
  int nextReduction_ = -1; ///< units from here down to 0 are not launched yet
  Unit *previousReduction_ = nullptr; ///< the last unit launched, not yet waited for
  int reducedByHooks_ = 0;
  int gathered_ = 0;     ///< units not State::Free
  int peakGathered_ = 0; ///< the most at once since zeroGrad()
  bool inBackward_ = false;
  bool sync_ = true;
};

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_FULLYSHARDED_H
