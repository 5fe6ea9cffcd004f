//===- test/unit/frontend/LexerTest.cpp - tokens, indentation, literals ----===//
#include "frontend/Lexer.h"

#include <gtest/gtest.h>

using namespace tessel::frontend;

namespace {

std::vector<TokenKind> kinds(const std::string &text, unsigned *errors = nullptr) {
  SourceFile file("t.tsl", text);
  DiagnosticEngine diags(file);
  std::vector<TokenKind> out;
  for (const Token &t : lex(file, diags))
    out.push_back(t.kind);
  if (errors)
    *errors = diags.errorCount();
  return out;
}

using K = TokenKind;

TEST(Lexer, IndentAndDedent) {
  auto k = kinds("def f():\n    x = 1\n    if x:\n        y\nz\n");
  std::vector<K> want = {K::KwDef,  K::Name,    K::LParen, K::RParen, K::Colon,   K::Newline,
                         K::Indent, K::Name,    K::Assign, K::Int,    K::Newline, K::KwIf,
                         K::Name,   K::Colon,   K::Newline, K::Indent, K::Name,   K::Newline,
                         K::Dedent, K::Dedent,  K::Name,   K::Newline, K::Eof};
  EXPECT_EQ(k, want);
}

TEST(Lexer, BlankLinesAndCommentsDoNotIndent) {
  auto k = kinds("a\n\n      # comment\n   \nb\n");
  std::vector<K> want = {K::Name, K::Newline, K::Name, K::Newline, K::Eof};
  EXPECT_EQ(k, want);
}

TEST(Lexer, NewlinesInsideBracketsAreIgnored) {
  auto k = kinds("f(a,\n      b)\n");
  std::vector<K> want = {K::Name, K::LParen, K::Name, K::Comma, K::Name, K::RParen, K::Newline,
                         K::Eof};
  EXPECT_EQ(k, want);
}

TEST(Lexer, LineContinuation) {
  auto k = kinds("a = 1 + \\\n  2\n");
  std::vector<K> want = {K::Name, K::Assign, K::Int, K::Plus, K::Int, K::Newline, K::Eof};
  EXPECT_EQ(k, want);
}

TEST(Lexer, Operators) {
  auto k = kinds("a //= b ** c // d != e <= f -> g\n");
  std::vector<K> want = {K::Name, K::SlashSlashAssign, K::Name,  K::StarStar, K::Name,
                         K::SlashSlash, K::Name,       K::NotEq, K::Name,     K::LessEq,
                         K::Name, K::Arrow,            K::Name,  K::Newline,  K::Eof};
  EXPECT_EQ(k, want);
}

TEST(Lexer, NumbersAndStrings) {
  SourceFile file("t.tsl", "0x1F 1_000 1.5 .5 1e-3 2. 'a\\n' \"b\" \"\"\"x\ny\"\"\"\n");
  DiagnosticEngine diags(file);
  auto toks = lex(file, diags);
  ASSERT_GE(toks.size(), 9u);
  EXPECT_EQ(toks[0].kind, K::Int);
  EXPECT_EQ(toks[0].text, "0x1F");
  EXPECT_EQ(toks[1].text, "1000");
  EXPECT_EQ(toks[2].kind, K::Float);
  EXPECT_EQ(toks[3].kind, K::Float);
  EXPECT_EQ(toks[4].kind, K::Float);
  EXPECT_EQ(toks[5].kind, K::Float);
  EXPECT_EQ(toks[6].text, "a\n");
  EXPECT_EQ(toks[7].text, "b");
  EXPECT_EQ(toks[8].text, "x\ny");
  EXPECT_FALSE(diags.hasErrors());
}

TEST(Lexer, KeywordsAreNotNames) {
  auto k = kinds("for x in range(n): pass\n");
  EXPECT_EQ(k[0], K::KwFor);
  EXPECT_EQ(k[2], K::KwIn);
  EXPECT_EQ(k[8], K::KwPass);
}

TEST(Lexer, Errors) {
  unsigned errors = 0;
  kinds("x = \"abc\n", &errors);
  EXPECT_EQ(errors, 1u);
  kinds("x = 1 $ 2 ? 3\n", &errors);
  EXPECT_EQ(errors, 2u);
  kinds("x = 12abc\n", &errors);
  EXPECT_EQ(errors, 1u);
  kinds("def f():\n    a\n  b\n", &errors);
  EXPECT_EQ(errors, 1u);
  kinds("x = \xe2\x82\xac\n", &errors); // one error for a whole UTF-8 sequence
  EXPECT_EQ(errors, 1u);
}

TEST(Lexer, Locations) {
  SourceFile file("t.tsl", "a\n  bc = 1\n");
  DiagnosticEngine diags(file);
  auto toks = lex(file, diags);
  // a NEWLINE INDENT bc
  ASSERT_GE(toks.size(), 4u);
  EXPECT_EQ(toks[3].kind, K::Name);
  EXPECT_EQ(toks[3].range.begin.line, 2u);
  EXPECT_EQ(toks[3].range.begin.col, 3u);
  EXPECT_EQ(toks[3].range.end.col, 5u);
}

TEST(Lexer, AlwaysEndsWithEof) {
  for (const char *text : {"", "(", "\"", "   x", "\n\n\t\tx\n", "\\"}) {
    auto k = kinds(text);
    ASSERT_FALSE(k.empty());
    EXPECT_EQ(k.back(), K::Eof) << text;
  }
}

} // namespace
