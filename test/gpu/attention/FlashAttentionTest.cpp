//===- test/gpu/attention/FlashAttentionTest.cpp - the attention op on the GPU -===//
//
// tessel::ops::flashAttention against attention in float64 on fresh random inputs, by
// FlashAttention's own rule: Tessel's largest error (output, dq, dk, dv) is at most twice
// that of naive attention computed in the same dtype (bf16/f16 matmuls; f32 through tf32,
// or exact for the exact package), plus a small floor; the log-sum-exp to a tolerance.
// Causal and not, ragged lengths, query length different from key length (causal aligned
// bottom-right), every head dim and dtype, strided views of a fused qkv, autocast, and the
// op's errors. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "bench/ops/FlashAttention.h"
#include "test/gpu/ExpectError.h"
#include "runtime/Runtime.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

using namespace tessel;

namespace {

bool haveGpu() { return torch::cuda::is_available() && Driver::isAvailable(); }

#define SKIP_WITHOUT_GPU()                                                                         \
  if (!haveGpu())                                                                                  \
  GTEST_SKIP() << "no GPU"

/// k or v with each key/value head repeated for the query heads of its group
/// (grouped-query attention); itself for multi-head attention.
torch::Tensor perQueryHead(const torch::Tensor &kv, int64_t heads) {
  return kv.size(1) == heads ? kv : kv.repeat_interleave(heads / kv.size(1), 1);
}

/// q k^T * scale with the bottom-right causal mask (-inf above the diagonal) and a sliding
/// window (-inf more than `window` keys left of it; -1: none).
torch::Tensor maskedScores(const torch::Tensor &q, const torch::Tensor &kIn, bool causal,
                           double scale, int64_t window = -1) {
  torch::Tensor k = perQueryHead(kIn, q.size(1));
  torch::Tensor s = torch::matmul(q, k.transpose(-2, -1)) * scale;
  int64_t lq = q.size(2), lk = k.size(2);
  auto i = torch::arange(lq, q.options().dtype(torch::kLong)).unsqueeze(1);
  auto j = torch::arange(lk, q.options().dtype(torch::kLong)).unsqueeze(0);
  if (causal)
    s = s.masked_fill(j > i + (lk - lq), -INFINITY);
  if (window >= 0)
    s = s.masked_fill(j < i + (lk - lq) - window, -INFINITY);
  return s;
}

/// softmax(maskedScores) v in the dtype of q; rows that see nothing give 0 (as the kernels
/// do).
torch::Tensor naiveAttention(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                             bool causal, double scale, int64_t window = -1) {
  torch::Tensor p =
      torch::softmax(maskedScores(q, k, causal, scale, window), -1).nan_to_num(0.0);
  return torch::matmul(p, perQueryHead(v, q.size(1)));
}

struct Grads {
  torch::Tensor out, dq, dk, dv;
};

/// Output and gradients of `attention` for dO = `dout`, on copies of q, k, v in `dtype`.
template <typename Fn>
Grads run(Fn attention, const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
          const torch::Tensor &dout, torch::ScalarType dtype) {
  auto leaf = [&](const torch::Tensor &t) { return t.to(dtype).detach().requires_grad_(true); };
  torch::Tensor ql = leaf(q), kl = leaf(k), vl = leaf(v);
  torch::Tensor out = attention(ql, kl, vl);
  out.backward(dout.to(dtype));
  return {out.detach(), ql.grad(), kl.grad(), vl.grad()};
}

double maxError(const torch::Tensor &x, const torch::Tensor &ref) {
  return (x.to(torch::kFloat64) - ref).abs().max().item<double>();
}

struct Tolerance {
  double floor; // absolute, for the exact path where the naive error is ~0
};

/// Checks Tessel (dtype) against naive (same dtype) and float64, output and gradients.
void checkCase(int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t d, bool causal,
               torch::ScalarType dtype, bool exact, const std::string &label,
               const std::string &suffix = "auto", int64_t kvHeads = 0, int64_t window = -1) {
  ops::flashAttentionOptions().exactF32 = exact;
  ops::flashAttentionOptions().suffix = suffix;
  SCOPED_TRACE(label + " (" + ops::flashAttentionPackage(dtype, causal, 0) + ")");
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA);
  torch::Tensor q = torch::randn({batch, heads, lq, d}, f64);
  if (kvHeads == 0)
    kvHeads = heads;
  torch::Tensor k = torch::randn({batch, kvHeads, lk, d}, f64);
  torch::Tensor v = torch::randn({batch, kvHeads, lk, d}, f64);
  torch::Tensor dout = torch::randn({batch, heads, lq, d}, f64);
  // Round the inputs to the dtype first: every side then sees the same numbers.
  q = q.to(dtype).to(torch::kFloat64), k = k.to(dtype).to(torch::kFloat64);
  v = v.to(dtype).to(torch::kFloat64), dout = dout.to(dtype).to(torch::kFloat64);
  double scale = 1.0 / std::sqrt(double(d));
  auto naive = [&](auto &a, auto &b, auto &c) {
    return naiveAttention(a, b, c, causal, scale, window);
  };
  ops::AttentionOptions options;
  options.causal = causal, options.scale = scale, options.window = window;
  auto tessel = [&](auto &a, auto &b, auto &c) { return ops::flashAttention(a, b, c, options); };
  at::globalContext().setFloat32MatmulPrecision(exact ? "highest" : "high");
  Grads ref = run(naive, q, k, v, dout, torch::kFloat64);
  Grads base = run(naive, q, k, v, dout, dtype);
  Grads got = run(tessel, q, k, v, dout, dtype);
  at::globalContext().setFloat32MatmulPrecision("highest");
  // The floor: 1e-4 of the largest value for bf16/f16 (whose naive error dwarfs it) and
  // exact f32. tf32 (cuBLAS runs the naive side's small f32 products in full f32 even when
  // tf32 is allowed: its error is ~0): dP = dO V^T (and S) carry tf32's rounding, 2^-11 times
  // sqrt(d) for a dot of d unit-size terms, into dS = P (dP - delta), and an output sums
  // that error over the keys (output, dq) or queries (dk, dv) weighted by P: its size is
  // sqrt(sum of P^2) over the reduction, largest over the elements (1 for a row, up to
  // sqrt(seq_q) for a key every query sees alone). Measured on the H100 where the exact
  // result is 0: seq 1, dq and dk 1.0-1.15e-3 (d = 64); 300 queries into one key, dk
  // 0.005-0.013 and dq 0.0023.
  bool tf32 = dtype == torch::kFloat32 && !exact;
  torch::Tensor p64 =
      torch::softmax(maskedScores(q, k, causal, scale, window), -1).nan_to_num(0.0);
  double rowMass = std::sqrt(p64.square().sum(-1).max().item<double>());
  double colMass = std::sqrt(p64.square().sum(-2).max().item<double>() * double(heads / kvHeads));
  auto check = [&](const char *what, const torch::Tensor &x, const torch::Tensor &b,
                   const torch::Tensor &r, double mass) {
    double mine = maxError(x, r), naiveErr = maxError(b, r);
    double floor = tf32 ? 0x1p-11 * std::sqrt(double(d)) * std::max(mass, 1.0)
                        : exact ? 2e-5 : 1e-4;
    EXPECT_TRUE(std::isfinite(mine)) << what;
    EXPECT_LE(mine, 2 * naiveErr + floor * (1 + r.abs().max().item<double>()))
        << what << ": Tessel's largest error " << mine << ", naive attention's " << naiveErr;
  };
  check("output", got.out, base.out, ref.out, rowMass);
  check("dq", got.dq, base.dq, ref.dq, rowMass);
  check("dk", got.dk, base.dk, ref.dk, colMass);
  check("dv", got.dv, base.dv, ref.dv, colMass);

  // The log-sum-exp (natural log), +inf for rows that see nothing.
  auto [out, lse] =
      ops::flashAttentionForward(q.to(dtype), k.to(dtype), v.to(dtype), causal, scale, window);
  torch::Tensor s = maskedScores(q, k, causal, scale, window);
  torch::Tensor refLse = torch::logsumexp(s, -1).masked_fill(torch::isneginf(torch::logsumexp(s, -1)), INFINITY);
  torch::Tensor lse64 = lse.to(torch::kFloat64);
  EXPECT_TRUE(torch::equal(torch::isinf(lse64), torch::isinf(refLse))) << "lse: infinite rows";
  torch::Tensor finite = torch::isfinite(refLse);
  if (finite.any().item<bool>()) {
    double lseErr = (lse64.masked_select(finite) - refLse.masked_select(finite)).abs().max().item<double>();
    double tol = dtype == torch::kFloat32 ? (exact ? 1e-4 : 2e-3) : 2e-2;
    EXPECT_LE(lseErr, tol) << "lse";
  }
  ops::flashAttentionOptions().exactF32 = false;
  ops::flashAttentionOptions().suffix = "auto";
}

struct DTypeCase {
  const char *name;
  torch::ScalarType dtype;
  bool exact;
  /// The package: "auto" (on an H100 the sm_90a build for bf16 and f16), "" the generic.
  const char *suffix = "auto";
};

class FlashAttentionGpu : public ::testing::TestWithParam<std::tuple<DTypeCase, int>> {};

/// checkCase under the options' prune conditions: 1 when it ran, 0 when they left no tile
/// for this head dim (the message says every config was pruned: fine); any other error
/// fails the test.
int checkUnlessAllPruned(int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t d,
                         bool causal, const DTypeCase &dt, const std::string &label,
                         int64_t window = -1) {
  try {
    checkCase(batch, heads, lq, lk, d, causal, dt.dtype, dt.exact, label, dt.suffix, 0, window);
    return 1;
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("no configuration can run"), std::string::npos)
        << e.what();
    return 0;
  }
}

TEST_P(FlashAttentionGpu, MatchesFloat64ByTheFlashAttentionRule) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(0);
  auto [dt, d] = GetParam();
  for (int64_t seq : {1, 17, 127, 128, 1000, 4099})
    for (bool causal : {false, true}) {
      int64_t heads = seq >= 1000 ? 1 : 3;
      checkCase(2, heads, seq, seq, d, causal, dt.dtype, dt.exact,
                std::string(dt.name) + " d=" + std::to_string(d) + " seq=" + std::to_string(seq) +
                    (causal ? " causal" : ""),
                dt.suffix);
    }
}

TEST_P(FlashAttentionGpu, QueryAndKeyLengthsDiffer) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(1);
  auto [dt, d] = GetParam();
  // (256, 1000) and (1024, 777): query counts the specialised variant takes (multiples of
  // 16; the key count need not be), so K and V come by the bulk tensor engine on sm_90a
  // with ragged key tiles zero-filled by it, over several query tiles.
  for (auto [lq, lk] : {std::pair<int64_t, int64_t>{1, 300}, {300, 1}, {129, 1000}, {1000, 129},
                        {64, 65}, {256, 1000}, {1024, 777}})
    for (bool causal : {false, true})
      checkCase(1, 2, lq, lk, d, causal, dt.dtype, dt.exact,
                std::string(dt.name) + " d=" + std::to_string(d) + " lq=" + std::to_string(lq) +
                    " lk=" + std::to_string(lk) + (causal ? " causal" : ""),
                dt.suffix);
}

// Every pipeline depth of the tiles, not only the one the autotuner picks: the forward,
// dK/dV and dQ kernels restricted to num_stages == S, then to the two-warpgroup tiles
// (num_warps == 8: the forward's 128 x 128 among them).
TEST_P(FlashAttentionGpu, EveryPipelineDepth) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(4);
  auto [dt, d] = GetParam();
  if (dt.exact)
    GTEST_SKIP() << "the exact package has the same tiles as tf32";
  int checked = 0; // depths with tiles for this head dim: at least one, or nothing was tested
  for (std::string prune : {"num_stages != 1", "num_stages != 2", "num_stages != 3",
                            "num_warps != 8"}) {
    ops::flashAttentionOptions().prune = prune;
    for (auto [lq, lk, causal] : {std::tuple<int64_t, int64_t, bool>{1000, 1000, true},
                                  {777, 1025, false}, {1025, 777, true}}) {
      checked += checkUnlessAllPruned(1, 2, lq, lk, d, causal, dt,
                                      std::string(dt.name) + " d=" + std::to_string(d) +
                                          " pruned: " + prune + " lq=" + std::to_string(lq) +
                                          " lk=" + std::to_string(lk) +
                                          (causal ? " causal" : ""));
    }
  }
  ops::flashAttentionOptions().prune.clear();
  EXPECT_GT(checked, 0) << "no pipeline depth has tiles for d=" << d << ": nothing was checked";
}

// The warp-specialized tiles alone (sm_90a packages; a producer warpgroup copies K and V by
// TMA into rings the consumers release): the forward's, and the dQ kernel's with them. Query
// lengths that are multiples of 16 take the specialised variant, the one whose loads come by
// TMA; key lengths ragged or not, every loop (unmasked, then masked tiles), a program whose
// loops run no tile (causal, more queries than keys), several (batch, head) pairs.
// (lq, lk, causal, window) of the tests that run one tile alone: loops masked and
// unmasked, empty, and three of them (a sliding window).
const std::tuple<int64_t, int64_t, bool, int64_t> kTileCases[] = {
    {1024, 1024, true, -1}, {512, 1000, false, -1}, {256, 1000, true, -1},
    {1024, 256, true, -1},  {128, 64, false, -1},   {2048, 2048, false, -1},
    {1000, 1000, true, 300}, {777, 1300, true, 520}};

TEST_P(FlashAttentionGpu, WarpSpecializedTiles) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(5);
  auto [dt, d] = GetParam();
  if (dt.exact)
    GTEST_SKIP() << "no wgmma for exact f32";
  // Each warp-specialized forward key-tile width in turn (64 and 128 keys). A sliding window
  // gives the forward and dQ three key loops, all of them running tiles: one set of rings
  // carried through the three.
  // Each case runs with the specialized dQ tile where this head dim has one, else with
  // every dQ tile.
  int checked = 0, withDq = 0;
  for (const char *prune : {"not warp_specialize or BLOCK_N != 64",
                            "not warp_specialize or BLOCK_N != 128"}) {
    ops::flashAttentionOptions().forwardPrune = prune;
    for (auto [lq, lk, causal, window] : kTileCases) {
      std::string label = std::string(dt.name) + " d=" + std::to_string(d) +
                          " warp-specialized (" + prune + ") lq=" + std::to_string(lq) +
                          " lk=" + std::to_string(lk) + (causal ? " causal" : "") +
                          " window " + std::to_string(window);
      ops::flashAttentionOptions().queryGradPrune = "not warp_specialize";
      int ran = checkUnlessAllPruned(2, 3, lq, lk, d, causal, dt, label + ", dQ specialized",
                                     window);
      withDq += ran;
      ops::flashAttentionOptions().queryGradPrune.clear();
      if (!ran)
        ran = checkUnlessAllPruned(2, 3, lq, lk, d, causal, dt, label, window);
      checked += ran;
    }
  }
  ops::flashAttentionOptions().forwardPrune.clear();
  std::string package = ops::flashAttentionPackage(dt.dtype, true, 0);
  bool hopper = package.size() > 6 && package.substr(package.size() - 6) == "_sm90a";
  if (hopper && std::string(dt.suffix) == "auto" && (d == 64 || d == 128)) {
    EXPECT_EQ(checked, 16) << "the sm_90a package has warp-specialized 64- and 128-key "
                              "forward tiles for d=" << d;
    if (d == 128) {
      EXPECT_EQ(withDq, 16) << "the sm_90a package has a warp-specialized dQ tile for d=128";
    }
  }
}

// The tiles that keep a loop-invariant operand in shared memory (load(..., shared=True),
// read by wgmma from two descriptors, B a ring slot read K-major): the dK/dV tiles' K and V
// (SHARED_KV), each in turn,
// unsplit (these small grids would otherwise split into shares, whose tiles are others),
// then split into 3 shares; and the forward's Q (SHARED_Q).
TEST_P(FlashAttentionGpu, SharedOperandTiles) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(6);
  auto [dt, d] = GetParam();
  if (dt.exact)
    GTEST_SKIP() << "no wgmma for exact f32";
  int checked = 0, split = 0;
  ops::flashAttentionOptions().shares = 1;
  for (const char *prune : {"not SHARED_KV or BLOCK_N != 64", "not SHARED_KV or BLOCK_N != 128"}) {
    ops::flashAttentionOptions().keyValueGradPrune = prune;
    for (auto [lq, lk, causal, window] : kTileCases) {
      std::string label = std::string(dt.name) + " d=" + std::to_string(d) + " dK/dV (" +
                          prune + ") lq=" + std::to_string(lq) + " lk=" + std::to_string(lk) +
                          (causal ? " causal" : "") + " window " + std::to_string(window);
      checked += checkUnlessAllPruned(2, 3, lq, lk, d, causal, dt, label, window);
    }
  }
  ops::flashAttentionOptions().shares = 3;
  ops::flashAttentionOptions().keyValueGradPrune = "not SHARED_KV or not SHARES";
  for (auto [lq, lk, causal] : {std::tuple<int64_t, int64_t, bool>{1000, 1000, true},
                                {777, 1300, false}, {1300, 777, true}})
    split += checkUnlessAllPruned(1, 2, lq, lk, d, causal, dt,
                                  std::string(dt.name) + " d=" + std::to_string(d) +
                                      " dK/dV SHARED_KV, 3 shares, lq=" + std::to_string(lq) +
                                      " lk=" + std::to_string(lk) + (causal ? " causal" : ""));
  ops::flashAttentionOptions().shares = 1;
  ops::flashAttentionOptions().keyValueGradPrune.clear();
  // The forward's tile that reads Q from shared memory (SHARED_Q, warp-specialized).
  int forward = 0;
  ops::flashAttentionOptions().forwardPrune = "not SHARED_Q";
  for (auto [lq, lk, causal, window] :
       {std::tuple<int64_t, int64_t, bool, int64_t>{1024, 1024, true, -1},
        {512, 1000, false, -1}, {1024, 256, true, -1}, {777, 1300, true, 520}})
    forward += checkUnlessAllPruned(2, 3, lq, lk, d, causal, dt,
                                    std::string(dt.name) + " d=" + std::to_string(d) +
                                        " forward SHARED_Q lq=" + std::to_string(lq) +
                                        " lk=" + std::to_string(lk) + (causal ? " causal" : "") +
                                        " window " + std::to_string(window),
                                    window);
  ops::flashAttentionOptions().forwardPrune.clear();
  ops::flashAttentionOptions().shares = 0;
  std::string package = ops::flashAttentionPackage(dt.dtype, true, 0);
  bool hopper = package.size() > 6 && package.substr(package.size() - 6) == "_sm90a";
  if (hopper && std::string(dt.suffix) == "auto" && d == 128) {
    EXPECT_EQ(checked, 16) << "the sm_90a package has 64- and 128-key SHARED_KV dK/dV tiles "
                              "for d=128";
    EXPECT_EQ(split, 3) << "the sm_90a package's d=128 share tile of dK/dV is SHARED_KV";
    EXPECT_EQ(forward, 4) << "the sm_90a package has a SHARED_Q forward tile for d=128";
  }
}

/// One shape of the variant tests: heads over kv heads, lengths, head dim, window (-1: none).
struct VariantShape {
  int64_t heads, kvHeads, seqQ, seqK, d, window;
};

/// checkCase on `s`, causal and full.
void checkVariant(const DTypeCase &dt, int64_t batch, const VariantShape &s) {
  for (bool causal : {false, true})
    checkCase(batch, s.heads, s.seqQ, s.seqK, s.d, causal, dt.dtype, dt.exact,
              std::string(dt.name) + " heads " + std::to_string(s.heads) + "/" +
                  std::to_string(s.kvHeads) + " d=" + std::to_string(s.d) + " window " +
                  std::to_string(s.window) + " seq " + std::to_string(s.seqQ) + "x" +
                  std::to_string(s.seqK) + (causal ? " causal" : ""),
              dt.suffix, s.kvHeads, s.window);
}

// Grouped-query and multi-query attention (k and v with fewer heads; dK and dV summed over
// each group), and head dims between powers of two (the next power's tile, masked), every
// dtype and package, ragged lengths, causal and full.
TEST_P(FlashAttentionGpu, GroupedQueryHeadsAndPaddedHeadDims) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(4);
  auto [dt, d] = GetParam();
  std::vector<VariantShape> shapes = {{8, 2, 300, 300, d, -1}, {6, 1, 129, 77, d, -1}};
  // Head dims that pad to d's tile (72 and 120 are not multiples of 16: the generic variant).
  std::map<int64_t, std::vector<int64_t>> padded = {
      {16, {8}}, {32, {24}}, {64, {40, 56}}, {128, {72, 80, 96, 120}}, {256, {136, 192}}};
  int64_t i = 0;
  for (int64_t p : padded[d])
    shapes.push_back(i++ % 2 ? VariantShape{4, 2, 333, 333, p, -1}
                             : VariantShape{3, 3, 65, 190, p, -1});
  for (const VariantShape &s : shapes)
    checkVariant(dt, 2, s);
}

// Sliding windows (FlashAttention's window_size left): narrower than a tile, across
// several, wider than the sequence; causal and full; with grouped-query heads; query and
// key lengths that differ.
TEST_P(FlashAttentionGpu, SlidingWindow) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(5);
  auto [dt, d] = GetParam();
  for (const VariantShape &s :
       {VariantShape{2, 2, 1000, 1000, d, 0}, VariantShape{4, 2, 1000, 1000, d, 100},
        VariantShape{2, 1, 777, 1300, d, 256}, VariantShape{2, 2, 1300, 777, d, 300},
        VariantShape{2, 2, 200, 200, d, 5000}})
    checkVariant(dt, 1, s);
}

// A grid with fewer programs than SMs splits its keys (forward, dQ) or queries (dK/dV) into
// shares merged by a second kernel; here each share count forced (1: never split; 3 and 7,
// ragged, some shares empty): lengths that differ, rows that see nothing (causal, more
// queries than keys), a sliding window, grouped-query heads.
TEST_P(FlashAttentionGpu, SharesOfSmallGrids) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(6);
  auto [dt, d] = GetParam();
  for (int shares : {1, 3, 7}) {
    ops::flashAttentionOptions().shares = shares;
    for (auto [lq, lk, causal, window, kv] :
         {std::tuple<int64_t, int64_t, bool, int64_t, int64_t>{1000, 1000, true, -1, 0},
          {777, 1500, false, -1, 0}, {1500, 777, true, -1, 0}, {2048, 2048, true, 300, 0},
          {1300, 1300, false, -1, 1}})
      checkCase(1, 2, lq, lk, d, causal, dt.dtype, dt.exact,
                std::string(dt.name) + " d=" + std::to_string(d) + " shares " +
                    std::to_string(shares) + " lq=" + std::to_string(lq) +
                    " lk=" + std::to_string(lk) + (causal ? " causal" : "") +
                    " window " + std::to_string(window) + " kv heads " + std::to_string(kv),
                dt.suffix, kv, window);
  }
  ops::flashAttentionOptions().shares = 0;
}

INSTANTIATE_TEST_SUITE_P(
    DTypesAndHeadDims, FlashAttentionGpu,
    ::testing::Combine(::testing::Values(DTypeCase{"bf16", torch::kBFloat16, false},
                                         DTypeCase{"f16", torch::kHalf, false},
                                         DTypeCase{"bf16_generic", torch::kBFloat16, false, ""},
                                         DTypeCase{"f32", torch::kFloat32, false},
                                         DTypeCase{"f32_exact", torch::kFloat32, true}),
                       ::testing::Values(16, 32, 64, 128, 256)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) + "_d" +
             std::to_string(std::get<1>(info.param));
    });

// q, k, v as views of one fused projection (batch, seq, 3 * heads * d), as the model makes
// them, and dO with its own strides: same numbers as contiguous copies.
TEST(FlashAttentionViews, FusedQkvViewsMatchContiguousCopies) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(2);
  int64_t batch = 2, seq = 333, heads = 4, d = 64;
  auto opts = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  torch::Tensor qkv = torch::randn({batch, seq, 3 * heads * d}, opts).requires_grad_(true);
  auto split = [&](torch::Tensor t, int i) {
    return t.narrow(-1, i * heads * d, heads * d).view({batch, seq, heads, d}).transpose(1, 2);
  };
  torch::Tensor out = ops::flashAttention(split(qkv, 0), split(qkv, 1), split(qkv, 2), true);
  torch::Tensor dout = torch::randn({batch, seq, heads, d}, opts).transpose(1, 2); // strided
  out.backward(dout);
  torch::Tensor copy = qkv.detach().clone().requires_grad_(true);
  torch::Tensor out2 = ops::flashAttention(split(copy, 0).contiguous(), split(copy, 1).contiguous(),
                                           split(copy, 2).contiguous(), true);
  out2.backward(dout.contiguous());
  EXPECT_TRUE(torch::equal(out, out2));
  EXPECT_TRUE(torch::equal(qkv.grad(), copy.grad()));
}

// Under autocast, f32 inputs run in bf16 and their gradients come back in f32.
TEST(FlashAttentionAutocast, F32InputsRunInTheAutocastDtype) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(3);
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA);
  torch::Tensor q = torch::randn({1, 2, 100, 64}, f32).requires_grad_(true);
  torch::Tensor k = torch::randn({1, 2, 100, 64}, f32), v = torch::randn({1, 2, 100, 64}, f32);
  torch::Tensor out;
  {
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, torch::kBFloat16);
    out = ops::flashAttention(q, k, v, true);
    at::autocast::set_autocast_enabled(at::kCUDA, false);
  }
  EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
  out.sum().backward();
  ASSERT_TRUE(q.grad().defined());
  EXPECT_EQ(q.grad().scalar_type(), torch::kFloat32);
  torch::Tensor ref = ops::flashAttention(q.detach().to(torch::kBFloat16), k.to(torch::kBFloat16),
                                          v.to(torch::kBFloat16), true);
  EXPECT_TRUE(torch::equal(out, ref));
}

using tessel::test::expectError;

TEST(FlashAttentionErrors, BadInputsGetClearMessages) {
  SKIP_WITHOUT_GPU();
  auto cuda = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  torch::Tensor q = torch::randn({1, 2, 8, 64}, cuda);
  expectError([&] { ops::flashAttention(q.cpu(), q.cpu(), q.cpu(), true); }, "one CUDA device");
  expectError([&] { ops::flashAttention(q, q.to(torch::kHalf), q, true); }, "one dtype");
  expectError([&] { ops::flashAttention(q[0], q[0], q[0], true); }, "4-D");
  torch::Tensor q84 = torch::randn({1, 2, 8, 84}, cuda);
  expectError([&] { ops::flashAttention(q84, q84, q84, true); }, "head_dim 84 is not supported");
  torch::Tensor q264 = torch::randn({1, 2, 8, 264}, cuda);
  expectError([&] { ops::flashAttention(q264, q264, q264, true); }, "head_dim 264 is not supported");
  torch::Tensor k = torch::randn({1, 3, 8, 64}, cuda);
  expectError([&] { ops::flashAttention(q, k, k, true); }, "a multiple of k's and v's");
  torch::Tensor k2 = torch::randn({2, 2, 8, 64}, cuda);
  expectError([&] { ops::flashAttention(q, k2, k2, true); }, "agree on batch and head_dim");
  expectError([&] { ops::flashAttention(q, q, q.narrow(2, 0, 4), true); }, "k and v must have one shape");
  torch::Tensor i = torch::ones({1, 2, 8, 64}, cuda.dtype(torch::kInt));
  expectError([&] { ops::flashAttention(i, i, i, true); }, "dtype must be bf16, f16 or f32");
  ops::AttentionOptions badWindow;
  badWindow.window = -5;
  expectError([&] { ops::flashAttention(q, q, q, badWindow); }, "window must be -1");
}

} // namespace
