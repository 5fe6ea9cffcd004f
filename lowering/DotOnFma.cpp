//===- DotOnFma.cpp - tessel.dot as FMAs, exact f32 products ----------------===//
//
// Any accumulator layout (f32 "ieee", or tiles too small for every warp to hold whole
// instruction tiles): each thread reads the rows of a and the columns of b its
// accumulator registers need from the scratch and accumulates with fma in f32.
//
//===----------------------------------------------------------------------===//
#include "lowering/DotEmitters.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::dot;

/// The FMA loop for any accumulator layout; exact f32 products.
void dot::emitFma(OpBuilder &b, Location loc, DotOp op, const TileLayout &layout,
                  const Staging &staging, Value aBase, Value bBase, const ThreadIndex &thread,
                  SmallVectorImpl<Value> &acc) {
  Type elem = getElementTypeOrSelf(op.getA().getType());
  Type f32 = b.getF32Type();
  int64_t k = cast<ShapedType>(op.getA().getType()).getDimSize(1);
  int64_t bytes = staging.elementBytes;
  auto coords = getCoordinates(b, loc, layout, thread);
  unsigned rows = layout.getRegistersAlong(0), cols = layout.getRegistersAlong(1);
  SmallVector<Value> rowOffset, colOffset;
  for (unsigned i = 0; i < rows; ++i)
    rowOffset.push_back(mul(b, loc, coords[layout.getRegister({i, 0})][0],
                            staging.aStride * bytes));
  for (unsigned j = 0; j < cols; ++j)
    colOffset.push_back(mul(b, loc, coords[layout.getRegister({0, j})][1], bytes));
  auto load = [&](Value base, Value offset) -> Value {
    Value v = LLVM::LoadOp::create(b, loc, elem, byteOffset(b, loc, base, offset), bytes);
    if (!elem.isF32())
      v = LLVM::FPExtOp::create(b, loc, f32, v);
    return v;
  };
  for (int64_t kk = 0; kk < k; ++kk) {
    SmallVector<Value> aValues, bValues;
    for (unsigned i = 0; i < rows; ++i)
      aValues.push_back(load(aBase, add(b, loc, rowOffset[i], kk * bytes)));
    for (unsigned j = 0; j < cols; ++j)
      bValues.push_back(load(bBase, add(b, loc, colOffset[j], kk * staging.bStride * bytes)));
    for (unsigned i = 0; i < rows; ++i)
      for (unsigned j = 0; j < cols; ++j) {
        unsigned r = layout.getRegister({i, j});
        acc[r] = LLVM::FMAOp::create(b, loc, aValues[i], bValues[j], acc[r]);
      }
  }
}
