//===- test/unit/ConfigExprTest.cpp - Prune conditions and their package fields ===//
#include "package/ConfigExpr.h"
#include "package/Package.h"

#include "TestPackages.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace tessel;

namespace {
Json eval(const std::string &text, std::map<std::string, Json> names = {}) {
  return ConfigExpr::parse(text).evaluate(
      [&](std::string_view name) -> const Json * {
        auto it = names.find(std::string(name));
        return it == names.end() ? nullptr : &it->second;
      });
}

std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const Error &error) {
    return error.what();
  }
  return "(no error)";
}
} // namespace

TEST(ConfigExpr, ArithmeticFollowsPython) {
  EXPECT_EQ(eval("1 + 2 * 3"), Json(7));
  EXPECT_EQ(eval("(1 + 2) * 3"), Json(9));
  EXPECT_EQ(eval("-7 // 2"), Json(-4));
  EXPECT_EQ(eval("-7 % 2"), Json(1));
  EXPECT_EQ(eval("7 % -2"), Json(-1));
  EXPECT_EQ(eval("7 / 2"), Json(3.5));
  EXPECT_EQ(eval("2 ** 10"), Json(1024));
  EXPECT_EQ(eval("-2 ** 2"), Json(-4));
  EXPECT_EQ(eval("2 ** -1"), Json(0.5));
  EXPECT_EQ(eval("6 & 3 | 8 ^ 1"), Json((6 & 3) | (8 ^ 1)));
  EXPECT_EQ(eval("~5"), Json(-6));
  EXPECT_EQ(eval("1.5 * 2"), Json(3.0));
  EXPECT_EQ(eval("cdiv(10, 4)"), Json(3));
  EXPECT_EQ(eval("min(4, 2, 8)"), Json(2));
  EXPECT_EQ(eval("max(4, 2.5)"), Json(4));
  EXPECT_EQ(eval("abs(-3)"), Json(3));
  EXPECT_EQ(eval("True + 1"), Json(2));
}

TEST(ConfigExpr, LogicComparisonsAndNames) {
  std::map<std::string, Json> names = {
      {"BLOCK", Json(1024)}, {"n_cols", Json(4096)}, {"T", Json("bf16")}};
  EXPECT_EQ(eval("BLOCK < n_cols", names), Json(true));
  EXPECT_EQ(eval("(BLOCK < n_cols) and (T == \"bf16\")", names), Json(true));
  EXPECT_EQ(eval("BLOCK > n_cols or T != 'f32'", names), Json(true));
  EXPECT_EQ(eval("not (BLOCK < n_cols)", names), Json(false));
  EXPECT_EQ(eval("1 < BLOCK <= 1024 < n_cols", names), Json(true));
  EXPECT_EQ(eval("1 < BLOCK < 2", names), Json(false));
  EXPECT_EQ(eval("BLOCK if n_cols > 100 else 0", names), Json(1024));
  EXPECT_EQ(eval("T == 3", names), Json(false));
  // Short-circuit: the right side is not evaluated (no unknown-name error).
  EXPECT_EQ(eval("False and missing", names), Json(false));
  EXPECT_EQ(eval("True or missing", names), Json(true));

  ConfigExpr expr = ConfigExpr::parse("((BLOCK * 4) < n_cols) and (num_warps >= 8)");
  EXPECT_EQ(expr.names(),
            (std::vector<std::string>{"BLOCK", "n_cols", "num_warps"}));
  EXPECT_NO_THROW(expr.checkNames({"BLOCK", "n_cols", "num_warps"}, "prune"));
  EXPECT_EQ(errorOf([&] { expr.checkNames({"BLOCK", "num_warps"}, "prune"); }),
            "prune '((BLOCK * 4) < n_cols) and (num_warps >= 8)' uses 'n_cols', "
            "which is not one of BLOCK, num_warps");
}

TEST(ConfigExpr, ErrorsArePositionedAndNeverCrash) {
  EXPECT_EQ(errorOf([] { ConfigExpr::parse("BLOCK < "); }),
            "cannot parse 'BLOCK < ': column 9: unexpected end of the expression");
  EXPECT_EQ(errorOf([] { ConfigExpr::parse("BLOCK $ 2"); }),
            "cannot parse 'BLOCK $ 2': column 7: unexpected character '$'");
  EXPECT_EQ(errorOf([] { ConfigExpr::parse("foo(1)"); }),
            "cannot parse 'foo(1)': column 4: unknown function 'foo' "
            "(expected min, max, cdiv or abs)");
  EXPECT_EQ(errorOf([] { ConfigExpr::parse("cdiv(1)"); }),
            "cannot parse 'cdiv(1)': column 8: cdiv() takes 2 arguments, got 1");
  EXPECT_EQ(errorOf([] { eval("1 // 0"); }),
            "cannot evaluate '1 // 0': division by zero");
  EXPECT_EQ(errorOf([] { eval("x + 1"); }),
            "cannot evaluate 'x + 1': unknown name 'x'");
  EXPECT_EQ(errorOf([] { eval("'a' < 1"); }),
            "cannot evaluate ''a' < 1': cannot compare a string with a number "
            "using '<'");
  // Depth counts nesting, not grammar levels: the compiler's fully parenthesised prune
  // conditions (20 levels here) parse.
  EXPECT_EQ(eval(std::string(20, '(') + "1 < 2" + std::string(20, ')') +
                     " or ((BLOCK >= ((4 * 3) * 2)))",
                 {{"BLOCK", Json(1)}}),
            Json(true));
  EXPECT_NE(errorOf([] { ConfigExpr::parse(std::string(500, '(') + "1"); })
                .find("nested too deeply"),
            std::string::npos);

  // Random garbage from the expression alphabet: parse or throw, never crash.
  std::mt19937 rng(7);
  const std::string alphabet = "()+-*/%<>=!&|^~ ,.0123456789abxyz_'\"";
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    int length = int(rng() % 24);
    for (int j = 0; j < length; ++j)
      text += alphabet[rng() % alphabet.size()];
    try {
      eval(text, {{"a", Json(3)}, {"b", Json(0)}, {"x", Json(2.5)}});
    } catch (const Error &) {
    }
  }
}

TEST(AutotunePackage, PruneAndRestoreRoundTrip) {
  Package package = test::samplePackage();
  std::string before = package.contentHash();
  // Without the optional fields the serialisation (and the hash) is unchanged.
  EXPECT_EQ(package.serialize().find("autotune_prune"), std::string::npos);
  EXPECT_EQ(package.serialize().find("autotune_restore"), std::string::npos);

  package.kernels[0].autotunePrune = "(BLOCK < n_cols) or (num_warps > 8)";
  package.kernels[0].autotuneRestore = {"out"};
  Package reread = Package::parse(package.serialize(), "p.tslpkg");
  EXPECT_EQ(reread.kernels[0].autotunePrune, package.kernels[0].autotunePrune);
  EXPECT_EQ(reread.kernels[0].autotuneRestore, std::vector<std::string>{"out"});
  EXPECT_NE(reread.contentHash(), before);
}

TEST(AutotunePackage, ValidationNamesTheProblem) {
  Package package = test::samplePackage();
  package.kernels[0].autotuneRestore = {"stride"};
  EXPECT_EQ(errorOf([&] { package.validate(); }),
            "softmax.tslpkg: kernel 'softmax': autotune_restore names 'stride', "
            "which is not a pointer param");

  package = test::samplePackage();
  package.kernels[0].autotunePrune = "BLOCK < n_rows";
  EXPECT_EQ(errorOf([&] { package.validate(); }),
            "softmax.tslpkg: kernel 'softmax': autotune_prune 'BLOCK < n_rows' "
            "uses 'n_rows', which is not one of BLOCK, num_warps, num_stages, warp_specialize, "
            "n_cols");

  package = test::samplePackage();
  package.kernels[0].autotunePrune = "BLOCK <";
  EXPECT_EQ(errorOf([&] { package.validate(); }),
            "softmax.tslpkg: kernel 'softmax': cannot parse 'BLOCK <': column 8: "
            "unexpected end of the expression");
}
