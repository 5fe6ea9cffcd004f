//===- tools/tessel-plan/Bucket.h - DDP's gradient bucket size -*- C++ -*-===//
//
// DDP overlaps each bucket's all-reduce with the rest of the backward, so what the step
// pays is every bucket's fixed cost and the last bucket's transfer:
//
//   T(n_b) = n_b o + s / (n_b w)      (s gradient bytes, n_b buckets, o seconds per
//                                      all-reduce, w bytes/s)
//
// minimal at n_b = sqrt(s / (o w)), a bucket of b = sqrt(s o w) bytes (CS336's accounting).
// o and w come from a least-squares fit of t = o + bytes / w to all-reduce timings.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PLAN_BUCKET_H
#define TESSEL_PLAN_BUCKET_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::plan {

/// T(n_b), seconds; n_b may be fractional.
double exposedOverheadSeconds(double gradientBytes, double buckets, double overheadSeconds,
                              double bytesPerSecond);
/// The bucket size that minimises T: sqrt(s o w), clamped to [minBytes, gradientBytes].
int64_t optimalBucketBytes(double gradientBytes, double overheadSeconds, double bytesPerSecond,
                           int64_t minBytes = 1 << 20);

/// Least-squares fit of t = o + bytes / w to measured (bytes, seconds) points.
/// o is clamped at >= 0 and w at > 0.
struct AllReduceCostModel {
  double overheadSeconds = 0;
  double bytesPerSecond = 0;
};
AllReduceCostModel fitAllReduceCost(const std::vector<double> &bytes,
                                    const std::vector<double> &seconds);
/// The fit over the rows (bytes, median_ms) of one collective of a `tessel-bench allreduce
/// --json` file: "all-reduce" (rows without a collective are all-reduces), "all-gather" (bytes:
/// the gathered output) or "reduce-scatter" (bytes: the input). nullopt: no such rows.
std::optional<AllReduceCostModel> fitCollectiveJson(const std::string &path,
                                                    const std::string &collective);
/// fitCollectiveJson(path, "all-reduce"); the file must have all-reduce rows.
AllReduceCostModel fitAllReduceJson(const std::string &path);

} // namespace tessel::plan

#endif // TESSEL_PLAN_BUCKET_H
