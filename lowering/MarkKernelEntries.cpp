//===- MarkKernelEntries.cpp - make tessel kernels PTX entry points -------===//
#include "lowering/Passes.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELMARKKERNELENTRIES
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;

namespace {
struct TesselMarkKernelEntriesPass
    : public tessel::impl::TesselMarkKernelEntriesBase<TesselMarkKernelEntriesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    unsigned threads = 128;
    if (auto attr = module->getAttrOfType<IntegerAttr>("tessel.num_warps"))
      threads = attr.getInt() * 32;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!func->hasAttr("tessel.kernel"))
        continue;
      func->removeAttr("tessel.kernel");
      func->setAttr("nvvm.kernel", UnitAttr::get(ctx));
      // The block size is fixed by num_warps: tell the back end, which budgets
      // registers by it.
      func->setAttr("nvvm.reqntid", DenseI32ArrayAttr::get(ctx, {int32_t(threads), 1, 1}));
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
