//===- PartitionLoopNests.h - specialized loops inside loops ---------------===//
//
// A warp-specialized program's partitions run its pipelined loops in turn, each handing
// the next where its rings stand: the consumers' slot, phase parity and whether they hold
// a slot unreleased, the producer's slot and parity (PartitionState). A pipelined loop
// may sit inside other loops of the consumers' partition (a persistent kernel's loop
// over tiles): the producer then runs a mirror of each such loop (same bounds, recomputed
// by it), the consumers' loop carries the consumers' state from one of its iterations to
// the next and the mirror the producer's, so that every iteration's loops continue the
// same rings. LoopNests threads them (enter, before a pipelined loop is rewritten; leave,
// after) and recomputeIn clones what the producer's code needs from the consumers' into
// the producer, inside the mirrors where it depends on their induction variables.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LOWERING_PARTITIONLOOPNESTS_H
#define TESSEL_LOWERING_PARTITIONLOOPNESTS_H

#include "dialect/TesselDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tessel::pipeline {

/// Where the partitions' rings stand at a point of the program.
struct PartitionState {
  SmallVector<Value, 3> consumers; // slot, phase parity, holding (i1)
  SmallVector<Value, 2> producer;  // slot, phase parity
};

class LoopNests {
public:
  /// `retired`: where the loops replaced by their threaded form are recorded (the pass
  /// still holds them in its list).
  explicit LoopNests(llvm::DenseSet<Operation *> *retired) : retired(retired) {}

  /// Before `loop` (in `ws`'s consumers' region) is rewritten: threads the loops around it
  /// that are not yet (the consumers' loop carries `state`, its new mirror the producer's),
  /// and makes `state` visible at `loop` (values left inside loops that do not contain it
  /// are taken from those loops' results). Returns the producer's block for the loop's
  /// producer loop: the partition's own, or the innermost mirror's body.
  Block *enter(scf::ForOp loop, WarpSpecializeOp ws, PartitionState &state,
               RewriterBase &rewriter);
  /// After the loop: `state` (its partitions' results) becomes what the loops around it
  /// yield, and theirs what the loops around them yield.
  void leave(scf::ForOp loop, const PartitionState &state);
  /// The mirrors' induction variables for the consumers' loops'.
  IRMapping inductionVariables();

private:
  struct Threaded {
    scf::ForOp consumers, producer;
    unsigned consumerBase; // the first of the consumers' loop's added iter_args
  };
  /// The threaded pair a consumers' loop or a mirror belongs to, if any.
  Threaded *find(Operation *loop);
  void lift(PartitionState &state, Operation *consumersAt, Block *producerAt);
  void thread(scf::ForOp outer, Block *producerBlock, PartitionState &state,
              RewriterBase &rewriter);

  SmallVector<Threaded> threaded;
  llvm::DenseSet<Operation *> *retired;
};

/// A builder at the end of a producer block: before the mirror's yield, or at the end of
/// the partition's own block (which has no terminator).
OpBuilder atProducerEnd(Block *block);

/// Clones into `block` (a producer partition's) the ops of `from` (the consumers') that
/// its ops use, pure and region-free, operands first, each into the innermost block of
/// `block`'s nest its operands allow (`mapping` seeded with the mirrors' induction
/// variables), and redirects the uses.
LogicalResult recomputeIn(Block *block, Region &from, IRMapping mapping);

} // namespace mlir::tessel::pipeline

#endif
