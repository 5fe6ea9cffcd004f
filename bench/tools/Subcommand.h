//===- bench/tools/Subcommand.h - tessel-bench's pluggable subcommands -*- C++ -*-===//
//
// Every `tessel-bench <name> ...` subcommand registers itself from its own
// source file with one line:
//
//   static int runAllReduce(int argc, char **argv);
//   TESSEL_BENCH_SUBCOMMAND("all-reduce", "benchmark NCCL all-reduce", runAllReduce);
//
// run() gets argv[0] == the subcommand's name and the remaining arguments
// unchanged; it returns the process exit code (0 ok, 2 usage error, 1 failure).
//
// Static registrars are dropped when they live in a static library nobody
// references, so subcommand sources are compiled straight into tessel-bench:
// a CMakeLists.txt that bench/CMakeLists.txt adds before tools/ appends them with
//
//   set_property(GLOBAL APPEND PROPERTY TESSEL_BENCH_SOURCES
//                ${CMAKE_CURRENT_SOURCE_DIR}/AllReduceBench.cpp)
//   set_property(GLOBAL APPEND PROPERTY TESSEL_BENCH_LIBS TesselDistributed)
//
// (absolute paths). bench/tools/CMakeLists.txt reads both properties.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_TOOLS_SUBCOMMAND_H
#define TESSEL_BENCH_TOOLS_SUBCOMMAND_H

#include <string_view>
#include <vector>

namespace tessel::bench {

using SubcommandFn = int (*)(int argc, char **argv);

struct Subcommand {
  const char *name;    ///< What follows `tessel-bench` on the command line.
  const char *summary; ///< One line for `tessel-bench --help`.
  SubcommandFn run;
};

/// Adds a subcommand (called by TESSEL_BENCH_SUBCOMMAND at static-init time).
/// A second subcommand of the same name aborts start-up with a message.
bool registerSubcommand(const Subcommand &subcommand);

/// All registered subcommands, sorted by name.
std::vector<Subcommand> subcommands();

/// The subcommand called `name`, or nullptr.
const Subcommand *findSubcommand(std::string_view name);

/// The main() of a tool made of subcommands (tessel-bench, tessel-plan): `--help` lists
/// `commands` under `description`, `--version` prints the version, a missing or unknown
/// subcommand is a usage error (exit 2), and an exception a subcommand throws is reported
/// as "TOOL NAME: error: ..." (exit 1). `beforeRun` runs once a subcommand is found.
int runSubcommands(const char *tool, const char *description,
                   const std::vector<Subcommand> &commands, int argc, char **argv,
                   void (*beforeRun)() = nullptr);

} // namespace tessel::bench

#define TESSEL_BENCH_CONCAT_IMPL(a, b) a##b
#define TESSEL_BENCH_CONCAT(a, b) TESSEL_BENCH_CONCAT_IMPL(a, b)

/// Registers `fn` as `tessel-bench NAME`; use at namespace scope in a .cpp
/// compiled into tessel-bench (see the top of this file).
#define TESSEL_BENCH_SUBCOMMAND(NAME, SUMMARY, FN)                                          \
  [[maybe_unused]] static const bool TESSEL_BENCH_CONCAT(tesselBenchSubcommand_, __LINE__) = \
      ::tessel::bench::registerSubcommand(::tessel::bench::Subcommand{NAME, SUMMARY, FN})

#endif // TESSEL_BENCH_TOOLS_SUBCOMMAND_H
