//===- bench/distributed/Strategy.h - A data-parallel strategy around a step -*- C++ -*-===//
//
// What a data-parallel strategy does around the forward, the backward and the optimizer
// step of the harness's Transformer LM, so that a training loop is written once:
//
//   auto strategy = tessel::dist::makeStrategy("zero1", lm, pg, options);
//   for (...) {
//     strategy->zeroGrad();
//     loss(lm->forward(x), y).backward();
//     strategy->synchronizeGradients();   // DDP: gradients averaged
//     strategy->step();                    // the update, on this rank's share
//   }
//   strategy->finish();                    // every parameter readable again
//
// A strategy owns whatever wraps the model (DataParallel, a sharded optimizer, sharded
// parameters) and the optimizer (AdamW with StrategyOptions::adamw). A new strategy is one
// file with a factory, plus its line in Strategies.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_STRATEGY_H
#define TESSEL_BENCH_DISTRIBUTED_STRATEGY_H

#include "bench/distributed/DataParallel.h"
#include "bench/distributed/ProcessGroup.h"
#include "bench/model/AdamW.h"
#include "bench/model/TransformerLM.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel::dist {

struct StrategyOptions {
  /// DataParallel's options, for the strategies built on it.
  DdpOptions ddp;
  /// The gradient bucket cap of the strategies that bucket gradients themselves, MB.
  double bucketMb = 25;
  /// bf16 DDP: the linears compute with bf16 copies that AdamW writes, and DDP
  /// all-reduces the copies' bf16 gradients (instead of autocast's casts and f32 ones).
  bool workingCopies = false;
  /// The step runs under bf16 autocast.
  bool bf16 = false;
  tessel::model::AdamWOptions adamw;
};

/// What a strategy reports after training, for the tables: this rank's memory by
/// category, and its gradient buckets.
struct StrategyReport {
  double paramBytes = 0, gradBytes = 0, stateBytes = 0;
  int buckets = 0, bucketsFromHooks = 0;
  int gatherGroups = 0; ///< ZeRO-1: all-gather groups a step issues
  int peakGatheredUnits = 0; ///< FSDP: the most units gathered at once in the last step
  double bucketMb = 0;
  std::optional<BucketCalibration> calibration;
};

class Strategy {
public:
  virtual ~Strategy() = default;
  /// Drops the gradients before a step's backward.
  virtual void zeroGrad() = 0;
  /// After the backward, before step(): whatever must finish for the gradients to be
  /// ready (DDP: the all-reduces). Returns false when it has nothing to do here.
  virtual bool synchronizeGradients() { return false; }
  /// The optimizer update.
  virtual void step() = 0;
  /// `mark(i)` is called on the compute stream around each collective the strategy waits
  /// for outside synchronizeGradients(): 0 and 1 around its wait for gradient reductions,
  /// then 2 and 3 around each wait for parameters (possibly several per step).
  virtual void onCommunication(std::function<void(int)> mark) { (void)mark; }
  /// Whether marks 0 and 1 bracket a wait worth counting (see onCommunication).
  virtual bool waitsForGradientReductions() const { return false; }
  /// The most waits for parameters (mark pairs 2, 3) one step may have.
  virtual int maxParameterWaitsPerStep() const { return 16; }
  /// Ends training: waits for collectives in flight and leaves every parameter of the
  /// model holding its full, current value (for checksums and checkpoints).
  virtual void finish() {}
  /// Collective, after finish(): writes a consolidated checkpoint (ConsolidatedCheckpoint.h)
  /// of the parameters and the optimizer state, which loads at any world size, under the
  /// sharded strategies, and into the single-process harness (`tessel-bench model
  /// --init-checkpoint`).
  virtual void saveCheckpoint(const std::string &path) = 0;
  virtual StrategyReport report() const = 0;
};

using StrategyFactory = std::function<std::unique_ptr<Strategy>(
    tessel::model::TransformerLM &lm, std::shared_ptr<ProcessGroup> pg,
    const StrategyOptions &options)>;

struct StrategyInfo {
  std::string name, summary;
  StrategyFactory make;
  /// Runs under bf16 autocast only (e.g. gradients reduced in bf16).
  bool bf16Only = false;
  /// The model is built on the meta device, and the strategy initialises it part by part
  /// (in host memory, under the model's seed: the values of a host build) and moves to the
  /// device what a rank keeps: a sharded model that need not fit one device, nor one host.
  bool buildModelOnMeta = false;
};

/// Every strategy, in the order tables list them (Strategies.cpp).
const std::vector<StrategyInfo> &strategies();
/// Throws std::invalid_argument naming the strategies when `name` is not one.
const StrategyInfo &findStrategy(const std::string &name);
std::unique_ptr<Strategy> makeStrategy(const std::string &name, tessel::model::TransformerLM &lm,
                                       std::shared_ptr<ProcessGroup> pg,
                                       const StrategyOptions &options);

/// Bytes of a tensor's elements (0 when undefined).
int64_t bytesOf(const torch::Tensor &t);
/// The model's parameters and their gradients (and those of the working copies, one per
/// parameter or undefined), as the strategies that keep whole parameters report them.
StrategyReport modelMemory(const tessel::model::TransformerLM &lm,
                           const std::vector<torch::Tensor> &workingCopies = {});

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_STRATEGY_H
