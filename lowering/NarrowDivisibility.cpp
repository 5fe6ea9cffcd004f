//===- NarrowDivisibility.cpp - assume divisibility only where it pays ----===//
//
// The specialised variant of a kernel is compiled with every pointer and integer
// parameter assumed a multiple of 16 (tessel.divisibility), and the runtime picks it
// only when every one is. Most integer parameters never reach an address: attention's
// head count (12 in GPT-2 small) only splits program_id(1) into batch and head, yet a
// count that is not a multiple of 16 sent every launch to the generic variant, whose
// loads are scalar. This pass keeps an integer parameter's assumption only where the
// facts that decide access widths depend on it (AxisInfo.h): the pointer operands of
// every memory access, and their masks' constancy along the dimensions where the
// pointer is contiguous (the only ones a vector can run along). Pointers keep theirs,
// and so do the row counts of tf32 dots' B blocks, which the pipeliner reads directly.
// What the assumptions came to is recorded, per function, in the module's
// `tessel.divisible_args` (argument numbers), for the package's divisible_by_16.
//
//===----------------------------------------------------------------------===//
#include "lowering/AxisInfo.h"
#include "lowering/BlockAccess.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELNARROWDIVISIBILITY
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

constexpr StringLiteral kDivisibility = "tessel.divisibility";
constexpr int64_t kWidest = 16; // bytes of the widest access, elements of the narrowest

/// The facts of `func` that access widths are computed from, in a fixed order.
SmallVector<int64_t> accessFacts(func::FuncOp func) {
  AxisInfoAnalysis analysis(func);
  SmallVector<int64_t> facts;
  func.walk([&](Operation *op) {
    SmallVector<Value> pointers, masks;
    for (Value operand : op->getOperands()) {
      Type elem = getElementTypeOrSelf(operand.getType());
      if (isa<PtrType>(elem))
        pointers.push_back(operand);
      else if (elem.isInteger(1) && isa<RankedTensorType>(operand.getType()))
        masks.push_back(operand);
    }
    // No access is wider than 16 bytes (16 elements of i8): facts past that are not
    // used, and would keep assumptions that only make a large power of two larger.
    auto capped = [&](ArrayRef<int64_t> values) {
      for (int64_t v : values)
        facts.push_back(std::min<int64_t>(v, kWidest));
    };
    for (Value ptr : pointers) {
      AxisInfo info = analysis.get(ptr);
      capped(info.contiguity);
      capped(info.divisibility);
      capped(info.constancy);
      for (Value mask : masks) {
        AxisInfo maskInfo = analysis.get(mask);
        for (unsigned d = 0; d < info.getRank() && d < maskInfo.getRank(); ++d)
          if (info.contiguity[d] > 1)
            capped(maskInfo.constancy[d]);
      }
    }
  });
  return facts;
}

struct TesselNarrowDivisibilityPass
    : public tessel::impl::TesselNarrowDivisibilityBase<TesselNarrowDivisibilityPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    NamedAttrList kept;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<int64_t> assumed;
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (func.getArgAttr(i, kDivisibility))
          assumed.push_back(i);
      if (assumed.empty())
        continue;
      // The pipeliner reads one assumption directly: the row count of an f32 block that
      // is a dot's B, which decides whether its rows may land interleaved in groups of 8
      // for tf32 mma.sync (PipelinePlan.cpp).
      llvm::SmallDenseSet<int64_t> readDirectly;
      func.walk([&](DotOp dot) {
        auto load = dot.getB().getDefiningOp<LoadOp>();
        if (!load || !getElementTypeOrSelf(load.getType()).isF32())
          return;
        FailureOr<BlockAccess> access = matchBlockAccess(load);
        if (succeeded(access))
          readDirectly.insert(access->rows.argument);
      });
      SmallVector<int64_t> wanted = accessFacts(func), result;
      // One parameter at a time, against the facts with every assumption: dropping it
      // (with those dropped before) must leave every fact as it was.
      for (int64_t i : assumed) {
        unsigned arg = unsigned(i);
        if (isa<PtrType>(func.getArgument(arg).getType()) || readDirectly.contains(i)) {
          result.push_back(i);
          continue;
        }
        Attribute attr = func.getArgAttr(arg, kDivisibility);
        func.removeArgAttr(arg, kDivisibility);
        if (accessFacts(func) != wanted) {
          func.setArgAttr(arg, kDivisibility, attr);
          result.push_back(i);
        }
      }
      kept.set(func.getSymName(), DenseI64ArrayAttr::get(&getContext(), result));
    }
    if (!kept.empty())
      module->setAttr("tessel.divisible_args", kept.getDictionary(&getContext()));
  }
};

} // namespace
