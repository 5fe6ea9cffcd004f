//===- interpreter/Source.h - .tsl source -> interpretable kernel -*- C++ -*-===//
//
// The bridge from the frontend to the interpreter (library
// TesselInterpreterSource, built with the frontend): parse a .tsl file,
// resolve one configuration of a kernel with -D overrides, generate its
// tessel-dialect module and compile it for the interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INTERPRETER_SOURCE_H
#define TESSEL_INTERPRETER_SOURCE_H

#include "interpreter/Interpreter.h"
#include "package/Package.h"

#include <string>
#include <vector>

namespace tessel::interp {

struct SourceOptions {
  /// The kernel to compile; empty: the file's only @kernel.
  std::string kernel;
  /// "NAME=VALUE" constexpr overrides (as tesselc -D).
  std::vector<std::string> defines;
  /// Which @autotune configuration (after the overrides).
  unsigned config = 0;
  /// Where `import "file.tsl"` looks after the importing file's folder (as tesselc -I).
  std::vector<std::string> importDirs;
};

/// A kernel compiled from source, with its runtime parameter names.
struct SourceKernel {
  CompiledKernel kernel;
  std::vector<std::string> paramNames;
  /// "BLOCK=1024 T=f32" for messages.
  std::string configText;
  /// The tessel-dialect module that was compiled, printed with its locations.
  std::string ir;
  /// The kernel as a package would record it (compiler/KernelRecord.h), its params by
  /// name and kind, and the configuration compiled: what checkServes() reads.
  KernelInfo record;
  unsigned config = 0;

  /// Fails as the runtime's Kernel::launch does (runtime/KernelConfig.h) when the
  /// kernel's @autotune prune condition rules this configuration out for `args`.
  llvm::Error checkServes(llvm::ArrayRef<Arg> args) const;
};

/// Compiles kernel `opts.kernel` of the .tsl text `text` (named `path` in
/// locations and messages). Errors are the frontend's rendered diagnostics.
llvm::Expected<SourceKernel> compileSource(const std::string &path, const std::string &text,
                                           const SourceOptions &opts);
/// Reads `path`, then compileSource().
llvm::Expected<SourceKernel> compileSourceFile(const std::string &path,
                                               const SourceOptions &opts);

} // namespace tessel::interp

#endif // TESSEL_INTERPRETER_SOURCE_H
