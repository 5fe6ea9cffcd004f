//===- bench/tools/Main.cpp - tessel-bench: dispatch to a subcommand ------===//

#include "bench/ops/FusedOps.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Subcommand.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

using tessel::bench::Subcommand;

static void printUsage(std::FILE *out) {
  std::fprintf(out, "usage: tessel-bench <subcommand> [flags]\n\n"
                    "The Tessel LibTorch harness: benchmarks of the CS336 Transformer LM and friends.\n"
                    "`tessel-bench <subcommand> --help` lists a subcommand's flags.\n\n"
                    "subcommands:\n");
  size_t width = 0;
  for (const Subcommand &s : tessel::bench::subcommands())
    width = std::max(width, std::strlen(s.name));
  for (const Subcommand &s : tessel::bench::subcommands())
    std::fprintf(out, "  %-*s  %s\n", static_cast<int>(width), s.name, s.summary);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "error: no subcommand given\n\n");
    printUsage(stderr);
    return 2;
  }
  std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    printUsage(stdout);
    return 0;
  }
  if (first == "--version") {
    std::printf("tessel-bench %s\n", tessel::bench::versionString());
    return 0;
  }
  // Tessel's kernels as the model's ops (--attention tessel); packages load on first use.
  tessel::ops::installTesselOps();
  const Subcommand *subcommand = tessel::bench::findSubcommand(first);
  if (!subcommand) {
    std::fprintf(stderr, "error: unknown subcommand '%s'\n\n", first.c_str());
    printUsage(stderr);
    return 2;
  }
  try {
    return subcommand->run(argc - 1, argv + 1);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tessel-bench %s: error: %s\n", subcommand->name, e.what());
    return 1;
  }
}
