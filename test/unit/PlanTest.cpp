//===- test/unit/PlanTest.cpp - tessel-plan's formulas against hand-worked cases -===//
//
// The CS336 accounting question (the FFN-only XXL model on TPU v5p) and the harness's
// presets, worked by hand in the comments; every figure exact or to the stated digits.
//
//===----------------------------------------------------------------------===//
#include "tools/tessel-plan/Bucket.h"
#include "tools/tessel-plan/Communication.h"
#include "tools/tessel-plan/Memory.h"
#include "tools/tessel-plan/Mesh.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <string>

using namespace tessel::plan;

namespace {

StepSetup xxl(bool bf16) {
  StepSetup s;
  s.model = *findPreset("xxl");
  s.bf16 = bf16;
  s.batch = 1;
  s.context = 1;
  return s;
}

TEST(PlanModel, ParameterCounts) {
  // 126 blocks x 2 x 16384 x 53248.
  EXPECT_EQ(findPreset("xxl")->parameters(), 219848638464LL);
  // The harness's table (docs/harness.md): 2 V D + L (4 D^2 + 3 D F + 2 D) + D.
  EXPECT_EQ(findPreset("small")->parameters(), 128625408LL);
  EXPECT_EQ(findPreset("xl")->parameters(), 1998235200LL);
  EXPECT_EQ(findPreset("2.7B")->parameters(), 3406809600LL);
  EXPECT_EQ(findPreset("10B")->parameters(), 9745895424LL);
  EXPECT_FALSE(findPreset("huge").has_value());
}

TEST(PlanMemory, Cs336SingleDevice) {
  // (a) f32 master weights, gradients and AdamW's two moments: 16 B a parameter.
  MemoryPlan p = planMemory(xxl(true), Sharding::Single, 1);
  EXPECT_EQ(p.weights + p.gradients + p.optimizerState, 16.0 * 219848638464LL);
  EXPECT_EQ(p.weights + p.gradients + p.optimizerState, 3517578215424.0);
  // 3,517.58 GB: 43.97 H100s of 80 GB.
  EXPECT_NEAR((p.weights + p.gradients + p.optimizerState) / 80e9, 43.9697, 1e-4);
  // Saved for the backward, bf16: each block keeps its two linears' inputs, D + F
  // elements a token: 126 x (16384 + 53248) x 2 B = 17,547,264 B a token.
  EXPECT_EQ(activationBytes(xxl(true), 1), 17547264.0);
  EXPECT_EQ(activationBytes(xxl(true), 1000), 17547264000.0);
}

TEST(PlanMemory, Cs336ShardedOverTpuV5p) {
  // (b) weights, state, gradients and half the activations over N: per device
  // 16 P / N + A / 2 + A / (2 N). With one token's activations, 16 P / N <= 95 GB
  // needs N >= 3517.58 / 95 = 37.03, so 38 (37 devices hold 95.07 GB each).
  StepSetup s = xxl(true);
  s.activationShardFraction = 0.5;
  s.gatheredUnits = 0;
  double a = 17547264.0;
  MemoryPlan at38 = planMemory(s, Sharding::Zero3, 38);
  EXPECT_DOUBLE_EQ(at38.total(), 3517578215424.0 / 38 + a / 38 / 2 + a / 2);
  EXPECT_EQ(devicesNeeded(s, Sharding::Zero3, 95e9), 38);
  EXPECT_GT(planMemory(s, Sharding::Zero3, 37).total(), 95e9);
  // FullySharded's three gathered bf16 units (3 x 1,744,830,464 x 2 B) cost 4 more devices.
  s.gatheredUnits = 3;
  EXPECT_DOUBLE_EQ(planMemory(s, Sharding::Zero3, 38).gatheredUnits, 3.0 * 2 * 1744830464.0);
  EXPECT_EQ(devicesNeeded(s, Sharding::Zero3, 95e9), 42);
  // DDP keeps everything on every device: no count fits.
  EXPECT_EQ(devicesNeeded(s, Sharding::Ddp, 95e9), 0);
}

TEST(PlanMemory, WhatEachStrategyShards) {
  StepSetup s;
  s.model = *findPreset("small");
  double p = 128625408.0;
  MemoryPlan ddp = planMemory(s, Sharding::Ddp, 4), z1 = planMemory(s, Sharding::Zero1, 4);
  MemoryPlan z2 = planMemory(s, Sharding::Zero2, 4), z3 = planMemory(s, Sharding::Zero3, 4);
  EXPECT_EQ(ddp.weights, 4 * p);
  EXPECT_EQ(ddp.gradients, 4 * p);
  EXPECT_EQ(ddp.optimizerState, 8 * p);
  EXPECT_EQ(z1.optimizerState, 2 * p);
  EXPECT_EQ(z1.gradients, 4 * p);
  EXPECT_EQ(z2.gradients, p);
  EXPECT_EQ(z2.weights, 4 * p);
  EXPECT_EQ(z3.weights, p);
  // The global batch of 4 is one sequence a device.
  EXPECT_DOUBLE_EQ(ddp.activations, activationBytes(s, 512));
  EXPECT_THROW(planMemory(s, Sharding::Single, 2), std::invalid_argument);
}

TEST(PlanMemory, SavedTensorsPerBlock) {
  // xl, fp32, SDPA, eager: 12 D + 4 F + 2 (rstd) + H (logsumexp) elements of 4 B.
  StepSetup s;
  s.model = *findPreset("xl");
  double elements = 0;
  for (const SavedTensor &t : savedPerBlock(s))
    elements += t.elementsPerToken * t.bytesPerElement / 4.0;
  EXPECT_EQ(elements, 12 * 1600 + 4 * 6400 + 2 + 25);
  // Naive attention keeps the probabilities (H T a token), copies of v and of the output,
  // the mask (T / batch bytes a token), not qkv (3 D), SDPA's output (D) or logsumexp (H).
  s.attention = Attention::Naive;
  s.context = 1024;
  double naive = 0;
  for (const SavedTensor &t : savedPerBlock(s))
    naive += t.bytesPerToken();
  EXPECT_EQ(naive, 4.0 * (10 * 1600 + 4 * 6400 + 2 + 25 * 1024) + 1024 / 4);
  // Checkpointing keeps each block's inputs: the f32 residual, and after the first block
  // the previous one's f32 feed-forward output.
  s.attention = Attention::Sdpa;
  s.activationCheckpointing = true;
  EXPECT_EQ(activationBytes(s, 1) - (48 + 47) * 4 * 1600.0,
            4.0 * (1600 + 1600 + 1 + 1600 + 10000)); // the final norm, the LM head's, the loss's
}

TEST(PlanMemory, FullyShardedBf16KeepsABf16ResidualStream) {
  // ZeRO-3 gathers bf16 weights: the embedding's output, so the residual stream, is bf16.
  // Tessel's norms keep their input as it is (two a block, and the final norm's): 2 B a
  // token and element less than the f32 stream DDP's autocast keeps. The eager norms keep
  // their f32 upcast either way. (Measured, 2 H200s, xl ctx 2048 batch 32: without this the
  // plan read 8.6% above FSDP's peak.)
  StepSetup s;
  s.model = *findPreset("xl");
  s.bf16 = true;
  s.attention = Attention::Flash;
  s.kernels = Kernels::Tessel;
  s.batch = 2;
  double tokens = 512;
  double ddp = planMemory(s, Sharding::Ddp, 2).activations;
  double fsdp = planMemory(s, Sharding::Zero3, 2).activations;
  EXPECT_EQ(ddp - fsdp, tokens * (2 * 48 + 1) * 1600 * 2);
  s.kernels = Kernels::Eager;
  s.attention = Attention::Sdpa;
  EXPECT_EQ(planMemory(s, Sharding::Ddp, 2).activations, planMemory(s, Sharding::Zero3, 2).activations);
}

TEST(PlanMesh, Cs336ComputeBoundBatch) {
  // (c) TPU v5p, W_ici = 2 x 9e10, C = 4.6e14, M_X = 2, M_Y = 1, X = 16, Y = 4, bf16:
  // B / N >= b C / (2 Y W M_X) = 2 x 4.6e14 / (2 x 4 x 1.8e11 x 2) = 319.44 tokens a device,
  // B >= 64 x 319.44 = 20,444.4 tokens (320 and 20,480 in whole tokens a device).
  MeshSetup s;
  s.dModel = 16384, s.dFF = 53248;
  s.hardware = hardwarePreset("tpu-v5p");
  s.fsdp = 16, s.tensorParallel = 4, s.axesX = 2, s.axesY = 1;
  MeshPlan p = planMesh(s);
  EXPECT_NEAR(p.computeBoundTokensPerDevice, 319.444444, 1e-6);
  EXPECT_NEAR(p.computeBoundTokens, 20444.444444, 1e-5);
  EXPECT_EQ(std::ceil(p.computeBoundTokensPerDevice), 320);
  // Tensor parallelism is compute-bound for F >= b Y C / (2 W M_Y) = 10,222.2.
  EXPECT_NEAR(p.dffNeeded, 10222.2222, 1e-3);
  EXPECT_TRUE(p.tensorParallelComputeBound);
  // At that batch the math and the FSDP gather take equally long.
  EXPECT_NEAR(p.mathSeconds / p.fsdpSeconds, 1.0, 1e-12);
  EXPECT_THROW(hardwarePreset("tpu-v9"), std::invalid_argument);
}

TEST(PlanBucket, OptimalBucketAndFit) {
  // s = 1 GB, o = 100 us, w = 10 GB/s: b = sqrt(1e9 x 1e-4 x 1e10) = 31,622,776 B; at
  // n_b = sqrt(s / (o w)) = 31.62 the overhead is 2 sqrt(s o / w) = 6.3246 ms.
  EXPECT_EQ(optimalBucketBytes(1e9, 1e-4, 1e10), 31622776);
  EXPECT_NEAR(exposedOverheadSeconds(1e9, std::sqrt(1e3), 1e-4, 1e10), 6.3246e-3, 1e-7);
  EXPECT_GT(exposedOverheadSeconds(1e9, 10, 1e-4, 1e10), 6.3246e-3);
  EXPECT_GT(exposedOverheadSeconds(1e9, 100, 1e-4, 1e10), 6.3246e-3);
  // Points on t = 50 us + bytes / 20 GB/s fit back exactly.
  AllReduceCostModel m = fitAllReduceCost({1e6, 1e7, 1e8}, {50e-6 + 1e6 / 2e10, 50e-6 + 1e7 / 2e10,
                                                            50e-6 + 1e8 / 2e10});
  EXPECT_NEAR(m.overheadSeconds, 50e-6, 1e-12);
  EXPECT_NEAR(m.bytesPerSecond, 2e10, 1e3);
}

TEST(PlanCommunication, CollectivesOfEachStrategy) {
  // vocab 10, d 4, d_ff 8, 2 blocks: a block is 4 x 16 + 3 x 32 + 8 = 168 parameters, the
  // model 2 x 40 + 2 x 168 + 4 = 420, the units (embedding, blocks, norm, head)
  // 40, 168, 168, 4, 40. o = 100 us, w = 1000 B/s.
  ModelShape tiny;
  tiny.vocabSize = 10, tiny.dModel = 4, tiny.dFF = 8, tiny.numLayers = 2, tiny.numHeads = 1;
  EXPECT_EQ(tiny.unitParameters(), (std::vector<int64_t>{40, 168, 168, 4, 40}));
  AllReduceCostModel cost{1e-4, 1e3};
  CommunicationSetup c;
  c.model = tiny;
  c.buckets = 3;
  // DDP: 3 all-reduces of G = 1680 B: 3 o + 1680 / 1000 = 1.6803 s.
  CommunicationPlan ddp = planCommunication(c, cost);
  EXPECT_EQ(ddp.collectives, 3);
  EXPECT_DOUBLE_EQ(ddp.allReduceBytes, 1680);
  EXPECT_NEAR(ddp.seconds, 1.6803, 1e-12);
  // bf16 weight copies: the linears (2 x 160 + 40 = 360) in 2 bytes, the rest (60) in 4.
  c.workingCopies = true;
  EXPECT_NEAR(planCommunication(c, cost).seconds, 3e-4 + 0.960, 1e-12);
  c.workingCopies = false;
  // ZeRO-1: 3 reduce-scatters of the gradients, 1 all-gather of the f32 parameters:
  // 4 o + (1680 + 1680) / 2000 = 1.6804 s.
  c.sharding = Sharding::Zero1;
  CommunicationPlan zero1 = planCommunication(c, cost);
  EXPECT_EQ(zero1.collectives, 4);
  EXPECT_NEAR(zero1.seconds, 1.6804, 1e-12);
  // ZeRO-3, bf16 gathers: 5 forward gathers, 4 backward ones (the head stays), 5
  // reductions = 14 collectives; A = 840 B, gathered 2 x 840 - 80 = 1600 B, reduced 1680 B:
  // 14 o + 3280 / 2000 = 1.6414 s.
  c.sharding = Sharding::Zero3;
  c.gatherBytes = 2;
  CommunicationPlan zero3 = planCommunication(c, cost);
  EXPECT_EQ(zero3.collectives, 14);
  EXPECT_DOUBLE_EQ(zero3.allGatherBytes, 1600);
  EXPECT_NEAR(zero3.seconds, 1.6414, 1e-12);
  EXPECT_THROW(planCommunication(c, AllReduceCostModel{1e-4, 0}), std::invalid_argument);
  // All-gather and reduce-scatter fitted on their own (o_ag = 200 us, w_ag = 800 B/s;
  // o_rs = 300 us, w_rs = 400 B/s) instead of half an all-reduce: 9 x 2e-4 + 1600 / 800 +
  // 5 x 3e-4 + 1680 / 400 = 6.2033 s.
  CollectiveCosts own(cost);
  own.allGather = AllReduceCostModel{2e-4, 800};
  own.reduceScatter = AllReduceCostModel{3e-4, 400};
  CommunicationPlan fitted = planCommunication(c, own);
  EXPECT_EQ(fitted.collectives, 14);
  EXPECT_NEAR(fitted.seconds, 6.2033, 1e-12);
  // ZeRO-1 the same way: 3 reduce-scatters of 1680 B, 1 all-gather of 1680 B.
  c.sharding = Sharding::Zero1;
  EXPECT_NEAR(planCommunication(c, own).seconds, 3 * 3e-4 + 1680 / 400.0 + 2e-4 + 1680 / 800.0,
              1e-12);
}

TEST(PlanCommunication, EachCollectiveFittedFromItsOwnRows) {
  // A `tessel-bench allreduce --json` with all-reduce rows (one without a collective field,
  // as the files before all-gather was timed) and all-gather rows; no reduce-scatter.
  std::string path = ::testing::TempDir() + "/plan-collectives.json";
  std::ofstream(path) << R"({"results": [
      {"bytes": 1000000, "median_ms": 0.1},
      {"collective": "all-reduce", "bytes": 2000000, "median_ms": 0.15},
      {"collective": "all-gather", "bytes": 1000000, "median_ms": 0.06},
      {"collective": "all-gather", "bytes": 3000000, "median_ms": 0.1}]})";
  AllReduceCostModel ar = fitAllReduceJson(path);
  EXPECT_NEAR(ar.overheadSeconds, 5e-5, 1e-12); // 0.05 ms + bytes / 2e10
  EXPECT_NEAR(ar.bytesPerSecond, 2e10, 1e3);
  std::optional<AllReduceCostModel> ag = fitCollectiveJson(path, "all-gather");
  ASSERT_TRUE(ag.has_value());
  EXPECT_NEAR(ag->overheadSeconds, 4e-5, 1e-12); // 0.04 ms + bytes / 5e10
  EXPECT_NEAR(ag->bytesPerSecond, 5e10, 1e3);
  EXPECT_FALSE(fitCollectiveJson(path, "reduce-scatter").has_value());
  CollectiveCosts costs = CollectiveCosts::fromJson(path);
  EXPECT_TRUE(costs.allGather.has_value());
  EXPECT_FALSE(costs.reduceScatter.has_value());
}

} // namespace
