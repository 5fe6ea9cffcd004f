//===- frontend/ASTPrinter.h - readable dumps of the syntax tree -----------===//
#ifndef TESSEL_FRONTEND_ASTPRINTER_H
#define TESSEL_FRONTEND_ASTPRINTER_H

#include "frontend/AST.h"

#include <cstdint>
#include <functional>
#include <string>

namespace tessel::frontend {

/// The name of the file a location's index names (DiagnosticEngine::fileAt).
using FileNames = std::function<std::string(uint32_t file)>;

/// An indented tree, one node per line (`--emit=ast`). Locations in imported files (index
/// > 0) are prefixed with the file's name when `fileNames` is given.
std::string printAST(const ast::Module &module, const FileNames &fileNames = {});

/// An expression as source text, fully parenthesised: `(a + (b * 2))`.
std::string exprToString(const ast::Expr &expr);

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_ASTPRINTER_H
