//===- test/harness/PlanMemoryTest.cpp - tessel-plan against the model it plans -===//
//
// tessel-plan counts the harness's model: its parameters, preset by preset, and what
// autograd keeps after the forward, tensor by tensor. Both are checked against the real
// model: the presets built on the meta device (no memory, even for 10B), the activations
// through a counting CPU allocator around one forward.
//
//===----------------------------------------------------------------------===//
#include "bench/model/Autocast.h"
#include "bench/model/TransformerLM.h"
#include "tools/tessel-plan/Memory.h"

#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <unordered_map>

using tessel::model::ModelConfig;
using tessel::model::TransformerLM;

namespace {

/// c10's CPU allocation with a count of the bytes alive. The data pointer is its own
/// context (some kernels check that), so the sizes are looked up by address.
class CountingAllocator final : public c10::Allocator {
public:
  c10::DataPtr allocate(size_t bytes) override {
    void *data = c10::alloc_cpu(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      sizes_[data] = bytes;
      live_ += static_cast<int64_t>(bytes);
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void *dest, const void *src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
  int64_t live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }
  static CountingAllocator &get() {
    static CountingAllocator *instance = [] {
      auto *c = new CountingAllocator;
      c10::SetCPUAllocator(c, /*priority=*/UINT8_MAX);
      return c;
    }();
    return *instance;
  }

private:
  static void release(void *data) {
    CountingAllocator &self = get();
    {
      std::lock_guard<std::mutex> lock(self.mutex_);
      auto it = self.sizes_.find(data);
      if (it != self.sizes_.end()) {
        self.live_ -= static_cast<int64_t>(it->second);
        self.sizes_.erase(it);
      }
    }
    c10::free_cpu(data);
  }
  std::mutex mutex_;
  std::unordered_map<void *, size_t> sizes_;
  int64_t live_ = 0;
};


TEST(PlanAgainstModel, EveryPresetsParameterCountIsTheBuiltModels) {
  for (const std::string &name : ModelConfig::presetNames()) {
    ModelConfig config = ModelConfig::preset(name);
    config.contextLength = 16;
    TransformerLM lm(config, torch::Device(torch::kMeta));
    EXPECT_EQ(lm->numParameters(), tessel::plan::findPreset(name)->parameters()) << name;
  }
}

struct Case {
  const char *name;
  tessel::model::AttentionImpl attention;
  bool bf16, checkpointing;
};

class SavedTensors : public ::testing::TestWithParam<Case> {};

TEST_P(SavedTensors, AreWhatTheForwardKeeps) {
  Case c = GetParam();
  at::set_num_threads(1);
  ModelConfig config = ModelConfig::preset("small");
  config.dModel = 64, config.dFF = 96, config.numLayers = 3, config.numHeads = 4;
  config.vocabSize = 200, config.contextLength = 24;
  config.attention = c.attention;
  const int64_t batch = 3;
  CountingAllocator &count = CountingAllocator::get();
  torch::manual_seed(0);
  TransformerLM lm(config, torch::kCPU);
  lm->setActivationCheckpointing(c.checkpointing);
  torch::Tensor tokens = torch::randint(config.vocabSize, {batch, config.contextLength}, torch::kLong);
  torch::Tensor targets = torch::randint(config.vocabSize, {batch, config.contextLength}, torch::kLong);
  int64_t before = count.live();
  torch::Tensor loss;
  {
    tessel::model::AutocastGuard autocast(torch::kCPU, torch::kBFloat16, c.bf16);
    loss = tessel::model::crossEntropy(lm->forward(tokens), targets, config.kernels);
  }
  int64_t kept = count.live() - before;

  tessel::plan::StepSetup s;
  s.model = config.planShape();
  s.batch = batch;
  s.context = config.contextLength;
  s.bf16 = c.bf16;
  s.attention = c.attention == tessel::model::AttentionImpl::Naive ? tessel::plan::Attention::Naive
                                                                   : tessel::plan::Attention::Sdpa;
  s.activationCheckpointing = c.checkpointing;
  s.cpu = true;
  double expected = tessel::plan::activationBytes(s, double(batch * config.contextLength));
  // Autocast's bf16 weight casts stay with the linears that keep them for the backward:
  // every linear's, or with checkpointing (blocks run without autograd) the LM head's.
  if (c.bf16)
    expected += 2.0 * double(c.checkpointing ? s.model.vocabSize * s.model.dModel
                                             : s.model.linearParameters());
  // Small change: the loss and its bookkeeping scalars.
  EXPECT_NEAR(double(kept), expected, 64.0) << "kept " << kept << " B, planned " << expected;
  loss.backward(); // the graph was whole
}

INSTANTIATE_TEST_SUITE_P(
    Harness, SavedTensors,
    ::testing::Values(Case{"sdpa_fp32", tessel::model::AttentionImpl::Sdpa, false, false},
                      Case{"sdpa_bf16", tessel::model::AttentionImpl::Sdpa, true, false},
                      Case{"naive_fp32", tessel::model::AttentionImpl::Naive, false, false},
                      Case{"naive_bf16", tessel::model::AttentionImpl::Naive, true, false},
                      Case{"checkpointed_fp32", tessel::model::AttentionImpl::Sdpa, false, true},
                      Case{"checkpointed_bf16", tessel::model::AttentionImpl::Sdpa, true, true}),
    [](const auto &info) { return std::string(info.param.name); });

} // namespace
