//===- bench/distributed/FsdpStrategy.cpp - The Transformer LM fully sharded -===//
//
// "fsdp": every block, the token embeddings, the final norm and the LM head is a unit of
// FullySharded (ZeRO-3); under bf16 autocast the units are all-gathered and computed in
// bf16 from the f32 master shards (FSDP2's MixedPrecisionPolicy(param_dtype=bf16)), with
// gradients reduce-scattered in f32. "fsdp-bf16grad" reduce-scatters them in bf16 (half the
// bytes; reduce_dtype=bf16). The model is built on the meta device and initialised unit by
// unit on the group's device, and only the shards stay, so a model larger than one GPU (or
// one host's memory) can train on several.
//
//===----------------------------------------------------------------------===//
#include "bench/distributed/FullySharded.h"
#include "bench/distributed/Strategy.h"

namespace tessel::dist {
namespace {

class FsdpStrategy : public Strategy {
public:
  FsdpStrategy(tessel::model::TransformerLM &lm, std::shared_ptr<ProcessGroup> pg,
               const StrategyOptions &options, bool bf16Gradients)
      : lm_(lm) {
    torch::Device device = pg->device();
    std::vector<torch::nn::Module *> units = {lm->tokenEmbeddings.get()};
    for (auto &block : lm->layers)
      units.push_back(block.get());
    units.push_back(lm->lnFinal.get());
    units.push_back(lm->lmHead.get());
    FullyShardedOptions fo;
    fo.paramDtype = options.bf16 ? torch::kBFloat16 : torch::kFloat;
    fo.reduceDtype = bf16Gradients ? torch::kBFloat16 : torch::kFloat;
    // Initialised one unit at a time on the group's device: with NCCL the GPU's generator,
    // in the order DDP's model draws on the GPU (the same weights, and fast enough for 10B).
    if (lm->parameters().front().is_meta())
      fo.materialize = [lm, device](torch::nn::Module &unit) mutable {
        lm->materialize(unit, device);
      };
    fsdp_ = std::make_unique<FullySharded>(units, pg, tesselAdamW(options.adamw), fo);
    for (torch::Tensor &buffer : lm->buffers()) // the RoPE tables: small, whole on each rank
      buffer.set_data(buffer.to(device));
    FullySharded *fsdp = fsdp_.get();
    lm->setBeforeForward([fsdp](torch::nn::Module &unit) { fsdp->beforeForward(unit); });
    lm->setAfterForward([fsdp](torch::nn::Module &unit, const std::vector<torch::Tensor> &outputs) {
      fsdp->afterForward(unit, outputs);
    });
  }
  ~FsdpStrategy() override { removeHooks(); }

  void zeroGrad() override { fsdp_->zeroGrad(); }
  void step() override { fsdp_->step(); }
  void onCommunication(std::function<void(int)> mark) override {
    fsdp_->onCommunication(std::move(mark));
  }
  bool waitsForGradientReductions() const override { return true; }
  int maxParameterWaitsPerStep() const override {
    return 3 * static_cast<int>(fsdp_->numUnits()) + 2;
  }
  void finish() override {
    removeHooks();
    peakGathered_ = fsdp_->peakGatheredUnits(); // gatherAll() gathers every unit
    fsdp_->gatherAll();
  }
  void saveCheckpoint(const std::string &path) override { fsdp_->saveConsolidated(path); }
  StrategyReport report() const override {
    StrategyReport r;
    r.paramBytes = static_cast<double>(fsdp_->shardBytes());
    r.gradBytes = static_cast<double>(fsdp_->gradientShardBytes());
    r.stateBytes = static_cast<double>(fsdp_->stateBytes());
    r.buckets = static_cast<int>(fsdp_->numUnits());
    r.bucketsFromHooks = fsdp_->unitsReducedDuringBackward();
    r.peakGatheredUnits = peakGathered_;
    return r;
  }

private:
  void removeHooks() {
    lm_->setBeforeForward(nullptr);
    lm_->setAfterForward(nullptr);
  }

  tessel::model::TransformerLM lm_;
  std::unique_ptr<FullySharded> fsdp_;
  int peakGathered_ = 0;
};

} // namespace

std::vector<StrategyInfo> fsdpStrategies() {
  auto make = [](bool bf16Gradients) -> StrategyFactory {
    return [=](tessel::model::TransformerLM &lm, std::shared_ptr<ProcessGroup> pg,
               const StrategyOptions &options) -> std::unique_ptr<Strategy> {
      return std::make_unique<FsdpStrategy>(lm, std::move(pg), options, bf16Gradients);
    };
  };
  StrategyInfo fsdp{"fsdp",
                    "ZeRO-3: parameters, gradients and AdamW state sharded per block; bf16 "
                    "gathers under bf16 autocast",
                    make(false)};
  fsdp.buildModelOnMeta = true;
  StrategyInfo bf16grad{"fsdp-bf16grad", "fsdp with gradients reduce-scattered in bf16",
                        make(true), /*bf16Only=*/true};
  bf16grad.buildModelOnMeta = true;
  return {fsdp, bf16grad};
}

} // namespace tessel::dist
