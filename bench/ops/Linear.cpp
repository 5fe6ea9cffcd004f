//===- bench/ops/Linear.cpp - kernels/matmul.tsl as torch's linear --------===//
//
// y = x W^T and its two gradients, each one launch of kernels/matmul.tsl. With x2d = x as
// [M, K] rows, W [N, K] and dY [M, N] (all row-major with their own row strides):
//   Y  [M, N] = X  W^T: matmul_<dt>_bt (B = W^T, column-major: stride_b = W's row stride)
//   dX [M, K] = dY W  : matmul_<dt>, or matmul_<dt>_sm90a on compute capability 9.0
//   dW [N, K] = dY^T X: matmul_<dt>_at (A = dY^T, column-major: stride_a = dY's row stride)
// dW's transpose is inherent (the reduction runs over the rows of both dY and X): the
// kernel reads dY transposed rather than this op copying it.
//
//===----------------------------------------------------------------------===//

#include "bench/ops/FusedOps.h"
#include "bench/ops/OpSupport.h"

#include <ATen/autocast_mode.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#ifdef TESSEL_HAVE_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#endif

#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

namespace tessel::ops {
namespace {

const char *kOp = "linear";

/// `t` as 2-D rows the kernel can address: unit column stride and a row stride that fits
/// the kernel's 32-bit stride argument (a copy otherwise).
torch::Tensor rows(const torch::Tensor &t) {
  bool fits = t.stride(0) >= t.size(1) && t.stride(0) <= std::numeric_limits<int32_t>::max();
  if ((t.size(1) <= 1 || t.stride(1) == 1) && (t.size(0) <= 1 || fits))
    return t;
  return t.contiguous();
}

/// The row stride the kernel gets (a single row's stride is arbitrary: its width then).
int32_t leading(const torch::Tensor &t) {
  return int32_t(t.size(0) <= 1 ? std::max<int64_t>(t.size(1), 1) : t.stride(0));
}

/// The rows of x [..., in]: the product of its leading sizes (reshape(-1, 0) is ambiguous).
int64_t rowCount(const torch::Tensor &x) {
  int64_t count = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d)
    count *= x.size(d);
  return count;
}

/// C [m, n] = A B with the matmul of `which` of linearPackages() (whose layout says how A
/// and B are stored; leading strides lda, ldb). An empty C launches nothing and loads no
/// package; k == 0 gives zeros.
torch::Tensor product(std::string LinearPackages::*which, const torch::Tensor &a,
                      const torch::Tensor &b, int64_t m, int64_t n, int64_t k, int32_t lda,
                      int32_t ldb) {
  if (m == 0 || n == 0 || k == 0)
    return torch::zeros({m, n}, a.options());
#ifdef TESSEL_HAVE_TORCH_CUDA
  c10::cuda::CUDAGuard guard(a.device()); // the tuned kernel runs on the current device
#endif
  std::string package = linearPackages(a.scalar_type(), int(a.get_device())).*which;
  torch::Tensor c = torch::empty({m, n}, a.options());
  // GridRef keeps a pointer to the callable: it must outlive the launch.
  auto grid = [m, n](const Config &config) {
    return Grid(cdiv(m, config["BLOCK_M"]) * cdiv(n, config["BLOCK_N"]));
  };
  tunedKernel(kOp, package, "matmul")
      .launch(grid,
              {c.data_ptr(), a.data_ptr(), b.data_ptr(), int32_t(m), int32_t(n), int32_t(k), lda,
               ldb, int32_t(n)},
              currentStream());
  return c;
}

/// Saves x's rows and the weight (the casts under autocast, as at::linear does).
struct LinearFunction : public torch::autograd::Function<LinearFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &x,
                               const torch::Tensor &weight) {
    int64_t m = rowCount(x), k = x.size(-1), n = weight.size(0);
    torch::Tensor x2d = rows(x.reshape({m, k})), w = rows(weight);
    torch::Tensor y =
        product(&LinearPackages::forward, x2d, w, m, n, k, leading(x2d), leading(w));
    ctx->save_for_backward({x2d, w});
    ctx->saved_data["shape"] = x.sizes().vec();
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = n;
    return y.view(shape);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    torch::Tensor x2d = saved[0], w = saved[1];
    if (!grads[0].defined()) // the output was not used: undefined gradients read as zeros
      return {torch::Tensor(), torch::Tensor()};
    int64_t m = x2d.size(0), k = x2d.size(1), n = w.size(0);
    torch::Tensor dy = rows(grads[0].reshape({m, n}).to(x2d.scalar_type()));
    torch::Tensor dx, dw;
    if (ctx->needs_input_grad(0))
      dx = product(&LinearPackages::inputGrad, dy, w, m, k, n, leading(dy), leading(w))
               .view(ctx->saved_data["shape"].toIntVector());
    if (ctx->needs_input_grad(1))
      dw = product(&LinearPackages::weightGrad, dy, x2d, n, k, m, leading(dy), leading(x2d));
    return {dx, dw};
  }
};

void requireInt32(int64_t value, const std::string &what, const torch::Tensor &t) {
  if (value > std::numeric_limits<int32_t>::max())
    failOp(kOp, what + " = " + std::to_string(value) +
                    " does not fit the matmul's 32-bit sizes; got " + describe(t));
}

} // namespace

LinearPackages linearPackages(torch::ScalarType dtype, int device) {
  // Resolved once per (dtype, device): every product asks, and the answer looks at files.
  static std::mutex mutex;
  static std::map<std::pair<int, int>, LinearPackages> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::pair{int(dtype), device};
  if (auto it = known.find(key); it != known.end())
    return it->second;
  std::string base = "matmul_" + packageDType(kOp, dtype);
  LinearPackages packages{base + "_bt", base, base + "_at"};
  // Hopper's wgmma build for the one layout it serves (both operands row-major).
  if (Driver::get().deviceInfo(device).capability() == 90 &&
      std::ifstream(packageDir(kOp) + "/" + base + "_sm90a.tslpkg").good())
    packages.inputGrad = base + "_sm90a";
  return known.emplace(key, packages).first->second;
}

torch::Tensor linear(const torch::Tensor &x, const torch::Tensor &weight) {
  requireCudaFloat(kOp, {&x, &weight});
  // Autocast's casts happen here, outside the autograd function, so that the gradients
  // flow back through them to the f32 inputs. cached_cast casts as at::linear does (every
  // floating CUDA input but f64) and keeps autocast's cache of cast weights.
  torch::Tensor xc = x, wc = weight;
  if (at::autocast::is_autocast_enabled(at::kCUDA)) {
    auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
    xc = at::autocast::cached_cast(dtype, x, at::kCUDA);
    wc = at::autocast::cached_cast(dtype, weight, at::kCUDA);
  }
  // The transposed packages are built for these two (kernels/CMakeLists.txt).
  if (xc.scalar_type() != torch::kBFloat16 && xc.scalar_type() != torch::kFloat32)
    failOp(kOp, "dtype must be f32 or bf16; got x " + describe(xc));
  if (wc.scalar_type() != xc.scalar_type())
    failOp(kOp, "x and the weight must have one dtype; got x " + describe(xc) + ", weight " +
                    describe(wc));
  if (xc.dim() < 1 || wc.dim() != 2 || wc.size(1) != xc.size(-1))
    failOp(kOp, "the weight must be [out, in] for x [..., in]; got x " + describe(xc) +
                    ", weight " + describe(wc));
  requireInt32(xc.size(-1), "in_features", xc);
  requireInt32(wc.size(0), "out_features", wc);
  requireInt32(rowCount(xc), "the rows of x", xc);
  return LinearFunction::apply(xc, wc);
}

} // namespace tessel::ops
