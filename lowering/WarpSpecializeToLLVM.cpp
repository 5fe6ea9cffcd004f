//===- WarpSpecializeToLLVM.cpp - partitions of a program's warps as branches -===//
//
// After the tile lowering (whose barriers and bulk copies inside a tessel.warp_specialize
// already know their partition, TileToLLVMUtils.h), each tessel.warp_specialize becomes
// a branch on the warp: warps num_warps and up to the producer's blocks, the others to
// the consumers', both joining after it. Each partition first sets its register count
// (`setmaxnreg`, all threads of each warpgroup) where the op asks for it.
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/TileToLLVMUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

static void lowerWarpSpecialize(WarpSpecializeOp op) {
  Location loc = op.getLoc();
  unsigned consumers = getNumWarps(op);
  Block *before = op->getBlock();
  Block *after = before->splitBlock(op);
  Region *parent = before->getParent();
  Block *producer = &op.getProducer().front();
  Block *consumer = &op.getConsumers().front();
  parent->getBlocks().splice(after->getIterator(), op.getProducer().getBlocks());
  parent->getBlocks().splice(after->getIterator(), op.getConsumers().getBlocks());

  OpBuilder b = OpBuilder::atBlockEnd(before);
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                                           createI32(b, loc, consumers * 32));
  cf::CondBranchOp::create(b, loc, isProducer, producer, ValueRange(), consumer, ValueRange());
  auto setRegisters = [&](Block *block, StringRef direction, int32_t count) {
    OpBuilder start = OpBuilder::atBlockBegin(block);
    if (count)
      createInlinePtx(start, loc, Type(), ValueRange(),
                      ("setmaxnreg." + direction + ".sync.aligned.u32 " + Twine(count) + ";").str(),
                      "");
    OpBuilder end = OpBuilder::atBlockEnd(block);
    cf::BranchOp::create(end, loc, after);
  };
  bool reallocate = op.getConsumerRegisters() != 0;
  setRegisters(producer, "dec", reallocate ? op.getProducerRegisters() : 0);
  setRegisters(consumer, "inc", reallocate ? op.getConsumerRegisters() : 0);
  op.erase();
}

void mlir::tessel::lowerWarpSpecializeOps(ModuleOp module) {
  SmallVector<WarpSpecializeOp> ops;
  module.walk([&](WarpSpecializeOp op) { ops.push_back(op); });
  for (WarpSpecializeOp op : ops)
    lowerWarpSpecialize(op);
}
