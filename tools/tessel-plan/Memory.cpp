//===- tools/tessel-plan/Memory.cpp - Memory per device of a training step ---===//

#include "tools/tessel-plan/Memory.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tessel::plan {

Attention parseAttention(const std::string &name) {
  if (name == "naive")
    return Attention::Naive;
  if (name == "sdpa")
    return Attention::Sdpa;
  if (name == "tessel" || name == "flash")
    return Attention::Flash;
  throw std::invalid_argument("unknown attention '" + name + "' (expected naive, sdpa or tessel)");
}

Kernels parseKernels(const std::string &name) {
  if (name == "eager")
    return Kernels::Eager;
  if (name == "tessel")
    return Kernels::Tessel;
  throw std::invalid_argument("unknown kernels '" + name + "' (expected eager or tessel)");
}

Sharding parseSharding(const std::string &name) {
  if (name == "single")
    return Sharding::Single;
  if (name == "ddp")
    return Sharding::Ddp;
  if (name == "zero1")
    return Sharding::Zero1;
  if (name == "zero2")
    return Sharding::Zero2;
  if (name == "zero3" || name == "fsdp")
    return Sharding::Zero3;
  throw std::invalid_argument("unknown sharding '" + name +
                              "' (expected single, ddp, zero1, zero2, zero3 or fsdp)");
}

const char *toString(Sharding sharding) {
  switch (sharding) {
  case Sharding::Single:
    return "single";
  case Sharding::Ddp:
    return "ddp";
  case Sharding::Zero1:
    return "zero1";
  case Sharding::Zero2:
    return "zero2";
  case Sharding::Zero3:
    return "zero3";
  }
  return "?";
}

namespace {
/// Bytes of an activation the linears produce: bf16 under autocast, else f32. The residual
/// stream, the norms' statistics and softmax stay f32 either way.
int activationBytesPerElement(const StepSetup &s) { return s.bf16 ? 2 : 4; }
/// Bytes per element of the residual stream: f32, bf16 where the weights are (the embedding's
/// output is the stream's dtype).
int residualBytes(const StepSetup &s) { return s.bf16Weights ? 2 : 4; }
/// What a norm keeps of its input: Tessel's norm keeps it as it is, the eager norm an f32 upcast.
int normInputBytes(const StepSetup &s) { return s.kernels == Kernels::Tessel ? residualBytes(s) : 4; }
} // namespace

std::vector<SavedTensor> savedPerBlock(const StepSetup &s) {
  const ModelShape &m = s.model;
  double d = static_cast<double>(m.dModel), f = static_cast<double>(m.dFF);
  int a = activationBytesPerElement(s);
  if (m.architecture == Architecture::FfnOnly) // x for W1, the hidden for W2
    return {{"W1 input", d, a}, {"W2 input", f, a}};
  double heads = static_cast<double>(m.numHeads), t = static_cast<double>(s.context);
  double kv = static_cast<double>(m.kvWidth()); // k's (and v's) width: d without GQA
  bool grouped = m.kvHeads() != m.numHeads;
  bool eager = s.kernels == Kernels::Eager;
  std::vector<SavedTensor> saved;
  auto norm = [&](const char *name) {
    saved.push_back({std::string(name) + " input (residual stream)", d, normInputBytes(s)});
    if (eager) // x * rsqrt(mean(x^2) + eps), kept for the weight's product
      saved.push_back({std::string(name) + " x * rstd", d, 4});
    saved.push_back({std::string(name) + " rstd", 1, 4});
    // The linear after it keeps its input: the norm's output in fp32, autocast's bf16 copy.
    saved.push_back({std::string(name) + " output, the next linear's input", d, a});
  };
  norm("ln1");
  if (eager) {
    // SDPA keeps v, a view of qkv, so the whole projection stays (naive attention copies v
    // and frees it); RoPE's q and k are a new tensor.
    if (s.attention != Attention::Naive)
      saved.push_back({"qkv projection (v is a view)", d + 2 * kv, a});
    saved.push_back({"q, k after RoPE", d + kv, a});
  } else {
    // The fused RoPE writes q, k and v anew and keeps only its tables: qkv is freed.
    saved.push_back({"q, k, v after RoPE", d + 2 * kv, a});
  }
  switch (s.attention) {
  case Attention::Naive:
    // CUDA's autocast runs softmax in f32 and keeps its output; P V then keeps a bf16 cast.
    saved.push_back({"attention probabilities (softmax output)", heads * t, s.bf16 && s.cpu ? 2 : 4});
    if (s.bf16 && !s.cpu)
      saved.push_back({"attention probabilities cast for P V", heads * t, 2});
    // The causal mask, [seq, seq] bool, per block: seq / batch bytes a token.
    saved.push_back({"causal mask", t / static_cast<double>(std::max<int64_t>(1, s.batch)), 1});
    if (grouped) // repeat_interleave gives every query head its own (contiguous) k and v
      saved.push_back({"k, v repeated per query head", 2 * d, a});
    else // matmul flattens [batch, heads] for bmm: v, a transposed view, is copied.
      saved.push_back({"v, contiguous copy for P V", d, a});
    saved.push_back({"attention output, transposed copy (output projection input)", d, a});
    break;
  case Attention::Sdpa:
    // CUDA's memory-efficient kernel (fp32) returns [batch, seq, heads, d_head]: the
    // projection's input is a view. The CPU's, and on Hopper bf16's (cuDNN), return it
    // heads-first, and the projection copies (measured: in bf16 SDPA and Tessel's op, which
    // copies, peak alike; in fp32 SDPA keeps a d_model a token less).
    saved.push_back({"attention output", d, a});
    saved.push_back({"attention logsumexp", heads, 4});
    if (s.cpu || s.bf16)
      saved.push_back({"attention output, transposed copy (output projection input)", d, a});
    break;
  case Attention::Flash:
    // Tessel's op returns [batch, heads, seq, d_head]: the projection copies it.
    saved.push_back({"attention output", d, a});
    saved.push_back({"attention logsumexp", heads, 4});
    saved.push_back({"attention output, transposed copy (output projection input)", d, a});
    break;
  }
  norm("ln2");
  saved.push_back({"W1|W3 output (gate and up)", 2 * f, a});
  if (eager)
    saved.push_back({"silu(gate)", f, a});
  saved.push_back({"silu(gate) * up (W2 input)", f, a});
  return saved;
}

std::vector<SavedTensor> savedOutsideBlocks(const StepSetup &s) {
  const ModelShape &m = s.model;
  if (m.architecture == Architecture::FfnOnly)
    return {};
  double d = static_cast<double>(m.dModel), v = static_cast<double>(m.vocabSize);
  int a = activationBytesPerElement(s);
  // (The embedding keeps the token ids: the batch, counted with the step's inputs.)
  std::vector<SavedTensor> saved = {{"final norm input (residual stream)", d, normInputBytes(s)}};
  if (s.kernels == Kernels::Eager)
    saved.push_back({"final norm x * rstd", d, 4});
  saved.push_back({"final norm rstd", 1, 4});
  saved.push_back({"final norm output (LM head input)", d, a});
  if (s.kernels == Kernels::Eager)
    saved.push_back({"log-softmax of the logits (f32)", v, 4});
  else
    saved.push_back({"logits (fused cross-entropy)", v, a});
  return saved;
}

namespace {
double bytesPerToken(const std::vector<SavedTensor> &saved) {
  double total = 0;
  for (const SavedTensor &t : saved)
    total += t.bytesPerToken();
  return total;
}

/// What the checkpointed blocks keep: their inputs, the residual stream and (after the
/// first block) the previous block's pending feed-forward output.
double checkpointedBytesPerToken(const StepSetup &s) {
  double d = static_cast<double>(s.model.dModel), layers = static_cast<double>(s.model.numLayers);
  int a = activationBytesPerElement(s);
  if (s.model.architecture == Architecture::FfnOnly)
    return layers * d * a;
  return layers * d * residualBytes(s) + (layers - 1) * d * a;
}
} // namespace

double activationBytes(const StepSetup &s, double tokens) {
  double blocks = s.activationCheckpointing
                      ? checkpointedBytesPerToken(s)
                      : static_cast<double>(s.model.numLayers) * bytesPerToken(savedPerBlock(s));
  return tokens * (blocks + bytesPerToken(savedOutsideBlocks(s)));
}

MemoryPlan planMemory(const StepSetup &setup, Sharding sharding, int devices) {
  StepSetup s = setup;
  s.bf16Weights = s.bf16 && sharding == Sharding::Zero3;
  if (devices < 1)
    throw std::invalid_argument("the device count must be at least 1");
  if (sharding == Sharding::Single && devices != 1)
    throw std::invalid_argument("'single' runs on one device");
  const ModelShape &m = s.model;
  double n = devices, params = static_cast<double>(m.parameters());
  double linear = static_cast<double>(m.linearParameters());
  bool shardState = sharding == Sharding::Zero1 || sharding == Sharding::Zero2 || sharding == Sharding::Zero3;
  bool shardGrads = sharding == Sharding::Zero2 || sharding == Sharding::Zero3;
  bool shardWeights = sharding == Sharding::Zero3;
  MemoryPlan p;
  p.devices = devices;
  p.weights = s.masterBytes * params / (shardWeights ? n : 1);
  p.gradients = s.gradientBytes * params / (shardGrads ? n : 1);
  p.optimizerState = s.optimizerMoments * s.stateBytes * params / (shardState ? n : 1);
  if (s.bf16 && s.workingCopies)
    p.weightCopies = 2 * linear / (shardWeights ? n : 1);
  int gatherBytes = s.bf16 ? 2 : s.masterBytes;
  if (shardWeights) // FullySharded gathers at any world size
    p.gatheredUnits = s.gatheredUnits * gatherBytes * static_cast<double>(m.largestUnitParameters());
  // Data parallel: each device runs its share of the global batch (or, CS336's accounting,
  // the whole batch with a fraction of its activations sharded).
  double f = std::clamp(s.activationShardFraction, 0.0, 1.0);
  bool split = sharding != Sharding::Single && f == 0;
  double tokens = static_cast<double>(s.batch) * static_cast<double>(s.context) / (split ? n : 1);
  p.activations = activationBytes(s, tokens) * (1 - f + f / n);

  // The step's peak, walking the backward block by block: the gradients grow by a block's
  // while a block's saved tensors go. Eager bf16 autocast keeps a bf16 cast of every linear
  // weight from its forward to its backward.
  if (m.architecture == Architecture::FfnOnly) {
    p.forwardPeak = p.stepPeak = p.total();
    return p;
  }
  double layers = static_cast<double>(m.numLayers), d = static_cast<double>(m.dModel);
  double v = static_cast<double>(m.vocabSize), ff = static_cast<double>(m.dFF);
  int a = activationBytesPerElement(s);
  // ZeRO-3 gathers bf16 weights: autocast has nothing to cast.
  bool casts = s.bf16 && !s.workingCopies && !shardWeights;
  // DDP and ZeRO-1 keep flat gradient buckets for the whole step (the harness's DataParallel
  // and ShardedOptimizer, as PyTorch's DDP), the .grad()s views into them.
  bool persistentGradients = sharding == Sharding::Ddp || sharding == Sharding::Zero1;
  double blockParams = static_cast<double>(m.blockParameters());
  // (Checkpointed blocks run their forward without autograd: nothing keeps their casts.)
  double blockCast = casts && !s.activationCheckpointing ? 2 * (blockParams - 2 * d) : 0;
  double headCast = casts ? 2 * v * d : 0;
  double outside = tokens * bytesPerToken(savedOutsideBlocks(s));
  double perBlock = tokens * (s.activationCheckpointing ? checkpointedBytesPerToken(s) / layers
                                                        : bytesPerToken(savedPerBlock(s)));
  double recompute = s.activationCheckpointing
                         ? tokens * bytesPerToken(savedPerBlock(s)) + (casts ? 2 * (blockParams - 2 * d) : 0)
                         : 0;
  double gradientScale = persistentGradients ? 0 : s.gradientBytes / (shardGrads ? n : 1);
  double staticBytes = p.weights + p.optimizerState + p.weightCopies + p.gatheredUnits +
                       (persistentGradients ? p.gradients : 0) +
                       2 * tokens * 8; // token ids and targets
  // The end of the forward: the logits (and, eager bf16, their f32 copy) beside the loss's.
  double logits = tokens * v * (a + (s.kernels == Kernels::Eager && s.bf16 ? 4 : 0));
  // (Checkpointing: the last block's tensors are alive while it runs, though not kept.)
  double forwardPeak = staticBytes + outside + layers * (perBlock + blockCast) + headCast +
                       std::max(logits, recompute);
  // The loss's backward: the logits' gradient in f32 (and bf16), the loss's own.
  double headTransient = tokens * v * (s.kernels == Kernels::Eager ? 8 + (s.bf16 ? 2 : 0) : a);
  // A block's backward: the feed-forward's [tokens, 2 d_ff] gradient twice, the residual
  // stream's twice, and (checkpointing) the block's recomputed tensors.
  double blockTransient = tokens * (2 * 2 * ff * a + 2 * d * residualBytes(s)) + recompute;
  double headParams = v * d + d;
  double backwardPeak = 0;
  for (int k = 0; k <= m.numLayers; ++k) {
    double remaining = layers - k;
    double live = outside + remaining * (perBlock + blockCast) + (k == 0 ? headCast : 0) +
                  gradientScale * (headParams + k * blockParams);
    backwardPeak = std::max(backwardPeak, live + (k == 0 ? headTransient : blockTransient));
  }
  backwardPeak = std::max(backwardPeak, outside + gradientScale * params); // the embedding's
  p.forwardPeak = forwardPeak;
  p.stepPeak = std::max(forwardPeak, staticBytes + backwardPeak);
  return p;
}

int devicesNeeded(const StepSetup &setup, Sharding sharding, double deviceBytes, int maxDevices) {
  if (!(deviceBytes > 0))
    throw std::invalid_argument("the device memory must be positive");
  auto fits = [&](int n) { return planMemory(setup, sharding, n).total() <= deviceBytes; };
  if (sharding == Sharding::Single)
    return fits(1) ? 1 : 0;
  if (!fits(maxDevices))
    return 0;
  // The memory per device only falls as devices are added: bisect for the fewest.
  int lo = 1, hi = maxDevices;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (fits(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

} // namespace tessel::plan
