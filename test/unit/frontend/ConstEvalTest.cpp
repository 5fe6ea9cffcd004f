//===- test/unit/frontend/ConstEvalTest.cpp - constexpr folding and -D -----===//
#include "frontend/Config.h"
#include "frontend/ConstEval.h"
#include "frontend/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tessel::frontend;
using ast::OpKind;

namespace {

TEST(ConstEval, PythonIntegerSemantics) {
  auto fold = [](OpKind op, int64_t a, int64_t b) {
    return foldBinary(op, ConstValue::ofInt(a), ConstValue::ofInt(b));
  };
  EXPECT_EQ(fold(OpKind::FloorDiv, -7, 2).value->intValue, -4);
  EXPECT_EQ(fold(OpKind::Mod, -7, 2).value->intValue, 1);
  EXPECT_EQ(fold(OpKind::Mod, 7, -2).value->intValue, -1);
  EXPECT_EQ(fold(OpKind::Pow, 2, 10).value->intValue, 1024);
  EXPECT_TRUE(fold(OpKind::Div, 1, 2).value->isFloat());
  EXPECT_DOUBLE_EQ(fold(OpKind::Div, 1, 2).value->floatValue, 0.5);
  EXPECT_FALSE(fold(OpKind::FloorDiv, 1, 0).value);
  EXPECT_FALSE(fold(OpKind::Mul, INT64_MAX, 2).value);
  EXPECT_FALSE(fold(OpKind::Pow, 10, 100).value);
  EXPECT_TRUE(fold(OpKind::Lt, 1, 2).value->isBool());
}

TEST(ConstEval, MixedAndBool) {
  auto r = foldBinary(OpKind::Add, ConstValue::ofInt(1), ConstValue::ofFloat(0.5));
  ASSERT_TRUE(r.value);
  EXPECT_DOUBLE_EQ(r.value->floatValue, 1.5);
  auto b = foldBinary(OpKind::BitAnd, ConstValue::ofBool(true), ConstValue::ofBool(false));
  EXPECT_TRUE(b.value->isBool());
  EXPECT_FALSE(b.value->truthy());
  auto e = foldBinary(OpKind::Eq, ConstValue::ofDType(DType::BF16), ConstValue::ofDType(DType::BF16));
  EXPECT_TRUE(e.value->truthy());
  auto bad = foldBinary(OpKind::Add, ConstValue::ofDType(DType::F32), ConstValue::ofInt(1));
  EXPECT_FALSE(bad.value);
  EXPECT_NE(bad.error.find("unsupported operand types"), std::string::npos);
  EXPECT_EQ(foldUnary(OpKind::Neg, ConstValue::ofInt(3)).value->intValue, -3);
  EXPECT_FALSE(foldUnary(OpKind::Neg, ConstValue::ofInt(INT64_MIN)).value);
}

TEST(ConstEval, ParseDefineValues) {
  EXPECT_EQ(parseConstValue("1024")->intValue, 1024);
  EXPECT_EQ(parseConstValue("0x10")->intValue, 16);
  EXPECT_DOUBLE_EQ(parseConstValue("0.25")->floatValue, 0.25);
  EXPECT_TRUE(parseConstValue("True")->truthy());
  EXPECT_FALSE(parseConstValue("false")->truthy());
  EXPECT_EQ(parseConstValue("bf16")->dtype, DType::BF16);
  EXPECT_TRUE(std::isinf(parseConstValue("-inf")->floatValue));
  EXPECT_FALSE(parseConstValue("abc"));
  EXPECT_FALSE(parseConstValue(""));
}

TEST(Config, DefaultsConfigsAndOverrides) {
  SourceFile file("t.tsl",
                  "@autotune(configs=[config(B=64, num_warps=2), config(B=128, num_stages=3)],"
                  " key=[\"n\"])\n@kernel\ndef k(n: i32, B: constexpr, C: constexpr = B * 2,"
                  " T: constexpr = f32):\n    pass\n");
  DiagnosticEngine diags(file);
  ast::Module m = parseModule(file, diags);
  ASSERT_FALSE(diags.hasErrors());
  auto configs = resolveConfigs(*m.functions[0], {{"T", ConstValue::ofDType(DType::BF16)}}, 4, diags);
  ASSERT_TRUE(configs);
  ASSERT_EQ(configs->size(), 2u);
  const Specialization &a = (*configs)[0];
  EXPECT_EQ(a.numWarps, 2u);
  EXPECT_EQ(a.numStages, 1u);
  EXPECT_EQ(a.lookup("B")->intValue, 64);
  EXPECT_EQ(a.lookup("C")->intValue, 128);
  EXPECT_EQ(a.lookup("T")->dtype, DType::BF16);
  // Values come in parameter order.
  EXPECT_EQ(a.constexprs[0].first, "B");
  EXPECT_EQ(a.constexprs[2].first, "T");
  const Specialization &b = (*configs)[1];
  EXPECT_EQ(b.numWarps, 4u);
  EXPECT_EQ(b.numStages, 3u);
  EXPECT_EQ(b.lookup("C")->intValue, 256);
  // -D on a name a config sets overrides it in every config.
  auto over = resolveConfigs(*m.functions[0], {{"B", ConstValue::ofInt(32)}}, 4, diags);
  ASSERT_TRUE(over);
  EXPECT_EQ((*over)[0].lookup("B")->intValue, 32);
  EXPECT_EQ((*over)[1].lookup("B")->intValue, 32);
}

TEST(Config, MissingValueIsAnError) {
  SourceFile file("t.tsl", "@kernel\ndef k(B: constexpr):\n    pass\n");
  DiagnosticEngine diags(file);
  ast::Module m = parseModule(file, diags);
  EXPECT_FALSE(resolveConfigs(*m.functions[0], {}, 4, diags));
  ASSERT_EQ(diags.errorCount(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].message, "constexpr 'B' of kernel 'k' has no value");
}

} // namespace
