//===- tools/tessel-plan/Communication.cpp - Collective time of a step ----===//

#include "tools/tessel-plan/Communication.h"

#include <cstdio>
#include <stdexcept>

namespace tessel::plan {

namespace {

/// The formula with its inputs: collectives and bytes.
std::string formula(const char *fmt, double collectives, double bytes) {
  char text[160];
  std::snprintf(text, sizeof text, fmt, collectives, bytes);
  return text;
}

void check(const AllReduceCostModel &m, const char *what) {
  if (!(m.bytesPerSecond > 0 && m.overheadSeconds >= 0))
    throw std::invalid_argument(std::string("the ") + what + " cost model needs o >= 0 and w > 0");
}

/// n all-gathers (or reduce-scatters) of `bytes` in all: from their own fit, else half an
/// all-reduce's bytes.
double halfCollective(const AllReduceCostModel *own, const AllReduceCostModel &ar, double n,
                      double bytes) {
  if (own)
    return n * own->overheadSeconds + bytes / own->bytesPerSecond;
  return n * ar.overheadSeconds + bytes / (2 * ar.bytesPerSecond);
}

} // namespace

CollectiveCosts CollectiveCosts::fromJson(const std::string &path) {
  CollectiveCosts costs(fitAllReduceJson(path));
  costs.allGather = fitCollectiveJson(path, "all-gather");
  costs.reduceScatter = fitCollectiveJson(path, "reduce-scatter");
  return costs;
}

CommunicationPlan planCommunication(const CommunicationSetup &setup, const CollectiveCosts &cost) {
  check(cost.allReduce, "all-reduce");
  for (const auto *own : {&cost.allGather, &cost.reduceScatter})
    if (*own)
      check(**own, "all-gather / reduce-scatter");
  const ModelShape &model = setup.model;
  double params = static_cast<double>(model.parameters());
  double gradients = params * setup.gradientBytes;
  if (setup.workingCopies) // the linears' gradients are the bf16 copies'
    gradients = static_cast<double>(model.linearParameters()) * 2 +
                (params - static_cast<double>(model.linearParameters())) * 4;
  const AllReduceCostModel &ar = cost.allReduce;
  // Their own fits only with both (the formula names one model or the other).
  bool own = cost.allGather && cost.reduceScatter;
  const AllReduceCostModel *gather = own ? &*cost.allGather : nullptr;
  const AllReduceCostModel *scatter = own ? &*cost.reduceScatter : nullptr;
  CommunicationPlan plan;
  switch (setup.sharding) {
  case Sharding::Single:
    plan.formula = "one device: no communication";
    return plan;
  case Sharding::Ddp:
    plan.collectives = setup.buckets;
    plan.allReduceBytes = gradients;
    plan.seconds = setup.buckets * ar.overheadSeconds + gradients / ar.bytesPerSecond;
    plan.formula = formula("n_b o + G / w = %.0f x o + %.4g B / w", setup.buckets, gradients);
    break;
  case Sharding::Zero1:
  case Sharding::Zero2:
    plan.collectives = setup.buckets + setup.gatherGroups;
    plan.reduceScatterBytes = gradients;
    plan.allGatherBytes = params * 4;
    plan.seconds = halfCollective(scatter, ar, setup.buckets, gradients) +
                   halfCollective(gather, ar, setup.gatherGroups, params * 4);
    plan.formula =
        own ? formula("n_b o_rs + G / w_rs + n_g o_ag + 4 P / w_ag (%.0f collectives, %.4g B)",
                      plan.collectives, gradients + params * 4)
            : formula("(n_b + n_g) o + (G + 4 P) / (2 w) = %.0f x o + %.4g B / (2 w)",
                      plan.collectives, gradients + params * 4);
    break;
  case Sharding::Zero3: {
    std::vector<int64_t> units = model.unitParameters();
    if (units.empty())
      throw std::invalid_argument("a ZeRO-3 plan needs at least one unit");
    double gathered = params * setup.gatherBytes;
    double lastUnit = static_cast<double>(units.back()) * setup.gatherBytes;
    int u = static_cast<int>(units.size());
    plan.collectives = 3 * u - 1; // forward gathers, backward regathers, reductions
    plan.allGatherBytes = 2 * gathered - lastUnit;
    plan.reduceScatterBytes = gradients;
    plan.seconds = halfCollective(gather, ar, 2 * u - 1, plan.allGatherBytes) +
                   halfCollective(scatter, ar, u, gradients);
    plan.formula =
        own ? formula("(2 U - 1) o_ag + (2 A - A_last) / w_ag + U o_rs + G / w_rs (%.0f "
                      "collectives, %.4g B)",
                      plan.collectives, plan.allGatherBytes + gradients)
            : formula("(3 U - 1) o + (2 A - A_last + G) / (2 w) = %.0f x o + %.4g B / (2 w)",
                      plan.collectives, plan.allGatherBytes + gradients);
    break;
  }
  }
  return plan;
}

} // namespace tessel::plan
