//===- frontend/ASTPrinter.h - readable dumps of the syntax tree -----------===//
#ifndef TESSEL_FRONTEND_ASTPRINTER_H
#define TESSEL_FRONTEND_ASTPRINTER_H

#include "frontend/AST.h"

#include <string>

namespace tessel::frontend {

/// An indented tree, one node per line (`--emit=ast`).
std::string printAST(const ast::Module &module);

/// An expression as source text, fully parenthesised: `(a + (b * 2))`.
std::string exprToString(const ast::Expr &expr);

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_ASTPRINTER_H
