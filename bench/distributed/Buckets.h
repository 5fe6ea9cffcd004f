//===- bench/distributed/Buckets.h - Gradient bucket assignment and sizing -*- C++ -*-===//
//
// Pure functions, no communication: which parameters share a gradient bucket,
// and how big a bucket should be for a measured all-reduce cost.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_BUCKETS_H
#define TESSEL_BENCH_DISTRIBUTED_BUCKETS_H

#include "tools/tessel-plan/Bucket.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tessel::dist {

/// One gradient to place: its size and a key that must match within a bucket
/// (dtype and device: a bucket is one flat buffer).
struct GradientSlot {
  int64_t bytes = 0;
  int key = 0;
};

/// Groups parameters 0..n-1 (in registration order) into buckets in reverse
/// registration order, the order backward produces their gradients. A bucket is
/// closed before it would exceed its cap; a gradient larger than the cap gets a
/// bucket of its own. The first bucket's cap is `firstBucketBytes` (a small
/// first bucket starts communication early, as PyTorch DDP's 1 MB one does);
/// `firstBucketBytes <= 0` means the same cap as the others. Each key (e.g. bf16
/// working copies between f32 norms) fills buckets of its own, each key's first
/// with the first cap; buckets are listed in the order they complete in backward.
/// Each bucket lists parameter indices in the order they are laid out in the
/// bucket (reverse registration order).
///
/// `lastBucketBytes` > 0 (and below the cap) tapers the end: the gradients
/// produced last, as many as fit in one ordinary bucket (at least one), are
/// grouped into buckets of at most `lastBucketBytes` instead. Whatever is still
/// being all-reduced when backward ends is communication nobody overlaps; with
/// small buckets there, each goes out as soon as its gradients exist and the
/// exposed tail is about one small all-reduce instead of one full bucket.
std::vector<std::vector<int>> assignBuckets(const std::vector<GradientSlot> &slots,
                                            int64_t bucketBytes, int64_t firstBucketBytes = 0,
                                            int64_t lastBucketBytes = 0);

/// When a backward's gradient buckets go on the wire (DataParallel's all-reduces,
/// ZeRO-1's reduce-scatters): a bucket goes once all its gradients have arrived and
/// every bucket before it has gone, so every rank issues the same sequence of
/// collectives whatever order autograd finishes the gradients in. Bookkeeping only:
/// the owner calls it under its own lock (the hooks run on autograd's threads).
class BucketLaunchOrder {
public:
  /// bucketOf[p]: parameter p's bucket, one of buckets 0..numBuckets-1.
  void assign(std::vector<int> bucketOf, size_t numBuckets);
  /// Whether a backward is under way: a gradient arrived, or release() was
  /// called, since the last finish().
  bool inBackward() const { return inBackward_; }
  /// Parameter p's gradient arrived (a backward starts if none is under way). False,
  /// changing nothing, if it had already arrived in this backward.
  bool arrive(int p);
  /// Whether parameter p's gradient arrived in the backward under way.
  bool arrived(int p) const { return inBackward_ && ready_[p] != 0; }
  /// Calls launch(b) for each bucket that may go now, in order. `fromHook`: counted
  /// in launchedByHooks().
  void launchReady(const std::function<void(size_t)> &launch, bool fromHook);
  /// The end of the backward: gradients that never came count as arrived (the owner
  /// sends zeros), so launchReady() launches every bucket left.
  void release();
  /// The backward's buckets have all been launched and waited for.
  void finish();
  /// How many buckets the hooks launched in the last finished backward.
  int launchedByHooks() const { return lastLaunchedByHooks_; }

private:
  void start();

  std::vector<int> bucketOf_, bucketSizes_;
  std::vector<char> ready_;  ///< per parameter: arrived in this backward
  std::vector<int> missing_; ///< per bucket: gradients still to come
  size_t next_ = 0;          ///< the next bucket to launch
  bool inBackward_ = false;
  int launchedByHooks_ = 0, lastLaunchedByHooks_ = 0;
};

/// Owner rank of each parameter for optimizer-state sharding: largest first to
/// the least loaded rank (ties: lowest rank, then earliest parameter), so every
/// rank computes the same assignment.
std::vector<int> assignOwners(const std::vector<int64_t> &bytes, int worldSize);

// The bucket size from a measured all-reduce cost: tessel-plan's model (Bucket.h).
using tessel::plan::AllReduceCostModel;
using tessel::plan::fitAllReduceCost;
using tessel::plan::optimalBucketBytes;

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_BUCKETS_H
