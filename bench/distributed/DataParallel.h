//===- bench/distributed/DataParallel.h - Four ways to do data-parallel gradients -*- C++ -*-===//
//
// Wraps any torch::nn::Module for data-parallel training: rank 0's parameters
// and buffers are broadcast at construction, and after each backward every
// rank holds the average of all ranks' gradients.
//
//   tessel::dist::DdpOptions options;
//   options.mode = tessel::dist::DdpMode::Bucketed;    // or Naive, Flat, Overlapped
//   options.bucketSizeMb = 25;                         // options.autoBucketSize = true
//   tessel::dist::DataParallel ddp(model.ptr(), pg, options);
//   for (...) {
//     ddp.zeroGrad();
//     loss(model->forward(x), y).backward();
//     ddp.finishGradientSynchronization();             // gradients averaged
//     optimizer.step();
//   }
//
// Modes:
//   Naive       all-reduce each gradient, one after the other, after backward.
//   Flat        one all-reduce of all gradients copied into one flat buffer.
//   Overlapped  an asynchronous all-reduce per parameter, launched from a
//               post-accumulate-grad hook as soon as its gradient is accumulated.
//   Bucketed    parameters grouped (reverse registration order) into buckets of
//               at most bucketSizeMb; a bucket is all-reduced asynchronously when
//               its last gradient is ready. The first bucket is small
//               (firstBucketMb) so communication starts early; with
//               gradientAsBucketView the .grad() tensors are views into the
//               bucket buffers (one copy in, none out, no second gradient copy
//               in memory).
// Collectives are always launched in bucket order (a ready bucket waits for the
// ones before it), so every rank issues the same sequence even when autograd
// finishes gradients in a different order on different ranks.
//
// Parameters: only those with requires_grad() take part. A parameter that gets
// no gradient in a step on some rank (unused in its forward) contributes zeros
// there; its bucket is sent from finishGradientSynchronization(), so nothing
// hangs. After synchronisation it holds the average; a parameter no rank used
// keeps .grad() undefined when findUnusedParameters is set (one extra small
// all-reduce of a usage mask per step), else gets a zero gradient.
//
// Because launches are in order, a parameter without a gradient holds back the
// buckets after it until finishGradientSynchronization(): register rarely used
// parameters first (they come last in backward order) to keep the overlap.
//
// Working copies: where the forward computes with a bf16 or f16 copy of an f32
// parameter (TransformerLM::makeWorkingCopies; the optimizer keeps it current),
// the gradient lands on the copy, and it is the copy's gradient that is
// synchronised: in the copy's dtype, half the bytes of the f32 gradient autocast
// would cast back. Rank 0's masters are broadcast and each copy refreshed from
// its master at construction.
//
// The post-accumulate-grad hook slot of each parameter is Tessel's while the
// DataParallel exists (LibTorch keeps one per tensor).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_DATAPARALLEL_H
#define TESSEL_BENCH_DISTRIBUTED_DATAPARALLEL_H

#include "bench/distributed/ProcessGroup.h"

#include <torch/nn/module.h>
#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

namespace tessel::dist {

enum class DdpMode { Naive, Flat, Overlapped, Bucketed };
/// "naive" | "flat" | "overlapped" | "bucketed"; throws std::invalid_argument otherwise.
DdpMode parseDdpMode(const std::string &name);
const char *toString(DdpMode mode);

/// What happens to a gradient on the wire.
enum class CommHook {
  None, ///< all-reduce in the gradient's dtype
  Bf16, ///< cast to bf16, all-reduce, cast back (half the bytes; PyTorch's bf16_compress_hook)
};
CommHook parseCommHook(const std::string &name); ///< "none" | "bf16"
const char *toString(CommHook hook);

struct DdpOptions {
  DdpMode mode = DdpMode::Bucketed;
  /// Bucketed: the cap of every bucket but the first, in MB (2^20 bytes).
  double bucketSizeMb = 25;
  /// Bucketed: measure all-reduce overhead o and bandwidth w at construction
  /// and use b* = sqrt(s * o * w) (s the gradient bytes) instead of bucketSizeMb.
  bool autoBucketSize = false;
  /// Bucketed: the first bucket's cap in MB; 0 = same as the others.
  double firstBucketMb = 1;
  /// Bucketed: taper the end of backward: the gradients produced last (one
  /// ordinary bucket's worth) go into buckets of at most lastBucketMb, so little
  /// is left to all-reduce when backward ends (see assignBuckets). 0 = off
  /// (every bucket but the first has the same cap, as in PyTorch DDP).
  double lastBucketMb = 0;
  /// Bucketed: make .grad() views into the bucket buffers.
  bool gradientAsBucketView = true;
  CommHook hook = CommHook::None;
  bool findUnusedParameters = false;
  /// Also broadcast rank 0's buffers (not only parameters) at construction.
  bool broadcastBuffers = true;
};

/// Measured at construction when autoBucketSize is set (averaged over ranks,
/// so every rank picks the same size).
struct BucketCalibration {
  double overheadMs = 0;
  double bandwidthGBs = 0; ///< w in GB/s (1e9 bytes)
  int64_t gradientBytes = 0;
  int64_t chosenBytes = 0;
};

struct BucketInfo {
  std::vector<int> params; ///< indices into DataParallel::parameters(), in buffer order
  int64_t bytes = 0;
};

class DataParallel {
public:
  /// `workingCopies`: empty, or one entry per module parameter (module->parameters()
  /// order): a working copy whose gradient is synchronised instead of the parameter's,
  /// or an undefined tensor to keep the parameter's own.
  DataParallel(std::shared_ptr<torch::nn::Module> module, std::shared_ptr<ProcessGroup> pg,
               DdpOptions options = {}, std::vector<torch::Tensor> workingCopies = {});
  ~DataParallel();
  DataParallel(const DataParallel &) = delete;
  DataParallel &operator=(const DataParallel &) = delete;

  torch::nn::Module &module() { return *module_; }
  ProcessGroup &processGroup() { return *pg_; }
  const DdpOptions &options() const { return options_; }
  /// The tensors whose gradients are synchronised, in registration order: each
  /// parameter with requires_grad, or its working copy.
  const std::vector<torch::Tensor> &parameters() const;
  /// Buckets in launch order (Overlapped: one per parameter; Naive/Flat: empty).
  std::vector<BucketInfo> buckets() const;
  /// The bucket cap in use (Bucketed), bytes.
  int64_t bucketBytes() const;
  /// Buckets whose all-reduce the hooks launched during the last synchronised
  /// backward (the rest were launched by finishGradientSynchronization()).
  int bucketsLaunchedDuringBackward() const;
  /// Set when autoBucketSize calibrated.
  const BucketCalibration &calibration() const;

  /// Waits until every gradient is averaged over all ranks (launching what the
  /// hooks have not yet launched). Call after backward, before the optimizer.
  /// Inside a noSync() scope it does nothing.
  void finishGradientSynchronization();

  /// Drops the gradients (.grad() becomes undefined, as zero_grad(set_to_none)).
  /// With gradient-as-bucket-view each new gradient is copied into its bucket
  /// slot by its hook and .grad() is that slot's view again after backward.
  void zeroGrad();

  /// While alive, backward accumulates gradients locally and nothing is sent;
  /// the first backward after it ends synchronises the accumulated sum.
  class NoSyncGuard {
  public:
    explicit NoSyncGuard(DataParallel &ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard &) = delete;
    NoSyncGuard &operator=(const NoSyncGuard &) = delete;

  private:
    DataParallel &ddp_;
    bool previous_;
  };
  NoSyncGuard noSync() { return NoSyncGuard(*this); }

  struct State; // shared with the autograd hooks

private:
  void calibrate();
  void buildBuckets(int64_t bucketBytes);

  std::shared_ptr<torch::nn::Module> module_;
  std::shared_ptr<ProcessGroup> pg_;
  DdpOptions options_;
  std::shared_ptr<State> state_;
  BucketCalibration calibration_;
  int64_t bucketBytes_ = 0;
};

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_DATAPARALLEL_H
