//===- frontend/ConstEval.h - compile-time values: dtypes, constexprs, folding ===//
//
// Plain C++ (no MLIR). Constexpr parameters, literals, autotune configs and
// `-D NAME=VALUE` all produce ConstValues; arithmetic on them is folded here
// with Python semantics (floor division, modulo with the divisor's sign).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_CONSTEVAL_H
#define TESSEL_FRONTEND_CONSTEVAL_H

#include "frontend/AST.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tessel::frontend {

enum class DType { I1, I8, I16, I32, I64, F16, BF16, F32, F64 };

/// "i1", ..., "bf16", "f32", "f64".
const char *dtypeName(DType type);
std::optional<DType> parseDTypeName(std::string_view name);
bool isFloatDType(DType type);
unsigned dtypeBits(DType type);

/// A compile-time value.
struct ConstValue {
  enum class Kind { Int, Float, Bool, DType, String, None, Function };
  Kind kind = Kind::None;
  int64_t intValue = 0; // Int, Bool (0/1)
  double floatValue = 0;
  DType dtype = DType::F32;
  std::string text; // String; Function: the @func's name

  static ConstValue ofInt(int64_t v);
  static ConstValue ofFloat(double v);
  static ConstValue ofBool(bool v);
  static ConstValue ofDType(DType t);
  static ConstValue ofString(std::string s);
  /// A @func named as a value (`SCORE_MOD = softcap`): a constexpr that can be called.
  static ConstValue ofFunction(std::string name);
  static ConstValue none() { return ConstValue(); }

  bool isInt() const { return kind == Kind::Int; }
  bool isFloat() const { return kind == Kind::Float; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return isInt() || isFloat() || isBool(); }
  bool isDType() const { return kind == Kind::DType; }
  bool isFunction() const { return kind == Kind::Function; }
  /// Python truthiness.
  bool truthy() const;
  double asDouble() const;
  /// "1024", "0.5", "True", "bf16", "\"text\"", "None", "<function softcap>".
  std::string toString() const;
  /// "int", "float", "bool", "dtype", "str", "None", "function".
  const char *kindName() const;
  bool operator==(const ConstValue &other) const;
};

/// Parses a `-D NAME=VALUE` value: an int, a float, True/False (any case) or a dtype.
std::optional<ConstValue> parseConstValue(std::string_view text);

/// The result of folding: a value, or the reason it cannot be folded.
struct FoldResult {
  std::optional<ConstValue> value;
  std::string error;
};

FoldResult foldUnary(ast::OpKind op, const ConstValue &x);
FoldResult foldBinary(ast::OpKind op, const ConstValue &a, const ConstValue &b);

/// Evaluates a constant expression (literals, dtype names, inf/nan, names that
/// `lookup` knows, unary/binary operators, conditional expressions). Reports an
/// error to `diags` and returns nullopt for anything else.
std::optional<ConstValue>
evalConstExpr(const ast::Expr &expr,
              const std::function<std::optional<ConstValue>(const std::string &)> &lookup,
              DiagnosticEngine &diags);

/// The module's constants, evaluated in order, each seeing the ones before it and the names
/// of the module's @funcs (function values). A constant whose value is not a compile-time
/// constant is absent from the result; its error goes to `diags`.
std::map<std::string, ConstValue> evalModuleConstants(const ast::Module &module,
                                                      DiagnosticEngine &diags);

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_CONSTEVAL_H
