//===- bench/distributed/Zero1Strategy.cpp - ZeRO-1: sharded AdamW, gradients reduce-scattered -===//
//
// No DataParallel: ShardedOptimizer (Zero1 mode) reduce-scatters gradient buckets during
// the backward, steps this rank's slice and all-gathers the parameters. "zero1-prefetch"
// leaves the all-gather in flight and makes each part of the next forward wait for its own
// parameters; "zero1-prefetch-bf16grad" also reduce-scatters the gradients in bf16.
//
//===----------------------------------------------------------------------===//
#include "bench/distributed/ShardedOptimizer.h"
#include "bench/distributed/Strategy.h"

namespace tessel::dist {
namespace {

class Zero1Strategy : public Strategy {
public:
  Zero1Strategy(tessel::model::TransformerLM &lm, std::shared_ptr<ProcessGroup> pg,
                const StrategyOptions &options, bool prefetch, bool bf16Gradients)
      : lm_(lm), bucketMb_(options.bucketMb) {
    shard_ = std::make_unique<ShardedOptimizer>(lm->parameters(), pg, tesselAdamW(options.adamw),
                                                ShardMode::Zero1, options.bucketMb);
    if (bf16Gradients)
      shard_->reduceGradientsIn(torch::kBFloat16);
    if (prefetch) {
      shard_->overlapAllGatherWithForward(true);
      ShardedOptimizer *shard = shard_.get();
      lm->setBeforeForward(
          [shard](torch::nn::Module &part) { shard->waitForParameters(part.parameters()); });
    }
  }
  ~Zero1Strategy() override { lm_->setBeforeForward(nullptr); }

  void zeroGrad() override { shard_->zeroGrad(); }
  void step() override { shard_->step(); }
  void onCommunication(std::function<void(int)> mark) override {
    shard_->onCommunication(std::move(mark));
  }
  bool waitsForGradientReductions() const override { return true; }
  void finish() override {
    lm_->setBeforeForward(nullptr);
    shard_->waitForAllParameters();
  }
  void saveCheckpoint(const std::string &path) override { shard_->saveConsolidated(path); }
  StrategyReport report() const override {
    StrategyReport r = modelMemory(lm_);
    r.gradBytes = static_cast<double>(shard_->gradientBufferBytes()); // .grad() views into it
    r.stateBytes = static_cast<double>(shard_->localStateBytes());
    r.buckets = static_cast<int>(shard_->numBuckets());
    r.gatherGroups = static_cast<int>(shard_->numStepGroups());
    r.bucketsFromHooks = shard_->bucketsLaunchedDuringBackward();
    r.bucketMb = bucketMb_;
    return r;
  }

private:
  tessel::model::TransformerLM lm_;
  double bucketMb_;
  std::unique_ptr<ShardedOptimizer> shard_;
};

} // namespace

std::vector<StrategyInfo> zero1Strategies() {
  auto make = [](bool prefetch, bool bf16Gradients) -> StrategyFactory {
    return [=](tessel::model::TransformerLM &lm, std::shared_ptr<ProcessGroup> pg,
               const StrategyOptions &options) -> std::unique_ptr<Strategy> {
      return std::make_unique<Zero1Strategy>(lm, std::move(pg), options, prefetch, bf16Gradients);
    };
  };
  return {{"zero1", "ZeRO-1: gradients reduce-scattered in buckets, AdamW sharded by elements",
           make(false, false)},
          {"zero1-prefetch",
           "ZeRO-1 whose parameter all-gather overlaps the next forward (each block waits for "
           "its own parameters)",
           make(true, false)},
          {"zero1-prefetch-bf16grad",
           "zero1-prefetch with gradients reduce-scattered in bf16 (half the bytes)",
           make(true, true), /*bf16Only=*/true}};
}

} // namespace tessel::dist
