//===- bench/tools/Flags.h - Command-line flags for tessel-bench tools -*- C++ -*-===//
//
// A small flag parser shared by every tessel-bench subcommand, so that all of
// them answer --help and --version the same way and reject bad input with a
// usage message instead of crashing:
//
//   int64_t batch = 4;
//   std::vector<std::string> models = {"small"};
//   tessel::bench::FlagParser flags("tessel-bench model", "benchmark the Transformer LM");
//   flags.add("batch-size", "N", "sequences per batch", batch);
//   flags.addList("model", "LIST", "presets to sweep", models);
//   if (auto exit = flags.parseOrExit(argc, argv)) return *exit;
//
// Flags are `--name value` or `--name=value`; switches (bool) take no value.
// Lists are comma separated.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_TOOLS_FLAGS_H
#define TESSEL_BENCH_TOOLS_FLAGS_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::bench {

/// "0.1.0" (the project version).
const char *versionString();

/// Splits "a,b,,c" into {"a", "b", "c"}.
std::vector<std::string> splitList(const std::string &text);

class FlagParser {
public:
  FlagParser(std::string program, std::string description);

  void add(const std::string &name, const std::string &valueName, const std::string &help,
           std::string &target);
  void add(const std::string &name, const std::string &valueName, const std::string &help,
           int64_t &target);
  void add(const std::string &name, const std::string &valueName, const std::string &help,
           double &target);
  /// A switch: `--name` sets target to true.
  void addSwitch(const std::string &name, const std::string &help, bool &target);
  void addList(const std::string &name, const std::string &valueName, const std::string &help,
               std::vector<std::string> &target);
  void addList(const std::string &name, const std::string &valueName, const std::string &help,
               std::vector<int64_t> &target);
  /// A flag whose value goes through `set`, which throws std::invalid_argument
  /// with a message when the value is bad.
  void addCustom(const std::string &name, const std::string &valueName, const std::string &help,
                 const std::string &defaultText, std::function<void(const std::string &)> set);

  enum class Outcome { Ok, Help, Version, Error };
  /// Parses argv[1..argc). On Error, error() says why. Positional arguments are
  /// an error unless allowPositional() was called; then they are in positional().
  Outcome parse(int argc, char **argv);
  /// parse() plus the standard reactions: --help prints usage() to stdout and
  /// yields 0, --version prints the version and yields 0, an error prints
  /// "error: ..." and the usage to stderr and yields 2; std::nullopt means "go on".
  std::optional<int> parseOrExit(int argc, char **argv);

  void allowPositional(const std::string &name) { positionalName_ = name; }
  const std::vector<std::string> &positional() const { return positional_; }
  const std::string &error() const { return error_; }
  /// Whether --name appeared on the command line.
  bool seen(const std::string &name) const;
  std::string usage() const;

private:
  struct Flag {
    std::string name, valueName, help, defaultText;
    bool isSwitch = false;
    std::function<void(const std::string &)> set;
    bool seen = false;
  };
  Flag *find(const std::string &name);

  std::string program_, description_, positionalName_, error_;
  std::vector<Flag> flags_;
  std::vector<std::string> positional_;
};

} // namespace tessel::bench

#endif // TESSEL_BENCH_TOOLS_FLAGS_H
