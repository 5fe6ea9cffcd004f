//===- AllocateSharedMemory.cpp - size the shared scratch buffer ----------===//
#include "dialect/Layout.h"
#include "lowering/Passes.h"
#include "lowering/TileToLLVMUtils.h"
#include "lowering/WgmmaLayout.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELALLOCATESHAREDMEMORY
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
struct TesselAllocateSharedMemoryPass
    : public tessel::impl::TesselAllocateSharedMemoryBase<TesselAllocateSharedMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t bytes = 0;
    bool failedToSize = false;
    module.walk([&](Operation *op) {
      FailureOr<int64_t> need = getScratchBytes(op);
      if (failed(need)) {
        failedToSize = true;
        return;
      }
      bytes = std::max(bytes, *need);
    });
    if (failedToSize)
      return signalPassFailure();
    // Buffers (tessel.local_alloc) live across loops while the scratch users come and
    // go, so they follow the scratch; 128-byte aligned (bank-conflict-free rows).
    module.walk([&](LocalAllocOp alloc) {
      // wgmma's 128-byte swizzle repeats every 1024 bytes, from a 1024-aligned address.
      int64_t align = alloc.getType().isPadded() ? 128 : 1024;
      bytes = (bytes + align - 1) / align * align;
      alloc.setOffset(bytes);
      bytes += (alloc.getType().getSizeInBytes() + 127) / 128 * 128;
    });
    bytes = (bytes + 15) / 16 * 16;
    module->setAttr("tessel.shared",
                    IntegerAttr::get(IntegerType::get(&getContext(), 32), bytes));
  }
};
} // namespace
