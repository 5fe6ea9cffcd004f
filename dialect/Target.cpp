//===- dialect/Target.cpp - the module's launch shape and target ----------===//
#include "dialect/Target.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

ModuleOp moduleOf(Operation *op) {
  if (auto module = dyn_cast<ModuleOp>(op))
    return module;
  return op->getParentOfType<ModuleOp>();
}

unsigned getUnsigned(Operation *op, StringRef name, unsigned fallback) {
  ModuleOp module = moduleOf(op);
  auto attr = module ? module->getAttrOfType<IntegerAttr>(name) : IntegerAttr();
  return attr ? unsigned(attr.getInt()) : fallback;
}

void setI32(ModuleOp module, StringRef name, unsigned value) {
  module->setAttr(name, IntegerAttr::get(IntegerType::get(module.getContext(), 32), value));
}

} // namespace

unsigned mlir::tessel::getNumWarps(Operation *op) {
  return getUnsigned(op, "tessel.num_warps", kDefaultNumWarps);
}

void mlir::tessel::setNumWarps(ModuleOp module, unsigned numWarps) {
  setI32(module, "tessel.num_warps", numWarps);
}

unsigned mlir::tessel::getNumStages(Operation *op) {
  return getUnsigned(op, "tessel.num_stages", kDefaultNumStages);
}

void mlir::tessel::setNumStages(ModuleOp module, unsigned numStages) {
  setI32(module, "tessel.num_stages", numStages);
}

Target Target::of(Operation *op) {
  ModuleOp module = moduleOf(op);
  auto attr = module ? module->getAttrOfType<StringAttr>("tessel.arch") : StringAttr();
  return Target(attr ? attr.getValue() : StringRef());
}

void Target::set(ModuleOp module, StringRef arch) {
  module->setAttr("tessel.arch", StringAttr::get(module.getContext(), arch));
}

int64_t Target::sharedBytesPerSM() const {
  if (hasBulkTensorCopies())
    return 233472; // 228 KB
  return arch_ == "sm_80" ? 167936 : 0; // 164 KB
}
