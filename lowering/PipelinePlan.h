//===- PipelinePlan.h - what the software pipeliner does with one loop -----===//
//
// The plan of -tessel-software-pipeline (SoftwarePipeline.cpp) for one loop: which loads
// are copied ahead, by which engine (cp.async or the bulk tensor engine), into rings of
// which layout, how many iterations ahead, which dots stay in flight across iterations
// and where the copies go in the body. PipelinePlan.cpp decides; SoftwarePipeline.cpp
// emits; PipelineTensorMaps.cpp builds what the bulk copies need.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_PIPELINEPLAN_H
#define TESSEL_LOWERING_PIPELINEPLAN_H

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace mlir::tessel::pipeline {

/// The pass's options (Passes.td): operands copied by TMA for wgmma and for mma.sync
/// dots, and the cluster size that shares B tiles.
struct PipelineOptions {
  StringRef tmaOperands, mmaTmaOperands;
  unsigned multicastB;
  bool warpSpecialize = false;
  bool warpgroupTurns = false;
};

struct PipelinePlan {
  unsigned stages = 0;
  unsigned numWarps = 0;
  int64_t step = 0; // the loop's constant step
  /// The ops of the body that compute the loads' addresses (cloned for the copies).
  llvm::SetVector<Operation *> slice;
  SmallVector<LoadOp> loads;
  /// Dots that stay in flight into the next iteration (wgmma), and the mma.sync dots
  /// whose operands may come 128-byte swizzled.
  SmallVector<DotOp> asyncDots, mmaDots;
  SmallVector<bool> viaTma;              // per load: copied by the bulk tensor engine
  SmallVector<SharedLayout> ringLayouts; // per load: the ring's layout
  bool mmaPath = false;    // every dot runs on mma.sync or tf32 wgmma
  bool anyCpAsync = false; // some load is copied by cp.async
  bool copiesLast = false; // the in-loop copies go after the dots
  unsigned distance = 0;   // iterations copied ahead
  unsigned tmaCount = 0;   // loads copied by the bulk tensor engine
  /// Producer warps issue the copies and the numWarps consumer warps compute
  /// (tessel.warp_specialize): every load by the bulk tensor engine, the dots on wgmma,
  /// the loop at the function's top level (or in the consumers' partition an earlier
  /// loop made), possibly inside loops (PartitionLoopNests.h), and what its copies need
  /// computable again by the producer (pure ops of the function's body).
  bool warpSpecialize = false;
};

/// Warps of a warp-specialized program's producer: one warpgroup.
inline constexpr unsigned kProducerWarps = 4;

/// The plan for `loop` with `stages` slots per ring; none when the loop has nothing to
/// pipeline.
std::optional<PipelinePlan> planPipeline(scf::ForOp loop, unsigned stages, unsigned numWarps,
                                         StringRef arch, const PipelineOptions &options);

/// Whether `load` feeds a dot as its A operand.
bool isAOperand(LoadOp load);

} // namespace mlir::tessel::pipeline

#endif // TESSEL_LOWERING_PIPELINEPLAN_H
