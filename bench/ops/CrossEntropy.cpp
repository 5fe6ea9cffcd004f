//===- bench/ops/CrossEntropy.cpp - kernels/cross_entropy.tsl as a torch op ===//

#include "bench/ops/FusedOps.h"
#include "bench/ops/OpSupport.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <limits>

namespace tessel::ops {
namespace {

const char *kOp = "cross_entropy";

const TunedKernel &kernel(const char *name, torch::ScalarType dtype) {
  return tunedKernel(kOp, "cross_entropy_" + packageDType(kOp, dtype), name);
}

/// Saves the logits, targets and each row's log-sum-exp; the backward writes
/// (softmax - onehot) * dloss / rows in one pass over the logits.
struct CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &logits,
                               const torch::Tensor &targets) {
    int64_t vocab = logits.size(-1);
    torch::Tensor rows = logits.reshape({-1, vocab});
    if (rows.stride(1) != 1)
      rows = rows.contiguous();
    torch::Tensor flatTargets = targets.reshape({-1}).contiguous();
    int64_t n = rows.size(0);
    auto f32 = rows.options().dtype(torch::kFloat32);
    torch::Tensor loss = torch::empty({n}, f32), lse = torch::empty({n}, f32);
    if (n > 0)
      kernel("cross_entropy_fwd", rows.scalar_type())
          .launch(n,
                  {loss.data_ptr(), lse.data_ptr(), rows.data_ptr(), flatTargets.data_ptr(),
                   int32_t(rows.stride(0)), int32_t(vocab)},
                  currentStream());
    ctx->save_for_backward({rows, flatTargets, lse});
    ctx->saved_data["shape"] = logits.sizes().vec();
    return loss.mean();
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    torch::Tensor rows = saved[0], targets = saved[1], lse = saved[2];
    std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    if (!grads[0].defined() || rows.numel() == 0)
      return {torch::zeros(shape, rows.options()), torch::Tensor()};
    torch::Tensor dloss = grads[0].to(torch::kFloat32).contiguous();
    torch::Tensor dlogits = torch::empty({rows.size(0), rows.size(1)}, rows.options());
    kernel("cross_entropy_bwd", rows.scalar_type())
        .launch(rows.size(0),
                {dlogits.data_ptr(), rows.data_ptr(), lse.data_ptr(), targets.data_ptr(),
                 dloss.data_ptr(), float(1.0 / double(rows.size(0))), int32_t(rows.stride(0)),
                 int32_t(dlogits.stride(0)), int32_t(rows.size(1))},
                currentStream());
    return {dlogits.view(shape), torch::Tensor()};
  }
};

} // namespace

torch::Tensor crossEntropy(const torch::Tensor &logits, const torch::Tensor &targets) {
  requireCudaFloat(kOp, {&logits});
  packageDType(kOp, logits.scalar_type());
  if (logits.dim() < 1 || logits.size(-1) < 1 || targets.scalar_type() != torch::kLong ||
      targets.device() != logits.device() ||
      targets.numel() * std::max<int64_t>(logits.size(-1), 1) != logits.numel())
    failOp(kOp, "targets must be int64 on the logits' device with one per row of logits "
                "[..., vocab]; got logits " + describe(logits) + ", targets " + describe(targets));
  if (logits.size(-1) > std::numeric_limits<int32_t>::max() ||
      targets.numel() > std::numeric_limits<int32_t>::max())
    failOp(kOp, "too large for the grid and 32-bit strides; got " + describe(logits));
  return CrossEntropyFunction::apply(logits, targets);
}

} // namespace tessel::ops
