//===- tools/tesselc/tesselc.cpp - the Tessel compiler's entry point -------===//
#include "tools/tesselc/Compile.h"
#include "tools/tesselc/Options.h"

#include <iostream>

int main(int argc, char **argv) {
  auto opts = tessel::tesselc::parseOptions(argc, argv);
  if (!opts)
    return 2;
  if (opts->help) {
    std::cout << tessel::tesselc::helpText();
    return 0;
  }
  if (opts->version) {
    std::cout << tessel::tesselc::versionText() << "\n";
    return 0;
  }
  return tessel::tesselc::run(*opts);
}
