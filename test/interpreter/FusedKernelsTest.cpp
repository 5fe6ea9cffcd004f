//===- test/interpreter/FusedKernelsTest.cpp - the training step's kernels on the CPU ===//
//
// kernels/{rmsnorm,swiglu,rope,cross_entropy,adamw}.tsl in the interpreter, f32 and bf16
// storage, ragged sizes (masked edges, several vocabulary tiles, several chunks), against
// C++ references in double computed from the same stored inputs. Bounds: the output's
// rounding to its dtype plus f32 arithmetic over the terms a reduction sums.
//
//===----------------------------------------------------------------------===//
#include "test/interpreter/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace tessel;
using namespace tessel::interp;
using namespace tessel::interp::test;

namespace {

class FusedKernelsTest : public ::testing::TestWithParam<const char *> {
protected:
  std::string dt() const { return GetParam(); }
  /// Relative bound of one output rounded to the storage dtype, after f32 arithmetic.
  double rel() const { return dt() == "f32" ? 4e-6 : 0x1p-8 + 4e-6; }
};

#define EXPECT_WITHIN(got, ref, bound, what)                                                       \
  EXPECT_LE(std::fabs(double(got) - double(ref)), (bound))                                         \
      << what << ": got " << (got) << ", expected " << (ref)

HostTensor f32(size_t n) { return HostTensor("f32", n); }

TEST_P(FusedKernelsTest, RmsNormForwardAndBackward) {
  int rows = 37, n = 300; // BLOCK 1024 masks 724 columns; 3 backward programs of 16 rows
  double eps = 1e-5;
  for (const char *rowsAtOnce : {"R=1", "R=4"}) {
    SCOPED_TRACE(rowsAtOnce);
    SourceKernel fwd = compileKernel("rmsnorm.tsl", "rmsnorm_fwd", {"T=" + dt(), "BLOCK=1024"});
    SourceKernel bwd = compileKernel("rmsnorm.tsl", "rmsnorm_bwd", {"T=" + dt(), "BLOCK=1024", rowsAtOnce});
    SourceKernel colsum = compileKernel("rmsnorm.tsl", "column_sum", {"BLOCK=128", "PARTS=2"});
    ASSERT_TRUE(fwd.kernel && bwd.kernel && colsum.kernel);
    HostTensor x = randomTensor(dt(), size_t(rows * n), 1), dy = randomTensor(dt(), size_t(rows * n), 2);
    HostTensor w = randomTensor("f32", size_t(n), 3), y(dt(), size_t(rows * n)), rstd = f32(rows);
    HostTensor dx(dt(), size_t(rows * n)), partial = f32(size_t(3 * n)), dw = f32(size_t(n));
    MemoryMap mem;
    for (auto [t, name] : {std::pair{&x, "x"}, {&dy, "dy"}, {&w, "w"}, {&y, "y"}, {&rstd, "rstd"},
                           {&dx, "dx"}, {&partial, "partial"}, {&dw, "dw"}})
      mem.add(t->data(), t->bytes.size(), name);
    ASSERT_EQ(run(fwd, {rows}, {y.data(), rstd.data(), x.data(), w.data(), n, n, n, float(eps)}, mem), "");
    ASSERT_EQ(run(bwd, {3}, {dx.data(), partial.data(), dy.data(), x.data(), w.data(), rstd.data(), n,
                            rows, n, 16}, mem), "");
    ASSERT_EQ(run(colsum, {3}, {dw.data(), partial.data(), 3, n}, mem), "");
    std::vector<double> dwRef(size_t(n), 0.0), dwScale(size_t(n), 0.0);
    for (int r = 0; r < rows; ++r) {
      auto at = [&](int c) { return size_t(r * n + c); };
      double ss = 0;
      for (int c = 0; c < n; ++c)
        ss += double(x.get(at(c))) * x.get(at(c));
      double inv = 1 / std::sqrt(ss / n + eps), dot = 0, scale = 0;
      EXPECT_WITHIN(rstd.get(size_t(r)), inv, 1e-5 * inv, "rstd row " << r);
      for (int c = 0; c < n; ++c) {
        double xh = x.get(at(c)) * inv, g = dy.get(at(c)) * double(w.get(size_t(c)));
        dot += xh * g, scale += std::fabs(xh * g);
        dwRef[size_t(c)] += dy.get(at(c)) * xh, dwScale[size_t(c)] += std::fabs(dy.get(at(c)) * xh);
        double ref = xh * w.get(size_t(c));
        EXPECT_WITHIN(y.get(at(c)), ref, rel() * std::fabs(ref) + 1e-6, "y " << r << "," << c);
      }
      for (int c = 0; c < n; ++c) {
        double xh = x.get(at(c)) * inv, g = dy.get(at(c)) * double(w.get(size_t(c)));
        double ref = (g - xh * dot / n) * inv;
        EXPECT_WITHIN(dx.get(at(c)), ref, rel() * std::fabs(ref) + 1e-5 * scale / n * inv + 1e-6,
                      "dx " << r << "," << c);
      }
    }
    for (int c = 0; c < n; ++c)
      EXPECT_WITHIN(dw.get(size_t(c)), dwRef[size_t(c)], 1e-5 * dwScale[size_t(c)] + 1e-6, "dw " << c);
  }
}

// The residual add fused with the norm, x and h in T, delta in bf16 (the f32 instance is
// autocast's mixed package): h = x + delta, y = rmsnorm(h) * w; backward dx = dh + the
// norm's gradient, stored in T and, for delta, in bf16.
TEST_P(FusedKernelsTest, AddRmsNormForwardAndBackward) {
  int rows = 21, n = 300;
  double eps = 1e-5;
  std::vector<std::string> types = {"T=" + dt(), "D=bf16", "BLOCK=1024"};
  SourceKernel fwd = compileKernel("rmsnorm.tsl", "add_rmsnorm_fwd", types);
  types.push_back("R=4");
  SourceKernel bwd = compileKernel("rmsnorm.tsl", "add_rmsnorm_bwd", types);
  SourceKernel colsum = compileKernel("rmsnorm.tsl", "column_sum", {"BLOCK=128", "PARTS=2"});
  ASSERT_TRUE(fwd.kernel && bwd.kernel && colsum.kernel);
  size_t size = size_t(rows * n);
  HostTensor x = randomTensor(dt(), size, 1), delta = randomTensor("bf16", size, 2);
  HostTensor dy = randomTensor("bf16", size, 3), dh = randomTensor(dt(), size, 4);
  HostTensor w = randomTensor("f32", size_t(n), 5), h(dt(), size), y("bf16", size), rstd = f32(rows);
  HostTensor dx(dt(), size), ddelta("bf16", size), partial = f32(size_t(2 * n)), dw = f32(size_t(n));
  MemoryMap mem;
  for (auto [t, name] : {std::pair{&x, "x"}, {&delta, "delta"}, {&dy, "dy"}, {&dh, "dh"},
                         {&w, "w"}, {&h, "h"}, {&y, "y"}, {&rstd, "rstd"}, {&dx, "dx"},
                         {&ddelta, "ddelta"}, {&partial, "partial"}, {&dw, "dw"}})
    mem.add(t->data(), t->bytes.size(), name);
  ASSERT_EQ(run(fwd, {rows}, {h.data(), y.data(), rstd.data(), x.data(), delta.data(), w.data(), n,
                              float(eps)}, mem), "");
  ASSERT_EQ(run(bwd, {2}, {dx.data(), ddelta.data(), partial.data(), dy.data(), dh.data(), h.data(),
                           w.data(), rstd.data(), rows, n, 16, 1}, mem), "");
  ASSERT_EQ(run(colsum, {3}, {dw.data(), partial.data(), 2, n}, mem), "");
  std::vector<double> dwRef(size_t(n), 0.0), dwScale(size_t(n), 0.0);
  for (int r = 0; r < rows; ++r) {
    auto at = [&](int c) { return size_t(r * n + c); };
    double ss = 0;
    for (int c = 0; c < n; ++c) {
      double sum = double(x.get(at(c))) + delta.get(at(c));
      EXPECT_WITHIN(h.get(at(c)), sum, rel() * std::fabs(sum), "h " << r << "," << c);
      ss += double(h.get(at(c))) * h.get(at(c)); // the norm reads h as stored
    }
    double inv = 1 / std::sqrt(ss / n + eps), dot = 0, scale = 0;
    EXPECT_WITHIN(rstd.get(size_t(r)), inv, 1e-5 * inv, "rstd row " << r);
    for (int c = 0; c < n; ++c) {
      double hh = h.get(at(c)) * inv, g = dy.get(at(c)) * double(w.get(size_t(c)));
      dot += hh * g, scale += std::fabs(hh * g);
      dwRef[size_t(c)] += dy.get(at(c)) * hh, dwScale[size_t(c)] += std::fabs(dy.get(at(c)) * hh);
      double ref = hh * w.get(size_t(c));
      // y in delta's dtype (bf16), the next linear's input.
      EXPECT_WITHIN(y.get(at(c)), ref, (0x1p-8 + 4e-6) * std::fabs(ref) + 1e-6, "y " << r << "," << c);
    }
    for (int c = 0; c < n; ++c) {
      double hh = h.get(at(c)) * inv, g = dy.get(at(c)) * double(w.get(size_t(c)));
      double ref = (g - hh * dot / n) * inv + dh.get(at(c));
      double bound = 1e-5 * scale / n * inv + 1e-6;
      EXPECT_WITHIN(dx.get(at(c)), ref, rel() * std::fabs(ref) + bound, "dx " << r << "," << c);
      EXPECT_WITHIN(ddelta.get(at(c)), ref, (0x1p-8 + 4e-6) * std::fabs(ref) + bound,
                    "ddelta " << r << "," << c);
    }
  }
  for (int c = 0; c < n; ++c)
    EXPECT_WITHIN(dw.get(size_t(c)), dwRef[size_t(c)], 1e-5 * dwScale[size_t(c)] + 1e-6, "dw " << c);
}

TEST_P(FusedKernelsTest, SwiGLUForwardAndBackward) {
  int rows = 3, dff = 300, width = 2 * dff; // BLOCK 256: two column blocks, the second ragged
  SourceKernel fwd = compileKernel("swiglu.tsl", "swiglu_fwd", {"T=" + dt(), "BLOCK=256"});
  SourceKernel bwd = compileKernel("swiglu.tsl", "swiglu_bwd", {"T=" + dt(), "BLOCK=256"});
  ASSERT_TRUE(fwd.kernel && bwd.kernel);
  HostTensor h = randomTensor(dt(), size_t(rows * width), 4), g = randomTensor(dt(), size_t(rows * dff), 5);
  HostTensor out(dt(), size_t(rows * dff)), dh(dt(), size_t(rows * width));
  MemoryMap mem;
  for (auto [t, name] : {std::pair{&h, "h"}, {&g, "dout"}, {&out, "out"}, {&dh, "dh"}})
    mem.add(t->data(), t->bytes.size(), name);
  ASSERT_EQ(run(fwd, {rows, 2}, {out.data(), h.data(), dff, width, dff}, mem), "");
  ASSERT_EQ(run(bwd, {rows, 2}, {dh.data(), g.data(), h.data(), dff, width, dff}, mem), "");
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < dff; ++c) {
      double a = h.get(size_t(r * width + c)), b = h.get(size_t(r * width + dff + c));
      double s = 1 / (1 + std::exp(-a)), go = g.get(size_t(r * dff + c));
      double ref = a * s * b, da = go * b * s * (1 + a * (1 - s)), db = go * a * s;
      EXPECT_WITHIN(out.get(size_t(r * dff + c)), ref, rel() * std::fabs(ref) + 1e-6, "out");
      EXPECT_WITHIN(dh.get(size_t(r * width + c)), da, rel() * std::fabs(da) + 1e-6, "da");
      EXPECT_WITHIN(dh.get(size_t(r * width + dff + c)), db, rel() * std::fabs(db) + 1e-6, "db");
    }
}

TEST_P(FusedKernelsTest, RopeForwardAndBackward) {
  // Multi-head (3/3) and grouped-query (4 query heads sharing 2 key/value heads).
  for (auto [heads, kvHeads] : {std::pair{3, 3}, {4, 2}}) {
    SCOPED_TRACE(std::to_string(heads) + "/" + std::to_string(kvHeads) + " heads");
    int batch = 2, seq = 5, half = 8, d = 2 * half, width = (heads + 2 * kvHeads) * d;
    SourceKernel fwd = compileKernel("rope.tsl", "rope_fwd", {"T=" + dt(), "BLOCK=32"});
    SourceKernel bwd = compileKernel("rope.tsl", "rope_bwd", {"T=" + dt(), "BLOCK=32"});
    ASSERT_TRUE(fwd.kernel && bwd.kernel);
    size_t qkvN = size_t(batch * seq * width), qN = size_t(batch * heads * seq * d);
    size_t kvN = size_t(batch * kvHeads * seq * d);
    HostTensor qkv = randomTensor(dt(), qkvN, 6), cos = f32(size_t(seq * half)), sin = f32(size_t(seq * half));
    for (int s = 0; s < seq; ++s)
      for (int i = 0; i < half; ++i) {
        double angle = s * std::pow(10000.0, -2.0 * i / d);
        cos.set(size_t(s * half + i), float(std::cos(angle)));
        sin.set(size_t(s * half + i), float(std::sin(angle)));
      }
    HostTensor q(dt(), qN), k(dt(), kvN), v(dt(), kvN), dqkv(dt(), qkvN);
    MemoryMap mem;
    for (auto [t, name] : {std::pair{&qkv, "qkv"}, {&cos, "cos"}, {&sin, "sin"}, {&q, "q"}, {&k, "k"},
                           {&v, "v"}, {&dqkv, "dqkv"}})
      mem.add(t->data(), t->bytes.size(), name);
    ASSERT_EQ(run(fwd, {batch * seq}, {q.data(), k.data(), v.data(), qkv.data(), cos.data(), sin.data(),
                                       seq, heads, kvHeads, half, width}, mem), "");
    // The backward of the outputs themselves: rotating back gives the projection again.
    ASSERT_EQ(run(bwd, {batch * seq}, {dqkv.data(), q.data(), k.data(), v.data(), cos.data(),
                                       sin.data(), seq, heads, kvHeads, half, width}, mem), "");
    for (int b = 0; b < batch; ++b)
      for (int s = 0; s < seq; ++s)
        for (int part = 0; part < 3; ++part) {
          int partHeads = part == 0 ? heads : kvHeads;
          int start = part == 0 ? 0 : part == 1 ? heads * d : (heads + kvHeads) * d;
          HostTensor &dst = part == 0 ? q : part == 1 ? k : v;
          for (int h = 0; h < partHeads; ++h)
            for (int i = 0; i < half; ++i) {
              size_t src = size_t((b * seq + s) * width + start + h * d + 2 * i);
              size_t out = size_t(((b * partHeads + h) * seq + s) * d + 2 * i);
              double c = cos.get(size_t(s * half + i)), sn = sin.get(size_t(s * half + i));
              double x0 = qkv.get(src), x1 = qkv.get(src + 1);
              double r0 = part == 2 ? x0 : x0 * c - x1 * sn, r1 = part == 2 ? x1 : x0 * sn + x1 * c;
              double bound = rel() * (std::fabs(x0) + std::fabs(x1)) + 1e-6;
              EXPECT_WITHIN(dst.get(out), r0, bound, "part " << part << " head " << h << " pair " << i);
              EXPECT_WITHIN(dst.get(out + 1), r1, bound, "part " << part << " head " << h << " pair " << i);
              // Back through the inverse rotation (two roundings to T on the way).
              EXPECT_WITHIN(dqkv.get(src), x0, 3 * bound, "dqkv part " << part);
              EXPECT_WITHIN(dqkv.get(src + 1), x1, 3 * bound, "dqkv part " << part);
            }
        }
  }
}

TEST_P(FusedKernelsTest, CrossEntropyForwardAndBackward) {
  int rows = 4, vocab = 5003, stride = 5010; // BLOCK 2048: three tiles, the last ragged
  for (const char *statistics : {"SCALAR=False", "SCALAR=True"}) {
    SCOPED_TRACE(statistics);
    SourceKernel fwd = compileKernel("cross_entropy.tsl", "cross_entropy_fwd", {"T=" + dt(), "BLOCK=2048", statistics});
    SourceKernel bwd = compileKernel("cross_entropy.tsl", "cross_entropy_bwd", {"T=" + dt(), "BLOCK=2048"});
    ASSERT_TRUE(fwd.kernel && bwd.kernel);
    HostTensor logits = randomTensor(dt(), size_t(rows * stride), 7, 3.0f);
    std::vector<int64_t> targets = {0, 5002, 2047, -3}; // the last is outside the vocabulary
    HostTensor loss = f32(size_t(rows)), lse = f32(size_t(rows)), dloss = f32(1);
    HostTensor dlogits(dt(), size_t(rows * vocab));
    dloss.set(0, 1.5f);
    MemoryMap mem;
    for (auto [t, name] : {std::pair{&logits, "logits"}, {&loss, "loss"}, {&lse, "lse"},
                           {&dloss, "dloss"}, {&dlogits, "dlogits"}})
      mem.add(t->data(), t->bytes.size(), name);
    mem.add(targets.data(), targets.size() * 8, "targets");
    ASSERT_EQ(run(fwd, {rows}, {loss.data(), lse.data(), logits.data(), targets.data(), stride, vocab}, mem), "");
    float scale = 1.0f / float(rows);
    ASSERT_EQ(run(bwd, {rows}, {dlogits.data(), logits.data(), lse.data(), targets.data(), dloss.data(),
                                scale, stride, vocab, vocab}, mem), "");
    for (int r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0;
      for (int c = 0; c < vocab; ++c)
        m = std::max(m, double(logits.get(size_t(r * stride + c))));
      for (int c = 0; c < vocab; ++c)
        s += std::exp(logits.get(size_t(r * stride + c)) - m);
      double refLse = m + std::log(s);
      EXPECT_WITHIN(lse.get(size_t(r)), refLse, 1e-5 * std::fabs(refLse), "lse row " << r);
      if (targets[size_t(r)] < 0) {
        EXPECT_TRUE(std::isnan(loss.get(size_t(r)))) << "a target outside the vocabulary gives NaN";
        continue;
      }
      double refLoss = refLse - logits.get(size_t(r * stride + targets[size_t(r)]));
      EXPECT_WITHIN(loss.get(size_t(r)), refLoss, 1e-5 * std::fabs(refLse), "loss row " << r);
      for (int c = 0; c < vocab; ++c) {
        double p = std::exp(logits.get(size_t(r * stride + c)) - refLse);
        double ref = (p - (c == targets[size_t(r)])) * 1.5 * scale;
        EXPECT_WITHIN(dlogits.get(size_t(r * vocab + c)), ref, rel() * std::fabs(ref) + 1e-5 * p * 1.5 * scale + 1e-9,
                      "dlogits " << r << "," << c);
      }
    }
  }
}

/// adamw_multi (copy empty) or adamw_multi_copy over three tensors in separate buffers,
/// reached from the lowest address of each kind; the first split into two chunks (the
/// host's chunking), the second skipped by the table. Checked against a double reference;
/// the copy must be exactly the rounding of the new parameter.
void checkAdamW(const std::string &pType, const std::string &gType, const std::string &cType,
                double rel) {
  std::vector<size_t> sizes = {1500, 7, 300};
  bool copy = !cType.empty();
  std::vector<std::string> defines = {"T=" + pType, "G=" + gType, "BLOCK=256"};
  if (copy)
    defines.push_back("C=" + cType);
  SourceKernel k = compileKernel("adamw.tsl", copy ? "adamw_multi_copy" : "adamw_multi", defines);
  ASSERT_TRUE(k.kernel);
  std::vector<HostTensor> p, g, m, v, c;
  MemoryMap mem;
  for (size_t i = 0; i < sizes.size(); ++i) {
    p.push_back(randomTensor(pType, sizes[i], unsigned(10 + i)));
    g.push_back(randomTensor(gType, sizes[i], unsigned(20 + i)));
    m.push_back(randomTensor("f32", sizes[i], unsigned(30 + i), 0.1f));
    HostTensor sq = randomTensor("f32", sizes[i], unsigned(40 + i), 0.1f);
    for (size_t j = 0; j < sizes[i]; ++j)
      sq.set(j, sq.get(j) * sq.get(j));
    v.push_back(sq);
    c.push_back(randomTensor(copy ? cType : pType, sizes[i], unsigned(50 + i)));
  }
  HostTensor steps = f32(3);
  steps.set(0, 3), steps.set(1, 1), steps.set(2, 7);
  auto base = [](std::vector<HostTensor> &ts) {
    size_t lowest = 0;
    for (size_t i = 1; i < ts.size(); ++i)
      if (ts[i].data() < ts[lowest].data())
        lowest = i;
    return lowest;
  };
  auto offset = [](std::vector<HostTensor> &ts, size_t from, size_t i) {
    size_t size = ts[i].dtype == "f32" ? 4 : 2;
    return int64_t((static_cast<uint8_t *>(ts[i].data()) - static_cast<uint8_t *>(ts[from].data())) / ptrdiff_t(size));
  };
  size_t bp = base(p), bg = base(g), bm = base(m), bv = base(v), bc = base(c);
  std::vector<int64_t> table;
  auto chunk = [&](size_t i, int64_t start, int64_t n) {
    for (int64_t value : {offset(p, bp, i) + start, offset(g, bg, i) + start, offset(m, bm, i) + start,
                          offset(v, bv, i) + start, copy ? offset(c, bc, i) + start : 0, n, int64_t(i)})
      table.push_back(value);
  };
  chunk(0, 0, 1024), chunk(0, 1024, 476), chunk(2, 0, 300);
  std::vector<HostTensor> p0 = p, m0 = m, v0 = v, c0 = c;
  for (size_t i = 0; i < sizes.size(); ++i) {
    mem.add(p[i].data(), p[i].bytes.size(), "p" + std::to_string(i));
    mem.add(g[i].data(), g[i].bytes.size(), "g" + std::to_string(i));
    mem.add(m[i].data(), m[i].bytes.size(), "m" + std::to_string(i));
    mem.add(v[i].data(), v[i].bytes.size(), "v" + std::to_string(i));
    mem.add(c[i].data(), c[i].bytes.size(), "c" + std::to_string(i));
  }
  mem.add(steps.data(), steps.bytes.size(), "steps");
  mem.add(table.data(), table.size() * 8, "chunks");
  float lr = 1e-2f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.1f;
  std::vector<Arg> args = {p[bp].data(), g[bg].data(), m[bm].data(), v[bv].data()};
  if (copy)
    args.push_back(c[bc].data());
  for (Arg arg : {Arg(steps.data()), Arg(table.data()), Arg(3), Arg(lr),
                       Arg(b1), Arg(b2), Arg(eps), Arg(wd)})
    args.push_back(arg);
  ASSERT_EQ(run(k, {3}, args, mem), "");
  for (size_t i = 0; i < sizes.size(); ++i)
    for (size_t j = 0; j < sizes[i]; ++j) {
      if (i == 1) { // not in the table: untouched
        ASSERT_EQ(p[i].get(j), p0[i].get(j));
        ASSERT_EQ(c[i].get(j), c0[i].get(j));
        continue;
      }
      double t = steps.get(i), gv = g[i].get(j);
      double mv = b1 * double(m0[i].get(j)) + (1 - b1) * gv;
      double vv = b2 * double(v0[i].get(j)) + (1 - b2) * gv * gv;
      double pv = double(p0[i].get(j)) * (1 - double(lr) * wd);
      pv -= lr / (1 - std::pow(b1, t)) * mv / (std::sqrt(vv) / std::sqrt(1 - std::pow(b2, t)) + eps);
      // f32 sums of two terms: bounded by the terms' size (the sum may cancel).
      double mTerms = std::fabs(b1 * m0[i].get(j)) + std::fabs((1 - b1) * gv);
      double vTerms = std::fabs(b2 * v0[i].get(j)) + std::fabs((1 - b2) * gv * gv);
      EXPECT_WITHIN(m[i].get(j), mv, 1e-6 * mTerms + 1e-12, "m " << i << "," << j);
      EXPECT_WITHIN(v[i].get(j), vv, 1e-6 * vTerms + 1e-15, "v " << i << "," << j);
      // The step's size is lr-scale; bias corrections via exp2/log2 in f32.
      EXPECT_WITHIN(p[i].get(j), pv, rel * std::fabs(pv) + 1e-4 * lr, "p " << i << "," << j);
      if (copy)
        ASSERT_EQ(c[i].get(j), c[i].round(p[i].get(j))) << "copy " << i << "," << j;
      else
        ASSERT_EQ(c[i].get(j), c0[i].get(j)) << "no copy: " << i << "," << j;
    }
}

TEST_P(FusedKernelsTest, AdamWMultiTensor) { checkAdamW(dt(), dt(), "", rel()); }

/// f32 masters, gradients in dt(), the working copy in dt() written in the same pass.
TEST_P(FusedKernelsTest, AdamWMultiTensorWritesWorkingCopy) {
  if (dt() == "f32")
    GTEST_SKIP() << "working copies are bf16 or f16";
  checkAdamW("f32", dt(), dt(), 4e-6);
}

/// f32 masters stepped with gradients in dt() and no copy (ZeRO-1's bf16 reduce-scatter).
TEST_P(FusedKernelsTest, AdamWMultiTensorLowPrecisionGradients) {
  if (dt() == "f32")
    GTEST_SKIP() << "the gradients are bf16 or f16";
  checkAdamW("f32", dt(), "", 4e-6);
}

INSTANTIATE_TEST_SUITE_P(DTypes, FusedKernelsTest, ::testing::Values("f32", "bf16"),
                         [](const auto &info) { return std::string(info.param); });

} // namespace
