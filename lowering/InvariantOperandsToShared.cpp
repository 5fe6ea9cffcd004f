//===- InvariantOperandsToShared.cpp - loop-invariant wgmma A in shared memory -===//
//
// A tile loaded once before a loop and used inside it only as the A operand of dots
// whose B the software pipeliner put in a ring (FlashAttention's backward: K and V of the
// program's key tile against each query tile's ring slots) is read by register-A wgmma
// from registers held across the whole loop: 32 registers a thread for a 64 x 128 bf16
// tile on a warpgroup. With this pass it is copied once into a shared buffer instead,
//   %k = tessel.load %ptrs, %mask               (before the loop)
// becomes
//   %buf = tessel.local_alloc : !tessel.shared<1x64x128xbf16>
//   %k = tessel.local_index %buf[0]
//   tessel.async_copy %ptrs, %mask into %k ; tessel.async_commit ; tessel.async_wait 0
// and the dots read it by descriptor (wgmma from two descriptors; its A may span several
// 128-byte blocks, its B be a ring slot read K-major through `tessel.trans`). Which is
// faster depends on the kernel (shared-memory bandwidth against registers), so the
// kernel asks for it, per load: `load(..., shared=True)` (the `shared` attribute), which
// a constexpr can set per configuration.
//
// Conditions: sm_90a, the load marked, its `other` absent or zero (masked-off elements
// are zero filled), every use the A of such a dot in a loop that does not contain the
// load, and the dot able to run on wgmma from shared memory once A is (WgmmaLayout.h).
// A marked load that does not qualify stays in registers (a hint, as on any target). In a
// warp-specialized program the load, and so the copy, is the consumer warps' (their
// barrier, not the producer's, orders it before the dots).
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/Passes.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELINVARIANTOPERANDSTOSHARED
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {
/// Whether `dot`, with `load` (its A) in shared memory, runs on wgmma from descriptors:
/// inside a loop that does not hold the load, B a ring slot (or its transposed view).
bool qualifies(DotOp dot, LoadOp load, unsigned numWarps, StringRef arch) {
  auto loop = dot->getParentOfType<scf::ForOp>();
  if (dot.getA() != load.getResult() || dot.getB() == load.getResult() || !loop ||
      loop->isAncestor(load) || !getSharedAlloc(dot.getB()))
    return false;
  auto a = cast<RankedTensorType>(load.getType());
  auto b = cast<ShapedType>(dot.getB().getType());
  return canUseWgmmaFromDescriptors(a.getElementType(), a.getDimSize(0), b.getDimSize(1),
                                    a.getDimSize(1), bool(dot.getB().getDefiningOp<TransOp>()),
                                    numWarps, arch);
}

struct InvariantOperandsToSharedPass
    : mlir::tessel::impl::TesselInvariantOperandsToSharedBase<InvariantOperandsToSharedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef arch = Target::of(module).arch();
    unsigned numWarps = getNumWarps(module);
    SmallVector<LoadOp> loads;
    module.walk([&](LoadOp load) {
      auto type = dyn_cast<RankedTensorType>(load.getType());
      if (!load->hasAttr(LoadOp::getSharedHintName()) || !type || type.getRank() != 2 ||
          (load.getOther() && !isZeroTile(load.getOther())) || load->use_empty())
        return;
      if (llvm::all_of(load->getUsers(), [&](Operation *user) {
            auto dot = dyn_cast<DotOp>(user);
            return dot && qualifies(dot, load, numWarps, arch);
          }))
        loads.push_back(load);
    });
    for (LoadOp load : loads) {
      auto type = cast<RankedTensorType>(load.getType());
      OpBuilder b(load);
      Location loc = load.getLoc();
      SmallVector<int64_t> shape{1, type.getDimSize(0), type.getDimSize(1)};
      auto buffer = LocalAllocOp::create(
          b, loc, SharedType::get(b.getContext(), shape, type.getElementType()), IntegerAttr());
      Value zero = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
      auto slotType = SharedType::get(b.getContext(), ArrayRef<int64_t>(shape).drop_front(),
                                      type.getElementType());
      auto tile = LocalIndexOp::create(b, loc, slotType, buffer, zero);
      AsyncCopyOp::create(b, loc, load.getPtr(), tile, load.getMask());
      AsyncCommitOp::create(b, loc);
      AsyncWaitOp::create(b, loc, 0);
      load.getResult().replaceAllUsesWith(tile.getResult());
      load.erase();
    }
  }
};
} // namespace
