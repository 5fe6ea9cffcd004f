//===- tools/tesselc/Options.h - tesselc's command line --------------------===//
#ifndef TESSEL_TOOLS_TESSELC_OPTIONS_H
#define TESSEL_TOOLS_TESSELC_OPTIONS_H

#include "frontend/Config.h"

#include <optional>
#include <string>
#include <vector>

namespace tessel::tesselc {

enum class Emit { Package, AST, Tessel, LLVMDialect, LLVM, PTX };

struct Options {
  std::string input;
  /// "-" or empty: stdout for --emit, <input>.tslpkg for packages.
  std::string output;
  Emit emit = Emit::Package;
  std::string arch = "sm_90";
  frontend::ConstexprValues defines;
  std::vector<std::string> kernels;
  unsigned numWarps = 4;
  std::optional<unsigned> config;
  /// --emit of the variant that assumes every pointer 16-byte aligned and every
  /// integer parameter a multiple of 16.
  bool specialize = false;
  /// sm_90a: the wgmma operands loaded by bulk tensor copies (TMA): "a", "b", "ab", "".
  std::string tmaOperands = "b";
  std::string mmaTmaOperands = "ab";
  /// Programs per cluster sharing bulk-copied B tiles (1: no clusters).
  unsigned multicastB = 1;
  /// sm_90a: run -tessel-async-dots (register-A wgmma dots wait at their first use).
  bool asyncDots = true;
  /// Compile only the configurations with at most this many pipeline stages (0: all).
  unsigned maxStages = 0;
  /// Errors reported before the rest are dropped (0: no limit).
  unsigned errorLimit = 20;
  bool json = false;
  /// Print nothing on success (the in-process JIT compiles through the same driver).
  bool quiet = false;
  bool help = false;
  bool version = false;
};

/// Parses argv; on error prints "tesselc: error: ..." to stderr and returns nullopt.
std::optional<Options> parseOptions(int argc, char **argv);

/// The --help text.
const char *helpText();

/// "tesselc 0.1.0 (LLVM 22...)".
std::string versionText();

} // namespace tessel::tesselc

#endif // TESSEL_TOOLS_TESSELC_OPTIONS_H
