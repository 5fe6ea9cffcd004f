//===- TesselDialect.td - the tessel dialect: tile operations ---*- tablegen -*-===//
#ifndef TESSEL_DIALECT_TD
#define TESSEL_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tessel_Dialect : Dialect {
  let name = "tessel";
  let cppNamespace = "::mlir::tessel";
  let summary = "Tile operations of the Tessel kernel language";
  let description = [{
    Tessel kernels operate on tiles: statically shaped `tensor` values owned by one
    thread block. Elementwise arithmetic uses the `arith` and `math` dialects on tensors;
    this dialect adds what they lack: pointers, index ranges, broadcasting, masked memory
    access, reductions and layout conversions. Before lowering, every tile type carries a
    layout encoding (`#tessel.blocked`, `#tessel.slice`) saying which thread holds which
    element.
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect", "scf::SCFDialect"];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Tessel_Op<string mnemonic, list<Trait> traits = []> :
    Op<Tessel_Dialect, mnemonic, traits>;

#endif // TESSEL_DIALECT_TD
