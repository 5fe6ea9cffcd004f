//===- frontend/GenExpr.cpp - names, operators, indexing, casts ------------===//
#include "frontend/Gen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace tessel::frontend {

using ast::ExprKind;
using ast::OpKind;
using mlir::Type;
using mlir::Value;

GenValue Generator::genExpr(const ast::Expr &expr) {
  LocGuard guard(*this, expr.range);
  switch (expr.kind) {
  case ExprKind::Int: return GenValue::ofConst(ConstValue::ofInt(expr.intValue));
  case ExprKind::Float: return GenValue::ofConst(ConstValue::ofFloat(expr.floatValue));
  case ExprKind::Bool: return GenValue::ofConst(ConstValue::ofBool(expr.intValue != 0));
  case ExprKind::None: return GenValue::ofConst(ConstValue::none());
  case ExprKind::String: return GenValue::ofConst(ConstValue::ofString(expr.name));
  case ExprKind::Name: return genName(expr);
  case ExprKind::Unary: return genUnary(expr.op, genExpr(*expr.args[0]), expr.range);
  case ExprKind::Binary: {
    GenValue a = genExpr(*expr.args[0]);
    GenValue c = genExpr(*expr.args[1]);
    return genBinary(expr.op, a, c, expr.range);
  }
  case ExprKind::BoolOp: return genBoolOp(expr);
  case ExprKind::Ternary: return genTernary(expr);
  case ExprKind::Call: return genCall(expr);
  case ExprKind::Attribute: return genAttribute(expr);
  case ExprKind::Subscript: return genSubscript(expr);
  case ExprKind::List:
  case ExprKind::Tuple: {
    std::vector<GenValue> elems;
    for (const ast::ExprPtr &e : expr.args)
      elems.push_back(genExpr(*e));
    return GenValue::ofTuple(std::move(elems));
  }
  case ExprKind::Slice: return error(expr.range, "':' is only allowed inside an index");
  case ExprKind::Comprehension:
  case ExprKind::CompFor:
  case ExprKind::CompIf:
    return error(expr.range, "a list comprehension is only allowed in @autotune(configs=...)");
  }
  return GenValue::poison();
}

static unsigned editDistance(const std::string &a, const std::string &c) {
  std::vector<unsigned> prev(c.size() + 1), cur(c.size() + 1);
  for (size_t j = 0; j <= c.size(); ++j)
    prev[j] = unsigned(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = unsigned(i);
    for (size_t j = 1; j <= c.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != c[j - 1])});
    std::swap(prev, cur);
  }
  return prev[c.size()];
}

const GenValue *Generator::moduleConstant(const std::string &name) {
  if (!moduleConstantsEvaluated_) {
    moduleConstantsEvaluated_ = true;
    std::map<std::string, ConstValue> values = evalModuleConstants(module, diags);
    for (const ast::Constant &c : module.constants) {
      auto it = values.find(c.name);
      moduleConstants_[c.name] =
          it != values.end() ? GenValue::ofConst(it->second) : GenValue::poison();
    }
  }
  auto it = moduleConstants_.find(name);
  return it == moduleConstants_.end() ? nullptr : &it->second;
}

GenValue Generator::genName(const ast::Expr &expr) {
  const std::string &name = expr.name;
  auto it = scope->vars.find(name);
  if (it != scope->vars.end())
    return it->second;
  if (const GenValue *constant = moduleConstant(name))
    return *constant;
  if (auto t = parseDTypeName(name))
    return GenValue::ofConst(ConstValue::ofDType(*t));
  if (name == "inf")
    return GenValue::ofConst(ConstValue::ofFloat(INFINITY));
  if (name == "nan")
    return GenValue::ofConst(ConstValue::ofFloat(NAN));
  if (isBuiltinName(name))
    return error(expr.range, "'" + name + "' is a built-in function; call it: " + name + "(...)");
  if (const ast::Function *fn = module.function(name)) {
    // A @func named without a call is a constexpr value: it can be passed to a constexpr
    // parameter or bound to a constant and called through it (as Triton's functions).
    if (fn->kind == ast::FunctionKind::Func)
      return GenValue::ofConst(ConstValue::ofFunction(name));
    return error(expr.range, "'" + name + "' is a @kernel; it cannot be used as a value");
  }
  Diagnostic &d = report(expr.range, "unknown name '" + name + "'");
  auto dropped = scope->dropped.find(name);
  if (dropped != scope->dropped.end()) {
    DiagnosticEngine::note(d, dropped->second,
                           "'" + name + "' is assigned only inside a loop or one branch of a "
                           "runtime 'if'; assign it before to use it afterwards");
    return GenValue::poison();
  }
  std::string best;
  unsigned bestDist = unsigned(name.size() / 3 + 1);
  for (const auto &kv : scope->vars) {
    unsigned dist = editDistance(name, kv.first);
    if (dist <= bestDist && dist > 0) {
      bestDist = dist;
      best = kv.first;
    }
  }
  SourceRange bestDef = scope->defs.count(best) ? scope->defs[best] : SourceRange();
  for (const ast::Constant &c : module.constants) {
    unsigned dist = editDistance(name, c.name);
    if (dist <= bestDist && dist > 0 && !scope->vars.count(c.name)) {
      bestDist = dist;
      best = c.name;
      bestDef = c.nameRange;
    }
  }
  if (!best.empty())
    DiagnosticEngine::note(d, bestDef, "did you mean '" + best + "'?");
  return GenValue::poison();
}

std::optional<ConstValue> Generator::requireConst(const GenValue &v, SourceRange range,
                                                  const std::string &what) {
  if (v.isConst())
    return v.cst;
  if (v.isRuntime())
    error(range, what + " must be a constexpr, but this is a runtime value (" +
                     typeName(v.type()) + ")");
  else if (v.isAggregate())
    error(range, what + " must be a constexpr, not " + aggregateName(v));
  return std::nullopt;
}

std::optional<int64_t> Generator::requireConstInt(const GenValue &v, SourceRange range,
                                                  const std::string &what) {
  auto c = requireConst(v, range, what);
  if (!c)
    return std::nullopt;
  if (!c->isInt() && !c->isBool()) {
    error(range, what + " must be an integer, got " + describe(v));
    return std::nullopt;
  }
  return c->intValue;
}

GenValue Generator::genUnary(OpKind op, const GenValue &x, SourceRange range) {
  if (x.isPoison())
    return x;
  if (x.isConst()) {
    FoldResult r = foldUnary(op, x.cst);
    return r.value ? GenValue::ofConst(*r.value) : error(range, r.error);
  }
  if (x.isAggregate())
    return error(range, std::string("bad operand for unary '") + ast::opSpelling(op) +
                            "': " + aggregateName(x));
  Value v = x.value;
  Type elem = elemOf(v.getType());
  mlir::Location l = curLoc();
  if (isPtrElem(elem))
    return error(range, std::string("bad operand for unary '") + ast::opSpelling(op) + "': " +
                            typeName(v.getType()));
  switch (op) {
  case OpKind::Pos: return x;
  case OpKind::Neg:
    if (isFloatElem(elem))
      return GenValue::ofValue(mlir::arith::NegFOp::create(b, l, v));
    if (isBoolElem(elem))
      v = castElem(v, b.getI32Type(), range);
    return GenValue::ofValue(
        mlir::arith::SubIOp::create(b, l, constantOf(ConstValue::ofInt(0), v.getType()), v));
  case OpKind::Invert:
    if (isFloatElem(elem))
      return error(range, "bad operand for unary '~': " + typeName(v.getType()) +
                              " (needs an integer or bool)");
    return GenValue::ofValue(
        mlir::arith::XOrIOp::create(b, l, v, constantOf(ConstValue::ofInt(-1), v.getType())));
  case OpKind::Not:
    if (isBoolElem(elem))
      return GenValue::ofValue(mlir::arith::XOrIOp::create(
          b, l, v, constantOf(ConstValue::ofBool(true), v.getType())));
    if (isFloatElem(elem))
      return GenValue::ofValue(mlir::arith::CmpFOp::create(
          b, l, mlir::arith::CmpFPredicate::OEQ, v, constantOf(ConstValue::ofFloat(0), v.getType())));
    return GenValue::ofValue(mlir::arith::CmpIOp::create(
        b, l, mlir::arith::CmpIPredicate::eq, v, constantOf(ConstValue::ofInt(0), v.getType())));
  default: return error(range, "bad unary operator");
  }
}

static bool isComparison(OpKind op) {
  return op == OpKind::Lt || op == OpKind::Le || op == OpKind::Gt || op == OpKind::Ge ||
         op == OpKind::Eq || op == OpKind::Ne;
}
static bool isBitwise(OpKind op) {
  return op == OpKind::BitAnd || op == OpKind::BitOr || op == OpKind::BitXor;
}

GenValue Generator::genBinary(OpKind op, const GenValue &a, const GenValue &c, SourceRange range) {
  if (a.isPoison() || c.isPoison())
    return GenValue::poison();
  std::string opName = ast::opSpelling(op);
  if (a.isConst() && c.isConst()) {
    FoldResult r = foldBinary(op, a.cst, c.cst);
    return r.value ? GenValue::ofConst(*r.value) : error(range, r.error);
  }
  if (a.isAggregate() || c.isAggregate() || (a.isConst() && !a.cst.isNumber()) ||
      (c.isConst() && !c.cst.isNumber()))
    return error(range, "unsupported operand types for '" + opName + "': " + describe(a) +
                            " and " + describe(c));
  mlir::Location l = curLoc();

  // Pointer arithmetic: ptr + int, int + ptr, ptr - int.
  bool aPtr = a.isRuntime() && isPtrElem(elemOf(a.type()));
  bool cPtr = c.isRuntime() && isPtrElem(elemOf(c.type()));
  if (aPtr || cPtr) {
    const GenValue &ptr = aPtr ? a : c;
    const GenValue &off = aPtr ? c : a;
    bool offIsInt = off.isConst() ? (off.cst.isInt() || off.cst.isBool())
                                  : (!isPtrElem(elemOf(off.type())) && isIntElem(elemOf(off.type())));
    if (!(op == OpKind::Add || (op == OpKind::Sub && aPtr)) || !offIsInt || (aPtr && cPtr))
      return error(range, "unsupported operand types for '" + opName + "': " + describe(a) +
                              " and " + describe(c) +
                              " (pointers support '+' and '-' with integer offsets)");
    Value offset = materialize(off, range);
    if (!offset)
      return GenValue::poison();
    if (isBoolElem(elemOf(offset.getType())))
      offset = castElem(offset, b.getI32Type(), range);
    if (op == OpKind::Sub)
      offset = mlir::arith::SubIOp::create(
          b, l, constantOf(ConstValue::ofInt(0), offset.getType()), offset);
    Value values[2] = {ptr.value, offset};
    if (!broadcastTogether(values, range))
      return GenValue::poison();
    return GenValue::ofValue(
        mlir::tessel::AddPtrOp::create(b, l, values[0].getType(), values[0], values[1]));
  }

  // `x ** k` with a small constexpr integer k: repeated multiplication.
  if (op == OpKind::Pow && a.isRuntime() && c.isConst() && c.cst.isInt() && c.cst.intValue >= 0 &&
      c.cst.intValue <= 8) {
    Value base = a.value;
    if (isBoolElem(elemOf(base.getType())))
      base = castElem(base, b.getI32Type(), range);
    if (c.cst.intValue == 0)
      return GenValue::ofValue(constantOf(ConstValue::ofInt(1), base.getType()));
    Value result = base;
    for (int64_t i = 1; i < c.cst.intValue; ++i)
      result = isFloatElem(elemOf(base.getType()))
                   ? Value(mlir::arith::MulFOp::create(b, l, result, base))
                   : Value(mlir::arith::MulIOp::create(b, l, result, base));
    return GenValue::ofValue(result);
  }

  Type elem = commonElemType(a, c);
  if (!elem)
    return error(range, "unsupported operand types for '" + opName + "': " + describe(a) +
                            " and " + describe(c));
  bool isFloat = isFloatElem(elem);
  if (isBitwise(op) && isFloat)
    return error(range, "'" + opName + "' needs integer or bool operands, got " + describe(a) +
                            " and " + describe(c));
  if (!isComparison(op) && !isBitwise(op) && isBoolElem(elem))
    elem = b.getI32Type();
  if ((op == OpKind::Div || op == OpKind::Pow) && !isFloat) {
    elem = b.getF32Type();
    isFloat = true;
  }
  Value x = toElemType(a, elem, range);
  Value y = toElemType(c, elem, range);
  if (!x || !y)
    return GenValue::poison();
  Value values[2] = {x, y};
  if (!broadcastTogether(values, range))
    return GenValue::poison();
  x = values[0];
  y = values[1];

  namespace arith = mlir::arith;
  if (isComparison(op)) {
    if (isFloat) {
      arith::CmpFPredicate p = op == OpKind::Lt   ? arith::CmpFPredicate::OLT
                               : op == OpKind::Le ? arith::CmpFPredicate::OLE
                               : op == OpKind::Gt ? arith::CmpFPredicate::OGT
                               : op == OpKind::Ge ? arith::CmpFPredicate::OGE
                               : op == OpKind::Eq ? arith::CmpFPredicate::OEQ
                                                  : arith::CmpFPredicate::UNE;
      return GenValue::ofValue(arith::CmpFOp::create(b, l, p, x, y));
    }
    arith::CmpIPredicate p = op == OpKind::Lt   ? arith::CmpIPredicate::slt
                             : op == OpKind::Le ? arith::CmpIPredicate::sle
                             : op == OpKind::Gt ? arith::CmpIPredicate::sgt
                             : op == OpKind::Ge ? arith::CmpIPredicate::sge
                             : op == OpKind::Eq ? arith::CmpIPredicate::eq
                                                : arith::CmpIPredicate::ne;
    return GenValue::ofValue(arith::CmpIOp::create(b, l, p, x, y));
  }
  Value r;
  switch (op) {
  case OpKind::Add:
    r = isFloat ? Value(arith::AddFOp::create(b, l, x, y)) : Value(arith::AddIOp::create(b, l, x, y));
    break;
  case OpKind::Sub:
    r = isFloat ? Value(arith::SubFOp::create(b, l, x, y)) : Value(arith::SubIOp::create(b, l, x, y));
    break;
  case OpKind::Mul:
    r = isFloat ? Value(arith::MulFOp::create(b, l, x, y)) : Value(arith::MulIOp::create(b, l, x, y));
    break;
  case OpKind::Div: r = arith::DivFOp::create(b, l, x, y); break;
  case OpKind::FloorDiv:
    r = isFloat ? Value(mlir::math::FloorOp::create(b, l, arith::DivFOp::create(b, l, x, y)))
                : Value(arith::DivSIOp::create(b, l, x, y));
    break;
  case OpKind::Mod:
    r = isFloat ? Value(arith::RemFOp::create(b, l, x, y)) : Value(arith::RemSIOp::create(b, l, x, y));
    break;
  case OpKind::Pow: r = mlir::math::PowFOp::create(b, l, x, y); break;
  case OpKind::BitAnd: r = arith::AndIOp::create(b, l, x, y); break;
  case OpKind::BitOr: r = arith::OrIOp::create(b, l, x, y); break;
  case OpKind::BitXor: r = arith::XOrIOp::create(b, l, x, y); break;
  default: return error(range, "unsupported operator '" + opName + "'");
  }
  return GenValue::ofValue(r);
}

// `and` / `or`: constexpr operands fold (and short-circuit); runtime operands
// must be scalars and become i1.
GenValue Generator::genBoolOp(const ast::Expr &expr) {
  GenValue a = genExpr(*expr.args[0]);
  if (a.isPoison())
    return a;
  bool isAnd = expr.op == OpKind::And;
  if (a.isConst() && (isAnd ? !a.cst.truthy() : a.cst.truthy()))
    return GenValue::ofConst(ConstValue::ofBool(!isAnd));
  GenValue c = genExpr(*expr.args[1]);
  if (c.isPoison())
    return c;
  if (a.isConst() && c.isConst())
    return GenValue::ofConst(ConstValue::ofBool(c.cst.truthy()));
  auto toBool = [&](const GenValue &v, SourceRange r) -> Value {
    if (v.isConst())
      return constantScalar(ConstValue::ofBool(v.cst.truthy()), b.getI1Type());
    if (v.isAggregate()) {
      error(r, std::string(aggregateName(v)) + " cannot be used as a condition");
      return nullptr;
    }
    if (!shapeOf(v.type()).empty()) {
      error(r, std::string("'") + ast::opSpelling(expr.op) + "' needs scalars, got " +
                   typeName(v.type()) + "; use '" + (isAnd ? "&" : "|") + "' for tiles");
      return nullptr;
    }
    if (isPtrElem(v.type())) {
      error(r, "a pointer cannot be used as a condition");
      return nullptr;
    }
    return castElem(v.value, b.getI1Type(), r);
  };
  if (a.isConst())
    return GenValue::ofValue(toBool(c, expr.args[1]->range)); // a is truthy (and) / falsy (or)
  Value x = toBool(a, expr.args[0]->range);
  Value y = toBool(c, expr.args[1]->range);
  if (!x || !y)
    return GenValue::poison();
  if (isAnd)
    return GenValue::ofValue(mlir::arith::AndIOp::create(b, curLoc(), x, y));
  return GenValue::ofValue(mlir::arith::OrIOp::create(b, curLoc(), x, y));
}

// `a if c else b`: a constexpr condition picks one side at compile time;
// a runtime scalar condition becomes arith.select.
GenValue Generator::genTernary(const ast::Expr &expr) {
  GenValue cond = genExpr(*expr.args[1]);
  if (cond.isPoison())
    return cond;
  if (cond.isConst())
    return genExpr(*expr.args[cond.cst.truthy() ? 0 : 2]);
  if (cond.isAggregate())
    return error(expr.args[1]->range,
                 std::string(aggregateName(cond)) + " cannot be used as a condition");
  if (!shapeOf(cond.type()).empty())
    return error(expr.args[1]->range, "the condition of 'x if c else y' must be a scalar, got " +
                                          typeName(cond.type()) + "; use where() for tiles");
  Value c = castElem(cond.value, b.getI1Type(), expr.args[1]->range);
  GenValue a = genExpr(*expr.args[0]);
  GenValue o = genExpr(*expr.args[2]);
  if (!c || a.isPoison() || o.isPoison())
    return GenValue::poison();
  Type elem;
  bool aPtr = a.isRuntime() && isPtrElem(elemOf(a.type()));
  bool oPtr = o.isRuntime() && isPtrElem(elemOf(o.type()));
  if (aPtr || oPtr)
    elem = aPtr && oPtr && elemOf(a.type()) == elemOf(o.type()) ? elemOf(a.type()) : Type();
  else
    elem = commonElemType(a, o);
  if (!elem)
    return error(expr.range, "the two sides of 'x if c else y' have incompatible types: " +
                                 describe(a) + " and " + describe(o));
  Value x = toElemType(a, elem, expr.args[0]->range);
  Value y = toElemType(o, elem, expr.args[2]->range);
  if (!x || !y)
    return GenValue::poison();
  Value values[2] = {x, y};
  if (!broadcastTogether(values, expr.range))
    return GenValue::poison();
  return GenValue::ofValue(mlir::arith::SelectOp::create(b, curLoc(), c, values[0], values[1]));
}

// `x[:, None]`: each ':' keeps a dimension, each None inserts one of size 1.
GenValue Generator::genSubscript(const ast::Expr &expr) {
  GenValue base = genExpr(*expr.args[0]);
  if (base.isPoison())
    return base;
  if (base.isConst() && base.cst.kind == ConstValue::Kind::None)
    return error(expr.args[0]->range, "cannot index None");
  if (!base.isRuntime())
    return error(expr.args[0]->range, "only tiles can be indexed, got " + describe(base));
  Value v = base.value;
  size_t rank = shapeOf(v.getType()).size();
  size_t slices = 0;
  for (size_t i = 1; i < expr.args.size(); ++i) {
    const ast::Expr &index = *expr.args[i];
    if (index.kind == ExprKind::Slice)
      ++slices;
    else if (index.kind != ExprKind::None)
      return error(index.range, "only ':' and None are supported as indices");
  }
  if (slices != rank)
    return error(expr.range, "index has " + std::to_string(slices) + " ':' but the value is " +
                                 (rank ? typeName(v.getType()) + " of rank " + std::to_string(rank)
                                       : "a scalar") +
                                 " (one ':' per dimension)");
  if (rank == 0) {
    // s[None] on a scalar: a tile of one element.
    llvm::SmallVector<int64_t> shape(expr.args.size() - 1, 1);
    return GenValue::ofValue(broadcastTo(v, shape));
  }
  for (size_t i = 1; i < expr.args.size(); ++i) {
    if (expr.args[i]->kind != ExprKind::None)
      continue;
    auto shape = llvm::to_vector(shapeOf(v.getType()));
    uint32_t axis = uint32_t(i - 1);
    shape.insert(shape.begin() + axis, 1);
    v = mlir::tessel::ExpandDimsOp::create(
        b, curLoc(), mlir::RankedTensorType::get(shape, elemOf(v.getType())), v, axis);
  }
  return GenValue::ofValue(v);
}

GenValue Generator::genAttribute(const ast::Expr &expr) {
  GenValue base = genExpr(*expr.args[0]);
  if (base.isPoison())
    return base;
  if (base.isDescriptor())
    return genDescriptorAttribute(expr, base);
  if (expr.name == "dtype" && base.isRuntime() && !isPtrElem(elemOf(base.type()))) {
    if (auto d = typeToDType(elemOf(base.type())))
      return GenValue::ofConst(ConstValue::ofDType(*d));
  }
  if (expr.name == "to")
    return error(expr.range, "'.to' must be called: x.to(dtype)");
  return error(expr.range, "unknown attribute '" + expr.name + "' of " + describe(base) +
                               " (supported: .to(dtype), .dtype)");
}

GenValue Generator::genCast(const GenValue &x, DType dtype, SourceRange range) {
  if (x.isPoison())
    return x;
  Type elem = dtypeToType(dtype);
  if (x.isConst()) {
    if (!x.cst.isNumber())
      return error(range, "cannot convert " + describe(x) + " to " + dtypeName(dtype));
    return GenValue::ofValue(constantScalar(x.cst, elem, /*explicitCast=*/true));
  }
  if (x.isAggregate())
    return error(range, "cannot convert " + std::string(aggregateName(x)) + " to " +
                            dtypeName(dtype));
  Value v = castElem(x.value, elem, range);
  return v ? GenValue::ofValue(v) : GenValue::poison();
}

} // namespace tessel::frontend
