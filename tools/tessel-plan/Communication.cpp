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

} // namespace

CommunicationPlan planCommunication(const CommunicationSetup &setup,
                                    const AllReduceCostModel &cost) {
  if (!(cost.bytesPerSecond > 0 && cost.overheadSeconds >= 0))
    throw std::invalid_argument("the all-reduce cost model needs o >= 0 and w > 0");
  const ModelShape &model = setup.model;
  double params = static_cast<double>(model.parameters());
  double gradients = params * setup.gradientBytes;
  if (setup.workingCopies) // the linears' gradients are the bf16 copies'
    gradients = static_cast<double>(model.linearParameters()) * 2 +
                (params - static_cast<double>(model.linearParameters())) * 4;
  double o = cost.overheadSeconds, w = cost.bytesPerSecond;
  CommunicationPlan plan;
  switch (setup.sharding) {
  case Sharding::Single:
    plan.formula = "one device: no communication";
    return plan;
  case Sharding::Ddp:
    plan.collectives = setup.buckets;
    plan.allReduceBytes = gradients;
    plan.seconds = setup.buckets * o + gradients / w;
    plan.formula = formula("n_b o + G / w = %.0f x o + %.4g B / w", setup.buckets, gradients);
    break;
  case Sharding::Zero1:
  case Sharding::Zero2:
    plan.collectives = setup.buckets + setup.gatherGroups;
    plan.reduceScatterBytes = gradients;
    plan.allGatherBytes = params * 4;
    plan.seconds = plan.collectives * o + (gradients + params * 4) / (2 * w);
    plan.formula = formula("(n_b + n_g) o + (G + 4 P) / (2 w) = %.0f x o + %.4g B / (2 w)",
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
    plan.seconds = plan.collectives * o + (plan.allGatherBytes + gradients) / (2 * w);
    plan.formula = formula("(3 U - 1) o + (2 A - A_last + G) / (2 w) = %.0f x o + %.4g B / (2 w)",
                         plan.collectives, plan.allGatherBytes + gradients);
    break;
  }
  }
  return plan;
}

} // namespace tessel::plan
