//===- TesselAttrs.td - layout encodings and enums ----------*- tablegen -*-===//
#ifndef TESSEL_ATTRS_TD
#define TESSEL_ATTRS_TD

include "dialect/TesselDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tessel_ReduceKind : I32EnumAttr<"ReduceKind", "reduction combiner", [
    I32EnumAttrCase<"Add", 0, "add">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">]> {
  let cppNamespace = "::mlir::tessel";
  let genSpecializedAttr = 0;
}
def Tessel_ReduceKindAttr : EnumAttr<Tessel_Dialect, Tessel_ReduceKind, "reduce_kind">;

// tessel.warpgroup_turn: give the first turn, wait for one's turn, pass it on.
def Tessel_WarpgroupTurnStep : I32EnumAttr<"WarpgroupTurnStep", "step of the warpgroups' turns", [
    I32EnumAttrCase<"Start", 0, "start">,
    I32EnumAttrCase<"Wait", 1, "wait">,
    I32EnumAttrCase<"Pass", 2, "pass">]> {
  let cppNamespace = "::mlir::tessel";
  let genSpecializedAttr = 0;
}
def Tessel_WarpgroupTurnStepAttr : EnumAttr<Tessel_Dialect, Tessel_WarpgroupTurnStep,
                                            "warpgroup_turn_step">;

// How a !tessel.shared buffer lays out its rows (lowering/WgmmaLayout.h has the
// formulas). Padded rows unless a pass chose a 128-byte swizzle for a reader.
def Tessel_SharedLayout : I32EnumAttr<"SharedLayout", "layout of a shared buffer", [
    I32EnumAttrCase<"Padded", 0, "padded">,
    I32EnumAttrCase<"WgmmaA", 1, "wgmma_a">,
    I32EnumAttrCase<"WgmmaB", 2, "wgmma_b">,
    I32EnumAttrCase<"Swizzled", 3, "swizzled">,
    I32EnumAttrCase<"Interleaved", 4, "interleaved">]> {
  let cppNamespace = "::mlir::tessel";
  let genSpecializedAttr = 0;
}

def Tessel_BlockedEncodingAttr : AttrDef<Tessel_Dialect, "BlockedEncoding"> {
  let mnemonic = "blocked";
  let summary = "Blocked layout: each thread holds contiguous runs of elements";
  let description = [{
    Per dimension `d`, a thread holds `sizePerThread[d]` contiguous elements, the 32 lanes
    of a warp are spread as `threadsPerWarp`, the warps as `warpsPerCTA`; `order` lists the
    dimensions from fastest- to slowest-varying. A tile larger than the block's coverage
    (`sizePerThread * threadsPerWarp * warpsPerCTA`) repeats it; a smaller tile is replicated
    across threads. Contiguous `sizePerThread` along the memory-contiguous dimension is what
    makes 16-byte vector loads and stores possible.

    ```mlir
    #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$sizePerThread,
                        ArrayRefParameter<"unsigned">:$threadsPerWarp,
                        ArrayRefParameter<"unsigned">:$warpsPerCTA,
                        ArrayRefParameter<"unsigned">:$order);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getNumWarps() const;
  }];
}

def Tessel_SliceEncodingAttr : AttrDef<Tessel_Dialect, "SliceEncoding"> {
  let mnemonic = "slice";
  let summary = "A parent layout with one dimension removed";
  let description = [{
    The layout of a reduction's result, and of the operand of `tessel.expand_dims`: element
    `i` lives where element `i` (with any index along `dim`) of the parent lives. Threads that
    differ only along `dim` hold copies.

    ```mlir
    #tessel.slice<{dim = 1, parent = #tessel.blocked<{...}>}>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "Attribute":$parent);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Rank of the tiles this layout describes (the parent's rank minus one).
    unsigned getRank() const;
  }];
}

#endif // TESSEL_ATTRS_TD
