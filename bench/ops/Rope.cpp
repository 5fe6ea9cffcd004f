//===- bench/ops/Rope.cpp - kernels/rope.tsl as a torch op ----------------===//

#include "bench/ops/FusedOps.h"
#include "bench/ops/OpSupport.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <limits>

namespace tessel::ops {
namespace {

const char *kOp = "rope";

const TunedKernel &kernel(const char *name, torch::ScalarType dtype) {
  return tunedKernel(kOp, "rope_" + packageDType(kOp, dtype), name);
}

/// Saves the tables and the shape; the backward rotates the gradients back into one dqkv.
struct RopeFunction : public torch::autograd::Function<RopeFunction> {
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext *ctx,
                                              const torch::Tensor &qkv, const torch::Tensor &cos,
                                              const torch::Tensor &sin, int64_t heads,
                                              int64_t kvHeads) {
    int64_t batch = qkv.size(0), seq = qkv.size(1), dHead = qkv.size(2) / (heads + 2 * kvHeads);
    torch::Tensor rows = qkv.reshape({batch * seq, qkv.size(2)});
    if (rows.stride(1) != 1)
      rows = rows.contiguous();
    auto options = qkv.options();
    torch::Tensor q = torch::empty({batch, heads, seq, dHead}, options);
    torch::Tensor k = torch::empty({batch, kvHeads, seq, dHead}, options), v = torch::empty_like(k);
    if (q.numel() > 0)
      kernel("rope_fwd", qkv.scalar_type())
          .launch(batch * seq,
                  {q.data_ptr(), k.data_ptr(), v.data_ptr(), rows.data_ptr(), cos.data_ptr(),
                   sin.data_ptr(), int32_t(seq), int32_t(heads), int32_t(kvHeads),
                   int32_t(dHead / 2), int32_t(rows.stride(0))},
                  currentStream());
    ctx->save_for_backward({cos, sin});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["kv_heads"] = kvHeads;
    ctx->saved_data["shape"] = qkv.sizes().vec();
    return {q, k, v};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    int64_t heads = ctx->saved_data["heads"].toInt(), kvHeads = ctx->saved_data["kv_heads"].toInt();
    std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    int64_t batch = shape[0], seq = shape[1], width = shape[2];
    int64_t dHead = width / (heads + 2 * kvHeads);
    // The forward's outputs all have one dtype; a missing gradient is zero.
    torch::Tensor like;
    for (const torch::Tensor &g : grads)
      if (g.defined())
        like = g;
    if (!like.defined())
      return {torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    auto ready = [&](const torch::Tensor &g, int64_t h) {
      return g.defined() ? g.contiguous() : torch::zeros({batch, h, seq, dHead}, like.options());
    };
    torch::Tensor dq = ready(grads[0], heads), dk = ready(grads[1], kvHeads),
                  dv = ready(grads[2], kvHeads);
    torch::Tensor dqkv = torch::empty({batch, seq, width}, dq.options());
    if (dqkv.numel() > 0)
      kernel("rope_bwd", dq.scalar_type())
          .launch(batch * seq,
                  {dqkv.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                   saved[0].data_ptr(), saved[1].data_ptr(), int32_t(seq), int32_t(heads),
                   int32_t(kvHeads), int32_t(dHead / 2), int32_t(width)},
                  currentStream());
    return {dqkv, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

} // namespace

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> rope(const torch::Tensor &qkv,
                                                             const torch::Tensor &cos,
                                                             const torch::Tensor &sin,
                                                             int64_t heads, int64_t kvHeads) {
  requireCudaFloat(kOp, {&qkv, &cos, &sin});
  packageDType(kOp, qkv.scalar_type());
  if (kvHeads == -1)
    kvHeads = heads;
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0)
    failOp(kOp, "heads (" + std::to_string(heads) + ") must be a positive multiple of kv_heads (" +
                    std::to_string(kvHeads) + ")");
  int64_t widthHeads = heads + 2 * kvHeads;
  if (qkv.dim() != 3 || qkv.size(2) % (2 * widthHeads) != 0)
    failOp(kOp, "qkv must be [batch, seq, (heads + 2 * kv_heads) * head_dim] with an even "
                "head_dim; got " + describe(qkv) + " for " + std::to_string(heads) + " heads and " +
                    std::to_string(kvHeads) + " kv heads");
  int64_t seq = qkv.size(1), half = qkv.size(2) / (2 * widthHeads);
  for (const torch::Tensor *table : {&cos, &sin})
    if (table->scalar_type() != torch::kFloat32 || table->dim() != 2 || table->size(1) != half ||
        table->size(0) < seq || !table->is_contiguous())
      failOp(kOp, "cos and sin must be contiguous f32 [>= seq, head_dim / 2] = [>= " +
                      std::to_string(seq) + ", " + std::to_string(half) + "]; got " +
                      describe(*table));
  if (heads * half > 4096)
    failOp(kOp, "heads * head_dim / 2 = " + std::to_string(heads * half) +
                    " pairs per token exceed the 4096 one program holds");
  if (qkv.size(0) * seq > std::numeric_limits<int32_t>::max())
    failOp(kOp, "too many tokens for the grid; got " + describe(qkv));
  auto out = RopeFunction::apply(qkv, cos, sin, heads, kvHeads);
  return {out[0], out[1], out[2]};
}

} // namespace tessel::ops
