//===- test/distributed/BucketTest.cpp - Bucket assignment, sizing, sharding owners ---===//

#include "bench/distributed/Buckets.h"

#include <gtest/gtest.h>

using tessel::dist::assignBuckets;
using tessel::dist::GradientSlot;
using Buckets = std::vector<std::vector<int>>;

TEST(Buckets, ReverseRegistrationOrderWithinTheCap) {
  // Parameters 0..4 of 40, 40, 40, 40, 40 bytes, cap 100: backward order 4, 3, 2, 1, 0.
  std::vector<GradientSlot> slots(5, GradientSlot{40, 0});
  EXPECT_EQ(assignBuckets(slots, 100), (Buckets{{4, 3}, {2, 1}, {0}}));
}

TEST(Buckets, SmallFirstBucket) {
  std::vector<GradientSlot> slots(5, GradientSlot{40, 0});
  EXPECT_EQ(assignBuckets(slots, 100, 40), (Buckets{{4}, {3, 2}, {1, 0}}));
}

TEST(Buckets, OversizedGradientGetsItsOwnBucket) {
  std::vector<GradientSlot> slots{{10, 0}, {500, 0}, {10, 0}, {10, 0}};
  EXPECT_EQ(assignBuckets(slots, 100), (Buckets{{3, 2}, {1}, {0}}));
}

TEST(Buckets, ExactFitStaysInOneBucket) {
  std::vector<GradientSlot> slots{{50, 0}, {50, 0}, {50, 0}};
  EXPECT_EQ(assignBuckets(slots, 100), (Buckets{{2, 1}, {0}}));
}

TEST(Buckets, EachDtypeFillsItsOwnBucketsInCompletionOrder) {
  // Backward order 3 (key 0), 2, 1 (key 1), 0 (key 0): key 0's bucket completes last.
  std::vector<GradientSlot> slots{{10, 0}, {10, 1}, {10, 1}, {10, 0}};
  EXPECT_EQ(assignBuckets(slots, 1000), (Buckets{{2, 1}, {3, 0}}));
  // Interleaved keys under a cap of two gradients: 4, 2 | 3, 1 | 0 (each key's own caps).
  std::vector<GradientSlot> interleaved{{40, 0}, {40, 1}, {40, 0}, {40, 1}, {40, 0}};
  EXPECT_EQ(assignBuckets(interleaved, 80), (Buckets{{4, 2}, {3, 1}, {0}}));
  // The small first bucket is per key too; key 1's second bucket completes before key 0's.
  EXPECT_EQ(assignBuckets(interleaved, 80, 40), (Buckets{{4}, {3}, {1}, {2, 0}}));
}

TEST(Buckets, TaperedLastBuckets) {
  // Cap 100: the last ordinary bucket's worth of backward order (parameters 1, 0:
  // 80 bytes) is split into buckets of at most 40; the rest is unchanged.
  std::vector<GradientSlot> slots(6, GradientSlot{40, 0});
  EXPECT_EQ(assignBuckets(slots, 100, 0, 40), (Buckets{{5, 4}, {3, 2}, {1}, {0}}));
  // With a small first bucket as well.
  EXPECT_EQ(assignBuckets(slots, 100, 40, 40), (Buckets{{5}, {4, 3}, {2}, {1}, {0}}));
  // Tail buckets still hold several small gradients.
  std::vector<GradientSlot> small{{10, 0}, {10, 0}, {10, 0}, {70, 0}, {90, 0}};
  EXPECT_EQ(assignBuckets(small, 100, 0, 20), (Buckets{{4}, {3}, {2, 1}, {0}}));
}

TEST(Buckets, TaperNeedsSomethingToTaper) {
  std::vector<GradientSlot> slots(3, GradientSlot{40, 0});
  // Everything fits in one bucket, or the taper cap is not below the cap: unchanged.
  EXPECT_EQ(assignBuckets(slots, 1000, 0, 40), assignBuckets(slots, 1000));
  EXPECT_EQ(assignBuckets(slots, 100, 0, 100), assignBuckets(slots, 100));
  // An oversized last gradient is the whole tail.
  std::vector<GradientSlot> big{{500, 0}, {40, 0}, {40, 0}};
  EXPECT_EQ(assignBuckets(big, 100, 0, 10), (Buckets{{2, 1}, {0}}));
}

TEST(Buckets, OnePerParameterWithATinyCap) {
  std::vector<GradientSlot> slots(3, GradientSlot{4, 0});
  EXPECT_EQ(assignBuckets(slots, 1), (Buckets{{2}, {1}, {0}}));
}

TEST(Buckets, RejectsNonPositiveCap) {
  EXPECT_THROW(assignBuckets({{4, 0}}, 0), std::invalid_argument);
}

TEST(BucketSize, SquareRootModel) {
  // s = 400 MB, o = 50 us, w = 20 GB/s: b* = sqrt(4e8 * 5e-5 * 2e10) = 2e7 bytes.
  EXPECT_NEAR(tessel::dist::optimalBucketBytes(4e8, 5e-5, 2e10), 2e7, 1);
  // Clamped to [1 MiB, s].
  EXPECT_EQ(tessel::dist::optimalBucketBytes(4e8, 1e-9, 1e6), 1 << 20);
  EXPECT_EQ(tessel::dist::optimalBucketBytes(4e6, 1.0, 1e12), 4000000);
}

TEST(BucketSize, FitsOverheadAndBandwidth) {
  // t = 1e-4 + bytes / 1e10.
  std::vector<double> bytes{1e5, 1e6, 1e7, 1e8}, seconds;
  for (double b : bytes)
    seconds.push_back(1e-4 + b / 1e10);
  auto model = tessel::dist::fitAllReduceCost(bytes, seconds);
  EXPECT_NEAR(model.overheadSeconds, 1e-4, 1e-9);
  EXPECT_NEAR(model.bytesPerSecond, 1e10, 1e4);
  EXPECT_THROW(tessel::dist::fitAllReduceCost({1.0}, {1.0}), std::invalid_argument);
}

TEST(ShardOwners, BalancedLargestFirst) {
  // Largest first to the least loaded rank: 100 -> r0, 60 -> r1, 50 -> r1 (60 < 100),
  // 40 -> r0 (100 < 110), 10 -> r1 (110 < 140).
  std::vector<int64_t> bytes{40, 100, 10, 60, 50};
  EXPECT_EQ(tessel::dist::assignOwners(bytes, 2), (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_EQ(tessel::dist::assignOwners(bytes, 1), (std::vector<int>(5, 0)));
  // More ranks than parameters: some ranks own nothing.
  EXPECT_EQ(tessel::dist::assignOwners({8, 8}, 3), (std::vector<int>{0, 1}));
}

/// Buckets go in order, each once all its gradients have arrived, whatever order they
/// arrive in; a second arrival is refused; release() lets the rest go at the end.
TEST(BucketLaunchOrder, InOrderOnceCompleteThenTheRestOnRelease) {
  tessel::dist::BucketLaunchOrder order;
  // Parameters 0..4 in buckets {3, 4}, {1, 2}, {0}: the backward's order.
  order.assign({2, 1, 1, 0, 0}, 3);
  std::vector<size_t> launched;
  auto launch = [&](size_t b) { launched.push_back(b); };
  EXPECT_FALSE(order.inBackward());
  EXPECT_TRUE(order.arrive(1)); // bucket 1 half complete; bucket 0 holds it back anyway
  order.launchReady(launch, true);
  EXPECT_TRUE(order.inBackward());
  EXPECT_TRUE(launched.empty());
  EXPECT_TRUE(order.arrive(2)); // bucket 1 complete, but bucket 0 is not
  order.launchReady(launch, true);
  EXPECT_TRUE(launched.empty());
  EXPECT_TRUE(order.arrive(4));
  EXPECT_TRUE(order.arrive(3)); // bucket 0 complete: 0 and 1 go
  EXPECT_FALSE(order.arrive(3)); // a second gradient for a parameter
  order.launchReady(launch, true);
  EXPECT_EQ(launched, (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(order.arrived(3));
  EXPECT_FALSE(order.arrived(0));
  order.release(); // parameter 0 never came: its bucket goes from step()
  order.launchReady(launch, false);
  EXPECT_EQ(launched, (std::vector<size_t>{0, 1, 2}));
  order.finish();
  EXPECT_FALSE(order.inBackward());
  EXPECT_FALSE(order.arrived(3));
  EXPECT_EQ(order.launchedByHooks(), 2);
  // The next backward starts afresh.
  EXPECT_TRUE(order.arrive(3));
  order.release();
  launched.clear();
  order.launchReady(launch, false);
  EXPECT_EQ(launched, (std::vector<size_t>{0, 1, 2}));
}
