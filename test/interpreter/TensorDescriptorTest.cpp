//===- test/interpreter/TensorDescriptorTest.cpp - make_tensor_descriptor ---===//
//
// Tensor descriptors run in the interpreter against plain C++ on ragged shapes: blocks
// over the edges on every side (negative offsets included) read `other` outside the
// tensor and write nothing there; strided and 3-D views, 64-bit extents; and a block
// that runs past the tensor without a boundary check is an out-of-bounds access, so the
// check is what keeps the others inside their buffers.
//
//===----------------------------------------------------------------------===//
#include "test/interpreter/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>

#include <string>
#include <tuple>
#include <vector>

using namespace tessel;
using namespace tessel::interp;
using namespace tessel::interp::test;

namespace {

const char *kSource = R"tsl(
@kernel
def scale(out: *f32, x: *f32, m: i32, n: i32, sx: i32, so: i32, r_shift: i32, c_shift: i32,
          BM: constexpr = 16, BN: constexpr = 32):
    src = make_tensor_descriptor(x, [m, n], [sx, 1], [BM, BN])
    dst = make_tensor_descriptor(out, [m, n], [so, 1], [BM, BN])
    r0 = program_id(0) * BM + r_shift
    c0 = program_id(1) * BN + c_shift
    dst.store([r0, c0], src.load([r0, c0]) * 2.0)

@kernel
def window(out: *f32, x: *f32, m: i32, n: i32, sx: i32, r0: i32, c0: i32):
    t = make_tensor_descriptor(x, [m, n], [sx, 1], [8, 16]).load([r0, c0], other=-1.0)
    store(out + arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :], t)

@kernel
def unchecked(out: *f32, x: *f32, m: i32, n: i32, sx: i32, r0: i32):
    t = make_tensor_descriptor(x, [m, n], [sx, 1], [8, 16]).load([r0, 0], boundary_check=(1,))
    store(out + arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :], t)

@kernel
def view3(out: *f32, x: *f32, a: i64, b: i32, c: i32, s0: i64, s1: i32, s2: i32, o0: i64,
          o1: i32, o2: i32):
    t = make_tensor_descriptor(x, [a, b, c], [s0, s1, s2], [2, 4, 8]).load([o0, o1, o2], other=7.0)
    store(out + arange(0, 2)[:, None, None] * 32 + arange(0, 4)[None, :, None] * 8
          + arange(0, 8)[None, None, :], t)
)tsl";

SourceKernel compile(const std::string &kernel) {
  SourceOptions opts;
  opts.kernel = kernel;
  auto compiled = compileSource("descriptors.tsl", kSource, opts);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return SourceKernel();
  }
  return std::move(*compiled);
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i % 1000) + 0.25f;
  return v;
}

TEST(TensorDescriptor, StoresInsideTheTensorOnlyFromAnyCorner) {
  SourceKernel k = compile("scale");
  ASSERT_TRUE(k.kernel);
  // Ragged extents, padded rows, and grids shifted so blocks hang over every edge.
  for (auto [m, n, rShift, cShift] : {std::tuple{37, 45, 0, 0}, {37, 45, -5, -7},
                                      {16, 32, -3, -11}, {1, 1, -15, -31}}) {
    int sx = n + 3, so = n + 5;
    std::vector<float> x = iota(size_t(m) * sx), out(size_t(m) * so, 42.0f);
    MemoryMap mem;
    mem.add(x.data(), x.size() * 4, "x");
    mem.add(out.data(), out.size() * 4, "out");
    int64_t gridM = (m - rShift + 15) / 16 + 1, gridN = (n - cShift + 31) / 32 + 1;
    ASSERT_EQ(run(k, {gridM, gridN}, {out.data(), x.data(), m, n, sx, so, rShift, cShift}, mem),
              "");
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < so; ++j) {
        // Every element inside the tensor written once (the blocks tile it exactly);
        // the row padding beyond n never.
        float want = j < n ? 2.0f * x[size_t(i) * sx + j] : 42.0f;
        ASSERT_EQ(out[size_t(i) * so + j], want)
            << "m=" << m << " n=" << n << " shift " << rShift << "," << cShift << " at " << i
            << "," << j;
      }
  }
}

TEST(TensorDescriptor, ReadsOtherOutsideOnEverySide) {
  SourceKernel k = compile("window");
  ASSERT_TRUE(k.kernel);
  int m = 11, n = 13, sx = 20;
  std::vector<float> x = iota(size_t(m) * sx);
  for (auto [r0, c0] : {std::pair{0, 0}, {-3, -5}, {7, 9}, {-8, 0}, {11, 13}, {5, -16}}) {
    std::vector<float> out(8 * 16, 0.0f);
    MemoryMap mem;
    mem.add(x.data(), x.size() * 4, "x");
    mem.add(out.data(), out.size() * 4, "out");
    ASSERT_EQ(run(k, {1}, {out.data(), x.data(), m, n, sx, r0, c0}, mem), "");
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 16; ++j) {
        int r = r0 + i, c = c0 + j;
        float want = r >= 0 && r < m && c >= 0 && c < n ? x[size_t(r) * sx + c] : -1.0f;
        ASSERT_EQ(out[i * 16 + j], want) << "block at " << r0 << "," << c0 << " element " << i
                                         << "," << j;
      }
  }
}

TEST(TensorDescriptor, WithoutItsCheckABlockReadsOutOfBounds) {
  SourceKernel k = compile("unchecked");
  ASSERT_TRUE(k.kernel);
  int m = 11, n = 13, sx = 13; // no padding: the next row is past the buffer
  std::vector<float> x = iota(size_t(m) * sx), out(8 * 16, 0.0f);
  MemoryMap mem;
  mem.add(x.data(), x.size() * 4, "x");
  mem.add(out.data(), out.size() * 4, "out");
  // Rows 0-7 exist: columns are checked, rows need not be.
  ASSERT_EQ(run(k, {1}, {out.data(), x.data(), m, n, sx, 0}, mem), "");
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 16; ++j)
      ASSERT_EQ(out[i * 16 + j], j < n ? x[size_t(i) * sx + j] : 0.0f) << i << "," << j;
  // Rows 8-15: the unchecked rows past 10 fall outside x.
  std::string error = run(k, {1}, {out.data(), x.data(), m, n, sx, 8}, mem);
  EXPECT_NE(error.find("out-of-bounds load"), std::string::npos) << error;
}

TEST(TensorDescriptor, ThreeDimensionalStridedView) {
  SourceKernel k = compile("view3");
  ASSERT_TRUE(k.kernel);
  // x holds a (c, b, a) array; the descriptor views it as (a, b, c): strides (1, a, a * b).
  int64_t a = 3;
  int b = 5, c = 6;
  std::vector<float> x = iota(size_t(a) * b * c);
  for (auto [o0, o1, o2] : {std::tuple{int64_t(0), 0, 0}, {int64_t(2), 3, -2}, {int64_t(-1), -1, 4}}) {
    std::vector<float> out(2 * 4 * 8, 0.0f);
    MemoryMap mem;
    mem.add(x.data(), x.size() * 4, "x");
    mem.add(out.data(), out.size() * 4, "out");
    ASSERT_EQ(run(k, {1}, {out.data(), x.data(), a, b, c, int64_t(1), int(a), int(a * b), o0, o1, o2},
                  mem),
              "");
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 8; ++l) {
          int64_t p = o0 + i, q = o1 + j, r = o2 + l;
          bool inside = p >= 0 && p < a && q >= 0 && q < b && r >= 0 && r < c;
          float want = inside ? x[size_t(p + q * a + r * a * b)] : 7.0f;
          ASSERT_EQ(out[i * 32 + j * 8 + l], want) << p << "," << q << "," << r;
        }
  }
}

TEST(TensorDescriptor, GpuTestKernelOnTheCpu) {
  // test/gpu/kernels/descriptor_matmul.tsl, which the GPU test runs by TMA: the same cases
  // here, both configurations, against C++ (blocks shifted before index 0 included).
  struct Case { int m, n, k, lda, ldb, ldc, shift; };
  for (unsigned config : {0u, 1u}) {
    SourceOptions opts;
    opts.config = config;
    auto compiled = compileSourceFile(
        std::string(TESSEL_KERNELS_DIR) + "/../test/gpu/kernels/descriptor_matmul.tsl", opts);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    for (Case c : {Case{150, 192, 160, 176, 208, 224, -48}, Case{77, 45, 37, 41, 50, 53, -5},
                   Case{1, 1, 1, 1, 1, 3, -63}}) {
      HostTensor a = randomTensor("bf16", size_t(c.m) * c.lda, 1),
                 b = randomTensor("bf16", size_t(c.k) * c.ldb, 2);
      std::vector<float> out(size_t(c.m) * c.ldc, 42.0f);
      MemoryMap mem;
      mem.add(a.data(), a.bytes.size(), "a");
      mem.add(b.data(), b.bytes.size(), "b");
      mem.add(out.data(), out.size() * 4, "c");
      LaunchGrid grid = {(c.m - c.shift + 63) / 64, (c.n - c.shift + 63) / 64};
      ASSERT_EQ(run(*compiled, grid,
                    {out.data(), a.data(), b.data(), c.m, c.n, c.k, c.lda, c.ldb, c.ldc, c.shift},
                    mem),
                "");
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.ldc; ++j) {
          double sum = 0, size = 0;
          for (int l = 0; l < c.k; ++l) {
            double term = double(a.get(size_t(i) * c.lda + l)) * b.get(size_t(l) * c.ldb + j);
            sum += term;
            size += std::abs(term);
          }
          double got = out[size_t(i) * c.ldc + j];
          if (j >= c.n)
            ASSERT_EQ(got, 42.0) << "wrote outside C at " << i << "," << j;
          else
            ASSERT_NEAR(got, sum, 1e-5 * size + 1e-6) << i << "," << j << " config " << config;
        }
    }
  }
}

} // namespace
