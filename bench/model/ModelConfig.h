//===- bench/model/ModelConfig.h - Transformer LM sizes and presets -*- C++ -*-===//
//
// The hyperparameters of the CS336 Transformer LM and the named presets of the
// CS336 systems assignment. No LibTorch here, so flag parsing and reports can
// use it cheaply.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_MODELCONFIG_H
#define TESSEL_BENCH_MODEL_MODELCONFIG_H

#include "tools/tessel-plan/ModelShape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::model {

/// How attention scores are computed.
enum class AttentionImpl {
  Naive,  ///< softmax(QK^T / sqrt(d) + causal mask) V, the scores materialised.
  Sdpa,   ///< torch::scaled_dot_product_attention(is_causal = true).
  Tessel, ///< Tessel's FlashAttention-2 kernel (registered in TesselOps.h).
};

/// How RMSNorm and SwiGLU's gate are computed.
enum class KernelImpl {
  Eager,  ///< Composed from LibTorch ops.
  Tessel, ///< Tessel's fused kernels (registered in TesselOps.h).
};

/// How the linears (projections, feed-forward, LM head) multiply, forward and backward.
enum class MatmulImpl {
  Torch,  ///< at::linear (cuBLAS).
  Tessel, ///< Tessel's matmul kernel, forward, dX and dW (registered in TesselOps.h).
};

/// "naive" | "sdpa" | "tessel"; throws std::invalid_argument on anything else.
AttentionImpl parseAttentionImpl(const std::string &name);
const char *toString(AttentionImpl impl);
/// "eager" | "tessel"; throws std::invalid_argument on anything else.
KernelImpl parseKernelImpl(const std::string &name);
const char *toString(KernelImpl impl);
/// "torch" | "tessel"; throws std::invalid_argument on anything else.
MatmulImpl parseMatmulImpl(const std::string &name);
const char *toString(MatmulImpl impl);

struct ModelConfig {
  std::string name = "custom"; ///< Preset name, or "custom".
  int64_t vocabSize = 10000;
  int64_t contextLength = 512; ///< Longest sequence the RoPE tables cover.
  int64_t dModel = 768;
  int64_t dFF = 3072;
  int64_t numLayers = 12;
  int64_t numHeads = 12;
  /// Key/value heads: grouped-query attention when fewer than numHeads (a divisor of it);
  /// 0: numHeads (multi-head attention).
  int64_t numKvHeads = 0;
  /// Sliding-window attention: each query sees the `attentionWindow` keys before it and its
  /// own (Mistral's window); -1: all earlier keys (plain causal attention).
  int64_t attentionWindow = -1;
  double ropeTheta = 10000.0;
  double rmsNormEps = 1e-5;
  AttentionImpl attention = AttentionImpl::Sdpa;
  KernelImpl kernels = KernelImpl::Eager;
  MatmulImpl matmul = MatmulImpl::Torch;

  /// small | medium | large | xl | 2.7B (vocab 10000, context 512). Throws
  /// std::invalid_argument naming the known presets for any other name.
  static ModelConfig preset(const std::string &name);
  static const std::vector<std::string> &presetNames();

  /// Parameter elements of a model with this config (small: 128,625,408).
  int64_t parameterCount() const;
  /// These sizes as tessel-plan's model shape (tools/tessel-plan/ModelShape.h).
  plan::ModelShape planShape() const;
  int64_t kvHeads() const { return numKvHeads > 0 ? numKvHeads : numHeads; }
  /// Throws std::invalid_argument if the sizes are inconsistent (dModel not a
  /// multiple of numHeads, numHeads not a multiple of the kv heads, odd head dimension,
  /// non-positive sizes, a window below -1).
  void validate() const;
  /// "small (d_model 768, d_ff 3072, 12 layers, 12 heads)"; grouped-query attention and a
  /// window are named when set ("12 heads, 4 kv heads, window 256").
  std::string describe() const;
};

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_MODELCONFIG_H
