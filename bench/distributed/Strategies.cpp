//===- bench/distributed/Strategies.cpp - The strategies, by name ----------===//
#include "bench/distributed/Strategy.h"

#include <stdexcept>

namespace tessel::dist {

// Each strategy file's variants (a new file adds its line below).
std::vector<StrategyInfo> dataParallelStrategies(); // DdpStrategy.cpp
std::vector<StrategyInfo> zero1Strategies();        // Zero1Strategy.cpp
std::vector<StrategyInfo> fsdpStrategies();         // FsdpStrategy.cpp

const std::vector<StrategyInfo> &strategies() {
  static const std::vector<StrategyInfo> all = [] {
    std::vector<StrategyInfo> list;
    for (auto family : {dataParallelStrategies, zero1Strategies, fsdpStrategies})
      for (StrategyInfo &info : family())
        list.push_back(std::move(info));
    return list;
  }();
  return all;
}

const StrategyInfo &findStrategy(const std::string &name) {
  std::string known;
  for (const StrategyInfo &info : strategies()) {
    if (info.name == name)
      return info;
    known += (known.empty() ? "" : ", ") + info.name;
  }
  throw std::invalid_argument("unknown strategy '" + name + "' (expected one of: " + known + ")");
}

std::unique_ptr<Strategy> makeStrategy(const std::string &name, tessel::model::TransformerLM &lm,
                                       std::shared_ptr<ProcessGroup> pg,
                                       const StrategyOptions &options) {
  return findStrategy(name).make(lm, std::move(pg), options);
}

int64_t bytesOf(const torch::Tensor &t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

StrategyReport modelMemory(const tessel::model::TransformerLM &lm,
                           const std::vector<torch::Tensor> &workingCopies) {
  StrategyReport r;
  for (const torch::Tensor &p : lm->parameters()) {
    r.paramBytes += static_cast<double>(bytesOf(p));
    r.gradBytes += static_cast<double>(bytesOf(p.grad()));
  }
  for (const torch::Tensor &c : workingCopies) // the gradients are the copies'
    if (c.defined()) {
      r.paramBytes += static_cast<double>(bytesOf(c));
      r.gradBytes += static_cast<double>(bytesOf(c.grad()));
    }
  return r;
}

} // namespace tessel::dist
