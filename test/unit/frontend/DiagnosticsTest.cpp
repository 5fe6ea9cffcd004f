//===- test/unit/frontend/DiagnosticsTest.cpp - clang-style rendering ------===//
#include "frontend/Diagnostics.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tessel::frontend;

namespace {

TEST(Diagnostics, RendersLineAndCaretRange) {
  SourceFile file("x.tsl", "first\n    mask = colss < n\n");
  DiagnosticEngine diags(file);
  SourceLoc b = file.locFor(2, 12), e = file.locFor(2, 17);
  diags.error(SourceRange(b, e), "unknown name 'colss'");
  EXPECT_EQ(diags.render(diags.diagnostics()[0]),
            "x.tsl:2:12: error: unknown name 'colss'\n"
            "    mask = colss < n\n"
            "           ^~~~~\n");
}

TEST(Diagnostics, NotesFollowTheirError) {
  SourceFile file("x.tsl", "a = 1\nb = a\n");
  DiagnosticEngine diags(file);
  Diagnostic &d = diags.error(SourceRange(file.locFor(2, 5)), "bad");
  DiagnosticEngine::note(d, SourceRange(file.locFor(1, 1)), "defined here");
  std::ostringstream os;
  diags.flush(os);
  EXPECT_EQ(os.str(), "x.tsl:2:5: error: bad\nb = a\n    ^\n"
                      "x.tsl:1:1: note: defined here\na = 1\n^\n");
}

TEST(Diagnostics, TabsAreKeptInTheCaretLine) {
  SourceFile file("x.tsl", "\tx = y\n");
  DiagnosticEngine diags(file);
  diags.error(SourceRange(file.locFor(1, 6)), "e");
  EXPECT_EQ(diags.render(diags.diagnostics()[0]), "x.tsl:1:6: error: e\n\tx = y\n\t    ^\n");
}

TEST(Diagnostics, FlushPrintsInSourceOrderOnce) {
  SourceFile file("x.tsl", "a\nb\n");
  DiagnosticEngine diags(file);
  diags.error(SourceRange(file.locFor(2, 1)), "second");
  diags.error(SourceRange(file.locFor(1, 1)), "first");
  std::ostringstream os;
  diags.flush(os);
  std::string text = os.str();
  EXPECT_LT(text.find("first"), text.find("second"));
  std::ostringstream again;
  diags.flush(again);
  EXPECT_EQ(again.str(), "");
  std::ostringstream summary;
  diags.printSummary(summary);
  EXPECT_EQ(summary.str(), "2 errors generated.\n");
}

TEST(Diagnostics, ErrorLimit) {
  SourceFile file("x.tsl", "a\n");
  DiagnosticEngine diags(file);
  for (int i = 0; i < 100; ++i)
    diags.error(SourceRange(file.locFor(1, 1)), "e");
  EXPECT_EQ(diags.diagnostics().size(), DiagnosticEngine::kDefaultErrorLimit + 1);
  EXPECT_EQ(diags.diagnostics().back().message,
            "too many errors emitted, stopping now (--error-limit 20; 0 for no limit)");
  DiagnosticEngine unlimited(file, 0);
  for (int i = 0; i < 100; ++i)
    unlimited.error(SourceRange(file.locFor(1, 1)), "e");
  EXPECT_EQ(unlimited.diagnostics().size(), 100u);
}

TEST(Diagnostics, ByteOrderMarkIsNotSource) {
  SourceFile file("x.tsl", "\xEF\xBB\xBF@kernel\n");
  EXPECT_EQ(file.text(), "@kernel\n");
  EXPECT_EQ(file.lineText(1), "@kernel");
}

TEST(Diagnostics, NoLocation) {
  SourceFile file("x.tsl", "");
  DiagnosticEngine diags(file);
  diags.error(SourceRange(), "no kernel");
  EXPECT_EQ(diags.render(diags.diagnostics()[0]), "x.tsl: error: no kernel\n");
}

TEST(Diagnostics, LocForClamps) {
  SourceFile file("x.tsl", "ab\ncd");
  EXPECT_EQ(file.lineCount(), 2u);
  EXPECT_EQ(file.lineText(2), "cd");
  EXPECT_EQ(file.lineText(3), "");
  SourceLoc l = file.locFor(9, 9);
  EXPECT_EQ(l.line, 2u);
  EXPECT_EQ(l.col, 3u);
}

} // namespace
