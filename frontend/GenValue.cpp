//===- frontend/GenValue.cpp - constants, casts and broadcasting -----------===//
#include "frontend/Gen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <charconv>
#include <cmath>

#include "llvm/ADT/APFloat.h"

namespace tessel::frontend {

using mlir::Type;
using mlir::Value;

bool GenValue::sameAs(const GenValue &other) const {
  if (kind != other.kind)
    return false;
  switch (kind) {
  case Kind::Poison: return true;
  case Kind::Const: return cst == other.cst;
  case Kind::Runtime: return value == other.value;
  case Kind::Descriptor:
    if (block != other.block)
      return false;
    [[fallthrough]];
  case Kind::Tuple:
    if (elems.size() != other.elems.size())
      return false;
    for (size_t i = 0; i < elems.size(); ++i)
      if (!elems[i].sameAs(other.elems[i]))
        return false;
    return true;
  }
  return false;
}

std::string Generator::literalConversionLoss(const ConstValue &c, Type elem) {
  if (!c.isNumber() || c.isBool())
    return "";
  if (auto ft = mlir::dyn_cast<mlir::FloatType>(elem)) {
    double v = c.asDouble();
    bool exact = true;
    llvm::APFloat f(v);
    f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &exact);
    if (std::isfinite(v) && !f.isFinite())
      return "overflows " + typeName(elem);
    return "";
  }
  unsigned bits = elem.getIntOrFloatBitWidth();
  if (elem.isInteger(1)) {
    double v = c.asDouble();
    return v == 0 || v == 1 ? "" : "is not 0 or 1, the values of an i1";
  }
  if (c.isFloat()) {
    double f = c.floatValue;
    if (!std::isfinite(f) || f != std::trunc(f))
      return "is not an integer";
  }
  // Integers: anything that fits the width, signed or unsigned (0xFFFFFFFF is a valid i32).
  double v = c.asDouble();
  double lo = -std::ldexp(1.0, int(bits) - 1), hi = std::ldexp(1.0, int(bits)) - 1;
  if (bits < 64 && (v < lo || v > hi))
    return "does not fit in " + std::to_string(bits) + " bits";
  return "";
}

/// A literal as its shortest round-trip text ("2.7", not "2.7000000000000002").
static std::string literalText(const ConstValue &c) {
  if (!c.isFloat() || !std::isfinite(c.floatValue))
    return c.toString();
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, c.floatValue);
  return ec == std::errc() ? std::string(buffer, end) : c.toString();
}

Value Generator::constantScalar(const ConstValue &c, Type elem, bool explicitCast) {
  if (std::string why = explicitCast ? "" : literalConversionLoss(c, elem); !why.empty())
    error(curRange_, "the literal " + literalText(c) + " " + why + ": it would change value as " +
                         typeName(elem) + " (convert it explicitly, or use a literal of that type)");
  mlir::TypedAttr attr;
  if (auto ft = mlir::dyn_cast<mlir::FloatType>(elem)) {
    attr = b.getFloatAttr(ft, c.asDouble());
  } else if (elem.isInteger(1)) {
    attr = b.getIntegerAttr(elem, c.truthy() ? 1 : 0);
  } else {
    int64_t v = c.intValue;
    if (c.isFloat()) {
      // Saturating, as a float-to-int conversion must not be undefined here.
      double f = c.floatValue;
      v = std::isnan(f) ? 0 : f >= 9.2e18 ? INT64_MAX : f <= -9.2e18 ? INT64_MIN : int64_t(f);
    }
    attr = b.getIntegerAttr(elem, llvm::APInt(elem.getIntOrFloatBitWidth(), uint64_t(v),
                                              /*isSigned=*/true, /*implicitTrunc=*/true));
  }
  return mlir::arith::ConstantOp::create(b, curLoc(), attr);
}

Value Generator::constantOf(const ConstValue &c, Type type) {
  Value scalar = constantScalar(c, elemOf(type));
  if (!mlir::isa<mlir::RankedTensorType>(type))
    return scalar;
  return mlir::tessel::SplatOp::create(b, curLoc(), type, scalar);
}

Value Generator::materialize(const GenValue &v, SourceRange range) {
  if (v.isRuntime())
    return v.value;
  if (v.isConst()) {
    Type t = defaultType(v.cst);
    if (!t) {
      error(range, "a " + std::string(v.cst.kindName()) + " (" + v.cst.toString() +
                       ") cannot be used as a runtime value");
      return nullptr;
    }
    return constantScalar(v.cst, t);
  }
  if (v.isAggregate())
    error(range, std::string(aggregateName(v)) + " cannot be used as a value here");
  return nullptr;
}

Value Generator::castElem(Value v, Type elem, SourceRange range) {
  Type src = elemOf(v.getType());
  if (src == elem)
    return v;
  Type dst = mlir::tessel::withElementType(v.getType(), elem);
  mlir::Location l = curLoc();
  if (isPtrElem(src) || isPtrElem(elem)) {
    error(range, "cannot convert " + typeName(v.getType()) + " to " + typeName(dst));
    return nullptr;
  }
  bool srcFloat = isFloatElem(src), dstFloat = isFloatElem(elem);
  if (!srcFloat && !dstFloat) {
    if (elem.isInteger(1)) {
      Value zero = constantOf(ConstValue::ofInt(0), v.getType());
      return mlir::arith::CmpIOp::create(b, l, mlir::arith::CmpIPredicate::ne, v, zero);
    }
    unsigned sw = src.getIntOrFloatBitWidth(), dw = elem.getIntOrFloatBitWidth();
    if (dw < sw)
      return mlir::arith::TruncIOp::create(b, l, dst, v);
    if (sw == 1)
      return mlir::arith::ExtUIOp::create(b, l, dst, v);
    return mlir::arith::ExtSIOp::create(b, l, dst, v);
  }
  if (!srcFloat && dstFloat) {
    if (src.isInteger(1))
      return mlir::arith::UIToFPOp::create(b, l, dst, v);
    return mlir::arith::SIToFPOp::create(b, l, dst, v);
  }
  if (srcFloat && !dstFloat) {
    if (elem.isInteger(1)) {
      Value zero = constantOf(ConstValue::ofFloat(0), v.getType());
      return mlir::arith::CmpFOp::create(b, l, mlir::arith::CmpFPredicate::UNE, v, zero);
    }
    return mlir::arith::FPToSIOp::create(b, l, dst, v);
  }
  unsigned sw = src.getIntOrFloatBitWidth(), dw = elem.getIntOrFloatBitWidth();
  if (sw == dw) {
    // f16 <-> bf16 goes through f32.
    Value wide = mlir::arith::ExtFOp::create(
        b, l, mlir::tessel::withElementType(v.getType(), b.getF32Type()), v);
    return mlir::arith::TruncFOp::create(b, l, dst, wide);
  }
  if (dw > sw)
    return mlir::arith::ExtFOp::create(b, l, dst, v);
  return mlir::arith::TruncFOp::create(b, l, dst, v);
}

Value Generator::toElemType(const GenValue &v, Type elem, SourceRange range) {
  if (v.isConst()) {
    if (!v.cst.isNumber()) {
      error(range, "expected a number, got " + describe(v));
      return nullptr;
    }
    if (isPtrElem(elem)) {
      error(range, "cannot convert " + describe(v) + " to a pointer");
      return nullptr;
    }
    LocGuard at(*this, range); // a literal that changes value is reported where it is
    return constantScalar(v.cst, elem);
  }
  if (v.isRuntime())
    return castElem(v.value, elem, range);
  if (v.isAggregate())
    error(range, std::string(aggregateName(v)) + " cannot be used as a value here");
  return nullptr;
}

Value Generator::broadcastTo(Value v, llvm::ArrayRef<int64_t> shape) {
  Type type = v.getType();
  auto srcShape = shapeOf(type);
  if (srcShape == shape)
    return v;
  Type elem = elemOf(type);
  mlir::Location l = curLoc();
  if (srcShape.empty())
    return mlir::tessel::SplatOp::create(b, l, mlir::RankedTensorType::get(shape, elem), v);
  llvm::SmallVector<int64_t> cur(srcShape.begin(), srcShape.end());
  while (cur.size() < shape.size()) {
    cur.insert(cur.begin(), 1);
    v = mlir::tessel::ExpandDimsOp::create(b, l, mlir::RankedTensorType::get(cur, elem), v,
                                           uint32_t(0));
  }
  if (llvm::ArrayRef<int64_t>(cur) != shape)
    v = mlir::tessel::BroadcastOp::create(b, l, mlir::RankedTensorType::get(shape, elem), v);
  return v;
}

bool Generator::broadcastTogether(llvm::MutableArrayRef<Value> values, SourceRange range) {
  llvm::SmallVector<int64_t> shape;
  bool first = true;
  for (Value v : values) {
    if (!v)
      continue;
    auto s = shapeOf(v.getType());
    if (first) {
      shape.assign(s.begin(), s.end());
      first = false;
      continue;
    }
    auto joined = broadcastShapes(shape, s);
    if (!joined) {
      error(range, "shape mismatch: " + shapeName(shape) + " vs " + shapeName(s));
      return false;
    }
    shape = *joined;
  }
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  if (elements > kMaxTileElements) {
    error(range, "tile too large: " + shapeName(shape) + " has more than " +
                     std::to_string(kMaxTileElements) + " elements");
    return false;
  }
  for (Value &v : values)
    if (v)
      v = broadcastTo(v, shape);
  return true;
}

} // namespace tessel::frontend
