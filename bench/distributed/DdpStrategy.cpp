//===- bench/distributed/DdpStrategy.cpp - DataParallel, with or without a sharded AdamW -===//
//
// "ddp": DataParallel (any of its modes, StrategyOptions::ddp) averages the gradients and
// every rank steps AdamW over the whole model. "broadcast": the same gradients, but AdamW's
// state is sharded by parameter owner and each owner broadcasts its parameters after its
// step (PyTorch's ZeroRedundancyOptimizer; ShardedOptimizer.h).
//
//===----------------------------------------------------------------------===//
#include "bench/distributed/ConsolidatedCheckpoint.h"
#include "bench/distributed/ShardedOptimizer.h"
#include "bench/distributed/Strategy.h"

namespace tessel::dist {
namespace {

class DdpStrategy : public Strategy {
public:
  DdpStrategy(tessel::model::TransformerLM &lm, std::shared_ptr<ProcessGroup> pg,
              const StrategyOptions &options, bool shardOptimizer)
      : lm_(lm), pg_(pg), autoBucketSize_(options.ddp.autoBucketSize) {
    if (options.workingCopies)
      copies_ = lm->makeWorkingCopies(torch::kBFloat16);
    ddp_ = std::make_unique<DataParallel>(lm.ptr(), pg, options.ddp, copies_);
    if (shardOptimizer)
      shard_ = std::make_unique<ShardedOptimizer>(lm->parameters(), pg, tesselAdamW(options.adamw),
                                                  ShardMode::Broadcast, options.bucketMb);
    else
      full_ = tesselAdamW(options.adamw, copies_)(lm->parameters());
  }

  void zeroGrad() override { ddp_->zeroGrad(); }
  bool synchronizeGradients() override {
    ddp_->finishGradientSynchronization();
    return true;
  }
  void step() override {
    if (shard_)
      shard_->step();
    else
      full_->step();
  }
  void onCommunication(std::function<void(int)> mark) override {
    if (shard_)
      shard_->onCommunication(std::move(mark));
  }
  void finish() override {
    if (shard_)
      shard_->waitForAllParameters();
  }
  void saveCheckpoint(const std::string &path) override {
    if (shard_)
      return shard_->saveConsolidated(path);
    // Every rank holds the whole state; rank 0's is written.
    std::vector<torch::Tensor> params = lm_->parameters();
    std::vector<StatePiece> pieces;
    for (size_t i = 0; i < params.size() && pg_->rank() == 0; ++i)
      pieces.push_back({{static_cast<int>(i), 0, params[i].numel()}, full_->state(i)});
    saveConsolidated(*pg_, path, params, pieces);
  }
  StrategyReport report() const override {
    StrategyReport r = modelMemory(lm_, copies_);
    if (shard_) {
      r.stateBytes = static_cast<double>(shard_->localStateBytes());
    } else {
      size_t n = lm_->parameters().size();
      for (size_t i = 0; i < n; ++i)
        for (const auto &[name, t] : full_->state(i))
          r.stateBytes += static_cast<double>(bytesOf(t));
    }
    r.buckets = static_cast<int>(ddp_->buckets().size());
    r.bucketsFromHooks = ddp_->bucketsLaunchedDuringBackward();
    r.bucketMb = static_cast<double>(ddp_->bucketBytes()) / (1 << 20);
    if (autoBucketSize_)
      r.calibration = ddp_->calibration();
    return r;
  }

private:
  tessel::model::TransformerLM lm_;
  std::shared_ptr<ProcessGroup> pg_;
  bool autoBucketSize_;
  std::vector<torch::Tensor> copies_;
  std::unique_ptr<DataParallel> ddp_;
  std::unique_ptr<ShardedOptimizer> shard_;
  std::unique_ptr<LocalOptimizer> full_;
};

} // namespace

std::vector<StrategyInfo> dataParallelStrategies() {
  auto make = [](bool shardOptimizer) -> StrategyFactory {
    return [shardOptimizer](tessel::model::TransformerLM &lm, std::shared_ptr<ProcessGroup> pg,
                            const StrategyOptions &options) -> std::unique_ptr<Strategy> {
      return std::make_unique<DdpStrategy>(lm, std::move(pg), options, shardOptimizer);
    };
  };
  return {{"ddp", "DDP (bucketed unless told otherwise) + AdamW", make(false)},
          {"broadcast", "DDP + AdamW sharded by parameter, owners broadcast", make(true)}};
}

} // namespace tessel::dist
