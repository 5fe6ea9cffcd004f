//===- frontend/Parser.cpp - recursive-descent parser with error recovery --===//
//
// Errors recover at statement level: the rest of the logical line is skipped
// (and the indented block of a broken `if`/`for`/`def` header with it), so one
// mistake gives one error and the following statements are still checked.
//
//===----------------------------------------------------------------------===//
#include "frontend/Parser.h"
#include "frontend/Lexer.h"

#include <cerrno>
#include <cstdlib>
#include <functional>

namespace tessel::frontend {
namespace {

using namespace ast;

/// The dtype names of the language.
bool isDTypeName(const std::string &name) {
  static const char *names[] = {"i1", "i8", "i16", "i32", "i64",
                                "f16", "bf16", "f32", "f64"};
  for (const char *n : names)
    if (name == n)
      return true;
  return false;
}

/// Python statements the language does not have (reported by name).
bool isUnsupportedKeyword(const std::string &word) {
  static const char *words[] = {"while", "break", "continue", "import", "from", "class",
                                "try", "with", "lambda", "global", "nonlocal", "del",
                                "assert", "yield", "raise", "async", "await"};
  for (const char *w : words)
    if (word == w)
      return true;
  return false;
}

class Parser {
public:
  Parser(std::vector<Token> tokens, DiagnosticEngine &diags, const ParserLimits &limits)
      : tokens_(std::move(tokens)), diags_(diags), limits_(limits) {}

  Module parseModule();

private:
  // Token access.
  const Token &tok() const { return tokens_[pos_]; }
  const Token &peekTok(size_t ahead) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  bool is(TokenKind kind) const { return tok().kind == kind; }
  const Token &consume() {
    const Token &t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size())
      ++pos_;
    return t;
  }
  bool accept(TokenKind kind) {
    if (!is(kind))
      return false;
    consume();
    return true;
  }
  SourceRange prevRange() const {
    return pos_ > 0 ? tokens_[pos_ - 1].range : tok().range;
  }

  /// Reports `message` at the current token, unless the lexer already
  /// reported that token. Always returns false.
  bool error(const std::string &message) {
    if (!is(TokenKind::Error))
      diags_.error(tok().range, message);
    return false;
  }
  bool errorAt(SourceRange range, const std::string &message) {
    diags_.error(range, message);
    return false;
  }
  bool expect(TokenKind kind, const char *what) {
    if (accept(kind))
      return true;
    return error(std::string("expected ") + what + ", found " + describe(tok()));
  }
  static std::string describe(const Token &t) {
    if (t.kind == TokenKind::Name)
      return "'" + t.text + "'";
    if (t.kind == TokenKind::Int || t.kind == TokenKind::Float)
      return "'" + t.text + "'";
    return tokenKindName(t.kind);
  }

  // Recovery.
  void skipLine();
  void skipBlock();

  // Functions and statements.
  void parseTopLevel(Module &module);
  void parseImport(Module &module);
  /// `NAME = expression` at the top level.
  void parseConstant(Module &module);
  /// "redefinition of NAME" when a function or constant of the module has the name.
  void reportRedefinition(const Module &module, const std::string &name, SourceRange range);
  std::unique_ptr<Function> parseFunction(std::vector<ExprPtr> decorators);
  bool parseParams(Function &fn);
  bool applyDecorators(Function &fn, std::vector<ExprPtr> &decorators);
  bool parseAutotune(Function &fn, Expr &call);
  bool parseParamNames(const Function &fn, Keyword &kw, const std::string &arg,
                       const std::string &kind, std::vector<std::string> &names,
                       const std::function<bool(const Param &)> &fits);
  void checkParamTypes(Function &fn);
  bool parseBlock(std::vector<StmtPtr> &body);
  void parseStatementInto(std::vector<StmtPtr> &body);
  StmtPtr parseIf(bool isElif);
  StmtPtr parseFor();
  StmtPtr parseSimpleStatement();

  // Expressions.
  ExprPtr parseExprList(bool allowEmptyTuple = false);
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parseComparison();
  ExprPtr parseBinaryLevel(int level);
  ExprPtr parseFactor();
  ExprPtr parsePower();
  ExprPtr parsePostfix();
  ExprPtr parseAtom();
  ExprPtr parseComprehension(SourceRange open, ExprPtr element);
  bool parseCallArgs(Expr &call);
  bool parseSubscripts(Expr &sub);

  ExprPtr makeNode(ExprKind kind, SourceRange range, std::vector<ExprPtr> args,
                   OpKind op = OpKind::None);
  /// A node over `lhs` and `rhs`, spanning both.
  ExprPtr makePair(ExprKind kind, ExprPtr lhs, ExprPtr rhs, OpKind op);
  /// `operand (keyword operand)*`, left-associative (`or`, `and`).
  ExprPtr parseBoolChain(TokenKind keyword, OpKind op, ExprPtr (Parser::*operand)());

  /// RAII guard on the recursion depth.
  struct Nesting {
    Parser &p;
    bool ok;
    explicit Nesting(Parser &parser) : p(parser), ok(++parser.nesting_ <= parser.limits_.maxNesting) {
      if (!ok && !p.nestingReported_) {
        p.nestingReported_ = true;
        p.error("expression nested too deeply");
      }
    }
    ~Nesting() { --p.nesting_; }
  };

  std::vector<Token> tokens_;
  DiagnosticEngine &diags_;
  ParserLimits limits_;
  size_t pos_ = 0;
  unsigned nesting_ = 0;
  unsigned blockDepth_ = 0;
  bool nestingReported_ = false;
};

ExprPtr Parser::makeNode(ExprKind kind, SourceRange range, std::vector<ExprPtr> args,
                         OpKind op) {
  auto node = std::make_unique<Expr>(kind, range);
  node->op = op;
  unsigned depth = 0;
  for (const ExprPtr &a : args)
    if (a)
      depth = std::max(depth, a->depth);
  node->depth = depth + 1;
  node->args = std::move(args);
  if (node->depth > limits_.maxExprDepth) {
    errorAt(range, "expression too complex (more than " +
                       std::to_string(limits_.maxExprDepth) + " levels)");
    return nullptr;
  }
  return node;
}

void Parser::skipLine() {
  while (!is(TokenKind::Newline) && !is(TokenKind::Eof)) {
    // An INDENT/DEDENT only appears after a NEWLINE, so none is skipped here.
    consume();
  }
  accept(TokenKind::Newline);
}

void Parser::skipBlock() {
  if (!is(TokenKind::Indent))
    return;
  consume();
  int depth = 1;
  while (depth > 0 && !is(TokenKind::Eof)) {
    if (is(TokenKind::Indent))
      ++depth;
    else if (is(TokenKind::Dedent))
      --depth;
    consume();
  }
}

Module Parser::parseModule() {
  Module module;
  while (!is(TokenKind::Eof)) {
    size_t before = pos_;
    parseTopLevel(module);
    if (pos_ == before)
      consume();
  }
  return module;
}

void Parser::parseTopLevel(Module &module) {
  if (accept(TokenKind::Newline))
    return;
  if (is(TokenKind::Indent)) {
    error("unexpected indent");
    skipBlock();
    return;
  }
  if (accept(TokenKind::Dedent))
    return;
  if (is(TokenKind::Name) && peekTok(1).kind == TokenKind::Assign) {
    parseConstant(module);
    return;
  }
  if (is(TokenKind::KwImport)) {
    parseImport(module);
    return;
  }
  std::vector<ExprPtr> decorators;
  while (is(TokenKind::At)) {
    consume();
    ExprPtr deco = parsePostfix();
    if (!deco) {
      skipLine();
      continue;
    }
    if (!is(TokenKind::Newline)) {
      error("expected a newline after the decorator");
      skipLine();
    } else {
      consume();
    }
    decorators.push_back(std::move(deco));
  }
  if (!is(TokenKind::KwDef)) {
    if (decorators.empty())
      error("only function definitions ('@kernel def ...' or '@func def ...'), constants "
            "('NAME = value') and imports ('import \"file.tsl\"') may appear at the top level");
    else
      error("expected 'def' after the decorators");
    skipLine();
    skipBlock();
    return;
  }
  if (auto fn = parseFunction(std::move(decorators))) {
    reportRedefinition(module, fn->name, fn->nameRange);
    module.functions.push_back(std::move(fn));
  }
}

void Parser::reportRedefinition(const Module &module, const std::string &name, SourceRange range) {
  SourceRange previous;
  if (const Function *other = module.function(name))
    previous = other->nameRange;
  else if (const Constant *other = module.constant(name))
    previous = other->nameRange;
  else
    return;
  Diagnostic &d = diags_.error(range, "redefinition of '" + name + "'");
  DiagnosticEngine::note(d, previous, "previous definition is here");
}

void Parser::parseImport(Module &module) {
  SourceRange begin = consume().range; // 'import'
  if (!is(TokenKind::String)) {
    error("expected a file name in quotes after 'import' (import \"attention.tsl\")");
    skipLine();
    return;
  }
  Import imp;
  imp.path = tok().text;
  imp.range = join(begin, consume().range);
  if (!is(TokenKind::Newline) && !is(TokenKind::Eof)) {
    error("expected a newline after the imported file's name, found " + describe(tok()));
    skipLine();
    return;
  }
  accept(TokenKind::Newline);
  module.imports.push_back(std::move(imp));
}

void Parser::parseConstant(Module &module) {
  Constant c;
  c.name = tok().text;
  c.nameRange = consume().range;
  consume(); // '='
  c.value = parseExpr();
  if (!c.value) {
    skipLine();
    return;
  }
  if (!is(TokenKind::Newline) && !is(TokenKind::Eof)) {
    error("expected a newline after the constant's value, found " + describe(tok()));
    skipLine();
    return;
  }
  accept(TokenKind::Newline);
  reportRedefinition(module, c.name, c.nameRange);
  module.constants.push_back(std::move(c));
}

std::unique_ptr<Function> Parser::parseFunction(std::vector<ExprPtr> decorators) {
  SourceRange defRange = consume().range;
  auto fn = std::make_unique<Function>();
  if (!is(TokenKind::Name)) {
    error("expected a function name after 'def'");
    skipLine();
    skipBlock();
    return nullptr;
  }
  fn->name = tok().text;
  fn->nameRange = consume().range;
  fn->range = join(defRange, fn->nameRange);
  if (!expect(TokenKind::LParen, "'('") || !parseParams(*fn)) {
    skipLine();
    skipBlock();
    return nullptr;
  }
  if (accept(TokenKind::Arrow)) {
    // A return annotation is accepted and ignored (helpers are typed by use).
    ExprPtr annot = parseExpr();
    if (!annot) {
      skipLine();
      skipBlock();
      return nullptr;
    }
  }
  bool decoratorsOk = applyDecorators(*fn, decorators);
  if (!parseBlock(fn->body))
    return nullptr;
  checkParamTypes(*fn);
  if (!decoratorsOk)
    return nullptr;
  return fn;
}

bool Parser::parseParams(Function &fn) {
  while (!is(TokenKind::RParen)) {
    Param param;
    if (!is(TokenKind::Name))
      return error("expected a parameter name, found " + describe(tok()));
    param.name = tok().text;
    param.range = consume().range;
    for (const Param &other : fn.params)
      if (other.name == param.name)
        errorAt(param.range, "duplicate parameter '" + param.name + "'");
    if (accept(TokenKind::Colon)) {
      bool pointer = accept(TokenKind::Star);
      SourceRange starRange = prevRange();
      if (!is(TokenKind::Name))
        return error("expected a type (a dtype like 'f32', '*f32' or 'constexpr'), found " +
                     describe(tok()));
      param.typeName = tok().text;
      param.typeRange = pointer ? join(starRange, tok().range) : tok().range;
      consume();
      if (pointer)
        param.kind = ParamKind::Pointer;
      else if (param.typeName == "constexpr")
        param.kind = ParamKind::Constexpr;
      else
        param.kind = ParamKind::Scalar;
    }
    param.range = join(param.range, prevRange());
    if (accept(TokenKind::Assign)) {
      param.defaultValue = parseExpr();
      if (!param.defaultValue)
        return false;
      if (param.kind != ParamKind::Constexpr)
        errorAt(param.defaultValue->range,
                "only constexpr parameters may have a default value");
    }
    fn.params.push_back(std::move(param));
    if (!accept(TokenKind::Comma))
      break;
  }
  return expect(TokenKind::RParen, "')' after the parameters");
}

// A scalar or pointer type must be a dtype or a constexpr (dtype) parameter.
void Parser::checkParamTypes(Function &fn) {
  for (Param &p : fn.params) {
    if (p.kind != ParamKind::Pointer && p.kind != ParamKind::Scalar)
      continue;
    if (isDTypeName(p.typeName))
      continue;
    const Param *decl = fn.param(p.typeName);
    if (decl && decl->kind == ParamKind::Constexpr)
      continue;
    Diagnostic &d = diags_.error(p.typeRange, "unknown type '" + p.typeName + "'");
    DiagnosticEngine::note(d, SourceRange(),
                           "expected a dtype (i1, i8, i16, i32, i64, f16, bf16, f32, "
                           "f64) or the name of a constexpr dtype parameter");
  }
}

bool Parser::applyDecorators(Function &fn, std::vector<ExprPtr> &decorators) {
  bool sawKind = false, ok = true;
  for (ExprPtr &deco : decorators) {
    if (deco->kind == ExprKind::Name && (deco->name == "kernel" || deco->name == "func")) {
      if (sawKind)
        ok = errorAt(deco->range, "a function is either @kernel or @func, once");
      sawKind = true;
      fn.kind = deco->name == "kernel" ? FunctionKind::Kernel : FunctionKind::Func;
      continue;
    }
    if (deco->kind == ExprKind::Call && deco->args[0]->kind == ExprKind::Name &&
        deco->args[0]->name == "autotune") {
      if (fn.autotune)
        ok = errorAt(deco->range, "duplicate @autotune");
      else if (!parseAutotune(fn, *deco))
        ok = false;
      continue;
    }
    ok = errorAt(deco->range, "unknown decorator (expected @kernel, @func or @autotune(...))");
  }
  if (!sawKind) {
    Diagnostic &d = diags_.error(fn.nameRange, "function '" + fn.name + "' needs @kernel or @func");
    DiagnosticEngine::note(d, fn.nameRange,
                           "write '@kernel' for a GPU entry point, '@func' for a helper");
    ok = false;
  }
  if (fn.autotune && fn.kind != FunctionKind::Kernel)
    ok = errorAt(fn.autotune->range, "@autotune applies to @kernel functions only");
  return ok;
}

/// key=[...] and restore=[...]: parameter names as strings, each naming a parameter of `fn`
/// that `fits` (described as `kind`, e.g. "a runtime"), appended to `names`.
bool Parser::parseParamNames(const Function &fn, Keyword &kw, const std::string &arg,
                             const std::string &kind, std::vector<std::string> &names,
                             const std::function<bool(const Param &)> &fits) {
  if (kw.value->kind != ExprKind::List && kw.value->kind != ExprKind::Tuple)
    return errorAt(kw.value->range, arg + "= must be a list of parameter names");
  for (ExprPtr &e : kw.value->args) {
    if (e->kind != ExprKind::String)
      return errorAt(e->range, arg + "= entries are parameter names as strings");
    const Param *p = fn.param(e->name);
    if (!p || !fits(*p))
      return errorAt(e->range, "autotune " + arg + " '" + e->name + "' is not " + kind +
                                   " parameter of '" + fn.name + "'");
    names.push_back(e->name);
  }
  return true;
}

bool Parser::parseAutotune(Function &fn, Expr &call) {
  auto at = std::make_unique<Autotune>();
  at->range = call.range;
  if (call.args.size() > 1)
    return errorAt(call.args[1]->range,
                   "@autotune takes keyword arguments: configs=[...], key=[...], prune=...");
  bool sawConfigs = false;
  for (Keyword &kw : call.keywords) {
    if (kw.name == "configs") {
      sawConfigs = true;
      // Lists of config(...) calls and comprehensions of one, joined with '+'.
      std::vector<ExprPtr *> lists;
      std::function<bool(ExprPtr &)> collect = [&](ExprPtr &e) {
        if (e->kind == ExprKind::Binary && e->op == OpKind::Add)
          return collect(e->args[0]) && collect(e->args[1]);
        if (e->kind != ExprKind::List && e->kind != ExprKind::Tuple &&
            e->kind != ExprKind::Comprehension)
          return errorAt(e->range, "configs= must be a list of config(...), a comprehension "
                                   "[config(...) for ...], or lists of them joined with '+'");
        lists.push_back(&e);
        return true;
      };
      if (!collect(kw.value))
        return false;
      for (ExprPtr *list : lists) {
        bool generated = (*list)->kind == ExprKind::Comprehension;
        // A comprehension's element is args[0] (its clauses follow); a list's are all args.
        size_t count = generated ? 1 : (*list)->args.size();
        for (size_t i = 0; i < count; ++i) {
          ExprPtr &c = (*list)->args[i];
          if (c->kind != ExprKind::Call || c->args[0]->kind != ExprKind::Name ||
              c->args[0]->name != "config")
            return errorAt(c->range, "expected config(NAME=value, ...)");
          if (c->args.size() > 1)
            return errorAt(c->args[1]->range, "config(...) takes keyword arguments only");
          AutotuneConfig cfg;
          cfg.range = c->range;
          cfg.values = std::move(c->keywords);
          if (generated)
            for (size_t j = 1; j < (*list)->args.size(); ++j)
              cfg.clauses.push_back(std::move((*list)->args[j]));
          at->configs.push_back(std::move(cfg));
        }
      }
      if (at->configs.empty())
        return errorAt(kw.value->range, "configs= needs at least one config(...)");
    } else if (kw.name == "key") {
      if (!parseParamNames(fn, kw, "key", "a runtime", at->key,
                           [](const Param &p) { return p.kind != ParamKind::Constexpr; }))
        return false;
    } else if (kw.name == "prune") {
      at->prune = std::move(kw.value);
    } else if (kw.name == "restore") {
      if (!parseParamNames(fn, kw, "restore", "a pointer", at->restore,
                           [](const Param &p) { return p.kind == ParamKind::Pointer; }))
        return false;
    } else {
      return errorAt(kw.nameRange, "unknown @autotune argument '" + kw.name +
                                       "' (expected configs, key, prune or restore)");
    }
  }
  if (!sawConfigs)
    return errorAt(call.range, "@autotune needs configs=[config(...), ...]");
  fn.autotune = std::move(at);
  return true;
}

// ':' NEWLINE INDENT stmt+ DEDENT, or ':' simple-statement NEWLINE.
bool Parser::parseBlock(std::vector<StmtPtr> &body) {
  if (!expect(TokenKind::Colon, "':'")) {
    skipLine();
    skipBlock();
    return false;
  }
  if (!is(TokenKind::Newline)) {
    if (StmtPtr s = parseSimpleStatement())
      body.push_back(std::move(s));
    return true;
  }
  consume();
  if (!is(TokenKind::Indent))
    return error("expected an indented block");
  consume();
  if (blockDepth_ >= limits_.maxBlockDepth) {
    error("blocks nested too deeply");
    int depth = 1;
    while (depth > 0 && !is(TokenKind::Eof)) {
      if (is(TokenKind::Indent))
        ++depth;
      else if (is(TokenKind::Dedent))
        --depth;
      consume();
    }
    return false;
  }
  ++blockDepth_;
  while (!is(TokenKind::Dedent) && !is(TokenKind::Eof)) {
    size_t before = pos_;
    parseStatementInto(body);
    if (pos_ == before)
      consume();
  }
  accept(TokenKind::Dedent);
  --blockDepth_;
  return true;
}

void Parser::parseStatementInto(std::vector<StmtPtr> &body) {
  if (accept(TokenKind::Newline))
    return;
  if (is(TokenKind::Indent)) {
    error("unexpected indent");
    // Keep the over-indented statements: they are likely fine otherwise.
    consume();
    ++blockDepth_;
    while (!is(TokenKind::Dedent) && !is(TokenKind::Eof) && blockDepth_ <= limits_.maxBlockDepth) {
      size_t before = pos_;
      parseStatementInto(body);
      if (pos_ == before)
        consume();
    }
    accept(TokenKind::Dedent);
    --blockDepth_;
    return;
  }
  StmtPtr stmt;
  switch (tok().kind) {
  case TokenKind::KwIf:
    stmt = parseIf(false);
    break;
  case TokenKind::KwFor:
    stmt = parseFor();
    break;
  case TokenKind::KwElif:
  case TokenKind::KwElse:
    error(std::string(tokenKindName(tok().kind)) + " without a matching 'if'");
    skipLine();
    skipBlock();
    return;
  case TokenKind::KwDef:
  case TokenKind::At:
    error("nested functions are not supported; define helpers at the top level with @func");
    skipLine();
    skipBlock();
    return;
  case TokenKind::Name:
    if (isUnsupportedKeyword(tok().text) && peekTok(1).kind != TokenKind::Assign &&
        peekTok(1).kind != TokenKind::LParen && peekTok(1).kind != TokenKind::Dot) {
      error("'" + tok().text + "' is not supported in Tessel kernels");
      skipLine();
      skipBlock();
      return;
    }
    stmt = parseSimpleStatement();
    break;
  default:
    stmt = parseSimpleStatement();
    break;
  }
  if (stmt)
    body.push_back(std::move(stmt));
}

StmtPtr Parser::parseIf(bool isElif) {
  SourceRange kw = consume().range;
  auto stmt = std::make_unique<Stmt>(StmtKind::If, kw);
  stmt->isElif = isElif;
  stmt->cond = parseExpr();
  if (!stmt->cond) {
    skipLine();
    skipBlock();
    // Skip the elif/else branches of the broken if too.
    while (is(TokenKind::KwElif) || is(TokenKind::KwElse)) {
      skipLine();
      skipBlock();
    }
    return nullptr;
  }
  stmt->range = join(kw, stmt->cond->range);
  if (!parseBlock(stmt->body))
    return nullptr;
  if (is(TokenKind::KwElif)) {
    if (StmtPtr elif = parseIf(true))
      stmt->orelse.push_back(std::move(elif));
  } else if (is(TokenKind::KwElse)) {
    consume();
    parseBlock(stmt->orelse);
  }
  return stmt;
}

StmtPtr Parser::parseFor() {
  SourceRange kw = consume().range;
  auto stmt = std::make_unique<Stmt>(StmtKind::For, kw);
  auto fail = [&]() -> StmtPtr {
    skipLine();
    skipBlock();
    return nullptr;
  };
  if (!is(TokenKind::Name)) {
    error("expected a loop variable name after 'for'");
    return fail();
  }
  stmt->var = tok().text;
  stmt->varRange = consume().range;
  if (!expect(TokenKind::KwIn, "'in'"))
    return fail();
  stmt->value = parseExpr();
  if (!stmt->value)
    return fail();
  const Expr &iter = *stmt->value;
  if (iter.kind != ExprKind::Call || iter.args[0]->kind != ExprKind::Name ||
      iter.args[0]->name != "range") {
    errorAt(iter.range, "only 'for x in range(...)' loops are supported");
    return fail();
  }
  if (iter.args.size() < 2 || iter.args.size() > 4 || !iter.keywords.empty()) {
    errorAt(iter.range, "range() takes 1 to 3 positional arguments (stop, or start, stop[, step])");
    return fail();
  }
  stmt->range = join(kw, iter.range);
  if (!parseBlock(stmt->body))
    return nullptr;
  return stmt;
}

static OpKind augmentedOp(TokenKind kind) {
  switch (kind) {
  case TokenKind::PlusAssign: return OpKind::Add;
  case TokenKind::MinusAssign: return OpKind::Sub;
  case TokenKind::StarAssign: return OpKind::Mul;
  case TokenKind::SlashAssign: return OpKind::Div;
  case TokenKind::SlashSlashAssign: return OpKind::FloorDiv;
  case TokenKind::PercentAssign: return OpKind::Mod;
  case TokenKind::StarStarAssign: return OpKind::Pow;
  case TokenKind::AmpAssign: return OpKind::BitAnd;
  case TokenKind::PipeAssign: return OpKind::BitOr;
  case TokenKind::CaretAssign: return OpKind::BitXor;
  default: return OpKind::None;
  }
}

static bool isAssignable(const Expr &e) {
  if (e.kind == ExprKind::Name)
    return true;
  if (e.kind != ExprKind::Tuple)
    return false;
  for (const ExprPtr &a : e.args)
    if (a->kind != ExprKind::Name)
      return false;
  return !e.args.empty();
}

StmtPtr Parser::parseSimpleStatement() {
  SourceRange start = tok().range;
  StmtPtr stmt;
  if (is(TokenKind::KwPass)) {
    consume();
    stmt = std::make_unique<Stmt>(StmtKind::Pass, start);
  } else if (is(TokenKind::KwReturn)) {
    consume();
    stmt = std::make_unique<Stmt>(StmtKind::Return, start);
    if (!is(TokenKind::Newline) && !is(TokenKind::Eof)) {
      stmt->value = parseExprList();
      if (!stmt->value) {
        skipLine();
        return nullptr;
      }
      stmt->range = join(start, stmt->value->range);
    }
  } else {
    ExprPtr first = parseExprList();
    if (!first) {
      skipLine();
      return nullptr;
    }
    OpKind aug = augmentedOp(tok().kind);
    if (is(TokenKind::Assign) || aug != OpKind::None) {
      if (!isAssignable(*first) || (aug != OpKind::None && first->kind != ExprKind::Name)) {
        errorAt(first->range, aug != OpKind::None
                                  ? "augmented assignment needs a variable name on the left"
                                  : "can only assign to a name or a tuple of names");
        skipLine();
        return nullptr;
      }
      consume();
      ExprPtr value = parseExprList();
      if (!value) {
        skipLine();
        return nullptr;
      }
      if (is(TokenKind::Assign)) {
        error("chained assignment is not supported");
        skipLine();
        return nullptr;
      }
      stmt = std::make_unique<Stmt>(aug != OpKind::None ? StmtKind::AugAssign : StmtKind::Assign,
                                    join(first->range, value->range));
      stmt->op = aug;
      stmt->targets.push_back(std::move(first));
      stmt->value = std::move(value);
    } else {
      stmt = std::make_unique<Stmt>(StmtKind::ExprStmt, first->range);
      stmt->value = std::move(first);
    }
  }
  if (!is(TokenKind::Newline) && !is(TokenKind::Eof)) {
    error("expected a newline after the statement, found " + describe(tok()));
    skipLine();
    return nullptr;
  }
  accept(TokenKind::Newline);
  return stmt;
}

// expr (',' expr)* [','] -> a Tuple when there is a comma.
ExprPtr Parser::parseExprList(bool allowEmptyTuple) {
  SourceRange start = tok().range;
  if (allowEmptyTuple && is(TokenKind::RParen))
    return makeNode(ExprKind::Tuple, start, {});
  ExprPtr first = parseExpr();
  if (!first || !is(TokenKind::Comma))
    return first;
  std::vector<ExprPtr> elems;
  elems.push_back(std::move(first));
  while (accept(TokenKind::Comma)) {
    if (is(TokenKind::Newline) || is(TokenKind::RParen) || is(TokenKind::Assign) ||
        is(TokenKind::Eof))
      break;
    ExprPtr e = parseExpr();
    if (!e)
      return nullptr;
    elems.push_back(std::move(e));
  }
  SourceRange range = join(elems.front()->range, elems.back()->range);
  return makeNode(ExprKind::Tuple, range, std::move(elems));
}

// or_test ['if' or_test 'else' expr]
ExprPtr Parser::parseExpr() {
  Nesting guard(*this);
  if (!guard.ok)
    return nullptr;
  ExprPtr value = parseOr();
  if (!value || !is(TokenKind::KwIf))
    return value;
  consume();
  ExprPtr cond = parseOr();
  if (!cond)
    return nullptr;
  if (!expect(TokenKind::KwElse, "'else' in the conditional expression"))
    return nullptr;
  ExprPtr other = parseExpr();
  if (!other)
    return nullptr;
  SourceRange range = join(value->range, other->range);
  std::vector<ExprPtr> args;
  args.push_back(std::move(value));
  args.push_back(std::move(cond));
  args.push_back(std::move(other));
  return makeNode(ExprKind::Ternary, range, std::move(args));
}

ExprPtr Parser::makePair(ExprKind kind, ExprPtr lhs, ExprPtr rhs, OpKind op) {
  SourceRange range = join(lhs->range, rhs->range);
  std::vector<ExprPtr> args;
  args.push_back(std::move(lhs));
  args.push_back(std::move(rhs));
  return makeNode(kind, range, std::move(args), op);
}

ExprPtr Parser::parseBoolChain(TokenKind keyword, OpKind op, ExprPtr (Parser::*operand)()) {
  ExprPtr lhs = (this->*operand)();
  while (lhs && is(keyword)) {
    consume();
    ExprPtr rhs = (this->*operand)();
    if (!rhs)
      return nullptr;
    lhs = makePair(ExprKind::BoolOp, std::move(lhs), std::move(rhs), op);
  }
  return lhs;
}

ExprPtr Parser::parseOr() { return parseBoolChain(TokenKind::KwOr, OpKind::Or, &Parser::parseAnd); }

ExprPtr Parser::parseAnd() {
  return parseBoolChain(TokenKind::KwAnd, OpKind::And, &Parser::parseNot);
}

ExprPtr Parser::parseNot() {
  if (!is(TokenKind::KwNot))
    return parseComparison();
  Nesting guard(*this);
  if (!guard.ok)
    return nullptr;
  SourceRange kw = consume().range;
  ExprPtr operand = parseNot();
  if (!operand)
    return nullptr;
  SourceRange range = join(kw, operand->range);
  std::vector<ExprPtr> args;
  args.push_back(std::move(operand));
  return makeNode(ExprKind::Unary, range, std::move(args), OpKind::Not);
}

static OpKind comparisonOp(TokenKind kind) {
  switch (kind) {
  case TokenKind::Less: return OpKind::Lt;
  case TokenKind::LessEq: return OpKind::Le;
  case TokenKind::Greater: return OpKind::Gt;
  case TokenKind::GreaterEq: return OpKind::Ge;
  case TokenKind::EqEq: return OpKind::Eq;
  case TokenKind::NotEq: return OpKind::Ne;
  default: return OpKind::None;
  }
}

ExprPtr Parser::parseComparison() {
  ExprPtr lhs = parseBinaryLevel(0);
  if (!lhs)
    return nullptr;
  OpKind op = comparisonOp(tok().kind);
  if (op == OpKind::None)
    return lhs;
  consume();
  ExprPtr rhs = parseBinaryLevel(0);
  if (!rhs)
    return nullptr;
  if (comparisonOp(tok().kind) != OpKind::None) {
    error("chained comparisons are not supported; combine them with '&' or 'and'");
    return nullptr;
  }
  return makePair(ExprKind::Binary, std::move(lhs), std::move(rhs), op);
}

// Left-associative binary levels, loosest first: | ^ & (+ -) (* / // %).
ExprPtr Parser::parseBinaryLevel(int level) {
  if (level == 5)
    return parseFactor();
  ExprPtr lhs = parseBinaryLevel(level + 1);
  while (lhs) {
    OpKind op = OpKind::None;
    TokenKind k = tok().kind;
    switch (level) {
    case 0: op = k == TokenKind::Pipe ? OpKind::BitOr : OpKind::None; break;
    case 1: op = k == TokenKind::Caret ? OpKind::BitXor : OpKind::None; break;
    case 2: op = k == TokenKind::Amp ? OpKind::BitAnd : OpKind::None; break;
    case 3:
      op = k == TokenKind::Plus ? OpKind::Add : k == TokenKind::Minus ? OpKind::Sub : OpKind::None;
      break;
    case 4:
      op = k == TokenKind::Star         ? OpKind::Mul
           : k == TokenKind::Slash      ? OpKind::Div
           : k == TokenKind::SlashSlash ? OpKind::FloorDiv
           : k == TokenKind::Percent    ? OpKind::Mod
                                        : OpKind::None;
      break;
    default: break;
    }
    if (op == OpKind::None)
      break;
    consume();
    ExprPtr rhs = parseBinaryLevel(level + 1);
    if (!rhs)
      return nullptr;
    lhs = makePair(ExprKind::Binary, std::move(lhs), std::move(rhs), op);
  }
  return lhs;
}

ExprPtr Parser::parseFactor() {
  OpKind op = is(TokenKind::Minus)   ? OpKind::Neg
              : is(TokenKind::Plus)  ? OpKind::Pos
              : is(TokenKind::Tilde) ? OpKind::Invert
                                     : OpKind::None;
  if (op == OpKind::None)
    return parsePower();
  Nesting guard(*this);
  if (!guard.ok)
    return nullptr;
  SourceRange opRange = consume().range;
  ExprPtr operand = parseFactor();
  if (!operand)
    return nullptr;
  SourceRange range = join(opRange, operand->range);
  std::vector<ExprPtr> args;
  args.push_back(std::move(operand));
  return makeNode(ExprKind::Unary, range, std::move(args), op);
}

// postfix ['**' factor]  (right-associative, binds tighter than unary minus on its left)
ExprPtr Parser::parsePower() {
  ExprPtr base = parsePostfix();
  if (!base || !is(TokenKind::StarStar))
    return base;
  Nesting guard(*this);
  if (!guard.ok)
    return nullptr;
  consume();
  ExprPtr exponent = parseFactor();
  if (!exponent)
    return nullptr;
  SourceRange range = join(base->range, exponent->range);
  std::vector<ExprPtr> args;
  args.push_back(std::move(base));
  args.push_back(std::move(exponent));
  return makeNode(ExprKind::Binary, range, std::move(args), OpKind::Pow);
}

ExprPtr Parser::parsePostfix() {
  ExprPtr value = parseAtom();
  while (value) {
    if (is(TokenKind::LParen)) {
      consume();
      std::vector<ExprPtr> args;
      args.push_back(std::move(value));
      SourceRange start = args[0]->range;
      auto call = std::make_unique<Expr>(ExprKind::Call, start);
      call->args = std::move(args);
      if (!parseCallArgs(*call))
        return nullptr;
      unsigned depth = 0;
      for (const ExprPtr &a : call->args)
        depth = std::max(depth, a->depth);
      for (const Keyword &kw : call->keywords)
        depth = std::max(depth, kw.value->depth);
      call->depth = depth + 1;
      call->range = join(start, prevRange());
      if (call->depth > limits_.maxExprDepth) {
        errorAt(call->range, "expression too complex");
        return nullptr;
      }
      value = std::move(call);
    } else if (is(TokenKind::LBracket)) {
      consume();
      SourceRange start = value->range;
      auto sub = std::make_unique<Expr>(ExprKind::Subscript, start);
      sub->depth = value->depth + 1;
      sub->args.push_back(std::move(value));
      if (!parseSubscripts(*sub))
        return nullptr;
      sub->range = join(start, prevRange());
      if (sub->depth > limits_.maxExprDepth) {
        errorAt(sub->range, "expression too complex");
        return nullptr;
      }
      value = std::move(sub);
    } else if (is(TokenKind::Dot)) {
      consume();
      if (!is(TokenKind::Name)) {
        error("expected an attribute name after '.'");
        return nullptr;
      }
      SourceRange range = join(value->range, tok().range);
      std::string attr = consume().text;
      std::vector<ExprPtr> args;
      args.push_back(std::move(value));
      value = makeNode(ExprKind::Attribute, range, std::move(args));
      if (value)
        value->name = std::move(attr);
    } else {
      break;
    }
  }
  return value;
}

bool Parser::parseCallArgs(Expr &call) {
  Nesting guard(*this);
  if (!guard.ok)
    return false;
  while (!is(TokenKind::RParen)) {
    if (is(TokenKind::Name) && peekTok(1).kind == TokenKind::Assign) {
      Keyword kw;
      kw.name = tok().text;
      kw.nameRange = consume().range;
      consume();
      kw.value = parseExpr();
      if (!kw.value)
        return false;
      for (const Keyword &other : call.keywords)
        if (other.name == kw.name)
          errorAt(kw.nameRange, "keyword argument '" + kw.name + "' repeated");
      call.keywords.push_back(std::move(kw));
    } else {
      if (!call.keywords.empty())
        return error("positional argument after a keyword argument");
      ExprPtr arg = parseExpr();
      if (!arg)
        return false;
      call.args.push_back(std::move(arg));
    }
    if (!accept(TokenKind::Comma))
      break;
  }
  return expect(TokenKind::RParen, "')' to close the call");
}

bool Parser::parseSubscripts(Expr &sub) {
  Nesting guard(*this);
  if (!guard.ok)
    return false;
  while (!is(TokenKind::RBracket)) {
    if (is(TokenKind::Colon)) {
      SourceRange r = consume().range;
      if (!is(TokenKind::Comma) && !is(TokenKind::RBracket))
        return error("only ':' and None are supported as indices (no slice bounds)");
      sub.args.push_back(std::make_unique<Expr>(ExprKind::Slice, r));
    } else {
      ExprPtr index = parseExpr();
      if (!index)
        return false;
      if (is(TokenKind::Colon))
        return error("slices with bounds are not supported; indices are ':' or None");
      sub.depth = std::max(sub.depth, index->depth + 1);
      sub.args.push_back(std::move(index));
    }
    if (!accept(TokenKind::Comma))
      break;
  }
  if (sub.args.size() == 1)
    return error("expected an index (':' or None)");
  return expect(TokenKind::RBracket, "']'");
}

// '[' element ('for' targets 'in' or_test ('if' or_test)*)+ ']', the '[' and the element
// already read (Python's list comprehension).
ExprPtr Parser::parseComprehension(SourceRange open, ExprPtr element) {
  std::vector<ExprPtr> parts;
  parts.push_back(std::move(element));
  while (is(TokenKind::KwFor)) {
    SourceRange at = tok().range;
    // Each clause is a level of expansion: bound them as the expression depth is bounded.
    if (parts.size() > limits_.maxExprDepth) {
      error("a comprehension with more than " + std::to_string(limits_.maxExprDepth) +
            " clauses");
      return nullptr;
    }
    consume();
    std::vector<ExprPtr> names;
    do {
      if (!is(TokenKind::Name)) {
        error("expected a name after 'for', found " + describe(tok()));
        return nullptr;
      }
      names.push_back(makeNode(ExprKind::Name, tok().range, {}));
      names.back()->name = std::string(tok().text);
      consume();
    } while (accept(TokenKind::Comma));
    SourceRange targets = join(names.front()->range, prevRange());
    ExprPtr target = names.size() == 1 ? std::move(names.front())
                                       : makeNode(ExprKind::Tuple, targets, std::move(names));
    if (!expect(TokenKind::KwIn, "'in'"))
      return nullptr;
    ExprPtr iterable = parseOr();
    if (!iterable)
      return nullptr;
    std::vector<ExprPtr> loop;
    loop.push_back(std::move(target));
    loop.push_back(std::move(iterable));
    ExprPtr clause = makeNode(ExprKind::CompFor, join(at, prevRange()), std::move(loop));
    if (!clause) // too deep (reported)
      return nullptr;
    parts.push_back(std::move(clause));
    while (is(TokenKind::KwIf) && parts.size() <= limits_.maxExprDepth) {
      SourceRange ifAt = tok().range;
      consume();
      ExprPtr condition = parseOr();
      if (!condition)
        return nullptr;
      std::vector<ExprPtr> cond;
      cond.push_back(std::move(condition));
      ExprPtr test = makeNode(ExprKind::CompIf, join(ifAt, prevRange()), std::move(cond));
      if (!test)
        return nullptr;
      parts.push_back(std::move(test));
    }
  }
  if (!expect(TokenKind::RBracket, "']' to close the list"))
    return nullptr;
  return makeNode(ExprKind::Comprehension, join(open, prevRange()), std::move(parts));
}

ExprPtr Parser::parseAtom() {
  const Token &t = tok();
  SourceRange range = t.range;
  switch (t.kind) {
  case TokenKind::Name: {
    auto e = std::make_unique<Expr>(ExprKind::Name, range);
    e->name = consume().text;
    return e;
  }
  case TokenKind::Int: {
    auto e = std::make_unique<Expr>(ExprKind::Int, range);
    const std::string &text = consume().text;
    int base = 10;
    size_t skip = 0;
    if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'b' || text[1] == 'o')) {
      base = text[1] == 'x' ? 16 : text[1] == 'b' ? 2 : 8;
      skip = 2;
    }
    errno = 0;
    char *end = nullptr;
    const char *begin = text.c_str() + skip;
    unsigned long long v = std::strtoull(begin, &end, base);
    if (end == begin || *end != '\0') {
      errorAt(range, "invalid integer literal");
      return nullptr;
    }
    if (errno == ERANGE || v > uint64_t(INT64_MAX)) {
      errorAt(range, "integer literal too large (must fit in 64 bits)");
      return nullptr;
    }
    e->intValue = int64_t(v);
    return e;
  }
  case TokenKind::Float: {
    auto e = std::make_unique<Expr>(ExprKind::Float, range);
    e->floatValue = std::strtod(consume().text.c_str(), nullptr);
    return e;
  }
  case TokenKind::String: {
    auto e = std::make_unique<Expr>(ExprKind::String, range);
    e->name = consume().text;
    // Adjacent string literals concatenate, as in Python.
    while (is(TokenKind::String)) {
      e->name += tok().text;
      e->range = join(e->range, consume().range);
    }
    return e;
  }
  case TokenKind::KwTrue:
  case TokenKind::KwFalse: {
    auto e = std::make_unique<Expr>(ExprKind::Bool, range);
    e->intValue = t.kind == TokenKind::KwTrue;
    consume();
    return e;
  }
  case TokenKind::KwNone:
    consume();
    return std::make_unique<Expr>(ExprKind::None, range);
  case TokenKind::LParen: {
    Nesting guard(*this);
    if (!guard.ok)
      return nullptr;
    consume();
    ExprPtr inner = parseExprList(/*allowEmptyTuple=*/true);
    if (!inner)
      return nullptr;
    if (!expect(TokenKind::RParen, "')'"))
      return nullptr;
    inner->range = join(range, prevRange());
    return inner;
  }
  case TokenKind::LBracket: {
    Nesting guard(*this);
    if (!guard.ok)
      return nullptr;
    consume();
    std::vector<ExprPtr> elems;
    while (!is(TokenKind::RBracket)) {
      ExprPtr e = parseExpr();
      if (!e)
        return nullptr;
      elems.push_back(std::move(e));
      if (elems.size() == 1 && is(TokenKind::KwFor))
        return parseComprehension(range, std::move(elems.front()));
      if (!accept(TokenKind::Comma))
        break;
    }
    if (!expect(TokenKind::RBracket, "']' to close the list"))
      return nullptr;
    return makeNode(ExprKind::List, join(range, prevRange()), std::move(elems));
  }
  case TokenKind::Indent:
    error("unexpected indent");
    return nullptr;
  default:
    error("expected an expression, found " + describe(t));
    return nullptr;
  }
}

} // namespace

ast::Module parseModule(const SourceFile &file, DiagnosticEngine &diags,
                        const ParserLimits &limits) {
  return Parser(lex(file, diags), diags, limits).parseModule();
}

} // namespace tessel::frontend
