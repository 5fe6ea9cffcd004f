//===- tessel-translate.cpp - LLVM-dialect MLIR to PTX (or LLVM IR) -------===//
//
// The last step of the pipeline on its own, for lit tests and for looking at what the
// back end makes of a lowered kernel:
//   tessel-opt k.mlir -tessel-lower-to-llvm | tessel-translate --mlir-to-ptx --arch=sm_90
//
//===----------------------------------------------------------------------===//
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

static llvm::cl::opt<std::string> arch("arch", llvm::cl::desc("sm_80, sm_90 or sm_90a"),
                                       llvm::cl::init("sm_90"));

static void registerDialects(DialectRegistry &registry) {
  registry.insert<LLVM::LLVMDialect, NVVM::NVVMDialect, func::FuncDialect>();
}

int main(int argc, char **argv) {
  TranslateFromMLIRRegistration toPTX(
      "mlir-to-ptx", "LLVM-dialect module to PTX through LLVM's NVPTX back end",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        tessel::PTXOptions options;
        options.arch = arch;
        FailureOr<std::string> ptx = tessel::emitPTX(cast<ModuleOp>(op), options);
        if (failed(ptx))
          return failure();
        os << *ptx;
        return success();
      },
      registerDialects);
  TranslateFromMLIRRegistration toLLVM(
      "mlir-to-optimized-llvmir", "LLVM-dialect module to optimised LLVM IR for NVPTX",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        tessel::PTXOptions options;
        options.arch = arch;
        std::string ir;
        if (failed(tessel::emitPTX(cast<ModuleOp>(op), options, &ir)))
          return failure();
        os << ir;
        return success();
      },
      registerDialects);
  return failed(mlirTranslateMain(argc, argv, "Tessel translation driver"));
}
