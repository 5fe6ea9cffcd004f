//===- bench/ops/SwiGLU.cpp - kernels/swiglu.tsl as a torch op ------------===//

#include "bench/ops/FusedOps.h"
#include "bench/ops/OpSupport.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <limits>

namespace tessel::ops {
namespace {

const char *kOp = "swiglu";

const TunedKernel &kernel(const char *name, torch::ScalarType dtype) {
  return tunedKernel(kOp, "swiglu_" + packageDType(kOp, dtype), name);
}

/// Rows on grid x, BLOCK-column blocks of d_ff on grid y (a callable: GridRef keeps a
/// pointer to it, so it must outlive the launch's full expression).
auto gridFor(int64_t rows, int64_t dFF) {
  return [rows, dFF](const Config &c) { return Grid(rows, cdiv(dFF, c["BLOCK"])); };
}

struct SwiGLUFunction : public torch::autograd::Function<SwiGLUFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &h) {
    int64_t width = h.size(-1), dFF = width / 2;
    torch::Tensor rows = h.reshape({-1, width}).contiguous();
    torch::Tensor out = torch::empty({rows.size(0), dFF}, rows.options());
    if (out.numel() > 0)
      kernel("swiglu_fwd", h.scalar_type())
          .launch(gridFor(rows.size(0), dFF),
                  {out.data_ptr(), rows.data_ptr(), int32_t(dFF), int32_t(width), int32_t(dFF)},
                  currentStream());
    ctx->save_for_backward({rows});
    ctx->saved_data["shape"] = h.sizes().vec();
    std::vector<int64_t> shape = h.sizes().vec();
    shape.back() = dFF;
    return out.view(shape);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    torch::Tensor rows = ctx->get_saved_variables()[0];
    int64_t width = rows.size(1), dFF = width / 2;
    std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    if (!grads[0].defined() || rows.numel() == 0)
      return {torch::zeros(shape, rows.options())};
    torch::Tensor dout = grads[0].reshape({rows.size(0), dFF}).to(rows.scalar_type()).contiguous();
    torch::Tensor dh = torch::empty_like(rows);
    kernel("swiglu_bwd", rows.scalar_type())
        .launch(gridFor(rows.size(0), dFF),
                {dh.data_ptr(), dout.data_ptr(), rows.data_ptr(), int32_t(dFF), int32_t(width),
                 int32_t(dFF)},
                currentStream());
    return {dh.view(shape)};
  }
};

} // namespace

torch::Tensor swiglu(const torch::Tensor &h) {
  requireCudaFloat(kOp, {&h});
  packageDType(kOp, h.scalar_type());
  if (h.dim() < 1 || h.size(-1) % 2 != 0)
    failOp(kOp, "h must be [..., 2 * d_ff] (a then b); got " + describe(h));
  int64_t rows = h.numel() / std::max<int64_t>(h.size(-1), 1);
  if (h.size(-1) > std::numeric_limits<int32_t>::max() || rows > std::numeric_limits<int32_t>::max())
    failOp(kOp, "too large for the grid and 32-bit strides; got " + describe(h));
  return SwiGLUFunction::apply(h);
}

} // namespace tessel::ops
