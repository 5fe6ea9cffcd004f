//===- frontend/Lexer.cpp - Python-shaped tokenizer with INDENT/DEDENT -----===//
#include "frontend/Lexer.h"

#include <cstdio>

namespace tessel::frontend {

const char *tokenKindName(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Newline: return "newline";
  case TokenKind::Indent: return "indent";
  case TokenKind::Dedent: return "dedent";
  case TokenKind::Name: return "name";
  case TokenKind::Int: return "integer";
  case TokenKind::Float: return "float";
  case TokenKind::String: return "string";
  case TokenKind::KwDef: return "'def'";
  case TokenKind::KwReturn: return "'return'";
  case TokenKind::KwIf: return "'if'";
  case TokenKind::KwElif: return "'elif'";
  case TokenKind::KwElse: return "'else'";
  case TokenKind::KwFor: return "'for'";
  case TokenKind::KwIn: return "'in'";
  case TokenKind::KwPass: return "'pass'";
  case TokenKind::KwAnd: return "'and'";
  case TokenKind::KwOr: return "'or'";
  case TokenKind::KwNot: return "'not'";
  case TokenKind::KwTrue: return "'True'";
  case TokenKind::KwFalse: return "'False'";
  case TokenKind::KwNone: return "'None'";
  case TokenKind::KwImport: return "'import'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::Comma: return "','";
  case TokenKind::Colon: return "':'";
  case TokenKind::Dot: return "'.'";
  case TokenKind::At: return "'@'";
  case TokenKind::Arrow: return "'->'";
  case TokenKind::Assign: return "'='";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::SlashSlash: return "'//'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::StarStar: return "'**'";
  case TokenKind::Amp: return "'&'";
  case TokenKind::Pipe: return "'|'";
  case TokenKind::Caret: return "'^'";
  case TokenKind::Tilde: return "'~'";
  case TokenKind::Less: return "'<'";
  case TokenKind::LessEq: return "'<='";
  case TokenKind::Greater: return "'>'";
  case TokenKind::GreaterEq: return "'>='";
  case TokenKind::EqEq: return "'=='";
  case TokenKind::NotEq: return "'!='";
  case TokenKind::PlusAssign: return "'+='";
  case TokenKind::MinusAssign: return "'-='";
  case TokenKind::StarAssign: return "'*='";
  case TokenKind::SlashAssign: return "'/='";
  case TokenKind::SlashSlashAssign: return "'//='";
  case TokenKind::PercentAssign: return "'%='";
  case TokenKind::StarStarAssign: return "'**='";
  case TokenKind::AmpAssign: return "'&='";
  case TokenKind::PipeAssign: return "'|='";
  case TokenKind::CaretAssign: return "'^='";
  case TokenKind::Error: return "invalid token";
  }
  return "token";
}

namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

TokenKind keywordKind(const std::string &word) {
  static const struct {
    const char *text;
    TokenKind kind;
  } keywords[] = {
      {"def", TokenKind::KwDef},     {"return", TokenKind::KwReturn},
      {"if", TokenKind::KwIf},       {"elif", TokenKind::KwElif},
      {"else", TokenKind::KwElse},   {"for", TokenKind::KwFor},
      {"in", TokenKind::KwIn},       {"pass", TokenKind::KwPass},
      {"and", TokenKind::KwAnd},     {"or", TokenKind::KwOr},
      {"not", TokenKind::KwNot},     {"True", TokenKind::KwTrue},
      {"False", TokenKind::KwFalse}, {"None", TokenKind::KwNone},
      {"import", TokenKind::KwImport},
  };
  for (const auto &kw : keywords)
    if (word == kw.text)
      return kw.kind;
  return TokenKind::Name;
}

class Lexer {
public:
  Lexer(const SourceFile &file, DiagnosticEngine &diags)
      : text_(file.text()), diags_(diags), file_(diags.fileIndex(file)) {}

  std::vector<Token> run();

private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool atEnd() const { return pos_ >= text_.size(); }
  SourceLoc here() const {
    return SourceLoc{uint32_t(pos_), line_, uint32_t(pos_ - lineStart_ + 1), file_};
  }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      lineStart_ = pos_ + 1;
    }
    ++pos_;
  }
  void push(TokenKind kind, SourceLoc begin, std::string text = {}) {
    tokens_.push_back(Token{kind, SourceRange(begin, here()), std::move(text)});
  }
  void handleLineStart();
  bool nextLineStartsStatement(bool inList) const;
  void lexToken();
  void lexNumber(SourceLoc begin);
  void lexString(SourceLoc begin);
  void lexOperator(SourceLoc begin);

  const std::string &text_;
  DiagnosticEngine &diags_;
  uint32_t file_;
  std::vector<Token> tokens_;
  std::vector<unsigned> indents_{0};
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t lineStart_ = 0;
  int depth_ = 0;
  /// The open brackets, innermost last ('(' or '['), as many as depth_.
  std::string open_;
  bool atLineStart_ = true;
};

std::vector<Token> Lexer::run() {
  while (!atEnd()) {
    if (atLineStart_ && depth_ == 0) {
      handleLineStart();
      continue;
    }
    lexToken();
  }
  if (!tokens_.empty() && tokens_.back().kind != TokenKind::Newline &&
      tokens_.back().kind != TokenKind::Dedent && tokens_.back().kind != TokenKind::Indent)
    push(TokenKind::Newline, here());
  while (indents_.size() > 1) {
    indents_.pop_back();
    push(TokenKind::Dedent, here());
  }
  push(TokenKind::Eof, here());
  return std::move(tokens_);
}

bool Lexer::nextLineStartsStatement(bool inList) const {
  size_t p = pos_;
  while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t'))
    ++p;
  if (p < text_.size() && text_[p] == '@')
    return true;
  size_t end = p;
  while (end < text_.size() && isIdentChar(text_[end]))
    ++end;
  std::string word = text_.substr(p, end - p);
  if (word == "for" && inList) {
    // Inside '[', a line may go on with a comprehension's `for` clause; a `for` statement's
    // line ends with ':' (before any comment).
    size_t lineEnd = text_.find('\n', end);
    std::string rest = text_.substr(end, lineEnd == std::string::npos ? std::string::npos
                                                                       : lineEnd - end);
    rest = rest.substr(0, rest.find('#'));
    size_t last = rest.find_last_not_of(" \t\r");
    return last != std::string::npos && rest[last] == ':';
  }
  return word == "def" || word == "return" || word == "pass" || word == "elif" ||
         word == "for" || word == "import";
}

// Measures the indentation of a new line, skipping blank and comment-only
// lines, and emits INDENT/DEDENT tokens.
void Lexer::handleLineStart() {
  unsigned width = 0;
  while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\f')) {
    width = peek() == '\t' ? (width / 8 + 1) * 8 : width + 1;
    advance();
  }
  if (atEnd())
    return;
  char c = peek();
  if (c == '\n' || c == '\r' || c == '#') {
    while (!atEnd() && peek() != '\n')
      advance();
    if (!atEnd())
      advance();
    return;
  }
  atLineStart_ = false;
  SourceLoc loc = here();
  if (width > indents_.back()) {
    indents_.push_back(width);
    push(TokenKind::Indent, loc);
    return;
  }
  while (width < indents_.back()) {
    // Between two levels: report, and keep the line in the inner block.
    if (indents_.size() >= 2 && indents_[indents_.size() - 2] < width) {
      diags_.error(SourceRange(loc), "unindent does not match any outer indentation level");
      break;
    }
    indents_.pop_back();
    push(TokenKind::Dedent, loc);
  }
}

void Lexer::lexToken() {
  char c = peek();
  if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
    advance();
    return;
  }
  if (c == '#') {
    while (!atEnd() && peek() != '\n')
      advance();
    return;
  }
  if (c == '\n') {
    SourceLoc begin = here();
    advance();
    // Recovery from an unclosed bracket: a line that can only start a
    // statement ends the bracketed expression (the parser reports the ')').
    if (depth_ > 0 && nextLineStartsStatement(open_.back() == '['))
      depth_ = 0, open_.clear();
    if (depth_ == 0) {
      tokens_.push_back(Token{TokenKind::Newline, SourceRange(begin, begin), {}});
      atLineStart_ = true;
    }
    return;
  }
  if (c == '\\') {
    size_t next = pos_ + 1;
    if (next < text_.size() && text_[next] == '\r')
      ++next;
    if (next < text_.size() && text_[next] == '\n') {
      while (pos_ <= next)
        advance();
      return;
    }
  }
  SourceLoc begin = here();
  if (isIdentStart(c)) {
    while (!atEnd() && isIdentChar(peek()))
      advance();
    std::string word = text_.substr(begin.offset, pos_ - begin.offset);
    TokenKind kind = keywordKind(word);
    push(kind, begin, std::move(word));
    return;
  }
  if (isDigit(c) || (c == '.' && isDigit(peek(1)))) {
    lexNumber(begin);
    return;
  }
  if (c == '"' || c == '\'') {
    lexString(begin);
    return;
  }
  lexOperator(begin);
}

void Lexer::lexNumber(SourceLoc begin) {
  bool isFloat = false;
  std::string digits;
  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X' || peek(1) == 'b' ||
                        peek(1) == 'B' || peek(1) == 'o' || peek(1) == 'O')) {
    digits += peek();
    advance();
    digits += char(peek() | 0x20);
    advance();
    while (!atEnd() && (isHexDigit(peek()) || peek() == '_')) {
      if (peek() != '_')
        digits += peek();
      advance();
    }
  } else {
    while (!atEnd() && (isDigit(peek()) || peek() == '_')) {
      if (peek() != '_')
        digits += peek();
      advance();
    }
    if (peek() == '.' && !isIdentStart(peek(1))) {
      isFloat = true;
      digits += '.';
      advance();
      while (!atEnd() && (isDigit(peek()) || peek() == '_')) {
        if (peek() != '_')
          digits += peek();
        advance();
      }
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (isDigit(peek(1)) ||
         ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
      isFloat = true;
      digits += 'e';
      advance();
      if (peek() == '+' || peek() == '-') {
        digits += peek();
        advance();
      }
      while (!atEnd() && isDigit(peek())) {
        digits += peek();
        advance();
      }
    }
  }
  if (!atEnd() && isIdentChar(peek())) {
    while (!atEnd() && isIdentChar(peek()))
      advance();
    diags_.error(SourceRange(begin, here()), "invalid number literal");
    push(TokenKind::Error, begin);
    return;
  }
  push(isFloat ? TokenKind::Float : TokenKind::Int, begin, std::move(digits));
}

void Lexer::lexString(SourceLoc begin) {
  char quote = peek();
  bool triple = peek(1) == quote && peek(2) == quote;
  for (int i = 0; i < (triple ? 3 : 1); ++i)
    advance();
  std::string value;
  while (true) {
    if (atEnd() || (!triple && peek() == '\n')) {
      diags_.error(SourceRange(begin, here()), "unterminated string literal");
      push(TokenKind::Error, begin);
      return;
    }
    char c = peek();
    if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
      for (int i = 0; i < (triple ? 3 : 1); ++i)
        advance();
      break;
    }
    if (c == '\\' && pos_ + 1 < text_.size()) {
      advance();
      char e = peek();
      advance();
      switch (e) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case '\\': value += '\\'; break;
      case '\'': value += '\''; break;
      case '"': value += '"'; break;
      case '\n': break;
      default:
        value += '\\';
        value += e;
      }
      continue;
    }
    value += c;
    advance();
  }
  push(TokenKind::String, begin, std::move(value));
}

void Lexer::lexOperator(SourceLoc begin) {
  struct Op {
    const char *text;
    TokenKind kind;
  };
  // Longest spellings first.
  static const Op ops[] = {
      {"**=", TokenKind::StarStarAssign}, {"//=", TokenKind::SlashSlashAssign},
      {"->", TokenKind::Arrow},           {"**", TokenKind::StarStar},
      {"//", TokenKind::SlashSlash},      {"<=", TokenKind::LessEq},
      {">=", TokenKind::GreaterEq},       {"==", TokenKind::EqEq},
      {"!=", TokenKind::NotEq},           {"+=", TokenKind::PlusAssign},
      {"-=", TokenKind::MinusAssign},     {"*=", TokenKind::StarAssign},
      {"/=", TokenKind::SlashAssign},     {"%=", TokenKind::PercentAssign},
      {"&=", TokenKind::AmpAssign},       {"|=", TokenKind::PipeAssign},
      {"^=", TokenKind::CaretAssign},     {"(", TokenKind::LParen},
      {")", TokenKind::RParen},           {"[", TokenKind::LBracket},
      {"]", TokenKind::RBracket},         {",", TokenKind::Comma},
      {":", TokenKind::Colon},            {".", TokenKind::Dot},
      {"@", TokenKind::At},               {"=", TokenKind::Assign},
      {"+", TokenKind::Plus},             {"-", TokenKind::Minus},
      {"*", TokenKind::Star},             {"/", TokenKind::Slash},
      {"%", TokenKind::Percent},          {"&", TokenKind::Amp},
      {"|", TokenKind::Pipe},             {"^", TokenKind::Caret},
      {"~", TokenKind::Tilde},            {"<", TokenKind::Less},
      {">", TokenKind::Greater},
  };
  for (const Op &op : ops) {
    size_t len = std::char_traits<char>::length(op.text);
    if (text_.compare(pos_, len, op.text) != 0)
      continue;
    for (size_t i = 0; i < len; ++i)
      advance();
    if (op.kind == TokenKind::LParen || op.kind == TokenKind::LBracket) {
      ++depth_;
      open_ += op.kind == TokenKind::LParen ? '(' : '[';
    } else if ((op.kind == TokenKind::RParen || op.kind == TokenKind::RBracket) &&
               depth_ > 0) {
      --depth_;
      open_.pop_back();
    }
    push(op.kind, begin);
    return;
  }
  // A run of unexpected bytes (e.g. a UTF-8 sequence) gives one error.
  unsigned char c = static_cast<unsigned char>(peek());
  char shown[32];
  if (c >= 0x21 && c < 0x7f)
    std::snprintf(shown, sizeof(shown), "unexpected character '%c'", c);
  else
    std::snprintf(shown, sizeof(shown), "unexpected byte 0x%02X", c);
  advance();
  while (!atEnd() && static_cast<unsigned char>(peek()) >= 0x80)
    advance();
  diags_.error(SourceRange(begin, here()), shown);
  push(TokenKind::Error, begin);
}

} // namespace

std::vector<Token> lex(const SourceFile &file, DiagnosticEngine &diags) {
  return Lexer(file, diags).run();
}

} // namespace tessel::frontend
