//===- TesselDialect.cpp - dialect registration and type helpers ----------===//
#include "dialect/TesselDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel;

#include "dialect/TesselDialect.cpp.inc"
#include "dialect/TesselEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/TesselTypes.cpp.inc"

namespace {
/// Prints layouts as `#blocked`, `#slice` aliases at the top of a module, as Triton
/// does, so tile types stay readable.
struct TesselOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedEncodingAttr>(attr)) {
      os << "blocked";
      return AliasResult::FinalAlias;
    }
    if (isa<SliceEncodingAttr>(attr)) {
      os << "slice";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void TesselDialect::initialize() {
  addInterfaces<TesselOpAsmInterface>();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialect/TesselTypes.cpp.inc"
      >();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialect/TesselOps.cpp.inc"
      >();
}

Type mlir::tessel::withElementType(Type type, Type elementType) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tensor.getShape(), elementType, tensor.getEncoding());
  return elementType;
}

Type mlir::tessel::getPointeeType(Type ptrLike) {
  auto ptr = dyn_cast<PtrType>(getElementTypeOrSelf(ptrLike));
  if (!ptr)
    return Type();
  return withElementType(ptrLike, ptr.getPointeeType());
}

bool mlir::tessel::isZeroTile(Value value) {
  if (!value)
    return false;
  if (matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero()))
    return true;
  auto splat = value.getDefiningOp<SplatOp>();
  return splat && isZeroTile(splat.getSrc());
}

Type mlir::tessel::getI1SameShape(Type type) {
  return withElementType(type, IntegerType::get(type.getContext(), 1));
}

//===----------------------------------------------------------------------===//
// !tessel.shared<3x128x32xbf16>
//===----------------------------------------------------------------------===//

Type SharedType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType))
    return Type();
  SharedLayout layout = SharedLayout::Padded;
  if (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return Type();
    std::optional<SharedLayout> named = symbolizeSharedLayout(keyword);
    if (!named)
      return parser.emitError(at, "unknown shared layout '") << keyword << "'", Type();
    layout = *named;
  }
  if (parser.parseGreater())
    return Type();
  if (shape.size() < 2)
    return parser.emitError(parser.getNameLoc(), "a shared buffer holds 2-D tiles or stacks of them"),
           Type();
  if (!elementType.isIntOrFloat() || elementType.getIntOrFloatBitWidth() < 8)
    return parser.emitError(parser.getNameLoc(), "shared buffer elements must be ints or floats "
                                                 "of 8 bits or more"),
           Type();
  return SharedType::get(parser.getContext(), shape, elementType, layout);
}

void SharedType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape())
    printer << dim << "x";
  printer << getElementType();
  if (!isPadded())
    printer << ", " << stringifySharedLayout(getLayout());
  printer << ">";
}

int64_t SharedType::getRowStride() const {
  int64_t bytes = getElementType().getIntOrFloatBitWidth() / 8;
  return getShape().back() + 16 / bytes;
}

int64_t SharedType::getSizeInBytes() const {
  int64_t rows = 1;
  for (int64_t dim : getShape().drop_back())
    rows *= dim;
  int64_t rowElements = isPadded() ? getRowStride() : getShape().back();
  return rows * rowElements * (getElementType().getIntOrFloatBitWidth() / 8);
}
