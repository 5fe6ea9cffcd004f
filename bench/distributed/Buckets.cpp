//===- bench/distributed/Buckets.cpp - Gradient bucket assignment and sizing ---===//

#include "bench/distributed/Buckets.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace tessel::dist {

namespace {

/// Buckets over parameters hi, hi-1, ..., lo (reverse registration order). Each key
/// fills buckets of its own (as PyTorch DDP keeps one open bucket per dtype), so
/// interleaved dtypes do not cut each other into small buckets; the first bucket of
/// each key has the first cap. Buckets come out in the order they become complete
/// (by the gradient of theirs produced last), the order an in-order launch needs.
void fillBuckets(const std::vector<GradientSlot> &slots, int hi, int lo, int64_t bucketBytes,
                 int64_t firstBucketBytes, std::vector<std::vector<int>> &buckets) {
  struct Open {
    std::vector<int> params;
    int64_t bytes = 0;
    bool first = true;
  };
  std::map<int, Open> open;
  std::vector<std::vector<int>> closed;
  for (int i = hi; i >= lo; --i) {
    const GradientSlot &slot = slots[i];
    Open &o = open[slot.key];
    int64_t cap = o.first && firstBucketBytes > 0 ? std::min(firstBucketBytes, bucketBytes)
                                                  : bucketBytes;
    if (!o.params.empty() && o.bytes + slot.bytes > cap) {
      closed.push_back(std::move(o.params));
      o = Open{{}, 0, false};
    }
    o.params.push_back(i);
    o.bytes += slot.bytes;
  }
  for (auto &[key, o] : open)
    if (!o.params.empty())
      closed.push_back(std::move(o.params));
  // A bucket is complete when its lowest index (its last gradient in backward order) is.
  std::stable_sort(closed.begin(), closed.end(), [](const std::vector<int> &a, const std::vector<int> &b) {
    return a.back() > b.back();
  });
  for (std::vector<int> &bucket : closed)
    buckets.push_back(std::move(bucket));
}

} // namespace

std::vector<std::vector<int>> assignBuckets(const std::vector<GradientSlot> &slots,
                                            int64_t bucketBytes, int64_t firstBucketBytes,
                                            int64_t lastBucketBytes) {
  if (bucketBytes <= 0)
    throw std::invalid_argument("the bucket size must be positive");
  int n = static_cast<int>(slots.size());
  // The tail: parameters 0..tail-1 (the last gradients backward produces), as
  // many as one ordinary bucket holds, at least one.
  int tail = 0;
  if (lastBucketBytes > 0 && lastBucketBytes < bucketBytes && n > 0) {
    int64_t bytes = slots[0].bytes;
    tail = 1;
    while (tail < n && bytes + slots[tail].bytes <= bucketBytes)
      bytes += slots[tail++].bytes;
    if (tail == n)
      tail = 0; // everything fits in one bucket: nothing to taper
  }
  std::vector<std::vector<int>> buckets;
  fillBuckets(slots, n - 1, tail, bucketBytes, firstBucketBytes, buckets);
  if (tail > 0)
    fillBuckets(slots, tail - 1, 0, lastBucketBytes, 0, buckets);
  return buckets;
}

std::vector<int> assignOwners(const std::vector<int64_t> &bytes, int worldSize) {
  if (worldSize < 1)
    throw std::invalid_argument("the world size must be at least 1");
  std::vector<size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  std::vector<int64_t> load(worldSize, 0);
  std::vector<int> owners(bytes.size(), 0);
  for (size_t i : order) {
    int best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    owners[i] = best;
    load[best] += bytes[i];
  }
  return owners;
}

void BucketLaunchOrder::assign(std::vector<int> bucketOf, size_t numBuckets) {
  bucketOf_ = std::move(bucketOf);
  bucketSizes_.assign(numBuckets, 0);
  for (int b : bucketOf_)
    ++bucketSizes_[b];
  ready_.assign(bucketOf_.size(), 0);
  missing_.assign(bucketSizes_.size(), 0);
  next_ = 0;
  inBackward_ = false;
}

void BucketLaunchOrder::start() {
  inBackward_ = true;
  std::fill(ready_.begin(), ready_.end(), 0);
  missing_ = bucketSizes_;
  next_ = 0;
  launchedByHooks_ = 0;
}

bool BucketLaunchOrder::arrive(int p) {
  if (!inBackward_)
    start();
  if (ready_[p])
    return false;
  ready_[p] = 1;
  --missing_[bucketOf_[p]];
  return true;
}

void BucketLaunchOrder::launchReady(const std::function<void(size_t)> &launch, bool fromHook) {
  while (next_ < missing_.size() && missing_[next_] == 0) {
    launch(next_++);
    if (fromHook)
      ++launchedByHooks_;
  }
}

void BucketLaunchOrder::release() {
  if (!inBackward_)
    start();
  for (size_t b = next_; b < missing_.size(); ++b)
    missing_[b] = 0;
}

void BucketLaunchOrder::finish() {
  inBackward_ = false;
  lastLaunchedByHooks_ = launchedByHooks_;
}

} // namespace tessel::dist
