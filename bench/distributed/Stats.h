//===- bench/distributed/Stats.h - Summaries of timed repetitions -*- C++ -*-===//
#ifndef TESSEL_BENCH_DISTRIBUTED_STATS_H
#define TESSEL_BENCH_DISTRIBUTED_STATS_H

#include <vector>

namespace tessel::dist {

struct Summary {
  double mean = 0, median = 0, std = 0, min = 0, max = 0;
  int count = 0;
};

/// Mean, median, (sample) standard deviation, min and max; zeros when empty.
Summary summarize(std::vector<double> values);

/// nccl-tests' all-reduce bandwidths for `bytes` per rank moved in `seconds`:
/// algorithm bandwidth bytes / t, bus bandwidth algbw * 2 (n - 1) / n.
double algorithmBandwidth(double bytes, double seconds);
double busBandwidth(double bytes, double seconds, int worldSize);

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_STATS_H
