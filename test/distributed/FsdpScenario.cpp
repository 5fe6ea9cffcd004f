//===- test/distributed/FsdpScenario.cpp - tessel-dist-worker fsdp ---------===//
//
// FullySharded (ZeRO-3) on the toy model against single-process AdamW on the same global
// batches: fc1, fc2, head and partial are units; "unused" and "frozen" stay outside. As
// with PyTorch's FSDP, every rank must run the same graph (the units' gathers and
// reductions are collectives issued as the backward reaches them): partial, which the
// reference uses on rank 0 only, enters every rank's loss, times zero off rank 0. Then
// the errors: parameters that differ between ranks at wrap time, zeroGrad() between a
// backward and its step().
//
//===----------------------------------------------------------------------===//
#include "bench/distributed/FullySharded.h"
#include "bench/model/Autocast.h"
#include "test/distributed/ToyModel.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>

using namespace tessel::dist;

namespace tessel::disttest {
namespace {

/// The toy's forward with the units' hooks around each unit, as TransformerLM calls them.
torch::Tensor fshardedForward(Toy &model, FullySharded &fsdp, const torch::Tensor &x,
                              double partialWeight) {
  auto unit = [&](torch::nn::Module &m, const std::function<torch::Tensor()> &f) {
    fsdp.beforeForward(m);
    torch::Tensor y = f();
    fsdp.afterForward(m, {y});
    return y;
  };
  torch::Tensor h1 = unit(*model->fc1, [&] { return model->fc1->forward(x); });
  torch::Tensor h = torch::tanh(unit(*model->fc2, [&] { return model->fc2->forward(torch::tanh(h1)); }));
  torch::Tensor y = unit(*model->head, [&] { return model->head->forward(h); }) + model->frozen;
  torch::Tensor p = unit(*model->partial, [&] { return model->partial->forward(h); });
  return y + partialWeight * p;
}

constexpr int kStepsBeforeSave = 3, kStepsAfterSave = 2;

std::vector<torch::nn::Module *> unitsOf(Toy &model) {
  return {model->fc1.get(), model->fc2.get(), model->head.get(), model->partial.get()};
}

void trainFsdp(const std::shared_ptr<ProcessGroup> &pg, Toy &model, FullySharded &fsdp, int first,
               int steps) {
  for (int step = first; step < first + steps; ++step) {
    Batch local = shardOf(globalBatch(step), pg->rank(), pg->size());
    fsdp.zeroGrad();
    torch::mse_loss(fshardedForward(model, fsdp, local.x, 0.0), local.y).backward();
    fsdp.step();
  }
}

std::vector<torch::Tensor> trainedParams(Toy &model) {
  std::vector<torch::Tensor> params;
  for (torch::nn::Module *unit : unitsOf(model))
    for (const torch::Tensor &p : unit->parameters())
      params.push_back(p.detach().clone());
  return params;
}

/// Trains 4 steps against the reference; returns the most units gathered at once in the last.
int runFsdpCase(const std::shared_ptr<ProcessGroup> &pg, const std::string &name,
                FullyShardedOptions options, double tolerance) {
  Toy model(7), reference(7);
  FullySharded fsdp({model->fc1.get(), model->fc2.get(), model->head.get(), model->partial.get()},
                    pg, torchAdamW(adamW()), options);
  std::vector<torch::Tensor> trained;
  for (auto &p : reference->named_parameters())
    if (p.value().requires_grad())
      trained.push_back(p.value());
  torch::optim::AdamW referenceOptimizer(trained, adamW());
  int rank = pg->rank(), world = pg->size();
  for (int step = 0; step < 4; ++step) {
    Batch global = globalBatch(step);
    fsdp.zeroGrad();
    Batch local = shardOf(global, rank, world);
    torch::Tensor loss;
    {
      // bf16 parameters compute under autocast, as in the harness.
      tessel::model::AutocastGuard autocast(torch::kCPU, torch::kBFloat16,
                                            options.paramDtype == torch::kBFloat16);
      loss = torch::mse_loss(fshardedForward(model, fsdp, local.x, rank == 0 ? 0.5 : 0.0),
                             local.y);
    }
    loss.backward();
    fsdp.step();
    referenceOptimizer.zero_grad();
    {
      // The reference computes in bf16 too (autocast casts its f32 weights, as FSDP's
      // gathers round the master shards).
      tessel::model::AutocastGuard autocast(torch::kCPU, torch::kBFloat16,
                                            options.paramDtype == torch::kBFloat16);
      loss = referenceLoss(reference, global, world);
    }
    loss.backward();
    referenceOptimizer.step();
  }
  int peak = fsdp.peakGatheredUnits(); // before gatherAll() gathers every unit
  fsdp.gatherAll();
  double worst = maxDiff(model, reference);
  check(worst <= tolerance, name + ": max |param - single process| = " + number(worst) +
                                " (tolerance " + number(tolerance) + ")",
        rank);
  // Each rank keeps 1/world of every unit (padded), its master shard and AdamW's two moments.
  int64_t unitElements = 0;
  for (auto *m : {model->fc1.get(), model->fc2.get(), model->head.get(), model->partial.get()})
    for (const auto &p : m->parameters())
      unitElements += p.numel();
  int64_t held = fsdp.shardBytes() / 4;
  check(held >= unitElements / world && held <= unitElements / world + 4 * 16,
        name + ": a rank holds " + std::to_string(held) + " of " + std::to_string(unitElements) +
            " elements",
        rank);
  check(fsdp.stateBytes() >= 2 * fsdp.shardBytes(), name + ": AdamW's state covers the shard", rank);
  return peak;
}

/// Two micro-batches a step, the first's gradients accumulated without communication.
void runFsdpAccumulation(const std::shared_ptr<ProcessGroup> &pg) {
  Toy model(7), reference(7);
  FullySharded fsdp(unitsOf(model), pg, torchAdamW(adamW()));
  std::vector<torch::Tensor> trained;
  for (torch::nn::Module *unit : unitsOf(reference))
    for (const torch::Tensor &p : unit->parameters())
      trained.push_back(p);
  torch::optim::AdamW referenceOptimizer(trained, adamW());
  int rank = pg->rank(), world = pg->size();
  for (int step = 0; step < 3; ++step) {
    fsdp.zeroGrad();
    for (int micro = 0; micro < 2; ++micro) {
      fsdp.setRequiresGradientSync(micro == 1);
      Batch local = shardOf(globalBatch(2 * step + micro), rank, world);
      (0.5 * torch::mse_loss(fshardedForward(model, fsdp, local.x, 0.0), local.y)).backward();
    }
    fsdp.step();
    referenceOptimizer.zero_grad();
    for (int micro = 0; micro < 2; ++micro) {
      Batch global = globalBatch(2 * step + micro);
      torch::Tensor total = torch::zeros({});
      for (int r = 0; r < world; ++r) {
        Batch part = shardOf(global, r, world);
        total = total + torch::mse_loss(reference->forward(part.x, false), part.y);
      }
      (0.5 * total / world).backward();
    }
    referenceOptimizer.step();
  }
  fsdp.gatherAll();
  // partial enters FSDP's loss times zero, so AdamW decays it there and not in the
  // reference (no gradient): compare the other units.
  double worst = 0;
  std::vector<torch::Tensor> a = trainedParams(model), b = trainedParams(reference);
  for (size_t i = 0; i + 2 < a.size(); ++i)
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  check(worst <= 1e-5, "fsdp accumulating two micro-batches: max |param - single process| = " +
                           number(worst),
        rank);
}

void runErrorCases(const std::shared_ptr<ProcessGroup> &pg) {
  int rank = pg->rank();
  {
    Toy model(rank == 0 ? 7 : 8); // different weights on rank 0
    std::string message;
    try {
      FullySharded fsdp({model->fc1.get(), model->fc2.get()}, pg, torchAdamW(adamW()));
    } catch (const std::invalid_argument &e) {
      message = e.what();
    }
    check(message.find("differ between ranks at wrap time") != std::string::npos,
          "parameters that differ between ranks are refused: " + message, rank);
  }
  {
    Toy model(7);
    FullySharded fsdp({model->fc1.get(), model->fc2.get(), model->head.get(), model->partial.get()},
                      pg, torchAdamW(adamW()));
    Batch local = shardOf(globalBatch(0), rank, pg->size());
    fsdp.zeroGrad();
    torch::mse_loss(fshardedForward(model, fsdp, local.x, 0.0), local.y).backward();
    std::string message;
    try {
      fsdp.zeroGrad();
    } catch (const std::logic_error &e) {
      message = e.what();
    }
    check(message.find("without step()") != std::string::npos,
          "zeroGrad() between a backward and its step() is refused: " + message, rank);
    fsdp.step(); // the reductions in flight complete on every rank
  }
}

} // namespace

int scenarioFsdpSave(const std::shared_ptr<ProcessGroup> &pg, const std::string &ckpt,
                     const std::string &ref, bool sharded) {
  Toy model(7);
  FullySharded fsdp(unitsOf(model), pg, torchAdamW(adamW()));
  trainFsdp(pg, model, fsdp, 0, kStepsBeforeSave);
  if (sharded)
    fsdp.saveSharded(ckpt);
  else
    fsdp.saveConsolidated(ckpt);
  trainFsdp(pg, model, fsdp, kStepsBeforeSave, kStepsAfterSave);
  fsdp.gatherAll();
  if (pg->rank() == 0)
    torch::save(trainedParams(model), ref);
  pg->barrier();
  return failures ? 1 : 0;
}

int scenarioFsdpLoad(const std::shared_ptr<ProcessGroup> &pg, const std::string &ckpt,
                     const std::string &ref, bool sharded) {
  Toy model(7); // the initial weights: the checkpoint's are three steps ahead
  FullySharded fsdp(unitsOf(model), pg, torchAdamW(adamW()));
  if (sharded)
    fsdp.loadSharded(ckpt);
  else
    fsdp.loadConsolidated(ckpt);
  trainFsdp(pg, model, fsdp, kStepsBeforeSave, kStepsAfterSave);
  fsdp.gatherAll();
  std::vector<torch::Tensor> expected;
  torch::load(expected, ref);
  std::vector<torch::Tensor> params = trainedParams(model);
  double worst = 0;
  for (size_t i = 0; i < params.size(); ++i)
    worst = std::max(worst, (params[i] - expected[i]).abs().max().item<double>());
  check(worst <= 1e-5, std::string(sharded ? "sharded" : "consolidated") +
                           " fsdp checkpoint resumed at world size " + std::to_string(pg->size()) +
                           ": max |param - uninterrupted run| = " + number(worst),
        pg->rank());
  return failures ? 1 : 0;
}

int scenarioFsdpBrokenStep(const std::shared_ptr<ProcessGroup> &pg, bool rankDies) {
  // rankDies: rank 1 leaves in the middle of the step (after its forward, before its
  // backward). Otherwise rank 0 runs a forward and rank 1 goes straight to the step, so
  // their collectives no longer match. Either way the ranks left must fail with a clear
  // error within the timeout, not hang.
  Toy model(7);
  FullySharded fsdp(unitsOf(model), pg, torchAdamW(adamW()));
  auto start = std::chrono::steady_clock::now();
  try {
    if (rankDies || pg->rank() == 0) {
      Batch local = shardOf(globalBatch(0), pg->rank(), pg->size());
      torch::Tensor loss = torch::mse_loss(fshardedForward(model, fsdp, local.x, 0.0), local.y);
      if (rankDies && pg->rank() == 1) {
        std::printf("rank 1 leaves mid-step\n");
        std::fflush(stdout);
        std::_Exit(0); // as if it crashed: no goodbye to the others
      }
      loss.backward();
    }
    fsdp.step();
  } catch (const std::exception &e) {
    exitWithError(start, e);
  }
  std::printf("FAIL: mismatched FSDP collectives completed\n");
  return 1;
}

int scenarioFsdp(const std::shared_ptr<ProcessGroup> &pg) {
  FullyShardedOptions f32;
  runFsdpCase(pg, "fsdp f32", f32, 1e-5);
  FullyShardedOptions noPrefetch = f32;
  noPrefetch.prefetch = 0;
  runFsdpCase(pg, "fsdp f32 without prefetch", noPrefetch, 1e-5);
  FullyShardedOptions deep = f32;
  deep.prefetch = 3;
  deep.maxGatheredUnits = 4;
  int peak = runFsdpCase(pg, "fsdp f32 prefetching 3 units", deep, 1e-5);
  check(peak == 4, "prefetching 3 units ahead gathers all 4 at once: " + std::to_string(peak), pg->rank());
  FullyShardedOptions limited = deep;
  limited.maxGatheredUnits = 2;
  peak = runFsdpCase(pg, "fsdp f32 prefetching 3 units, at most 2 gathered", limited, 1e-5);
  check(peak == 2, "at most 2 units gathered at once: " + std::to_string(peak), pg->rank());
  FullyShardedOptions bf16Reduce = f32;
  bf16Reduce.reduceDtype = torch::kBFloat16;
  runFsdpCase(pg, "fsdp gradients reduced in bf16", bf16Reduce, 2e-3);
  FullyShardedOptions bf16 = bf16Reduce;
  bf16.paramDtype = torch::kBFloat16;
  runFsdpCase(pg, "fsdp bf16 parameters and gradients", bf16, 5e-3);
  runFsdpAccumulation(pg);
  runErrorCases(pg);
  return failures ? 1 : 0;
}

} // namespace tessel::disttest
