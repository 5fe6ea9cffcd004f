//===- frontend/Lexer.h - tokens of the Tessel language, with indentation --===//
//
// Python-shaped lexing: NEWLINE ends a logical line (not inside brackets),
// INDENT/DEDENT bracket blocks, `#` starts a comment, `\` joins lines.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_LEXER_H
#define TESSEL_FRONTEND_LEXER_H

#include "frontend/Diagnostics.h"

#include <string>
#include <vector>

namespace tessel::frontend {

enum class TokenKind {
  Eof,
  Newline,
  Indent,
  Dedent,
  Name,
  Int,
  Float,
  String,
  // Keywords.
  KwDef,
  KwReturn,
  KwIf,
  KwElif,
  KwElse,
  KwFor,
  KwIn,
  KwPass,
  KwAnd,
  KwOr,
  KwNot,
  KwTrue,
  KwFalse,
  KwNone,
  KwImport,
  // Punctuation and operators.
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Dot,
  At,
  Arrow,
  Assign,
  Plus,
  Minus,
  Star,
  Slash,
  SlashSlash,
  Percent,
  StarStar,
  Amp,
  Pipe,
  Caret,
  Tilde,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  EqEq,
  NotEq,
  PlusAssign,
  MinusAssign,
  StarAssign,
  SlashAssign,
  SlashSlashAssign,
  PercentAssign,
  StarStarAssign,
  AmpAssign,
  PipeAssign,
  CaretAssign,
  Error,
};

/// The spelling of a token kind for messages: "'('", "newline", "name".
const char *tokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  SourceRange range;
  /// Names and numbers: their spelling; strings: the decoded value.
  std::string text;
};

/// Turns a whole file into tokens. Errors (bad characters, unterminated
/// strings, inconsistent dedents) are reported to `diags`; lexing goes on.
/// The result always ends with NEWLINE (if needed), DEDENTs and EOF.
std::vector<Token> lex(const SourceFile &file, DiagnosticEngine &diags);

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_LEXER_H
