//===- frontend/GenTyping.cpp - type names and the promotion rules ---------===//
//
// The rules (Triton's, see docs/language.md "Typing"):
//   - an int or float constant adapts to the other operand's type;
//   - int with int: the wider; int with float: the float; f16/bf16 with f32: f32;
//     f16 with bf16: f32; anything with f64: f64.
//
//===----------------------------------------------------------------------===//
#include "frontend/Gen.h"

namespace tessel::frontend {

mlir::Type Generator::dtypeToType(DType dtype) {
  switch (dtype) {
  case DType::I1: return b.getI1Type();
  case DType::I8: return b.getI8Type();
  case DType::I16: return b.getI16Type();
  case DType::I32: return b.getI32Type();
  case DType::I64: return b.getI64Type();
  case DType::F16: return b.getF16Type();
  case DType::BF16: return b.getBF16Type();
  case DType::F32: return b.getF32Type();
  case DType::F64: return b.getF64Type();
  }
  return b.getF32Type();
}

std::optional<DType> Generator::typeToDType(mlir::Type elem) {
  if (elem.isInteger(1)) return DType::I1;
  if (elem.isInteger(8)) return DType::I8;
  if (elem.isInteger(16)) return DType::I16;
  if (elem.isInteger(32)) return DType::I32;
  if (elem.isInteger(64)) return DType::I64;
  if (elem.isF16()) return DType::F16;
  if (elem.isBF16()) return DType::BF16;
  if (elem.isF32()) return DType::F32;
  if (elem.isF64()) return DType::F64;
  return std::nullopt;
}

bool Generator::isFloatElem(mlir::Type elem) { return mlir::isa<mlir::FloatType>(elem); }
bool Generator::isIntElem(mlir::Type elem) { return mlir::isa<mlir::IntegerType>(elem); }
bool Generator::isBoolElem(mlir::Type elem) { return elem.isInteger(1); }
bool Generator::isPtrElem(mlir::Type elem) { return mlir::isa<mlir::tessel::PtrType>(elem); }

mlir::Type Generator::elemOf(mlir::Type type) { return mlir::getElementTypeOrSelf(type); }

llvm::ArrayRef<int64_t> Generator::shapeOf(mlir::Type type) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

static std::string elemName(mlir::Type elem) {
  if (auto ptr = mlir::dyn_cast<mlir::tessel::PtrType>(elem))
    return "*" + elemName(ptr.getPointeeType());
  std::string s;
  llvm::raw_string_ostream os(s);
  elem.print(os);
  return s;
}

std::string Generator::shapeName(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s = "tile<";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + ">";
}

std::string Generator::typeName(mlir::Type type) {
  auto shape = shapeOf(type);
  if (shape.empty())
    return elemName(type);
  std::string s = "tile<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + elemName(elemOf(type)) + ">";
}

std::string Generator::describe(const GenValue &v) {
  switch (v.kind) {
  case GenValue::Kind::Poison: return "<error>";
  case GenValue::Kind::Const:
    return std::string("constexpr ") + v.cst.kindName() + " " + v.cst.toString();
  case GenValue::Kind::Runtime: return typeName(v.type());
  case GenValue::Kind::Tuple: return "a tuple of " + std::to_string(v.elems.size());
  case GenValue::Kind::Descriptor: {
    std::string block;
    for (int64_t d : v.block)
      block += (block.empty() ? "" : ", ") + std::to_string(d);
    return "a tensor descriptor of " + typeName(v.elems[0].type()) + " with block [" + block +
           "]";
  }
  }
  return "?";
}

mlir::Type Generator::defaultType(const ConstValue &c) {
  switch (c.kind) {
  case ConstValue::Kind::Bool: return b.getI1Type();
  case ConstValue::Kind::Int:
    return (c.intValue >= INT32_MIN && c.intValue <= INT32_MAX) ? b.getI32Type()
                                                                : b.getI64Type();
  case ConstValue::Kind::Float: return b.getF32Type();
  default: return nullptr;
  }
}

// The promotion of two runtime element types.
static mlir::Type promote(mlir::OpBuilder &b, mlir::Type x, mlir::Type y) {
  if (x == y)
    return x;
  bool fx = mlir::isa<mlir::FloatType>(x), fy = mlir::isa<mlir::FloatType>(y);
  if (fx && fy) {
    if (x.isF64() || y.isF64())
      return b.getF64Type();
    return b.getF32Type();
  }
  if (fx)
    return x;
  if (fy)
    return y;
  if (mlir::isa<mlir::IntegerType>(x) && mlir::isa<mlir::IntegerType>(y))
    return x.getIntOrFloatBitWidth() >= y.getIntOrFloatBitWidth() ? x : y;
  return nullptr;
}

// The type a constant takes next to a runtime operand of element type `other`.
static mlir::Type adaptConst(mlir::OpBuilder &b, const ConstValue &c, mlir::Type other) {
  bool otherFloat = mlir::isa<mlir::FloatType>(other);
  if (c.isFloat())
    return otherFloat ? other : b.getF32Type();
  if (c.isBool())
    return other;
  if (c.isInt()) {
    if (otherFloat)
      return other;
    if (other.isInteger(1))
      return b.getI32Type();
    // A constant that does not fit the other operand's width widens it.
    unsigned width = other.getIntOrFloatBitWidth();
    int64_t lo = width >= 64 ? INT64_MIN : -(int64_t(1) << (width - 1));
    int64_t hi = width >= 64 ? INT64_MAX : (int64_t(1) << (width - 1)) - 1;
    if (c.intValue < lo || c.intValue > hi)
      return (c.intValue >= INT32_MIN && c.intValue <= INT32_MAX && width < 32) ? b.getI32Type()
                                                                               : b.getI64Type();
    return other;
  }
  return nullptr;
}

mlir::Type Generator::commonElemType(const GenValue &a, const GenValue &c) {
  if (a.isRuntime() && c.isRuntime()) {
    mlir::Type x = elemOf(a.type()), y = elemOf(c.type());
    if (isPtrElem(x) || isPtrElem(y))
      return nullptr;
    return promote(b, x, y);
  }
  if (a.isRuntime() && c.isConst()) {
    mlir::Type x = elemOf(a.type());
    if (isPtrElem(x))
      return nullptr;
    mlir::Type y = adaptConst(b, c.cst, x);
    return y ? promote(b, x, y) : nullptr;
  }
  if (a.isConst() && c.isRuntime())
    return commonElemType(c, a);
  if (a.isConst() && c.isConst()) {
    mlir::Type x = defaultType(a.cst), y = defaultType(c.cst);
    return x && y ? promote(b, x, y) : nullptr;
  }
  return nullptr;
}

std::optional<llvm::SmallVector<int64_t>>
Generator::broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> c) {
  size_t rank = std::max(a.size(), c.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - c.size() ? 1 : c[i - (rank - c.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    result[i] = x == 1 ? y : x;
  }
  return result;
}

} // namespace tessel::frontend
