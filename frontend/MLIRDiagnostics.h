//===- frontend/MLIRDiagnostics.h - MLIR diagnostics as source diagnostics --===//
//
// While alive, reports every MLIR diagnostic (from MLIRGen's verification or
// from the lowering passes) to a DiagnosticEngine, at the source position of
// the op's FileLineColLoc, so that lowering errors point at the kernel source.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_MLIRDIAGNOSTICS_H
#define TESSEL_FRONTEND_MLIRDIAGNOSTICS_H

#include "frontend/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <optional>

namespace tessel::frontend {

/// The source range of a location (the first FileLineColLoc in it, through
/// name, call-site and fused locations), covering the identifier or number that
/// starts there. Nullopt when the location names no position in `file`.
std::optional<SourceRange> sourceRangeOf(mlir::Location loc, const SourceFile &file);

class SourceDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  SourceDiagnosticHandler(mlir::MLIRContext *context, DiagnosticEngine &diags);

private:
  void handle(mlir::Diagnostic &diag);
  DiagnosticEngine &diags_;
};

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_MLIRDIAGNOSTICS_H
