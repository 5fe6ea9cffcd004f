//===- TesselTypes.td - pointer type and type constraints ---*- tablegen -*-===//
#ifndef TESSEL_TYPES_TD
#define TESSEL_TYPES_TD

include "dialect/TesselDialect.td"
include "dialect/TesselAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Tessel_PtrType : TypeDef<Tessel_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "Pointer to global memory holding elements of one type";
  let description = [{
    A pointer into global (device) memory. Tiles of pointers (`tensor<128x!tessel.ptr<f32>>`)
    are how a kernel addresses a block of memory: `tessel.addptr` offsets them and
    `tessel.load`/`tessel.store` access them.
  }];
  let parameters = (ins "Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
}

def Tessel_SharedType : TypeDef<Tessel_Dialect, "Shared", [ShapedTypeInterface]> {
  let mnemonic = "shared";
  let summary = "A buffer of tile elements in shared memory";
  let description = [{
    `!tessel.shared<3x128x32xbf16>` is a block of shared memory holding tiles, here three
    128x32 bf16 tiles (the stages of a software-pipelined loop). Rows are stored
    row-major, each padded by 16 bytes so that the eight 16-byte rows one `ldmatrix`
    reads land in distinct banks. A layout after the element type names another
    arrangement, unpadded and 128-byte swizzled (lowering/WgmmaLayout.h):
    `!tessel.shared<3x128x64xbf16, wgmma_a>` and `wgmma_b` are the operand layouts
    wgmma reads, `swizzled` and `interleaved` what the bulk tensor engine fills for
    mma.sync. The layout belongs to the buffer: a tile of a stack and a transposed view
    keep it. `tessel.local_alloc` makes one,
    `tessel.local_index` selects a tile of it, `tessel.async_copy` fills a tile from
    global memory and `tessel.dot` can read its operands from one.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "Type":$elementType,
                        "SharedLayout":$layout);
  let builders = [
    TypeBuilder<(ins "ArrayRef<int64_t>":$shape, "Type":$elementType), [{
      return $_get($_ctxt, shape, elementType, SharedLayout::Padded);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    bool hasRank() const { return true; }
    SharedType cloneWith(std::optional<ArrayRef<int64_t>> shape, Type elementType) const {
      return SharedType::get(getContext(), shape ? *shape : getShape(), elementType,
                             getLayout());
    }
    /// The same buffer's type with `shape` (a tile of a stack, a transposed view).
    SharedType withShape(ArrayRef<int64_t> shape) const {
      return SharedType::get(getContext(), shape, getElementType(), getLayout());
    }
    SharedType withLayout(SharedLayout layout) const {
      return SharedType::get(getContext(), getShape(), getElementType(), layout);
    }
    bool isPadded() const { return getLayout() == SharedLayout::Padded; }
    /// Elements from one row to the next in padded rows, the 16-byte padding included.
    int64_t getRowStride() const;
    /// Bytes the whole buffer takes (swizzled layouts have no padding).
    int64_t getSizeInBytes() const;
  }];
}

def Tessel_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
def Tessel_Int : AnyTypeOf<[I1, I8, I16, I32, I64]>;
def Tessel_Elem : AnyTypeOf<[Tessel_Float, Tessel_Int, Tessel_PtrType]>;
def Tessel_Tile : RankedTensorOf<[Tessel_Elem]>;
def Tessel_PtrTile : RankedTensorOf<[Tessel_PtrType]>;
def Tessel_PtrLike : AnyTypeOf<[Tessel_PtrType, Tessel_PtrTile]>;
def Tessel_IntLike : AnyTypeOf<[Tessel_Int, RankedTensorOf<[Tessel_Int]>]>;
def Tessel_BoolLike : AnyTypeOf<[I1, RankedTensorOf<[I1]>]>;
def Tessel_ValueLike : AnyTypeOf<[Tessel_Elem, Tessel_Tile]>;
def Tessel_FloatLike : AnyTypeOf<[Tessel_Float, RankedTensorOf<[Tessel_Float]>]>;

#endif // TESSEL_TYPES_TD
