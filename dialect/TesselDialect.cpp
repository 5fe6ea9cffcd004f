//===- TesselDialect.cpp - dialect registration and type helpers ----------===//
#include "dialect/TesselDialect.h"

#include "mlir/IR/Builders.h"
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

Type mlir::tessel::getI1SameShape(Type type) {
  return withElementType(type, IntegerType::get(type.getContext(), 1));
}
