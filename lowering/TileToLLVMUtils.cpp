//===- TileToLLVMUtils.cpp - thread ids, coordinates, shuffles, scratch ---===//
#include "lowering/TileToLLVMUtils.h"
#include "dialect/Target.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;

int64_t mlir::tessel::getScratchElementBytes(Type elementType) {
  if (isa<PtrType>(elementType))
    return 8;
  return std::max<int64_t>(1, elementType.getIntOrFloatBitWidth() / 8);
}

unsigned mlir::tessel::getDistinctLanes(const TileLayout &layout, unsigned dim) {
  unsigned r = layout.getRootDim(dim);
  BlockedEncodingAttr root = layout.getRoot();
  int64_t spt = root.getSizePerThread()[r];
  return std::min<int64_t>(root.getThreadsPerWarp()[r],
                           std::max<int64_t>(1, layout.getDimSize(dim) / spt));
}

unsigned mlir::tessel::getDistinctWarps(const TileLayout &layout, unsigned dim) {
  unsigned r = layout.getRootDim(dim);
  BlockedEncodingAttr root = layout.getRoot();
  int64_t perWarp = int64_t(root.getSizePerThread()[r]) * root.getThreadsPerWarp()[r];
  return std::min<int64_t>(root.getWarpsPerCTA()[r],
                           std::max<int64_t>(1, layout.getDimSize(dim) / perWarp));
}

FailureOr<int64_t> mlir::tessel::getScratchBytes(Operation *op) {
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    auto type = reduce.getSrc().getType();
    FailureOr<TileLayout> layout = TileLayout::get(type);
    if (failed(layout))
      return op->emitError("tile has no layout; run -tessel-assign-layouts first");
    unsigned warps = getDistinctWarps(*layout, reduce.getAxis());
    if (warps <= 1)
      return int64_t(0);
    int64_t slice = type.getNumElements() / type.getDimSize(reduce.getAxis());
    return warps * slice * std::max<int64_t>(4, getScratchElementBytes(type.getElementType()));
  }
  if (auto dot = dyn_cast<DotOp>(op))
    return getDotScratchBytes(dot);
  if (auto trans = dyn_cast<TransOp>(op)) {
    auto type = dyn_cast<RankedTensorType>(trans.getSrc().getType());
    if (!type)
      return int64_t(0); // a view of a shared tile
    auto resultType = cast<RankedTensorType>(trans.getType());
    auto root = dyn_cast_or_null<BlockedEncodingAttr>(type.getEncoding());
    if (root && resultType.getEncoding() == getTransposedLayout(root))
      return int64_t(0); // a relabelling of registers (TransToLLVM.cpp)
    return type.getNumElements() * getScratchElementBytes(type.getElementType());
  }
  if (auto convert = dyn_cast<ConvertLayoutOp>(op)) {
    auto type = convert.getSrc().getType();
    return type.getNumElements() * getScratchElementBytes(type.getElementType());
  }
  if (auto atomic = dyn_cast<AtomicRMWOp>(op); atomic && atomic->hasAttr(kBulkReductionAttr))
    return cast<RankedTensorType>(atomic.getValue().getType()).getNumElements() * 4;
  return int64_t(0);
}

Value mlir::tessel::createI32(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 32);
}

ThreadIndex mlir::tessel::getThreadIndex(OpBuilder &b, Location loc) {
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  ThreadIndex index;
  index.lane = arith::AndIOp::create(b, loc, tid, createI32(b, loc, 31));
  index.warp = arith::ShRUIOp::create(b, loc, tid, createI32(b, loc, 5));
  return index;
}

Value mlir::tessel::getThreadIndexAlong(OpBuilder &b, Location loc, const TileLayout &layout,
                                        unsigned rootDim, const ThreadIndex &thread) {
  BlockedEncodingAttr root = layout.getRoot();
  unsigned tpw = root.getThreadsPerWarp()[rootDim], wpc = root.getWarpsPerCTA()[rootDim];
  Value lane = arith::ShRUIOp::create(
      b, loc, thread.lane, createI32(b, loc, llvm::Log2_32(layout.getLaneStride(rootDim))));
  lane = arith::AndIOp::create(b, loc, lane, createI32(b, loc, tpw - 1));
  Value warp = arith::ShRUIOp::create(
      b, loc, thread.warp, createI32(b, loc, llvm::Log2_32(layout.getWarpStride(rootDim))));
  warp = arith::AndIOp::create(b, loc, warp, createI32(b, loc, wpc - 1));
  return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, warp, createI32(b, loc, tpw)),
                               lane);
}

SmallVector<SmallVector<Value>> mlir::tessel::getCoordinates(OpBuilder &b, Location loc,
                                                             const TileLayout &layout,
                                                             const ThreadIndex &thread) {
  unsigned rank = layout.getRank();
  // The thread's own offset along each dimension.
  SmallVector<Value> threadOffset(rank);
  for (unsigned d = 0; d < rank; ++d)
    threadOffset[d] = arith::MulIOp::create(
        b, loc, getThreadIndexAlong(b, loc, layout, layout.getRootDim(d), thread),
        createI32(b, loc, layout.getThreadStride(d)));
  SmallVector<SmallVector<Value>> coords;
  for (unsigned reg = 0, e = layout.getNumRegisters(); reg < e; ++reg) {
    SmallVector<unsigned> index = layout.getRegisterIndex(reg);
    SmallVector<Value> regCoords;
    for (unsigned d = 0; d < rank; ++d) {
      Value coord = arith::AddIOp::create(
          b, loc, threadOffset[d],
          createI32(b, loc, layout.getRegisterOffset(d, index[d])));
      if (layout.wraps(d))
        coord = arith::AndIOp::create(b, loc, coord, createI32(b, loc, layout.getDimSize(d) - 1));
      regCoords.push_back(coord);
    }
    coords.push_back(regCoords);
  }
  return coords;
}

Value mlir::tessel::linearize(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                              ArrayRef<int64_t> shape) {
  Value linear = createI32(b, loc, 0);
  for (unsigned d = 0; d < coords.size(); ++d) {
    linear = arith::MulIOp::create(b, loc, linear, createI32(b, loc, shape[d]));
    linear = arith::AddIOp::create(b, loc, linear, coords[d]);
  }
  return linear;
}

Value mlir::tessel::byteOffset(OpBuilder &b, Location loc, Value base, Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base, ValueRange{offset});
}

LLVM::InlineAsmOp mlir::tessel::createInlinePtx(OpBuilder &b, Location loc, Type resultType,
                                                ValueRange operands, StringRef text,
                                                StringRef constraints, bool sideEffects) {
  return LLVM::InlineAsmOp::create(
      b, loc, resultType ? TypeRange(resultType) : TypeRange(), operands, b.getStringAttr(text),
      b.getStringAttr(constraints), sideEffects ? b.getUnitAttr() : UnitAttr(),
      /*is_align_stack=*/UnitAttr(),
      LLVM::TailCallKindAttr::get(b.getContext(), LLVM::TailCallKind::None),
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT), ArrayAttr());
}

Value mlir::tessel::getSharedMemoryBase(OpBuilder &b, Location loc) {
  return LLVM::AddressOfOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
                                   kSharedMemoryName);
}

WarpPartition mlir::tessel::getWarpPartition(Block *block) {
  Operation *op = block ? block->getParentOp() : nullptr;
  Region *region = block ? block->getParent() : nullptr;
  for (; op; region = op->getParentRegion(), op = op->getParentOp()) {
    auto ws = dyn_cast<WarpSpecializeOp>(op);
    if (!ws)
      continue;
    unsigned consumers = getNumWarps(ws);
    if (region == &ws.getProducer())
      return {consumers, unsigned(ws.getProducerWarps()), 2};
    return {0, consumers, 1};
  }
  return {};
}

void mlir::tessel::createBarrier(OpBuilder &b, Location loc) {
  WarpPartition partition = getWarpPartition(b.getInsertionBlock());
  if (partition.barrierId == 0) {
    NVVM::Barrier0Op::create(b, loc);
    return;
  }
  createInlinePtx(b, loc, Type(), ValueRange(),
                  "bar.sync " + std::to_string(partition.barrierId) + ", " +
                      std::to_string(partition.numWarps * 32) + ";",
                  "");
}

void mlir::tessel::createAsyncProxyFence(OpBuilder &b, Location loc) {
  createInlinePtx(b, loc, Type(), ValueRange(), "fence.proxy.async.shared::cta;", "");
}

Value mlir::tessel::shuffleXor(OpBuilder &b, Location loc, Value value, unsigned laneMask) {
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Value allLanes = createI32(b, loc, -1);
  Value offset = createI32(b, loc, laneMask);
  Value clamp = createI32(b, loc, 0x1f);
  auto shuffle32 = [&](Value v) {
    return NVVM::ShflOp::create(b, loc, v.getType(), allLanes, v, offset, clamp,
                                NVVM::ShflKind::bfly, UnitAttr())
        .getResult();
  };
  if (type.isF32() || type.isInteger(32))
    return shuffle32(value);
  Type i32 = b.getI32Type();
  if (bits < 32) {
    Value asInt = value;
    if (!type.isInteger(bits))
      asInt = LLVM::BitcastOp::create(b, loc, b.getIntegerType(bits), value);
    Value wide = LLVM::ZExtOp::create(b, loc, i32, asInt);
    Value narrow = LLVM::TruncOp::create(b, loc, b.getIntegerType(bits), shuffle32(wide));
    if (type.isInteger(bits))
      return narrow;
    return LLVM::BitcastOp::create(b, loc, type, narrow);
  }
  // 64-bit: shuffle both halves.
  auto pair = VectorType::get({2}, i32);
  Value halves = LLVM::BitcastOp::create(b, loc, pair, value);
  Value result = LLVM::PoisonOp::create(b, loc, pair);
  for (int i = 0; i < 2; ++i) {
    Value index = createI32(b, loc, i);
    Value half = LLVM::ExtractElementOp::create(b, loc, halves, index);
    result = LLVM::InsertElementOp::create(b, loc, result, shuffle32(half), index);
  }
  return LLVM::BitcastOp::create(b, loc, type, result);
}

Type mlir::tessel::convertElementType(Type elementType) {
  if (isa<PtrType>(elementType))
    return LLVM::LLVMPointerType::get(elementType.getContext(), 1);
  return elementType;
}
