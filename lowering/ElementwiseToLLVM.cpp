//===- ElementwiseToLLVM.cpp - per-register ops, ranges, splats, pointers -===//
//
// After distribution each thread holds `getNumRegisters()` elements of a tile, so an
// elementwise op on tiles becomes that many scalar ops; shape ops (splat, broadcast,
// expand_dims) only pick registers; make_range computes coordinates.
//
//===----------------------------------------------------------------------===//
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

TileLayout layoutOf(Type type) { return *TileLayout::get(cast<RankedTensorType>(type)); }

/// arith/math ops on tiles: one scalar op per register.
struct ElementwiseOpLowering : ConversionPattern {
  ElementwiseOpLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                                ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        !op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1)
      return failure();
    auto tile = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!tile)
      return failure();
    unsigned n = layoutOf(tile).getNumRegisters();
    Type elementType = convertElementType(tile.getElementType());
    SmallVector<Value> results;
    for (unsigned i = 0; i < n; ++i) {
      OperationState state(op->getLoc(), op->getName());
      for (ValueRange operand : operands)
        state.addOperands(operand.size() == 1 ? operand[0] : operand[i]);
      state.addTypes(elementType);
      state.addAttributes(op->getAttrs());
      results.push_back(rewriter.create(state)->getResult(0));
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// exp, exp2, log, log2, rsqrt and tanh through the SFU's approximate instructions (as Triton):
/// exp(x) = ex2.approx(x * log2(e)), log(x) = lg2.approx(x) * ln(2). 16-bit floats are
/// computed in f32. exp and exp2 flush subnormal results to zero (`.ftz`, as Triton's):
/// without it ptxas wraps each MUFU.EX2 in a range test and two multiplies, a quarter of
/// FlashAttention's inner loop.
template <typename MathOp>
struct ApproximateMathLowering : ConversionPattern {
  ApproximateMathLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MathOp::getOperationName(), /*benefit=*/2, ctx) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<ValueRange> operands,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op->getLoc();
    Type resultType = op->getResult(0).getType();
    Type elementType = getElementTypeOrSelf(resultType);
    if (!elementType.isF32() && !elementType.isF16() && !elementType.isBF16())
      return rewriter.notifyMatchFailure(op, "only f16, bf16 and f32 have fast math");
    Type f32 = rewriter.getF32Type();
    SmallVector<Value> results;
    for (Value x : operands[0]) {
      if (!elementType.isF32())
        x = arith::ExtFOp::create(rewriter, loc, f32, x);
      Value y = approximate(rewriter, loc, x);
      if (!elementType.isF32())
        y = arith::TruncFOp::create(rewriter, loc, elementType, y);
      results.push_back(y);
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }

  static Value intrinsic(OpBuilder &b, Location loc, StringRef name, Value x) {
    return LLVM::CallIntrinsicOp::create(b, loc, x.getType(), b.getStringAttr(name),
                                         ValueRange{x})
        .getResult(0);
  }
  static Value scale(OpBuilder &b, Location loc, Value x, double factor) {
    Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(factor));
    return arith::MulFOp::create(b, loc, x, c);
  }
  static Value approximate(OpBuilder &b, Location loc, Value x) {
    constexpr double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
    if constexpr (std::is_same_v<MathOp, math::ExpOp>)
      return intrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f32", scale(b, loc, x, log2e));
    if constexpr (std::is_same_v<MathOp, math::Exp2Op>)
      return intrinsic(b, loc, "llvm.nvvm.ex2.approx.ftz.f32", x);
    if constexpr (std::is_same_v<MathOp, math::LogOp>)
      return scale(b, loc, intrinsic(b, loc, "llvm.nvvm.lg2.approx.f", x), ln2);
    if constexpr (std::is_same_v<MathOp, math::Log2Op>)
      return intrinsic(b, loc, "llvm.nvvm.lg2.approx.f", x);
    if constexpr (std::is_same_v<MathOp, math::TanhOp>) // NVPTX: tanh.approx.f32 (afn)
      return LLVM::TanhOp::create(b, loc, x.getType(), x, LLVM::FastmathFlags::afn);
    return intrinsic(b, loc, "llvm.nvvm.rsqrt.approx.f", x);
  }
};

/// Splat constants become one scalar constant per register.
struct ConstantTileLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto tile = dyn_cast<RankedTensorType>(op.getType());
    if (!tile)
      return failure();
    auto dense = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!dense)
      return rewriter.notifyMatchFailure(op, "only splat tile constants are supported");
    auto scalar = cast<TypedAttr>(dense.getSplatValue<Attribute>());
    Value value = arith::ConstantOp::create(rewriter, op.getLoc(), scalar);
    SmallVector<Value> results(layoutOf(tile).getNumRegisters(), value);
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

template <typename SourceOp, typename X, typename Y, typename Z>
struct GridQueryLowering : OpConversionPattern<SourceOp> {
  using OpConversionPattern<SourceOp>::OpConversionPattern;
  LogicalResult matchAndRewrite(SourceOp op, typename SourceOp::Adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Value value;
    switch (op.getAxis()) {
    case 0: value = X::create(rewriter, op.getLoc(), i32); break;
    case 1: value = Y::create(rewriter, op.getLoc(), i32); break;
    default: value = Z::create(rewriter, op.getLoc(), i32); break;
    }
    rewriter.replaceOp(op, value);
    return success();
  }
};

struct SplatLowering : OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SplatOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> results(layoutOf(op.getType()).getNumRegisters(),
                               adaptor.getSrc().front());
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

struct MakeRangeLowering : OpConversionPattern<MakeRangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MakeRangeOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TileLayout layout = layoutOf(op.getType());
    auto coords = getCoordinates(rewriter, loc, layout, getThreadIndex(rewriter, loc));
    Value start = createI32(rewriter, loc, op.getStart());
    SmallVector<Value> results;
    for (auto &coord : coords)
      results.push_back(arith::AddIOp::create(rewriter, loc, coord[0], start));
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// Same layout, size-1 dimensions repeated: each register reads its source register.
struct BroadcastLowering : OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BroadcastOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    TileLayout src = layoutOf(op.getSrc().getType()), dst = layoutOf(op.getType());
    ValueRange input = adaptor.getSrc();
    SmallVector<Value> results;
    for (unsigned reg = 0, e = dst.getNumRegisters(); reg < e; ++reg) {
      SmallVector<unsigned> index = dst.getRegisterIndex(reg);
      for (unsigned d = 0; d < index.size(); ++d)
        index[d] %= src.getRegistersAlong(d);
      results.push_back(input[src.getRegister(index)]);
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

/// The operand's slice layout holds exactly the result's registers minus the new axis.
struct ExpandDimsLowering : OpConversionPattern<ExpandDimsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ExpandDimsOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    TileLayout src = layoutOf(op.getSrc().getType()), dst = layoutOf(op.getType());
    ValueRange input = adaptor.getSrc();
    SmallVector<Value> results;
    for (unsigned reg = 0, e = dst.getNumRegisters(); reg < e; ++reg) {
      SmallVector<unsigned> index = dst.getRegisterIndex(reg);
      index.erase(index.begin() + op.getAxis());
      results.push_back(input[src.getRegister(index)]);
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};

struct AddPtrLowering : OpConversionPattern<AddPtrOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AddPtrOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto ptrType = cast<PtrType>(getElementTypeOrSelf(op.getType()));
    Type llvmPtr = LLVM::LLVMPointerType::get(getContext(), 1);
    SmallVector<Value> results;
    for (auto [base, offset] : llvm::zip(adaptor.getPtr(), adaptor.getOffset()))
      results.push_back(LLVM::GEPOp::create(rewriter, op.getLoc(), llvmPtr,
                                            ptrType.getPointeeType(), base, ValueRange{offset}));
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
};
} // namespace

void mlir::tessel::populateElementwiseToLLVMPatterns(const TypeConverter &converter,
                                                     RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseOpLowering>(converter, ctx);
  patterns.add<ApproximateMathLowering<math::ExpOp>, ApproximateMathLowering<math::Exp2Op>,
               ApproximateMathLowering<math::LogOp>, ApproximateMathLowering<math::Log2Op>,
               ApproximateMathLowering<math::RsqrtOp>, ApproximateMathLowering<math::TanhOp>>(
      converter, ctx);
  patterns.add<ConstantTileLowering, SplatLowering, MakeRangeLowering, BroadcastLowering,
               ExpandDimsLowering, AddPtrLowering>(converter, ctx);
  patterns.add<GridQueryLowering<ProgramIdOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                                 NVVM::BlockIdZOp>,
               GridQueryLowering<NumProgramsOp, NVVM::GridDimXOp, NVVM::GridDimYOp,
                                 NVVM::GridDimZOp>>(converter, ctx);
}
