//===- test/gpu/ops/FusedOpsTest.cpp - the fused ops on the GPU -----------===//
//
// Each op and its gradients against float64 on fresh random inputs (rounded to the storage
// dtype first, so every side sees the same numbers), sizes that are not multiples of the
// tiles, f32 and bf16. Element by element: |got - ref| <= rel * |ref| + abs * scale, where
// rel is the output's rounding (plus f32 arithmetic) and `scale` the size of the terms a
// reduction sums; the linear (Tessel's matmul) within the matmul kernel's own bound. AdamW
// against torch::optim::AdamW over several steps; the whole model with --kernels tessel (and
// --matmul tessel under bf16) against eager; the ops' errors. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "bench/model/AdamW.h"
#include "bench/model/Autocast.h"
#include "bench/model/TransformerLM.h"
#include "bench/ops/FusedOps.h"
#include "runtime/Runtime.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace tessel;

namespace {

bool haveGpu() { return torch::cuda::is_available() && Driver::isAvailable(); }

#define SKIP_WITHOUT_GPU()                                                                         \
  if (!haveGpu())                                                                                  \
  GTEST_SKIP() << "no GPU"

auto f64() { return torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA); }

/// Random values already representable in `dtype`, held in float64.
torch::Tensor randomIn(torch::IntArrayRef shape, torch::ScalarType dtype, double scale = 1.0) {
  return (torch::randn(shape, f64()) * scale).to(dtype).to(torch::kFloat64);
}

/// The relative rounding of one value stored in `dtype` (plus a little f32 arithmetic).
double rounding(torch::ScalarType dtype) {
  return dtype == torch::kFloat32 ? 1e-5 : dtype == torch::kHalf ? 2e-3 : 1.6e-2;
}

/// Every element of `got` within rel * |ref| + absolute of `ref` (absolute: a tensor
/// broadcastable to ref, or a number); reports the count and the worst ones.
void expectClose(const char *what, const torch::Tensor &got, const torch::Tensor &ref, double rel,
                 const torch::Tensor &absolute) {
  ASSERT_EQ(got.sizes(), ref.sizes()) << what;
  torch::Tensor g = got.to(torch::kFloat64), err = (g - ref).abs();
  torch::Tensor bound = rel * ref.abs() + absolute;
  torch::Tensor bad = ~(err <= bound); // NaN counts as bad
  int64_t count = bad.sum().item<int64_t>();
  if (count > 0) {
    int64_t worst = ((err - bound) / bound).nan_to_num(INFINITY).flatten().argmax().item<int64_t>();
    ADD_FAILURE() << what << ": " << count << " of " << ref.numel()
                  << " elements out of bounds; worst at flat index " << worst << ": got "
                  << g.flatten()[worst].item<double>() << ", expected "
                  << ref.flatten()[worst].item<double>() << ", bound "
                  << bound.expand_as(ref).flatten()[worst].item<double>();
  }
}

void expectClose(const char *what, const torch::Tensor &got, const torch::Tensor &ref, double rel,
                 double absolute) {
  expectClose(what, got, ref, rel, torch::full({}, absolute, f64()));
}

class FusedOpsTest : public ::testing::TestWithParam<torch::ScalarType> {
protected:
  void SetUp() override { SKIP_WITHOUT_GPU(); }
  torch::ScalarType dtype() const { return GetParam(); }
};

std::string dtypeName(const ::testing::TestParamInfo<torch::ScalarType> &info) {
  return info.param == torch::kFloat32 ? "f32" : info.param == torch::kBFloat16 ? "bf16" : "f16";
}

TEST_P(FusedOpsTest, RmsNorm) {
  for (auto [rows, n] : {std::pair{37, 1000}, {5, 768}, {130, 1600}, {3, 8192}, {1, 1}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(n));
    torch::Tensor x = randomIn({rows, n}, dtype()), dy = randomIn({rows, n}, dtype());
    torch::Tensor w = randomIn({n}, torch::kFloat32);
    double eps = 1e-5;
    // float64 reference with autograd.
    torch::Tensor xr = x.clone().requires_grad_(true), wr = w.clone().requires_grad_(true);
    torch::Tensor yr = xr * torch::rsqrt(xr.square().mean(-1, true) + eps) * wr;
    yr.backward(dy);
    torch::Tensor xt = x.to(dtype()).requires_grad_(true);
    torch::Tensor wt = w.to(torch::kFloat32).requires_grad_(true);
    torch::Tensor y = ops::rmsNorm(xt, wt, eps);
    EXPECT_EQ(y.scalar_type(), dtype());
    y.backward(dy.to(dtype()));
    double rel = rounding(dtype());
    expectClose("y", y, yr.detach(), rel, 1e-6);
    // dx sums over the row (its mean term): f32 arithmetic on n terms of size |dy w x_hat|.
    torch::Tensor rstd = torch::rsqrt(x.square().mean(-1, true) + eps);
    torch::Tensor rowScale = (dy * w).abs().mean(-1, true) * rstd;
    expectClose("dx", xt.grad(), xr.grad(), rel, rowScale * 4 * rel + 1e-6);
    // dw sums over rows in f32 (from T inputs): bounded by f32's rounding of the sum of |terms|.
    torch::Tensor colScale = (dy * x * rstd).abs().sum(0);
    expectClose("dw", wt.grad(), wr.grad(), 1e-5, colScale * 1e-5 + 1e-6);
  }
}

// The residual add fused with the norm: delta in x's dtype, and (autocast's case) a bf16
// delta added to an f32 x. Both outputs are used downstream, so both gradients flow in.
TEST_P(FusedOpsTest, AddRmsNorm) {
  std::vector<torch::ScalarType> deltaTypes = {dtype()};
  if (dtype() == torch::kFloat32)
    deltaTypes.push_back(torch::kBFloat16);
  for (torch::ScalarType deltaType : deltaTypes)
    for (auto [rows, n] : {std::pair{37, 1000}, {130, 1600}, {3, 8192}, {1, 1}}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(n) + ", delta " +
                   std::string(c10::toString(deltaType)));
      torch::Tensor x = randomIn({rows, n}, dtype()), delta = randomIn({rows, n}, deltaType);
      // y (and dy) in delta's dtype: the next linear's input under autocast.
      torch::Tensor dh = randomIn({rows, n}, dtype()), dy = randomIn({rows, n}, deltaType);
      torch::Tensor w = randomIn({n}, torch::kFloat32);
      double eps = 1e-5;
      // float64 reference: h takes the value the kernel stores (x + delta rounded to x's
      // dtype) with the gradient of x + delta.
      torch::Tensor xr = x.clone().requires_grad_(true), dr = delta.clone().requires_grad_(true);
      torch::Tensor wr = w.clone().requires_grad_(true);
      torch::Tensor sum = x + delta, rounded = sum.to(dtype()).to(torch::kFloat64);
      torch::Tensor hr = xr + dr + (rounded - sum);
      torch::Tensor yr = hr * torch::rsqrt(hr.square().mean(-1, true) + eps) * wr;
      torch::autograd::backward({hr, yr}, {dh, dy});
      torch::Tensor xt = x.to(dtype()).requires_grad_(true);
      torch::Tensor dt = delta.to(deltaType).requires_grad_(true);
      torch::Tensor wt = w.to(torch::kFloat32).requires_grad_(true);
      auto [h, y] = ops::addRmsNorm(xt, dt, wt, eps);
      EXPECT_EQ(h.scalar_type(), dtype());
      EXPECT_EQ(y.scalar_type(), deltaType);
      torch::autograd::backward({h, y}, {dh.to(dtype()), dy.to(deltaType)});
      double rel = rounding(dtype());
      expectClose("h", h, hr.detach(), rel, 1e-6);
      expectClose("y", y, yr.detach(), rounding(deltaType), 1e-6);
      torch::Tensor rstd = torch::rsqrt(rounded.square().mean(-1, true) + eps);
      torch::Tensor rowScale = (dy * w).abs().mean(-1, true) * rstd;
      expectClose("dx", xt.grad(), xr.grad(), rel, rowScale * 4 * rel + 1e-6);
      EXPECT_EQ(dt.grad().scalar_type(), deltaType);
      expectClose("ddelta", dt.grad(), dr.grad(), std::max(rel, rounding(deltaType)),
                  rowScale * 4 * rel + 1e-6);
      torch::Tensor colScale = (dy * rounded * rstd).abs().sum(0);
      expectClose("dw", wt.grad(), wr.grad(), 1e-5, colScale * 1e-5 + 1e-6);
    }
}

TEST_P(FusedOpsTest, SwiGLU) {
  for (auto [rows, dff] : {std::pair{7, 1000}, {33, 1376}, {2, 4097}, {1, 1}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(dff));
    torch::Tensor h = randomIn({rows, 2 * dff}, dtype(), 2.0), dout = randomIn({rows, dff}, dtype());
    torch::Tensor hr = h.clone().requires_grad_(true);
    torch::Tensor outr = torch::silu(hr.narrow(1, 0, dff)) * hr.narrow(1, dff, dff);
    outr.backward(dout);
    torch::Tensor ht = h.to(dtype()).requires_grad_(true);
    torch::Tensor out = ops::swiglu(ht);
    out.backward(dout.to(dtype()));
    double rel = rounding(dtype());
    expectClose("out", out, outr.detach(), rel, 1e-6);
    expectClose("dh", ht.grad(), hr.grad(), rel, 1e-6);
  }
}

TEST_P(FusedOpsTest, RopeFromFusedProjection) {
  // (batch, seq, heads, kv heads, head dim): grouped-query projections too.
  for (auto [batch, seq, heads, kvHeads, dHead] :
       {std::tuple{2, 37, 3, 3, 64}, {1, 5, 25, 25, 64}, {3, 17, 2, 2, 16}, {1, 1, 1, 1, 2},
        {2, 19, 8, 2, 32}, {1, 7, 6, 1, 64}}) {
    SCOPED_TRACE(std::to_string(batch) + "x" + std::to_string(seq) + " heads " +
                 std::to_string(heads) + "/" + std::to_string(kvHeads) + " d " +
                 std::to_string(dHead));
    model::RotaryEmbedding rope(10000.0, dHead, 64, torch::TensorOptions().device(torch::kCUDA));
    int64_t d = heads * dHead, kvd = kvHeads * dHead;
    torch::Tensor qkv = randomIn({batch, seq, d + 2 * kvd}, dtype());
    torch::Tensor dq = randomIn({batch, heads, seq, dHead}, dtype());
    torch::Tensor dk = randomIn({batch, kvHeads, seq, dHead}, dtype());
    torch::Tensor dv = randomIn({batch, kvHeads, seq, dHead}, dtype());
    // The eager model's RoPE on views of the projection, in float64.
    torch::Tensor qkvr = qkv.clone().requires_grad_(true);
    auto split = [&](int64_t start, int64_t h) {
      return qkvr.narrow(-1, start, h * dHead).view({batch, seq, h, dHead}).transpose(1, 2);
    };
    torch::Tensor qr = rope(split(0, heads)), kr = rope(split(d, kvHeads));
    torch::Tensor vr = split(d + kvd, kvHeads);
    torch::autograd::backward({qr, kr, vr}, {dq, dk, dv});
    torch::Tensor qkvt = qkv.to(dtype()).requires_grad_(true);
    auto [q, k, v] = ops::rope(qkvt, rope->cosTable, rope->sinTable, heads, kvHeads);
    EXPECT_TRUE(q.is_contiguous() && k.is_contiguous() && v.is_contiguous());
    torch::autograd::backward({q, k, v}, {dq.to(dtype()), dk.to(dtype()), dv.to(dtype())});
    double rel = rounding(dtype());
    // Each output is a sum of two products of unit-size numbers: f32 on top of the rounding.
    expectClose("q", q, qr.detach(), rel, rel * 2);
    expectClose("k", k, kr.detach(), rel, rel * 2);
    expectClose("v", v, vr.detach(), 0, 0); // copied
    expectClose("dqkv", qkvt.grad(), qkvr.grad(), rel, rel * 2);
  }
}

TEST_P(FusedOpsTest, CrossEntropy) {
  for (auto [rows, vocab] :
       {std::pair{37, 1000}, {9, 10000}, {4, 50257}, {3, 128256}, {2, 1}, {5, 4095}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(vocab));
    torch::Tensor logits = randomIn({rows, vocab}, dtype(), 3.0);
    torch::Tensor targets = torch::randint(vocab, {rows}, torch::TensorOptions()
                                                              .dtype(torch::kLong)
                                                              .device(torch::kCUDA));
    torch::Tensor lr = logits.clone().requires_grad_(true);
    torch::Tensor lossr = at::cross_entropy_loss(lr, targets);
    lossr.backward(torch::full({}, 1.7, f64()));
    torch::Tensor lt = logits.to(dtype()).requires_grad_(true);
    torch::Tensor loss = ops::crossEntropy(lt, targets);
    EXPECT_EQ(loss.scalar_type(), torch::kFloat32);
    loss.backward(torch::full({}, 1.7, torch::TensorOptions().device(torch::kCUDA)));
    // The loss: f32 sums over the vocabulary (relative ~ 1e-6 each), mean over rows.
    expectClose("loss", loss, lossr.detach(), 1e-5, 1e-5);
    // dlogits = (p - onehot) * 1.7 / rows, rounded to T; p from f32 exp and lse.
    double rel = rounding(dtype());
    expectClose("dlogits", lt.grad(), lr.grad(), rel, 1e-5 * 1.7 / rows);
  }
}

TEST_P(FusedOpsTest, CrossEntropyTargetOutsideVocabularyIsNaN) {
  torch::Tensor logits = torch::randn({3, 100}, torch::TensorOptions().device(torch::kCUDA))
                             .to(dtype());
  torch::Tensor targets =
      torch::tensor({5, 100, -1}, torch::TensorOptions().dtype(torch::kLong)).to(torch::kCUDA);
  EXPECT_TRUE(std::isnan(ops::crossEntropy(logits, targets).item<double>()));
  targets = torch::tensor({5, 99, 0}, torch::TensorOptions().dtype(torch::kLong)).to(torch::kCUDA);
  EXPECT_TRUE(std::isfinite(ops::crossEntropy(logits, targets).item<double>()));
}

/// The matmul's bound (test/gpu/matmul/MatmulTests.cpp) past the output's rounding: each
/// product's rounding (tf32 rounds both operands of an f32 product; bf16 products are exact
/// in f32) and the f32 sum's over k terms, times the sum of |terms| (`scale`).
torch::Tensor productBound(torch::ScalarType dtype, int64_t k, const torch::Tensor &scale) {
  double productEps = dtype == torch::kFloat32 ? 0x1p-9 : 0;
  return scale * (productEps + double(k) * 0x1p-22) + 1e-30;
}

/// The relative rounding of a matmul's output stored in `dtype` (round to nearest).
double outputEps(torch::ScalarType dtype) { return dtype == torch::kFloat32 ? 0x1p-23 : 0x1p-8; }

/// ops::linear's y, dX and dW against float64 autograd. x is `view` of a leaf of `xShape`
/// (so dX is checked through the view's layout, its gaps included). x, the weight and dY
/// hold values representable in `dtype`, their storage dtype.
void checkLinear(torch::ScalarType dtype, std::vector<int64_t> xShape, int64_t n,
                 const std::function<torch::Tensor(const torch::Tensor &)> &view) {
  torch::Tensor base = randomIn(xShape, dtype);
  torch::Tensor baser = base.clone().requires_grad_(true);
  torch::Tensor xr = view(baser);
  int64_t k = xr.size(-1);
  torch::Tensor w = randomIn({n, k}, dtype), wr = w.clone().requires_grad_(true);
  torch::Tensor yr = at::matmul(xr, wr.t());
  torch::Tensor dy = randomIn(yr.sizes(), dtype);
  yr.backward(dy);
  torch::Tensor baset = base.to(dtype).requires_grad_(true);
  torch::Tensor wt = w.to(dtype).requires_grad_(true);
  torch::Tensor y = ops::linear(view(baset), wt);
  EXPECT_EQ(y.scalar_type(), dtype);
  y.backward(dy.to(dtype));
  // Each element's |terms| summed: |x| |w|^T, |dy| |w| and |dy|^T |x|.
  torch::Tensor x = view(base).reshape({-1, k}), dy2d = dy.reshape({-1, n});
  double eps = outputEps(dtype);
  expectClose("y", y, yr.detach(), eps,
              productBound(dtype, k, at::matmul(x.abs(), w.abs().t())).view(yr.sizes()));
  // dX reaches the leaf through the view: its bound goes back the same way (the view's
  // backward), zero where the view does not look (the gradient must be exactly 0 there).
  torch::Tensor dxScale = at::matmul(dy2d.abs(), w.abs()).view(xr.sizes());
  torch::Tensor probe = torch::zeros_like(base).requires_grad_(true);
  view(probe).backward(productBound(dtype, n, dxScale));
  expectClose("dx", baset.grad(), baser.grad(), eps, probe.grad());
  expectClose("dw", wt.grad(), wr.grad(), eps,
              productBound(dtype, x.size(0), at::matmul(dy2d.abs().t(), x.abs())));
}

TEST_P(FusedOpsTest, Linear) {
  auto same = [](const torch::Tensor &t) { return t; };
  for (auto [rows, k, n] :
       {std::tuple{37, 100, 65}, {130, 1000, 1600}, {64, 256, 192}, {1, 1, 1}, {3, 17, 1}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(k) + " -> " + std::to_string(n));
    checkLinear(dtype(), {rows, k}, n, same);
  }
  {
    SCOPED_TRACE("x [2, 3, 768], W [2304, 768]");
    checkLinear(dtype(), {2, 3, 768}, 2304, same);
  }
  {
    // Rows 120 elements apart: the kernels get that row stride (no copy).
    SCOPED_TRACE("x a column slice [37, 100] of [37, 120]");
    checkLinear(dtype(), {37, 120}, 65, [](const torch::Tensor &t) { return t.narrow(1, 0, 100); });
  }
  {
    // The attention output's layout into the output projection: [B, H, S, D] -> [B, S, H D].
    SCOPED_TRACE("x [2, 5, 48] from [2, 3, 5, 16] transposed");
    checkLinear(dtype(), {2, 3, 5, 16}, 40,
                [](const torch::Tensor &t) { return t.transpose(1, 2).reshape({2, 5, 48}); });
  }
}

TEST_P(FusedOpsTest, LinearZeroSizes) {
  auto cuda = torch::TensorOptions().dtype(dtype()).device(torch::kCUDA);
  for (auto [rows, k, n] : {std::tuple{0, 5, 3}, {4, 0, 3}, {4, 5, 0}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(k) + " -> " + std::to_string(n));
    torch::Tensor x = torch::randn({rows, k}, cuda).requires_grad_(true);
    torch::Tensor w = torch::randn({n, k}, cuda).requires_grad_(true);
    torch::Tensor y = ops::linear(x, w);
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{rows, n}));
    EXPECT_EQ(y.count_nonzero().item<int64_t>(), 0); // k == 0: empty sums
    y.backward(torch::ones_like(y));
    ASSERT_EQ(x.grad().sizes(), x.sizes());
    ASSERT_EQ(w.grad().sizes(), w.sizes());
    EXPECT_EQ(x.grad().count_nonzero().item<int64_t>(), 0);
    EXPECT_EQ(w.grad().count_nonzero().item<int64_t>(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(DTypes, FusedOpsTest,
                         ::testing::Values(torch::kFloat32, torch::kBFloat16), dtypeName);

/// The model's case: f32 inputs and weight under bf16 autocast run in bf16 (as at::linear),
/// the gradients come back f32 through autocast's casts.
TEST(FusedOpsLinear, AutocastRunsInBf16) {
  SKIP_WITHOUT_GPU();
  auto f32 = torch::TensorOptions().device(torch::kCUDA);
  int64_t rows = 45, k = 200, n = 72;
  torch::Tensor x = torch::randn({3, rows / 3, k}, f32).requires_grad_(true);
  torch::Tensor w = torch::randn({n, k}, f32).requires_grad_(true);
  torch::Tensor y;
  {
    model::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
    y = ops::linear(x, w);
  }
  EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
  torch::Tensor dy = torch::randn(y.sizes(), f32).to(torch::kBFloat16);
  y.backward(dy);
  ASSERT_EQ(x.grad().scalar_type(), torch::kFloat32);
  ASSERT_EQ(w.grad().scalar_type(), torch::kFloat32);
  // float64 from the bf16 casts autocast made.
  auto bf16 = [](const torch::Tensor &t) {
    return t.detach().to(torch::kBFloat16).to(torch::kFloat64);
  };
  torch::Tensor x64 = bf16(x).reshape({rows, k}), w64 = bf16(w), dy64 = bf16(dy).reshape({rows, n});
  double eps = 0x1p-8;
  expectClose("y", y.reshape({rows, n}), at::matmul(x64, w64.t()), eps,
              productBound(torch::kBFloat16, k, at::matmul(x64.abs(), w64.abs().t())));
  expectClose("dx", x.grad().reshape({rows, k}), at::matmul(dy64, w64), eps,
              productBound(torch::kBFloat16, n, at::matmul(dy64.abs(), w64.abs())));
  expectClose("dw", w.grad(), at::matmul(dy64.t(), x64), eps,
              productBound(torch::kBFloat16, rows, at::matmul(dy64.abs().t(), x64.abs())));
}

/// Tessel's AdamW against torch::optim::AdamW, parameter by parameter, over several steps
/// (a tensor larger than a chunk, a scalar, ragged sizes; one parameter skips a step).
TEST(FusedOpsAdamW, MatchesTorchOptimAdamW) {
  SKIP_WITHOUT_GPU();
  ops::installTesselOps();
  auto options = torch::TensorOptions().device(torch::kCUDA);
  std::vector<std::vector<int64_t>> shapes = {{70001}, {}, {37, 41}, {3, 5, 7}, {131072}};
  std::vector<torch::Tensor> mine, theirs;
  for (auto &shape : shapes) {
    torch::Tensor p = torch::randn(shape, options);
    mine.push_back(p.clone().requires_grad_(true));
    theirs.push_back(p.clone().requires_grad_(true));
  }
  model::AdamWOptions o;
  o.lr = 3e-3, o.weightDecay = 0.1, o.impl = model::AdamWImpl::Tessel;
  model::AdamW adamw(mine, o);
  torch::optim::AdamW reference(
      theirs, torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(
                  o.weightDecay));
  for (int step = 0; step < 6; ++step) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      bool skip = step == 2 && i == 2; // no gradient: both optimizers leave it alone
      torch::Tensor g = torch::randn(shapes[i], options);
      mine[i].mutable_grad() = skip ? torch::Tensor() : g.clone();
      theirs[i].mutable_grad() = skip ? torch::Tensor() : g.clone();
    }
    adamw.step();
    reference.step();
    for (size_t i = 0; i < shapes.size(); ++i) {
      SCOPED_TRACE("step " + std::to_string(step) + ", parameter " + std::to_string(i));
      torch::Tensor ref = theirs[i].detach().to(torch::kFloat64);
      expectClose("param", mine[i].detach(), ref, 1e-6, 1e-6);
    }
  }
}

/// f32 parameters with bf16 gradients and no working copy (ZeRO-1 reducing gradients in
/// bf16) step exactly as with those gradients widened to f32: the kernel widens each load.
TEST(FusedOpsAdamW, Bf16GradientsStepAsTheirF32Values) {
  SKIP_WITHOUT_GPU();
  ops::installTesselOps();
  auto options = torch::TensorOptions().device(torch::kCUDA);
  std::vector<std::vector<int64_t>> shapes = {{70001}, {37, 41}, {131072}};
  std::vector<torch::Tensor> mine, theirs;
  for (auto &shape : shapes) {
    torch::Tensor p = torch::randn(shape, options);
    mine.push_back(p.clone());
    theirs.push_back(p.clone());
  }
  model::AdamWOptions o;
  o.lr = 3e-3, o.weightDecay = 0.1, o.impl = model::AdamWImpl::Tessel;
  model::AdamW adamw(mine, o), reference(theirs, o);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      torch::Tensor g = torch::randn(shapes[i], options).to(torch::kBFloat16);
      mine[i].mutable_grad() = g;
      theirs[i].mutable_grad() = g.to(torch::kFloat32);
    }
    adamw.step();
    reference.step();
    for (size_t i = 0; i < shapes.size(); ++i)
      EXPECT_TRUE(torch::equal(mine[i], theirs[i])) << "step " << step << ", parameter " << i;
  }
  // A bf16 parameter with an f32 gradient has no kernel: a clear error.
  torch::Tensor p = torch::randn({8}, options.dtype(torch::kBFloat16));
  p.mutable_grad() = torch::randn({8}, options);
  model::AdamW wrong({p}, o);
  EXPECT_THROW(wrong.step(), std::exception);
}

/// The linears computing with bf16 working copies that AdamW writes (--weight-cast
/// optimizer) against autocast casting the f32 weights: the same bf16 weights and the same
/// bf16 weight gradients, so the same losses and parameters step after step; the copies
/// stay the rounding of the masters. Tessel's AdamW (one pass) and LibTorch's (a copy after).
TEST(FusedOpsAdamW, WorkingCopiesMatchAutocastCasts) {
  SKIP_WITHOUT_GPU();
  ops::installTesselOps();
  model::ModelConfig config;
  config.vocabSize = 1000, config.contextLength = 64, config.dModel = 192, config.dFF = 520;
  config.numLayers = 2, config.numHeads = 3;
  for (model::AdamWImpl impl : {model::AdamWImpl::Tessel, model::AdamWImpl::Fused}) {
    SCOPED_TRACE(model::toString(impl));
    auto train = [&](bool copies) {
      torch::manual_seed(5);
      model::TransformerLM lm(config, torch::kCUDA);
      lm->setKernels(model::KernelImpl::Tessel);
      lm->setAttention(model::AttentionImpl::Tessel);
      model::AdamWOptions o;
      o.lr = 3e-3, o.weightDecay = 0.1, o.impl = impl;
      model::AdamW adamw(lm->parameters(), o);
      if (copies)
        adamw.setWorkingCopies(lm->makeWorkingCopies(torch::kBFloat16));
      auto opts = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
      torch::Tensor tokens = torch::randint(config.vocabSize, {3, 61}, opts);
      torch::Tensor targets = torch::randint(config.vocabSize, {3, 61}, opts);
      std::vector<double> losses;
      for (int step = 0; step < 4; ++step) {
        adamw.zeroGrad();
        torch::Tensor loss;
        {
          model::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
          loss = model::crossEntropy(lm->forward(tokens), targets, model::KernelImpl::Tessel);
        }
        loss.backward();
        adamw.step();
        losses.push_back(loss.item<double>());
      }
      int withCopy = 0;
      for (size_t i = 0; i < adamw.workingCopies().size(); ++i)
        if (const torch::Tensor &c = adamw.workingCopies()[i]; c.defined()) {
          ++withCopy;
          EXPECT_TRUE(torch::equal(c, adamw.params()[i].detach().to(torch::kBFloat16)))
              << "copy " << i << " is not the rounding of its master";
          EXPECT_FALSE(adamw.params()[i].grad().defined()) << "the gradient lands on the copy";
        }
      EXPECT_EQ(withCopy, copies ? 4 * config.numLayers + 1 : 0);
      std::vector<torch::Tensor> flat;
      for (auto &p : lm->parameters())
        flat.push_back(p.detach().flatten());
      return std::pair{losses, torch::cat(flat)};
    };
    auto [castLosses, castParams] = train(false);
    auto [copyLosses, copyParams] = train(true);
    for (size_t step = 0; step < castLosses.size(); ++step)
      EXPECT_NEAR(copyLosses[step], castLosses[step], 1e-6 * std::abs(castLosses[step]))
          << "step " << step;
    double paramErr = (copyParams - castParams).abs().max().item<double>();
    EXPECT_LE(paramErr, 1e-6) << "largest parameter difference after 4 steps";
  }
}

/// A small model's loss and gradients with every Tessel kernel against eager LibTorch,
/// f32 (tight) and under bf16 autocast (bf16 noise; the linears on Tessel's matmul too).
TEST(FusedOpsModel, TesselKernelsMatchEager) {
  SKIP_WITHOUT_GPU();
  ops::installTesselOps();
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16 autocast" : "f32");
    model::ModelConfig config;
    config.vocabSize = 1000, config.contextLength = 64, config.dModel = 192, config.dFF = 520;
    config.numLayers = 2, config.numHeads = 3;
    auto losses = [&](model::KernelImpl kernels, model::AttentionImpl attention,
                      model::MatmulImpl matmul) {
      torch::manual_seed(11);
      model::TransformerLM lm(config, torch::kCUDA);
      lm->setKernels(kernels);
      lm->setAttention(attention);
      lm->setMatmul(matmul);
      auto opts = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
      torch::Tensor tokens = torch::randint(config.vocabSize, {3, 61}, opts);
      torch::Tensor targets = torch::randint(config.vocabSize, {3, 61}, opts);
      torch::Tensor loss;
      {
        model::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16, bf16);
        loss = model::crossEntropy(lm->forward(tokens), targets, kernels);
      }
      loss.backward();
      std::vector<torch::Tensor> grads;
      for (auto &p : lm->parameters())
        grads.push_back(p.grad().flatten());
      return std::pair{loss.item<double>(), torch::cat(grads)};
    };
    auto [eagerLoss, eagerGrads] =
        losses(model::KernelImpl::Eager, model::AttentionImpl::Sdpa, model::MatmulImpl::Torch);
    // f32: SDPA and cuBLAS on both sides (Tessel's attention and matmul would run f32
    // through tf32); under autocast Tessel's attention and matmul too.
    auto [tesselLoss, tesselGrads] =
        bf16 ? losses(model::KernelImpl::Tessel, model::AttentionImpl::Tessel,
                      model::MatmulImpl::Tessel)
             : losses(model::KernelImpl::Tessel, model::AttentionImpl::Sdpa,
                      model::MatmulImpl::Torch);
    double tol = bf16 ? 2e-2 : 1e-4;
    EXPECT_NEAR(tesselLoss, eagerLoss, tol * std::abs(eagerLoss));
    double gradErr = (tesselGrads - eagerGrads).norm().item<double>() /
                     eagerGrads.norm().item<double>();
    EXPECT_LE(gradErr, bf16 ? 3e-2 : 1e-3) << "relative gradient difference";
  }
}

TEST(FusedOpsErrors, NameWhatIsWrong) {
  SKIP_WITHOUT_GPU();
  auto cuda = torch::TensorOptions().device(torch::kCUDA);
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message([] { ops::rmsNorm(torch::ones({2, 4}), torch::ones({4}), 1e-5); })
                .find("rms_norm: every tensor must be on one CUDA device"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::rmsNorm(torch::ones({2, 4}, cuda), torch::ones({5}, cuda), 1e-5); })
                .find("rms_norm: the weight must be [n]"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::rmsNorm(torch::ones({2, 9000}, cuda), torch::ones({9000}, cuda), 1e-5); })
                .find("longer than the 8192"),
            std::string::npos);
  EXPECT_NE(message([&] {
              ops::addRmsNorm(torch::ones({2, 4}, cuda), torch::ones({2, 5}, cuda),
                              torch::ones({4}, cuda), 1e-5);
            }).find("rms_norm: the residual add needs delta of x's shape"),
            std::string::npos);
  EXPECT_NE(message([&] {
              ops::addRmsNorm(torch::ones({2, 4}, cuda.dtype(torch::kBFloat16)),
                              torch::ones({2, 4}, cuda), torch::ones({4}, cuda), 1e-5);
            }).find("delta must have x's dtype"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::swiglu(torch::ones({2, 5}, cuda)); }).find("swiglu: h must be"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::swiglu(torch::ones({2, 4}, cuda.dtype(torch::kFloat64))); })
                .find("swiglu: dtype must be f32, bf16 or f16"),
            std::string::npos);
  torch::Tensor table = torch::ones({8, 2}, cuda);
  EXPECT_NE(message([&] { ops::rope(torch::ones({1, 9, 24}, cuda), table, table, 2); })
                .find("rope: cos and sin must be"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::rope(torch::ones({1, 4, 25}, cuda), table, table, 2); })
                .find("rope: qkv must be"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::rope(torch::ones({1, 4, 40}, cuda), table, table, 6, 4); })
                .find("rope: heads (6) must be a positive multiple of kv_heads (4)"),
            std::string::npos);
  EXPECT_NE(message([&] {
              ops::crossEntropy(torch::ones({3, 10}, cuda), torch::zeros({3}, cuda.dtype(torch::kInt)));
            }).find("cross_entropy: targets must be int64"),
            std::string::npos);
  auto contains = [&](auto fn, const char *text) {
    std::string what = message(fn);
    EXPECT_NE(what.find(text), std::string::npos) << what;
  };
  torch::Tensor x = torch::ones({2, 4}, cuda), w = torch::ones({3, 4}, cuda);
  contains([&] { ops::linear(torch::ones({2, 4}), w); },
           "linear: every tensor must be on one CUDA device");
  contains([&] { ops::linear(x.to(torch::kFloat64), w.to(torch::kFloat64)); },
           "linear: dtype must be f32 or bf16");
  contains([&] { ops::linear(x.to(torch::kHalf), w.to(torch::kHalf)); },
           "linear: dtype must be f32 or bf16");
  contains([&] { ops::linear(x.to(torch::kBFloat16), w); },
           "linear: x and the weight must have one dtype");
  contains([&] { ops::linear(x, torch::ones({3, 5}, cuda)); },
           "linear: the weight must be [out, in] for x [..., in]");
  contains([&] { ops::linear(x, torch::ones({4}, cuda)); },
           "linear: the weight must be [out, in] for x [..., in]");
  // Sizes past 32 bits, without the memory: broadcast views of one element.
  torch::Tensor one = torch::ones({1}, cuda);
  int64_t big = int64_t(1) << 31;
  contains([&] { ops::linear(one.expand({big, 1}), torch::ones({1, 1}, cuda)); },
           "linear: the rows of x = 2147483648 does not fit the matmul's 32-bit sizes");
  contains([&] { ops::linear(torch::ones({2, 1}, cuda), one.expand({big, 1})); },
           "linear: out_features = 2147483648 does not fit");
  contains([&] { ops::linear(one.expand({2, big}), one.expand({1, big})); },
           "linear: in_features = 2147483648 does not fit");
}

} // namespace
