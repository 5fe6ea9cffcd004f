//===- frontend/GenDescriptor.cpp - tensor descriptors: tiles by shape and strides ===//
//
// make_tensor_descriptor(base, shape, strides, block_shape) names an n-D tensor in global
// memory: where it starts, its extent and stride (in elements) in each dimension, and the
// shape of the tiles read from it (Triton's tl.make_tensor_descriptor). desc.load(offsets)
// is the block whose first element is at `offsets`, reading `other` (0) wherever an index
// of a checked dimension falls outside [0, extent); desc.store(offsets, value) writes only
// inside. Both generate what a kernel would write by hand,
//   ptr  = base + (o0 + arange(B0))[:, None] * s0 + (o1 + arange(B1))[None, :] * s1
//   mask = ((o0 + arange(B0)) < n0)[:, None] & ((o1 + arange(B1)) < n1)[None, :]
// (a stride of 1 multiplies nothing; an offset that is not a constant is also checked
// against 0), so a 2-D descriptor's loads are blocks of a matrix to the software pipeliner,
// which copies them by TMA (lowering/BlockAccess.h): the tensor map's bounds and zero fill
// are the mask's, and the kernel reads the same whichever way the copy goes.
//
//===----------------------------------------------------------------------===//
#include "frontend/Gen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace tessel::frontend {

using ast::Expr;
using mlir::Value;

namespace {

namespace tsl = mlir::tessel;

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// The descriptor's parts (GenValue::elems): base, shape[rank], strides[rank].
struct DescriptorParts {
  const GenValue &base;
  llvm::ArrayRef<GenValue> shape, strides;
  explicit DescriptorParts(const GenValue &desc)
      : base(desc.elems[0]),
        shape(llvm::ArrayRef(desc.elems).slice(1, desc.block.size())),
        strides(llvm::ArrayRef(desc.elems).slice(1 + desc.block.size(), desc.block.size())) {}
};

} // namespace

/// The elements of a list argument (`[a, b]` or `(a, b)`; a single value for rank 1).
static std::vector<GenValue> listElements(const GenValue &v) {
  return v.isTuple() ? v.elems : std::vector<GenValue>{v};
}

/// An extent, stride or offset: a constexpr int or a runtime integer scalar.
static bool isIntegerScalar(const GenValue &v) {
  if (v.isConst())
    return v.cst.isInt();
  return v.isRuntime() && Generator::shapeOf(v.type()).empty() &&
         Generator::isIntElem(v.type()) && !Generator::isBoolElem(v.type());
}

GenValue Generator::genMakeTensorDescriptor(BuiltinCall &call) {
  if (!call.bind({"base", "shape", "strides", "block_shape"}, 4))
    return GenValue::poison();
  GenValue base = call.arg(0), shapeV = call.arg(1), stridesV = call.arg(2),
           blockV = call.arg(3);
  if (base.isPoison() || shapeV.isPoison() || stridesV.isPoison() || blockV.isPoison())
    return GenValue::poison();
  if (!base.isRuntime() || !isPtrElem(elemOf(base.type())) || !shapeOf(base.type()).empty())
    return error(call.argRange(0), "the base of make_tensor_descriptor() must be a pointer "
                                   "(not a tile of them), got " + describe(base));

  GenValue desc;
  desc.kind = GenValue::Kind::Descriptor;
  desc.elems.push_back(base);
  int64_t elements = 1;
  for (const GenValue &d : listElements(blockV)) {
    auto n = requireConstInt(d, call.argRange(3), "a block dimension");
    if (!n)
      return GenValue::poison();
    if (!isPowerOfTwo(*n) || *n > (int64_t(1) << 24))
      return error(call.argRange(3), "block dimension " + std::to_string(*n) +
                                         " is not a power of two (tile sizes must be powers "
                                         "of two)");
    desc.block.push_back(*n);
    elements = std::min<int64_t>(elements * *n, kMaxTileElements + 1);
  }
  if (elements > kMaxTileElements)
    return error(call.argRange(3), "tile too large: " + shapeName(desc.block) +
                                       " has more than " + std::to_string(kMaxTileElements) +
                                       " elements");
  size_t rank = desc.block.size();

  // Extents and strides: one integer a dimension, constexpr or a runtime scalar.
  for (size_t which : {size_t(1), size_t(2)}) {
    const char *what = which == 1 ? "shape" : "strides";
    std::vector<GenValue> values = listElements(which == 1 ? shapeV : stridesV);
    if (values.size() != rank)
      return error(call.argRange(which),
                   std::string("make_tensor_descriptor() has a block of rank ") +
                       std::to_string(rank) + " but " + std::to_string(values.size()) + " " +
                       what);
    for (const GenValue &v : values) {
      if (v.isPoison())
        return v;
      if (!isIntegerScalar(v))
        return error(call.argRange(which), std::string("the ") + what +
                                               " of make_tensor_descriptor() must be integers "
                                               "(constexpr or scalar), got " + describe(v));
      if (which == 1 && v.isConst() && v.cst.intValue < 0)
        return error(call.argRange(which), "a tensor extent cannot be negative, got " +
                                               std::to_string(v.cst.intValue));
      desc.elems.push_back(v);
    }
  }
  return desc;
}

GenValue Generator::genDescriptorAttribute(const Expr &expr, const GenValue &desc) {
  DescriptorParts parts(desc);
  if (expr.name == "shape")
    return GenValue::ofTuple(parts.shape.vec());
  if (expr.name == "strides")
    return GenValue::ofTuple(parts.strides.vec());
  if (expr.name == "block_shape") {
    std::vector<GenValue> block;
    for (int64_t d : desc.block)
      block.push_back(GenValue::ofConst(ConstValue::ofInt(d)));
    return GenValue::ofTuple(std::move(block));
  }
  if (expr.name == "dtype") {
    auto pointee = mlir::cast<tsl::PtrType>(parts.base.type()).getPointeeType();
    if (auto d = typeToDType(pointee))
      return GenValue::ofConst(ConstValue::ofDType(*d));
  }
  if (expr.name == "load" || expr.name == "store")
    return error(expr.range, "'." + expr.name + "' must be called: desc." + expr.name +
                                 (expr.name == "load" ? "(offsets)" : "(offsets, value)"));
  return error(expr.range, "unknown attribute '" + expr.name + "' of " + describe(desc) +
                               " (supported: .load(), .store(), .shape, .strides, "
                               ".block_shape, .dtype)");
}

/// The block's dimensions that `checkV` (boundary_check: a tuple of dimension numbers, None
/// for all) names, or nullopt after an error at `range`.
std::optional<std::vector<bool>> Generator::checkedDimensions(const GenValue &checkV,
                                                               size_t rank, SourceRange range) {
  if (checkV.isConst() && checkV.cst.kind == ConstValue::Kind::None)
    return std::vector<bool>(rank, true);
  std::vector<bool> checked(rank, false);
  for (const GenValue &d : listElements(checkV)) {
    auto dim = requireConstInt(d, range, "a dimension of boundary_check");
    if (!dim)
      return std::nullopt;
    if (*dim < 0 || *dim >= int64_t(rank) || checked[*dim]) {
      error(range, "boundary_check names each dimension of the descriptor (0 to " +
                       std::to_string(rank - 1) + ") at most once, got " + std::to_string(*dim));
      return std::nullopt;
    }
    checked[*dim] = true;
  }
  return checked;
}

std::pair<GenValue, GenValue> Generator::descriptorBlock(const GenValue &desc,
                                                         llvm::ArrayRef<GenValue> offsets,
                                                         const std::vector<bool> &checked,
                                                         SourceRange range) {
  size_t rank = desc.block.size();
  DescriptorParts parts(desc);
  GenValue ptr = parts.base, mask = GenValue::ofConst(ConstValue::none());
  for (size_t i = 0; i < rank; ++i) {
    // Dimension i's indices, offset + arange, and a tile of them expanded to the rank.
    GenValue steps = GenValue::ofValue(tsl::MakeRangeOp::create(
        b, curLoc(), mlir::RankedTensorType::get({desc.block[i]}, b.getI32Type()), 0u,
        uint32_t(desc.block[i])));
    const GenValue &o = offsets[i];
    bool zero = o.isConst() && o.cst.intValue == 0;
    GenValue index = zero ? steps : genBinary(ast::OpKind::Add, o, steps, range);
    if (index.isPoison())
      return {index, index};
    auto expand = [&](GenValue v) {
      Value x = v.value;
      for (size_t j = 0; j < rank; ++j) {
        if (j == i)
          continue;
        auto shape = llvm::to_vector(shapeOf(x.getType()));
        shape.insert(shape.begin() + j, 1);
        x = tsl::ExpandDimsOp::create(
            b, curLoc(), mlir::RankedTensorType::get(shape, elemOf(x.getType())), x,
            uint32_t(j));
      }
      return GenValue::ofValue(x);
    };
    const GenValue &stride = parts.strides[i];
    GenValue term = expand(index);
    if (!(stride.isConst() && stride.cst.intValue == 1))
      term = genBinary(ast::OpKind::Mul, term, stride, range);
    ptr = genBinary(ast::OpKind::Add, ptr, term, range);
    if (!checked[i])
      continue;
    // A constant offset is known not to be negative; any other is checked.
    GenValue below = genBinary(ast::OpKind::Lt, index, parts.shape[i], range);
    GenValue ok = below;
    if (!(o.isConst() && o.cst.intValue >= 0)) {
      GenValue above =
          genBinary(ast::OpKind::Ge, index, GenValue::ofConst(ConstValue::ofInt(0)), range);
      ok = genBinary(ast::OpKind::BitAnd, above, below, range);
    }
    if (ok.isPoison())
      return {ok, ok};
    ok = expand(ok);
    mask = mask.isConst() ? ok : genBinary(ast::OpKind::BitAnd, mask, ok, range);
  }
  return {ptr, mask};
}

GenValue Generator::genDescriptorMethod(const Expr &expr, const GenValue &desc) {
  const Expr &attr = *expr.args[0];
  bool isLoad = attr.name == "load";
  if (!isLoad && attr.name != "store")
    return error(attr.range, "unknown method '" + attr.name + "' of " + describe(desc) +
                                 " (supported: .load(offsets), .store(offsets, value))");
  // The parameters put other/shared (load) and value (store) where load() and store()
  // have them, so loadFrom/storeTo report their errors at the right argument.
  BuiltinCall call{*this, expr, attr.name, loc(expr.range), {}};
  size_t checkIndex = isLoad ? 1 : 2;
  if (isLoad ? !call.bind({"offsets", "boundary_check", "other", "shared"}, 1)
             : !call.bind({"offsets", "value", "boundary_check"}, 2))
    return GenValue::poison();
  GenValue offsetsV = call.arg(0), checkV = call.arg(checkIndex);
  if (offsetsV.isPoison() || checkV.isPoison())
    return GenValue::poison();
  LocGuard at(*this, expr.range);
  size_t rank = desc.block.size();
  std::vector<GenValue> offsets = listElements(offsetsV);
  if (offsets.size() != rank)
    return error(call.argRange(0), attr.name + "() of a descriptor of rank " +
                                       std::to_string(rank) + " needs " + std::to_string(rank) +
                                       " offsets, got " + std::to_string(offsets.size()));
  for (const GenValue &o : offsets) {
    if (o.isPoison())
      return o;
    if (!isIntegerScalar(o))
      return error(call.argRange(0), "the offsets of " + attr.name +
                                         "() must be integers (constexpr or scalar), got " +
                                         describe(o));
  }
  std::optional<std::vector<bool>> checked =
      checkedDimensions(checkV, rank, call.argRange(checkIndex));
  if (!checked)
    return GenValue::poison();
  auto [ptr, mask] = descriptorBlock(desc, offsets, *checked, call.argRange(0));
  if (ptr.isPoison() || mask.isPoison())
    return GenValue::poison();

  if (isLoad) {
    GenValue other = call.arg(2), shared = call.arg(3);
    if (other.isPoison() || shared.isPoison())
      return GenValue::poison();
    bool anyChecked = llvm::is_contained(*checked, true);
    bool noOther = other.isConst() && other.cst.kind == ConstValue::Kind::None;
    if (!anyChecked && !noOther)
      return error(call.argRange(2), "'other' is read where a boundary check fails, and this "
                                     "load checks no dimension (boundary_check=())");
    if (anyChecked && noOther)
      other = GenValue::ofConst(ConstValue::ofInt(0)); // zero padding, as Triton's
    return loadFrom(call, ptr, mask, other, shared);
  }
  GenValue value = call.arg(1);
  if (value.isPoison())
    return value;
  if (value.isRuntime()) {
    auto joined = broadcastShapes(desc.block, shapeOf(value.type()));
    if (!joined || llvm::ArrayRef<int64_t>(*joined) != llvm::ArrayRef<int64_t>(desc.block))
      return error(call.argRange(1), "store() of a descriptor with block " +
                                         shapeName(desc.block) + " cannot write " +
                                         typeName(value.type()));
  }
  return storeTo(call, ptr, value, mask);
}

} // namespace tessel::frontend
