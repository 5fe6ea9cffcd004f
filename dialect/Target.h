//===- dialect/Target.h - the module's launch shape and target --*- C++ -*-===//
//
// MLIRGen puts a kernel's num_warps and num_stages on its module and the
// compiler adds the target arch; every pass reads them here, with one default
// each, and asks the Target which instructions the arch has instead of
// comparing arch names.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TARGET_H
#define TESSEL_DIALECT_TARGET_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::tessel {

inline constexpr unsigned kDefaultNumWarps = 4;
inline constexpr unsigned kDefaultNumStages = 1;

/// The module's (or the enclosing module's) `tessel.num_warps`, else 4.
unsigned getNumWarps(Operation *op);
void setNumWarps(ModuleOp module, unsigned numWarps);
/// `tessel.num_stages`, else 1 (no pipelining).
unsigned getNumStages(Operation *op);
void setNumStages(ModuleOp module, unsigned numStages);

/// What the target arch (`tessel.arch`: sm_80, sm_90 or sm_90a) offers the lowering.
/// A module without an arch gets none of the Hopper instructions.
class Target {
public:
  explicit Target(StringRef arch) : arch_(arch) {}
  static Target of(Operation *op);
  static void set(ModuleOp module, StringRef arch);

  StringRef arch() const { return arch_; }
  /// wgmma.mma_async: only the arch-specific target (sm_90a).
  bool hasWgmma() const { return arch_ == "sm_90a"; }
  /// Hopper's bulk tensor copies (TMA) on transaction-counting mbarriers, clusters.
  bool hasBulkTensorCopies() const { return arch_ == "sm_90" || arch_ == "sm_90a"; }
  /// cvt.rn.tf32.f32 (round to nearest); earlier targets have only cvt.rna.
  bool hasRoundToNearestTf32() const { return hasBulkTensorCopies(); }
  /// red.global.add.v2/v4.f32 (vector reductions into global memory).
  bool hasVectorReductions() const { return hasBulkTensorCopies(); }
  /// Shared memory per SM in bytes (0: unknown).
  int64_t sharedBytesPerSM() const;

private:
  StringRef arch_;
};

} // namespace mlir::tessel

#endif // TESSEL_DIALECT_TARGET_H
