//===- test/interpreter/FlashAttentionTest.cpp - kernels/flash_attention.tsl on the CPU -===//
//
// The four attention kernels (forward, backward pre-pass, dK/dV, dQ) run in the interpreter
// on small ragged shapes against attention computed in double from the same rounded inputs:
// the output, the log-sum-exp and the three gradients. q, k and v are strided views of one
// fused buffer (as the model's qkv projection is); dO has its own strides. Query and key
// lengths differ in some cases, causal masks are aligned to the bottom-right corner, and
// rows that see no key must come out as zeros (lse = +inf). The interpreter reports any
// access a mask does not cover, so the ragged edges are checked too. Some cases group the
// query heads over fewer key/value heads (grouped-query attention: the dK/dV kernel writes
// one gradient per query head, which the op sums), and some pad a head dim that is not a
// power of two to the next one's tile (PAD_D: the head dim masked). The score and mask
// functions of examples/attention/ (which import the kernels) run against the same reference
// with the function written out in C++.
//
//===----------------------------------------------------------------------===//
#include "test/interpreter/HostTensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::interp;
using namespace tessel::interp::test;

namespace {

struct Case {
  int batch, heads, seqQ, seqK, head;
  bool causal;
  int blockM, blockN;
  int kvHeads = 0; ///< 0: heads (multi-head attention)
  int tile = 0;    ///< HEAD, the tile's head dim; 0: head
  int window = -1; ///< sliding window: keys left of the diagonal a query sees; -1: none
  int shares = 1;  ///< programs along grid z: shares of the keys (forward, dQ) or queries (dK/dV)
};

/// A (batch, heads, seq, head) view into a buffer: element offsets of its strides.
struct View {
  int64_t sb, sh, ss, offset;
  int64_t at(int b, int h, int s, int d) const { return offset + b * sb + h * sh + s * ss + d; }
};

/// A score and mask function pair as the examples define them, in C++: (scaled score, b, h,
/// query, key) -> score, its derivative in the score, and whether the pair is kept.
struct Variant {
  const char *file = nullptr; ///< examples/attention/<file>; null: the plain kernels
  std::function<double(double, int, int, int, int)> score = [](double s, int, int, int, int) {
    return s;
  };
  std::function<double(double, int, int, int, int)> grad = [](double, int, int, int, int) {
    return 1.0;
  };
  std::function<bool(int, int, int, int)> keep = [](int, int, int, int) { return true; };
  std::vector<float> floats{0.0f};
  std::vector<int32_t> ints{0};
};

/// Attention in double: o, lse, and the gradients for dO.
struct Reference {
  std::vector<double> o, lse, dq, dk, dv;
};

Reference attention(const Case &c, const Variant &var, double scale,
                    const std::function<double(int, int, int, int)> &q,
                    const std::function<double(int, int, int, int)> &k,
                    const std::function<double(int, int, int, int)> &v,
                    const std::function<double(int, int, int, int)> &dout) {
  int B = c.batch, H = c.heads, M = c.seqQ, N = c.seqK, D = c.head;
  Reference r;
  r.o.assign(size_t(B * H * M * D), 0);
  r.lse.assign(size_t(B * H * M), INFINITY);
  r.dq.assign(size_t(B * H * M * D), 0);
  r.dk.assign(size_t(B * H * N * D), 0);
  r.dv.assign(size_t(B * H * N * D), 0);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      size_t bh = size_t(b * H + h);
      std::vector<double> p(size_t(M * N), 0), dp(size_t(M * N), 0), raw(size_t(M * N), 0);
      for (int i = 0; i < M; ++i) {
        double mx = -INFINITY;
        std::vector<double> s(size_t(N), -INFINITY);
        for (int j = 0; j < N; ++j) {
          if ((c.causal && j > i + N - M) || (c.window >= 0 && j < i + N - M - c.window) ||
              !var.keep(b, h, i, j))
            continue;
          double acc = 0;
          for (int d = 0; d < D; ++d)
            acc += q(b, h, i, d) * k(b, h, j, d);
          raw[size_t(i * N + j)] = acc * scale;
          s[size_t(j)] = var.score(acc * scale, b, h, i, j);
          mx = std::max(mx, s[size_t(j)]);
        }
        if (mx == -INFINITY)
          continue; // sees nothing: o = 0, lse = +inf
        double sum = 0;
        for (int j = 0; j < N; ++j)
          sum += std::exp(s[size_t(j)] - mx);
        r.lse[bh * M + size_t(i)] = mx + std::log(sum);
        for (int j = 0; j < N; ++j)
          p[size_t(i * N + j)] = std::exp(s[size_t(j)] - mx) / sum;
      }
      for (int i = 0; i < M; ++i)
        for (int d = 0; d < D; ++d) {
          double acc = 0;
          for (int j = 0; j < N; ++j)
            acc += p[size_t(i * N + j)] * v(b, h, j, d);
          r.o[(bh * M + size_t(i)) * D + size_t(d)] = acc;
        }
      for (int i = 0; i < M; ++i) {
        double delta = 0;
        for (int d = 0; d < D; ++d)
          delta += dout(b, h, i, d) * r.o[(bh * M + size_t(i)) * D + size_t(d)];
        for (int j = 0; j < N; ++j) {
          double acc = 0;
          for (int d = 0; d < D; ++d)
            acc += dout(b, h, i, d) * v(b, h, j, d);
          // dS, through the score function's derivative.
          dp[size_t(i * N + j)] = p[size_t(i * N + j)] * (acc - delta) *
                                  (p[size_t(i * N + j)] ? var.grad(raw[size_t(i * N + j)], b, h, i, j) : 0);
        }
      }
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double pij = p[size_t(i * N + j)], ds = dp[size_t(i * N + j)];
          for (int d = 0; d < D; ++d) {
            r.dv[(bh * N + size_t(j)) * D + size_t(d)] += pij * dout(b, h, i, d);
            r.dq[(bh * M + size_t(i)) * D + size_t(d)] += scale * ds * k(b, h, j, d);
            r.dk[(bh * N + size_t(j)) * D + size_t(d)] += scale * ds * q(b, h, i, d);
          }
        }
    }
  return r;
}

/// Largest |got - want| over the elements, relative to max(1, largest |want|).
/// `where` (if set) places element i of the heads-major reference in `got`.
double relativeError(const HostTensor &got, const std::vector<double> &want,
                     const std::function<size_t(size_t)> &where = nullptr) {
  double err = 0, mag = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(double(got.get(where ? where(i) : i)) - want[i]));
    mag = std::max(mag, std::fabs(want[i]));
  }
  return err / mag;
}

/// Runs the four kernels of `var.file` (or kernels/flash_attention.tsl) on case c in dtype
/// dt and compares them with the reference in double.
void checkCase(const std::string &dt, bool ieee, double tol, const Case &c, const Variant &var) {
  SCOPED_TRACE(dt + (ieee ? " ieee" : "") + " batch " + std::to_string(c.batch) + " heads " +
               std::to_string(c.heads) + " seq_q " + std::to_string(c.seqQ) + " seq_k " +
               std::to_string(c.seqK) + " head " + std::to_string(c.head) +
               (c.causal ? " causal" : "") + " blocks " + std::to_string(c.blockM) + "x" +
               std::to_string(c.blockN) + " kv heads " + std::to_string(c.kvHeads) +
               " tile " + std::to_string(c.tile) + " window " + std::to_string(c.window) +
               " shares " + std::to_string(c.shares) +
               (var.file ? std::string(" ") + var.file : std::string()));
  int tile = c.tile ? c.tile : c.head;
  std::vector<std::string> defines = {
      "T=" + dt,
      std::string("IEEE=") + (ieee ? "True" : "False"),
      std::string("CAUSAL=") + (c.causal ? "True" : "False"),
      "HEAD=" + std::to_string(tile),
      std::string("PAD_D=") + (tile != c.head ? "True" : "False"),
      "BLOCK_M=" + std::to_string(c.blockM),
      "BLOCK_N=" + std::to_string(c.blockN),
      // More than one share: the kernels' SHARES tiles (partials), as the op's small grids.
      std::string("SHARES=") + (c.shares > 1 ? "True" : "False")};
  // A variant imports the kernels (kernels/ is on the import path).
  std::string file = var.file ? std::string("../examples/attention/") + var.file : "flash_attention.tsl";
  SourceKernel fwd = compileKernel(file, "attention_fwd", defines);
  SourceKernel pre = compileKernel(file, "attention_bwd_preprocess",
                                   {"T=" + dt, "HEAD=" + std::to_string(tile), "BLOCK_M=16"});
  SourceKernel dkdv = compileKernel(file, "attention_bwd_dkdv", defines);
  SourceKernel dqk = compileKernel(file, "attention_bwd_dq", defines);
  std::vector<std::string> reduceDefines = {"T=" + dt, "HEAD=" + std::to_string(tile),
                                            "BLOCK_M=16"};
  SourceKernel combine = compileKernel(file, "attention_fwd_combine", reduceDefines);
  SourceKernel sum = compileKernel(file, "attention_bwd_sum", reduceDefines);
  ASSERT_TRUE(fwd.kernel && pre.kernel && dkdv.kernel && dqk.kernel && combine.kernel &&
              sum.kernel);

  int B = c.batch, H = c.heads, M = c.seqQ, N = c.seqK, D = c.head;
  int KV = c.kvHeads ? c.kvHeads : H, group = H / KV;
  int L = std::max(M, N);
  // One fused buffer (batch, seq, heads + 2 kv heads, D + 3), as a qkv projection with
  // padding.
  int64_t rowStride = (H + 2 * KV) * (D + 3);
  HostTensor qkv = randomTensor(dt, size_t(B * L * rowStride), 11, 1.0f);
  View qv{L * rowStride, D + 3, rowStride, 0};
  View kv{L * rowStride, D + 3, rowStride, H * (D + 3)};
  View vv{L * rowStride, D + 3, rowStride, (H + KV) * (D + 3)};
  // dO: (batch, seq, heads, D), i.e. transposed heads.
  View dov{int64_t(M) * H * D, D, int64_t(H) * D, 0};
  HostTensor dout = randomTensor(dt, size_t(B * M * H * D), 12, 1.0f);
  HostTensor o(dt, size_t(B * H * M * D)), dq(dt, size_t(B * H * M * D));
  HostTensor dk(dt, size_t(B * H * N * D)), dv(dt, size_t(B * H * N * D));
  // The outputs' layouts: o contiguous (batch, heads, seq, D), as the forward writes it;
  // dq tokens-major (batch, seq, heads, D), dk and dv heads-major.
  View ov{int64_t(H) * M * D, int64_t(M) * D, D, 0};
  View dqv{int64_t(M) * H * D, D, int64_t(H) * D, 0};
  View dkv{int64_t(H) * N * D, int64_t(N) * D, D, 0};
  HostTensor lse("f32", size_t(B * H * M)), delta("f32", size_t(B * H * M));
  // The shares' partials (c.shares > 1): [share][batch x head][seq][D] f32, and lse's.
  int S = c.shares;
  HostTensor oPart("f32", size_t(S * B * H * M * D)), lsePart("f32", size_t(S * B * H * M));
  HostTensor dqPart("f32", size_t(S * B * H * M * D));
  HostTensor dkPart("f32", size_t(S * B * H * N * D)), dvPart("f32", size_t(S * B * H * N * D));
  MemoryMap mem;
  for (HostTensor *t : {&oPart, &lsePart, &dqPart, &dkPart, &dvPart})
    mem.add(t->data(), t->bytes.size(), "partial");
  mem.add(qkv.data(), qkv.bytes.size(), "qkv");
  mem.add(dout.data(), dout.bytes.size(), "do");
  mem.add(o.data(), o.bytes.size(), "o");
  mem.add(dq.data(), dq.bytes.size(), "dq");
  mem.add(dk.data(), dk.bytes.size(), "dk");
  mem.add(dv.data(), dv.bytes.size(), "dv");
  mem.add(lse.data(), lse.bytes.size(), "lse");
  mem.add(delta.data(), delta.bytes.size(), "delta");
  std::vector<float> floats = var.floats;
  std::vector<int32_t> ints = var.ints;
  mem.add(floats.data(), floats.size() * 4, "mod_floats");
  mem.add(ints.data(), ints.size() * 4, "mod_ints");
  float scale = 1.0f / std::sqrt(float(D));
  auto ptr = [&](const View &w) { return static_cast<void *>(&qkv.bytes[size_t(w.offset) * (dt == "f32" ? 4 : 2)]); };
  auto strides = [](const View &w) {
    return std::vector<Arg>{int(w.sb), int(w.sh), int(w.ss)};
  };
  auto cat = [](std::vector<Arg> a, const std::vector<Arg> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  int64_t qTiles = (M + c.blockM - 1) / c.blockM, kTiles = (N + c.blockN - 1) / c.blockN;
  int window = c.window < 0 ? N : std::min(c.window, N);
  std::vector<Arg> common = {M, N, H, KV, D, window, scale};
  std::vector<Arg> qkvStrides = cat(cat(strides(qv), strides(kv)), strides(vv));
  int64_t rTiles = (M + 15) / 16;
  // Each share's length: a multiple of every tile (32), the whole sequence with one share.
  auto shareOf = [&](int length) { return (length + 32 * S - 1) / (32 * S) * 32; };
  int keyShare = shareOf(N), queryShare = shareOf(M);
  ASSERT_EQ(run(fwd, {qTiles, B * H, S}, cat(cat({o.data(), lse.data(), oPart.data(), lsePart.data(), ptr(qv), ptr(kv), ptr(vv), floats.data(), ints.data()}, common), cat(qkvStrides, {keyShare})), mem), "");
  if (S > 1) {
    ASSERT_EQ(run(combine, {rTiles, B * H}, cat({o.data(), lse.data(), oPart.data(), lsePart.data(), M, H, D, S}, strides(ov)), mem), "");
  }
  ASSERT_EQ(run(pre, {rTiles, B * H}, cat(cat({delta.data(), o.data(), dout.data(), M, H, D}, strides(dov)), strides(ov)), mem), "");
  std::vector<Arg> bwdTail = cat(cat(common, qkvStrides), strides(dov));
  ASSERT_EQ(run(dkdv, {kTiles, B * H, S}, cat(cat({dk.data(), dv.data(), dkPart.data(), dvPart.data(), ptr(qv), ptr(kv), ptr(vv), dout.data(), lse.data(), delta.data(), floats.data(), ints.data()}, bwdTail), cat(strides(dkv), {queryShare})), mem), "");
  ASSERT_EQ(run(dqk, {qTiles, B * H, S}, cat(cat({dq.data(), dqPart.data(), ptr(qv), ptr(kv), ptr(vv), dout.data(), lse.data(), delta.data(), floats.data(), ints.data()}, bwdTail), cat(strides(dqv), {keyShare})), mem), "");
  if (S > 1) {
    ASSERT_EQ(run(sum, {(N + 15) / 16, B * H}, cat({dk.data(), dkPart.data(), N, H, D, S}, strides(dkv)), mem), "");
    ASSERT_EQ(run(sum, {(N + 15) / 16, B * H}, cat({dv.data(), dvPart.data(), N, H, D, S}, strides(dkv)), mem), "");
    ASSERT_EQ(run(sum, {rTiles, B * H}, cat({dq.data(), dqPart.data(), M, H, D, S}, strides(dqv)), mem), "");
  }

  // k and v by query head: h reads key/value head h / group. The reference's dk and dv
  // are per query head, as the kernel writes them.
  auto at = [&](const View &w, int per) {
    return [&, w, per](int b, int h, int s, int d) {
      return double(qkv.get(size_t(w.at(b, h / per, s, d))));
    };
  };
  Reference ref = attention(c, var, scale, at(qv, 1), at(kv, group), at(vv, group), [&](int b, int h, int s, int d) {
    return double(dout.get(size_t(dov.at(b, h, s, d))));
  });
  EXPECT_LE(relativeError(o, ref.o), tol) << "output";
  auto tokensMajor = [&](size_t i) { // heads-major index i -> dq's element
    int d = int(i % D), s = int(i / D % M), h = int(i / D / M % H), b = int(i / D / M / H);
    return size_t(dqv.at(b, h, s, d));
  };
  EXPECT_LE(relativeError(dq, ref.dq, tokensMajor), 2 * tol) << "dq";
  EXPECT_LE(relativeError(dk, ref.dk), 2 * tol) << "dk";
  EXPECT_LE(relativeError(dv, ref.dv), 2 * tol) << "dv";
  for (size_t i = 0; i < ref.lse.size(); ++i) {
    if (std::isinf(ref.lse[i]))
      EXPECT_TRUE(std::isinf(lse.get(i)) && lse.get(i) > 0) << "lse of an empty row " << i;
    else
      EXPECT_NEAR(lse.get(i), ref.lse[i], 1e-3 * (1 + std::fabs(ref.lse[i]))) << "lse " << i;
  }
}

class FlashAttentionTest : public ::testing::TestWithParam<const char *> {
protected:
  /// The parameter as a dtype ("f32ieee": f32 with exact products) and its tolerance: bf16
  /// rounds P to 8 bits before P V; f16 and tf32 to 11.
  struct Precision {
    std::string dt;
    bool ieee;
    double tol;
  };
  Precision precision() const {
    std::string dt = GetParam();
    bool ieee = dt == "f32ieee";
    return {ieee ? "f32" : dt, ieee, dt == "bf16" ? 3e-2 : ieee ? 1e-4 : 6e-3};
  }
};

TEST_P(FlashAttentionTest, ForwardAndBackwardMatchDouble) {
  auto [dt, ieee, tol] = precision();
  const Case cases[] = {
      {1, 1, 1, 1, 16, true, 16, 16},   {2, 3, 37, 37, 16, false, 16, 16},
      {2, 3, 37, 37, 16, true, 16, 16}, {1, 2, 29, 45, 32, true, 32, 16},
      {1, 2, 45, 29, 16, true, 16, 32}, {1, 1, 45, 29, 16, false, 32, 16},
      {1, 1, 64, 64, 32, true, 32, 32},
      {2, 4, 37, 37, 16, true, 16, 16, 2},  {1, 6, 29, 45, 16, false, 16, 32, 1},
      {1, 2, 37, 37, 24, true, 16, 16, 0, 32}, {2, 4, 29, 45, 40, false, 32, 16, 2, 64},
      // Sliding windows narrower than a tile, across several, with lengths that differ.
      {1, 2, 45, 45, 16, true, 16, 16, 0, 0, 7},  {1, 1, 29, 61, 16, false, 16, 16, 0, 0, 20},
      {2, 2, 70, 70, 32, true, 16, 32, 1, 0, 33}, {1, 2, 61, 29, 16, true, 32, 16, 0, 0, 0},
      // The work split into shares along grid z (small grids): ragged, causal with more
      // queries than keys (rows that see nothing), windows, grouped heads, a padded head
      // dim, and more shares than tiles (empty shares).
      {1, 1, 70, 70, 16, true, 16, 16, 0, 0, -1, 3}, {1, 2, 45, 61, 32, false, 16, 32, 1, 0, -1, 2},
      {1, 1, 61, 29, 16, true, 16, 16, 0, 0, -1, 2}, {1, 2, 70, 70, 16, true, 16, 16, 0, 0, 20, 3},
      {1, 2, 37, 37, 24, true, 16, 16, 1, 32, -1, 2}, {1, 1, 29, 29, 16, false, 16, 16, 0, 0, -1, 4},
  };
  for (const Case &c : cases)
    checkCase(dt, ieee, tol, c, Variant());
}

// Each example of examples/attention/ against its function written in C++, on ragged shapes,
// grouped-query heads and a padded head dim among them.
TEST_P(FlashAttentionTest, ScoreAndMaskFunctionsMatchDouble) {
  auto [dt, ieee, tol] = precision();
  std::vector<Variant> variants(6);
  Variant &softcap = variants[0], &alibi = variants[1], &document = variants[2];
  Variant &prefix = variants[3], &window = variants[4], &causal = variants[5];
  softcap.file = "softcap.tsl";
  softcap.floats = {0.75f}; // scaled scores are about N(0, 1): the cap bends most of them
  softcap.score = [](double s, int, int, int, int) { return 0.75 * std::tanh(s / 0.75); };
  softcap.grad = [](double s, int, int, int, int) {
    double t = std::tanh(s / 0.75);
    return 1 - t * t;
  };
  alibi.file = "alibi.tsl";
  alibi.floats = {0.5f, 0.25f, 0.125f, 0.0625f};
  alibi.score = [&alibi](double s, int, int h, int i, int j) {
    return s + double(alibi.floats[size_t(h)]) * (j - i);
  };
  document.file = "document.tsl";
  // Two sequences of 45 tokens: documents [0, 3), [3, 31), [31, 45) and [0, 40), [40, 45);
  // per sequence the ids, then each token's document start and end (as the op lays them).
  auto docEnds = [](int b) { return b == 0 ? std::vector<int>{3, 31, 45} : std::vector<int>{40, 45}; };
  document.ints.clear();
  for (int b = 0; b < 2; ++b) {
    std::vector<int32_t> id, first, last;
    int start = 0, doc = 0;
    for (int end : docEnds(b)) {
      for (int t = start; t < end; ++t)
        id.push_back(10 * b + doc), first.push_back(start), last.push_back(end);
      start = end, ++doc;
    }
    for (const auto *part : {&id, &first, &last})
      document.ints.insert(document.ints.end(), part->begin(), part->end());
  }
  document.keep = [&document](int b, int, int i, int j) {
    return document.ints[size_t(b * 135 + i)] == document.ints[size_t(b * 135 + j)];
  };
  prefix.file = "prefix_lm.tsl";
  prefix.ints = {13, 2};
  prefix.keep = [&prefix](int b, int, int i, int j) {
    return j < prefix.ints[size_t(b)] || j <= i;
  };
  window.file = "sliding_window.tsl";
  window.ints = {5, 3};
  window.keep = [](int, int, int i, int j) { return j >= i - 5 && j <= i + 3; };
  causal.file = "causal.tsl";
  causal.keep = [](int, int, int i, int j) { return j <= i; };
  for (const Variant &var : variants) {
    // The built-in causal mask under a score function; a mask function alone is the mask.
    bool scoreFunction = &var == &softcap || &var == &alibi;
    checkCase(dt, ieee, tol, {2, 4, 45, 45, 16, scoreFunction, 16, 16, 2}, var);
    checkCase(dt, ieee, tol, {2, 2, 45, 45, 24, false, 32, 16, 0, 32}, var);
    // Split into shares: key and query ranges narrowed by the mask, then by the share.
    checkCase(dt, ieee, tol, {2, 2, 45, 45, 16, scoreFunction, 16, 16, 1, 0, -1, 3}, var);
  }
}

/// Packed sequences (examples/attention/varlen.tsl): per query the keys [lo, hi) it sees and
/// per key the queries that may see it, as flashAttentionVarlen lays them out, for sequences
/// at cuQ / cuK; the kernels' result is checked against the rule written directly.
Variant packedSequences(std::vector<int> cuQ, std::vector<int> cuK, bool causal, int window) {
  Variant var;
  var.file = "varlen.tsl";
  auto sequence = [](const std::vector<int> &cu, int t) {
    return int(std::upper_bound(cu.begin(), cu.end(), t) - cu.begin()) - 1;
  };
  // Span [lo, hi) on the other side of token t (the mirror of its offset on the diagonal).
  auto spans = [&](const std::vector<int> &own, const std::vector<int> &other, int before,
                   int after, std::vector<int32_t> &out) {
    std::vector<int32_t> lo, hi;
    for (int t = 0; t < own.back(); ++t) {
      int s = sequence(own, t), start = other[size_t(s)], end = other[size_t(s) + 1];
      int mirror = t - own[size_t(s)] + (end - start) - (own[size_t(s) + 1] - own[size_t(s)]) + start;
      auto clamp = [&](int x) { return std::min(std::max(x, start), end); };
      lo.push_back(clamp(before < 0 ? start : mirror - before));
      hi.push_back(clamp(after < 0 ? end : mirror + after + 1));
    }
    out.insert(out.end(), lo.begin(), lo.end());
    out.insert(out.end(), hi.begin(), hi.end());
  };
  var.ints.clear();
  spans(cuQ, cuK, window, causal ? 0 : -1, var.ints);
  spans(cuK, cuQ, causal ? 0 : -1, window, var.ints);
  var.keep = [=](int, int, int i, int j) {
    int s = sequence(cuQ, i);
    if (j < cuK[size_t(s)] || j >= cuK[size_t(s) + 1])
      return false;
    int qi = i - cuQ[size_t(s)], kj = j - cuK[size_t(s)];
    int diag = (cuK[size_t(s) + 1] - cuK[size_t(s)]) - (cuQ[size_t(s) + 1] - cuQ[size_t(s)]);
    return (!causal || kj <= qi + diag) && (window < 0 || kj >= qi + diag - window);
  };
  return var;
}

// Sequences packed with query and key lengths that differ (one without queries, one without
// keys, one whose first queries see no key under the causal mask), causal or not, with and
// without a window, across tile edges.
TEST_P(FlashAttentionTest, PackedSequencesMatchDouble) {
  auto [dt, ieee, tol] = precision();
  // Sequence 2 has keys and no queries, sequence 3 queries and no keys (they see nothing).
  std::vector<int> cuQ = {0, 3, 20, 20, 30, 45}, cuK = {0, 10, 15, 30, 30, 37};
  for (auto [causal, window] : {std::pair{true, -1}, std::pair{false, -1}, std::pair{true, 4},
                                std::pair{false, 4}})
    for (int shares : {1, 2})
      checkCase(dt, ieee, tol, {1, 4, 45, 37, 16, false, 16, 16, 2, 0, -1, shares},
                packedSequences(cuQ, cuK, causal, window));
  checkCase(dt, ieee, tol, {1, 2, 45, 45, 24, false, 32, 16, 0, 32},
            packedSequences({0, 17, 45}, {0, 17, 45}, true, -1));
}

/// Block-sparse attention (examples/attention/block_sparse.tsl): a table of kept blocks,
/// `block` queries x `block` keys, per batch and head where bm and hm are the batch and
/// heads (1: one table for all), laid out with its runs as tessel::ops::blockSparseInts
/// lays it out. Block (line, column) is kept where `kept` says.
Variant blockSparse(int bm, int hm, int seqQ, int seqK, int block,
                    const std::function<bool(int, int, int, int)> &kept) {
  Variant var;
  var.file = "block_sparse.tsl";
  int qb = (seqQ + block - 1) / block, kb = (seqK + block - 1) / block;
  std::vector<int32_t> table;
  for (int b = 0; b < bm; ++b)
    for (int h = 0; h < hm; ++h)
      for (int i = 0; i < qb; ++i)
        for (int j = 0; j < kb; ++j)
          table.push_back(kept(b, h, i, j));
  // Per line of n blocks: the runs' count, then n (first, end) pairs, the runs first.
  auto runs = [](std::function<bool(int)> at, int n, std::vector<int32_t> &out) {
    std::vector<int32_t> pairs;
    for (int j = 0; j < n; ++j)
      if (at(j) && (j == 0 || !at(j - 1))) {
        int end = j;
        while (end < n && at(end))
          ++end;
        pairs.push_back(j), pairs.push_back(end);
      }
    out.push_back(int32_t(pairs.size() / 2));
    pairs.resize(size_t(2 * n), n);
    out.insert(out.end(), pairs.begin(), pairs.end());
  };
  auto entry = [&](int bh, int i, int j) { return table[size_t((bh * qb + i) * kb + j)] != 0; };
  std::vector<int32_t> rows, columns;
  for (int bh = 0; bh < bm * hm; ++bh) {
    for (int i = 0; i < qb; ++i)
      runs([&](int j) { return entry(bh, i, j); }, kb, rows);
  }
  for (int bh = 0; bh < bm * hm; ++bh)
    for (int j = 0; j < kb; ++j)
      runs([&](int i) { return entry(bh, i, j); }, qb, columns);
  int at = 8 + int(rows.size());
  var.ints = {qb, kb, bm > 1 ? hm : 0, hm > 1 ? 1 : 0, at, at + int(columns.size()), block, 0};
  for (const auto *part : {&rows, &columns, &table})
    var.ints.insert(var.ints.end(), part->begin(), part->end());
  var.keep = [=](int b, int h, int i, int j) {
    return table[size_t((((bm > 1 ? b : 0) * hm + (hm > 1 ? h : 0)) * qb + i / block) * kb +
                        j / block)] != 0;
  };
  return var;
}

// Block masks with runs of every length, a block row and a column with nothing kept (rows
// that see no key), per batch and head or one for all, under the causal diagonal, with
// grouped heads, tiles smaller than the block, and shares.
TEST_P(FlashAttentionTest, BlockSparseMatchesDouble) {
  auto [dt, ieee, tol] = precision();
  // Per (b, h): a pattern that differs, row 2 empty, column 1 empty except on row 4.
  auto scattered = [](int b, int h, int i, int j) {
    if (i == 2 || (j == 1 && i != 4))
      return false;
    return ((i * 7 + j * 3 + b * 5 + h) % 4) != 0;
  };
  checkCase(dt, ieee, tol, {2, 2, 75, 75, 16, false, 16, 16},
            blockSparse(2, 2, 75, 75, 16, scattered));
  checkCase(dt, ieee, tol, {2, 4, 75, 61, 16, true, 16, 16, 2},
            blockSparse(1, 4, 75, 61, 16, scattered));
  // One table for all, blocks of 32 with tiles of 16 and 32, query and key lengths apart.
  checkCase(dt, ieee, tol, {2, 2, 61, 90, 24, false, 16, 32, 1, 32},
            blockSparse(1, 1, 61, 90, 32, scattered));
  checkCase(dt, ieee, tol, {1, 2, 90, 61, 16, true, 32, 16},
            blockSparse(1, 1, 90, 61, 32, [](int, int, int i, int j) { return i != j + 1; }));
  // Shares of the keys (forward, dQ) and of the queries (dK/dV) cut across the runs.
  checkCase(dt, ieee, tol, {1, 2, 90, 90, 16, false, 16, 16, 0, 0, -1, 3},
            blockSparse(1, 2, 90, 90, 16, scattered));
}

INSTANTIATE_TEST_SUITE_P(DTypes, FlashAttentionTest,
                         ::testing::Values("f32", "f32ieee", "bf16", "f16"));

} // namespace
