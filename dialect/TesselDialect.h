//===- TesselDialect.h - the tessel dialect, its types, attributes and ops -===//
#ifndef TESSEL_DIALECT_TESSELDIALECT_H
#define TESSEL_DIALECT_TESSELDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/TesselDialect.h.inc"
#include "dialect/TesselEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialect/TesselTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/TesselAttrs.h.inc"

namespace mlir::tessel {
/// `!tessel.ptr<T>` -> `T`; `tensor<..x!tessel.ptr<T>, #l>` -> `tensor<..xT, #l>`.
Type getPointeeType(Type ptrLike);
/// The i1 type (or i1 tile with the same shape and encoding) matching `type`.
Type getI1SameShape(Type type);
/// `type` with its element type replaced, keeping shape and encoding.
Type withElementType(Type type, Type elementType);
/// True when `value` is a tile computed from scalars, ranges and constants alone
/// (splats, make_range, constants, broadcasts, expand_dims, pure elementwise ops of
/// those): recomputing it costs less than moving it between threads.
bool isRematerializable(Value value, unsigned depth = 0);
/// True when `value` is a zero constant (float or integer), or a splat of one.
bool isZeroTile(Value value);
} // namespace mlir::tessel

#define GET_OP_CLASSES
#include "dialect/TesselOps.h.inc"

#endif // TESSEL_DIALECT_TESSELDIALECT_H
