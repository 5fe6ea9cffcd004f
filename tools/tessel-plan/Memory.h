//===- tools/tessel-plan/Memory.h - Memory per device of a training step -*- C++ -*-===//
//
// Bytes per device of one training step: master weights, gradients, optimizer state,
// bf16 weight copies and activations, for one device or sharded over N (DDP, ZeRO-1,
// ZeRO-2, ZeRO-3/FSDP), and the peak of a train step.
//
// Activations are not a rule of thumb: savedPerBlock() lists the tensors autograd keeps
// for the backward of one block of the harness's model, op by op, for each way it can
// run (naive, SDPA or Tessel's FlashAttention; eager or Tessel's fused kernels; fp32 or
// bf16 autocast). A harness test checks the lists against the bytes the model really
// keeps alive after its forward (a counting allocator, on the CPU).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PLAN_MEMORY_H
#define TESSEL_PLAN_MEMORY_H

#include "tools/tessel-plan/ModelShape.h"

#include <string>
#include <vector>

namespace tessel::plan {

enum class Attention { Naive, Sdpa, Flash }; ///< Flash: Tessel's FlashAttention op
enum class Kernels { Eager, Tessel };
enum class Sharding { Single, Ddp, Zero1, Zero2, Zero3 };

/// "naive" | "sdpa" | "tessel"/"flash"; "eager" | "tessel"; "single" | "ddp" | "zero1" |
/// "zero2" | "zero3"/"fsdp". Throw std::invalid_argument naming the choices.
Attention parseAttention(const std::string &name);
Kernels parseKernels(const std::string &name);
Sharding parseSharding(const std::string &name);
const char *toString(Sharding sharding);

struct StepSetup {
  ModelShape model;
  int64_t batch = 4;     ///< global batch, sequences (split over the devices of DDP and ZeRO)
  int64_t context = 512; ///< tokens per sequence
  bool bf16 = false;     ///< bf16 autocast; the master weights stay f32
  Attention attention = Attention::Sdpa;
  Kernels kernels = Kernels::Eager;
  bool activationCheckpointing = false; ///< keep each block's inputs, recompute the rest
  bool workingCopies = false; ///< bf16 weight copies that AdamW writes (no autocast casts)
  /// The forward runs on bf16 weights (ZeRO-3 gathers them in bf16; planMemory sets it): the
  /// embedding's output, so the residual stream, is bf16 too.
  bool bf16Weights = false;
  /// LibTorch's CPU kernels rather than CUDA's: SDPA returns its output heads-first (the
  /// output projection copies it) and autocast keeps softmax in bf16.
  bool cpu = false;
  /// Bytes per element of the master weights, gradients and each optimizer moment (AdamW:
  /// two moments), and of the activations the FFN-only model saves.
  int masterBytes = 4, gradientBytes = 4, stateBytes = 4, optimizerMoments = 2;
  /// CS336's accounting: instead of splitting the batch over the devices, every device
  /// holds the whole batch's activations but this fraction of them sharded over the
  /// devices ("half of the activations": 0.5). 0: data parallel, each device runs
  /// batch / devices sequences.
  double activationShardFraction = 0;
  /// ZeRO-3: units gathered at once (FullySharded's default limit; 0 for the idealised
  /// accounting that counts the shards alone).
  int gatheredUnits = 3;
};

/// One tensor autograd keeps: elements per token, bytes per element.
struct SavedTensor {
  std::string what;
  double elementsPerToken = 0;
  int bytesPerElement = 4;
  double bytesPerToken() const { return elementsPerToken * bytesPerElement; }
};
/// What one block keeps for its backward (without activation checkpointing).
std::vector<SavedTensor> savedPerBlock(const StepSetup &setup);
/// What the embedding, the final norm, the LM head and the loss keep.
std::vector<SavedTensor> savedOutsideBlocks(const StepSetup &setup);
/// What the model keeps after a forward of `tokens` tokens, bytes: every block's (or, with
/// activation checkpointing, each block's inputs) and the rest.
double activationBytes(const StepSetup &setup, double tokens);

/// Bytes per device.
struct MemoryPlan {
  int devices = 1;
  double weights = 0, gradients = 0, optimizerState = 0, weightCopies = 0;
  double gatheredUnits = 0; ///< ZeRO-3: units gathered at once (3 of the largest)
  double activations = 0;   ///< saved after the forward, this device's share of the batch
  double forwardPeak = 0;   ///< the train step's peak up to the end of the forward
  double stepPeak = 0;      ///< the train step's peak (forward + backward), everything included
  /// weights + gradients + optimizer state + copies + gathered + activations (the CS336 sum)
  double total() const {
    return weights + gradients + optimizerState + weightCopies + gatheredUnits + activations;
  }
};
MemoryPlan planMemory(const StepSetup &setup, Sharding sharding, int devices);

/// The fewest devices of `deviceBytes` each whose planMemory(...).total() fits (0 when no
/// count up to `maxDevices` does).
int devicesNeeded(const StepSetup &setup, Sharding sharding, double deviceBytes,
                  int maxDevices = 1 << 20);

} // namespace tessel::plan

#endif // TESSEL_PLAN_MEMORY_H
