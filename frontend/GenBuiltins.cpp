//===- frontend/GenBuiltins.cpp - calls: built-ins, casts and @func inlining ===//
#include "frontend/Gen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace tessel::frontend {

using ast::Expr;
using ast::ExprKind;
using mlir::Type;
using mlir::Value;

namespace {

/// Binds a call's positional and keyword arguments to named parameters.
/// Returns false after reporting a count or keyword error.
bool bindArgs(Generator &gen, const Expr &call, const std::string &fname,
              const std::vector<const char *> &names, size_t required,
              std::vector<const Expr *> &out) {
  out.assign(names.size(), nullptr);
  size_t positional = call.args.size() - 1;
  if (positional > names.size()) {
    gen.error(call.args[names.size() + 1]->range,
              fname + "() takes " +
                  (required == names.size() ? "" : "at most ") + std::to_string(names.size()) +
                  (names.size() == 1 ? " argument" : " arguments") + " (" +
                  std::to_string(positional) + " given)");
    return false;
  }
  for (size_t i = 0; i < positional; ++i)
    out[i] = call.args[i + 1].get();
  for (const ast::Keyword &kw : call.keywords) {
    size_t idx = names.size();
    for (size_t i = 0; i < names.size(); ++i)
      if (kw.name == names[i])
        idx = i;
    if (idx == names.size()) {
      std::string expected;
      for (const char *n : names)
        expected += std::string(expected.empty() ? "" : ", ") + n;
      gen.error(kw.nameRange, fname + "() got an unexpected keyword argument '" + kw.name +
                                  "' (parameters: " + expected + ")");
      return false;
    }
    if (out[idx]) {
      gen.error(kw.nameRange, fname + "() got multiple values for argument '" + kw.name + "'");
      return false;
    }
    out[idx] = kw.value.get();
  }
  for (size_t i = 0; i < required; ++i) {
    if (!out[i]) {
      gen.error(call.range, fname + "() missing required argument '" + names[i] + "' (takes " +
                                std::to_string(required) +
                                (required == 1 ? " argument)" : " arguments)"));
      return false;
    }
  }
  return true;
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

const char *const kBuiltins[] = {
    "program_id", "num_programs", "arange", "zeros", "full",  "load",    "store",
    "where",      "maximum",      "minimum", "exp",  "exp2",  "log",     "log2",
    "sqrt",       "rsqrt",        "sigmoid", "abs",  "sum",   "max",     "min",
    "cdiv",       "static_assert", "range",   "dot",   "trans",
};

} // namespace

bool Generator::isBuiltinName(const std::string &name) {
  for (const char *b : kBuiltins)
    if (name == b)
      return true;
  return false;
}

GenValue Generator::genMethodCall(const Expr &expr) {
  const Expr &attr = *expr.args[0];
  GenValue base = genExpr(*attr.args[0]);
  if (base.isPoison())
    return base;
  if (attr.name != "to")
    return error(attr.range, "unknown method '" + attr.name + "' (supported: .to(dtype))");
  std::vector<const Expr *> args;
  if (!bindArgs(*this, expr, "to", {"dtype"}, 1, args))
    return GenValue::poison();
  GenValue d = genExpr(*args[0]);
  if (d.isPoison())
    return d;
  if (!d.isConst() || !d.cst.isDType())
    return error(args[0]->range, "to() needs a dtype (like bf16 or a constexpr dtype), got " +
                                     describe(d));
  return genCast(base, d.cst.dtype, expr.range);
}

GenValue Generator::genCall(const Expr &expr) {
  const Expr &callee = *expr.args[0];
  if (callee.kind == ExprKind::Attribute)
    return genMethodCall(expr);
  if (callee.kind != ExprKind::Name)
    return error(callee.range, "only named functions can be called");
  const std::string &name = callee.name;
  if (scope->vars.count(name))
    return error(callee.range, "'" + name + "' is a variable, not a function");
  if (const ast::Function *fn = module.function(name)) {
    if (fn->kind == ast::FunctionKind::Kernel)
      return error(callee.range, "cannot call @kernel '" + name +
                                     "' from a kernel; make it a @func helper");
    return callFunc(*fn, expr);
  }
  namespace arith = mlir::arith;
  namespace math = mlir::math;
  namespace tsl = mlir::tessel;
  std::vector<const Expr *> args;
  auto bind = [&](std::vector<const char *> names, size_t required) {
    return bindArgs(*this, expr, name, names, required, args);
  };
  // Evaluates argument i (a missing optional one is None).
  auto arg = [&](size_t i) {
    return args[i] ? genExpr(*args[i]) : GenValue::ofConst(ConstValue::none());
  };
  auto argRange = [&](size_t i) { return args[i] ? args[i]->range : expr.range; };
  mlir::Location l = curLoc();

  if (name == "program_id" || name == "num_programs") {
    if (!bind({"axis"}, 0))
      return GenValue::poison();
    GenValue a = args[0] ? arg(0) : GenValue::ofConst(ConstValue::ofInt(0));
    if (a.isPoison())
      return a;
    auto axis = requireConstInt(a, argRange(0), "the axis of " + name + "()");
    if (!axis)
      return GenValue::poison();
    if (*axis < 0 || *axis > 2)
      return error(argRange(0), "the axis of " + name + "() must be 0, 1 or 2, got " +
                                    std::to_string(*axis));
    if (name == "program_id")
      return GenValue::ofValue(tsl::ProgramIdOp::create(b, l, b.getI32Type(), uint32_t(*axis)));
    return GenValue::ofValue(tsl::NumProgramsOp::create(b, l, b.getI32Type(), uint32_t(*axis)));
  }

  if (name == "arange") {
    if (!bind({"start", "end"}, 1))
      return GenValue::poison();
    GenValue s = arg(0);
    GenValue e = args[1] ? arg(1) : GenValue::poison();
    if (s.isPoison() || (args[1] && e.isPoison()))
      return GenValue::poison();
    auto start = requireConstInt(s, argRange(0), "the start of arange()");
    if (!start)
      return GenValue::poison();
    int64_t begin = 0, end = *start;
    if (args[1]) {
      auto stop = requireConstInt(e, argRange(1), "the end of arange()");
      if (!stop)
        return GenValue::poison();
      begin = *start;
      end = *stop;
    }
    if (begin < 0 || end > INT32_MAX || end <= begin)
      return error(expr.range, "arange(" + std::to_string(begin) + ", " + std::to_string(end) +
                                   ") needs 0 <= start < end < 2^31");
    if (!isPowerOfTwo(end - begin))
      return error(expr.range, "arange() length " + std::to_string(end - begin) +
                                   " is not a power of two (tile sizes must be powers of two)");
    return GenValue::ofValue(tsl::MakeRangeOp::create(
        b, l, mlir::RankedTensorType::get({end - begin}, b.getI32Type()), uint32_t(begin),
        uint32_t(end)));
  }

  if (name == "zeros" || name == "full") {
    bool isFull = name == "full";
    if (isFull ? !bind({"shape", "value", "dtype"}, 3) : !bind({"shape", "dtype"}, 2))
      return GenValue::poison();
    GenValue shapeV = arg(0);
    GenValue value = isFull ? arg(1) : GenValue::ofConst(ConstValue::ofInt(0));
    GenValue dtypeV = arg(isFull ? 2 : 1);
    if (shapeV.isPoison() || value.isPoison() || dtypeV.isPoison())
      return GenValue::poison();
    llvm::SmallVector<int64_t> shape;
    std::vector<GenValue> dims = shapeV.isTuple() ? shapeV.elems : std::vector<GenValue>{shapeV};
    for (const GenValue &d : dims) {
      if (d.isPoison())
        return d;
      auto n = requireConstInt(d, argRange(0), "a tile dimension");
      if (!n)
        return GenValue::poison();
      if (!isPowerOfTwo(*n) || *n > (int64_t(1) << 24))
        return error(argRange(0), "tile dimension " + std::to_string(*n) +
                                      " is not a power of two (tile sizes must be powers of two)");
      shape.push_back(*n);
    }
    if (shape.empty())
      return error(argRange(0), "the shape of " + name + "() must have at least one dimension");
    int64_t elements = 1;
    for (int64_t d : shape)
      elements = std::min<int64_t>(elements * d, kMaxTileElements + 1);
    if (elements > kMaxTileElements)
      return error(argRange(0), "tile too large: " + shapeName(shape) + " has more than " +
                                    std::to_string(kMaxTileElements) + " elements");
    if (!dtypeV.isConst() || !dtypeV.cst.isDType())
      return error(argRange(isFull ? 2 : 1), name + "() needs a dtype (like f32), got " +
                                                 describe(dtypeV));
    Type elem = dtypeToType(dtypeV.cst.dtype);
    if (value.isRuntime() && !shapeOf(value.type()).empty())
      return error(argRange(1), "the value of full() must be a scalar, got " +
                                    typeName(value.type()));
    Value scalar = toElemType(value, elem, argRange(1));
    if (!scalar)
      return GenValue::poison();
    return GenValue::ofValue(
        tsl::SplatOp::create(b, l, mlir::RankedTensorType::get(shape, elem), scalar));
  }

  // load/store: the pointer operand, and an optional boolean mask (absent: no mask).
  auto checkPointer = [&](const GenValue &ptr, const char *fn) {
    if (ptr.isRuntime() && isPtrElem(elemOf(ptr.type())))
      return true;
    error(argRange(0), std::string(fn) + "() needs a pointer or a tile of pointers, got " +
                           describe(ptr));
    return false;
  };
  auto maskOf = [&](const GenValue &mask, size_t index, const char *fn, Value &out) {
    if (mask.isConst() && mask.cst.kind == ConstValue::Kind::None)
      return true;
    if (mask.isConst() && mask.cst.isBool()) {
      out = constantScalar(mask.cst, b.getI1Type());
      return true;
    }
    if (mask.isRuntime() && isBoolElem(elemOf(mask.type()))) {
      out = mask.value;
      return true;
    }
    error(argRange(index), std::string("the mask of ") + fn +
                               "() must be a boolean (i1) tile or scalar, got " + describe(mask));
    return false;
  };

  if (name == "load") {
    if (!bind({"ptr", "mask", "other"}, 1))
      return GenValue::poison();
    GenValue ptr = arg(0), mask = arg(1), other = arg(2);
    if (ptr.isPoison() || mask.isPoison() || other.isPoison())
      return GenValue::poison();
    Value m, o;
    if (!checkPointer(ptr, "load") || !maskOf(mask, 1, "load", m))
      return GenValue::poison();
    Value p = ptr.value;
    Type pointee = mlir::cast<tsl::PtrType>(elemOf(p.getType())).getPointeeType();
    if (m && !(other.isConst() && other.cst.kind == ConstValue::Kind::None)) {
      if (other.isRuntime() && isPtrElem(elemOf(other.type())))
        return error(argRange(2), "the 'other' value of load() must be a number, got " +
                                      describe(other));
      o = toElemType(other, pointee, argRange(2));
      if (!o)
        return GenValue::poison();
    }
    Value values[3] = {p, m, o};
    if (!broadcastTogether(values, expr.range))
      return GenValue::poison();
    return GenValue::ofValue(tsl::LoadOp::create(b, l, values[0], values[1], values[2]));
  }

  if (name == "store") {
    if (!bind({"ptr", "value", "mask"}, 2))
      return GenValue::poison();
    GenValue ptr = arg(0), value = arg(1), mask = arg(2);
    if (ptr.isPoison() || value.isPoison() || mask.isPoison())
      return GenValue::poison();
    if (!checkPointer(ptr, "store"))
      return GenValue::poison();
    Value p = ptr.value;
    Type pointee = mlir::cast<tsl::PtrType>(elemOf(p.getType())).getPointeeType();
    if (value.isRuntime() && isPtrElem(elemOf(value.type())))
      return error(argRange(1), "cannot store pointers, got " + describe(value));
    Value v = toElemType(value, pointee, argRange(1));
    if (!v)
      return GenValue::poison();
    Value m;
    if (!maskOf(mask, 2, "store", m))
      return GenValue::poison();
    Value values[3] = {p, v, m};
    if (!broadcastTogether(values, expr.range))
      return GenValue::poison();
    tsl::StoreOp::create(b, l, values[0], values[1], values[2]);
    return GenValue::ofConst(ConstValue::none());
  }

  if (name == "where") {
    if (!bind({"condition", "x", "y"}, 3))
      return GenValue::poison();
    GenValue c = arg(0), x = arg(1), y = arg(2);
    if (c.isPoison() || x.isPoison() || y.isPoison())
      return GenValue::poison();
    Value cond;
    if (c.isConst() && c.cst.isBool())
      cond = constantScalar(c.cst, b.getI1Type());
    else if (c.isRuntime() && isBoolElem(elemOf(c.type())))
      cond = c.value;
    else
      return error(argRange(0), "the condition of where() must be a boolean (i1) tile, got " +
                                    describe(c));
    Type elem = commonElemType(x, y);
    if (x.isRuntime() && y.isRuntime() && isPtrElem(elemOf(x.type())) && elemOf(x.type()) == elemOf(y.type()))
      elem = elemOf(x.type());
    if (!elem)
      return error(expr.range, "where() has incompatible values: " + describe(x) + " and " +
                                   describe(y));
    Value xv = toElemType(x, elem, argRange(1)), yv = toElemType(y, elem, argRange(2));
    if (!xv || !yv)
      return GenValue::poison();
    Value values[3] = {cond, xv, yv};
    if (!broadcastTogether(values, expr.range))
      return GenValue::poison();
    return GenValue::ofValue(arith::SelectOp::create(b, l, values[0], values[1], values[2]));
  }

  if (name == "maximum" || name == "minimum") {
    if (!bind({"x", "y"}, 2))
      return GenValue::poison();
    GenValue x = arg(0), y = arg(1);
    if (x.isPoison() || y.isPoison())
      return GenValue::poison();
    if (x.isConst() && y.isConst()) {
      if (!x.cst.isNumber() || !y.cst.isNumber())
        return error(expr.range, name + "() needs numbers");
      bool takeX = (name == "maximum") == (x.cst.asDouble() >= y.cst.asDouble());
      return takeX ? x : y;
    }
    Type elem = commonElemType(x, y);
    if (!elem)
      return error(expr.range, name + "() has incompatible operands: " + describe(x) + " and " +
                                   describe(y));
    Value xv = toElemType(x, elem, argRange(0)), yv = toElemType(y, elem, argRange(1));
    if (!xv || !yv)
      return GenValue::poison();
    Value values[2] = {xv, yv};
    if (!broadcastTogether(values, expr.range))
      return GenValue::poison();
    bool isMax = name == "maximum";
    if (isFloatElem(elem))
      return GenValue::ofValue(isMax ? Value(arith::MaximumFOp::create(b, l, values[0], values[1]))
                                     : Value(arith::MinimumFOp::create(b, l, values[0], values[1])));
    return GenValue::ofValue(isMax ? Value(arith::MaxSIOp::create(b, l, values[0], values[1]))
                                   : Value(arith::MinSIOp::create(b, l, values[0], values[1])));
  }

  if (name == "exp" || name == "exp2" || name == "log" || name == "log2" || name == "sqrt" ||
      name == "rsqrt" || name == "sigmoid" || name == "abs") {
    if (!bind({"x"}, 1))
      return GenValue::poison();
    GenValue x = arg(0);
    if (x.isPoison())
      return x;
    if (x.isConst()) {
      if (!x.cst.isNumber())
        return error(argRange(0), name + "() needs a number, got " + describe(x));
      double v = x.cst.asDouble();
      if (name == "abs")
        return x.cst.isFloat() ? GenValue::ofConst(ConstValue::ofFloat(std::fabs(v)))
                               : GenValue::ofConst(ConstValue::ofInt(std::llabs(x.cst.intValue)));
      double r = name == "exp"     ? std::exp(v)
                 : name == "exp2"  ? std::exp2(v)
                 : name == "log"   ? std::log(v)
                 : name == "log2"  ? std::log2(v)
                 : name == "sqrt"  ? std::sqrt(v)
                 : name == "rsqrt" ? 1.0 / std::sqrt(v)
                                   : 1.0 / (1.0 + std::exp(-v));
      return GenValue::ofConst(ConstValue::ofFloat(r));
    }
    if (!x.isRuntime() || isPtrElem(elemOf(x.type())))
      return error(argRange(0), name + "() needs a number or a tile of numbers, got " +
                                    describe(x));
    Value v = x.value;
    if (name == "abs") {
      if (isFloatElem(elemOf(v.getType())))
        return GenValue::ofValue(math::AbsFOp::create(b, l, v));
      if (isBoolElem(elemOf(v.getType())))
        return x;
      return GenValue::ofValue(math::AbsIOp::create(b, l, v));
    }
    if (!isFloatElem(elemOf(v.getType())))
      v = castElem(v, b.getF32Type(), argRange(0));
    Value r;
    if (name == "exp") r = math::ExpOp::create(b, l, v);
    else if (name == "exp2") r = math::Exp2Op::create(b, l, v);
    else if (name == "log") r = math::LogOp::create(b, l, v);
    else if (name == "log2") r = math::Log2Op::create(b, l, v);
    else if (name == "sqrt") r = math::SqrtOp::create(b, l, v);
    else if (name == "rsqrt") r = math::RsqrtOp::create(b, l, v);
    else {
      // sigmoid(x) = 1 / (1 + exp(-x))
      Value one = constantOf(ConstValue::ofFloat(1.0), v.getType());
      Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, v));
      r = arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
    }
    return GenValue::ofValue(r);
  }

  if (name == "sum" || name == "max" || name == "min") {
    if (!bind({"x", "axis"}, 1))
      return GenValue::poison();
    GenValue x = arg(0), a = arg(1);
    if (x.isPoison() || a.isPoison())
      return GenValue::poison();
    if (!x.isRuntime() || shapeOf(x.type()).empty() || isPtrElem(elemOf(x.type())))
      return error(argRange(0), name + "() reduces a tile of numbers, got " + describe(x));
    Value v = x.value;
    if (name == "sum" && isIntElem(elemOf(v.getType())) &&
        elemOf(v.getType()).getIntOrFloatBitWidth() < 32)
      v = castElem(v, b.getI32Type(), argRange(0));
    tsl::ReduceKind kind = name == "sum" ? tsl::ReduceKind::Add
                           : name == "max" ? tsl::ReduceKind::Max
                                           : tsl::ReduceKind::Min;
    int64_t rank = int64_t(shapeOf(v.getType()).size());
    llvm::SmallVector<int64_t> axes;
    if (a.isConst() && a.cst.kind == ConstValue::Kind::None) {
      for (int64_t i = rank - 1; i >= 0; --i)
        axes.push_back(i);
    } else {
      auto axis = requireConstInt(a, argRange(1), "the axis of " + name + "()");
      if (!axis)
        return GenValue::poison();
      int64_t ax = *axis < 0 ? *axis + rank : *axis;
      if (ax < 0 || ax >= rank)
        return error(argRange(1), "axis " + std::to_string(*axis) + " is out of range for " +
                                      typeName(v.getType()));
      axes.push_back(ax);
    }
    for (int64_t ax : axes) {
      auto shape = llvm::to_vector(shapeOf(v.getType()));
      shape.erase(shape.begin() + ax);
      Type elem = elemOf(v.getType());
      Type resultType = shape.empty() ? elem : Type(mlir::RankedTensorType::get(shape, elem));
      v = tsl::ReduceOp::create(b, l, resultType, kind, v, uint32_t(ax));
    }
    return GenValue::ofValue(v);
  }

  if (name == "cdiv") {
    if (!bind({"x", "y"}, 2))
      return GenValue::poison();
    GenValue x = arg(0), y = arg(1);
    if (x.isPoison() || y.isPoison())
      return GenValue::poison();
    auto isIntLike = [&](const GenValue &v) {
      return v.isConst() ? (v.cst.isInt() || v.cst.isBool())
                         : v.isRuntime() && isIntElem(elemOf(v.type()));
    };
    if (!isIntLike(x) || !isIntLike(y))
      return error(expr.range, "cdiv() needs integers, got " + describe(x) + " and " + describe(y));
    // (x + y - 1) // y
    GenValue sum = genBinary(ast::OpKind::Add, x, y, expr.range);
    GenValue minus = genBinary(ast::OpKind::Sub, sum, GenValue::ofConst(ConstValue::ofInt(1)),
                               expr.range);
    return genBinary(ast::OpKind::FloorDiv, minus, y, expr.range);
  }

  if (name == "static_assert") {
    if (!bind({"condition", "message"}, 1))
      return GenValue::poison();
    GenValue c = arg(0), m = arg(1);
    if (c.isPoison() || m.isPoison())
      return GenValue::poison();
    auto cond = requireConst(c, argRange(0), "the condition of static_assert()");
    if (!cond)
      return GenValue::poison();
    if (!cond->truthy()) {
      std::string msg = "static assertion failed";
      if (m.isConst() && m.cst.kind == ConstValue::Kind::String)
        msg += ": " + m.cst.text;
      return error(expr.range, msg);
    }
    return GenValue::ofConst(ConstValue::none());
  }

  if (name == "dot") {
    if (!bind({"a", "b", "acc", "input_precision"}, 2))
      return GenValue::poison();
    GenValue x = arg(0), y = arg(1), c = arg(2), p = arg(3);
    if (x.isPoison() || y.isPoison() || c.isPoison() || p.isPoison())
      return GenValue::poison();
    auto isMatrix = [&](const GenValue &v) {
      return v.isRuntime() && shapeOf(v.type()).size() == 2 && isFloatElem(elemOf(v.type()));
    };
    if (!isMatrix(x) || !isMatrix(y))
      return error(expr.range, "dot() multiplies two 2-D float tiles, got " + describe(x) +
                                   " and " + describe(y));
    Type elem = elemOf(x.type());
    if (elem != elemOf(y.type()) || elem.isF64())
      return error(expr.range, "dot() needs a and b of the same dtype (f16, bf16 or f32), got " +
                                   describe(x) + " and " + describe(y));
    auto sa = shapeOf(x.type()), sb = shapeOf(y.type());
    if (sa[1] != sb[0])
      return error(expr.range, "dot() shapes do not match: " + typeName(x.type()) + " times " +
                                   typeName(y.type()));
    if (sa[1] < 16)
      return error(argRange(0), "dot() needs K >= 16, got " + typeName(x.type()));
    auto accType = mlir::RankedTensorType::get({sa[0], sb[1]}, b.getF32Type());
    Value acc;
    if (c.isConst() && c.cst.kind == ConstValue::Kind::None) {
      Value zero = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0.0f));
      acc = tsl::SplatOp::create(b, l, accType, zero);
    } else if (c.isRuntime() && c.type() == Type(accType)) {
      acc = c.value;
    } else {
      return error(argRange(2), "the accumulator of dot() must be a " + typeName(accType) +
                                    " tile, got " + describe(c));
    }
    std::string precision = "tf32";
    if (!(p.isConst() && p.cst.kind == ConstValue::Kind::None)) {
      if (!p.isConst() || p.cst.kind != ConstValue::Kind::String ||
          (p.cst.text != "tf32" && p.cst.text != "ieee"))
        return error(argRange(3), "input_precision must be \"tf32\" or \"ieee\"");
      precision = p.cst.text;
    }
    return GenValue::ofValue(tsl::DotOp::create(b, l, accType, x.value, y.value, acc,
                                                b.getStringAttr(precision)));
  }

  if (name == "trans") {
    if (!bind({"x"}, 1))
      return GenValue::poison();
    GenValue x = arg(0);
    if (x.isPoison())
      return x;
    if (!x.isRuntime() || shapeOf(x.type()).size() != 2 || isPtrElem(elemOf(x.type())) ||
        elemOf(x.type()).getIntOrFloatBitWidth() < 8)
      return error(argRange(0), "trans() transposes a 2-D tile of numbers, got " + describe(x));
    auto shape = shapeOf(x.type());
    auto type = mlir::RankedTensorType::get({shape[1], shape[0]}, elemOf(x.type()));
    return GenValue::ofValue(tsl::TransOp::create(b, l, type, x.value));
  }

  if (name == "range")
    return error(callee.range, "range() is only allowed in 'for x in range(...)'");
  for (const char *planned : {"reshape", "argmax", "argmin", "atomic_add",
                              "device_print", "multiple_of", "max_contiguous"})
    if (name == planned)
      return error(callee.range, "'" + name + "' is not supported yet");
  return error(callee.range, "unknown function '" + name + "'");
}

// Inlines a @func: binds the arguments to a fresh scope and generates its body.
GenValue Generator::callFunc(const ast::Function &fn, const Expr &call) {
  constexpr size_t kMaxInlineDepth = 32;
  // Every call is inlined: a helper that calls itself (or a chain of helpers calling the
  // next) twice grows exponentially, so the total is bounded too, reported once.
  constexpr size_t kMaxInlinedCalls = 10000;
  if (callStack.size() >= kMaxInlineDepth) {
    if (!inlineDepthReported) // once: a recursive helper reaches the bound on every path
      error(call.range, "@func calls nested more than " + std::to_string(kMaxInlineDepth) +
                            " deep (recursive helper '" + fn.name + "'?)");
    inlineDepthReported = true;
    inlinedCalls = std::max(inlinedCalls, kMaxInlinedCalls + 1); // stop inlining anything
    return GenValue::poison();
  }
  if (++inlinedCalls > kMaxInlinedCalls) {
    if (inlinedCalls == kMaxInlinedCalls + 1)
      error(call.range, "more than " + std::to_string(kMaxInlinedCalls) +
                            " @func calls inlined into this kernel (every call is inlined; '" +
                            fn.name + "' multiplies them: a helper calling itself or the next "
                            "helper more than once grows exponentially)");
    return GenValue::poison();
  }
  std::vector<const char *> names;
  size_t required = 0;
  for (const ast::Param &p : fn.params) {
    names.push_back(p.name.c_str());
    if (!p.defaultValue)
      required = names.size();
  }
  std::vector<const Expr *> args;
  if (!bindArgs(*this, call, fn.name, names, required, args))
    return GenValue::poison();
  Scope callee;
  callee.function = &fn;
  callee.callSite = call.range;
  bool ok = true;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ast::Param &p = fn.params[i];
    GenValue v;
    SourceRange r = args[i] ? args[i]->range : p.range;
    if (args[i]) {
      v = genExpr(*args[i]);
    } else {
      // A default evaluated in the helper's own scope of earlier parameters.
      Scope *saved = scope;
      scope = &callee;
      v = genExpr(*p.defaultValue);
      scope = saved;
    }
    if (v.isPoison()) {
      ok = false;
      continue;
    }
    switch (p.kind) {
    case ast::ParamKind::Constexpr:
      if (!v.isConst()) {
        Diagnostic &d = report(r, "argument '" + p.name + "' of '" + fn.name +
                                      "' must be a constexpr, but a runtime value (" +
                                      describe(v) + ") was given");
        DiagnosticEngine::note(d, p.range, "parameter declared constexpr here");
        ok = false;
      }
      break;
    case ast::ParamKind::Scalar:
    case ast::ParamKind::Pointer: {
      std::optional<DType> dt = parseDTypeName(p.typeName);
      if (!dt) {
        auto it = callee.vars.find(p.typeName);
        if (it != callee.vars.end() && it->second.isConst() && it->second.cst.isDType())
          dt = it->second.cst.dtype;
      }
      if (!dt) {
        error(p.typeRange, "'" + p.typeName + "' is not a dtype here");
        ok = false;
        break;
      }
      Type want = dtypeToType(*dt);
      if (p.kind == ast::ParamKind::Pointer) {
        want = mlir::tessel::PtrType::get(&ctx, want);
        if (!v.isRuntime() || elemOf(v.type()) != want) {
          error(r, "argument '" + p.name + "' of '" + fn.name + "' must be " +
                       typeName(want) + ", got " + describe(v));
          ok = false;
        }
        break;
      }
      if (v.isConst() && v.cst.isNumber()) {
        v = GenValue::ofValue(constantScalar(v.cst, want));
      } else if (!v.isRuntime() || v.type() != want) {
        error(r, "argument '" + p.name + "' of '" + fn.name + "' must be a " + typeName(want) +
                     " scalar, got " + describe(v));
        ok = false;
      }
      break;
    }
    case ast::ParamKind::Untyped: break;
    }
    callee.vars[p.name] = v;
    callee.defs[p.name] = p.range;
  }
  if (!ok)
    return GenValue::poison();
  Scope *saved = scope;
  scope = &callee;
  callStack.push_back(&callee);
  genBlock(fn.body);
  callStack.pop_back();
  scope = saved;
  if (callee.returnValue)
    return *callee.returnValue;
  return GenValue::ofConst(ConstValue::none());
}

} // namespace tessel::frontend
