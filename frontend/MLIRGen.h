//===- frontend/MLIRGen.h - AST -> tessel dialect, one kernel specialisation ===//
//
// Semantic analysis (shapes, dtypes, constexpr folding) happens while the IR is
// generated: a specialisation fixes every constexpr, so every shape is known.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_MLIRGEN_H
#define TESSEL_FRONTEND_MLIRGEN_H

#include "frontend/AST.h"
#include "frontend/Config.h"
#include "frontend/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace tessel::frontend {

/// Loads every dialect MLIRGen emits (func, arith, math, scf, tessel).
void loadMLIRGenDialects(mlir::MLIRContext &context);

/// Generates the module of kernel `kernel` of `module` under `spec`:
///   module attributes {tessel.num_warps, tessel.num_stages} {
///     func.func @kernel(<runtime params>) attributes {tessel.kernel} { ... }
///   }
/// Every op carries the FileLineColLoc of its source expression. Returns null
/// with errors in `diags` when the kernel is ill-typed, and an "internal error"
/// when the generated IR fails to verify.
mlir::OwningOpRef<mlir::ModuleOp> generateKernel(mlir::MLIRContext &context,
                                                 const ast::Module &module,
                                                 llvm::StringRef kernel,
                                                 const Specialization &spec,
                                                 DiagnosticEngine &diags);

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_MLIRGEN_H
