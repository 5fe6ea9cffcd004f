//===- EmitPTX.cpp - LLVM dialect -> LLVM IR -> PTX, in process -----------===//
#include "lowering/Passes.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/OptBisect.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <chrono>
#include <mutex>

using namespace mlir;

static void initializeNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

static double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

FailureOr<std::string> mlir::tessel::emitPTX(ModuleOp module, const PTXOptions &options,
                                             std::string *llvmIR, PTXTimes *times) {
  auto start = std::chrono::steady_clock::now();
  initializeNVPTX();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  // NVPTX's code generator runs straight-line strength reduction, which in LLVM 22
  // asks, per candidate, whether poison would trigger UB: a scan of the basic block,
  // so quadratic in a block's length. Our kernels are unrolled tiles, one long block
  // each: on FlashAttention's variants it was ~90% of the back end's time (1.5 s of
  // 1.7 s on a dK/dV tile) and changed none of the PTX tesselc emits for the
  // kernels of kernels/ (bench/results/build-time-2026-11-28/). ptxas strength-
  // reduces address arithmetic itself.
  llvm::OptDisable skipQuadraticPasses;
  skipQuadraticPasses.setDisabled("slsr");
  llvmContext.setOptPassGate(skipQuadraticPasses);
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");

  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("NVPTX target unavailable: ") << error;
  // sm_90a needs PTX 8.0, Hopper's vector reductions (red.global.add.v4.f32) 8.1; the
  // CUDA 12.1+/13 drivers we target accept both.
  const char *ptxVersion = StringRef(options.arch).starts_with("sm_90") ? "+ptx81" : "+ptx80";
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, options.arch, ptxVersion, llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return module.emitError("cannot create an NVPTX target machine for ") << options.arch;
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return module.emitError("internal error: invalid LLVM IR produced");

  // The standard optimisation pipeline (unrolled loops, folded index math, ...).
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine.get());
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = options.optLevel >= 3   ? llvm::OptimizationLevel::O3
                                  : options.optLevel == 2 ? llvm::OptimizationLevel::O2
                                  : options.optLevel == 1 ? llvm::OptimizationLevel::O1
                                                          : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? builder.buildO0DefaultPipeline(level)
                                    : builder.buildPerModuleDefaultPipeline(level);
  mpm.run(*llvmModule, mam);

  if (llvmIR) {
    llvmIR->clear();
    llvm::raw_string_ostream os(*llvmIR);
    llvmModule->print(os, nullptr);
  }

  if (times)
    times->llvmMs = msSince(start);
  auto codegenStart = std::chrono::steady_clock::now();
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, stream, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return module.emitError("the NVPTX back end cannot emit assembly");
  codegen.run(*llvmModule);
  if (times)
    times->codegenMs = msSince(codegenStart);
  return std::string(ptx.str());
}
