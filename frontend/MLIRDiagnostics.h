//===- frontend/MLIRDiagnostics.h - MLIR diagnostics as source diagnostics --===//
//
// While alive, reports every MLIR diagnostic (from MLIRGen's verification or
// from the lowering passes) to a DiagnosticEngine, at the source position of
// the op's FileLineColLoc, so that lowering errors point at the kernel source.
// MLIR's internals stay out of what the user reads: notes that dump the op ("see
// current operation") are dropped, and a "failed to legalize" becomes either nothing
// (a pattern already said why at that position) or a plain sentence naming the
// construct that cannot be compiled.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_MLIRDIAGNOSTICS_H
#define TESSEL_FRONTEND_MLIRDIAGNOSTICS_H

#include "frontend/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <optional>
#include <set>

namespace tessel::frontend {

/// The source range of a location (the first FileLineColLoc in it, through
/// name, call-site and fused locations), covering the identifier or number that
/// starts there. Nullopt when the location names no position in a file of `diags`.
std::optional<SourceRange> sourceRangeOf(mlir::Location loc, const DiagnosticEngine &diags);

class SourceDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  SourceDiagnosticHandler(mlir::MLIRContext *context, DiagnosticEngine &diags);

private:
  void handle(mlir::Diagnostic &diag);
  DiagnosticEngine &diags_;
  /// Source positions (file, offset) that already have an error: the conversion driver's
  /// "failed to legalize" that follows a pattern's own reason adds nothing.
  std::set<std::pair<uint32_t, uint32_t>> errorOffsets_;
};

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_MLIRDIAGNOSTICS_H
