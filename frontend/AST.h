//===- frontend/AST.h - syntax tree of a Tessel source file ----------------===//
//
// One general node type per category (Expr, Stmt) with a kind tag, rather
// than a class per construct: the parser, the printer and MLIRGen each switch
// over the kind. Trees are depth-limited by the parser (see Expr::depth).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_AST_H
#define TESSEL_FRONTEND_AST_H

#include "frontend/Diagnostics.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::frontend::ast {

enum class ExprKind {
  Int,       // 42           (intValue)
  Float,     // 1.5          (floatValue)
  Bool,      // True/False   (intValue 0/1)
  None,      // None
  String,    // "text"       (name holds the text)
  Name,      // x            (name)
  Unary,     // -x, not x, ~x            (op, args[0])
  Binary,    // a + b, a < b, a & b      (op, args[0], args[1])
  BoolOp,    // a and b, a or b          (op, args[0], args[1])
  Ternary,   // a if c else b            (args: [a, c, b])
  Call,      // f(a, k=v)                (args[0] callee, args[1..] positional, keywords)
  Attribute, // x.name                   (args[0], name)
  Subscript, // x[:, None]               (args[0] base, args[1..] indices)
  Slice,     // ':' inside a subscript
  List,      // [a, b]                   (args)
  Tuple,     // (a, b) or a, b           (args)
  // [e for x in xs if c]: args[0] the element, then its clauses, each a CompFor (args:
  // target Name or Tuple of Names, the iterable) or a CompIf (args[0], the condition).
  // Only @autotune's configs= takes one (its clauses are evaluated at compile time).
  Comprehension,
  CompFor,
  CompIf,
};

enum class OpKind {
  None,
  // Unary.
  Neg,
  Pos,
  Not,
  Invert,
  // Binary arithmetic.
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  // Bitwise / elementwise logic.
  BitAnd,
  BitOr,
  BitXor,
  // Comparisons.
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  // Boolean (scalars).
  And,
  Or,
};

/// "+", "//", "<=", "and", "not", ...
const char *opSpelling(OpKind op);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Keyword {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  SourceRange range;
  OpKind op = OpKind::None;
  int64_t intValue = 0;
  /// Set on Int literals that do not fit in 64 bits (the parser reports them).
  double floatValue = 0;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;
  /// Height of the tree under this node (1 for a leaf); bounded by the parser.
  unsigned depth = 1;

  Expr(ExprKind kind, SourceRange range) : kind(kind), range(range) {}
  const Keyword *keyword(const std::string &key) const;
};

enum class StmtKind {
  Assign,    // targets = value             (targets: Name or Tuple of Names)
  AugAssign, // target op= value            (op, targets[0], value)
  ExprStmt,  // f(x)                        (value)
  If,        // if cond: body [else: orelse] (elif is an If inside orelse)
  For,       // for var in range(...): body  (var, value = the range call)
  Return,    // return [value]
  Pass,
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  SourceRange range;
  OpKind op = OpKind::None;
  std::vector<ExprPtr> targets;
  ExprPtr value;
  ExprPtr cond;
  std::string var;
  SourceRange varRange;
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> orelse;
  /// True for an If that came from `elif` (printing only).
  bool isElif = false;

  Stmt(StmtKind kind, SourceRange range) : kind(kind), range(range) {}
};

enum class ParamKind {
  Pointer,   // p: *f32   or p: *T (T a constexpr dtype parameter)
  Scalar,    // n: i32
  Constexpr, // BLOCK: constexpr [= default]
  Untyped,   // x        (only in @func helpers: takes any value)
};

struct Param {
  std::string name;
  SourceRange range;
  ParamKind kind = ParamKind::Untyped;
  /// Pointee or scalar dtype name ("f32", or a constexpr name like "T").
  std::string typeName;
  SourceRange typeRange;
  ExprPtr defaultValue;
};

/// One `config(NAME=value, ...)` of @autotune.
struct AutotuneConfig {
  SourceRange range;
  std::vector<Keyword> values;
  /// A generated config, `[config(...) for ... in ... if ...]`: its clauses (CompFor,
  /// CompIf), expanded with the loop names bound when the configurations are resolved.
  std::vector<ExprPtr> clauses;
};

struct Autotune {
  SourceRange range;
  std::vector<AutotuneConfig> configs;
  std::vector<std::string> key;
  ExprPtr prune;
  /// Pointer params the kernel reads and writes (accumulates into): the autotuner restores
  /// them before every timing run (Triton's restore_value).
  std::vector<std::string> restore;
};

enum class FunctionKind { Kernel, Func };

struct Function {
  std::string name;
  SourceRange range;
  SourceRange nameRange;
  FunctionKind kind = FunctionKind::Kernel;
  std::vector<Param> params;
  std::vector<StmtPtr> body;
  /// Present when decorated with @autotune(...).
  std::unique_ptr<Autotune> autotune;

  const Param *param(const std::string &paramName) const;
};

/// A module-level constant, `NAME = <constant expression>`: a compile-time value every
/// function of the module sees (unless a local of the same name shadows it).
struct Constant {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

/// `import "path.tsl"`: another file's functions and constants join this module.
struct Import {
  std::string path;
  SourceRange range;
};

struct Module {
  std::vector<Import> imports;
  std::vector<Constant> constants;
  std::vector<std::unique_ptr<Function>> functions;
  const Function *function(const std::string &name) const;
  const Constant *constant(const std::string &name) const;
};

} // namespace tessel::frontend::ast

#endif // TESSEL_FRONTEND_AST_H
