//===- bench/tools/Subcommand.cpp - tessel-bench's subcommand registry ----===//

#include "bench/tools/Subcommand.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

} // namespace tessel::bench
