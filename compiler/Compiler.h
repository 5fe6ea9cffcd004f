//===- compiler/Compiler.h - Tessel's compiler as a library -----*- C++ -*-===//
//
// Source text and options in; a package (or the text of one stage) and the
// rendered diagnostics out, all in memory: no files, no exit codes, nothing
// printed. tesselc is a thin main over it and the JIT (compiler/Jit.h)
// compiles through it.
//
//   tessel::compiler::CompileOptions options;
//   options.arch = "sm_90a";
//   auto result = tessel::compiler::compile(source, "softmax.tsl", options);
//   if (!result.ok)
//     std::cerr << result.diagnostics;
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_COMPILER_H
#define TESSEL_COMPILER_COMPILER_H

#include "frontend/Config.h"
#include "package/Package.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::compiler {

/// Where compilation stops: a package of every configuration, or the text of
/// one stage for one configuration of each kernel.
enum class Stage { Package, AST, Tessel, LLVMDialect, LLVM, PTX };

struct CompileOptions {
  Stage stage = Stage::Package;
  std::string arch = "sm_90";
  frontend::ConstexprValues defines;
  /// The kernels to compile (empty: every @kernel).
  std::vector<std::string> kernels;
  /// Where `import "file.tsl"` looks after the importing file's folder (tesselc -I, then
  /// the kernels/ folder of the source tree tesselc was built from).
  std::vector<std::string> importDirs;
  /// num_warps of kernels without @autotune.
  unsigned numWarps = 4;
  /// sm_90a: the wgmma operands loaded by bulk tensor copies (TMA): "a", "b", "ab", "".
  std::string tmaOperands = "b";
  std::string mmaTmaOperands = "ab";
  /// Programs per cluster sharing bulk-copied B tiles (1: no clusters).
  unsigned multicastB = 1;
  /// sm_90a: run -tessel-async-dots (register-A wgmma dots wait at their first use).
  bool asyncDots = true;
  /// sm_90a: consumer warpgroups of a warp-specialized loop take turns (ping-pong; off:
  /// measured no faster on attention's forward, docs/attention.md).
  bool warpgroupTurns = false;
  /// sm_90a: warp-specialize pipelined loops whose loads all come by TMA.
  bool warpSpecialize = false;
  /// Compile only the configurations with at most this many pipeline stages (0: all).
  unsigned maxStages = 0;
  /// Errors reported before the rest are dropped (0: no limit).
  unsigned errorLimit = 20;
  /// With a stage other than Package: the configuration shown, and whether the
  /// variant that assumes 16-byte-aligned pointers and multiples of 16 is.
  unsigned config = 0;
  bool specialize = false;
  /// Stage::Package: also store each variant's machine code (compiler/Ptxas.h), made
  /// by `ptxas` (empty: the toolkit's, found as findPtxas does).
  bool cubin = false;
  std::string ptxas;
};

/// Where a variant's compile time went, in milliseconds.
struct StageTimes {
  double mlirgenMs = 0;  ///< AST -> tessel dialect
  double loweringMs = 0; ///< the MLIR pipeline, tessel -> LLVM dialect
  double llvmMs = 0;     ///< LLVM IR and its optimisation pipeline (O3)
  double codegenMs = 0;  ///< NVPTX code generation
  StageTimes &operator+=(const StageTimes &other) {
    mlirgenMs += other.mlirgenMs;
    loweringMs += other.loweringMs;
    llvmMs += other.llvmMs;
    codegenMs += other.codegenMs;
    return *this;
  }
};

/// One compiled variant, for the compiler's report.
struct VariantReport {
  std::string kernel;
  int config = 0;
  bool specialised = false;
  int64_t sharedBytes = 0;
  size_t ptxLines = 0;
  double ms = 0;
  StageTimes stages;
};

struct CompileResult {
  bool ok = false;
  /// Stage::Package: every kernel, every configuration, two variants each.
  Package package;
  /// Other stages: the printed stage.
  std::string text;
  /// Errors and warnings, rendered with file:line:col and a caret, and a summary
  /// line when there are errors.
  std::string diagnostics;
  std::vector<VariantReport> variants;
  double totalMs = 0;
};

/// Compiles `source`; `fileName` names it in diagnostics and in the package.
CompileResult compile(std::string_view source, std::string_view fileName,
                      const CompileOptions &options);

/// "tesselc 0.1.0 (LLVM 22...)": written into packages and part of the JIT's cache key.
std::string versionText();

} // namespace tessel::compiler

#endif // TESSEL_COMPILER_COMPILER_H
