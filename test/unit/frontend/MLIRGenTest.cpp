//===- test/unit/frontend/MLIRGenTest.cpp - MLIRGen and the diagnostic bridge ===//
#include "frontend/MLIRDiagnostics.h"
#include "frontend/MLIRGen.h"
#include "frontend/Parser.h"

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

#include <gtest/gtest.h>

using namespace tessel::frontend;

namespace {

const char *kSource = "@kernel\n"
                      "def k(out: *T, n: i32, T: constexpr = f32, B: constexpr = 64):\n"
                      "    offs = arange(0, B)\n"
                      "    store(out + offs, offs.to(T), mask=offs < n)\n";

TEST(MLIRGen, GeneratesAVerifiedKernel) {
  SourceFile file("k.tsl", kSource);
  DiagnosticEngine diags(file);
  ast::Module module = parseModule(file, diags);
  ASSERT_FALSE(diags.hasErrors());
  Specialization spec;
  spec.constexprs = {{"T", ConstValue::ofDType(DType::BF16)}, {"B", ConstValue::ofInt(128)}};
  spec.numWarps = 8;
  spec.divisibleBy16 = {"out", "n"};
  mlir::MLIRContext context;
  auto mod = generateKernel(context, module, "k", spec, diags);
  ASSERT_TRUE(mod);
  EXPECT_FALSE(diags.hasErrors());
  auto warps = (*mod)->getAttrOfType<mlir::IntegerAttr>("tessel.num_warps");
  ASSERT_TRUE(warps);
  EXPECT_EQ(warps.getInt(), 8);
  auto func = mod->lookupSymbol<mlir::func::FuncOp>("k");
  ASSERT_TRUE(func);
  ASSERT_EQ(func.getNumArguments(), 2u);
  auto ptr = mlir::dyn_cast<mlir::tessel::PtrType>(func.getArgument(0).getType());
  ASSERT_TRUE(ptr);
  EXPECT_TRUE(ptr.getPointeeType().isBF16());
  EXPECT_TRUE(func.getArgAttr(0, "tessel.divisibility"));
  EXPECT_TRUE(func.getArgAttr(1, "tessel.divisibility"));
  EXPECT_TRUE(func->hasAttr("tessel.kernel"));
  // Every op carries a source location.
  func.walk([&](mlir::Operation *op) {
    EXPECT_TRUE(sourceRangeOf(op->getLoc(), diags).has_value()) << op->getName().getStringRef().str();
  });
}

TEST(MLIRGen, ErrorsReturnNull) {
  SourceFile file("k.tsl", "@kernel\ndef k(p: *f32):\n    x = arange(0, 3)\n");
  DiagnosticEngine diags(file);
  ast::Module module = parseModule(file, diags);
  mlir::MLIRContext context;
  EXPECT_FALSE(generateKernel(context, module, "k", Specialization(), diags));
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_FALSE(generateKernel(context, module, "nope", Specialization(), diags));
  EXPECT_EQ(diags.errorCount(), 2u);
}

TEST(MLIRDiagnostics, MapsLocationsToSourceRanges) {
  SourceFile file("k.tsl", "a\n    value = colss + 1\n");
  DiagnosticEngine diags(file);
  mlir::MLIRContext context;
  {
    SourceDiagnosticHandler handler(&context, diags);
    auto loc = mlir::FileLineColLoc::get(&context, "k.tsl", 2, 13);
    mlir::emitError(mlir::NameLoc::get(mlir::StringAttr::get(&context, "x"), loc))
        << "lowering failed";
    mlir::emitError(mlir::FileLineColLoc::get(&context, "other.tsl", 1, 1)) << "elsewhere";
  }
  ASSERT_EQ(diags.diagnostics().size(), 2u);
  EXPECT_EQ(diags.render(diags.diagnostics()[0]),
            "k.tsl:2:13: error: lowering failed\n    value = colss + 1\n            ^~~~~\n");
  EXPECT_FALSE(diags.diagnostics()[1].range.isValid());
}

} // namespace
