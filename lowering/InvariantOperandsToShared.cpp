//===- InvariantOperandsToShared.cpp - loop-invariant wgmma operands in smem -===//
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
// A tile the loop also reads as the B of a register-A wgmma (FlashAttention's dQ = dS K
// inside the dK/dV tile: K is both) gets a second buffer for that role, which becomes
// wgmma_b and is read N-major as a ring slot would be: the two layouts differ, so the tile
// is copied once a role.
//
// Conditions: sm_90a, the load marked, its `other` absent or zero (masked-off elements
// are zero filled), every use the A of such a dot or the B of a register-A wgmma (bf16 or
// f16, N a multiple of 64) in a loop that does not contain the load, and the dot able to
// run on wgmma from shared memory once its operands are (WgmmaLayout.h).
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
/// How a dot reads the load once it is in shared memory.
enum class Role { A, B };

/// Whether `dot` can read `load` from a one-slot buffer, and as which operand: inside a
/// loop that does not hold the load, as the A of a wgmma from two descriptors (B a ring
/// slot or its transposed view), or as the B (read N-major, as a ring slot) of a
/// register-A wgmma (A a register tile: FlashAttention's dQ = dS K inside the dK/dV tile).
std::optional<Role> roleIn(DotOp dot, LoadOp load, unsigned numWarps, StringRef arch) {
  auto loop = dot->getParentOfType<scf::ForOp>();
  if (!loop || loop->isAncestor(load) || dot.getA() == dot.getB())
    return std::nullopt;
  auto tile = cast<RankedTensorType>(load.getType());
  Type element = tile.getElementType();
  if (dot.getA() == load.getResult()) {
    if (!getSharedAlloc(dot.getB()))
      return std::nullopt;
    auto b = cast<ShapedType>(dot.getB().getType());
    if (!canUseWgmmaFromDescriptors(element, tile.getDimSize(0), b.getDimSize(1),
                                    tile.getDimSize(1), bool(dot.getB().getDefiningOp<TransOp>()),
                                    numWarps, arch))
      return std::nullopt;
    return Role::A;
  }
  auto a = dyn_cast<RankedTensorType>(dot.getA().getType());
  if (!a || !Target(arch).hasWgmma() || numWarps == 0 || numWarps % 4 != 0 ||
      (!element.isBF16() && !element.isF16()))
    return std::nullopt;
  int64_t m = a.getDimSize(0), k = tile.getDimSize(0), n = tile.getDimSize(1);
  if (m % (16 * numWarps) != 0 || k % 16 != 0 || n % getSwizzleBlockColumns(element) != 0 ||
      n > 256)
    return std::nullopt;
  return Role::B;
}

/// The copy of `load`'s tile into a new one-slot buffer, before the load: the tile view.
Value copyToSharedSlot(LoadOp load) {
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
  return tile.getResult();
}

struct InvariantOperandsToSharedPass
    : mlir::tessel::impl::TesselInvariantOperandsToSharedBase<InvariantOperandsToSharedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringRef arch = Target::of(module).arch();
    unsigned numWarps = getNumWarps(module);
    // Each qualifying load with the role of each of its uses (decided once, before any
    // rewrite changes the dots' operands).
    SmallVector<std::pair<LoadOp, SmallVector<std::pair<OpOperand *, Role>>>> loads;
    module.walk([&](LoadOp load) {
      auto type = dyn_cast<RankedTensorType>(load.getType());
      if (!load->hasAttr(LoadOp::getSharedHintName()) || !type || type.getRank() != 2 ||
          (load.getOther() && !isZeroTile(load.getOther())) || load->use_empty())
        return;
      SmallVector<std::pair<OpOperand *, Role>> uses;
      for (OpOperand &use : load->getUses()) {
        auto dot = dyn_cast<DotOp>(use.getOwner());
        std::optional<Role> role = dot ? roleIn(dot, load, numWarps, arch) : std::nullopt;
        if (!role)
          return;
        uses.push_back({&use, *role});
      }
      loads.push_back({load, std::move(uses)});
    });
    // One buffer a role: wgmma reads an A (wgmma_a) and a B (wgmma_b) in different
    // layouts, so a tile that is both is copied twice.
    for (auto &[load, uses] : loads) {
      DenseMap<Role, Value> slots;
      for (auto [use, role] : uses) {
        auto [slot, fresh] = slots.try_emplace(role, Value());
        if (fresh)
          slot->second = copyToSharedSlot(load);
        use->set(slot->second);
      }
      load.erase();
    }
  }
};
} // namespace
