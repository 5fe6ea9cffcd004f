//===- AxisInfo.h - contiguity, divisibility and constancy of tiles -----===//
//
// The facts that decide how wide a load or store can be, as in Triton's AxisInfo: per
// dimension, `contiguity` (runs of +1 steps), `divisibility` (the largest power of two
// dividing the first element of each run; bytes for pointers) and `constancy` (runs of
// equal values). Kernel parameters bring `tessel.divisibility` facts from the
// specialisation; everything else is derived forward through the ops.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_AXISINFO_H
#define TESSEL_LOWERING_AXISINFO_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tessel {

struct AxisInfo {
  /// One entry per dimension; scalars have one entry.
  SmallVector<int64_t, 2> contiguity, divisibility, constancy;

  static AxisInfo unknown(unsigned rank);
  unsigned getRank() const { return contiguity.size(); }
};

class AxisInfoAnalysis {
public:
  explicit AxisInfoAnalysis(Operation *root);
  /// Facts about `value` (pessimistic for values the analysis did not reach).
  AxisInfo get(Value value) const;

private:
  void visit(Operation *op);
  llvm::DenseMap<Value, AxisInfo> facts;
};

/// Widest vector (in elements, a power of two) for accessing `ptr` (a pointer tile)
/// along its fastest layout dimension, given the per-thread run length `run`, the
/// element size and the optional mask.
unsigned getAccessVectorWidth(const AxisInfoAnalysis &analysis, Value ptr, Value mask,
                              unsigned fastDim, unsigned run, unsigned elementBytes);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_AXISINFO_H
