//===- bench/distributed/ShardedOptimizer.h - Optimizer-state sharding and ZeRO-1 -*- C++ -*-===//
//
// A rank keeps optimizer state only for its shard of the parameters and steps
// only that, then every rank's parameters are brought up to date.
//
//   Broadcast mode (PyTorch's ZeroRedundancyOptimizer): each parameter is owned
//     by one rank (greedy, largest first, to the least loaded rank); gradients
//     are already averaged (by DataParallel); after the local step each owner
//     broadcasts its parameters, all owners in one collective (an all-gather of
//     the owners' regions of the flat parameter buffer, Psi bytes on the wire).
//   Zero1 mode (the ZeRO paper's stage 1): no DataParallel. Parameters are
//     grouped into gradient buckets (reverse registration order, as DDP's) and
//     each bucket is split evenly by elements: rank r holds the r-th 1/world
//     slice of every bucket (a parameter may straddle two slices). During the
//     backward a post-accumulate-grad hook copies each gradient into its
//     bucket; once a bucket is complete (and the buckets before it have been
//     launched) its gradients are reduce-scattered asynchronously, so the
//     communication overlaps the rest of the backward. step() launches what is
//     left, waits, steps the own slices (1-D views: AdamW, Adam and SGD are
//     elementwise, so slicing by elements is exact) and all-gathers the
//     parameters: 2 x Psi bytes on the wire per step, as much as one all-reduce.
//     The buckets form a few consecutive step groups (about equal bytes), each
//     with its own local optimizer; step() steps group 0, launches the coalesced
//     all-gather of group 0's buckets, steps group 1 while it is on the wire,
//     and so on, then waits for all the all-gathers: only the last group's
//     all-gather (and what the steps could not hide) is left exposed.
//   Zero1 with the all-gather overlapped with the next forward
//     (overlapAllGatherWithForward): step() steps the groups last bucket first
//     (the first layers' parameters first, the order the forward needs them),
//     launches each group's all-gather and returns without waiting. The caller
//     calls waitForParameters(module's parameters) before each part of the
//     forward uses them (as FSDP's forward prefetch waits per wrapped block):
//     only the first part's all-gather is left exposed, the rest goes out while
//     the earlier layers compute.
//
// Why element slices rather than whole parameters per owner: a reduce-scatter
// splits its buffer evenly, so a bucket of parameters owned whole by ranks
// would need padding up to the largest owner's share (one 40 MB parameter in a
// bucket: twice the bytes on the wire at 2 ranks), and per-owner reduce() calls
// would use one direction of the links at a time.
//
// Both modes lay the parameters out in one flat buffer and make every
// parameter's data a view into it, so the broadcast / all-gather needs no
// copies and no extra memory; Zero1 keeps the gradients in a second flat buffer
// of the same layout.
//
//   auto shard = tessel::dist::ShardedOptimizer(model->parameters(), pg,
//       tessel::dist::torchAdamW(torch::optim::AdamWOptions(1e-3)),
//       tessel::dist::ShardMode::Zero1);
//   shard.zeroGrad(); loss.backward(); shard.step();
//
// saveConsolidated() writes one file holding every parameter and every
// parameter's optimizer state, whatever the world size and mode;
// loadConsolidated() reads it at any world size.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_SHARDEDOPTIMIZER_H
#define TESSEL_BENCH_DISTRIBUTED_SHARDEDOPTIMIZER_H

#include "bench/distributed/Buckets.h"
#include "bench/distributed/ProcessGroup.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
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
/// so consolidated checkpoints need one of the LibTorch optimizers. `workingCopies`
/// (AdamW::setWorkingCopies: one per parameter, undefined where none) suits an
/// optimizer over a whole model's parameters, not ZeRO's shards.
OptimizerFactory tesselAdamW(const tessel::model::AdamWOptions &options,
                             std::vector<torch::Tensor> workingCopies = {});

enum class ShardMode { Broadcast, Zero1 };
ShardMode parseShardMode(const std::string &name); ///< "broadcast" | "zero1"
const char *toString(ShardMode mode);

/// What a rank's local optimizer steps: elements [offset, offset + numel) of
/// parameter `param` (flattened). Broadcast mode: whole own parameters.
struct LocalShard {
  int param = 0;
  int64_t offset = 0, numel = 0;
};

class ShardedOptimizer {
public:
  /// Broadcasts rank 0's parameter values (so it can be used without DataParallel).
  /// `bucketMb` (Zero1): the gradient bucket cap in MB (2^20 bytes), as DDP's.
  /// `stepGroups` (Zero1): how many consecutive groups of buckets (about equal
  /// bytes each; fewer where there are fewer buckets or a bucket is larger than
  /// a group's share) are stepped one after the other, each group's parameter
  /// all-gather going out while the next group steps. One local optimizer (and
  /// so one optimizer launch) per group; 1 steps everything, then all-gathers.
  ShardedOptimizer(std::vector<torch::Tensor> params, std::shared_ptr<ProcessGroup> pg,
                   OptimizerFactory factory, ShardMode mode = ShardMode::Broadcast,
                   double bucketMb = 25, int stepGroups = 8);
  /// Zero1 takes each parameter's post-accumulate-grad hook slot while it lives.
  ~ShardedOptimizer();
  ShardedOptimizer(const ShardedOptimizer &) = delete;
  ShardedOptimizer &operator=(const ShardedOptimizer &) = delete;

  /// Broadcast: steps the own shard and broadcasts it. Zero1: reduce-scatters
  /// the buckets the backward's hooks have not launched (zeros for parameters
  /// without a gradient here), waits for all, then for each step group steps its
  /// own slices and launches the all-gather of its buckets' parameters, and
  /// finally waits for the all-gathers. Zero1 needs one backward per step() (a second gradient for
  /// a parameter before step() throws: its bucket may be on the wire). Parameters
  /// without a gradient are left alone by the optimizers, as plain AdamW does:
  /// in Broadcast mode those DataParallel left without one; in Zero1 those that
  /// had no gradient on any rank (no weight decay, no momentum, no step count).
  void step();
  /// `mark(i)` is called on the compute stream's side of each collective the step
  /// waits for: 0 and 1 around waiting for the gradient reductions still in
  /// flight (Zero1), 2 and 3 around waiting for the parameter all-gather (Zero1:
  /// after the last group's step, for every group's all-gather still in flight),
  /// so a caller can time the communication it exposes.
  /// With overlapAllGatherWithForward, 2 and 3 come around each wait in
  /// waitForParameters() / waitForAllParameters(), possibly several per step.
  void onCommunication(std::function<void(int)> mark) { mark_ = std::move(mark); }

  /// Zero1 only (turning it on otherwise throws std::logic_error): step() leaves the parameter
  /// all-gathers in flight. Until the caller has waited for a parameter with
  /// waitForParameters(), its value may still be on the wire: read no parameter
  /// that has not been waited for. step(), saveConsolidated() and
  /// loadConsolidated() wait for whatever is still in flight first.
  void overlapAllGatherWithForward(bool on);
  bool overlapsAllGatherWithForward() const { return overlapForward_; }
  /// Makes the current stream (NCCL; Gloo: the host) wait for the all-gathers
  /// still in flight that carry any of `params` (tensors that are not this
  /// optimizer's parameters are ignored). Cheap when nothing is in flight.
  void waitForParameters(const std::vector<torch::Tensor> &params);
  void waitForAllParameters();
  /// Step groups whose all-gather nobody has waited for yet.
  size_t stepGroupsInFlight() const;

  /// Zero1 only: gradients are reduce-scattered in `dtype` (e.g. bf16 for f32
  /// parameters: half the bytes on the wire, as FSDP's reduce_dtype; each
  /// gradient is rounded to it once, and the sum over ranks is rounded too).
  /// The hooks cast each gradient into a flat buffer of that dtype and leave
  /// .grad() undefined after the backward; the local optimizer gets its slices'
  /// gradients in `dtype` (the harness's AdamW takes bf16 gradients for f32
  /// parameters; LibTorch's optimizers need the parameters' dtype). Call it before
  /// a backward, not between a backward and step().
  void reduceGradientsIn(torch::ScalarType dtype);
  torch::ScalarType gradientReduceDtype() const;
  /// Bytes of the gradient buffer this rank holds (Zero1; Broadcast: 0).
  int64_t gradientBufferBytes() const;
  /// Gradients become undefined. Zero1: during the next backward a hook copies
  /// each new gradient into the flat gradient buffer as soon as it is
  /// accumulated (autograd's copy is freed at once), leaves .grad() as a view
  /// into it and launches the buckets that are complete. So do not read or
  /// modify gradients between backward and step(): with NCCL they are being
  /// reduced in place. With DataParallel, call its zeroGrad() instead.
  void zeroGrad();

  ShardMode mode() const { return mode_; }
  const std::vector<torch::Tensor> &parameters() const { return params_; }
  /// Broadcast: the rank owning each parameter. Zero1 has no per-parameter
  /// owner (it shards by elements) and throws std::logic_error; see localShards().
  const std::vector<int> &owners() const;
  /// What this rank's local optimizers step, in their order (group by group).
  const std::vector<LocalShard> &localShards() const { return shards_; }
  /// Zero1: the number of step groups (Broadcast: 1), and the range of
  /// localShards() group g's local optimizer steps (empty: no optimizer there).
  size_t numStepGroups() const { return groupShardBegin_.size() - 1; }
  std::pair<size_t, size_t> stepGroupShards(size_t g) const {
    return {groupShardBegin_.at(g), groupShardBegin_.at(g + 1)};
  }
  /// Bytes of optimizer state this rank holds / of this rank's parameter shards.
  int64_t localStateBytes() const;
  int64_t localParameterBytes() const;
  /// Zero1: the number of gradient buckets, and how many of them the hooks
  /// launched during the last backward before step() (the rest step() did).
  size_t numBuckets() const { return buckets_.size(); }
  int bucketsLaunchedDuringBackward() const { return launchOrder_.launchedByHooks(); }

  /// Collective: gathers every rank's state to rank 0, which writes `path`.
  void saveConsolidated(const std::string &path);
  /// Collective: rank 0 reads `path` and broadcasts it; every rank takes all
  /// parameter values and the state of the parameters it owns. The world size
  /// may differ from the one that saved it.
  void loadConsolidated(const std::string &path);

private:
  /// Zero1: parameters `params` (layout order) in flat-buffer elements
  /// [offset, offset + world * chunk); rank r reduces and steps the r-th chunk.
  struct Bucket {
    std::vector<int> params;
    int64_t offset = 0, chunk = 0;
  };

  void markCommunication(int i) const {
    if (mark_)
      mark_(i);
  }
  /// Broadcast: rank regions of equal (padded) size, each holding its owner's
  /// parameters; fills owners_, offsets_ and the local shards.
  int64_t layOutByOwner();
  /// Zero1: buckets one after the other, each split in world equal chunks;
  /// fills buckets_, bucketOf_, offsets_ and the local shards.
  int64_t layOutByBucket(int64_t bucketBytes);
  /// Zero1: the hooks, the gradient views the local optimizer reads.
  void setUpGradientBuckets();
  /// Zero1: splits the buckets into at most `groups` consecutive step groups;
  /// fills groupBucketBegin_ and groupShardBegin_.
  void formStepGroups(int groups);
  /// The local optimizer holding local shard k, and k's index in it.
  std::pair<LocalOptimizer *, size_t> localOptimizerOf(size_t k) const;
  ParamState localState(size_t k) const;

  // Zero1, per backward (the hooks run on autograd's threads: under mutex_).
  void onGradReady(int param);
  void launchReadyBuckets(bool fromHook);
  /// Whether parameter `param` got a gradient since the last step().
  bool hasGradient(int param) const;
  /// Gradients of bucket b into their slots (zeros where none), then an
  /// asynchronous reduce-scatter of the bucket.
  void launchBucket(size_t b);
  /// Launches what is left and waits for every reduction; returns which
  /// parameters had a gradient on this rank.
  std::vector<bool> finishGradientReduction();
  /// Hides the gradient of each local shard whose parameter had none on any
  /// rank from the local optimizer; returns them, to be given their views back.
  std::vector<size_t> hideGradientsNobodyHad(const std::vector<bool> &hadLocally);
  /// Broadcast: brings every rank's parameters up to date from their owners.
  void allGatherParameters();
  /// Zero1: launches the coalesced all-gather of step group g's buckets; keeps
  /// Gloo's separate inputs in `inputs` (alive until the wait).
  Work launchGroupAllGather(size_t g, std::vector<torch::Tensor> &inputs);
  /// Parameter i's gradient slot in flatGrads_.
  torch::Tensor gradSlot(size_t i) const;
  /// What .grad() becomes once a gradient is in its slot: the slot, or undefined
  /// where gradients are reduced in another dtype than the parameters'.
  torch::Tensor slotAsGradient(const torch::Tensor &slot) const;
  /// Zero1: (re)allocates flatGrads_ in `dtype` and the local gradient views.
  void allocateGradients(torch::ScalarType dtype);
  /// Waits for step group g's all-gather if it is in flight.
  void waitForGroup(size_t g);

  std::function<void(int)> mark_;
  std::vector<torch::Tensor> params_;
  std::shared_ptr<ProcessGroup> pg_;
  ShardMode mode_;
  std::vector<int> owners_; ///< Broadcast only
  std::vector<LocalShard> shards_;
  std::vector<torch::Tensor> localParams_; ///< what local_ steps, one per shard
  std::vector<torch::Tensor> localGrads_;  ///< Zero1: their gradients (reduced chunks)
  /// One per step group (Broadcast: one), stepping shards_[groupShardBegin_[g],
  /// groupShardBegin_[g + 1]); null for a Zero1 group without local shards.
  std::vector<std::unique_ptr<LocalOptimizer>> locals_;
  std::vector<size_t> groupShardBegin_{0, 0};
  std::vector<size_t> groupBucketBegin_; ///< Zero1: buckets of each group, likewise
  int64_t regionElements_ = 0;   ///< Broadcast: elements of each rank region
  std::vector<int64_t> offsets_; ///< element offset of each parameter in the flat buffers
  torch::Tensor flatParams_, flatGrads_;

  std::vector<Bucket> buckets_; ///< Zero1, in launch order
  std::vector<int> bucketOf_;
  std::mutex mutex_;
  BucketLaunchOrder launchOrder_; ///< which buckets may go, in order
  std::vector<Work> works_;
  std::vector<torch::Tensor> reduced_; ///< per bucket: the reduce-scatter's output
  /// Zero1: one flag per parameter, 1 where a rank had a gradient, summed by a
  /// small all-reduce issued with the last buckets, so every rank learns which
  /// parameters had a gradient on some rank. (They cannot ride in the buckets'
  /// reduce-scatters: every slice would need the flags of the parameters it
  /// holds, and a parameter straddling two slices must stay contiguous.)
  torch::Tensor flags_;

  bool overlapForward_ = false;
  /// Zero1: per step group, its all-gather still in flight (overlapForward_)
  /// and the inputs Gloo needs alive until then.
  std::vector<Work> gathers_;
  std::vector<std::vector<torch::Tensor>> gatherInputs_;
  std::vector<int> groupOfParam_;
  std::unordered_map<const c10::TensorImpl *, int> paramIndex_;
};

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_SHARDEDOPTIMIZER_H
