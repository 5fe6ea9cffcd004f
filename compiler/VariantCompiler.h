//===- compiler/VariantCompiler.h - one kernel variant to PTX ---*- C++ -*-===//
//
// One kernel under one specialisation (constexprs, num_warps, num_stages,
// divisibility) through MLIRGen, the lowering pipeline and PTX emission, or
// up to an earlier stage. Errors go to the frontend's diagnostic engine at the
// kernel's source.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_VARIANTCOMPILER_H
#define TESSEL_COMPILER_VARIANTCOMPILER_H

#include "compiler/Compiler.h"
#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

#include "mlir/IR/MLIRContext.h"

namespace tessel::compiler {

/// The result of compiling one variant up to some stage.
struct VariantOutput {
  bool ok = false;
  /// The printed stage (for a stage other than Package).
  std::string text;
  std::string ptx;
  /// The tessel IR before lowering, with source locations: what TESSEL_INTERPRET=1 runs.
  std::string tesselIR;
  int64_t sharedBytes = 0;
  std::vector<ParamInfo> params;
  /// Bulk-copy tensor maps the runtime encodes (parameters after `params`).
  std::vector<TensorMapSpec> tensorMaps;
  /// Warps of the producer partition (warp-specialized kernels; 0: none).
  int producerWarps = 0;
  /// The parameters the code assumes divisible by 16: of the specialisation's, those
  /// -tessel-narrow-divisibility kept (empty for the generic variant).
  std::vector<std::string> divisibleBy16;
  /// Where the time went (the stages that ran).
  StageTimes times;
};

class VariantCompiler {
public:
  VariantCompiler(const CompileOptions &options, frontend::DiagnosticEngine &diags,
                  const frontend::ast::Module &module);

  /// Stage::Package compiles to PTX.
  VariantOutput compile(const frontend::ast::Function &kernel,
                        const frontend::Specialization &spec, Stage stage);

private:
  const CompileOptions &options_;
  frontend::DiagnosticEngine &diags_;
  const frontend::ast::Module &module_;
  mlir::MLIRContext context_;
};

/// Every runtime parameter the specialised variant assumes divisible: pointers (16-byte
/// alignment) and integers (multiple of 16).
std::set<std::string> divisibleParams(const frontend::ast::Function &kernel,
                                      const frontend::Specialization &spec);

} // namespace tessel::compiler

#endif // TESSEL_COMPILER_VARIANTCOMPILER_H
