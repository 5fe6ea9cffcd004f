//===- test/gpu/attention/AttentionVariantsTest.cpp - score/mask variants on the GPU -===//
//
// The packages compiled from examples/attention/ (soft-capping, ALiBi, document masks,
// prefix-LM, a two-sided sliding window, causal as mask functions, block-sparse masks and
// packed sequences)
// through tessel::ops::flashAttention (flashAttentionVarlen) against the same function written with torch ops, in float64,
// by FlashAttention's rule (Tessel's largest error in the output and dq, dk, dv at most
// twice naive attention's in the same dtype, plus a small floor); ragged lengths and grouped-query
// heads; and the op's errors for what it cannot serve. bf16 and f16, the sm_90a and the
// generic packages; skipped without a GPU or without those packages.
//
//===----------------------------------------------------------------------===//
#include "bench/kernels/KernelPackageDir.h"
#include "bench/ops/FlashAttention.h"
#include "test/gpu/ExpectError.h"
#include "runtime/Runtime.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

using namespace tessel;

namespace {

bool haveGpu() { return torch::cuda::is_available() && Driver::isAvailable(); }

/// Skips unless there is a GPU and the variant's package for the test's dtype was built.
#define SKIP_WITHOUT(variant, causal)                                                              \
  if (!haveGpu())                                                                                  \
    GTEST_SKIP() << "no GPU";                                                                      \
  if (!packageBuilt(variant, causal, GetParam().dtype))                                                  \
  GTEST_SKIP() << "no " << variant << " package (ninja tessel-attention-variants)"

bool packageBuilt(const std::string &variant, bool causal, torch::ScalarType dtype) {
  std::string dir = ops::flashAttentionOptions().packageDir;
  if (dir.empty())
    dir = TESSEL_KERNEL_PACKAGE_DIR;
  return std::ifstream(dir + "/" + ops::flashAttentionPackage(dtype, causal, 0, variant) +
                       ".tslpkg")
      .good();
}

/// A dtype's packages: the sm_90a build ("auto" on Hopper) or the generic one ("").
struct VariantPackages {
  torch::ScalarType dtype;
  const char *suffix;
  const char *name;
};

/// Each variant in bf16 and f16, from the sm_90a and the generic packages.
class AttentionVariants : public ::testing::TestWithParam<VariantPackages> {
protected:
  void SetUp() override { ops::flashAttentionOptions().suffix = GetParam().suffix; }
  void TearDown() override { ops::flashAttentionOptions().suffix = "auto"; }
};

/// The variant in torch ops: scaled scores [B, H, Lq, Lk] -> modified scores, -inf where the
/// variant masks them.
using ScoreFn = std::function<torch::Tensor(const torch::Tensor &)>;

torch::Tensor perQueryHead(const torch::Tensor &kv, int64_t heads) {
  return kv.size(1) == heads ? kv : kv.repeat_interleave(heads / kv.size(1), 1);
}

/// Query and key positions [Lq, 1] and [1, Lk] on q's device.
std::pair<torch::Tensor, torch::Tensor> positions(int64_t lq, int64_t lk) {
  auto longs = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
  return {torch::arange(lq, longs).unsqueeze(1), torch::arange(lk, longs).unsqueeze(0)};
}

struct Result {
  torch::Tensor out, dq, dk, dv;
};

Result run(const std::function<torch::Tensor(torch::Tensor, torch::Tensor, torch::Tensor)> &fn,
           const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
           const torch::Tensor &dout, torch::ScalarType dtype) {
  auto leaf = [&](const torch::Tensor &t) { return t.to(dtype).detach().requires_grad_(true); };
  torch::Tensor ql = leaf(q), kl = leaf(k), vl = leaf(v);
  torch::Tensor out = fn(ql, kl, vl);
  out.backward(dout.to(dtype));
  return {out.detach(), ql.grad(), kl.grad(), vl.grad()};
}

/// Normal values rounded to `dtype`, in float64 on the GPU (both sides start from the same).
torch::Tensor roundedRandom(std::vector<int64_t> shape, torch::ScalarType dtype) {
  auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(torch::kCUDA);
  return torch::randn(shape, f64).to(dtype).to(torch::kFloat64);
}

/// FlashAttention's rule for one result: Tessel's largest error against float64 (`ref`) at
/// most twice naive attention's in the same dtype (`naive`), plus a small floor.
void expectFlashAttentionRule(const char *what, const torch::Tensor &got,
                              const torch::Tensor &naive, const torch::Tensor &ref) {
  auto err = [&](const torch::Tensor &t) {
    return (t.to(torch::kFloat64) - ref).abs().max().item<double>();
  };
  double mine = err(got), naiveErr = err(naive);
  EXPECT_TRUE(std::isfinite(mine)) << what;
  EXPECT_LE(mine, 2 * naiveErr + 1e-4 * (1 + ref.abs().max().item<double>()))
      << what << ": Tessel's largest error " << mine << ", naive attention's " << naiveErr;
}

/// Tessel with `options` against `scores` applied to naive attention (causal on top when
/// options.causal), float64 the reference and bf16 the naive error's measure.
void checkVariant(torch::ScalarType dtype, const std::string &label, int64_t batch,
                  int64_t heads, int64_t kvHeads, int64_t seq, int64_t d,
                  const ops::AttentionOptions &options, const ScoreFn &scores) {
  SCOPED_TRACE(label + " batch " + std::to_string(batch) + " heads " + std::to_string(heads) +
               "/" + std::to_string(kvHeads) + " seq " + std::to_string(seq) + " d " +
               std::to_string(d) + (options.causal ? " causal" : ""));
  auto rounded = [&](std::vector<int64_t> shape) { return roundedRandom(shape, dtype); };
  torch::Tensor q = rounded({batch, heads, seq, d}), k = rounded({batch, kvHeads, seq, d});
  torch::Tensor v = rounded({batch, kvHeads, seq, d}), dout = rounded({batch, heads, seq, d});
  double scale = 1.0 / std::sqrt(double(d));
  auto naive = [&](torch::Tensor a, torch::Tensor b, torch::Tensor c) {
    torch::Tensor s = scores(torch::matmul(a, perQueryHead(b, heads).transpose(-2, -1)) * scale);
    if (options.causal) {
      auto [i, j] = positions(seq, seq);
      s = s.masked_fill(j > i, -INFINITY);
    }
    torch::Tensor p = torch::softmax(s, -1).nan_to_num(0.0);
    return torch::matmul(p.to(c.scalar_type()), perQueryHead(c, heads));
  };
  ops::AttentionOptions opts = options;
  opts.scale = scale;
  auto tessel = [&](torch::Tensor a, torch::Tensor b, torch::Tensor c) {
    return ops::flashAttention(a, b, c, opts);
  };
  Result ref = run(naive, q, k, v, dout, torch::kFloat64);
  Result base = run(naive, q, k, v, dout, dtype);
  Result got = run(tessel, q, k, v, dout, dtype);
  expectFlashAttentionRule("output", got.out, base.out, ref.out);
  expectFlashAttentionRule("dq", got.dq, base.dq, ref.dq);
  expectFlashAttentionRule("dk", got.dk, base.dk, ref.dk);
  expectFlashAttentionRule("dv", got.dv, base.dv, ref.dv);
}

/// Every shape a variant runs on: ragged lengths, grouped-query heads, d 64 and 128.
void checkShapes(torch::ScalarType dtype, const std::string &label,
                 const ops::AttentionOptions &options,
                 const std::function<ScoreFn(int64_t batch, int64_t heads, int64_t seq)> &make) {
  for (auto [batch, heads, kvHeads, seq, d] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>{2, 4, 2, 1000, 64},
        {1, 3, 3, 333, 128}, {2, 2, 1, 130, 64}})
    checkVariant(dtype, label, batch, heads, kvHeads, seq, d, options, make(batch, heads, seq));
}

TEST_P(AttentionVariants, SoftCapping) {
  SKIP_WITHOUT("softcap", true);
  torch::manual_seed(10);
  ops::AttentionOptions options;
  options.causal = true, options.softcap = 1.5; // scaled scores ~ N(0, 1): the cap bends them
  checkShapes(GetParam().dtype, "softcap", options, [](int64_t, int64_t, int64_t) {
    return [](const torch::Tensor &s) { return 1.5 * torch::tanh(s / 1.5); };
  });
}

TEST_P(AttentionVariants, Alibi) {
  SKIP_WITHOUT("alibi", true);
  torch::manual_seed(11);
  for (int64_t heads : {4, 3, 2}) {
    auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA);
    // ALiBi's geometric slopes, 2^(-8 (h + 1) / heads).
    torch::Tensor slopes = torch::pow(2.0, -8.0 * (torch::arange(heads, f32) + 1) / double(heads));
    ops::AttentionOptions options;
    options.causal = true, options.alibiSlopes = slopes;
    for (auto [batch, kvHeads, seq, d] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{2, 1, 1000, 64},
                                          {1, heads, 333, 128}}) {
      auto [i, j] = positions(seq, seq);
      torch::Tensor bias = slopes.to(torch::kFloat64).view({heads, 1, 1}) * (j - i).to(torch::kFloat64);
      checkVariant(GetParam().dtype, "alibi", batch, heads, kvHeads, seq, d, options,
                   [bias](const torch::Tensor &s) { return s + bias.to(s.scalar_type()); });
    }
  }
}

TEST_P(AttentionVariants, DocumentMasking) {
  SKIP_WITHOUT("document", true);
  torch::manual_seed(12);
  // Documents of random lengths (a boundary after about one token in `length`), packed;
  // the long ones leave whole tiles inside one document (unmasked by the mask function).
  for (auto [batch, heads, kvHeads, seq, d, length] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, double>{2, 4, 2, 1000, 64, 60},
        {1, 3, 3, 333, 128, 60}, {2, 2, 1, 130, 64, 60}, {2, 2, 2, 1500, 128, 500},
        {1, 4, 2, 2048, 64, 700}}) {
    auto longs = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    torch::Tensor ids = (torch::rand({batch, seq}, longs.dtype(torch::kFloat32)) < 1.0 / length)
                            .to(torch::kLong)
                            .cumsum(1);
    ops::AttentionOptions options;
    options.causal = true, options.documentIds = ids;
    torch::Tensor same = ids.unsqueeze(2) == ids.unsqueeze(1); // [batch, seq, seq]
    checkVariant(GetParam().dtype, "document", batch, heads, kvHeads, seq, d, options,
                 [same](const torch::Tensor &s) {
                   return s.masked_fill(same.unsqueeze(1).logical_not(), -INFINITY);
                 });
  }
}

// Random tables of kept 128 x 128 blocks (about `kept` of them, block row 1 empty: rows
// that see nothing), per batch and head or one for all, with and without the causal
// diagonal, against the table expanded to a dense mask.
TEST_P(AttentionVariants, BlockSparse) {
  SKIP_WITHOUT("block_sparse", false);
  if (!packageBuilt("block_sparse", true, GetParam().dtype))
    GTEST_SKIP() << "no causal block_sparse package (ninja tessel-attention-variants)";
  torch::manual_seed(15);
  auto cuda = torch::TensorOptions().device(torch::kCUDA);
  for (auto [batch, heads, kvHeads, seq, d, perHead, causal, kept] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool, double>{
            2, 4, 2, 1000, 64, true, false, 0.4},
        {1, 3, 3, 333, 128, false, true, 0.6}, {2, 2, 1, 130, 64, true, true, 0.5},
        {1, 4, 4, 2048, 128, true, false, 0.2}, {2, 2, 2, 1500, 64, false, false, 0.7}}) {
    int64_t blocks = (seq + 127) / 128;
    torch::Tensor table = torch::rand({perHead ? batch : 1, perHead ? heads : 1, blocks, blocks},
                                      cuda.dtype(torch::kFloat32)) < kept;
    if (blocks > 1)
      table.select(2, 1).fill_(false);
    ops::AttentionOptions options;
    options.causal = causal, options.blockMask = table;
    auto [i, j] = positions(seq, seq);
    torch::Tensor keep = table.index({torch::indexing::Slice(), torch::indexing::Slice(),
                                      i.squeeze(1) / 128})
                             .index({torch::indexing::Slice(), torch::indexing::Slice(),
                                     torch::indexing::Slice(), j.squeeze(0) / 128});
    checkVariant(GetParam().dtype, "block_sparse", batch, heads, kvHeads, seq, d, options,
                 [keep](const torch::Tensor &s) {
                   return s.masked_fill(keep.logical_not(), -INFINITY);
                 });
  }
}

TEST_P(AttentionVariants, PrefixLM) {
  SKIP_WITHOUT("prefix_lm", false);
  torch::manual_seed(13);
  ops::AttentionOptions options;
  checkShapes(GetParam().dtype, "prefix_lm", options, [&options](int64_t batch, int64_t, int64_t seq) {
    auto longs = torch::TensorOptions().dtype(torch::kLong).device(torch::kCUDA);
    torch::Tensor prefix = torch::randint(0, seq + 1, {batch}, longs);
    options.prefixLengths = prefix;
    auto [i, j] = positions(seq, seq);
    torch::Tensor keep = (j.unsqueeze(0) < prefix.view({batch, 1, 1})) | (j <= i).unsqueeze(0);
    return [keep](const torch::Tensor &s) {
      return s.masked_fill(keep.unsqueeze(1).logical_not(), -INFINITY);
    };
  });
}

TEST_P(AttentionVariants, MaskFunctionsWithTheirOwnData) {
  SKIP_WITHOUT("sliding_window", false);
  torch::manual_seed(14);
  auto ints = torch::TensorOptions().dtype(torch::kInt32).device(torch::kCUDA);
  ops::AttentionOptions window;
  window.variant = {"sliding_window", {}, torch::tensor({100, 7}, ints)};
  checkShapes(GetParam().dtype, "sliding_window", window, [](int64_t, int64_t, int64_t seq) {
    auto [i, j] = positions(seq, seq);
    torch::Tensor keep = (j >= i - 100) & (j <= i + 7);
    return [keep](const torch::Tensor &s) { return s.masked_fill(keep.logical_not(), -INFINITY); };
  });
  if (packageBuilt("causal", false, GetParam().dtype)) {
    ops::AttentionOptions causal;
    causal.variant.name = "causal";
    checkShapes(GetParam().dtype, "causal", causal, [](int64_t, int64_t, int64_t seq) {
      auto [i, j] = positions(seq, seq);
      torch::Tensor keep = j <= i;
      return [keep](const torch::Tensor &s) { return s.masked_fill(keep.logical_not(), -INFINITY); };
    });
  }
}

/// Packed sequences at lengths cuQ / cuK (FlashAttention's varlen) against naive attention
/// over the packed tokens with the mask written out per sequence.
void checkPacked(torch::ScalarType dtype, const std::vector<int64_t> &cuQ,
                 const std::vector<int64_t> &cuK, int64_t heads, int64_t kvHeads, int64_t d,
                 bool causal, int64_t window) {
  SCOPED_TRACE("packed " + std::to_string(cuQ.size() - 1) + " sequences, " +
               std::to_string(cuQ.back()) + " x " + std::to_string(cuK.back()) + " tokens, heads " +
               std::to_string(heads) + "/" + std::to_string(kvHeads) + " d " + std::to_string(d) +
               (causal ? " causal" : "") + " window " + std::to_string(window));
  int64_t tq = cuQ.back(), tk = cuK.back();
  auto rounded = [&](std::vector<int64_t> shape) { return roundedRandom(shape, dtype); };
  torch::Tensor q = rounded({tq, heads, d}), k = rounded({tk, kvHeads, d});
  torch::Tensor v = rounded({tk, kvHeads, d}), dout = rounded({tq, heads, d});
  // keep[i][j]: query i and key j are of one sequence and j is inside i's causal and window
  // bounds, the diagonal aligned bottom-right in that sequence.
  torch::Tensor keep =
      torch::zeros({tq, tk}, torch::TensorOptions().dtype(torch::kBool).device(torch::kCUDA));
  for (size_t s = 0; s + 1 < cuQ.size(); ++s) {
    int64_t lq = cuQ[s + 1] - cuQ[s], lk = cuK[s + 1] - cuK[s];
    auto [i, j] = positions(lq, lk);
    torch::Tensor block = torch::ones({lq, lk}, keep.options());
    if (causal)
      block &= j <= i + (lk - lq);
    if (window >= 0)
      block &= j >= i + (lk - lq - window);
    keep.narrow(0, cuQ[s], lq).narrow(1, cuK[s], lk).copy_(block);
  }
  double scale = 1.0 / std::sqrt(double(d));
  auto naive = [&](torch::Tensor a, torch::Tensor b, torch::Tensor c) {
    torch::Tensor qh = a.transpose(0, 1), kh = perQueryHead(b.transpose(0, 1).unsqueeze(0), heads);
    torch::Tensor s = torch::matmul(qh, kh.squeeze(0).transpose(-2, -1)) * scale;
    torch::Tensor p = torch::softmax(s.masked_fill(keep.logical_not(), -INFINITY), -1).nan_to_num(0.0);
    torch::Tensor vh = perQueryHead(c.transpose(0, 1).unsqueeze(0), heads).squeeze(0);
    return torch::matmul(p.to(c.scalar_type()), vh).transpose(0, 1);
  };
  auto longs = torch::TensorOptions().dtype(torch::kInt32).device(torch::kCUDA);
  ops::AttentionOptions options;
  options.causal = causal, options.window = window, options.scale = scale;
  auto tessel = [&](torch::Tensor a, torch::Tensor b, torch::Tensor c) {
    return ops::flashAttentionVarlen(a, b, c, torch::tensor(cuQ, longs), torch::tensor(cuK, longs),
                                     options);
  };
  Result ref = run(naive, q, k, v, dout, torch::kFloat64);
  Result base = run(naive, q, k, v, dout, dtype);
  Result got = run(tessel, q, k, v, dout, dtype);
  for (auto [what, x, b, r] : {std::tuple{"output", got.out, base.out, ref.out},
                               {"dq", got.dq, base.dq, ref.dq}, {"dk", got.dk, base.dk, ref.dk},
                               {"dv", got.dv, base.dv, ref.dv}}) {
    ASSERT_EQ(x.sizes(), r.sizes()) << what;
    expectFlashAttentionRule(what, x, b, r);
  }
}

/// Cumulative lengths of random sequence lengths in [0, 2 * mean] summing to about total.
std::vector<int64_t> randomCumulative(int64_t count, int64_t mean) {
  std::vector<int64_t> cu = {0};
  for (int64_t i = 0; i < count; ++i)
    cu.push_back(cu.back() + torch::randint(0, 2 * mean + 1, {1}).item<int64_t>());
  return cu;
}

TEST_P(AttentionVariants, PackedSequences) {
  SKIP_WITHOUT("varlen", false);
  torch::manual_seed(15);
  // Self-attention over packed documents (equal q and k lengths, one of length 0 among them).
  std::vector<int64_t> docs = {0, 300, 300, 301, 1000, 1130};
  checkPacked(GetParam().dtype, docs, docs, 4, 2, 64, true, -1);
  checkPacked(GetParam().dtype, docs, docs, 3, 3, 128, false, -1);
  checkPacked(GetParam().dtype, docs, docs, 2, 1, 64, true, 100);
  // A sequence with queries and no keys, one with keys and no queries, a window without the
  // causal mask.
  checkPacked(GetParam().dtype, {0, 100, 100, 400}, {0, 0, 50, 300}, 2, 1, 64, false, 30);
  // Lengths that differ between queries and keys (the diagonal bottom-right in each), random.
  for (int round = 0; round < 2; ++round) {
    std::vector<int64_t> cuQ = randomCumulative(5, 150), cuK = randomCumulative(5, 200);
    checkPacked(GetParam().dtype, cuQ, cuK, 4, 2, round ? 128 : 64, true, round ? 64 : -1);
    checkPacked(GetParam().dtype, cuQ, cuK, 2, 2, 80, false, -1);
  }
}

using tessel::test::expectError;

INSTANTIATE_TEST_SUITE_P(
    DTypes, AttentionVariants,
    ::testing::Values(VariantPackages{torch::kBFloat16, "auto", "bf16"},
                      VariantPackages{torch::kHalf, "auto", "f16"},
                      VariantPackages{torch::kBFloat16, "", "bf16_generic"},
                      VariantPackages{torch::kHalf, "", "f16_generic"}),
    [](const ::testing::TestParamInfo<VariantPackages> &info) {
      return std::string(info.param.name);
    });

TEST(AttentionVariantErrors, WhatTheOpCannotServeGetsAClearError) {
  if (!haveGpu())
    GTEST_SKIP() << "no GPU";
  auto cuda = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  torch::Tensor q = torch::randn({2, 4, 16, 64}, cuda);
  auto call = [&](const ops::AttentionOptions &o) { ops::flashAttention(q, q, q, o); };
  ops::AttentionOptions two;
  two.softcap = 30, two.alibiSlopes = torch::ones({4}, cuda);
  expectError([&] { call(two); }, "one a call");
  ops::AttentionOptions cap;
  cap.softcap = -1;
  expectError([&] { call(cap); }, "softcap must be positive");
  ops::AttentionOptions slopes;
  slopes.alibiSlopes = torch::ones({3}, cuda);
  expectError([&] { call(slopes); }, "alibi_slopes must be floating [heads] = [4]");
  ops::AttentionOptions docs;
  docs.documentIds = torch::zeros({2, 15}, cuda.dtype(torch::kLong));
  expectError([&] { call(docs); }, "document_ids must be integers of shape [2, 16]");
  ops::AttentionOptions prefix;
  prefix.causal = true, prefix.prefixLengths = torch::zeros({2}, cuda.dtype(torch::kLong));
  expectError([&] { call(prefix); }, "call with causal = false");
  ops::AttentionOptions blocks;
  blocks.blockMask = torch::ones({2, 4, 1, 2}, cuda.dtype(torch::kBool));
  expectError([&] { call(blocks); }, "block_mask must be bool or integer [2 or 1, 4 or 1, 1, 1]");
  blocks.blockMask = torch::ones({1, 1, 1, 1}, cuda.dtype(torch::kFloat32));
  expectError([&] { call(blocks); }, "block_mask must be bool or integer");
  ops::AttentionOptions noData;
  noData.variant.name = "sliding_window"; // reads its two extents from ints
  expectError([&] { call(noData); }, "the 'sliding_window' variant reads 0 floats and 2 ints");
  torch::Tensor packed = torch::randn({16, 4, 64}, cuda);
  auto ints = torch::TensorOptions().dtype(torch::kInt32).device(torch::kCUDA);
  auto varlen = [&](std::vector<int> cuQ, std::vector<int> cuK, ops::AttentionOptions o = {}) {
    ops::flashAttentionVarlen(packed, packed, packed, torch::tensor(cuQ, ints),
                              torch::tensor(cuK, ints), o);
  };
  expectError([&] { varlen({0, 5, 16}, {0, 5, 15}); }, "hold 16 query and 15 key tokens");
  expectError([&] { varlen({1, 16}, {0, 16}); }, "cu_seqlens_q must start at 0");
  expectError([&] { varlen({0, 9, 5, 16}, {0, 5, 9, 16}); }, "cu_seqlens_q must not decrease");
  expectError([&] { varlen({0, 16}, {0, 5, 16}); }, "must count the same sequences");
  expectError([&] { varlen({0, 16}, {0, 16}, two); }, "packed sequences take causal, scale");
  expectError([&] { ops::flashAttentionVarlen(q, q, q, torch::tensor({0, 2}, ints),
                                              torch::tensor({0, 2}, ints)); },
              "must be 3-D (total tokens, heads, head_dim)");
  expectError([&] { ops::flashAttentionVarlen(packed, packed, packed, ops::PackedSequences{}); },
              "not made by packSequences");
  ops::AttentionOptions unknown;
  unknown.variant.name = "no_such_variant";
  expectError([&] { call(unknown); }, "no package flash_attention_no_such_variant_bf16");
}

} // namespace
