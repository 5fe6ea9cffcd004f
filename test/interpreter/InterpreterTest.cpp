//===- test/interpreter/InterpreterTest.cpp - ops, control flow, memory checks ===//
#include "interpreter/FloatBits.h"
#include "test/interpreter/TestUtil.h"

#include <cmath>
#include <vector>

using namespace tessel;
using namespace tessel::interp;
using namespace tessel::interp::test;

namespace {

TEST(Interpreter, VectorAddMaskedEdge) {
  CompiledKernel k = compileTestIR(kVectorAdd);
  ASSERT_TRUE(k);
  for (int n : {1, 127, 128, 129, 1000}) {
    std::vector<float> x(n), y(n), out(n, -1.0f);
    for (int i = 0; i < n; ++i)
      x[i] = float(i) * 0.5f, y[i] = float(n - i);
    MemoryMap mem;
    mem.add(x.data(), n * 4, "x");
    mem.add(y.data(), n * 4, "y");
    mem.add(out.data(), n * 4, "out");
    EXPECT_EQ(runError(k, {(n + 127) / 128}, {x.data(), y.data(), out.data(), n}, mem), "");
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(out[i], x[i] + y[i]) << "n=" << n << " i=" << i;
  }
}

// The same kernel with the mask dropped from the load of y (line 7) and the store (line 9).
const char *kUnmasked = R"mlir(
func.func @add(%x: !tessel.ptr<f32>, %y: !tessel.ptr<f32>, %out: !tessel.ptr<f32>, %n: i32)
    attributes {tessel.kernel} {
  %pid = tessel.program_id 0 : i32
  %c128 = arith.constant 128 : i32
  %start = arith.muli %pid, %c128 : i32
  %r = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %s = tessel.splat %start : tensor<128xi32>
  %offs = arith.addi %s, %r : tensor<128xi32>
  %ns = tessel.splat %n : tensor<128xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<128xi32>
  %xp = tessel.splat %x : tensor<128x!tessel.ptr<f32>>
  %xa = tessel.addptr %xp, %offs : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
  %yp = tessel.splat %y : tensor<128x!tessel.ptr<f32>>
  %ya = tessel.addptr %yp, %offs : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
  %op = tessel.splat %out : tensor<128x!tessel.ptr<f32>>
  %oa = tessel.addptr %op, %offs : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
  %xv = tessel.load %xa, %mask : tensor<128x!tessel.ptr<f32>> loc("add.tsl":6:10)
  %yv = tessel.load %ya $YMASK : tensor<128x!tessel.ptr<f32>> loc("add.tsl":7:10)
  %sum = arith.addf %xv, %yv : tensor<128xf32>
  tessel.store %oa, %sum $SMASK : tensor<128x!tessel.ptr<f32>> loc("add.tsl":9:5)
  return
}
)mlir";

std::string unmasked(bool maskLoad, bool maskStore) {
  std::string ir = kUnmasked;
  ir.replace(ir.find("$YMASK"), 6, maskLoad ? ", %mask" : "");
  ir.replace(ir.find("$SMASK"), 6, maskStore ? ", %mask" : "");
  return ir;
}

TEST(Interpreter, ReportsUnmaskedOutOfBoundsLoad) {
  CompiledKernel k = compileTestIR(unmasked(false, true));
  ASSERT_TRUE(k);
  int n = 200;
  std::vector<float> x(n), y(n), out(n);
  MemoryMap mem;
  mem.add(x.data(), n * 4, "x");
  mem.add(y.data(), n * 4, "y");
  mem.add(out.data(), n * 4, "out");
  std::string error = runError(k, {2}, {x.data(), y.data(), out.data(), n}, mem);
  EXPECT_NE(error.find("add.tsl:7:10: error: out-of-bounds load"), std::string::npos) << error;
  // Program 1 covers offsets 128..255: element 72 is offset 200, just past y's end.
  EXPECT_NE(error.find("element 72 of tensor<128x!tessel.ptr<f32>>"), std::string::npos) << error;
  EXPECT_NE(error.find("program (1, 0, 0)"), std::string::npos) << error;
  EXPECT_NE(error.find("0 bytes past the end of buffer 'y' (800 bytes"), std::string::npos)
      << error;
}

TEST(Interpreter, ReportsUnmaskedOutOfBoundsStore) {
  CompiledKernel k = compileTestIR(unmasked(true, false));
  ASSERT_TRUE(k);
  int n = 130;
  std::vector<float> x(n), y(n), out(n);
  MemoryMap mem;
  mem.add(x.data(), n * 4, "x");
  mem.add(y.data(), n * 4, "y");
  mem.add(out.data(), n * 4, "out");
  std::string error = runError(k, {2}, {x.data(), y.data(), out.data(), n}, mem);
  EXPECT_NE(error.find("add.tsl:9:5: error: out-of-bounds store of 4 bytes"), std::string::npos)
      << error;
  EXPECT_NE(error.find("element 2 of"), std::string::npos) << error;
  EXPECT_NE(error.find("program (1, 0, 0)"), std::string::npos) << error;
  // Nothing was written past the end, nor any element of the faulting store.
  EXPECT_EQ(out[128], 0.0f);
}

TEST(Interpreter, UnregisteredPointerIsAnError) {
  CompiledKernel k = compileTestIR(kVectorAdd);
  ASSERT_TRUE(k);
  std::vector<float> x(4), y(4), out(4);
  MemoryMap mem;
  mem.add(x.data(), 16, "x");
  mem.add(out.data(), 16, "out");
  std::string error = runError(k, {1}, {x.data(), y.data(), out.data(), 4}, mem);
  EXPECT_NE(error.find("out-of-bounds load"), std::string::npos) << error;
}

// Row softmax (the frontend's output for kernels/softmax.tsl with BLOCK = 1024).
const char *kSoftmax = R"mlir(
func.func @softmax(%arg0: !tessel.ptr<f32>, %arg1: !tessel.ptr<f32>, %arg2: i32, %arg3: i32, %arg4: i32) attributes {tessel.kernel} {
  %0 = tessel.program_id 0 : i32
  %1 = tessel.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %2 = tessel.splat %arg4 : tensor<1024xi32>
  %3 = arith.cmpi slt, %1, %2 : tensor<1024xi32>
  %4 = arith.muli %0, %arg2 : i32
  %5 = tessel.addptr %arg1, %4 : !tessel.ptr<f32>, i32
  %6 = tessel.splat %5 : tensor<1024x!tessel.ptr<f32>>
  %7 = tessel.addptr %6, %1 : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
  %cst = arith.constant 0xFF800000 : f32
  %8 = tessel.splat %cst : tensor<1024xf32>
  %9 = tessel.load %7, %3, %8 : tensor<1024x!tessel.ptr<f32>>
  %10 = tessel.reduce max %9 {axis = 0 : i32} : tensor<1024xf32> -> f32
  %11 = tessel.splat %10 : tensor<1024xf32>
  %12 = arith.subf %9, %11 : tensor<1024xf32>
  %13 = math.exp %12 : tensor<1024xf32>
  %14 = tessel.reduce add %13 {axis = 0 : i32} : tensor<1024xf32> -> f32
  %15 = tessel.splat %14 : tensor<1024xf32>
  %16 = arith.divf %13, %15 : tensor<1024xf32>
  %17 = arith.muli %0, %arg3 : i32
  %18 = tessel.addptr %arg0, %17 : !tessel.ptr<f32>, i32
  %19 = tessel.splat %18 : tensor<1024x!tessel.ptr<f32>>
  %20 = tessel.addptr %19, %1 : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
  tessel.store %20, %16, %3 : tensor<1024x!tessel.ptr<f32>>
  return
}
)mlir";

TEST(Interpreter, SoftmaxRagged) {
  CompiledKernel k = compileTestIR(kSoftmax);
  ASSERT_TRUE(k);
  for (int cols : {1, 37, 1000, 1024}) {
    int rows = 5, stride = cols + 3;
    std::vector<float> in(rows * stride), out(rows * stride, 7.0f);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = std::sin(float(i)) * 4.0f;
    MemoryMap mem;
    mem.add(in.data(), in.size() * 4, "inp");
    mem.add(out.data(), out.size() * 4, "out");
    ASSERT_EQ(runError(k, {rows}, {out.data(), in.data(), stride, stride, cols}, mem), "");
    for (int r = 0; r < rows; ++r) {
      double m = -INFINITY, s = 0;
      for (int c = 0; c < cols; ++c)
        m = std::max(m, double(in[r * stride + c]));
      for (int c = 0; c < cols; ++c)
        s += std::exp(in[r * stride + c] - m);
      for (int c = 0; c < cols; ++c)
        ASSERT_NEAR(out[r * stride + c], std::exp(in[r * stride + c] - m) / s, 1e-6);
      for (int c = cols; c < stride; ++c)
        ASSERT_EQ(out[r * stride + c], 7.0f); // the masked tail is untouched
    }
  }
}

// 2-D tiles: out[i, j] = a[i] * 10 + j, reduced over j, with expand_dims and broadcast.
const char *kOuter = R"mlir(
func.func @outer(%a: !tessel.ptr<i32>, %out: !tessel.ptr<i32>, %sums: !tessel.ptr<i64>) attributes {tessel.kernel} {
  %r4 = tessel.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32>
  %r8 = tessel.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %ap = tessel.splat %a : tensor<4x!tessel.ptr<i32>>
  %aa = tessel.addptr %ap, %r4 : tensor<4x!tessel.ptr<i32>>, tensor<4xi32>
  %av = tessel.load %aa : tensor<4x!tessel.ptr<i32>>
  %c10 = arith.constant dense<10> : tensor<4xi32>
  %a10 = arith.muli %av, %c10 : tensor<4xi32>
  %col = tessel.expand_dims %a10 {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %row = tessel.expand_dims %r8 {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
  %colb = tessel.broadcast %col : tensor<4x1xi32> -> tensor<4x8xi32>
  %rowb = tessel.broadcast %row : tensor<1x8xi32> -> tensor<4x8xi32>
  %v = arith.addi %colb, %rowb : tensor<4x8xi32>
  %r4c = tessel.expand_dims %r4 {axis = 1 : i32} : tensor<4xi32> -> tensor<4x1xi32>
  %c8 = arith.constant dense<8> : tensor<4x1xi32>
  %r4s = arith.muli %r4c, %c8 : tensor<4x1xi32>
  %r4b = tessel.broadcast %r4s : tensor<4x1xi32> -> tensor<4x8xi32>
  %offs = arith.addi %r4b, %rowb : tensor<4x8xi32>
  %op = tessel.splat %out : tensor<4x8x!tessel.ptr<i32>>
  %oa = tessel.addptr %op, %offs : tensor<4x8x!tessel.ptr<i32>>, tensor<4x8xi32>
  tessel.store %oa, %v : tensor<4x8x!tessel.ptr<i32>>
  %wide = arith.extsi %v : tensor<4x8xi32> to tensor<4x8xi64>
  %s = tessel.reduce add %wide {axis = 1 : i32} : tensor<4x8xi64> -> tensor<4xi64>
  %sp = tessel.splat %sums : tensor<4x!tessel.ptr<i64>>
  %sa = tessel.addptr %sp, %r4 : tensor<4x!tessel.ptr<i64>>, tensor<4xi32>
  tessel.store %sa, %s : tensor<4x!tessel.ptr<i64>>
  return
}
)mlir";

TEST(Interpreter, BroadcastExpandDimsReduce2D) {
  CompiledKernel k = compileTestIR(kOuter);
  ASSERT_TRUE(k);
  std::vector<int32_t> a = {1, -2, 3, 4}, out(32);
  std::vector<int64_t> sums(4);
  MemoryMap mem;
  mem.add(a.data(), 16, "a");
  mem.add(out.data(), 128, "out");
  mem.add(sums.data(), 32, "sums");
  ASSERT_EQ(runError(k, {1}, {a.data(), out.data(), sums.data()}, mem), "");
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(out[i * 8 + j], a[i] * 10 + j);
    EXPECT_EQ(sums[i], int64_t(a[i]) * 80 + 28);
  }
}

// A loop with a carried tile and an if: sum over blocks of x, doubled when flag != 0.
const char *kLoop = R"mlir(
func.func @loopsum(%x: !tessel.ptr<f32>, %out: !tessel.ptr<f32>, %n: i32, %flag: i32) attributes {tessel.kernel} {
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %r = tessel.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %xp = tessel.splat %x : tensor<16x!tessel.ptr<f32>>
  %ns = tessel.splat %n : tensor<16xi32>
  %acc = scf.for %i = %c0 to %n step %c16 iter_args(%a = %zero) -> (tensor<16xf32>) : i32 {
    %is = tessel.splat %i : tensor<16xi32>
    %offs = arith.addi %is, %r : tensor<16xi32>
    %m = arith.cmpi slt, %offs, %ns : tensor<16xi32>
    %p = tessel.addptr %xp, %offs : tensor<16x!tessel.ptr<f32>>, tensor<16xi32>
    %v = tessel.load %p, %m, %zero : tensor<16x!tessel.ptr<f32>>
    %a2 = arith.addf %a, %v : tensor<16xf32>
    scf.yield %a2 : tensor<16xf32>
  }
  %s = tessel.reduce add %acc {axis = 0 : i32} : tensor<16xf32> -> f32
  %on = arith.cmpi ne, %flag, %c0 : i32
  %res = scf.if %on -> (f32) {
    %d = arith.addf %s, %s : f32
    scf.yield %d : f32
  } else {
    scf.yield %s : f32
  }
  tessel.store %out, %res : !tessel.ptr<f32>
  return
}
)mlir";

TEST(Interpreter, LoopCarriedTileAndIf) {
  CompiledKernel k = compileTestIR(kLoop);
  ASSERT_TRUE(k);
  for (int n : {0, 5, 16, 50}) {
    for (int flag : {0, 1}) {
      std::vector<float> x(n + 1);
      float expect = 0, out = -1;
      for (int i = 0; i < n; ++i)
        expect += (x[i] = float(i + 1));
      MemoryMap mem;
      mem.add(x.data(), n * 4, "x");
      mem.add(&out, 4, "out");
      ASSERT_EQ(runError(k, {1}, {x.data(), &out, n, flag}, mem), "");
      EXPECT_EQ(out, flag ? 2 * expect : expect) << "n=" << n;
    }
  }
}

// Casts to bf16 and f16 round to nearest even, bit-exactly.
const char *kCast = R"mlir(
func.func @cast(%x: !tessel.ptr<f32>, %b: !tessel.ptr<bf16>, %h: !tessel.ptr<f16>, %i: !tessel.ptr<i8>) attributes {tessel.kernel} {
  %r = tessel.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %xp = tessel.splat %x : tensor<8x!tessel.ptr<f32>>
  %xa = tessel.addptr %xp, %r : tensor<8x!tessel.ptr<f32>>, tensor<8xi32>
  %v = tessel.load %xa : tensor<8x!tessel.ptr<f32>>
  %vb = arith.truncf %v : tensor<8xf32> to tensor<8xbf16>
  %vh = arith.truncf %v : tensor<8xf32> to tensor<8xf16>
  %vi = arith.fptosi %v : tensor<8xf32> to tensor<8xi8>
  %bp = tessel.splat %b : tensor<8x!tessel.ptr<bf16>>
  %ba = tessel.addptr %bp, %r : tensor<8x!tessel.ptr<bf16>>, tensor<8xi32>
  tessel.store %ba, %vb : tensor<8x!tessel.ptr<bf16>>
  %hp = tessel.splat %h : tensor<8x!tessel.ptr<f16>>
  %ha = tessel.addptr %hp, %r : tensor<8x!tessel.ptr<f16>>, tensor<8xi32>
  tessel.store %ha, %vh : tensor<8x!tessel.ptr<f16>>
  %ip = tessel.splat %i : tensor<8x!tessel.ptr<i8>>
  %ia = tessel.addptr %ip, %r : tensor<8x!tessel.ptr<i8>>, tensor<8xi32>
  tessel.store %ia, %vi : tensor<8x!tessel.ptr<i8>>
  return
}
)mlir";

TEST(Interpreter, NarrowCastsRoundToNearestEven) {
  CompiledKernel k = compileTestIR(kCast);
  ASSERT_TRUE(k);
  // 1 + 2^-8 is a bf16 tie (rounds to even: 1.0); 1 + 3*2^-9 rounds up to 1 + 2^-7; 1 + 2^-11 is an f16 tie.
  std::vector<float> x = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-9f, 1.0f + 0x1p-11f, 65520.0f,
                          -300.7f, 1e-8f, 127.9f, NAN};
  std::vector<uint16_t> b(8), h(8);
  std::vector<int8_t> i(8);
  MemoryMap mem;
  mem.add(x.data(), 32, "x");
  mem.add(b.data(), 16, "b");
  mem.add(h.data(), 16, "h");
  mem.add(i.data(), 8, "i");
  ASSERT_EQ(runError(k, {1}, {x.data(), b.data(), h.data(), i.data()}, mem), "");
  EXPECT_EQ(b[0], 0x3f80);
  EXPECT_EQ(b[1], 0x3f81);
  EXPECT_EQ(h[2], 0x3c00);       // tie to even
  EXPECT_EQ(h[3], 0x7c00);       // 65520 overflows to +inf
  EXPECT_EQ(h[5], 0x0000);       // 1e-8 < 2^-25: rounds to +0
  EXPECT_EQ(i[4], -128);         // saturates
  EXPECT_EQ(i[6], 127);          // truncates toward zero
  EXPECT_EQ(i[7], 0);            // NaN -> 0
  EXPECT_EQ(b[7] & 0x7f80, 0x7f80);
}

TEST(Interpreter, ArgumentMismatch) {
  CompiledKernel k = compileTestIR(kVectorAdd);
  ASSERT_TRUE(k);
  float x = 0;
  MemoryMap mem;
  std::string error = runError(k, {1}, {&x, &x, &x, 1.5f}, mem);
  EXPECT_NE(error.find("argument 4 of add: expected i32, got f32"), std::string::npos) << error;
  error = runError(k, {1}, {&x, &x, &x}, mem);
  EXPECT_NE(error.find("takes 4 arguments, got 3"), std::string::npos) << error;
}

TEST(Interpreter, UnsupportedOpIsACompileError) {
  mlir::MLIRContext context;
  loadDialects(context);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
func.func @k(%x: i32) attributes {tessel.kernel} {
  %c = scf.execute_region -> i32 {
    scf.yield %x : i32
  } loc("k.tsl":3:7)
  return
}
)mlir", &context);
  ASSERT_TRUE(module);
  auto kernel = CompiledKernel::compile(*module);
  ASSERT_FALSE(kernel);
  std::string error = llvm::toString(kernel.takeError());
  EXPECT_NE(error.find("k.tsl:3:7: error: the interpreter does not support 'scf.execute_region'"),
            std::string::npos) << error;
}

} // namespace

namespace {

// tessel.dot, spelled test.dot (see compileWithFutureOps).
const char *kDot = R"mlir(
func.func @mm(%a: !tessel.ptr<$T>, %b: !tessel.ptr<$T>, %c: !tessel.ptr<f32>) attributes {tessel.kernel} {
  %r16 = tessel.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %r8 = tessel.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %rows = tessel.expand_dims %r16 {axis = 1 : i32} : tensor<16xi32> -> tensor<16x1xi32>
  %c16 = arith.constant dense<16> : tensor<16x1xi32>
  %c8 = arith.constant dense<8> : tensor<16x1xi32>
  %ra = arith.muli %rows, %c16 : tensor<16x1xi32>
  %rc = arith.muli %rows, %c8 : tensor<16x1xi32>
  %colsa = tessel.expand_dims %r16 {axis = 0 : i32} : tensor<16xi32> -> tensor<1x16xi32>
  %colsb = tessel.expand_dims %r8 {axis = 0 : i32} : tensor<8xi32> -> tensor<1x8xi32>
  %ra2 = tessel.broadcast %ra : tensor<16x1xi32> -> tensor<16x16xi32>
  %ca2 = tessel.broadcast %colsa : tensor<1x16xi32> -> tensor<16x16xi32>
  %offa = arith.addi %ra2, %ca2 : tensor<16x16xi32>
  %rc2 = tessel.broadcast %rc : tensor<16x1xi32> -> tensor<16x8xi32>
  %cb2 = tessel.broadcast %colsb : tensor<1x8xi32> -> tensor<16x8xi32>
  %offb = arith.addi %rc2, %cb2 : tensor<16x8xi32>
  %pa = tessel.splat %a : tensor<16x16x!tessel.ptr<$T>>
  %pa2 = tessel.addptr %pa, %offa : tensor<16x16x!tessel.ptr<$T>>, tensor<16x16xi32>
  %pb = tessel.splat %b : tensor<16x8x!tessel.ptr<$T>>
  %pb2 = tessel.addptr %pb, %offb : tensor<16x8x!tessel.ptr<$T>>, tensor<16x8xi32>
  %pc = tessel.splat %c : tensor<16x8x!tessel.ptr<f32>>
  %pc2 = tessel.addptr %pc, %offb : tensor<16x8x!tessel.ptr<f32>>, tensor<16x8xi32>
  %va = tessel.load %pa2 : tensor<16x16x!tessel.ptr<$T>>
  %vb = tessel.load %pb2 : tensor<16x8x!tessel.ptr<$T>>
  %acc = tessel.load %pc2 : tensor<16x8x!tessel.ptr<f32>>
  %d = "test.dot"(%va, %vb, %acc) {inputPrecision = "$P"} : (tensor<16x16x$T>, tensor<16x8x$T>, tensor<16x8xf32>) -> tensor<16x8xf32>
  tessel.store %pc2, %d : tensor<16x8x!tessel.ptr<f32>>
  return
}
)mlir";

CompiledKernel compileDot(const std::string &type, const std::string &precision) {
  std::string ir = kDot;
  for (size_t at; (at = ir.find("$T")) != std::string::npos;)
    ir.replace(at, 2, type);
  ir.replace(ir.find("$P"), 2, precision);
  return compileWithFutureOps(ir);
}

TEST(Interpreter, DotAccumulatesInF32) {
  for (const char *precision : {"ieee", "tf32"}) {
    CompiledKernel k = compileDot("f32", precision);
    ASSERT_TRUE(k);
    std::vector<float> a(256), b(128), c(128, 1.0f);
    for (int i = 0; i < 256; ++i)
      a[i] = 1.0f + float(i % 7) * 0x1p-12f; // needs more than tf32's 10 bits
    for (int i = 0; i < 128; ++i)
      b[i] = float(i % 5) - 2.0f;
    std::vector<float> c0 = c;
    MemoryMap mem;
    mem.add(a.data(), 1024, "a");
    mem.add(b.data(), 512, "b");
    mem.add(c.data(), 512, "c");
    ASSERT_EQ(runError(k, {1}, {a.data(), b.data(), c.data()}, mem), "");
    bool tf32 = std::string(precision) == "tf32";
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        float ref = c0[i * 8 + j];
        for (int kk = 0; kk < 16; ++kk)
          ref += (tf32 ? roundToTF32(a[i * 16 + kk]) : a[i * 16 + kk]) * b[kk * 8 + j];
        ASSERT_EQ(c[i * 8 + j], ref) << precision << " " << i << "," << j;
      }
  }
}

TEST(Interpreter, DotOfBF16IsExactProductsInF32) {
  CompiledKernel k = compileDot("bf16", "tf32");
  ASSERT_TRUE(k);
  std::vector<uint16_t> a(256), b(128);
  std::vector<float> c(128, 0.5f);
  for (int i = 0; i < 256; ++i)
    a[i] = floatToBF16(0.1f * float(i % 11));
  for (int i = 0; i < 128; ++i)
    b[i] = floatToBF16(0.3f * float(i % 3) - 0.2f);
  MemoryMap mem;
  mem.add(a.data(), 512, "a");
  mem.add(b.data(), 256, "b");
  mem.add(c.data(), 512, "c");
  ASSERT_EQ(runError(k, {1}, {a.data(), b.data(), c.data()}, mem), "");
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      float ref = 0.5f;
      for (int kk = 0; kk < 16; ++kk)
        ref += bf16ToFloat(a[i * 16 + kk]) * bf16ToFloat(b[kk * 8 + j]);
      ASSERT_EQ(c[i * 8 + j], ref);
    }
}

} // namespace

namespace {

// A histogram with atomics: element i of each program adds 1 to bin i % 4 and records the
// old count, so the order (programs in grid order, elements in row-major order) is visible.
const char *kHistogram = R"mlir(
func.func @hist(%bins: !tessel.ptr<i32>, %olds: !tessel.ptr<i32>) attributes {tessel.kernel} {
  %pid = tessel.program_id 0 : i32
  %r = tessel.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32>
  %c4 = arith.constant dense<4> : tensor<8xi32>
  %bin = arith.remsi %r, %c4 : tensor<8xi32>
  %bp = tessel.splat %bins : tensor<8x!tessel.ptr<i32>>
  %ba = tessel.addptr %bp, %bin : tensor<8x!tessel.ptr<i32>>, tensor<8xi32>
  %one = arith.constant dense<1> : tensor<8xi32>
  %c6 = arith.constant dense<6> : tensor<8xi32>
  %m = arith.cmpi slt, %r, %c6 : tensor<8xi32>
  %old = "test.atomic_rmw"(%ba, %one, %m) {kind = "add"} : (tensor<8x!tessel.ptr<i32>>, tensor<8xi32>, tensor<8xi1>) -> tensor<8xi32>
  %c8 = arith.constant 8 : i32
  %base = arith.muli %pid, %c8 : i32
  %bs = tessel.splat %base : tensor<8xi32>
  %offs = arith.addi %bs, %r : tensor<8xi32>
  %op = tessel.splat %olds : tensor<8x!tessel.ptr<i32>>
  %oa = tessel.addptr %op, %offs : tensor<8x!tessel.ptr<i32>>, tensor<8xi32>
  tessel.store %oa, %old, %m : tensor<8x!tessel.ptr<i32>>
  "test.print"(%pid, %old) {prefix = "old"} : (i32, tensor<8xi32>) -> ()
  %c2 = arith.constant 2 : i32
  %ok = arith.cmpi slt, %pid, %c2 : i32
  "test.assert"(%ok) {message = "pid < 2"} : (i1) -> () loc("hist.tsl":9:5)
  return
}
)mlir";

TEST(Interpreter, AtomicsApplyInADefinedOrderAndPrintShowsValues) {
  CompiledKernel k = compileWithFutureOps(kHistogram);
  ASSERT_TRUE(k);
  std::vector<int32_t> bins(4), olds(16, -1);
  MemoryMap mem;
  mem.add(bins.data(), 16, "bins");
  mem.add(olds.data(), 64, "olds");
  ::testing::internal::CaptureStdout();
  std::string error = runError(k, {2}, {bins.data(), olds.data()}, mem);
  std::string printed = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(error, "");
  // Elements 0..5 are unmasked: bins 0 and 1 get 2 per program, bins 2 and 3 one.
  EXPECT_EQ(bins, (std::vector<int32_t>{4, 4, 2, 2}));
  EXPECT_EQ(olds, (std::vector<int32_t>{0, 0, 0, 0, 1, 1, -1, -1, 2, 2, 1, 1, 3, 3, -1, -1}));
  EXPECT_NE(printed.find("program (1, 0, 0) old #0 = 1\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("program (1, 0, 0) old #1[4] = 3\n"), std::string::npos) << printed;
}

TEST(Interpreter, DeviceAssertionFailureNamesTheProgram) {
  CompiledKernel k = compileWithFutureOps(kHistogram);
  ASSERT_TRUE(k);
  std::vector<int32_t> bins(4), olds(24);
  MemoryMap mem;
  mem.add(bins.data(), 16, "bins");
  mem.add(olds.data(), 96, "olds");
  ::testing::internal::CaptureStdout();
  std::string error = runError(k, {3}, {bins.data(), olds.data()}, mem);
  ::testing::internal::GetCapturedStdout();
  EXPECT_NE(error.find("hist.tsl:9:5: error: device assertion failed: pid < 2"), std::string::npos)
      << error;
  EXPECT_NE(error.find("program (2, 0, 0)"), std::string::npos) << error;
}

} // namespace
