//===- frontend/MLIRDiagnostics.cpp - MLIR diagnostics as source diagnostics ===//
#include "frontend/MLIRDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace tessel::frontend {

static std::optional<mlir::FileLineColLoc> findFileLoc(mlir::Location loc, unsigned depth = 0) {
  if (depth > 32)
    return std::nullopt;
  if (auto fl = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return fl;
  if (auto nl = mlir::dyn_cast<mlir::NameLoc>(loc))
    return findFileLoc(nl.getChildLoc(), depth + 1);
  if (auto cs = mlir::dyn_cast<mlir::CallSiteLoc>(loc))
    return findFileLoc(cs.getCallee(), depth + 1);
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location l : fused.getLocations())
      if (auto fl = findFileLoc(l, depth + 1))
        return fl;
  return std::nullopt;
}

std::optional<SourceRange> sourceRangeOf(mlir::Location loc, const DiagnosticEngine &diags) {
  auto fl = findFileLoc(loc);
  if (!fl || fl->getLine() == 0)
    return std::nullopt;
  std::optional<uint32_t> index = diags.fileNamed(fl->getFilename().getValue().str());
  if (!index)
    return std::nullopt;
  const SourceFile &file = diags.fileAt(*index);
  SourceLoc begin = file.locFor(fl->getLine(), fl->getColumn());
  begin.file = *index;
  std::string_view line = file.lineText(begin.line);
  size_t col = begin.col - 1, end = col;
  auto isWord = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
  };
  while (end < line.size() && isWord(line[end]))
    ++end;
  if (end == col)
    end = col + 1;
  SourceLoc last{uint32_t(begin.offset + (end - col)), begin.line, uint32_t(end + 1), *index};
  return SourceRange(begin, last);
}

SourceDiagnosticHandler::SourceDiagnosticHandler(mlir::MLIRContext *context,
                                                 DiagnosticEngine &diags)
    : mlir::ScopedDiagnosticHandler(context), diags_(diags) {
  setHandler([this](mlir::Diagnostic &diag) { handle(diag); });
}

void SourceDiagnosticHandler::handle(mlir::Diagnostic &diag) {
  if (diag.getSeverity() == mlir::DiagnosticSeverity::Remark)
    return;
  SourceRange range = sourceRangeOf(diag.getLocation(), diags_).value_or(SourceRange());
  std::string message = diag.str();
  bool warning = diag.getSeverity() == mlir::DiagnosticSeverity::Warning;
  if (!warning) {
    // "failed to legalize operation 'tessel.load' that was explicitly marked illegal"
    llvm::StringRef text(message);
    if (text.starts_with("failed to legalize operation")) {
      if (errorOffsets_.count({range.begin.file, range.begin.offset}))
        return;
      llvm::StringRef op = text.drop_until([](char c) { return c == '\''; }).drop_front();
      op = op.take_until([](char c) { return c == '\''; });
      message = "this expression cannot be compiled for the GPU (no lowering of '" + op.str() +
                "' for these types); please report the kernel";
    }
    errorOffsets_.insert({range.begin.file, range.begin.offset});
  }
  Diagnostic &d = warning ? diags_.warning(range, message) : diags_.error(range, message);
  for (const mlir::Diagnostic &n : diag.getNotes()) {
    std::string note = n.str();
    if (llvm::StringRef(note).starts_with("see current operation"))
      continue;
    DiagnosticEngine::note(d, sourceRangeOf(n.getLocation(), diags_).value_or(SourceRange()),
                           note);
  }
}

} // namespace tessel::frontend
