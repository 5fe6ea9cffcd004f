//===- AssignLayouts.cpp - give every tile a layout encoding --------------===//
//
// Values that an op ties together (elementwise operands and results, loop-carried
// values, `if` results, memory access operands) must share a layout: they are grouped
// with union-find. Other ops relate two groups by a wish: reductions and `expand_dims` a
// group of rank r to a slice of a group of rank r+1, a broadcast's source to its result's
// layout, a transpose's result to the transposed layout of its source (which moves no
// data). Groups are resolved from the highest rank down, a wished-from group before the
// groups that wish from it: a group holding a dot's result takes the dot's layout, any
// other the layout its wishes ask for (the most frequent, if they disagree) or, with
// none, the default blocked layout for its largest tile. Disagreements become
// `tessel.convert_layout` ops, which canonicalisation mostly rematerialises away.
// (Broadcasts used to unite their groups: an index tile shared by several loads, such as
// `dims[None, :]`, then dragged every load it fed into the accumulator layout of the
// output it was also stored with, and their 16-byte loads became 4-byte ones.)
//
// A dot whose A operand stays in registers (a product of another dot, or loop-invariant)
// takes the mma layout with every warp along M, and a loop-invariant A is converted to it
// once, before the loop: mma.sync then reads A from registers (MmaLayout.h).
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "dialect/Layout.h"
#include "lowering/AxisInfo.h"
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::tessel {
#define GEN_PASS_DEF_TESSELASSIGNLAYOUTS
#include "lowering/Passes.h.inc"
} // namespace mlir::tessel

using namespace mlir;
using namespace mlir::tessel;

namespace {

bool isTile(Value value) { return isa<RankedTensorType>(value.getType()); }

/// Union-find over tile values.
class ValueGroups {
public:
  Value find(Value v) {
    auto it = parent.find(v);
    if (it == parent.end()) {
      parent[v] = v;
      order.push_back(v);
      return v;
    }
    if (it->second == v)
      return v;
    Value root = find(it->second);
    parent[v] = root;
    return root;
  }
  void unite(Value a, Value b) {
    if (!isTile(a) || !isTile(b))
      return;
    Value ra = find(a), rb = find(b);
    if (ra != rb)
      parent[rb] = ra;
  }
  void add(Value v) {
    if (isTile(v))
      find(v);
  }
  ArrayRef<Value> values() const { return order; }

private:
  DenseMap<Value, Value> parent;
  SmallVector<Value> order;
};

/// A wish: the group of `member` should have a layout derived from that of `related`'s
/// group: its slice along `axis`, the same, or its transpose. `member` is an operand or
/// the result of `op`.
struct LayoutWish {
  enum Kind { Slice, Same, Transposed };
  Value member;
  Value related;
  Kind kind;
  unsigned axis;
  Operation *op;

  /// The layout wished for, given the related group's; null if there is none.
  Attribute wished(Attribute related) const {
    if (kind == Slice)
      return SliceEncodingAttr::get(related.getContext(), axis, related);
    if (kind == Same)
      return related;
    auto blocked = dyn_cast<BlockedEncodingAttr>(related);
    if (!blocked || blocked.getSizePerThread().size() != 2)
      return {};
    return getTransposedLayout(blocked);
  }
};

/// A copy of `value`'s defining op, and of those of its tile operands, each placed after
/// its original (so the copy dominates every use the original does).
Value cloneIndexTile(Value value) {
  Operation *def = value.getDefiningOp();
  IRMapping mapping;
  for (Value operand : def->getOperands())
    if (isTile(operand))
      mapping.map(operand, cloneIndexTile(operand));
  OpBuilder builder(def->getContext());
  builder.setInsertionPointAfter(def);
  return builder.clone(*def, mapping)->getResult(cast<OpResult>(value).getResultNumber());
}

/// Gives every use of an index tile (isRematerializable: offsets, masks, ranges) but the
/// first its own copy. CSE shares such tiles between unrelated loads and stores (the
/// `dims[None, :]` of the q, k, v and output pointers), and a shared tile would unite
/// their groups: every load would take the layout of whichever group wins, often the
/// accumulator's. Copies that end up in one layout merge again in the CSE that follows.
void splitSharedIndexTiles(func::FuncOp func) {
  SmallVector<Operation *> users;
  func.walk([&](Operation *op) { users.push_back(op); });
  for (Operation *user : users)
    for (OpOperand &use : user->getOpOperands()) {
      Value value = use.get();
      if (isTile(value) && !value.hasOneUse() && isRematerializable(value))
        use.set(cloneIndexTile(value));
    }
}

/// True when `value` is computed, through elementwise ops, from a dot's result.
bool comesFromDot(Value value, unsigned depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 12)
    return false;
  if (isa<DotOp, DotWaitOp>(def))
    return true;
  if (!def->hasTrait<OpTrait::Elementwise>() && !isa<BroadcastOp>(def))
    return false;
  return llvm::any_of(def->getOperands(),
                      [&](Value v) { return isTile(v) && comesFromDot(v, depth + 1); });
}

/// True when `value` is defined outside the innermost loop around `user`.
bool isLoopInvariantAt(Value value, Operation *user) {
  auto loop = user->getParentOfType<scf::ForOp>();
  return loop && !loop->isAncestor(value.getParentBlock()->getParentOp());
}

/// True when `dot`'s A operand stays in registers across instructions (MmaLayout.h): a
/// 16-bit register tile computed from another dot or invariant in the dot's loop.
bool keepsOperandAInRegisters(DotOp dot) {
  if (getMmaK(dot) != 16 || !isTile(dot.getA()))
    return false;
  return comesFromDot(dot.getA()) || isLoopInvariantAt(dot.getA(), dot);
}

struct TesselAssignLayoutsPass
    : public tessel::impl::TesselAssignLayoutsBase<TesselAssignLayoutsPass> {
  using TesselAssignLayoutsBase::TesselAssignLayoutsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned warps = numWarps ? unsigned(numWarps) : getNumWarps(module);
    if (warps == 0 || (warps & (warps - 1))) {
      module.emitError("num_warps must be a power of two, got ") << warps;
      return signalPassFailure();
    }
    setNumWarps(module, warps);
    arch = Target::of(module).arch();
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(assign(func, warps)))
        return signalPassFailure();
  }

  LogicalResult assign(func::FuncOp func, unsigned warps) {
    splitSharedIndexTiles(func);
    AxisInfoAnalysis axis(func);
    ValueGroups groups;
    SmallVector<LayoutWish> wishes;
    SmallVector<DotOp> dots;

    func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        groups.add(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            groups.add(arg);

      if (op->hasTrait<OpTrait::Elementwise>()) {
        SmallVector<Value> tiles;
        for (Value v : op->getOperands())
          if (isTile(v))
            tiles.push_back(v);
        for (Value v : op->getResults())
          if (isTile(v))
            tiles.push_back(v);
        for (Value v : tiles)
          groups.unite(tiles.front(), v);
      } else if (auto load = dyn_cast<LoadOp>(op)) {
        for (Value v : op->getOperands())
          groups.unite(load.getPtr(), v);
        groups.unite(load.getPtr(), load.getResult());
      } else if (auto copy = dyn_cast<AsyncCopyOp>(op)) {
        if (copy.getMask())
          groups.unite(copy.getPtr(), copy.getMask());
      } else if (isa<StoreOp, AtomicRMWOp>(op)) {
        for (Value v : op->getOperands())
          groups.unite(op->getOperand(0), v); // the pointers
      } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
        for (auto [init, arg, result] :
             llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults())) {
          groups.unite(init, arg);
          groups.unite(init, result);
        }
      } else if (auto yield = dyn_cast<scf::YieldOp>(op)) {
        Operation *parent = yield->getParentOp();
        if (isa<scf::ForOp, scf::IfOp>(parent))
          for (auto [operand, result] : llvm::zip(yield.getOperands(), parent->getResults()))
            groups.unite(operand, result);
      } else if (auto dot = dyn_cast<DotOp>(op)) {
        // The accumulator is updated in place; a and b keep their own (load) layouts and
        // are staged through shared memory by the lowering.
        groups.unite(dot.getAcc(), dot.getResult());
        dots.push_back(dot);
      } else if (auto wait = dyn_cast<DotWaitOp>(op)) {
        groups.unite(wait.getSrc(), wait.getResult());
      } else if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
        wishes.push_back({expand.getSrc(), expand.getResult(), LayoutWish::Slice,
                          unsigned(expand.getAxis()), op});
      } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
        wishes.push_back({broadcast.getSrc(), broadcast.getResult(), LayoutWish::Same, 0, op});
      } else if (auto trans = dyn_cast<TransOp>(op); trans && isTile(trans.getSrc())) {
        wishes.push_back({trans.getResult(), trans.getSrc(), LayoutWish::Transposed, 0, op});
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        if (isTile(reduce.getResult()))
          wishes.push_back({reduce.getResult(), reduce.getSrc(), LayoutWish::Slice,
                            unsigned(reduce.getAxis()), op});
      }
    });

    // Resolve groups from the highest rank down; among groups of one rank, a group after
    // the groups it wishes from (a broadcast's result before its source, a transpose's
    // source before its result) where that order exists.
    llvm::MapVector<Value, SmallVector<Value>> members;
    for (Value v : groups.values())
      members[groups.find(v)].push_back(v);
    auto rankOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getRank(); };
    SmallVector<Value> pending;
    for (auto &entry : members)
      pending.push_back(entry.first);
    llvm::stable_sort(pending, [&](Value a, Value b) { return rankOf(a) > rankOf(b); });
    DenseMap<Value, SmallVector<Value>> wishesFrom; // root -> roots of the same rank
    for (const LayoutWish &wish : wishes) {
      Value member = groups.find(wish.member), related = groups.find(wish.related);
      if (wish.kind != LayoutWish::Slice && member != related)
        wishesFrom[member].push_back(related);
    }

    DenseMap<Value, Attribute> layoutOf; // group root -> layout
    MLIRContext *ctx = &getContext();
    while (!pending.empty()) {
      auto sameRankEnd = llvm::find_if(
          pending, [&](Value v) { return rankOf(v) != rankOf(pending.front()); });
      auto next = std::find_if(pending.begin(), sameRankEnd, [&](Value root) {
        return llvm::all_of(wishesFrom.lookup(root),
                            [&](Value related) { return layoutOf.count(related); });
      });
      if (next == sameRankEnd)
        next = pending.begin();
      Value root = *next;
      pending.erase(next);

      // A dot's accumulator group takes the wgmma (f16/bf16, or tf32 transposed) or
      // mma.sync fragment layout when it fits.
      Attribute chosen;
      for (DotOp dot : dots)
        if (!chosen && groups.find(dot.getResult()) == root)
          chosen = getDotLayout(dot, warps);
      // Else the layout the wishes ask for most.
      llvm::MapVector<Attribute, unsigned> votes;
      for (const LayoutWish &wish : wishes) {
        if (chosen || groups.find(wish.member) != root)
          continue;
        Attribute related = layoutOf.lookup(groups.find(wish.related));
        if (Attribute wished = related ? wish.wished(related) : Attribute())
          ++votes[wished];
      }
      unsigned best = 0;
      for (auto &[layout, count] : votes)
        if (count > best) {
          chosen = layout;
          best = count;
        }
      if (!chosen)
        chosen = defaultLayout(members[root], warps, axis);
      layoutOf[root] = chosen;
    }

    // Retype every tile.
    for (Value v : groups.values()) {
      auto type = cast<RankedTensorType>(v.getType());
      v.setType(withEncoding(type, layoutOf[groups.find(v)]));
    }
    // Dots that got the wgmma layout read their operands in wgmma's shared layouts: the
    // buffers say so, and their copies and the dot's lowering follow.
    for (DotOp dot : dots) {
      if (!canUseWgmma(dot, warps, arch) ||
          cast<RankedTensorType>(dot.getType()).getEncoding() !=
              getWgmmaAccumulatorLayout(ctx, warps))
        continue;
      LocalAllocOp a = getSharedAlloc(dot.getA()), b = getSharedAlloc(dot.getB());
      if (!a || !b || a == b)
        continue;
      setSharedLayout(a, SharedLayout::WgmmaA);
      setSharedLayout(b, SharedLayout::WgmmaB);
    }
    // So do register-A wgmma dots whose B the pipeliner put in a ring of padded rows.
    for (DotOp dot : dots) {
      LocalAllocOp b = getSharedAlloc(dot.getB());
      if (b && b.getType().isPadded() && canUseRegisterWgmma(dot, warps, arch) &&
          cast<RankedTensorType>(dot.getType()).getEncoding() ==
              getWgmmaAccumulatorLayout(ctx, warps))
        setSharedLayout(b, SharedLayout::WgmmaB);
    }
    // Constants carry their type in their value too.
    func.walk([&](arith::ConstantOp constant) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (dense && dense.getType() != constant.getType())
        constant.setValueAttr(dense.reshape(cast<ShapedType>(constant.getType())));
    });

    // An A operand that stays in registers is converted to the layout mma.sync and
    // register-A wgmma read it from: once, before the loop, when loop-invariant; a
    // register-A wgmma dot's other A operands right before the dot.
    for (DotOp dot : dots) {
      auto a = dyn_cast<RankedTensorType>(dot.getA().getType());
      auto result = cast<RankedTensorType>(dot.getType());
      BlockedEncodingAttr rows =
          getMmaRowsLayout(ctx, result.getDimSize(0), result.getDimSize(1), warps);
      if (!a || !rows || result.getEncoding() != rows || a.getEncoding() == rows)
        continue;
      bool invariant = keepsOperandAInRegisters(dot) && isLoopInvariantAt(dot.getA(), dot);
      if (!invariant && !canUseRegisterWgmma(dot, warps, arch))
        continue;
      OpBuilder builder(dot);
      if (invariant)
        builder.setInsertionPointAfterValue(dot.getA());
      Value converted =
          ConvertLayoutOp::create(builder, dot.getLoc(), withEncoding(a, rows), dot.getA());
      dot.getAMutable().assign(converted);
    }

    // Where a relation's wish lost, convert: the operand before the op, or the result
    // after it.
    for (LayoutWish &wish : wishes) {
      auto memberType = cast<RankedTensorType>(wish.member.getType());
      auto relatedType = cast<RankedTensorType>(wish.related.getType());
      Attribute wished = wish.wished(relatedType.getEncoding());
      if (!wished)
        continue;
      auto wanted = withEncoding(memberType, wished);
      if (wanted == memberType)
        continue;
      OpBuilder builder(wish.op);
      if (wish.op->getResult(0) != wish.member) {
        Value converted =
            ConvertLayoutOp::create(builder, wish.op->getLoc(), wanted, wish.member);
        wish.op->setOperand(0, converted);
      } else {
        // Produce the natural layout, convert to the group's after it.
        builder.setInsertionPointAfter(wish.op);
        wish.member.setType(wanted);
        auto converted =
            ConvertLayoutOp::create(builder, wish.op->getLoc(), memberType, wish.member);
        wish.member.replaceAllUsesExcept(converted.getResult(), converted);
      }
    }
    return success();
  }

  StringRef arch;

  /// The layout a dot's result (and its accumulator group) takes.
  Attribute getDotLayout(DotOp dot, unsigned warps) {
    MLIRContext *ctx = dot.getContext();
    if (canUseWgmma(dot, warps, arch))
      return getWgmmaAccumulatorLayout(ctx, warps);
    if (canUseTf32Wgmma(dot, warps, arch))
      return getTf32WgmmaAccumulatorLayout(ctx, warps);
    if (canUseRegisterWgmma(dot, warps, arch))
      return getWgmmaAccumulatorLayout(ctx, warps);
    auto type = dot.getType();
    if (keepsOperandAInRegisters(dot))
      if (auto rows = getMmaRowsLayout(ctx, type.getDimSize(0), type.getDimSize(1), warps))
        return rows;
    return getPreferredDotLayout(dot, warps);
  }

  /// Bytes one thread can move per access for the group's loads and stores whose
  /// addresses run on along the fastest dimension: fewer than 16 where a run may start
  /// off a 16-byte boundary or a mask may end mid-run (a row of odd length). A layout
  /// giving each thread a longer run would then only spread its scalar accesses over
  /// the warp, 8 of them per 32-byte sector for bf16, instead of coalescing them.
  /// Groups that feed a dot keep 16: their runs become the 16-byte shared-memory
  /// stores that stage the operand.
  static unsigned accessBytes(ArrayRef<Value> values, const AxisInfoAnalysis &axis) {
    for (Value v : values)
      if (llvm::any_of(v.getUsers(), [](Operation *user) { return isa<DotOp, TransOp>(user); }))
        return 16;
    unsigned bytes = 16;
    for (Value v : values) {
      auto type = cast<RankedTensorType>(v.getType());
      auto ptr = dyn_cast<PtrType>(type.getElementType());
      if (!ptr || !ptr.getPointeeType().isIntOrFloat() ||
          ptr.getPointeeType().getIntOrFloatBitWidth() < 8)
        continue;
      unsigned elementBytes = ptr.getPointeeType().getIntOrFloatBitWidth() / 8;
      unsigned natural = 16 / elementBytes, fast = type.getRank() - 1;
      // Strided along the fastest dimension (a transposed access): not a run at all.
      if (axis.get(v).contiguity[fast] < natural)
        continue;
      for (Operation *user : v.getUsers()) {
        Value mask;
        if (auto load = dyn_cast<LoadOp>(user); load && load.getPtr() == v)
          mask = load.getMask();
        else if (auto store = dyn_cast<StoreOp>(user); store && store.getPtr() == v)
          mask = store.getMask();
        else
          continue;
        unsigned width = getAccessVectorWidth(axis, v, mask, fast, natural, elementBytes);
        bytes = std::min(bytes, width * elementBytes);
      }
    }
    return bytes;
  }

  Attribute defaultLayout(ArrayRef<Value> values, unsigned warps, const AxisInfoAnalysis &axis) {
    // The largest tile of the group decides; runs of the narrowest element that the
    // group moves through memory, as long as its accesses can be (16 bytes at most).
    RankedTensorType largest;
    unsigned narrowestBytes = 0;
    for (Value v : values) {
      auto type = cast<RankedTensorType>(v.getType());
      if (!largest || type.getNumElements() > largest.getNumElements())
        largest = type;
      Type element = type.getElementType();
      if (auto ptr = dyn_cast<PtrType>(element))
        element = ptr.getPointeeType();
      if (element.isIntOrFloat() && element.getIntOrFloatBitWidth() >= 8 &&
          (v.getDefiningOp<LoadOp>() || isa<PtrType>(type.getElementType()))) {
        unsigned bytes = element.getIntOrFloatBitWidth() / 8;
        narrowestBytes = narrowestBytes ? std::min(narrowestBytes, bytes) : bytes;
      }
    }
    unsigned vector =
        std::max(1u, accessBytes(values, axis) / (narrowestBytes ? narrowestBytes : 4));
    return getDefaultBlockedLayout(&getContext(), largest.getShape(), warps, vector);
  }
};
} // namespace
