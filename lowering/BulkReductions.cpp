//===- BulkReductions.cpp - atomic adds of whole rows by the bulk copy engine ---===//
//
// An atomic add of an f32 tile whose rows are contiguous, 16-byte aligned runs of memory
// (a block of a row-major matrix, `acc + rows[:, None] * ld + cols[None, :]`), masked by
// whole rows if at all, can go as one reduction a row on Hopper: the tile is written to
// shared memory and `cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32` adds each
// row into global memory in the bulk copy engine (FlashAttention-3's dQ), instead of a
// `red.global.add` for every element (or four) from every thread. This pass marks the
// atomics that qualify (`tessel.bulk`): -tessel-allocate-shared-memory gives them the
// tile's bytes of scratch and AtomicToLLVM.cpp lowers them.
//
// Conditions: sm_90 or sm_90a; an add of a 2-D f32 tile of N columns (N * 4 a multiple
// of 16 bytes, the tile at most kMaxBulkReductionBytes); its pointers contiguous along
// each row for all N elements, each row's start 16-byte aligned (AxisInfo.h: so in the
// specialised variant, where the row stride is known to be a multiple of 16); its mask,
// if any, the same along each row. Anything else stays per element.
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/AxisInfo.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELBULKREDUCTIONS
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool qualifies(AtomicRMWOp op, const AxisInfoAnalysis &analysis) {
  auto type = dyn_cast<RankedTensorType>(op.getValue().getType());
  if (op.getKind() != "add" || !type || type.getRank() != 2 || !type.getElementType().isF32())
    return false;
  int64_t columns = type.getDimSize(1), rowBytes = columns * 4;
  if (rowBytes % 16 != 0 || type.getNumElements() * 4 > kMaxBulkReductionBytes)
    return false;
  AxisInfo ptr = analysis.get(op.getPtr());
  if (ptr.getRank() != 2 || ptr.contiguity[1] < columns || ptr.divisibility[1] < 16)
    return false;
  return !op.getMask() || analysis.get(op.getMask()).constancy[1] >= columns;
}

struct BulkReductionsPass
    : mlir::tessel::impl::TesselBulkReductionsBase<BulkReductionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!Target::of(module).hasBulkTensorCopies())
      return;
    for (auto func : module.getOps<func::FuncOp>()) {
      AxisInfoAnalysis analysis(func);
      func.walk([&](AtomicRMWOp op) {
        if (qualifies(op, analysis))
          op->setAttr(kBulkReductionAttr, UnitAttr::get(&getContext()));
      });
    }
  }
};

} // namespace
