//===- MarkKernelEntries.cpp - make tessel kernels PTX entry points -------===//
#include "dialect/Target.h"
#include "lowering/Passes.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELMARKKERNELENTRIES
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// Blocks per SM the module's dynamic shared memory (tessel.shared) allows on its target
/// (tessel.arch), each block also holding the 1 KB the driver reserves; 0 when unknown or
/// when the kernel uses none.
unsigned blocksBySharedMemory(ModuleOp module) {
  auto shared = module->getAttrOfType<IntegerAttr>("tessel.shared");
  if (!shared || shared.getInt() <= 0)
    return 0;
  int64_t perSM = Target::of(module).sharedBytesPerSM();
  return unsigned(perSM / (shared.getInt() + 1024));
}

struct TesselMarkKernelEntriesPass
    : public tessel::impl::TesselMarkKernelEntriesBase<TesselMarkKernelEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // A warp-specialized program also runs its producer warps.
    unsigned producerWarps = 0;
    if (auto attr = module->getAttrOfType<IntegerAttr>("tessel.producer_warps"))
      producerWarps = unsigned(attr.getInt());
    unsigned threads = (getNumWarps(module) + producerWarps) * 32;
    unsigned smemBlocks = blocksBySharedMemory(module);
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!func->hasAttr("tessel.kernel"))
        continue;
      func->removeAttr("tessel.kernel");
      func->setAttr("nvvm.kernel", UnitAttr::get(ctx));
      // The block size is fixed by num_warps: tell the back end, which budgets
      // registers by it.
      func->setAttr("nvvm.reqntid", DenseI32ArrayAttr::get(ctx, {int32_t(threads), 1, 1}));
      // When shared memory leaves room for so few blocks per SM that each thread may have
      // all 255 registers, say so (.minnctapersm): ptxas otherwise budgets registers for
      // an occupancy the shared memory rules out, and serialises fragment loads to stay
      // under that budget (+8-12% for a 3-stage tf32 tile, bench/results run 25). Never
      // emitted where it would cap registers below 255.
      if (smemBlocks && smemBlocks * threads <= 256)
        func->setAttr("nvvm.minctasm", IntegerAttr::get(IntegerType::get(ctx, 32), smemBlocks));
      // Tensor-map parameters are read in place (__grid_constant__), which only kernel
      // arguments may be.
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (func.getArgAttr(i, "tessel.grid_constant")) {
          func.removeArgAttr(i, "tessel.grid_constant");
          func.setArgAttr(i, "nvvm.grid_constant", UnitAttr::get(ctx));
        }
    }
  }
};
} // namespace
