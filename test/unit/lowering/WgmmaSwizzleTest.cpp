//===- test/unit/lowering/WgmmaSwizzleTest.cpp - the 128-byte swizzle ------===//
//
// getWgmmaSharedOffset and getWgmmaBoxOffset (lowering/WgmmaLayout.cpp) place tile
// elements in the buffers that the bulk tensor engine fills and wgmma / ldmatrix read,
// with CU_TENSOR_MAP_SWIZZLE_128B and descriptor swizzle mode "128B". Both name the
// same hardware address transformation, which the PTX ISA describes ("Tensor swizzling
// modes"; the shared memory matrix layouts of wgmma): the smem address is cut into
// 16-byte units, and the pattern repeats every 1024 bytes (8 rows of 128 bytes) for
// 128B, 512 for 64B, 256 for 32B. As address bits (CUTLASS's Swizzle<B, 4, 3>):
//   128B: bits [4:6] ^= bits [7:9]
//    64B: bits [4:5] ^= bits [7:8]
//    32B: bit  4     ^= bit  7
// The expected offsets below are computed from that description and from the logical
// placement WgmmaLayout.h documents (A's row permutation, B's 64-column blocks, the
// interleaved row order), not from the lowering's own formulas: the layout functions
// build arith ops on i32 values, which the test evaluates for every element.
//
//===----------------------------------------------------------------------===//
#include "lowering/WgmmaLayout.h"

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

using namespace mlir;

namespace {

/// The documented swizzle modes, on a byte address.
int64_t swizzle128B(int64_t a) { return a ^ (((a >> 7) & 7) << 4); }
int64_t swizzle64B(int64_t a) { return a ^ (((a >> 7) & 3) << 4); }
int64_t swizzle32B(int64_t a) { return a ^ (((a >> 7) & 1) << 4); }

/// WgmmaLayout.h: tile row t of A goes to shared row 32R g + 64 (r / 2) + 16 (w % 4) +
/// 8 (r % 2) + t % 8, with r = t / 8W, w = (t / 8) % W, g = w / 4, R = rows / 8W.
int64_t sharedRowOfA(int64_t t, int64_t rows, int64_t warps) {
  int64_t repeats = rows / (8 * warps);
  int64_t r = t / (8 * warps), w = (t / 8) % warps, g = w / 4;
  return 32 * repeats * g + 64 * (r / 2) + 16 * (w % 4) + 8 * (r % 2) + t % 8;
}

/// WgmmaLayout.h: "interleaved" stores row k of each group of 8 at 2 (k % 4) + (k % 8) / 4.
int64_t interleavedRow(int64_t k) { return k / 8 * 8 + 2 * (k % 4) + (k % 8) / 4; }

/// Unswizzled byte address of element (k, n) of a "b" / "swizzled" tile of `rows` rows:
/// 128-byte-wide column blocks, each `rows` rows of 128 bytes.
int64_t blockedAddress(int64_t k, int64_t n, int64_t rows, int64_t elementBytes) {
  int64_t perRow = 128 / elementBytes;
  return n / perRow * rows * 128 + k * 128 + n % perRow * elementBytes;
}

/// Evaluates the i32 arith ops the layout functions build, the function's two
/// arguments (row, column) bound to `row` and `col`.
int64_t evaluate(Value v, int64_t row, int64_t col) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getArgNumber() == 0 ? row : col;
  Operation *op = v.getDefiningOp();
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return cast<IntegerAttr>(constant.getValue()).getInt();
  auto x = [&](unsigned i) { return uint32_t(evaluate(op->getOperand(i), row, col)); };
  uint32_t r;
  if (isa<arith::AddIOp>(op))
    r = x(0) + x(1);
  else if (isa<arith::SubIOp>(op))
    r = x(0) - x(1);
  else if (isa<arith::MulIOp>(op))
    r = x(0) * x(1);
  else if (isa<arith::DivUIOp>(op))
    r = x(0) / x(1);
  else if (isa<arith::RemUIOp>(op))
    r = x(0) % x(1);
  else if (isa<arith::AndIOp>(op))
    r = x(0) & x(1);
  else if (isa<arith::OrIOp>(op))
    r = x(0) | x(1);
  else if (isa<arith::XOrIOp>(op))
    r = x(0) ^ x(1);
  else if (isa<arith::ShLIOp>(op))
    r = x(0) << x(1);
  else if (isa<arith::ShRUIOp>(op))
    r = x(0) >> x(1);
  else {
    ADD_FAILURE() << "unexpected op " << op->getName().getStringRef().str();
    return -1;
  }
  return int64_t(r);
}

class WgmmaSwizzle : public ::testing::Test {
protected:
  WgmmaSwizzle() : builder(&context) {
    context.loadDialect<arith::ArithDialect, func::FuncDialect, tessel::TesselDialect>();
    loc = builder.getUnknownLoc();
    module = ModuleOp::create(loc);
    Type i32 = builder.getI32Type();
    auto func = func::FuncOp::create(loc, "offsets", builder.getFunctionType({i32, i32}, {}));
    module.push_back(func);
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToStart(body);
  }
  ~WgmmaSwizzle() override { module->erase(); }

  /// The offset the lowering computes for element (row, col) of a tile: built once
  /// on the function's two arguments, evaluated per element.
  std::function<int64_t(int64_t, int64_t)> offsets(tessel::SharedLayout layout, int64_t rows,
                                                   int64_t cols, unsigned warps,
                                                   unsigned elementBytes) {
    Block &body = module.lookupSymbol<func::FuncOp>("offsets").front();
    Value v = tessel::getWgmmaSharedOffset(builder, loc, layout, body.getArgument(0),
                                           body.getArgument(1), rows, cols, warps,
                                           elementBytes);
    return [v](int64_t row, int64_t col) { return evaluate(v, row, col); };
  }

  MLIRContext context;
  OpBuilder builder;
  Location loc = UnknownLoc::get(&context);
  ModuleOp module;
};

// The three documented modes differ, and 128B touches only bits 4-6, from bits 7-9:
// the table the other tests use is the 128-byte one, not a neighbour.
TEST(SwizzleModes, DocumentedPatterns) {
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t chunk = 0; chunk < 8; ++chunk) {
      int64_t a = row * 128 + chunk * 16;
      EXPECT_EQ(swizzle128B(a), row * 128 + (chunk ^ row) * 16);
      EXPECT_EQ(swizzle64B(a), row * 128 + (chunk ^ (row % 4)) * 16);
      EXPECT_EQ(swizzle32B(a), row * 128 + (chunk ^ (row % 2)) * 16);
      EXPECT_EQ(swizzle128B(a + 1024), swizzle128B(a) + 1024); // repeats every 1024
    }
  EXPECT_NE(swizzle128B(5 * 128), swizzle64B(5 * 128));
}

// A (bf16/f16, K = 64: one 128-byte row per tile row), 4 and 8 warps: every element at
// swizzle128B(sharedRowOfA(t) * 128 + col * 2).
TEST_F(WgmmaSwizzle, OperandA) {
  for (unsigned warps : {4u, 8u})
    for (int64_t rows : {int64_t(16 * warps), int64_t(64 * warps)}) {
      std::set<int64_t> seen;
      auto offset = offsets(tessel::SharedLayout::WgmmaA, rows, 64, warps, 2);
      for (int64_t t = 0; t < rows; ++t)
        for (int64_t c = 0; c < 64; ++c) {
          int64_t expected = swizzle128B(sharedRowOfA(t, rows, warps) * 128 + c * 2);
          ASSERT_EQ(offset(t, c), expected)
              << "warps " << warps << " rows " << rows << " element (" << t << ", " << c << ")";
          seen.insert(expected);
        }
      EXPECT_EQ(int64_t(seen.size()), rows * 64); // a permutation of the tile's bytes / 2
    }
}

// wgmma_b and swizzled (the same layout): 64-column (128-byte) blocks of K rows, each
// 8-row group one 1024-byte swizzle atom. f16 (64 columns per block) and f32/tf32 (32).
TEST_F(WgmmaSwizzle, OperandB) {
  for (tessel::SharedLayout layout : {tessel::SharedLayout::WgmmaB, tessel::SharedLayout::Swizzled})
    for (unsigned bytes : {2u, 4u})
      for (int64_t rows : {int64_t(32), int64_t(64)}) {
        int64_t cols = 2 * 128 / bytes;
        auto offset = offsets(layout, rows, cols, 4, bytes);
        for (int64_t k = 0; k < rows; ++k)
          for (int64_t n = 0; n < cols; ++n)
            ASSERT_EQ(offset(k, n),
                      swizzle128B(blockedAddress(k, n, rows, bytes)))
                << tessel::stringifySharedLayout(layout).str() << " " << bytes << "-byte elements, " << rows
                << " rows, element (" << k << ", " << n << ")";
      }
}

// interleaved (tf32 mma.sync's B): row k sits at 2 (k % 4) + (k % 8) / 4 of its group
// of 8, then the same swizzle.
TEST_F(WgmmaSwizzle, InterleavedRows) {
  int64_t rows = 32, cols = 64;
  auto offset = offsets(tessel::SharedLayout::Interleaved, rows, cols, 4, 4);
  for (int64_t k = 0; k < rows; ++k)
    for (int64_t n = 0; n < cols; ++n)
      ASSERT_EQ(offset(k, n),
                swizzle128B(blockedAddress(interleavedRow(k), n, rows, 4)))
          << "element (" << k << ", " << n << ")";
  // The order is the documented one, 0 4 1 5 2 6 3 7, and not its inverse.
  const int64_t stored[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int64_t position = 0; position < 8; ++position)
    EXPECT_EQ(interleavedRow(stored[position]), position);
}

// Where the bulk tensor engine puts a box: for A the 8-row group of tile row `row`, for
// B the 128-byte column block of `col`, the unswizzled start of the element there.
TEST(WgmmaBoxOffset, MatchesTheElementPlacement) {
  for (unsigned warps : {4u, 8u}) {
    int64_t rows = 32 * warps;
    for (int64_t row = 0; row < rows; row += 8)
      EXPECT_EQ(tessel::getWgmmaBoxOffset(tessel::SharedLayout::WgmmaA, row, 0, rows, warps, 2),
                sharedRowOfA(row, rows, warps) * 128)
          << "A, " << warps << " warps, row " << row;
  }
  for (unsigned bytes : {2u, 4u})
    for (int64_t rows : {int64_t(32), int64_t(64)})
      for (int64_t col = 0; col < 4 * 128 / int64_t(bytes); col += 128 / bytes)
        EXPECT_EQ(tessel::getWgmmaBoxOffset(tessel::SharedLayout::WgmmaB, 0, col, rows, 4, bytes),
                  blockedAddress(0, col, rows, bytes))
            << "B, " << bytes << "-byte elements, " << rows << " rows, column " << col;
}

} // namespace
