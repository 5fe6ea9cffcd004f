//===- AssignLayouts.cpp - give every tile a layout encoding --------------===//
//
// Values that an op ties together (elementwise operands and results, loop-carried
// values, `if` results, memory access operands) must share a layout: they are grouped
// with union-find. Reductions and `expand_dims` relate a group of rank r to a slice of a
// group of rank r+1, so groups are resolved from the highest rank down: a group takes the
// slice layout its relations ask for (the most frequent, if they disagree) or, with
// none, the default blocked layout for its largest tile. Disagreements become
// `tessel.convert_layout` ops, which canonicalisation mostly rematerialises away.
//
//===----------------------------------------------------------------------===//
#include "dialect/Layout.h"
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
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

/// A wish: group of `member` should have layout slice(axis, layout of `related`'s group).
struct SliceWish {
  Value member;
  Value related;
  unsigned axis;
  Operation *op;
};

struct TesselAssignLayoutsPass
    : public tessel::impl::TesselAssignLayoutsBase<TesselAssignLayoutsPass> {
  using TesselAssignLayoutsBase::TesselAssignLayoutsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    unsigned warps = numWarps;
    if (warps == 0) {
      if (auto attr = module->getAttrOfType<IntegerAttr>("tessel.num_warps"))
        warps = attr.getInt();
      else
        warps = 4;
    }
    if (warps == 0 || (warps & (warps - 1))) {
      module.emitError("num_warps must be a power of two, got ") << warps;
      return signalPassFailure();
    }
    module->setAttr("tessel.num_warps",
                    IntegerAttr::get(IntegerType::get(&getContext(), 32), warps));
    arch = "";
    if (auto attr = module->getAttrOfType<StringAttr>("tessel.arch"))
      arch = attr.getValue();
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(assign(func, warps)))
        return signalPassFailure();
  }

  LogicalResult assign(func::FuncOp func, unsigned warps) {
    ValueGroups groups;
    SmallVector<SliceWish> wishes;
    SmallVector<DotOp> dots;

    func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        groups.add(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            groups.add(arg);

      if (op->hasTrait<OpTrait::Elementwise>() || isa<BroadcastOp>(op)) {
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
      } else if (auto store = dyn_cast<StoreOp>(op)) {
        for (Value v : op->getOperands())
          groups.unite(store.getPtr(), v);
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
        wishes.push_back({expand.getSrc(), expand.getResult(), unsigned(expand.getAxis()), op});
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        if (isTile(reduce.getResult()))
          wishes.push_back({reduce.getResult(), reduce.getSrc(), unsigned(reduce.getAxis()), op});
      }
    });

    // Resolve groups from the highest rank down.
    llvm::MapVector<Value, SmallVector<Value>> members;
    for (Value v : groups.values())
      members[groups.find(v)].push_back(v);
    SmallVector<Value> roots;
    for (auto &entry : members)
      roots.push_back(entry.first);
    llvm::stable_sort(roots, [](Value a, Value b) {
      return cast<RankedTensorType>(a.getType()).getRank() >
             cast<RankedTensorType>(b.getType()).getRank();
    });

    DenseMap<Value, Attribute> layoutOf; // group root -> layout
    MLIRContext *ctx = &getContext();
    for (Value root : roots) {
      // Count the slice layouts that relations ask for.
      llvm::MapVector<Attribute, unsigned> votes;
      for (const SliceWish &wish : wishes) {
        if (groups.find(wish.member) != root)
          continue;
        Attribute parent = layoutOf.lookup(groups.find(wish.related));
        if (parent)
          ++votes[SliceEncodingAttr::get(ctx, wish.axis, parent)];
      }
      Attribute chosen;
      unsigned best = 0;
      for (auto &[layout, count] : votes)
        if (count > best) {
          chosen = layout;
          best = count;
        }
      // A dot's accumulator group takes the wgmma (f16/bf16, or tf32 transposed) or
      // mma.sync fragment layout when it fits.
      for (DotOp dot : dots) {
        if (chosen || groups.find(dot.getResult()) != root)
          continue;
        if (canUseWgmma(dot, warps, arch))
          chosen = getWgmmaAccumulatorLayout(ctx, warps);
        else if (canUseTf32Wgmma(dot, warps, arch))
          chosen = getTf32WgmmaAccumulatorLayout(ctx, warps);
        else
          chosen = getPreferredDotLayout(dot, warps);
      }
      if (!chosen)
        chosen = defaultLayout(members[root], warps);
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
      a->setAttr(kWgmmaOperandAttr, StringAttr::get(ctx, "a"));
      b->setAttr(kWgmmaOperandAttr, StringAttr::get(ctx, "b"));
    }
    // Constants carry their type in their value too.
    func.walk([&](arith::ConstantOp constant) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (dense && dense.getType() != constant.getType())
        constant.setValueAttr(dense.reshape(cast<ShapedType>(constant.getType())));
    });

    // Where a relation's wish lost, convert.
    for (SliceWish &wish : wishes) {
      auto memberType = cast<RankedTensorType>(wish.member.getType());
      auto relatedType = cast<RankedTensorType>(wish.related.getType());
      auto wanted = withEncoding(
          memberType, SliceEncodingAttr::get(ctx, wish.axis, relatedType.getEncoding()));
      if (wanted == memberType)
        continue;
      OpBuilder builder(wish.op);
      if (auto expand = dyn_cast<ExpandDimsOp>(wish.op)) {
        Value converted =
            ConvertLayoutOp::create(builder, expand.getLoc(), wanted, expand.getSrc());
        expand.getSrcMutable().assign(converted);
      } else {
        // A reduce: produce the natural slice, convert to the group's layout after it.
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

  Attribute defaultLayout(ArrayRef<Value> values, unsigned warps) {
    // The largest tile of the group decides; 16-byte runs of the narrowest element
    // that the group moves through memory.
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
    unsigned vector = 16 / (narrowestBytes ? narrowestBytes : 4);
    return getDefaultBlockedLayout(&getContext(), largest.getShape(), warps, vector);
  }
};
} // namespace
