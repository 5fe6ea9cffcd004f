//===- bench/ops/FusedOps.h - The Transformer's fused kernels as torch ops -*- C++ -*-===//
//
// The memory-bound parts of a training step, each one Tessel kernel (kernels/*.tsl) per
// direction, and the linears' matmuls, as LibTorch autograd functions. Storage dtypes f32,
// bf16 and f16 (linear: f32 and bf16); arithmetic and statistics in f32. Each checks its
// inputs and names what is wrong.
//
//   rmsNorm(x, w, eps)       x [..., n] (rows of n <= 8192), w [n]: x / rms(x) * w, in x's
//                            dtype (kernels/rmsnorm.tsl; the weight gradient reduced over
//                            rows by per-program partials and a column sum, no atomics)
//   addRmsNorm(x, d, w, eps) (x + d, rmsNorm(x + d, w, eps)): the residual add fused with the
//                            norm after it; d in x's dtype or, for an f32 x, bf16 or f16
//                            (autocast); the sum in x's dtype, the norm in d's (the next
//                            linear's input); the backward adds the residual's gradient
//   swiglu(h)                h [..., 2F] = [a | b] (the fused W1/W3 projection): silu(a) * b
//                            (kernels/swiglu.tsl)
//   rope(qkv, cos, sin, H, KV)  qkv [B, S, (H + 2 KV) D] -> q [B, H, S, D], k, v [B, KV, S, D]
//                            contiguous, q and k rotated (interleaved pairs, tables [>= S,
//                            D/2] f32); KV = -1 is H (kernels/rope.tsl)
//   crossEntropy(logits, t)  logits [..., V], targets [...] int64: the mean over rows of
//                            logsumexp - logit[target], f32; a target outside [0, V) gives NaN
//                            (kernels/cross_entropy.tsl; the probabilities are never stored)
//   linear(x, w)             x [..., in], w [out, in]: x w^T [..., out] (at::linear without
//                            bias), bf16 or f32 (through tf32); the forward, dX and dW one
//                            kernels/matmul.tsl launch each (linearPackages). Under autocast
//                            the inputs run in the autocast dtype, as at::linear's do.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_OPS_FUSEDOPS_H
#define TESSEL_BENCH_OPS_FUSEDOPS_H

#include <torch/types.h>

#include <string>
#include <tuple>
#include <vector>

namespace tessel::ops {

torch::Tensor rmsNorm(const torch::Tensor &x, const torch::Tensor &weight, double eps);
std::tuple<torch::Tensor, torch::Tensor> addRmsNorm(const torch::Tensor &x,
                                                    const torch::Tensor &delta,
                                                    const torch::Tensor &weight, double eps);
torch::Tensor swiglu(const torch::Tensor &h);
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> rope(const torch::Tensor &qkv,
                                                             const torch::Tensor &cos,
                                                             const torch::Tensor &sin,
                                                             int64_t heads, int64_t kvHeads = -1);
torch::Tensor crossEntropy(const torch::Tensor &logits, const torch::Tensor &targets);
torch::Tensor linear(const torch::Tensor &x, const torch::Tensor &weight);

/// The matmul packages linear() runs for `dtype` (bf16 or f32) on CUDA device `device`:
/// the forward Y = X W^T (matmul_<dt>_bt), dX = dY W (matmul_<dt>, matmul_<dt>_sm90a on
/// compute capability 9.0 where it was built) and dW = dY^T X (matmul_<dt>_at).
struct LinearPackages {
  std::string forward, inputGrad, weightGrad;
};
LinearPackages linearPackages(torch::ScalarType dtype, int device);

struct AdamWHyper {
  double lr, beta1, beta2, eps, weightDecay;
};

/// One AdamW update (torch.optim.AdamW's, decoupled weight decay, bias correction from each
/// parameter's step count, already incremented) of every parameter in one launch per
/// (param dtype, grad dtype, copy dtype) group (kernels/adamw.tsl). expAvg and expAvgSq
/// are f32 and contiguous; steps are f32 scalars on the device, so a captured CUDA graph
/// stays right. `copies` is empty or one tensor per parameter: where defined, the
/// parameter's working copy (bf16 or f16, of an f32 parameter, whose gradient is in that
/// dtype too), written with the new value in the same pass.
void adamwStep(const std::vector<torch::Tensor> &params, const std::vector<torch::Tensor> &grads,
               const std::vector<torch::Tensor> &expAvg,
               const std::vector<torch::Tensor> &expAvgSq,
               const std::vector<torch::Tensor> &steps, const AdamWHyper &hyper,
               const std::vector<torch::Tensor> &copies = {});

/// Installs every op above in the model's TesselOps table (and FlashAttention's too).
void installTesselOps();

} // namespace tessel::ops

#endif // TESSEL_BENCH_OPS_FUSEDOPS_H
