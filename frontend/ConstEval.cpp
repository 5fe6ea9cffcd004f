//===- frontend/ConstEval.cpp - compile-time values and constant folding ---===//
#include "frontend/ConstEval.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

namespace tessel::frontend {

using ast::OpKind;

const char *dtypeName(DType type) {
  switch (type) {
  case DType::I1: return "i1";
  case DType::I8: return "i8";
  case DType::I16: return "i16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  }
  return "?";
}

std::optional<DType> parseDTypeName(std::string_view name) {
  for (DType t : {DType::I1, DType::I8, DType::I16, DType::I32, DType::I64, DType::F16,
                  DType::BF16, DType::F32, DType::F64})
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}

bool isFloatDType(DType type) {
  return type == DType::F16 || type == DType::BF16 || type == DType::F32 || type == DType::F64;
}

unsigned dtypeBits(DType type) {
  switch (type) {
  case DType::I1: return 1;
  case DType::I8: return 8;
  case DType::I16:
  case DType::F16:
  case DType::BF16: return 16;
  case DType::I32:
  case DType::F32: return 32;
  case DType::I64:
  case DType::F64: return 64;
  }
  return 32;
}

ConstValue ConstValue::ofInt(int64_t v) {
  ConstValue c;
  c.kind = Kind::Int;
  c.intValue = v;
  return c;
}
ConstValue ConstValue::ofFloat(double v) {
  ConstValue c;
  c.kind = Kind::Float;
  c.floatValue = v;
  return c;
}
ConstValue ConstValue::ofBool(bool v) {
  ConstValue c;
  c.kind = Kind::Bool;
  c.intValue = v;
  return c;
}
ConstValue ConstValue::ofDType(DType t) {
  ConstValue c;
  c.kind = Kind::DType;
  c.dtype = t;
  return c;
}
ConstValue ConstValue::ofString(std::string s) {
  ConstValue c;
  c.kind = Kind::String;
  c.text = std::move(s);
  return c;
}

ConstValue ConstValue::ofFunction(std::string name) {
  ConstValue c;
  c.kind = Kind::Function;
  c.text = std::move(name);
  return c;
}

bool ConstValue::truthy() const {
  switch (kind) {
  case Kind::Int:
  case Kind::Bool: return intValue != 0;
  case Kind::Float: return floatValue != 0;
  case Kind::String: return !text.empty();
  case Kind::DType:
  case Kind::Function: return true;
  case Kind::None: return false;
  }
  return false;
}

double ConstValue::asDouble() const { return isFloat() ? floatValue : double(intValue); }

std::string ConstValue::toString() const {
  switch (kind) {
  case Kind::Int: return std::to_string(intValue);
  case Kind::Bool: return intValue ? "True" : "False";
  case Kind::Float: {
    if (std::isinf(floatValue))
      return floatValue > 0 ? "inf" : "-inf";
    if (std::isnan(floatValue))
      return "nan";
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", floatValue);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos)
      s += ".0";
    return s;
  }
  case Kind::DType: return dtypeName(dtype);
  case Kind::String: return "\"" + text + "\"";
  case Kind::None: return "None";
  case Kind::Function: return "<function " + text + ">";
  }
  return "?";
}

const char *ConstValue::kindName() const {
  switch (kind) {
  case Kind::Int: return "int";
  case Kind::Float: return "float";
  case Kind::Bool: return "bool";
  case Kind::DType: return "dtype";
  case Kind::String: return "str";
  case Kind::None: return "None";
  case Kind::Function: return "function";
  }
  return "?";
}

bool ConstValue::operator==(const ConstValue &other) const {
  if (kind != other.kind)
    return false;
  switch (kind) {
  case Kind::Int:
  case Kind::Bool: return intValue == other.intValue;
  case Kind::Float: return floatValue == other.floatValue;
  case Kind::DType: return dtype == other.dtype;
  case Kind::String:
  case Kind::Function: return text == other.text;
  case Kind::None: return true;
  }
  return false;
}

std::optional<ConstValue> parseConstValue(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  std::string lower;
  for (char c : text)
    lower += char(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true")
    return ConstValue::ofBool(true);
  if (lower == "false")
    return ConstValue::ofBool(false);
  if (auto t = parseDTypeName(text))
    return ConstValue::ofDType(*t);
  if (lower == "inf" || lower == "-inf")
    return ConstValue::ofFloat(lower[0] == '-' ? -INFINITY : INFINITY);
  std::string s(text);
  char *end = nullptr;
  errno = 0;
  long long i = std::strtoll(s.c_str(), &end, 0);
  if (end && *end == '\0' && errno == 0)
    return ConstValue::ofInt(i);
  end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end && *end == '\0' && end != s.c_str())
    return ConstValue::ofFloat(d);
  return std::nullopt;
}

namespace {

FoldResult ok(ConstValue v) { return FoldResult{std::move(v), {}}; }
FoldResult fail(std::string msg) { return FoldResult{std::nullopt, std::move(msg)}; }

bool checkedAdd(int64_t a, int64_t b, int64_t &r) { return !__builtin_add_overflow(a, b, &r); }
bool checkedSub(int64_t a, int64_t b, int64_t &r) { return !__builtin_sub_overflow(a, b, &r); }
bool checkedMul(int64_t a, int64_t b, int64_t &r) { return !__builtin_mul_overflow(a, b, &r); }

} // namespace

FoldResult foldUnary(OpKind op, const ConstValue &x) {
  if (op == OpKind::Not)
    return ok(ConstValue::ofBool(!x.truthy()));
  if (!x.isNumber())
    return fail(std::string("bad operand for unary '") + ast::opSpelling(op) + "': " +
                x.kindName());
  switch (op) {
  case OpKind::Pos:
    return ok(x.isBool() ? ConstValue::ofInt(x.intValue) : x);
  case OpKind::Neg:
    if (x.isFloat())
      return ok(ConstValue::ofFloat(-x.floatValue));
    if (x.intValue == std::numeric_limits<int64_t>::min())
      return fail("integer overflow in constant expression");
    return ok(ConstValue::ofInt(-x.intValue));
  case OpKind::Invert:
    if (x.isFloat())
      return fail("bad operand for unary '~': float");
    return ok(ConstValue::ofInt(~x.intValue));
  default:
    return fail("bad unary operator");
  }
}

FoldResult foldBinary(OpKind op, const ConstValue &a, const ConstValue &b) {
  std::string opName = ast::opSpelling(op);
  if (op == OpKind::And)
    return ok(ConstValue::ofBool(a.truthy() && b.truthy()));
  if (op == OpKind::Or)
    return ok(ConstValue::ofBool(a.truthy() || b.truthy()));
  if (op == OpKind::Eq || op == OpKind::Ne) {
    bool eq;
    if (a.isNumber() && b.isNumber())
      eq = (a.isFloat() || b.isFloat()) ? a.asDouble() == b.asDouble() : a.intValue == b.intValue;
    else
      eq = a == b;
    return ok(ConstValue::ofBool(op == OpKind::Eq ? eq : !eq));
  }
  if (!a.isNumber() || !b.isNumber())
    return fail("unsupported operand types for '" + opName + "': " + a.kindName() + " and " +
                b.kindName());
  bool isFloat = a.isFloat() || b.isFloat();
  switch (op) {
  case OpKind::Lt:
  case OpKind::Le:
  case OpKind::Gt:
  case OpKind::Ge: {
    bool r;
    if (isFloat) {
      double x = a.asDouble(), y = b.asDouble();
      r = op == OpKind::Lt ? x < y : op == OpKind::Le ? x <= y : op == OpKind::Gt ? x > y : x >= y;
    } else {
      int64_t x = a.intValue, y = b.intValue;
      r = op == OpKind::Lt ? x < y : op == OpKind::Le ? x <= y : op == OpKind::Gt ? x > y : x >= y;
    }
    return ok(ConstValue::ofBool(r));
  }
  case OpKind::BitAnd:
  case OpKind::BitOr:
  case OpKind::BitXor: {
    if (isFloat)
      return fail("unsupported operand types for '" + opName + "': float");
    int64_t r = op == OpKind::BitAnd  ? (a.intValue & b.intValue)
                : op == OpKind::BitOr ? (a.intValue | b.intValue)
                                      : (a.intValue ^ b.intValue);
    if (a.isBool() && b.isBool())
      return ok(ConstValue::ofBool(r != 0));
    return ok(ConstValue::ofInt(r));
  }
  case OpKind::Div: {
    if (b.asDouble() == 0)
      return fail("division by zero in constant expression");
    return ok(ConstValue::ofFloat(a.asDouble() / b.asDouble()));
  }
  default:
    break;
  }
  if (isFloat) {
    double x = a.asDouble(), y = b.asDouble();
    switch (op) {
    case OpKind::Add: return ok(ConstValue::ofFloat(x + y));
    case OpKind::Sub: return ok(ConstValue::ofFloat(x - y));
    case OpKind::Mul: return ok(ConstValue::ofFloat(x * y));
    case OpKind::Pow: return ok(ConstValue::ofFloat(std::pow(x, y)));
    case OpKind::FloorDiv:
    case OpKind::Mod: {
      if (y == 0)
        return fail("division by zero in constant expression");
      double q = std::floor(x / y);
      return ok(ConstValue::ofFloat(op == OpKind::FloorDiv ? q : x - q * y));
    }
    default: return fail("unsupported operator '" + opName + "'");
    }
  }
  int64_t x = a.intValue, y = b.intValue, r = 0;
  switch (op) {
  case OpKind::Add:
    if (!checkedAdd(x, y, r))
      return fail("integer overflow in constant expression");
    return ok(ConstValue::ofInt(r));
  case OpKind::Sub:
    if (!checkedSub(x, y, r))
      return fail("integer overflow in constant expression");
    return ok(ConstValue::ofInt(r));
  case OpKind::Mul:
    if (!checkedMul(x, y, r))
      return fail("integer overflow in constant expression");
    return ok(ConstValue::ofInt(r));
  case OpKind::FloorDiv:
  case OpKind::Mod: {
    if (y == 0)
      return fail("division by zero in constant expression");
    if (x == std::numeric_limits<int64_t>::min() && y == -1)
      return fail("integer overflow in constant expression");
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {
      q -= 1;
      m += y;
    }
    return ok(ConstValue::ofInt(op == OpKind::FloorDiv ? q : m));
  }
  case OpKind::Pow: {
    if (y < 0)
      return ok(ConstValue::ofFloat(std::pow(double(x), double(y))));
    int64_t result = 1;
    for (int64_t i = 0; i < y; ++i) {
      if (!checkedMul(result, x, result))
        return fail("integer overflow in constant expression");
      if (result == 0 || result == 1)
        break;
    }
    return ok(ConstValue::ofInt(result));
  }
  default:
    return fail("unsupported operator '" + opName + "'");
  }
}

std::optional<ConstValue>
evalConstExpr(const ast::Expr &expr,
              const std::function<std::optional<ConstValue>(const std::string &)> &lookup,
              DiagnosticEngine &diags) {
  using ast::ExprKind;
  auto error = [&](const std::string &msg) -> std::optional<ConstValue> {
    diags.error(expr.range, msg);
    return std::nullopt;
  };
  switch (expr.kind) {
  case ExprKind::Int: return ConstValue::ofInt(expr.intValue);
  case ExprKind::Float: return ConstValue::ofFloat(expr.floatValue);
  case ExprKind::Bool: return ConstValue::ofBool(expr.intValue != 0);
  case ExprKind::None: return ConstValue::none();
  case ExprKind::String: return ConstValue::ofString(expr.name);
  case ExprKind::Name: {
    if (lookup)
      if (auto v = lookup(expr.name))
        return v;
    if (auto t = parseDTypeName(expr.name))
      return ConstValue::ofDType(*t);
    if (expr.name == "inf")
      return ConstValue::ofFloat(INFINITY);
    if (expr.name == "nan")
      return ConstValue::ofFloat(NAN);
    return error("'" + expr.name + "' is not a compile-time constant here");
  }
  case ExprKind::Unary: {
    auto x = evalConstExpr(*expr.args[0], lookup, diags);
    if (!x)
      return std::nullopt;
    FoldResult r = foldUnary(expr.op, *x);
    return r.value ? r.value : error(r.error);
  }
  case ExprKind::Binary:
  case ExprKind::BoolOp: {
    auto a = evalConstExpr(*expr.args[0], lookup, diags);
    if (!a)
      return std::nullopt;
    auto b = evalConstExpr(*expr.args[1], lookup, diags);
    if (!b)
      return std::nullopt;
    FoldResult r = foldBinary(expr.op, *a, *b);
    return r.value ? r.value : error(r.error);
  }
  case ExprKind::Ternary: {
    auto c = evalConstExpr(*expr.args[1], lookup, diags);
    if (!c)
      return std::nullopt;
    return evalConstExpr(*expr.args[c->truthy() ? 0 : 2], lookup, diags);
  }
  default:
    return error("expected a compile-time constant (a number, True/False or a dtype)");
  }
}

std::map<std::string, ConstValue> evalModuleConstants(const ast::Module &module,
                                                      DiagnosticEngine &diags) {
  // On demand, by name: a constant may use any other (an importing file's override sits in
  // the imported constant's place, before the importer's own). A cycle is not a constant.
  std::map<std::string, std::optional<ConstValue>> done;
  std::set<std::string> active;
  std::function<std::optional<ConstValue>(const std::string &)> value =
      [&](const std::string &name) -> std::optional<ConstValue> {
    if (auto it = done.find(name); it != done.end())
      return it->second;
    const ast::Constant *c = module.constant(name);
    if (!c) {
      if (const ast::Function *fn = module.function(name);
          fn && fn->kind == ast::FunctionKind::Func)
        return ConstValue::ofFunction(name); // `SCORE_MOD = softcap`
      return std::nullopt;
    }
    if (!active.insert(name).second)
      return std::nullopt; // a cycle: reported at the name that closes it
    std::optional<ConstValue> v = evalConstExpr(*c->value, value, diags);
    active.erase(name);
    done[name] = v;
    return v;
  };
  std::map<std::string, ConstValue> values;
  for (const ast::Constant &c : module.constants)
    if (std::optional<ConstValue> v = value(c.name))
      values[c.name] = *v;
  return values;
}

} // namespace tessel::frontend
