//===- bench/model/TransformerLM.h - The CS336 Transformer LM in LibTorch -*- C++ -*-===//
//
// The CS336 "basics" Transformer language model: token embedding, pre-norm
// blocks (RMSNorm -> causal multi-head self-attention with RoPE -> residual,
// RMSNorm -> SwiGLU feed-forward -> residual), a final RMSNorm and an LM head.
// No biases anywhere; weights start from CS336's truncated-normal init.
//
// This is the model every harness study shares (tessel-bench model, the
// distributed trainers). Typical use:
//
//   auto config = tessel::model::ModelConfig::preset("small");
//   config.contextLength = 512;
//   tessel::model::TransformerLM lm(config);      // a torch::nn::ModuleHolder
//   lm->to(torch::kCUDA);
//   torch::Tensor logits = lm->forward(tokens);   // [batch, seq, vocab]
//
// The attention, fused-op and linear (matmul) implementations are fields of the
// config and can be changed on a live model (setAttention / setKernels / setMatmul).
// Initialisation draws from torch's default generator: torch::manual_seed()
// before construction makes it reproducible.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_TRANSFORMERLM_H
#define TESSEL_BENCH_MODEL_TRANSFORMERLM_H

#include "bench/model/ModelConfig.h"

#include <functional>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <tuple>
#include <vector>

namespace tessel::model {

/// y = x W^T, no bias. weight is [outFeatures, inFeatures] (as torch::nn::Linear).
/// A weight that fuses `fusedBlocks` linears of outFeatures / fusedBlocks rows
/// each (e.g. q, k and v) is initialised as those linears would be; blockRows, when set,
/// gives blocks of unequal rows (q, and narrower k and v under grouped-query attention).
class LinearImpl : public torch::nn::Module {
public:
  LinearImpl(int64_t inFeatures, int64_t outFeatures, const torch::TensorOptions &options = {},
             int64_t fusedBlocks = 1);
  /// Fused blocks of unequal rows (one draw each: a meta-built model's initialisation, unit
  /// by unit, draws the same numbers).
  LinearImpl(int64_t inFeatures, std::vector<int64_t> blockRows,
             const torch::TensorOptions &options = {});
  torch::Tensor forward(const torch::Tensor &x);
  /// Re-draws the weight: truncated normal, std sqrt(2 / (in + out)), cut at +-3 std.
  void resetParameters();
  torch::Tensor weight;
  /// A bf16 or f16 copy of weight that the forward computes with under autocast to its
  /// dtype, instead of casting weight on every call (its gradient lands on the copy). The
  /// optimizer keeps it equal to weight: TransformerLMImpl::makeWorkingCopies.
  torch::Tensor workingWeight;
  int64_t inFeatures, outFeatures, fusedBlocks;
  std::vector<int64_t> blockRows;
  MatmulImpl matmul = MatmulImpl::Torch; ///< Tessel: tesselOps().linear, forward and backward.
};
TORCH_MODULE(Linear);

/// Token embedding: weight is [vocabSize, dModel], truncated normal std 1 cut at +-3.
class EmbeddingImpl : public torch::nn::Module {
public:
  EmbeddingImpl(int64_t vocabSize, int64_t dModel, const torch::TensorOptions &options = {});
  torch::Tensor forward(const torch::Tensor &tokens);
  void resetParameters();
  torch::Tensor weight;
};
TORCH_MODULE(Embedding);

/// RMSNorm over the last dimension: x / sqrt(mean(x^2) + eps) * weight, computed in f32.
class RMSNormImpl : public torch::nn::Module {
public:
  RMSNormImpl(int64_t dModel, double eps, KernelImpl kernels,
              const torch::TensorOptions &options = {});
  torch::Tensor forward(const torch::Tensor &x);
  /// The residual add before the norm: (x + delta, forward(x + delta)), one fused kernel
  /// with Tessel's (whose norm output comes in delta's dtype: under autocast, the bf16 the
  /// next linear reads); an undefined delta adds nothing.
  std::tuple<torch::Tensor, torch::Tensor> addForward(const torch::Tensor &x,
                                                      const torch::Tensor &delta);
  torch::Tensor weight;
  double eps;
  KernelImpl kernels;
};
TORCH_MODULE(RMSNorm);

/// Rotary position embedding on interleaved pairs (x[2i], x[2i+1]) of the head
/// dimension, angle position * theta^(-2i/dHead). cos/sin are precomputed buffers
/// for positions [0, maxSeqLen).
class RotaryEmbeddingImpl : public torch::nn::Module {
public:
  RotaryEmbeddingImpl(double theta, int64_t dHead, int64_t maxSeqLen,
                      const torch::TensorOptions &options = {});
  /// x: [..., seq, dHead]; positions: [seq] (or broadcastable to x's leading
  /// dimensions + [seq]); an undefined tensor means 0..seq-1.
  torch::Tensor forward(const torch::Tensor &x, const torch::Tensor &positions = {});
  torch::Tensor cosTable, sinTable; // [maxSeqLen, dHead / 2], f32 (on the host for a meta build)
};
TORCH_MODULE(RotaryEmbedding);

/// Causal self-attention with RoPE on queries and keys: multi-head, or grouped-query with
/// fewer key/value heads, optionally within a sliding window. The q, k and v projections
/// are one fused [dModel + 2 * kvWidth, dModel] weight (initialised per block as the three
/// linears would be); the output projection is separate.
class CausalSelfAttentionImpl : public torch::nn::Module {
public:
  CausalSelfAttentionImpl(const ModelConfig &config, const torch::TensorOptions &options = {});
  torch::Tensor forward(const torch::Tensor &x);
  Linear qkvProj{nullptr}, outputProj{nullptr};
  RotaryEmbedding rope{nullptr};
  int64_t numHeads, numKvHeads;
  int64_t window; ///< ModelConfig::attentionWindow
  AttentionImpl attention;
  KernelImpl kernels; ///< Tessel: RoPE from the fused projection in one kernel.
};
TORCH_MODULE(CausalSelfAttention);

/// The keys each query sees, [seqQ, seqK] bool: keys j >= i - window (all when window is
/// -1) and, when causal, j <= i, with the last query aligned to the last key.
torch::Tensor attentionMask(int64_t seqQ, int64_t seqK, bool causal, int64_t window,
                            const torch::TensorOptions &options);

/// Attention with the scores materialised, the reference of the fused kernels: q [B, H, Sq,
/// D], k and v [B, KV, Sk, D] with H a multiple of KV (each key/value head repeated for its
/// group of query heads), scores scaled by 1/sqrt(D), masked by attentionMask.
torch::Tensor naiveAttention(const torch::Tensor &q, const torch::Tensor &k,
                             const torch::Tensor &v, bool causal, int64_t window = -1);

/// SwiGLU: W2 (silu(W1 x) * W3 x). W1 and W3 are one fused [2 * dFF, dModel] weight.
class SwiGLUImpl : public torch::nn::Module {
public:
  SwiGLUImpl(int64_t dModel, int64_t dFF, KernelImpl kernels,
             const torch::TensorOptions &options = {});
  torch::Tensor forward(const torch::Tensor &x);
  Linear w13{nullptr}, w2{nullptr};
  int64_t dFF;
  KernelImpl kernels;
};
TORCH_MODULE(SwiGLU);

/// One pre-norm block: h = x + attn(ln1(x)), then h + ffn(ln2(h)). Each residual add is
/// done by the norm after it (RMSNorm::addForward), so the block takes the residual
/// stream with the previous block's pending output and returns h with its own:
/// forward(x, pending) = (x + pending + attn(ln1(x + pending)), ffn(ln2(...))). The
/// attention and feed-forward halves run inside NVTX ranges "attention" and "feed_forward"
/// (each with the residual add before its norm: the previous half's).
class TransformerBlockImpl : public torch::nn::Module {
public:
  TransformerBlockImpl(const ModelConfig &config, const torch::TensorOptions &options = {});
  std::tuple<torch::Tensor, torch::Tensor> forward(const torch::Tensor &x,
                                                   const torch::Tensor &pending = {});
  RMSNorm ln1{nullptr}, ln2{nullptr};
  CausalSelfAttention attn{nullptr};
  SwiGLU ffn{nullptr};
};
TORCH_MODULE(TransformerBlock);

/// The language model. Parameter names follow CS336 (token_embeddings.weight,
/// layers.N.attn.qkv_proj.weight, ..., ln_final.weight, lm_head.weight).
class TransformerLMImpl : public torch::nn::Module {
public:
  /// Builds and initialises the model directly on `device` (f32 parameters);
  /// torch::kMeta builds it without allocating memory.
  explicit TransformerLMImpl(const ModelConfig &config, torch::Device device = torch::kCPU);
  /// tokens: int64 [batch, seq] with seq <= contextLength; returns logits
  /// [batch, seq, vocabSize] (f32, or bf16 under autocast).
  torch::Tensor forward(const torch::Tensor &tokens);
  /// Switches every layer's attention / fused-op / linear implementation in place.
  void setAttention(AttentionImpl attention);
  void setKernels(KernelImpl kernels);
  void setMatmul(MatmulImpl matmul);
  /// Gives every linear's weight a working copy in `dtype` (bf16 or f16; see
  /// LinearImpl::workingWeight). Returns one entry per parameters() element (the copy, or
  /// undefined) for AdamW::setWorkingCopies, whose steps keep the copies current.
  std::vector<torch::Tensor> makeWorkingCopies(torch::ScalarType dtype);
  /// `f` is called with each part of the model (the token embeddings, every block, the
  /// final norm, the LM head) right before its forward reads its parameters, so a caller
  /// whose parameters may still be arriving (ZeRO-1's all-gather overlapped with the
  /// forward) can wait for exactly those. Empty: nothing is called.
  void setBeforeForward(std::function<void(torch::nn::Module &)> f) {
    beforeForward_ = std::move(f);
  }
  /// `f` is called with each part right after its forward, with the outputs that carry
  /// the part's result onward (a block: the residual stream and its pending output), so a
  /// caller that frees a part's parameters after its forward (FSDP) can hook the part's
  /// backward on them. Empty: nothing is called.
  using AfterForward = std::function<void(torch::nn::Module &, const std::vector<torch::Tensor> &)>;
  void setAfterForward(AfterForward f) { afterForward_ = std::move(f); }
  /// Activation checkpointing per block (ActivationCheckpoint.h): a block keeps only its
  /// inputs for the backward, which runs its forward again (the hooks above are not called
  /// again: a caller gathering parameters for the backward does so on the outputs' hook).
  void setActivationCheckpointing(bool on) { checkpointBlocks_ = on; }
  bool activationCheckpointing() const { return checkpointBlocks_; }
  const ModelConfig &config() const { return config_; }
  /// Number of parameter elements actually held (== config().parameterCount()).
  int64_t numParameters() const;
  /// A model built on the meta device, one part (the embeddings, a block, the final norm,
  /// the LM head) at a time: gives `part`'s parameters storage on `device` and
  /// initialises them as the constructor would. Parts taken in forward order under the
  /// constructor's seed get exactly the values a build on `device` gets, while only the
  /// part at hand holds memory (FullyShardedOptions::materialize).
  void materialize(torch::nn::Module &part, torch::Device device);

  Embedding tokenEmbeddings{nullptr};
  std::vector<TransformerBlock> layers;
  RMSNorm lnFinal{nullptr};
  Linear lmHead{nullptr};

private:
  void beforeForward(torch::nn::Module &part) {
    if (beforeForward_)
      beforeForward_(part);
  }
  void afterForward(torch::nn::Module &part, const std::vector<torch::Tensor> &outputs) {
    if (afterForward_)
      afterForward_(part, outputs);
  }

  ModelConfig config_;
  std::function<void(torch::nn::Module &)> beforeForward_;
  AfterForward afterForward_;
  bool checkpointBlocks_ = false;
};
TORCH_MODULE(TransformerLM);

/// Mean cross-entropy of logits [..., vocab] against integer targets [...],
/// computed in f32 with log-sum-exp (logits may be bf16); Tessel's kernel with
/// KernelImpl::Tessel (it reads bf16 logits without an f32 copy).
torch::Tensor crossEntropy(const torch::Tensor &logits, const torch::Tensor &targets,
                           KernelImpl kernels = KernelImpl::Eager);

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_TRANSFORMERLM_H
