//===- test/distributed/ToyModel.h - The toy model and checks the worker's scenarios share -===//
#ifndef TESSEL_TEST_DISTRIBUTED_TOYMODEL_H
#define TESSEL_TEST_DISTRIBUTED_TOYMODEL_H

#include "bench/distributed/ProcessGroup.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <memory>
#include <string>

namespace tessel::disttest {

constexpr int64_t kGlobalBatch = 12; // divisible by 1, 2, 3, 4 and 6
constexpr int64_t kIn = 6, kHidden = 10, kOut = 3;

/// A small MLP with the awkward parameters DDP must handle: one used only by
/// rank 0 ("partial"), one nobody uses ("unused") and one frozen.
struct ToyImpl : torch::nn::Module {
  explicit ToyImpl(uint64_t seed) {
    torch::manual_seed(seed);
    // Registered first, so they come last in backward order (see DataParallel.h).
    partial = register_module("partial", torch::nn::Linear(kHidden, kOut));
    unused = register_module("unused", torch::nn::Linear(kOut, kOut));
    fc1 = register_module("fc1", torch::nn::Linear(kIn, kHidden));
    fc2 = register_module("fc2", torch::nn::Linear(kHidden, kHidden));
    head = register_module("head", torch::nn::Linear(kHidden, kOut));
    frozen = register_parameter("frozen", torch::randn({kOut}), /*requires_grad=*/false);
  }
  torch::Tensor forward(const torch::Tensor &x, bool usePartial) {
    torch::Tensor h = torch::tanh(fc2->forward(torch::tanh(fc1->forward(x))));
    torch::Tensor y = head->forward(h) + frozen;
    return usePartial ? y + 0.5 * partial->forward(h) : y;
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, head{nullptr}, partial{nullptr}, unused{nullptr};
  torch::Tensor frozen;
};
TORCH_MODULE(Toy);

struct Batch {
  torch::Tensor x, y;
};

/// The global batch of `step` (the same on every rank and world size).
inline Batch globalBatch(int step) {
  torch::manual_seed(1000 + step);
  return {torch::randn({kGlobalBatch, kIn}), torch::randn({kGlobalBatch, kOut})};
}

inline Batch shardOf(const Batch &b, int rank, int world) {
  int64_t n = kGlobalBatch / world;
  return {b.x.narrow(0, rank * n, n), b.y.narrow(0, rank * n, n)};
}

/// Whether rank 0 also uses "partial" (not in the checkpoint scenarios, whose
/// losses must not depend on the world size).
inline bool gRankZeroUsesPartial = true;

/// Rank r's loss on its shard.
inline torch::Tensor rankLoss(Toy &model, const Batch &global, int rank, int world) {
  Batch local = shardOf(global, rank, world);
  return torch::mse_loss(model->forward(local.x, gRankZeroUsesPartial && rank == 0), local.y);
}

/// The single-process equivalent of one data-parallel step: the mean of every
/// rank's loss (equal shards), so its gradient is the average DDP computes.
inline torch::Tensor referenceLoss(Toy &model, const Batch &global, int world) {
  torch::Tensor total = torch::zeros({});
  for (int r = 0; r < world; ++r)
    total = total + rankLoss(model, global, r, world);
  return total / world;
}

inline double maxDiff(Toy &a, Toy &b) {
  double worst = 0;
  auto pa = a->named_parameters();
  auto pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    double d = (pa[i].value() - pb[i]).abs().max().item<double>();
    if (std::getenv("TESSEL_TEST_VERBOSE"))
      std::printf("  %s: %g\n", pa[i].key().c_str(), d);
    worst = std::max(worst, d);
  }
  return worst;
}

inline int failures = 0;

inline std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return text;
}

inline void check(bool ok, const std::string &what, int rank) {
  std::printf("%s %s\n", ok ? "ok" : "FAIL", what.c_str());
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "rank %d: FAIL %s\n", rank, what.c_str());
  }
}

/// A failing scenario's exit: the error and how long after `start` it came, then exit 1 at
/// once (c10d's background threads must not hold the process up).
[[noreturn]] inline void exitWithError(std::chrono::steady_clock::time_point start,
                                       const std::exception &e) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "error after %.1f s: %s\n", seconds, e.what());
  std::fflush(stderr);
  std::_Exit(1);
}

inline torch::optim::AdamWOptions adamW() { return torch::optim::AdamWOptions(0.01).weight_decay(0.1); }

/// The fully sharded (ZeRO-3) scenarios (FsdpScenario.cpp): training against single-process
/// AdamW and the misuse errors; a checkpoint saved after three steps (and the parameters
/// two steps later), then loaded, perhaps at another world size, and compared.
int scenarioFsdp(const std::shared_ptr<tessel::dist::ProcessGroup> &pg);
/// Rank 0 runs a forward and rank 1 does not, or (rankDies) rank 1 leaves mid-step: the
/// ranks left must fail clearly within the timeout.
int scenarioFsdpBrokenStep(const std::shared_ptr<tessel::dist::ProcessGroup> &pg, bool rankDies);
/// `sharded`: one file per rank (same world size only) instead of the consolidated file.
int scenarioFsdpSave(const std::shared_ptr<tessel::dist::ProcessGroup> &pg, const std::string &ckpt,
                     const std::string &ref, bool sharded);
int scenarioFsdpLoad(const std::shared_ptr<tessel::dist::ProcessGroup> &pg, const std::string &ckpt,
                     const std::string &ref, bool sharded);

} // namespace tessel::disttest

#endif // TESSEL_TEST_DISTRIBUTED_TOYMODEL_H
