//===- bench/model/TesselOps.h - Hooks for Tessel kernels in the model -*- C++ -*-===//
//
// The model calls Tessel's kernels through this table so that the model
// library does not depend on the runtime: whoever wraps a Tessel kernel as a
// torch op (bench/kernels/) installs it here at start-up, e.g.
//
//   tessel::model::tesselOps().attention = &myFlashAttention;
//
// An empty entry means "not built yet": selecting --attention tessel, --kernels tessel
// or --matmul tessel then fails with a message naming the missing kernel.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_TESSELOPS_H
#define TESSEL_BENCH_MODEL_TESSELOPS_H

#include <torch/types.h>

#include <functional>
#include <tuple>
#include <vector>

namespace tessel::model {

struct TesselOps {
  using Tensor = torch::Tensor;
  using Tensors = std::vector<torch::Tensor>;
  /// Causal attention: (q [batch, heads, seq, dHead], k, v [batch, kvHeads, seq, dHead],
  /// window: -1 or the keys before each query it sees) -> [batch, heads, seq, dHead].
  std::function<Tensor(const Tensor &, const Tensor &, const Tensor &, int64_t)> attention;
  /// RMSNorm over the last dimension: (x, weight, eps) -> same shape and dtype as x.
  std::function<Tensor(const Tensor &, const Tensor &, double)> rmsNorm;
  /// The residual add fused with the RMSNorm after it: (x, delta, weight, eps) ->
  /// (x + delta in x's dtype, rmsNorm(x + delta, weight, eps) in delta's dtype), delta in
  /// x's dtype or, under autocast, bf16/f16 with an f32 x (the norm's output is then the
  /// next linear's input in autocast's dtype).
  std::function<std::tuple<Tensor, Tensor>(const Tensor &, const Tensor &, const Tensor &,
                                           double)>
      addRmsNorm;
  /// SwiGLU gate over the fused projection: h [..., 2F] = [a | b] -> silu(a) * b [..., F].
  std::function<Tensor(const Tensor &)> swiglu;
  /// RoPE from the fused projection: (qkv [B, S, (H + 2 KV) D], cos, sin [>= S, D / 2] f32,
  /// heads H, kv heads KV) -> q [B, H, S, D], k (q and k rotated) and v [B, KV, S, D],
  /// contiguous.
  std::function<std::tuple<Tensor, Tensor, Tensor>(const Tensor &, const Tensor &,
                                                   const Tensor &, int64_t, int64_t)>
      rope;
  /// Mean cross-entropy of logits [..., V] against int64 targets [...], f32.
  std::function<Tensor(const Tensor &, const Tensor &)> crossEntropy;
  /// y = x W^T without bias: (x [..., in], weight [out, in]) -> [..., out], autocast's
  /// dtype under autocast (as at::linear).
  std::function<Tensor(const Tensor &x, const Tensor &weight)> linear;
  /// One AdamW update of (params, grads, exp_avg, exp_avg_sq, steps (f32, already
  /// incremented), working copies (empty, or per parameter an undefined tensor or its
  /// bf16/f16 copy to write), lr, beta1, beta2, eps, weight_decay).
  std::function<void(const Tensors &, const Tensors &, const Tensors &, const Tensors &,
                     const Tensors &, const Tensors &, double, double, double, double, double)>
      adamw;
};

/// The process-wide table (empty until something registers kernels).
TesselOps &tesselOps();

/// Throws std::runtime_error("... not available yet: needs the <what> kernel")
/// when the entry is empty; used by the model before calling an entry.
void requireTesselOp(bool present, const char *op, const char *kernel);

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_TESSELOPS_H
