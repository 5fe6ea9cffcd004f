//===- test/unit/frontend/ParserTest.cpp - syntax trees and error recovery -===//
#include "frontend/ASTPrinter.h"
#include "frontend/Parser.h"

#include <gtest/gtest.h>

using namespace tessel::frontend;

namespace {

struct Parsed {
  std::unique_ptr<SourceFile> file;
  std::unique_ptr<DiagnosticEngine> diags;
  ast::Module module;
};

Parsed parse(const std::string &text) {
  Parsed p;
  p.file = std::make_unique<SourceFile>("t.tsl", text);
  p.diags = std::make_unique<DiagnosticEngine>(*p.file);
  p.module = parseModule(*p.file, *p.diags);
  return p;
}

std::string exprOf(const std::string &expr) {
  Parsed p = parse("@kernel\ndef k():\n    x = " + expr + "\n");
  EXPECT_FALSE(p.diags->hasErrors()) << expr;
  if (p.module.functions.empty() || p.module.functions[0]->body.empty())
    return "";
  return exprToString(*p.module.functions[0]->body[0]->value);
}

TEST(Parser, Precedence) {
  EXPECT_EQ(exprOf("a + b * c"), "(a + (b * c))");
  EXPECT_EQ(exprOf("a - b - c"), "((a - b) - c)");
  EXPECT_EQ(exprOf("-a ** 2"), "(-(a ** 2))");
  EXPECT_EQ(exprOf("a ** -b"), "(a ** (-b))");
  EXPECT_EQ(exprOf("a ** b ** c"), "(a ** (b ** c))");
  EXPECT_EQ(exprOf("a & b | c ^ d"), "((a & b) | (c ^ d))");
  EXPECT_EQ(exprOf("a < b & c"), "(a < (b & c))");
  EXPECT_EQ(exprOf("not a and b or c"), "(((not a) and b) or c)");
  EXPECT_EQ(exprOf("a if c else b if d else e"), "(a if c else (b if d else e))");
  EXPECT_EQ(exprOf("x[:, None] + y[None, :]"), "(x[:, None] + y[None, :])");
  EXPECT_EQ(exprOf("f(a, b=2).to(bf16)"), "f(a, b=2).to(bf16)");
  EXPECT_EQ(exprOf("[1, (2, 3)]"), "[1, (2, 3)]");
}

TEST(Parser, KernelSignatureAndAutotune) {
  Parsed p = parse("@autotune(configs=[config(B=1, num_warps=2)], key=[\"n\"], prune=B > 0)\n"
                   "@kernel\n"
                   "def k(x: *T, n: i32, T: constexpr = f16, B: constexpr):\n"
                   "    pass\n");
  ASSERT_FALSE(p.diags->hasErrors());
  ASSERT_EQ(p.module.functions.size(), 1u);
  const ast::Function &fn = *p.module.functions[0];
  EXPECT_EQ(fn.kind, ast::FunctionKind::Kernel);
  ASSERT_EQ(fn.params.size(), 4u);
  EXPECT_EQ(fn.params[0].kind, ast::ParamKind::Pointer);
  EXPECT_EQ(fn.params[0].typeName, "T");
  EXPECT_EQ(fn.params[1].kind, ast::ParamKind::Scalar);
  EXPECT_EQ(fn.params[2].kind, ast::ParamKind::Constexpr);
  ASSERT_TRUE(fn.params[2].defaultValue);
  ASSERT_TRUE(fn.autotune);
  ASSERT_EQ(fn.autotune->configs.size(), 1u);
  EXPECT_EQ(fn.autotune->configs[0].values.size(), 2u);
  EXPECT_EQ(fn.autotune->key, std::vector<std::string>{"n"});
  EXPECT_TRUE(fn.autotune->prune);
}

TEST(Parser, ElifChainsNest) {
  Parsed p = parse("@func\ndef f(x):\n    if x:\n        pass\n    elif x:\n        pass\n"
                   "    else:\n        return 1\n");
  ASSERT_FALSE(p.diags->hasErrors());
  const ast::Stmt &s = *p.module.functions[0]->body[0];
  ASSERT_EQ(s.kind, ast::StmtKind::If);
  ASSERT_EQ(s.orelse.size(), 1u);
  EXPECT_TRUE(s.orelse[0]->isElif);
  EXPECT_EQ(s.orelse[0]->orelse.size(), 1u);
}

TEST(Parser, RecoversAndReportsEveryError) {
  Parsed p = parse("@kernel\ndef k():\n    a = (1 +\n    b = 1 $ 2\n    c = 3\n    d = ]\n"
                   "@kernel\ndef k2():\n    e = 1\n");
  EXPECT_GE(p.diags->errorCount(), 2u);
  // Both functions survive.
  EXPECT_EQ(p.module.functions.size(), 2u);
}

TEST(Parser, DepthLimitsHoldOnDeepInput) {
  std::string deep = "@kernel\ndef k():\n    x = " + std::string(5000, '(') + "1" +
                     std::string(5000, ')') + "\n";
  Parsed p = parse(deep);
  EXPECT_TRUE(p.diags->hasErrors());
  std::string chain = "@kernel\ndef k():\n    x = 1";
  for (int i = 0; i < 20000; ++i)
    chain += " + 1";
  Parsed q = parse(chain + "\n");
  EXPECT_TRUE(q.diags->hasErrors());
  std::string unary = "@kernel\ndef k():\n    x = " + std::string(10000, '-') + "1\n";
  Parsed r = parse(unary);
  EXPECT_TRUE(r.diags->hasErrors());
  std::string blocks = "@kernel\ndef k():\n";
  for (int i = 0; i < 200; ++i)
    blocks += std::string(4 * (i + 1), ' ') + "if x:\n";
  Parsed s = parse(blocks + std::string(804, ' ') + "pass\n");
  EXPECT_TRUE(s.diags->hasErrors());
}

TEST(Parser, MissingDecoratorAndTopLevelCode) {
  Parsed p = parse("def f():\n    pass\nprint(1)\n");
  EXPECT_EQ(p.diags->errorCount(), 2u);
}

TEST(Parser, ModuleConstants) {
  Parsed p = parse("X = 1\nY = X + 1\n@func\ndef f():\n    pass\n");
  EXPECT_EQ(p.diags->errorCount(), 0u);
  ASSERT_EQ(p.module.constants.size(), 2u);
  EXPECT_EQ(p.module.constants[1].name, "Y");
  EXPECT_NE(p.module.constant("X"), nullptr);
  // Defined once: a second constant or a function of the same name is an error.
  EXPECT_EQ(parse("X = 1\nX = 2\n").diags->errorCount(), 1u);
  EXPECT_EQ(parse("f = 1\n@func\ndef f():\n    pass\n").diags->errorCount(), 1u);
}

TEST(Parser, PrintsTree) {
  Parsed p = parse("@kernel\ndef k(p: *f32):\n    store(p, 1.0)\n");
  std::string tree = printAST(p.module);
  EXPECT_NE(tree.find("Kernel k"), std::string::npos);
  EXPECT_NE(tree.find("Param p: *f32"), std::string::npos);
  EXPECT_NE(tree.find("Call store"), std::string::npos);
  EXPECT_NE(tree.find("Float 1.0"), std::string::npos);
}

} // namespace
