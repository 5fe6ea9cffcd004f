//===- ConvertTesselToLLVM.cpp - distribute tiles over threads ------------===//
#include "lowering/Passes.h"
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_CONVERTTESSELTOLLVM
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct ConvertTesselToLLVMPass : public tessel::impl::ConvertTesselToLLVMBase<ConvertTesselToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // Facts about the original tiles, gathered before they are taken apart.
    AxisInfoAnalysis axisInfo(module);
    assignTmaIssuers(module);

    int64_t sharedBytes = 0;
    if (auto attr = module->getAttrOfType<IntegerAttr>("tessel.shared"))
      sharedBytes = attr.getInt();
    if (sharedBytes > 0 && !module.lookupSymbol(kSharedMemoryName)) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      // Dynamic shared memory: its size comes with the launch (package metadata).
      LLVM::GlobalOp::create(b, module.getLoc(),
                             LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 0),
                             /*isConstant=*/false, LLVM::Linkage::External, kSharedMemoryName,
                             Attribute(), /*alignment=*/16, /*addrSpace=*/3);
    }

    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion(
        [ctx](PtrType) -> Type { return LLVM::LLVMPointerType::get(ctx, 1); });
    // A shared-memory buffer is its address.
    converter.addConversion(
        [ctx](SharedType) -> Type { return LLVM::LLVMPointerType::get(ctx, 3); });
    converter.addConversion([](RankedTensorType type, SmallVectorImpl<Type> &results)
                                -> std::optional<LogicalResult> {
      FailureOr<TileLayout> layout = TileLayout::get(type);
      if (failed(layout))
        return failure();
      results.append(layout->getNumRegisters(), convertElementType(type.getElementType()));
      return success();
    });

    ConversionTarget target(*ctx);
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect>();
    target.addIllegalDialect<TesselDialect>();
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>(
        [&](Operation *op) { return converter.isLegal(op); });
    target.addIllegalOp<math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op, math::RsqrtOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType());
    });
    target.addLegalOp<ModuleOp, func::ReturnOp>();
    // Its regions are lowered in place; the op itself once they are (below).
    target.addLegalOp<WarpSpecializeOp>();

    RewritePatternSet patterns(ctx);
    populateElementwiseToLLVMPatterns(converter, patterns);
    populateMemoryToLLVMPatterns(converter, patterns, axisInfo);
    populateReduceToLLVMPatterns(converter, patterns);
    populateAtomicToLLVMPatterns(converter, patterns, axisInfo);
    populateConvertLayoutToLLVMPatterns(converter, patterns);
    populateDotToLLVMPatterns(converter, patterns);
    populateTransToLLVMPatterns(converter, patterns);
    populateTmaToLLVMPatterns(converter, patterns);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    lowerWarpSpecializeOps(module);

    // Facts only the lowering needed; LLVM would not know these attributes.
    for (auto func : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.removeArgAttr(i, "tessel.divisibility");
  }
};
} // namespace
