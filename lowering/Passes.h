//===- Passes.h - lowering passes and the pipeline to PTX -----------------===//
#ifndef TESSEL_LOWERING_PASSES_H
#define TESSEL_LOWERING_PASSES_H

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::tessel {

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Passes.h.inc"

/// A `tessel.atomic_rmw` that -tessel-bulk-reductions marked: one bulk reduction a row,
/// from the scratch (AtomicToLLVM.cpp).
inline constexpr llvm::StringLiteral kBulkReductionAttr = "tessel.bulk";
/// The largest tile a bulk reduction stages in the scratch (bytes): the scratch is shared
/// memory that the rings of the same program need too.
inline constexpr int64_t kMaxBulkReductionBytes = 32 * 1024;

/// Options of the whole lowering, from tile IR to LLVM dialect.
struct LoweringOptions {
  /// 0: take the module's `tessel.num_warps` (4 if absent).
  unsigned numWarps = 0;
  /// Operands of async wgmma dots on sm_90a copied by the bulk tensor engine (TMA).
  std::string tmaOperands = "b";
  /// Operands of mma.sync dots on sm_90/sm_90a copied by the bulk tensor engine.
  std::string mmaTmaOperands = "ab";
  /// Programs of a cluster sharing one fetch of each bulk-copied B tile (1: none).
  unsigned multicastB = 1;
  /// Run -tessel-async-dots (register-A wgmma dots wait at their result's first use).
  bool asyncDots = true;
  /// Warp-specialize pipelined loops whose loads all come by TMA (a producer warpgroup).
  bool warpSpecialize = false;
  /// In such loops, consumer warpgroups take turns at their products (ping-pong).
  bool warpgroupTurns = false;
};

/// Tile IR (frontend output) -> LLVM + NVVM dialects, ready for translation.
void buildTesselToLLVMPipeline(OpPassManager &pm, const LoweringOptions &options);

/// Registers `tessel-lower-to-llvm` (the pipeline above) for tessel-opt.
void registerTesselPipelines();

/// Target of PTX emission.
struct PTXOptions {
  std::string arch = "sm_90"; // sm_80, sm_90, sm_90a
  unsigned optLevel = 3;
};

/// Where emitPTX's time went, in milliseconds.
struct PTXTimes {
  double llvmMs = 0;    ///< translation to LLVM IR and its optimisation pipeline
  double codegenMs = 0; ///< NVPTX code generation
};

/// Translates an LLVM-dialect module to LLVM IR, optimises it and emits PTX with
/// LLVM's NVPTX back end, in process. `llvmIR`, when given, receives the optimised IR;
/// `times`, where the time went.
FailureOr<std::string> emitPTX(ModuleOp module, const PTXOptions &options,
                               std::string *llvmIR = nullptr, PTXTimes *times = nullptr);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_PASSES_H
