//===- test/harness/ToolsTest.cpp - tessel-bench's flags, registry and reports ===//

#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace tessel::bench;

namespace {

struct Argv {
  explicit Argv(std::vector<std::string> args) : storage(std::move(args)) {
    for (std::string &s : storage)
      pointers.push_back(s.data());
  }
  int argc() { return static_cast<int>(pointers.size()); }
  char **argv() { return pointers.data(); }
  std::vector<std::string> storage;
  std::vector<char *> pointers;
};

struct Parsed {
  FlagParser::Outcome outcome;
  std::string error;
  int64_t batch = 4;
  double lr = 1e-3;
  std::string name = "x";
  bool memory = false;
  std::vector<int64_t> contexts = {128};
  std::vector<std::string> models = {"small"};
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "tool");
  Argv argv(args);
  Parsed p{};
  p.batch = 4;
  FlagParser flags("tool", "a test tool");
  flags.add("batch-size", "N", "batch", p.batch);
  flags.add("lr", "X", "learning rate", p.lr);
  flags.add("name", "S", "a name", p.name);
  flags.addSwitch("memory", "memory", p.memory);
  flags.addList("context-length", "LIST", "contexts", p.contexts);
  flags.addList("model", "LIST", "models", p.models);
  p.outcome = flags.parse(argv.argc(), argv.argv());
  p.error = flags.error();
  return p;
}

} // namespace

TEST(HarnessFlags, ParsesValuesSwitchesAndLists) {
  Parsed p = parse({"--batch-size", "8", "--lr=0.5", "--memory", "--context-length", "128,512",
                    "--model=small,xl", "--name", "abc"});
  ASSERT_EQ(p.outcome, FlagParser::Outcome::Ok) << p.error;
  EXPECT_EQ(p.batch, 8);
  EXPECT_DOUBLE_EQ(p.lr, 0.5);
  EXPECT_TRUE(p.memory);
  EXPECT_EQ(p.contexts, (std::vector<int64_t>{128, 512}));
  EXPECT_EQ(p.models, (std::vector<std::string>{"small", "xl"}));
  EXPECT_EQ(p.name, "abc");
}

TEST(HarnessFlags, DefaultsStayWhenAbsent) {
  Parsed p = parse({});
  ASSERT_EQ(p.outcome, FlagParser::Outcome::Ok);
  EXPECT_EQ(p.batch, 4);
  EXPECT_FALSE(p.memory);
  EXPECT_EQ(p.contexts, (std::vector<int64_t>{128}));
}

TEST(HarnessFlags, BadInputIsAnErrorWithAMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case &c : std::vector<Case>{
           {{"--bogus"}, "unknown flag --bogus"},
           {{"--batch-size", "four"}, "bad value for --batch-size: expected an integer, got 'four'"},
           {{"--batch-size", "4x"}, "expected an integer"},
           {{"--batch-size", "99999999999999999999999"}, "expected an integer"},
           {{"--lr", "fast"}, "expected a number"},
           {{"--lr", "nan"}, "expected a number"},
           {{"--batch-size"}, "--batch-size needs a value"},
           {{"--memory=yes"}, "--memory takes no value"},
           {{"--context-length", "128,big"}, "expected an integer, got 'big'"},
           {{"--model", ","}, "expected a comma-separated list"},
           {{"stray"}, "unexpected argument 'stray'"},
           {{"-x"}, "unexpected argument '-x'"},
           {{""}, "unexpected argument ''"},
       }) {
    Parsed p = parse(c.args);
    EXPECT_EQ(p.outcome, FlagParser::Outcome::Error) << c.args[0];
    EXPECT_NE(p.error.find(c.message), std::string::npos) << p.error;
  }
}

TEST(HarnessFlags, HelpAndVersionWin) {
  EXPECT_EQ(parse({"--batch-size", "8", "--help"}).outcome, FlagParser::Outcome::Help);
  EXPECT_EQ(parse({"-h"}).outcome, FlagParser::Outcome::Help);
  EXPECT_EQ(parse({"--version"}).outcome, FlagParser::Outcome::Version);
}

TEST(HarnessFlags, ParseOrExitPrintsUsageAndReturnsTwo) {
  int64_t n = 1;
  FlagParser flags("tool", "a test tool");
  flags.add("count", "N", "how many", n);
  Argv bad({"tool", "--count", "many"});
  testing::internal::CaptureStderr();
  std::optional<int> exit = flags.parseOrExit(bad.argc(), bad.argv());
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(*exit, 2);
  EXPECT_NE(err.find("error: bad value for --count"), std::string::npos) << err;
  EXPECT_NE(err.find("usage: tool [flags]"), std::string::npos) << err;
  EXPECT_NE(err.find("--count N"), std::string::npos) << err;
  EXPECT_NE(err.find("(default 1)"), std::string::npos) << err;

  FlagParser ok("tool", "a test tool");
  Argv fine({"tool"});
  EXPECT_FALSE(ok.parseOrExit(fine.argc(), fine.argv()).has_value());
}

TEST(HarnessFlags, SplitList) {
  EXPECT_EQ(splitList("a,b,,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(splitList("").empty());
}

static int fakeRun(int, char **) { return 7; }
TESSEL_BENCH_SUBCOMMAND("zz-test-subcommand", "registered by the test", fakeRun);

TEST(HarnessSubcommands, RegistrarAddsAndFindsSubcommands) {
  const Subcommand *s = findSubcommand("zz-test-subcommand");
  ASSERT_NE(s, nullptr);
  EXPECT_STREQ(s->summary, "registered by the test");
  EXPECT_EQ(s->run(0, nullptr), 7);
  EXPECT_EQ(findSubcommand("nope"), nullptr);
  registerSubcommand({"aa-first", "sorted first", fakeRun});
  EXPECT_STREQ(subcommands().front().name, "aa-first");
}

TEST(HarnessReport, TableJsonAndCsv) {
  Record a, b;
  a.set("model", "small");
  a.set("ms_mean", 18.5);
  a.set("ms_std", 0.25);
  a.set("params", int64_t{128625408});
  a.set("model", "small"); // replaces in place
  b.set("model", "xl, \"big\"");
  b.set("ms_mean", std::nan(""));
  b.set("status", "OOM");
  std::vector<Record> records = {a, b};
  EXPECT_EQ(a.fields().size(), 4u);

  std::string table = formatTable(records, {fieldColumn("model", "model", 0, true),
                                            meanStdColumn("time ms", "ms"),
                                            fieldColumn("status", "status", 0, true)});
  EXPECT_NE(table.find("18.50 ± 0.25"), std::string::npos) << table;
  EXPECT_NE(table.find("OOM"), std::string::npos) << table;
  std::string markdown = formatTable(records, {fieldColumn("model", "model", 0, true)}, true);
  EXPECT_EQ(markdown.rfind("| model", 0), 0u) << markdown;
  EXPECT_NE(markdown.find("| :"), std::string::npos) << markdown;

  std::ostringstream json;
  Record meta;
  meta.set("tool", "test");
  writeJson(json, meta, records);
  EXPECT_NE(json.str().find("\"tool\": \"test\""), std::string::npos);
  EXPECT_NE(json.str().find("\"params\": 128625408"), std::string::npos);
  EXPECT_NE(json.str().find("\"ms_mean\": null"), std::string::npos); // NaN is not JSON
  EXPECT_NE(json.str().find("\"model\": \"xl, \\\"big\\\"\""), std::string::npos) << json.str();

  std::ostringstream csv;
  writeCsv(csv, records);
  EXPECT_EQ(csv.str(), "model,ms_mean,ms_std,params,status\n"
                       "small,18.5,0.25,128625408,\n"
                       "\"xl, \"\"big\"\"\",,,,OOM\n");
}
