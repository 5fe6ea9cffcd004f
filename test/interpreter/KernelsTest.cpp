//===- test/interpreter/KernelsTest.cpp - every kernel of kernels/ on the CPU ===//
//
// Each kernel runs in the interpreter for each storage dtype on ragged sizes
// (masked edges included) against a plain C++ reference computed from the same
// (rounded) inputs. Also: a planted unmasked access in .tsl source is reported
// with its source line.
//
//===----------------------------------------------------------------------===//
#include "test/interpreter/HostTensor.h"

#include "frontend/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::interp;
using namespace tessel::interp::test;

namespace {

const char *kDTypes[] = {"f32", "bf16", "f16"};

class KernelsTest : public ::testing::TestWithParam<const char *> {};

TEST_P(KernelsTest, VectorAdd) {
  std::string dt = GetParam();
  SourceKernel k = compileKernel("vector_add.tsl", "vector_add", {"T=" + dt, "BLOCK=128"});
  ASSERT_TRUE(k.kernel);
  for (size_t n : {1, 127, 128, 129, 1000}) {
    HostTensor a = randomTensor(dt, n, 1), b = randomTensor(dt, n, 2), out(dt, n);
    MemoryMap mem;
    mem.add(a.data(), a.bytes.size(), "a");
    mem.add(b.data(), b.bytes.size(), "b");
    mem.add(out.data(), out.bytes.size(), "out");
    ASSERT_EQ(run(k, {int64_t((n + 127) / 128)}, {out.data(), a.data(), b.data(), int(n)}, mem),
              "");
    for (size_t i = 0; i < n; ++i) // one rounding in T: bit-exact
      ASSERT_EQ(out.get(i), out.round(a.get(i) + b.get(i))) << dt << " n=" << n << " i=" << i;
  }
}

TEST_P(KernelsTest, Softmax) {
  std::string dt = GetParam();
  for (auto [block, cols] : {std::pair{256, 1}, {256, 200}, {256, 256}, {1024, 1000}}) {
    SourceKernel k = compileKernel("softmax.tsl", "softmax",
                                   {"T=" + dt, "BLOCK=" + std::to_string(block)});
    ASSERT_TRUE(k.kernel);
    int rows = 3, inStride = cols + 5, outStride = cols + 1;
    HostTensor in = randomTensor(dt, size_t(rows * inStride), 3), out(dt, size_t(rows * outStride));
    for (size_t i = 0; i < out.size(); ++i)
      out.set(i, 42.0f);
    MemoryMap mem;
    mem.add(in.data(), in.bytes.size(), "inp");
    mem.add(out.data(), out.bytes.size(), "out");
    ASSERT_EQ(run(k, {rows}, {out.data(), in.data(), inStride, outStride, cols}, mem), "");
    for (int r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0;
      for (int c = 0; c < cols; ++c)
        m = std::max(m, double(in.get(size_t(r * inStride + c))));
      for (int c = 0; c < cols; ++c)
        s += std::exp(double(in.get(size_t(r * inStride + c))) - m);
      for (int c = 0; c < cols; ++c) {
        double ref = std::exp(double(in.get(size_t(r * inStride + c))) - m) / s;
        ASSERT_NEAR(out.get(size_t(r * outStride + c)), ref, ref * out.ulp() + 1e-7)
            << dt << " cols=" << cols << " r=" << r << " c=" << c;
      }
      if (r + 1 < rows) { // the gap between rows is masked off: untouched
        ASSERT_EQ(out.get(size_t(r * outStride + cols)), 42.0f);
      }
    }
  }
}

// Edge rows: a row of -inf gives NaN, as torch.softmax does (exp(-inf - -inf)); a row with
// some -inf gives 0 there and a proper softmax elsewhere; n_cols = 0 writes nothing.
TEST_P(KernelsTest, SoftmaxEdgeRows) {
  std::string dt = GetParam();
  SourceKernel k = compileKernel("softmax.tsl", "softmax", {"T=" + dt, "BLOCK=256"});
  ASSERT_TRUE(k.kernel);
  int cols = 5, rows = 2;
  HostTensor in(dt, size_t(rows * cols)), out(dt, size_t(rows * cols));
  for (int c = 0; c < cols; ++c) {
    in.set(size_t(c), -INFINITY);                                  // row 0: all -inf
    in.set(size_t(cols + c), c % 2 ? -INFINITY : float(c) * 0.5f); // row 1: some -inf
  }
  MemoryMap mem;
  mem.add(in.data(), in.bytes.size(), "inp");
  mem.add(out.data(), out.bytes.size(), "out");
  ASSERT_EQ(run(k, {rows}, {out.data(), in.data(), cols, cols, cols}, mem), "");
  double s = 0;
  for (int c = 0; c < cols; c += 2)
    s += std::exp(c * 0.5 - 2.0);
  for (int c = 0; c < cols; ++c) {
    EXPECT_TRUE(std::isnan(out.get(size_t(c)))) << dt << " c=" << c;
    double ref = c % 2 ? 0.0 : std::exp(c * 0.5 - 2.0) / s;
    EXPECT_NEAR(out.get(size_t(cols + c)), ref, ref * out.ulp() + 1e-7) << dt << " c=" << c;
  }
  // n_cols = 0: every column is masked, nothing is written.
  for (size_t i = 0; i < out.size(); ++i)
    out.set(i, 42.0f);
  ASSERT_EQ(run(k, {rows}, {out.data(), in.data(), cols, cols, 0}, mem), "");
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out.get(i), 42.0f) << dt << " i=" << i;
}

TEST_P(KernelsTest, SiluMul) {
  std::string dt = GetParam();
  SourceKernel k = compileKernel("silu_mul.tsl", "silu_mul", {"T=" + dt, "BLOCK=256"});
  ASSERT_TRUE(k.kernel);
  for (size_t n : {3, 256, 700}) {
    HostTensor a = randomTensor(dt, n, 4), b = randomTensor(dt, n, 5), out(dt, n);
    MemoryMap mem;
    mem.add(a.data(), a.bytes.size(), "a");
    mem.add(b.data(), b.bytes.size(), "b");
    mem.add(out.data(), out.bytes.size(), "out");
    ASSERT_EQ(run(k, {int64_t((n + 255) / 256)}, {out.data(), a.data(), b.data(), int(n)}, mem),
              "");
    for (size_t i = 0; i < n; ++i) {
      double x = a.get(i), ref = x / (1 + std::exp(-x)) * b.get(i);
      ASSERT_NEAR(out.get(i), ref, std::fabs(ref) * out.ulp() + 1e-6) << dt << " i=" << i;
    }
  }
}

TEST_P(KernelsTest, AddScale) {
  std::string dt = GetParam();
  SourceKernel k = compileKernel("add_scale.tsl", "add_scale", {"T=" + dt, "BLOCK=128"});
  ASSERT_TRUE(k.kernel);
  for (size_t n : {1, 128, 333}) {
    HostTensor x = randomTensor(dt, n, 6), r = randomTensor(dt, n, 7), out(dt, n);
    MemoryMap mem;
    mem.add(x.data(), x.bytes.size(), "x");
    mem.add(r.data(), r.bytes.size(), "residual");
    mem.add(out.data(), out.bytes.size(), "out");
    float scale = 0.37f;
    ASSERT_EQ(run(k, {int64_t((n + 127) / 128)}, {out.data(), x.data(), r.data(), scale, int(n)},
                  mem),
              "");
    for (size_t i = 0; i < n; ++i) // computed in f32, one rounding to T: bit-exact
      ASSERT_EQ(out.get(i), out.round((x.get(i) + r.get(i)) * scale)) << dt << " i=" << i;
  }
}

// C = A @ B (+ ReLU) with ragged M, N, K, both storage orders, tf32 and ieee f32.
TEST_P(KernelsTest, MatMul) {
  std::string dt = GetParam();
  std::string path = std::string(TESSEL_KERNELS_DIR) + "/matmul.tsl";
  if (!std::ifstream(path))
    GTEST_SKIP() << "no kernels/matmul.tsl";
  struct Case {
    int m, n, k;
    bool at, bt, relu, ieee;
  };
  for (Case c : {Case{37, 50, 70, false, false, false, true}, Case{64, 32, 32, true, false, true, false},
                 Case{5, 70, 33, false, true, false, false}, Case{33, 17, 64, true, true, true, true}}) {
    if (dt != "f32" && c.ieee)
      continue;
    auto flag = [](bool b) { return b ? "True" : "False"; };
    SourceKernel k = compileKernel(
        "matmul.tsl", "matmul",
        {"T=" + dt, std::string("IEEE=") + flag(c.ieee), std::string("RELU=") + flag(c.relu),
         std::string("A_T=") + flag(c.at), std::string("B_T=") + flag(c.bt), "BLOCK_M=32",
         "BLOCK_N=32", "BLOCK_K=16", "GROUP_M=2"});
    ASSERT_TRUE(k.kernel);
    // A is MxK (row-major: stride K + 3 between rows; transposed: stride M + 1 between columns).
    int strideA = c.at ? c.m + 1 : c.k + 3, strideB = c.bt ? c.k + 2 : c.n + 1, strideC = c.n + 4;
    HostTensor a = randomTensor(dt, size_t((c.at ? c.k : c.m) * strideA), 8, 1.0f);
    HostTensor b = randomTensor(dt, size_t((c.bt ? c.n : c.k) * strideB), 9, 1.0f);
    HostTensor out(dt, size_t(c.m * strideC));
    for (size_t i = 0; i < out.size(); ++i)
      out.set(i, 42.0f);
    auto A = [&](int i, int kk) { return double(a.get(size_t(c.at ? kk * strideA + i : i * strideA + kk))); };
    auto B = [&](int kk, int j) { return double(b.get(size_t(c.bt ? j * strideB + kk : kk * strideB + j))); };
    MemoryMap mem;
    mem.add(a.data(), a.bytes.size(), "a");
    mem.add(b.data(), b.bytes.size(), "b");
    mem.add(out.data(), out.bytes.size(), "c");
    int64_t programs = int64_t((c.m + 31) / 32) * ((c.n + 31) / 32);
    ASSERT_EQ(run(k, {programs}, {out.data(), a.data(), b.data(), c.m, c.n, c.k, strideA, strideB,
                                  strideC}, mem),
              "");
    bool tf32 = dt == "f32" && !c.ieee;
    for (int i = 0; i < c.m; ++i)
      for (int j = 0; j < c.n; ++j) {
        double ref = 0, mag = 0;
        for (int kk = 0; kk < c.k; ++kk) {
          double x = A(i, kk), y = B(kk, j);
          if (tf32)
            x = roundToTF32(float(x)), y = roundToTF32(float(y));
          ref += x * y;
          mag += std::fabs(x * y);
        }
        if (c.relu)
          ref = std::max(ref, 0.0);
        ASSERT_NEAR(out.get(size_t(i * strideC + j)), ref, std::fabs(ref) * out.ulp() + mag * 1e-6)
            << dt << " " << c.m << "x" << c.n << "x" << c.k << " at (" << i << ", " << j << ")";
      }
    for (int i = 0; i + 1 < c.m; ++i) { // the gap between rows of C is masked off
      ASSERT_EQ(out.get(size_t(i * strideC + c.n)), 42.0f);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DTypes, KernelsTest, ::testing::ValuesIn(kDTypes));

// Every configuration of every kernel in kernels/*.tsl compiles for the interpreter: a
// kernel using an op the interpreter lacks fails here, by name, even before it has a CPU test.
TEST(AllKernels, EveryConfigurationCompiles) {
  size_t kernels = 0;
  for (const auto &entry : std::filesystem::directory_iterator(TESSEL_KERNELS_DIR)) {
    if (entry.path().extension() != ".tsl")
      continue;
    std::string path = entry.path().string();
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    frontend::SourceFile file(path, text);
    frontend::DiagnosticEngine diags(file);
    frontend::ast::Module module = frontend::parseModule(file, diags);
    ASSERT_FALSE(diags.hasErrors()) << path;
    for (const auto &fn : module.functions) {
      if (fn->kind != frontend::ast::FunctionKind::Kernel)
        continue;
      ++kernels;
      bool generic = fn->param("T") != nullptr;
      for (const char *dt : kDTypes) {
        if (!generic && std::string(dt) != "f32")
          continue;
        for (unsigned config = 0;; ++config) {
          SourceOptions opts;
          opts.kernel = fn->name;
          if (generic)
            opts.defines = {std::string("T=") + dt};
          opts.config = config;
          auto k = compileSource(path, text, opts);
          if (!k) {
            std::string error = llvm::toString(k.takeError());
            ASSERT_TRUE(config > 0 && error.find("configuration " + std::to_string(config)) == 0)
                << fn->name << " T=" << dt << " config " << config << ": " << error;
            break;
          }
        }
      }
    }
  }
  EXPECT_GE(kernels, 5u);
}

// A kernel whose second load and whose store lack the mask.
const char *kPlanted = R"(@kernel
def planted(out: *f32, a: *f32, b: *f32, n: i32, BLOCK: constexpr = 64):
    offsets = program_id(0) * BLOCK + arange(0, BLOCK)
    mask = offsets < n
    x = load(a + offsets, mask=mask)
    y = load(b + offsets)
    store(out + offsets, x + y)
)";

TEST(PlantedOutOfBounds, LoadReportedWithSourceLine) {
  std::string path = ::testing::TempDir() + "planted.tsl";
  std::ofstream(path) << kPlanted;
  SourceOptions opts;
  auto k = compileSourceFile(path, opts);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  std::vector<float> a(100), b(100), out(100);
  MemoryMap mem;
  mem.add(a.data(), 400, "a");
  mem.add(b.data(), 400, "b");
  mem.add(out.data(), 400, "out");
  llvm::Error e = k->kernel.run({2}, {out.data(), a.data(), b.data(), 100}, mem);
  ASSERT_TRUE(bool(e));
  std::string error = llvm::toString(std::move(e));
  EXPECT_NE(error.find(path + ":6:"), std::string::npos) << error;
  EXPECT_NE(error.find("out-of-bounds load"), std::string::npos) << error;
  EXPECT_NE(error.find("program (1, 0, 0)"), std::string::npos) << error;
  EXPECT_NE(error.find("element 36 "), std::string::npos) << error;
  EXPECT_NE(error.find("    y = load(b + offsets)\n"), std::string::npos) << error;
  std::remove(path.c_str());
}

TEST(PlantedOutOfBounds, StoreReportedWithSourceLine) {
  std::string path = ::testing::TempDir() + "planted_store.tsl";
  std::string text = kPlanted;
  text.replace(text.find("y = load(b + offsets)"), 21, "y = load(b + offsets, mask=mask)");
  std::ofstream(path) << text;
  auto k = compileSourceFile(path, SourceOptions());
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  std::vector<float> a(100), b(100), out(100);
  MemoryMap mem;
  mem.add(a.data(), 400, "a");
  mem.add(b.data(), 400, "b");
  mem.add(out.data(), 400, "out");
  llvm::Error e = k->kernel.run({2}, {out.data(), a.data(), b.data(), 100}, mem);
  ASSERT_TRUE(bool(e));
  std::string error = llvm::toString(std::move(e));
  EXPECT_NE(error.find(path + ":7:"), std::string::npos) << error;
  EXPECT_NE(error.find("out-of-bounds store"), std::string::npos) << error;
  EXPECT_NE(error.find("past the end of buffer 'out'"), std::string::npos) << error;
  std::remove(path.c_str());
}

} // namespace
