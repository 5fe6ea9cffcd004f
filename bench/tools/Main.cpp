//===- bench/tools/Main.cpp - tessel-bench: dispatch to a subcommand ------===//

#include "bench/ops/FusedOps.h"
#include "bench/tools/Subcommand.h"

int main(int argc, char **argv) {
  // Tessel's kernels as the model's ops (--attention tessel); packages load on first use.
  return tessel::bench::runSubcommands(
      "tessel-bench",
      "The Tessel LibTorch harness: benchmarks of the CS336 Transformer LM and friends.",
      tessel::bench::subcommands(), argc, argv, tessel::ops::installTesselOps);
}
