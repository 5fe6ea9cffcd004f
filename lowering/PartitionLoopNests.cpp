//===- PartitionLoopNests.cpp - specialized loops inside loops -------------===//
//
// See PartitionLoopNests.h. The consumers' loops around a specialized loop get three
// iter_args (slot, parity, holding) and the producer a mirror of each with two (slot,
// parity), threaded outermost first when the first specialized loop inside is met; each
// specialized loop then starts from the state its predecessor left (lifted out of the
// loops that do not contain it) and leaves its own to the yields around it.
//
//===----------------------------------------------------------------------===//
#include "lowering/PartitionLoopNests.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::pipeline;

LoopNests::Threaded *LoopNests::find(Operation *loop) {
  for (Threaded &t : threaded)
    if (t.consumers.getOperation() == loop || t.producer.getOperation() == loop)
      return &t;
  return nullptr;
}

OpBuilder pipeline::atProducerEnd(Block *block) {
  OpBuilder b = OpBuilder::atBlockEnd(block);
  if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
    b.setInsertionPoint(&block->back());
  return b;
}

void LoopNests::lift(PartitionState &state, Operation *consumersAt, Block *producerAt) {
  for (unsigned role = 0; role < state.consumers.size(); ++role) {
    Value &value = state.consumers[role];
    while (Threaded *t = find(value.getParentBlock()->getParentOp())) {
      if (t->consumers->isAncestor(consumersAt))
        break;
      value = t->consumers.getResult(t->consumerBase + role);
    }
  }
  for (unsigned role = 0; role < state.producer.size(); ++role) {
    Value &value = state.producer[role];
    while (Threaded *t = find(value.getParentBlock()->getParentOp())) {
      if (t->producer->isAncestor(producerAt->getParentOp()))
        break;
      value = t->producer.getResult(role);
    }
  }
}

void LoopNests::thread(scf::ForOp outer, Block *producerBlock, PartitionState &state,
                       RewriterBase &rewriter) {
  Location loc = outer.getLoc();
  unsigned base = outer.getNumRegionIterArgs();
  Operation *old = outer.getOperation();
  rewriter.setInsertionPoint(outer);
  FailureOr<LoopLikeOpInterface> replaced = outer.replaceWithAdditionalYields(
      rewriter, state.consumers, /*replaceInitOperandUsesInLoop=*/false,
      [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
        return SmallVector<Value>(args.begin(), args.end()); // leave() sets them
      });
  // (scf.for always takes more iter_args.)
  auto consumers = cast<scf::ForOp>(replaced->getOperation());
  retired->insert(old);
  OpBuilder b = atProducerEnd(producerBlock);
  // Its bounds are the consumers' values until recomputeIn clones them.
  auto mirror = scf::ForOp::create(b, loc, consumers.getLowerBound(), consumers.getUpperBound(),
                                   consumers.getStep(), state.producer);
  OpBuilder body = OpBuilder::atBlockEnd(mirror.getBody());
  scf::YieldOp::create(body, loc, mirror.getRegionIterArgs());
  threaded.push_back({consumers, mirror, base});
  state.consumers.assign(consumers.getRegionIterArgs().begin() + base,
                         consumers.getRegionIterArgs().end());
  state.producer.assign(mirror.getRegionIterArgs().begin(), mirror.getRegionIterArgs().end());
}

Block *LoopNests::enter(scf::ForOp loop, WarpSpecializeOp ws, PartitionState &state,
                        RewriterBase &rewriter) {
  SmallVector<Operation *> outers; // outermost first
  for (Operation *p = loop->getParentOp(); p != ws.getOperation(); p = p->getParentOp())
    outers.insert(outers.begin(), p);
  Block *producer = &ws.getProducer().front();
  for (Operation *outer : outers) {
    if (!find(outer)) {
      lift(state, outer, producer);
      thread(cast<scf::ForOp>(outer), producer, state, rewriter);
      producer = threaded.back().producer.getBody();
    } else {
      producer = find(outer)->producer.getBody();
    }
  }
  lift(state, loop, producer);
  return producer;
}

void LoopNests::leave(scf::ForOp loop, const PartitionState &state) {
  SmallVector<Value, 3> consumers(state.consumers);
  SmallVector<Value, 2> producer(state.producer);
  for (Operation *p = loop->getParentOp(); Threaded *t = find(p); p = p->getParentOp()) {
    Operation *yield = t->consumers.getBody()->getTerminator();
    Operation *mirrorYield = t->producer.getBody()->getTerminator();
    for (unsigned role = 0; role < consumers.size(); ++role) {
      yield->setOperand(t->consumerBase + role, consumers[role]);
      consumers[role] = t->consumers.getResult(t->consumerBase + role);
    }
    for (unsigned role = 0; role < producer.size(); ++role) {
      mirrorYield->setOperand(role, producer[role]);
      producer[role] = t->producer.getResult(role);
    }
  }
}

IRMapping LoopNests::inductionVariables() {
  IRMapping mapping;
  for (Threaded &t : threaded)
    mapping.map(t.consumers.getInductionVar(), t.producer.getInductionVar());
  return mapping;
}

LogicalResult pipeline::recomputeIn(Block *block, Region &from, IRMapping mapping) {
  Region *nest = block->getParent();
  DenseMap<Block *, Operation *> lastClone; // each block's clones go in order at its top
  std::function<LogicalResult(Value)> materialize = [&](Value v) -> LogicalResult {
    Operation *def = v.getDefiningOp();
    if (!def || mapping.contains(v) || !from.isAncestor(def->getParentRegion()))
      return success();
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return def->emitError("the producer partition cannot compute this again");
    // Into the innermost block of the nest that holds one of its operands (a mirror's
    // induction variable, or a clone placed there), else the partition's own.
    Block *into = block;
    for (Value operand : def->getOperands()) {
      if (failed(materialize(operand)))
        return failure();
      Region *at = mapping.lookupOrDefault(operand).getParentRegion();
      if (nest->isAncestor(at) && into->getParent()->isAncestor(at))
        into = &at->front();
    }
    OpBuilder b = OpBuilder::atBlockBegin(into);
    if (Operation *last = lastClone.lookup(into))
      b.setInsertionPointAfter(last);
    lastClone[into] = b.clone(*def, mapping);
    return success();
  };
  SmallVector<OpOperand *> uses;
  block->walk([&](Operation *op) {
    for (OpOperand &use : op->getOpOperands())
      uses.push_back(&use);
  });
  for (OpOperand *use : uses)
    if (failed(materialize(use->get())))
      return failure();
  for (OpOperand *use : uses)
    if (Value mapped = mapping.lookupOrNull(use->get()))
      use->set(mapped);
  return success();
}
