//===- frontend/Parser.h - recursive-descent parser for Tessel sources -----===//
#ifndef TESSEL_FRONTEND_PARSER_H
#define TESSEL_FRONTEND_PARSER_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

namespace tessel::frontend {

/// Limits that keep the parser's recursion (and everything that walks the
/// tree afterwards) bounded on any input.
struct ParserLimits {
  /// Nested brackets, unary operators and conditional expressions.
  unsigned maxNesting = 100;
  /// Height of an expression tree (long `a + b + c + ...` chains).
  unsigned maxExprDepth = 256;
  /// Nested blocks (if/for inside if/for ...).
  unsigned maxBlockDepth = 64;
};

/// Lexes and parses a whole file. Errors go to `diags` (the parser recovers at
/// statement level, so several errors are reported); the module holds every
/// function that parsed, possibly with statements missing.
ast::Module parseModule(const SourceFile &file, DiagnosticEngine &diags,
                        const ParserLimits &limits = ParserLimits());

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_PARSER_H
