//===- frontend/GenBuiltins.cpp - the built-in functions, one handler each ===//
//
// kBuiltins maps each built-in's name to its handler (several names may share one:
// maximum/minimum, the math functions, the reductions). A handler binds the call's
// arguments to the built-in's parameters, checks them, and builds the ops at the call.
//
//===----------------------------------------------------------------------===//
#include "frontend/Gen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

namespace tessel::frontend {

using ast::Expr;
using mlir::Type;
using mlir::Value;

namespace {

namespace arith = mlir::arith;
namespace math = mlir::math;
namespace tsl = mlir::tessel;

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

struct Builtin {
  const char *name;
  Generator::BuiltinHandler handler;
};

const Builtin kBuiltins[] = {
    {"program_id", &Generator::genProgramId}, {"num_programs", &Generator::genProgramId},
    {"arange", &Generator::genArange},        {"zeros", &Generator::genFull},
    {"full", &Generator::genFull},            {"load", &Generator::genLoad},
    {"store", &Generator::genStore},          {"where", &Generator::genWhere},
    {"maximum", &Generator::genMinMax},       {"minimum", &Generator::genMinMax},
    {"exp", &Generator::genMath},             {"exp2", &Generator::genMath},
    {"log", &Generator::genMath},             {"log2", &Generator::genMath},
    {"sqrt", &Generator::genMath},            {"rsqrt", &Generator::genMath},
    {"sigmoid", &Generator::genMath},         {"abs", &Generator::genMath},
    {"tanh", &Generator::genMath},
    {"sum", &Generator::genReduce},           {"max", &Generator::genReduce},
    {"min", &Generator::genReduce},           {"cdiv", &Generator::genCdiv},
    {"static_assert", &Generator::genStaticAssert},
    {"dot", &Generator::genDot},              {"trans", &Generator::genTrans},
    {"range", &Generator::genRangeOutsideFor}, {"atomic_add", &Generator::genStore},
    {"make_tensor_descriptor", &Generator::genMakeTensorDescriptor},
};

} // namespace

Generator::BuiltinHandler Generator::findBuiltin(const std::string &name) {
  for (const Builtin &builtin : kBuiltins)
    if (name == builtin.name)
      return builtin.handler;
  return nullptr;
}

// load/store: the pointer operand, and an optional boolean mask (absent: no mask).
bool Generator::checkPointerOperand(BuiltinCall &call, const GenValue &ptr) {
  if (ptr.isRuntime() && isPtrElem(elemOf(ptr.type())))
    return true;
  error(call.argRange(0), call.name + "() needs a pointer or a tile of pointers, got " +
                              describe(ptr));
  return false;
}

bool Generator::maskOperand(BuiltinCall &call, const GenValue &mask, size_t index, Value &out) {
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
  error(call.argRange(index), "the mask of " + call.name +
                                  "() must be a boolean (i1) tile or scalar, got " + describe(mask));
  return false;
}

GenValue Generator::genProgramId(BuiltinCall &call) {
  if (!call.bind({"axis"}, 0))
    return GenValue::poison();
  GenValue a = call.args[0] ? call.arg(0) : GenValue::ofConst(ConstValue::ofInt(0));
  if (a.isPoison())
    return a;
  auto axis = requireConstInt(a, call.argRange(0), "the axis of " + call.name + "()");
  if (!axis)
    return GenValue::poison();
  if (*axis < 0 || *axis > 2)
    return error(call.argRange(0), "the axis of " + call.name + "() must be 0, 1 or 2, got " +
                                  std::to_string(*axis));
  if (call.name == "program_id")
    return GenValue::ofValue(tsl::ProgramIdOp::create(b, call.loc, b.getI32Type(), uint32_t(*axis)));
  return GenValue::ofValue(tsl::NumProgramsOp::create(b, call.loc, b.getI32Type(), uint32_t(*axis)));
}

GenValue Generator::genArange(BuiltinCall &call) {
  if (!call.bind({"start", "end"}, 1))
    return GenValue::poison();
  GenValue s = call.arg(0);
  GenValue e = call.args[1] ? call.arg(1) : GenValue::poison();
  if (s.isPoison() || (call.args[1] && e.isPoison()))
    return GenValue::poison();
  auto start = requireConstInt(s, call.argRange(0), "the start of arange()");
  if (!start)
    return GenValue::poison();
  int64_t begin = 0, end = *start;
  if (call.args[1]) {
    auto stop = requireConstInt(e, call.argRange(1), "the end of arange()");
    if (!stop)
      return GenValue::poison();
    begin = *start;
    end = *stop;
  }
  if (begin < 0 || end > INT32_MAX || end <= begin)
    return error(call.expr.range, "arange(" + std::to_string(begin) + ", " + std::to_string(end) +
                                 ") needs 0 <= start < end < 2^31");
  if (!isPowerOfTwo(end - begin))
    return error(call.expr.range, "arange() length " + std::to_string(end - begin) +
                                 " is not a power of two (tile sizes must be powers of two)");
  return GenValue::ofValue(tsl::MakeRangeOp::create(
      b, call.loc, mlir::RankedTensorType::get({end - begin}, b.getI32Type()), uint32_t(begin),
      uint32_t(end)));
}

GenValue Generator::genFull(BuiltinCall &call) {
  bool isFull = call.name == "full";
  if (isFull ? !call.bind({"shape", "value", "dtype"}, 3) : !call.bind({"shape", "dtype"}, 2))
    return GenValue::poison();
  GenValue shapeV = call.arg(0);
  GenValue value = isFull ? call.arg(1) : GenValue::ofConst(ConstValue::ofInt(0));
  GenValue dtypeV = call.arg(isFull ? 2 : 1);
  if (shapeV.isPoison() || value.isPoison() || dtypeV.isPoison())
    return GenValue::poison();
  llvm::SmallVector<int64_t> shape;
  std::vector<GenValue> dims = shapeV.isTuple() ? shapeV.elems : std::vector<GenValue>{shapeV};
  for (const GenValue &d : dims) {
    if (d.isPoison())
      return d;
    auto n = requireConstInt(d, call.argRange(0), "a tile dimension");
    if (!n)
      return GenValue::poison();
    if (!isPowerOfTwo(*n) || *n > (int64_t(1) << 24))
      return error(call.argRange(0), "tile dimension " + std::to_string(*n) +
                                    " is not a power of two (tile sizes must be powers of two)");
    shape.push_back(*n);
  }
  if (shape.empty())
    return error(call.argRange(0), "the shape of " + call.name + "() must have at least one dimension");
  int64_t elements = 1;
  for (int64_t d : shape)
    elements = std::min<int64_t>(elements * d, kMaxTileElements + 1);
  if (elements > kMaxTileElements)
    return error(call.argRange(0), "tile too large: " + shapeName(shape) + " has more than " +
                                  std::to_string(kMaxTileElements) + " elements");
  if (!dtypeV.isConst() || !dtypeV.cst.isDType())
    return error(call.argRange(isFull ? 2 : 1), call.name + "() needs a dtype (like f32), got " +
                                               describe(dtypeV));
  Type elem = dtypeToType(dtypeV.cst.dtype);
  if (value.isRuntime() && !shapeOf(value.type()).empty())
    return error(call.argRange(1), "the value of full() must be a scalar, got " +
                                  typeName(value.type()));
  Value scalar = toElemType(value, elem, call.argRange(1));
  if (!scalar)
    return GenValue::poison();
  return GenValue::ofValue(
      tsl::SplatOp::create(b, call.loc, mlir::RankedTensorType::get(shape, elem), scalar));
}

GenValue Generator::genLoad(BuiltinCall &call) {
  if (!call.bind({"ptr", "mask", "other", "shared"}, 1))
    return GenValue::poison();
  GenValue ptr = call.arg(0), mask = call.arg(1), other = call.arg(2), shared = call.arg(3);
  if (ptr.isPoison() || mask.isPoison() || other.isPoison() || shared.isPoison())
    return GenValue::poison();
  return loadFrom(call, ptr, mask, other, shared);
}

GenValue Generator::loadFrom(BuiltinCall &call, const GenValue &ptr, const GenValue &mask,
                             const GenValue &other, const GenValue &shared) {
  // shared=True: a hint that the tile may stay in shared memory for the dots that read
  // it (-tessel-invariant-operands-to-shared); a constant, so configurations can set it.
  bool keepShared = false;
  if (!(shared.isConst() && shared.cst.kind == ConstValue::Kind::None)) {
    if (!shared.isConst() || !shared.cst.isBool())
      return error(call.argRange(3), "the 'shared' hint of load() must be True or False (a "
                                     "constant), got " + describe(shared));
    keepShared = shared.cst.intValue != 0;
  }
  Value m, o;
  if (!checkPointerOperand(call, ptr) || !maskOperand(call, mask, 1, m))
    return GenValue::poison();
  Value p = ptr.value;
  Type pointee = mlir::cast<tsl::PtrType>(elemOf(p.getType())).getPointeeType();
  if (m && !(other.isConst() && other.cst.kind == ConstValue::Kind::None)) {
    if (other.isRuntime() && isPtrElem(elemOf(other.type())))
      return error(call.argRange(2), "the 'other' value of load() must be a number, got " +
                                    describe(other));
    o = toElemType(other, pointee, call.argRange(2));
    if (!o)
      return GenValue::poison();
  }
  Value values[3] = {p, m, o};
  if (!broadcastTogether(values, call.expr.range))
    return GenValue::poison();
  auto load = tsl::LoadOp::create(b, call.loc, values[0], values[1], values[2]);
  if (keepShared)
    load->setAttr(tsl::LoadOp::getSharedHintName(), b.getUnitAttr());
  return GenValue::ofValue(load);
}

GenValue Generator::genStore(BuiltinCall &call) {
  if (!call.bind({"ptr", "value", "mask"}, 2))
    return GenValue::poison();
  GenValue ptr = call.arg(0), value = call.arg(1), mask = call.arg(2);
  if (ptr.isPoison() || value.isPoison() || mask.isPoison())
    return GenValue::poison();
  return storeTo(call, ptr, value, mask);
}

GenValue Generator::storeTo(BuiltinCall &call, const GenValue &ptr, const GenValue &value,
                            const GenValue &mask) {
  if (!checkPointerOperand(call, ptr))
    return GenValue::poison();
  Value p = ptr.value;
  Type pointee = mlir::cast<tsl::PtrType>(elemOf(p.getType())).getPointeeType();
  if (value.isRuntime() && isPtrElem(elemOf(value.type())))
    return error(call.argRange(1), "cannot store pointers, got " + describe(value));
  // atomic_add: store's operands, combined into memory instead of written over it.
  bool atomic = call.name == "atomic_add";
  if (atomic && !pointee.isF32() && !pointee.isInteger(32))
    return error(call.argRange(0),
                 "atomic_add() adds into f32 or i32 memory, got " + describe(ptr));
  Value v = toElemType(value, pointee, call.argRange(1));
  if (!v)
    return GenValue::poison();
  Value m;
  if (!maskOperand(call, mask, 2, m))
    return GenValue::poison();
  Value values[3] = {p, v, m};
  if (!broadcastTogether(values, call.expr.range))
    return GenValue::poison();
  if (atomic)
    tsl::AtomicRMWOp::create(b, call.loc, b.getStringAttr("add"), values[0], values[1], values[2]);
  else
    tsl::StoreOp::create(b, call.loc, values[0], values[1], values[2]);
  return GenValue::ofConst(ConstValue::none());
}

GenValue Generator::genWhere(BuiltinCall &call) {
  if (!call.bind({"condition", "x", "y"}, 3))
    return GenValue::poison();
  GenValue c = call.arg(0), x = call.arg(1), y = call.arg(2);
  if (c.isPoison() || x.isPoison() || y.isPoison())
    return GenValue::poison();
  Value cond;
  if (c.isConst() && c.cst.isBool())
    cond = constantScalar(c.cst, b.getI1Type());
  else if (c.isRuntime() && isBoolElem(elemOf(c.type())))
    cond = c.value;
  else
    return error(call.argRange(0), "the condition of where() must be a boolean (i1) tile, got " +
                                  describe(c));
  Type elem = commonElemType(x, y);
  if (x.isRuntime() && y.isRuntime() && isPtrElem(elemOf(x.type())) && elemOf(x.type()) == elemOf(y.type()))
    elem = elemOf(x.type());
  if (!elem)
    return error(call.expr.range, "where() has incompatible values: " + describe(x) + " and " +
                                 describe(y));
  Value xv = toElemType(x, elem, call.argRange(1)), yv = toElemType(y, elem, call.argRange(2));
  if (!xv || !yv)
    return GenValue::poison();
  Value values[3] = {cond, xv, yv};
  if (!broadcastTogether(values, call.expr.range))
    return GenValue::poison();
  return GenValue::ofValue(arith::SelectOp::create(b, call.loc, values[0], values[1], values[2]));
}

GenValue Generator::genMinMax(BuiltinCall &call) {
  if (!call.bind({"x", "y"}, 2))
    return GenValue::poison();
  GenValue x = call.arg(0), y = call.arg(1);
  if (x.isPoison() || y.isPoison())
    return GenValue::poison();
  if (x.isConst() && y.isConst()) {
    if (!x.cst.isNumber() || !y.cst.isNumber())
      return error(call.expr.range, call.name + "() needs numbers");
    // As arith.maximumf/minimumf at run time: a NaN operand gives NaN, whichever side.
    if (x.cst.isFloat() && std::isnan(x.cst.floatValue))
      return x;
    if (y.cst.isFloat() && std::isnan(y.cst.floatValue))
      return y;
    // Integers compare as integers: doubles would tie 2^53 and 2^53 + 1.
    bool xNotLess = x.cst.isFloat() || y.cst.isFloat() ? x.cst.asDouble() >= y.cst.asDouble()
                                                       : x.cst.intValue >= y.cst.intValue;
    bool takeX = (call.name == "maximum") == xNotLess;
    return takeX ? x : y;
  }
  Type elem = commonElemType(x, y);
  if (!elem)
    return error(call.expr.range, call.name + "() has incompatible operands: " + describe(x) + " and " +
                                 describe(y));
  Value xv = toElemType(x, elem, call.argRange(0)), yv = toElemType(y, elem, call.argRange(1));
  if (!xv || !yv)
    return GenValue::poison();
  Value values[2] = {xv, yv};
  if (!broadcastTogether(values, call.expr.range))
    return GenValue::poison();
  bool isMax = call.name == "maximum";
  if (isFloatElem(elem))
    return GenValue::ofValue(isMax ? Value(arith::MaximumFOp::create(b, call.loc, values[0], values[1]))
                                   : Value(arith::MinimumFOp::create(b, call.loc, values[0], values[1])));
  return GenValue::ofValue(isMax ? Value(arith::MaxSIOp::create(b, call.loc, values[0], values[1]))
                                 : Value(arith::MinSIOp::create(b, call.loc, values[0], values[1])));
}

GenValue Generator::genMath(BuiltinCall &call) {
  if (!call.bind({"x"}, 1))
    return GenValue::poison();
  GenValue x = call.arg(0);
  if (x.isPoison())
    return x;
  if (x.isConst()) {
    if (!x.cst.isNumber())
      return error(call.argRange(0), call.name + "() needs a number, got " + describe(x));
    double v = x.cst.asDouble();
    if (call.name == "abs")
      return x.cst.isFloat() ? GenValue::ofConst(ConstValue::ofFloat(std::fabs(v)))
                             : GenValue::ofConst(ConstValue::ofInt(std::llabs(x.cst.intValue)));
    double r = call.name == "exp"     ? std::exp(v)
               : call.name == "exp2"  ? std::exp2(v)
               : call.name == "log"   ? std::log(v)
               : call.name == "log2"  ? std::log2(v)
               : call.name == "sqrt"  ? std::sqrt(v)
               : call.name == "rsqrt" ? 1.0 / std::sqrt(v)
               : call.name == "tanh"  ? std::tanh(v)
                                 : 1.0 / (1.0 + std::exp(-v));
    return GenValue::ofConst(ConstValue::ofFloat(r));
  }
  if (!x.isRuntime() || isPtrElem(elemOf(x.type())))
    return error(call.argRange(0), call.name + "() needs a number or a tile of numbers, got " +
                                  describe(x));
  Value v = x.value;
  if (call.name == "abs") {
    if (isFloatElem(elemOf(v.getType())))
      return GenValue::ofValue(math::AbsFOp::create(b, call.loc, v));
    if (isBoolElem(elemOf(v.getType())))
      return x;
    return GenValue::ofValue(math::AbsIOp::create(b, call.loc, v));
  }
  if (!isFloatElem(elemOf(v.getType())))
    v = castElem(v, b.getF32Type(), call.argRange(0));
  Value r;
  if (call.name == "exp") r = math::ExpOp::create(b, call.loc, v);
  else if (call.name == "exp2") r = math::Exp2Op::create(b, call.loc, v);
  else if (call.name == "log") r = math::LogOp::create(b, call.loc, v);
  else if (call.name == "log2") r = math::Log2Op::create(b, call.loc, v);
  else if (call.name == "sqrt") r = math::SqrtOp::create(b, call.loc, v);
  else if (call.name == "rsqrt") r = math::RsqrtOp::create(b, call.loc, v);
  else if (call.name == "tanh") r = math::TanhOp::create(b, call.loc, v);
  else {
    // sigmoid(x) = 1 / (1 + exp(-x))
    Value one = constantOf(ConstValue::ofFloat(1.0), v.getType());
    Value e = math::ExpOp::create(b, call.loc, arith::NegFOp::create(b, call.loc, v));
    r = arith::DivFOp::create(b, call.loc, one, arith::AddFOp::create(b, call.loc, one, e));
  }
  return GenValue::ofValue(r);
}

GenValue Generator::genReduce(BuiltinCall &call) {
  if (!call.bind({"x", "axis"}, 1))
    return GenValue::poison();
  GenValue x = call.arg(0), a = call.arg(1);
  if (x.isPoison() || a.isPoison())
    return GenValue::poison();
  if (!x.isRuntime() || shapeOf(x.type()).empty() || isPtrElem(elemOf(x.type())))
    return error(call.argRange(0), call.name + "() reduces a tile of numbers, got " + describe(x));
  Value v = x.value;
  if (call.name == "sum" && isIntElem(elemOf(v.getType())) &&
      elemOf(v.getType()).getIntOrFloatBitWidth() < 32)
    v = castElem(v, b.getI32Type(), call.argRange(0));
  tsl::ReduceKind kind = call.name == "sum" ? tsl::ReduceKind::Add
                         : call.name == "max" ? tsl::ReduceKind::Max
                                         : tsl::ReduceKind::Min;
  int64_t rank = int64_t(shapeOf(v.getType()).size());
  llvm::SmallVector<int64_t> axes;
  if (a.isConst() && a.cst.kind == ConstValue::Kind::None) {
    for (int64_t i = rank - 1; i >= 0; --i)
      axes.push_back(i);
  } else {
    auto axis = requireConstInt(a, call.argRange(1), "the axis of " + call.name + "()");
    if (!axis)
      return GenValue::poison();
    int64_t ax = *axis < 0 ? *axis + rank : *axis;
    if (ax < 0 || ax >= rank)
      return error(call.argRange(1), "axis " + std::to_string(*axis) + " is out of range for " +
                                    typeName(v.getType()));
    axes.push_back(ax);
  }
  for (int64_t ax : axes) {
    auto shape = llvm::to_vector(shapeOf(v.getType()));
    shape.erase(shape.begin() + ax);
    Type elem = elemOf(v.getType());
    Type resultType = shape.empty() ? elem : Type(mlir::RankedTensorType::get(shape, elem));
    v = tsl::ReduceOp::create(b, call.loc, resultType, kind, v, uint32_t(ax));
  }
  return GenValue::ofValue(v);
}

GenValue Generator::genCdiv(BuiltinCall &call) {
  if (!call.bind({"x", "y"}, 2))
    return GenValue::poison();
  GenValue x = call.arg(0), y = call.arg(1);
  if (x.isPoison() || y.isPoison())
    return GenValue::poison();
  auto isIntLike = [&](const GenValue &v) {
    return v.isConst() ? (v.cst.isInt() || v.cst.isBool())
                       : v.isRuntime() && isIntElem(elemOf(v.type()));
  };
  if (!isIntLike(x) || !isIntLike(y))
    return error(call.expr.range, "cdiv() needs integers, got " + describe(x) + " and " + describe(y));
  // (x + y - 1) // y
  GenValue sum = genBinary(ast::OpKind::Add, x, y, call.expr.range);
  GenValue minus = genBinary(ast::OpKind::Sub, sum, GenValue::ofConst(ConstValue::ofInt(1)),
                             call.expr.range);
  return genBinary(ast::OpKind::FloorDiv, minus, y, call.expr.range);
}

GenValue Generator::genStaticAssert(BuiltinCall &call) {
  if (!call.bind({"condition", "message"}, 1))
    return GenValue::poison();
  GenValue c = call.arg(0), m = call.arg(1);
  if (c.isPoison() || m.isPoison())
    return GenValue::poison();
  auto cond = requireConst(c, call.argRange(0), "the condition of static_assert()");
  if (!cond)
    return GenValue::poison();
  if (!cond->truthy()) {
    std::string msg = "static assertion failed";
    if (m.isConst() && m.cst.kind == ConstValue::Kind::String)
      msg += ": " + m.cst.text;
    return error(call.expr.range, msg);
  }
  return GenValue::ofConst(ConstValue::none());
}

GenValue Generator::genDot(BuiltinCall &call) {
  if (!call.bind({"a", "b", "acc", "input_precision"}, 2))
    return GenValue::poison();
  GenValue x = call.arg(0), y = call.arg(1), c = call.arg(2), p = call.arg(3);
  if (x.isPoison() || y.isPoison() || c.isPoison() || p.isPoison())
    return GenValue::poison();
  auto isMatrix = [&](const GenValue &v) {
    return v.isRuntime() && shapeOf(v.type()).size() == 2 && isFloatElem(elemOf(v.type()));
  };
  if (!isMatrix(x) || !isMatrix(y))
    return error(call.expr.range, "dot() multiplies two 2-D float tiles, got " + describe(x) +
                                 " and " + describe(y));
  Type elem = elemOf(x.type());
  if (elem != elemOf(y.type()) || elem.isF64())
    return error(call.expr.range, "dot() needs a and b of the same dtype (f16, bf16 or f32), got " +
                                 describe(x) + " and " + describe(y));
  auto sa = shapeOf(x.type()), sb = shapeOf(y.type());
  if (sa[1] != sb[0])
    return error(call.expr.range, "dot() shapes do not match: " + typeName(x.type()) + " times " +
                                 typeName(y.type()));
  if (sa[1] < 16)
    return error(call.argRange(0), "dot() needs K >= 16, got " + typeName(x.type()));
  auto accType = mlir::RankedTensorType::get({sa[0], sb[1]}, b.getF32Type());
  Value acc;
  if (c.isConst() && c.cst.kind == ConstValue::Kind::None) {
    Value zero = arith::ConstantOp::create(b, call.loc, b.getF32FloatAttr(0.0f));
    acc = tsl::SplatOp::create(b, call.loc, accType, zero);
  } else if (c.isRuntime() && c.type() == Type(accType)) {
    acc = c.value;
  } else {
    return error(call.argRange(2), "the accumulator of dot() must be a " + typeName(accType) +
                                  " tile, got " + describe(c));
  }
  std::string precision = "tf32";
  if (!(p.isConst() && p.cst.kind == ConstValue::Kind::None)) {
    if (!p.isConst() || p.cst.kind != ConstValue::Kind::String ||
        (p.cst.text != "tf32" && p.cst.text != "ieee"))
      return error(call.argRange(3), "input_precision must be \"tf32\" or \"ieee\"");
    precision = p.cst.text;
  }
  return GenValue::ofValue(tsl::DotOp::create(b, call.loc, accType, x.value, y.value, acc,
                                              b.getStringAttr(precision)));
}

GenValue Generator::genTrans(BuiltinCall &call) {
  if (!call.bind({"x"}, 1))
    return GenValue::poison();
  GenValue x = call.arg(0);
  if (x.isPoison())
    return x;
  if (!x.isRuntime() || shapeOf(x.type()).size() != 2 || isPtrElem(elemOf(x.type())) ||
      elemOf(x.type()).getIntOrFloatBitWidth() < 8)
    return error(call.argRange(0), "trans() transposes a 2-D tile of numbers, got " + describe(x));
  auto shape = shapeOf(x.type());
  auto type = mlir::RankedTensorType::get({shape[1], shape[0]}, elemOf(x.type()));
  return GenValue::ofValue(tsl::TransOp::create(b, call.loc, type, x.value));
}

GenValue Generator::genRangeOutsideFor(BuiltinCall &call) {
  return error(call.expr.args[0]->range, "range() is only allowed in 'for x in range(...)'");
}

} // namespace tessel::frontend
