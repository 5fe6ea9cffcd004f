//===- test/distributed/Worker.cpp - One rank of the distributed parity tests ---===//
//
// Started N times by DistributedTest.cpp through the tessel-run launcher (Gloo,
// CPU). Each scenario trains a toy model data-parallel and compares the result
// with single-process training on the same global batch, which every rank also
// computes locally. Prints "FAIL ..." lines and exits 1 on a mismatch.
//
//   tessel-dist-worker ddp                 every DDP variant
//   tessel-dist-worker shard               both sharding modes
//   tessel-dist-worker zero1-buckets       ZeRO-1 reducing small buckets during the backward
//   tessel-dist-worker save CKPT REF       ZeRO-1 training, checkpoint, more steps
//   tessel-dist-worker load CKPT REF       resume from CKPT, compare with REF
//   tessel-dist-worker fsdp                fully sharded (ZeRO-3) training (FsdpScenario.cpp)
//   tessel-dist-worker fsdp-save CKPT REF  the same, checkpoint, more steps
//   tessel-dist-worker fsdp-load CKPT REF  resume from CKPT, compare with REF
//   tessel-dist-worker fsdp-save-sharded DIR REF, fsdp-load-sharded DIR REF  one file per rank
//   tessel-dist-worker fsdp-one-rank-forward  FSDP forward on rank 0 only: both fail clearly
//   tessel-dist-worker fsdp-rank-dies      rank 1 leaves mid-step; rank 0 must fail clearly
//   tessel-dist-worker peer-exits          rank 1 leaves; the others must fail clearly
//
//===----------------------------------------------------------------------===//

#include "bench/distributed/DataParallel.h"
#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/ShardedOptimizer.h"
#include "bench/model/AdamW.h"
#include "bench/model/Autocast.h"
#include "bench/model/TransformerLM.h"
#include "test/distributed/ToyModel.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace tessel::dist;
using namespace tessel::disttest;

namespace {


struct DdpCase {
  std::string name;
  DdpOptions options;
  double tolerance = 1e-5;
  bool accumulate = false; // two micro-batches, the first under noSync()
};

void runDdpCase(const std::shared_ptr<ProcessGroup> &pg, const DdpCase &c) {
  int rank = pg->rank(), world = pg->size();
  const int steps = 4;
  Toy model(/*seed=*/7 + rank); // different on every rank: the broadcast must fix it
  Toy reference(/*seed=*/7);    // rank 0's initial weights
  DataParallel ddp(model.ptr(), pg, c.options);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  torch::optim::SGD refOptimizer(reference->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  bool unusedGradUndefined = true;
  for (int step = 0; step < steps; ++step) {
    ddp.zeroGrad();
    refOptimizer.zero_grad();
    if (c.accumulate) {
      {
        auto guard = ddp.noSync();
        rankLoss(model, globalBatch(100 + step), rank, world).backward();
        ddp.finishGradientSynchronization(); // a no-op inside noSync()
      }
      referenceLoss(reference, globalBatch(100 + step), world).backward();
    }
    rankLoss(model, globalBatch(step), rank, world).backward();
    ddp.finishGradientSynchronization();
    referenceLoss(reference, globalBatch(step), world).backward();
    if (model->unused->weight.grad().defined())
      unusedGradUndefined = false;
    optimizer.step();
    refOptimizer.step();
  }
  double diff = maxDiff(model, reference);
  check(diff <= c.tolerance,
        "ddp " + c.name + ": max |param - reference| = " + number(diff), rank);
  if (c.options.mode == DdpMode::Overlapped || c.options.mode == DdpMode::Bucketed)
    check(ddp.bucketsLaunchedDuringBackward() > 0,
          "ddp " + c.name + ": " + std::to_string(ddp.bucketsLaunchedDuringBackward()) + " of " +
              std::to_string(ddp.buckets().size()) + " buckets launched from the hooks",
          rank);
  if (c.options.findUnusedParameters)
    check(unusedGradUndefined, "ddp " + c.name + ": a parameter no rank used keeps grad undefined",
          rank);
  if (c.options.mode == DdpMode::Bucketed && c.options.autoBucketSize)
    std::printf("ddp %s: calibrated o = %.4f ms, w = %.3f GB/s, bucket = %lld bytes\n",
                c.name.c_str(), ddp.calibration().overheadMs, ddp.calibration().bandwidthGBs,
                static_cast<long long>(ddp.bucketBytes()));
}

/// bf16 DDP with working copies: the Transformer's linears compute with bf16 copies
/// that AdamW writes, and DDP all-reduces the copies' bf16 gradients (with the f32
/// gradients of the embedding and norms). Every step, each synchronised gradient must
/// be the mean of every rank's gradient, computed here in f32 on a reference holding
/// the same weights, to bf16's rounding of the sum (a missing reduction is off by
/// the gradients themselves). Each rank starts from different weights: the broadcast
/// must refresh the copies from rank 0's masters, and the ranks stay identical.
void runDdpWorkingCopies(const std::shared_ptr<ProcessGroup> &pg) {
  using namespace tessel::model;
  int rank = pg->rank(), world = pg->size();
  ModelConfig config = ModelConfig::preset("small");
  config.vocabSize = 64, config.contextLength = 8, config.dModel = 32, config.dFF = 64;
  config.numLayers = 2, config.numHeads = 2;
  torch::manual_seed(3 + rank);
  TransformerLM model(config, torch::kCPU), reference(config, torch::kCPU);
  std::vector<torch::Tensor> copies = model->makeWorkingCopies(torch::kBFloat16);
  std::vector<torch::Tensor> refCopies = reference->makeWorkingCopies(torch::kBFloat16);
  DdpOptions options;
  options.bucketSizeMb = 4096.0 / (1 << 20); // several buckets, bf16 and f32 apart
  options.firstBucketMb = 1024.0 / (1 << 20);
  // Misuse is refused before any collective: a list that does not match the
  // parameters, and a "copy" that is not in a lower precision.
  auto refused = [&](std::vector<torch::Tensor> bad) {
    try {
      DataParallel wrong(model.ptr(), pg, options, std::move(bad));
    } catch (const std::invalid_argument &) {
      return true;
    }
    return false;
  };
  std::vector<torch::Tensor> f32Copy = copies;
  f32Copy[0] = model->parameters()[0].detach().clone().requires_grad_(true);
  check(refused({copies.begin(), copies.end() - 1}) && refused(f32Copy),
        "ddp working copies: a list of the wrong length and an f32 copy are refused", rank);
  DataParallel ddp(model.ptr(), pg, options, copies);
  AdamWOptions adamw;
  adamw.lr = 0.01;
  adamw.weightDecay = 0.1;
  adamw.impl = AdamWImpl::Foreach;
  AdamW optimizer(model->parameters(), adamw);
  optimizer.setWorkingCopies(copies);

  auto loss = [&](TransformerLM &lm, int step, int r) {
    torch::manual_seed(2000 + step);
    torch::Tensor tokens = torch::randint(config.vocabSize, {kGlobalBatch, config.contextLength + 1});
    int64_t n = kGlobalBatch / world;
    torch::Tensor local = tokens.narrow(0, r * n, n);
    AutocastGuard autocast(torch::kCPU, torch::kBFloat16);
    return crossEntropy(lm->forward(local.narrow(1, 0, config.contextLength)),
                        local.narrow(1, 1, config.contextLength), KernelImpl::Eager);
  };
  std::vector<torch::Tensor> params = model->parameters(), refParams = reference->parameters();
  auto holder = [](std::vector<torch::Tensor> &copies, std::vector<torch::Tensor> &params,
                   size_t i) -> torch::Tensor & { return copies[i].defined() ? copies[i] : params[i]; };
  double worst = 0; // |synchronised - mean| over its bound, the largest
  for (int step = 0; step < 4; ++step) {
    std::vector<torch::Tensor> mean(params.size()), bound(params.size());
    {
      torch::NoGradGuard noGrad;
      for (size_t i = 0; i < params.size(); ++i)
        holder(refCopies, refParams, i).copy_(holder(copies, params, i));
    }
    for (int r = 0; r < world; ++r) {
      reference->zero_grad(/*set_to_none=*/true);
      for (torch::Tensor &c : refCopies)
        if (c.defined())
          c.mutable_grad() = torch::Tensor();
      loss(reference, step, r).backward();
      for (size_t i = 0; i < params.size(); ++i) {
        torch::Tensor grad = holder(refCopies, refParams, i).grad().to(torch::kFloat32) / world;
        mean[i] = mean[i].defined() ? mean[i] + grad : grad;
        bound[i] = bound[i].defined() ? bound[i] + grad.abs() : grad.abs();
      }
    }
    ddp.zeroGrad();
    loss(model, step, rank).backward();
    ddp.finishGradientSynchronization();
    const std::vector<torch::Tensor> &synchronised = ddp.parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      // bf16 keeps 8 significant bits: a few roundings of the sum and the division.
      torch::Tensor allowed = bound[i] * std::ldexp(1.0, -6) + 1e-30;
      torch::Tensor error = (synchronised[i].grad().to(torch::kFloat32) - mean[i]).abs();
      worst = std::max(worst, (error / allowed).max().item<double>());
    }
    optimizer.step();
  }
  // The ranks agree: every parameter equals rank 0's.
  double spread = 0, copyDiff = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor rankZero = params[i].clone();
    pg->wait(pg->broadcast(rankZero, 0), "broadcast of rank 0's parameters");
    spread = std::max(spread, (params[i] - rankZero).abs().max().item<double>());
    if (copies[i].defined())
      copyDiff = std::max(copyDiff, (copies[i].to(torch::kFloat32) -
                                     params[i].to(torch::kBFloat16).to(torch::kFloat32))
                                        .abs().max().item<double>());
  }
  int64_t bf16Synchronised = 0;
  for (const torch::Tensor &t : ddp.parameters())
    bf16Synchronised += t.scalar_type() == torch::kBFloat16;
  check(worst <= 1, "ddp working copies: gradients the ranks' mean (error / bf16 bound <= " +
                        number(worst) + ")",
        rank);
  check(spread == 0 && copyDiff == 0 && bf16Synchronised == 4 * config.numLayers + 1,
        "ddp working copies: " + std::to_string(bf16Synchronised) +
            " bf16 copies synchronised, ranks identical (max diff " + number(spread) +
            "), each copy its master rounded (max diff " + number(copyDiff) + ")",
        rank);
}

int scenarioDdp(const std::shared_ptr<ProcessGroup> &pg) {
  std::vector<DdpCase> cases;
  for (DdpMode mode : {DdpMode::Naive, DdpMode::Flat, DdpMode::Overlapped, DdpMode::Bucketed}) {
    DdpCase c;
    c.name = toString(mode);
    c.options.mode = mode;
    c.options.bucketSizeMb = 400.0 / (1 << 20); // 400 bytes: several buckets
    c.options.firstBucketMb = 100.0 / (1 << 20);
    cases.push_back(c);
  }
  DdpCase copyGrads = cases.back();
  copyGrads.name = "bucketed-no-grad-view";
  copyGrads.options.gradientAsBucketView = false;
  cases.push_back(copyGrads);
  DdpCase autoSize = cases[3];
  autoSize.name = "bucketed-auto";
  autoSize.options.autoBucketSize = true;
  cases.push_back(autoSize);
  DdpCase unused = cases[3];
  unused.name = "bucketed-find-unused";
  unused.options.findUnusedParameters = true;
  cases.push_back(unused);
  DdpCase accumulate = cases[3];
  accumulate.name = "bucketed-no-sync";
  accumulate.accumulate = true;
  cases.push_back(accumulate);
  DdpCase overlapAccumulate = cases[2];
  overlapAccumulate.name = "overlapped-no-sync";
  overlapAccumulate.accumulate = true;
  cases.push_back(overlapAccumulate);
  DdpCase taper = cases[3];
  taper.name = "bucketed-tapered-last-buckets";
  taper.options.lastBucketMb = 100.0 / (1 << 20);
  cases.push_back(taper);
  DdpCase bf16 = cases[3];
  bf16.name = "bucketed-bf16";
  bf16.options.hook = CommHook::Bf16;
  bf16.tolerance = 2e-2;
  cases.push_back(bf16);
  for (const DdpCase &c : cases)
    runDdpCase(pg, c);
  runDdpWorkingCopies(pg);
  return failures ? 1 : 0;
}

/// With ZeRO-1's all-gather overlapped with the forward, what a forward does
/// first: wait for fc1's parameters alone (the other groups stay in flight),
/// then for the rest. Checks the bookkeeping on the way.
void waitBeforeForward(const std::shared_ptr<ProcessGroup> &pg, Toy &model, ShardedOptimizer &shard,
                       int step) {
  size_t groups = shard.numStepGroups();
  size_t before = shard.stepGroupsInFlight();
  shard.waitForParameters(model->fc1->parameters());
  size_t afterFc1 = shard.stepGroupsInFlight();
  shard.waitForParameters(model->parameters());
  size_t afterAll = shard.stepGroupsInFlight();
  // Before the first step nothing is in flight; after one, every group's all-gather
  // is. fc1's two parameters are in at most two groups.
  bool ok = step == 0 ? before == 0
                      : before == groups && afterFc1 < before && afterFc1 + 2 >= before &&
                            afterAll == 0;
  check(ok, "zero1 all-gather overlapped with the forward, step " + std::to_string(step) +
                ": step groups in flight " + std::to_string(before) + " -> " +
                std::to_string(afterFc1) + " (fc1 waited for) -> " + std::to_string(afterAll) +
                " of " + std::to_string(groups),
        pg->rank());
}

/// Trains `steps` steps from step `first` with ZeRO-1 or broadcast sharding.
void trainSharded(const std::shared_ptr<ProcessGroup> &pg, Toy &model, ShardedOptimizer &shard,
                  DataParallel *ddp, int first, int steps) {
  for (int step = first; step < first + steps; ++step) {
    if (ddp)
      ddp->zeroGrad();
    shard.zeroGrad();
    if (shard.overlapsAllGatherWithForward())
      waitBeforeForward(pg, model, shard, step);
    rankLoss(model, globalBatch(step), pg->rank(), pg->size()).backward();
    if (ddp)
      ddp->finishGradientSynchronization();
    shard.step();
  }
}

/// Trains with `mode` sharding and compares with single-process AdamW; checks
/// that each rank holds optimizer state for its own shard only.
void runShardCase(const std::shared_ptr<ProcessGroup> &pg, const std::string &name, ShardMode mode,
                  double bucketMb = 25, int stepGroups = 8, size_t minStepGroups = 1,
                  bool overlapForward = false) {
  int rank = pg->rank(), world = pg->size();
  const int steps = 4;
  // Zero1 runs without DataParallel, which is what broadcasts frozen
  // parameters and buffers: start every rank from the same seed there.
  Toy model(mode == ShardMode::Zero1 ? 7 : 7 + rank), reference(7);
  std::unique_ptr<DataParallel> ddp;
  if (mode == ShardMode::Broadcast) {
    DdpOptions options;
    options.bucketSizeMb = 400.0 / (1 << 20);
    ddp = std::make_unique<DataParallel>(model.ptr(), pg, options);
  }
  ShardedOptimizer shard(model->parameters(), pg, torchAdamW(adamW()), mode, bucketMb, stepGroups);
  shard.overlapAllGatherWithForward(overlapForward);
  torch::optim::AdamW refOptimizer(reference->parameters(), adamW());
  trainSharded(pg, model, shard, ddp.get(), 0, steps);
  shard.waitForAllParameters();
  for (int step = 0; step < steps; ++step) {
    refOptimizer.zero_grad();
    referenceLoss(reference, globalBatch(step), world).backward();
    // DataParallel gives parameters nobody used a zero gradient (see DataParallel.h);
    // Zero1 leaves them alone, as plain AdamW does (no weight decay, no moments).
    for (torch::Tensor &p : reference->parameters())
      if (mode == ShardMode::Broadcast && p.requires_grad() && !p.grad().defined())
        p.mutable_grad() = torch::zeros_like(p);
    refOptimizer.step();
  }
  double diff = maxDiff(model, reference);
  check(diff <= 1e-5, "shard " + name + ": max |param - reference| = " + number(diff), rank);
  // Own state only: AdamW keeps two moments and a step counter per local shard
  // whose parameter had a gradient (in Zero1, `unused` never had one and has no state).
  int64_t expected = 0, counters = 0;
  const std::vector<torch::Tensor> &params = shard.parameters();
  for (const LocalShard &local : shard.localShards()) {
    const torch::Tensor &p = params[local.param];
    bool stateless = mode == ShardMode::Zero1 &&
                     (p.is_same(model->unused->weight) || p.is_same(model->unused->bias));
    if (!stateless) {
      expected += 2 * local.numel * static_cast<int64_t>(p.element_size());
      ++counters;
    }
  }
  int64_t held = shard.localStateBytes() - 8 * counters; // minus the step counters
  check(held == expected, "shard " + name + ": state bytes " + std::to_string(held) +
                              " == 2 x own shard bytes " + std::to_string(expected), rank);
  // Every parameter element is in exactly one rank's shard.
  torch::Tensor counts = torch::zeros({static_cast<int64_t>(params.size())}, torch::kInt64);
  for (const LocalShard &local : shard.localShards())
    counts[local.param] += local.numel;
  pg->wait(pg->allReduce(counts), "shard size all-reduce");
  bool covered = true;
  for (size_t i = 0; i < params.size(); ++i)
    covered = covered && counts[static_cast<int64_t>(i)].item<int64_t>() == params[i].numel();
  check(covered, "shard " + name + ": the ranks' shards cover every parameter once", rank);
  // Step groups: consecutive, at most stepGroups, covering the local shards in order.
  size_t groups = shard.numStepGroups();
  bool groupsOk = groups >= minStepGroups &&
                  (mode == ShardMode::Broadcast
                       ? groups == 1
                       : groups <= std::min(shard.numBuckets(), static_cast<size_t>(stepGroups))) &&
                  shard.stepGroupShards(0).first == 0 &&
                  shard.stepGroupShards(groups - 1).second == shard.localShards().size();
  for (size_t g = 0; g + 1 < groups; ++g)
    groupsOk = groupsOk && shard.stepGroupShards(g).second == shard.stepGroupShards(g + 1).first;
  check(groupsOk, "shard " + name + ": " + std::to_string(groups) + " step groups (at least " +
                      std::to_string(minStepGroups) + ") of " +
                      std::to_string(shard.numBuckets()) + " buckets",
        rank);
  if (mode == ShardMode::Zero1 && shard.numBuckets() > 2)
    check(shard.bucketsLaunchedDuringBackward() > 0,
          "shard " + name + ": " + std::to_string(shard.bucketsLaunchedDuringBackward()) + " of " +
              std::to_string(shard.numBuckets()) + " buckets reduced during the backward",
          rank);
}

/// ZeRO-1 reduce-scattering bf16 gradients (the all-gather overlapped with the
/// forward, the harness's AdamW taking the bf16 gradients of f32 parameters)
/// trains as single-process AdamW whose gradient is the mean of every rank's
/// gradient rounded to bf16; what the sum over ranks rounds on top stays far
/// below the 2 x lr a wrong or missing reduction moves an element by.
void runZero1Bf16Gradients(const std::shared_ptr<ProcessGroup> &pg) {
  int rank = pg->rank(), world = pg->size();
  const int steps = 4;
  Toy model(7), reference(7);
  tessel::model::AdamWOptions options;
  options.lr = 0.01;
  options.weightDecay = 0.1;
  options.impl = tessel::model::AdamWImpl::Foreach;
  ShardedOptimizer shard(model->parameters(), pg, tesselAdamW(options), ShardMode::Zero1,
                         64.0 / (1 << 20), 3);
  shard.reduceGradientsIn(torch::kBFloat16);
  shard.overlapAllGatherWithForward(true);
  trainSharded(pg, model, shard, nullptr, 0, steps);
  shard.waitForAllParameters();

  std::vector<torch::Tensor> params = reference->parameters();
  tessel::model::AdamW refOptimizer(params, options);
  for (int step = 0; step < steps; ++step) {
    std::vector<torch::Tensor> sum(params.size());
    for (int r = 0; r < world; ++r) {
      refOptimizer.zeroGrad();
      rankLoss(reference, globalBatch(step), r, world).backward();
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i].grad().defined()) {
          torch::Tensor rounded = params[i].grad().to(torch::kBFloat16).to(torch::kFloat32);
          sum[i] = sum[i].defined() ? sum[i] + rounded : rounded;
        }
    }
    for (size_t i = 0; i < params.size(); ++i)
      params[i].mutable_grad() = sum[i].defined() ? sum[i] / world : torch::Tensor();
    refOptimizer.step();
  }
  double diff = maxDiff(model, reference);
  check(diff <= 1e-3, "zero1 bf16 gradients: max |param - reference| = " + number(diff), rank);
  bool noGrads = true;
  for (const torch::Tensor &p : model->parameters())
    noGrads = noGrads && !p.grad().defined();
  check(shard.gradientReduceDtype() == torch::kBFloat16 && noGrads,
        "zero1 bf16 gradients: the buffer is bf16 and .grad() is left undefined", rank);
}

int scenarioShard(const std::shared_ptr<ProcessGroup> &pg) {
  runShardCase(pg, "broadcast", ShardMode::Broadcast);
  runShardCase(pg, "zero1", ShardMode::Zero1); // one bucket: everything reduced in step()
  return failures ? 1 : 0;
}

/// ZeRO-1 with small gradient buckets, reduced during the backward. "partial"
/// (a gradient on rank 0 only) and "unused" (none anywhere) come last in
/// backward order, so their buckets go out from step() with zeros / flags 0
/// where there was no gradient; the buckets before them go out from the hooks.
int scenarioZero1Buckets(const std::shared_ptr<ProcessGroup> &pg) {
  runShardCase(pg, "zero1-400B-buckets", ShardMode::Zero1, 400.0 / (1 << 20));
  runShardCase(pg, "zero1-64B-buckets", ShardMode::Zero1, 64.0 / (1 << 20));
  // Several step groups: each group's all-gather in flight while the next steps
  // (with 64 B buckets every parameter has a bucket of its own).
  runShardCase(pg, "zero1-64B-buckets-3-groups", ShardMode::Zero1, 64.0 / (1 << 20), 3, 2);
  runShardCase(pg, "zero1-64B-buckets-8-groups", ShardMode::Zero1, 64.0 / (1 << 20), 8, 4);
  runShardCase(pg, "zero1-64B-buckets-1-group", ShardMode::Zero1, 64.0 / (1 << 20), 1);
  // The all-gathers left in flight by step(), waited for part by part before the forward.
  runShardCase(pg, "zero1-64B-buckets-8-groups-overlap-forward", ShardMode::Zero1,
               64.0 / (1 << 20), 8, 4, /*overlapForward=*/true);
  runZero1Bf16Gradients(pg);
  Toy model(7);
  ShardedOptimizer shard(model->parameters(), pg, torchAdamW(adamW()), ShardMode::Zero1);
  bool threw = false;
  try {
    shard.owners();
  } catch (const std::logic_error &) {
    threw = true;
  }
  check(threw, "zero1: owners() throws (no per-parameter owner)", pg->rank());
  // Misuse gets a clear error and changes nothing.
  auto throws = [](const std::function<void()> &f) {
    try {
      f();
    } catch (const std::exception &) {
      return true;
    }
    return false;
  };
  check(throws([&] { shard.reduceGradientsIn(torch::kInt32); }) &&
            shard.gradientReduceDtype() == torch::kFloat32,
        "zero1: gradients reduced in an integer dtype are refused", pg->rank());
  rankLoss(model, globalBatch(0), pg->rank(), pg->size()).backward();
  check(throws([&] { shard.reduceGradientsIn(torch::kBFloat16); }) &&
            shard.gradientReduceDtype() == torch::kFloat32,
        "zero1: reduceGradientsIn() between a backward and step() is refused", pg->rank());
  shard.step();
  Toy other(7);
  ShardedOptimizer broadcast(other->parameters(), pg, torchAdamW(adamW()), ShardMode::Broadcast);
  check(throws([&] { broadcast.overlapAllGatherWithForward(true); }) &&
            throws([&] { broadcast.reduceGradientsIn(torch::kBFloat16); }),
        "broadcast mode refuses the overlapped all-gather and bf16 gradients", pg->rank());
  return failures ? 1 : 0;
}

constexpr int kStepsBeforeSave = 3, kStepsAfterSave = 3;

void saveParams(Toy &model, const std::string &path) {
  std::vector<torch::Tensor> params;
  for (const torch::Tensor &p : model->parameters())
    params.push_back(p.detach().clone());
  torch::save(params, path);
}

int scenarioSave(const std::shared_ptr<ProcessGroup> &pg, const std::string &ckpt,
                 const std::string &ref) {
  // Small buckets in 3 step groups here, tinier ones in up to 8 groups when
  // loading: the file does not depend on the layout.
  Toy model(7);
  ShardedOptimizer shard(model->parameters(), pg, torchAdamW(adamW()), ShardMode::Zero1,
                         400.0 / (1 << 20), 3);
  check(shard.numStepGroups() >= 2, "save: " + std::to_string(shard.numStepGroups()) +
                                        " step groups", pg->rank());
  trainSharded(pg, model, shard, nullptr, 0, kStepsBeforeSave);
  shard.saveConsolidated(ckpt);
  trainSharded(pg, model, shard, nullptr, kStepsBeforeSave, kStepsAfterSave);
  if (pg->rank() == 0)
    saveParams(model, ref);
  pg->barrier();
  return failures ? 1 : 0;
}

int scenarioLoad(const std::shared_ptr<ProcessGroup> &pg, const std::string &ckpt,
                 const std::string &ref) {
  // The trainable weights come from the checkpoint (these are the initial ones,
  // three steps behind); the frozen parameter is not the optimizer's to save.
  Toy model(7);
  ShardedOptimizer shard(model->parameters(), pg, torchAdamW(adamW()), ShardMode::Zero1,
                         64.0 / (1 << 20));
  check(shard.numStepGroups() >= 2, "load: " + std::to_string(shard.numStepGroups()) +
                                        " step groups", pg->rank());
  shard.loadConsolidated(ckpt);
  trainSharded(pg, model, shard, nullptr, kStepsBeforeSave, kStepsAfterSave);
  std::vector<torch::Tensor> expected;
  torch::load(expected, ref);
  auto params = model->parameters();
  double worst = 0;
  for (size_t i = 0; i < params.size(); ++i)
    worst = std::max(worst, (params[i] - expected[i]).abs().max().item<double>());
  check(worst <= 1e-5, "checkpoint resumed at world size " + std::to_string(pg->size()) +
                           ": max |param - uninterrupted run| = " + number(worst),
        pg->rank());
  return failures ? 1 : 0;
}

int scenarioPeerExits(const std::shared_ptr<ProcessGroup> &pg) {
  torch::Tensor t = torch::ones({16});
  pg->wait(pg->allReduce(t), "warm-up all-reduce");
  if (pg->rank() == 1) {
    std::printf("rank 1 leaves without a word\n");
    std::fflush(stdout);
    std::_Exit(0); // as if it crashed: no goodbye to the others
  }
  auto start = std::chrono::steady_clock::now();
  try {
    for (int i = 0; i < 1000; ++i)
      pg->wait(pg->allReduce(t), "all-reduce");
  } catch (const DistributedError &e) {
    exitWithError(start, e);
  }
  std::printf("FAIL: all-reduces with a missing rank succeeded\n");
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  const char *usage = "usage: %s ddp|shard|zero1-buckets|fsdp|save CKPT REF|load CKPT REF|\n"
                      "       fsdp-save[-sharded] CKPT REF|fsdp-load[-sharded] CKPT REF|fsdp-one-rank-forward|\n"
                      "       fsdp-rank-dies|peer-exits\n"
                      "One rank of the distributed tests (start it with tessel-run -n N).\n";
  if (argc < 2) {
    std::fprintf(stderr, usage, argv[0]);
    return 2;
  }
  std::string scenario = argv[1];
  if (scenario == "--help") {
    std::printf(usage, argv[0]);
    return 0;
  }
  if (scenario == "--version") {
    std::printf("tessel-dist-worker 0.1.0\n");
    return 0;
  }
  torch::set_num_threads(1); // several ranks share the CI machine's two cores
  ProcessGroupOptions options;
  options.backend = BackendKind::Gloo;
  bool failing = scenario == "peer-exits" || scenario == "fsdp-one-rank-forward" ||
                 scenario == "fsdp-rank-dies";
  options.timeout = std::chrono::seconds(failing ? 10 : 60);
  try {
    auto pg = ProcessGroup::fromEnvironment(options);
    if (scenario == "ddp")
      return scenarioDdp(pg);
    if (scenario == "shard")
      return scenarioShard(pg);
    if (scenario == "zero1-buckets")
      return scenarioZero1Buckets(pg);
    if (scenario == "fsdp")
      return scenarioFsdp(pg);
    if (scenario == "save" || scenario == "load")
      gRankZeroUsesPartial = false;
    if (scenario == "save" && argc == 4)
      return scenarioSave(pg, argv[2], argv[3]);
    if (scenario == "load" && argc == 4)
      return scenarioLoad(pg, argv[2], argv[3]);
    bool sharded = scenario == "fsdp-save-sharded" || scenario == "fsdp-load-sharded";
    if ((scenario == "fsdp-save" || scenario == "fsdp-save-sharded") && argc == 4)
      return scenarioFsdpSave(pg, argv[2], argv[3], sharded);
    if ((scenario == "fsdp-load" || scenario == "fsdp-load-sharded") && argc == 4)
      return scenarioFsdpLoad(pg, argv[2], argv[3], sharded);
    if (scenario == "peer-exits")
      return scenarioPeerExits(pg);
    if (scenario == "fsdp-one-rank-forward" || scenario == "fsdp-rank-dies")
      return scenarioFsdpBrokenStep(pg, scenario == "fsdp-rank-dies");
    std::fprintf(stderr, "unknown scenario '%s'\n", scenario.c_str());
    return 2;
  } catch (const c10::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
