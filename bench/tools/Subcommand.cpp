//===- bench/tools/Subcommand.cpp - tessel-bench's subcommand registry ----===//

#include "bench/tools/Subcommand.h"
#include "bench/tools/Flags.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace tessel::bench {

// A function-local static: registrars in other translation units may run first.
static std::vector<Subcommand> &registry() {
  static std::vector<Subcommand> entries;
  return entries;
}

bool registerSubcommand(const Subcommand &subcommand) {
  if (findSubcommand(subcommand.name)) {
    std::fprintf(stderr, "tessel-bench: subcommand '%s' is registered twice\n", subcommand.name);
    std::abort();
  }
  registry().push_back(subcommand);
  return true;
}

std::vector<Subcommand> subcommands() {
  std::vector<Subcommand> sorted = registry();
  std::sort(sorted.begin(), sorted.end(), [](const Subcommand &a, const Subcommand &b) {
    return std::strcmp(a.name, b.name) < 0;
  });
  return sorted;
}

const Subcommand *findSubcommand(std::string_view name) {
  for (const Subcommand &subcommand : registry())
    if (name == subcommand.name)
      return &subcommand;
  return nullptr;
}

static void printUsage(std::FILE *out, const char *tool, const char *description,
                       const std::vector<Subcommand> &commands) {
  std::fprintf(out,
               "usage: %s <subcommand> [flags]\n\n%s\n"
               "`%s <subcommand> --help` lists a subcommand's flags.\n\nsubcommands:\n",
               tool, description, tool);
  size_t width = 0;
  for (const Subcommand &s : commands)
    width = std::max(width, std::strlen(s.name));
  for (const Subcommand &s : commands)
    std::fprintf(out, "  %-*s  %s\n", static_cast<int>(width), s.name, s.summary);
}

int runSubcommands(const char *tool, const char *description,
                   const std::vector<Subcommand> &commands, int argc, char **argv,
                   void (*beforeRun)()) {
  if (argc < 2) {
    std::fprintf(stderr, "error: no subcommand given\n\n");
    printUsage(stderr, tool, description, commands);
    return 2;
  }
  std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    printUsage(stdout, tool, description, commands);
    return 0;
  }
  if (first == "--version") {
    std::printf("%s %s\n", tool, versionString());
    return 0;
  }
  auto found = std::find_if(commands.begin(), commands.end(),
                            [&](const Subcommand &s) { return first == s.name; });
  if (found == commands.end()) {
    std::fprintf(stderr, "error: unknown subcommand '%s'\n\n", argv[1]);
    printUsage(stderr, tool, description, commands);
    return 2;
  }
  if (beforeRun)
    beforeRun();
  try {
    return found->run(argc - 1, argv + 1);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s %s: error: %s\n", tool, found->name, e.what());
    return 1;
  }
}

} // namespace tessel::bench
