//===- TesselOps.cpp - verifiers, folders and canonicalisations -----------===//
#include "dialect/Layout.h"
#include "dialect/TesselDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tessel;

#define GET_OP_CLASSES
#include "dialect/TesselOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult MakeRangeOp::verify() {
  auto type = getResult().getType();
  int64_t length = int64_t(getEnd()) - int64_t(getStart());
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tile");
  if (length <= 0 || (length & (length - 1)) != 0)
    return emitOpError("range length must be a positive power of two, got ") << length;
  if (type.getDimSize(0) != length)
    return emitOpError("result has ") << type.getDimSize(0) << " elements, the range has "
                                      << length;
  return success();
}

LogicalResult BroadcastOp::verify() {
  auto src = getSrc().getType();
  auto dst = getResult().getType();
  if (src.getElementType() != dst.getElementType())
    return emitOpError("element types differ");
  if (src.getRank() != dst.getRank())
    return emitOpError("operand and result must have the same rank");
  for (int64_t d = 0; d < src.getRank(); ++d)
    if (src.getDimSize(d) != dst.getDimSize(d) && src.getDimSize(d) != 1)
      return emitOpError("cannot broadcast dimension ")
             << d << " of size " << src.getDimSize(d) << " to " << dst.getDimSize(d);
  if (src.getEncoding() != dst.getEncoding())
    return emitOpError("operand and result must have the same layout");
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getResult().getType())
    return getSrc();
  return {};
}

LogicalResult ExpandDimsOp::verify() {
  auto src = getSrc().getType();
  auto dst = getResult().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError("axis ") << axis << " out of range for a rank-" << src.getRank()
                                << " tile";
  SmallVector<int64_t> expected(src.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (dst.getShape() != ArrayRef<int64_t>(expected) ||
      src.getElementType() != dst.getElementType())
    return emitOpError("result must be the operand with a size-1 dimension at ") << axis;
  if (!src.getEncoding() && !dst.getEncoding())
    return success();
  auto slice = dyn_cast_or_null<SliceEncodingAttr>(src.getEncoding());
  if (!slice || slice.getDim() != axis || slice.getParent() != dst.getEncoding())
    return emitOpError("operand layout must be the result layout sliced along axis ") << axis;
  return success();
}

LogicalResult AtomicRMWOp::verify() {
  if (getKind() != "add")
    return emitOpError("kind '") << getKind() << "' is not supported (expected \"add\")";
  Type element = getElementTypeOrSelf(getValue().getType());
  if (!element.isF32() && !element.isInteger(32))
    return emitOpError("add takes f32 or i32 elements, got ") << element;
  return success();
}

LogicalResult ReduceOp::verify() {
  auto src = getSrc().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= src.getRank())
    return emitOpError("axis ") << axis << " out of range for a rank-" << src.getRank()
                                << " tile";
  Type resultType = getResult().getType();
  if (src.getRank() == 1) {
    if (resultType != src.getElementType())
      return emitOpError("reducing a 1-D tile gives a scalar of its element type");
    return success();
  }
  auto dst = dyn_cast<RankedTensorType>(resultType);
  SmallVector<int64_t> expected(src.getShape());
  expected.erase(expected.begin() + axis);
  if (!dst || dst.getShape() != ArrayRef<int64_t>(expected) ||
      dst.getElementType() != src.getElementType())
    return emitOpError("result must be the operand without dimension ") << axis;
  if (src.getEncoding() || dst.getEncoding()) {
    auto slice = dyn_cast_or_null<SliceEncodingAttr>(dst.getEncoding());
    if (!slice || slice.getDim() != axis || slice.getParent() != src.getEncoding())
      return emitOpError("result layout must be the operand layout sliced along axis ")
             << axis;
  }
  return success();
}

LogicalResult TmaCopyOp::verify() {
  if (bool(getMulticast()) != bool(getCtas()))
    return emitOpError("'multicast' and 'ctas' go together");
  if (getBatch().size() > 2)
    return emitOpError("at most 2 batch coordinates (a tensor map has 5 dimensions), got ")
           << getBatch().size();
  if (!getBatch().empty() && getDst().getType().getLayout() == SharedLayout::Interleaved)
    return emitOpError("an interleaved tile's map has no room for batch coordinates");
  if (!getMulticast())
    return success();
  if (!getWholeBlocks())
    return emitOpError("'multicast' needs 'whole_blocks' (the pieces are column blocks)");
  if (bool(getEmpty()) != bool(getEmptyPhase()) || bool(getEmpty()) != bool(getEmptyWait()))
    return emitOpError("'after' needs an mbarrier, a phase and a condition");
  int64_t ctas = *getCtas();
  if (ctas != 2 && ctas != 4 && ctas != 8)
    return emitOpError("'ctas' must be 2, 4 or 8, got ") << ctas;
  return success();
}

LogicalResult DotOp::verify() {
  auto a = cast<ShapedType>(getA().getType()), b = cast<ShapedType>(getB().getType());
  auto acc = getAcc().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return emitOpError("operands must be 2-D tiles");
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
  if (b.getDimSize(0) != k)
    return emitOpError("a is ") << m << "x" << k << " but b has " << b.getDimSize(0)
                                << " rows";
  if (acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return emitOpError("accumulator must be ") << m << "x" << n;
  auto isPow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  if (!isPow2(m) || !isPow2(n) || !isPow2(k))
    return emitOpError("M, N and K must be powers of two");
  if (k < 16)
    return emitOpError("K must be at least 16, got ") << k;
  Type elem = a.getElementType();
  if (elem != b.getElementType())
    return emitOpError("a and b must have the same element type");
  if (!elem.isF16() && !elem.isBF16() && !elem.isF32())
    return emitOpError("operands must be f16, bf16 or f32, got ") << elem;
  if (!acc.getElementType().isF32())
    return emitOpError("accumulator must be f32");
  StringRef precision = getInputPrecision();
  if (precision != "tf32" && precision != "ieee")
    return emitOpError("inputPrecision must be \"tf32\" or \"ieee\", got \"")
           << precision << "\"";
  return success();
}

LogicalResult LocalIndexOp::verify() {
  ArrayRef<int64_t> src = getSrc().getType().getShape(), dst = getResult().getType().getShape();
  if (src.size() != 3 || src.drop_front() != dst ||
      getSrc().getType().getElementType() != getResult().getType().getElementType())
    return emitOpError("selects one 2-D tile of a 3-D stack of tiles");
  if (getSrc().getType().getLayout() != getResult().getType().getLayout())
    return emitOpError("a tile keeps its stack's shared layout");
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  auto ptr = getPtr().getType();
  SharedType dst = getDst().getType();
  if (ptr.getShape() != dst.getShape())
    return emitOpError("copies a tile of the destination's shape");
  if (cast<PtrType>(ptr.getElementType()).getPointeeType() != dst.getElementType())
    return emitOpError("pointee type must be the destination's element type");
  return success();
}

LogicalResult TransOp::verify() {
  auto src = cast<ShapedType>(getSrc().getType()), dst = cast<ShapedType>(getResult().getType());
  if (isa<SharedType>(src) != isa<SharedType>(dst))
    return emitOpError("operand and result must both be tiles or both shared tiles");
  if (isa<SharedType>(src) &&
      !llvm::all_of(getResult().getUsers(), [&](Operation *user) {
        auto dot = dyn_cast<DotOp>(user);
        return dot && dot.getB() == getResult() && dot.getA() != getResult();
      }))
    return emitOpError("a transposed shared tile may only be a dot's B operand");
  if (src.getRank() != 2 || dst.getRank() != 2)
    return emitOpError("operand and result must be 2-D tiles");
  if (src.getDimSize(0) != dst.getDimSize(1) || src.getDimSize(1) != dst.getDimSize(0) ||
      src.getElementType() != dst.getElementType())
    return emitOpError("result must be the operand transposed");
  if (auto shared = dyn_cast<SharedType>(src);
      shared && shared.getLayout() != cast<SharedType>(dst).getLayout())
    return emitOpError("a transposed view keeps the shared layout");
  return success();
}

//===----------------------------------------------------------------------===//
// convert_layout: folding and rematerialisation
//===----------------------------------------------------------------------===//

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getResult().getType())
    return getSrc();
  return {};
}

/// Ops that produce a tile from scalars or attributes alone: recomputing them in
/// another layout costs less than moving their elements between threads.
bool mlir::tessel::isRematerializable(Value value, unsigned depth) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 6 || !isa<RankedTensorType>(value.getType()))
    return false;
  if (isa<SplatOp, MakeRangeOp, arith::ConstantOp>(def))
    return true;
  if (def->hasTrait<OpTrait::Elementwise>() && def->getNumResults() == 1 &&
      isPure(def)) {
    for (Value operand : def->getOperands())
      if (!isRematerializable(operand, depth + 1))
        return false;
    return true;
  }
  if (isa<BroadcastOp, ExpandDimsOp>(def))
    return isRematerializable(def->getOperand(0), depth + 1);
  return false;
}

namespace {

struct FoldConvertOfConvert : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getSrc().getDefiningOp<ConvertLayoutOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<ConvertLayoutOp>(op, op.getType(), inner.getSrc());
    return success();
  }
};

/// convert(f(x...)) -> f(convert(x)...) for tiles computed from scalars: the converts
/// then reach splats, ranges and constants and disappear.
struct RematerializeInTargetLayout : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op, PatternRewriter &rewriter) const override {
    Operation *def = op.getSrc().getDefiningOp();
    if (!def)
      return failure();
    Attribute target = op.getType().getEncoding();
    auto retype = [&](Type type) -> Type {
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        return withEncoding(tensor, target);
      return type;
    };
    if (auto splat = dyn_cast<SplatOp>(def)) {
      rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getSrc());
      return success();
    }
    if (auto range = dyn_cast<MakeRangeOp>(def)) {
      rewriter.replaceOpWithNewOp<MakeRangeOp>(op, op.getType(), range.getStartAttr(),
                                               range.getEndAttr());
      return success();
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense)
        return failure();
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, op.getType(),
                                                     dense.reshape(op.getType()));
      return success();
    }
    if (auto expand = dyn_cast<ExpandDimsOp>(def)) {
      auto srcType = expand.getSrc().getType();
      auto sliced = withEncoding(
          srcType, SliceEncodingAttr::get(getContext(), expand.getAxis(), target));
      Value converted = ConvertLayoutOp::create(rewriter, op.getLoc(), sliced, expand.getSrc());
      rewriter.replaceOpWithNewOp<ExpandDimsOp>(op, op.getType(), converted,
                                                expand.getAxisAttr());
      return success();
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(def)) {
      Value converted = ConvertLayoutOp::create(
          rewriter, op.getLoc(), cast<RankedTensorType>(retype(broadcast.getSrc().getType())),
          broadcast.getSrc());
      rewriter.replaceOpWithNewOp<BroadcastOp>(op, op.getType(), converted);
      return success();
    }
    if (!isRematerializable(op.getSrc()))
      return failure();
    // An elementwise op whose whole operand cone is rematerialisable.
    IRMapping mapping;
    for (Value operand : def->getOperands()) {
      if (auto tensor = dyn_cast<RankedTensorType>(operand.getType()))
        mapping.map(operand, ConvertLayoutOp::create(rewriter, op.getLoc(),
                                                     withEncoding(tensor, target), operand)
                                 .getResult());
    }
    Operation *clone = rewriter.clone(*def, mapping);
    clone->getResult(0).setType(op.getType());
    rewriter.replaceOp(op, clone->getResults());
    return success();
  }
};
} // namespace

void ConvertLayoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                  MLIRContext *context) {
  patterns.add<FoldConvertOfConvert, RematerializeInTargetLayout>(context);
}

LogicalResult WarpSpecializeOp::verify() {
  // It becomes branches of the function's body: a region that must stay one block (a
  // loop's, another partition's) cannot hold it.
  if (!isa_and_nonnull<func::FuncOp>((*this)->getParentOp()))
    return emitOpError("must be directly in a function's body");
  if (getProducerWarps() % 4 != 0)
    return emitOpError("producer_warps must be whole warpgroups (a multiple of 4)");
  int32_t producer = getProducerRegisters(), consumer = getConsumerRegisters();
  if (producer == 0 && consumer == 0)
    return success();
  auto valid = [](int32_t count) { return count >= 24 && count <= 256 && count % 8 == 0; };
  if (!valid(producer) || !valid(consumer))
    return emitOpError("register counts for setmaxnreg must be multiples of 8 from 24 to 256");
  if (producer > consumer)
    return emitOpError("the producer gives registers to the consumers, not the other way");
  return success();
}
