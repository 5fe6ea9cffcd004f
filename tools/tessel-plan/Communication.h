//===- tools/tessel-plan/Communication.h - Collective time of a step -*- C++ -*-===//
//
// The communication a data-parallel step issues, and its time from an all-reduce cost
// model t = o + bytes / w fitted to `tessel-bench allreduce` (Bucket.h). A ring all-reduce
// is a reduce-scatter then an all-gather, so at the same world size each of those moves
// half the bytes an all-reduce of the same buffer does:
//
//   all-reduce(s)      = o + s / w
//   all-gather(s)      = o + s / (2 w)      (s: the gathered buffer's bytes)
//   reduce-scatter(s)  = o + s / (2 w)      (s: the input buffer's bytes)
//
// per step:
//   DDP     n_b all-reduces of the gradients               n_b o + G / w
//   ZeRO-1  n_b reduce-scatters of the gradients, n_g all-gathers of the f32 parameters
//                                                          (n_b + n_g) o + (G + 4 P) / (2 w)
//   ZeRO-3  every unit all-gathered for its forward and again for its backward (all but
//           the last), every unit's gradients reduce-scattered
//                                                          (2 U - 1 + U) o + (2 A - A_last + G) / (2 w)
//
// with G the gradient bytes, P the parameter count, A the gathered bytes (parameters in the
// gather dtype) and U the units. Where all-gather and reduce-scatter were timed on their own
// (`tessel-bench allreduce --collectives`), each is priced from its own fit instead of half
// an all-reduce: n o_ag + s / w_ag. What this counts is the time the collectives take, not
// how much of it the compute hides.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PLAN_COMMUNICATION_H
#define TESSEL_PLAN_COMMUNICATION_H

#include "tools/tessel-plan/Bucket.h"
#include "tools/tessel-plan/Memory.h"

#include <optional>
#include <string>

namespace tessel::plan {

struct CommunicationSetup {
  ModelShape model;
  Sharding sharding = Sharding::Ddp;
  /// Bytes per element of the gradients as communicated, and (ZeRO-3) of the gathered
  /// parameters; bf16 weight copies (DDP) communicate the linears' gradients in bf16.
  int gradientBytes = 4, gatherBytes = 4;
  bool workingCopies = false;
  /// DDP and ZeRO-1: gradient buckets (each its own collective); ZeRO-1: all-gather groups.
  int buckets = 1, gatherGroups = 1;
};

struct CommunicationPlan {
  int collectives = 0;
  double allReduceBytes = 0, allGatherBytes = 0, reduceScatterBytes = 0;
  double seconds = 0;
  std::string formula; ///< the sum above with its inputs, for people
};

/// The cost models: the all-reduce's, and, where both were measured, the all-gather's and
/// the reduce-scatter's (otherwise each is half an all-reduce of the same bytes).
struct CollectiveCosts {
  AllReduceCostModel allReduce;
  std::optional<AllReduceCostModel> allGather, reduceScatter;
  CollectiveCosts(AllReduceCostModel allReduce) : allReduce(allReduce) {}
  /// Every fit `tessel-bench allreduce --json` file has.
  static CollectiveCosts fromJson(const std::string &path);
};

CommunicationPlan planCommunication(const CommunicationSetup &setup, const CollectiveCosts &cost);

} // namespace tessel::plan

#endif // TESSEL_PLAN_COMMUNICATION_H
