//===- tools/tesselc/Options.h - tesselc's command line --------------------===//
#ifndef TESSEL_TOOLS_TESSELC_OPTIONS_H
#define TESSEL_TOOLS_TESSELC_OPTIONS_H

#include "compiler/Compiler.h"

#include <optional>
#include <string>

namespace tessel::tesselc {

struct Options {
  std::string input;
  /// "-" or empty: stdout for --emit, <input>.tslpkg for packages.
  std::string output;
  compiler::CompileOptions compile;
  bool json = false;
  bool help = false;
  bool version = false;
};

/// Parses argv; on error prints "tesselc: error: ..." to stderr and returns nullopt.
std::optional<Options> parseOptions(int argc, char **argv);

/// The --help text.
const char *helpText();

} // namespace tessel::tesselc

#endif // TESSEL_TOOLS_TESSELC_OPTIONS_H
