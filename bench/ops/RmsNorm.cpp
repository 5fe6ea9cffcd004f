//===- bench/ops/RmsNorm.cpp - kernels/rmsnorm.tsl as a torch op ----------===//

#include "bench/ops/FusedOps.h"
#include "bench/ops/OpSupport.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace tessel::ops {
namespace {

const char *kOp = "rms_norm";
/// The largest configuration's BLOCK: one program holds a row.
constexpr int64_t kMaxCols = 8192;

const TunedKernel &kernel(const char *name, torch::ScalarType dtype) {
  return tunedKernel(kOp, "rmsnorm_" + packageDType(kOp, dtype), name);
}

struct RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &x,
                               const torch::Tensor &weight, double eps) {
    int64_t n = x.size(-1);
    torch::Tensor rows = x.reshape({-1, n}).contiguous();
    torch::Tensor w = weight.to(torch::kFloat32).contiguous();
    torch::Tensor y = torch::empty_like(rows);
    torch::Tensor rstd = torch::empty({rows.size(0)}, rows.options().dtype(torch::kFloat32));
    if (rows.numel() > 0)
      kernel("rmsnorm_fwd", x.scalar_type())
          .launch(rows.size(0),
                  {y.data_ptr(), rstd.data_ptr(), rows.data_ptr(), w.data_ptr(), int32_t(n),
                   int32_t(n), int32_t(n), float(eps)},
                  currentStream());
    ctx->save_for_backward({rows, w, rstd});
    ctx->saved_data["weight_dtype"] = int64_t(weight.scalar_type());
    ctx->saved_data["shape"] = x.sizes().vec();
    return y.view(x.sizes());
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    torch::Tensor rows = saved[0], w = saved[1], rstd = saved[2];
    auto weightDtype = torch::ScalarType(ctx->saved_data["weight_dtype"].toInt());
    std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    int64_t nRows = rows.size(0), n = rows.size(1);
    if (!grads[0].defined() || rows.numel() == 0)
      return {torch::zeros(shape, rows.options()), torch::zeros({n}, w.options().dtype(weightDtype)),
              torch::Tensor()};
    torch::Tensor dy = grads[0].reshape({nRows, n}).to(rows.scalar_type()).contiguous();
    torch::Tensor dx = torch::empty_like(rows);
    // At most ~1024 programs (and partial rows), each over a multiple of 8 rows (R | 8).
    int64_t rowsPerProgram = cdiv(std::max<int64_t>(cdiv(nRows, 1024), 1), 8) * 8;
    int64_t parts = cdiv(nRows, rowsPerProgram);
    torch::Tensor partial = torch::empty({parts, n}, rows.options().dtype(torch::kFloat32));
    CUstream stream = currentStream();
    kernel("rmsnorm_bwd", rows.scalar_type())
        .launch(parts,
                {dx.data_ptr(), partial.data_ptr(), dy.data_ptr(), rows.data_ptr(), w.data_ptr(),
                 rstd.data_ptr(), int32_t(n), int32_t(nRows), int32_t(n), int32_t(rowsPerProgram)},
                stream);
    torch::Tensor dw = torch::empty({n}, partial.options());
    kernel("column_sum", rows.scalar_type())
        .launch([&](const Config &c) { return Grid(cdiv(n, c["BLOCK"])); },
                {dw.data_ptr(), partial.data_ptr(), int32_t(parts), int32_t(n)}, stream);
    return {dx.view(shape), dw.to(weightDtype), torch::Tensor()};
  }
};

} // namespace

torch::Tensor rmsNorm(const torch::Tensor &x, const torch::Tensor &weight, double eps) {
  requireCudaFloat(kOp, {&x, &weight});
  packageDType(kOp, x.scalar_type());
  if (x.dim() < 1 || weight.dim() != 1 || weight.size(0) != x.size(-1))
    failOp(kOp, "the weight must be [n] for x [..., n]; got x " + describe(x) + ", weight " +
                    describe(weight));
  if (x.size(-1) > kMaxCols)
    failOp(kOp, "rows of " + std::to_string(x.size(-1)) + " elements are longer than the " +
                    std::to_string(kMaxCols) + " one program holds");
  if (x.numel() / std::max<int64_t>(x.size(-1), 1) > std::numeric_limits<int32_t>::max())
    failOp(kOp, "more rows than the kernels' 32-bit row count; got " + describe(x));
  return RmsNormFunction::apply(x, weight, eps);
}

} // namespace tessel::ops
