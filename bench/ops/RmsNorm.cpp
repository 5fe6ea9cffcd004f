//===- bench/ops/RmsNorm.cpp - kernels/rmsnorm.tsl as torch ops ------------===//

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

/// The package holding the fused residual add for x in `x` and delta in `delta`:
/// rmsnorm_<x> when they agree, rmsnorm_f32_<delta> for autocast's f32 residual stream.
const TunedKernel &addKernel(const char *name, torch::ScalarType x, torch::ScalarType delta) {
  std::string package = "rmsnorm_" + packageDType(kOp, x);
  if (delta != x)
    package += "_" + packageDType(kOp, delta);
  return tunedKernel(kOp, package, name);
}

/// At most ~1024 backward programs, each over a multiple of 8 rows (the kernels' R | 8).
int64_t rowsPerProgram(int64_t nRows) {
  return cdiv(std::max<int64_t>(cdiv(nRows, 1024), 1), 8) * 8;
}

/// The weight gradient from the backward's per-program partials (columnSum: the package's
/// column_sum), in the weight's dtype.
torch::Tensor sumPartials(const TunedKernel &columnSum, const torch::Tensor &partial,
                          torch::ScalarType weightDtype, CUstream stream) {
  int64_t parts = partial.size(0), n = partial.size(1);
  torch::Tensor dw = torch::empty({n}, partial.options());
  columnSum.launch([&](const Config &c) { return Grid(cdiv(n, c["BLOCK"])); },
                   {dw.data_ptr(), partial.data_ptr(), int32_t(parts), int32_t(n)}, stream);
  return dw.to(weightDtype);
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
    int64_t perProgram = rowsPerProgram(nRows), parts = cdiv(nRows, perProgram);
    torch::Tensor partial = torch::empty({parts, n}, rows.options().dtype(torch::kFloat32));
    CUstream stream = currentStream();
    kernel("rmsnorm_bwd", rows.scalar_type())
        .launch(parts,
                {dx.data_ptr(), partial.data_ptr(), dy.data_ptr(), rows.data_ptr(), w.data_ptr(),
                 rstd.data_ptr(), int32_t(n), int32_t(nRows), int32_t(n), int32_t(perProgram)},
                stream);
    return {dx.view(shape),
            sumPartials(kernel("column_sum", rows.scalar_type()), partial, weightDtype, stream),
            torch::Tensor()};
  }
};

/// (h, y) = (x + delta, rmsnorm(x + delta) * w), h in x's dtype and y in delta's (the next
/// linear's input under autocast). Saves h (as the norm's input), the weight and rstd; the
/// backward's dx = dh + the norm's gradient, stored for x and, in delta's dtype, for delta
/// (the same tensor when the dtypes agree and neither is a leaf).
struct AddRmsNormFunction : public torch::autograd::Function<AddRmsNormFunction> {
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext *ctx,
                                              const torch::Tensor &x, const torch::Tensor &delta,
                                              const torch::Tensor &weight, double eps) {
    int64_t n = x.size(-1);
    torch::Tensor xRows = x.reshape({-1, n}).contiguous();
    torch::Tensor deltaRows = delta.reshape({-1, n}).contiguous();
    torch::Tensor w = weight.to(torch::kFloat32).contiguous();
    torch::Tensor h = torch::empty_like(xRows);
    torch::Tensor y = torch::empty_like(xRows, xRows.options().dtype(delta.scalar_type()));
    torch::Tensor rstd = torch::empty({xRows.size(0)}, xRows.options().dtype(torch::kFloat32));
    if (xRows.numel() > 0)
      addKernel("add_rmsnorm_fwd", x.scalar_type(), delta.scalar_type())
          .launch(xRows.size(0),
                  {h.data_ptr(), y.data_ptr(), rstd.data_ptr(), xRows.data_ptr(),
                   deltaRows.data_ptr(), w.data_ptr(), int32_t(n), float(eps)},
                  currentStream());
    ctx->save_for_backward({h, w, rstd});
    ctx->saved_data["weight_dtype"] = int64_t(weight.scalar_type());
    ctx->saved_data["delta_dtype"] = int64_t(delta.scalar_type());
    // One gradient tensor can serve x and delta inside a graph, not as the .grad of two
    // leaves (accumulating into one would change the other).
    ctx->saved_data["share_grad"] = !x.is_leaf() && !delta.is_leaf();
    ctx->saved_data["shape"] = x.sizes().vec();
    return {h.view(x.sizes()), y.view(x.sizes())};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    torch::Tensor h = saved[0], w = saved[1], rstd = saved[2];
    auto weightDtype = torch::ScalarType(ctx->saved_data["weight_dtype"].toInt());
    auto deltaDtype = torch::ScalarType(ctx->saved_data["delta_dtype"].toInt());
    std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    int64_t nRows = h.size(0), n = h.size(1);
    auto rowsOf = [&](const torch::Tensor &g, torch::ScalarType dtype) {
      return g.defined() ? g.reshape({nRows, n}).to(dtype).contiguous()
                         : torch::zeros_like(h, h.options().dtype(dtype));
    };
    torch::Tensor dh = rowsOf(grads[0], h.scalar_type()), dy = rowsOf(grads[1], deltaDtype);
    torch::Tensor dx = torch::empty_like(h);
    bool share = deltaDtype == h.scalar_type() && ctx->saved_data["share_grad"].toBool();
    torch::Tensor ddelta = share ? dx : torch::empty_like(h, h.options().dtype(deltaDtype));
    if (h.numel() == 0)
      return {dx.view(shape), ddelta.view(shape), torch::zeros({n}, w.options().dtype(weightDtype)),
              torch::Tensor()};
    int64_t perProgram = rowsPerProgram(nRows), parts = cdiv(nRows, perProgram);
    torch::Tensor partial = torch::empty({parts, n}, h.options().dtype(torch::kFloat32));
    CUstream stream = currentStream();
    addKernel("add_rmsnorm_bwd", h.scalar_type(), deltaDtype)
        .launch(parts,
                {dx.data_ptr(), ddelta.data_ptr(), partial.data_ptr(), dy.data_ptr(),
                 dh.data_ptr(), h.data_ptr(), w.data_ptr(), rstd.data_ptr(), int32_t(nRows),
                 int32_t(n), int32_t(perProgram), int32_t(share ? 0 : 1)},
                stream);
    return {dx.view(shape), ddelta.view(shape),
            sumPartials(addKernel("column_sum", h.scalar_type(), deltaDtype), partial,
                        weightDtype, stream),
            torch::Tensor()};
  }
};

void checkNormArgs(const torch::Tensor &x, const torch::Tensor &weight) {
  if (x.dim() < 1 || weight.dim() != 1 || weight.size(0) != x.size(-1))
    failOp(kOp, "the weight must be [n] for x [..., n]; got x " + describe(x) + ", weight " +
                    describe(weight));
  if (x.size(-1) > kMaxCols)
    failOp(kOp, "rows of " + std::to_string(x.size(-1)) + " elements are longer than the " +
                    std::to_string(kMaxCols) + " one program holds");
  if (x.numel() / std::max<int64_t>(x.size(-1), 1) > std::numeric_limits<int32_t>::max())
    failOp(kOp, "more rows than the kernels' 32-bit row count; got " + describe(x));
}

} // namespace

std::tuple<torch::Tensor, torch::Tensor> addRmsNorm(const torch::Tensor &x,
                                                    const torch::Tensor &delta,
                                                    const torch::Tensor &weight, double eps) {
  requireCudaFloat(kOp, {&x, &delta, &weight});
  packageDType(kOp, x.scalar_type());
  packageDType(kOp, delta.scalar_type());
  if (delta.sizes() != x.sizes())
    failOp(kOp, "the residual add needs delta of x's shape; got x " + describe(x) +
                    ", delta " + describe(delta));
  if (delta.scalar_type() != x.scalar_type() && x.scalar_type() != torch::kFloat32)
    failOp(kOp, "delta must have x's dtype, or be bf16 or f16 added to an f32 x (autocast's "
                "residual stream); got x " + describe(x) + ", delta " + describe(delta));
  checkNormArgs(x, weight);
  torch::autograd::tensor_list out = AddRmsNormFunction::apply(x, delta, weight, eps);
  return {out[0], out[1]};
}

torch::Tensor rmsNorm(const torch::Tensor &x, const torch::Tensor &weight, double eps) {
  requireCudaFloat(kOp, {&x, &weight});
  packageDType(kOp, x.scalar_type());
  checkNormArgs(x, weight);
  return RmsNormFunction::apply(x, weight, eps);
}

} // namespace tessel::ops
