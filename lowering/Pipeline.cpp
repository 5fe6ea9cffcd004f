//===- Pipeline.cpp - the lowering pipeline, tile IR to LLVM dialect ------===//
#include "lowering/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tessel::buildTesselToLLVMPipeline(OpPassManager &pm, const LoweringOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Address arithmetic that does not change across iterations leaves the loop (and the
  // pipeliner's cloned address slices stay small).
  pm.addPass(createLoopInvariantCodeMotionPass());
  // Before anything reads the divisibility facts (the pipeliner, layouts, accesses).
  pm.addPass(createTesselNarrowDivisibility());
  TesselSoftwarePipelineOptions pipelineOptions;
  pipelineOptions.tmaOperands = options.tmaOperands;
  pipelineOptions.mmaTmaOperands = options.mmaTmaOperands;
  pipelineOptions.multicastB = options.multicastB;
  pipelineOptions.warpSpecialize = options.warpSpecialize;
  pipelineOptions.warpgroupTurns = options.warpgroupTurns;
  pm.addPass(createTesselSoftwarePipeline(pipelineOptions));
  pm.addPass(createTesselInvariantOperandsToShared());
  TesselAssignLayoutsOptions layoutOptions;
  layoutOptions.numWarps = options.numWarps;
  pm.addPass(createTesselAssignLayouts(layoutOptions));
  // Rematerialises cheap producers instead of converting their layout.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.asyncDots)
    pm.addPass(createTesselAsyncDots());
  // Before the scratch is sized: a bulk reduction stages its tile there.
  pm.addPass(createTesselBulkReductions());
  pm.addPass(createTesselAllocateSharedMemory());
  pm.addPass(createTesselInsertBarriers());
  pm.addPass(createConvertTesselToLLVM());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createTesselMarkKernelEntries());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<unsigned> numWarps{*this, "num-warps", llvm::cl::desc("Warps per program (0: the module's tessel.num_warps)"),
                            llvm::cl::init(0)};
};
} // namespace

void mlir::tessel::registerTesselPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "tessel-lower-to-llvm", "Lower tile IR to the LLVM and NVVM dialects",
      [](OpPassManager &pm, const PipelineOptions &opts) {
        LoweringOptions options;
        options.numWarps = opts.numWarps;
        buildTesselToLLVMPipeline(pm, options);
      });
}
