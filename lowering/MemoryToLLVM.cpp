//===- MemoryToLLVM.cpp - vectorised, predicated global loads and stores --===//
//
// A thread's registers that are consecutive along the fastest layout dimension are
// consecutive in memory when the pointer tile is contiguous there; AxisInfo tells how
// many, and how aligned. Such runs become one access of up to 16 bytes. A mask (constant
// over the run) predicates the access with inline PTX, as in Triton:
//   mov.b32 $0, other; ...; @p ld.global.v4.b32 {$0, $1, $2, $3}, [addr];
// so masked-off lanes never touch memory and take `other`.
//
// Asynchronous copies to shared memory (tessel.async_copy) use the same runs: a run of
// 4, 8 or 16 bytes becomes one `cp.async` (16 bytes bypass L1: `.cg`) whose source size
// is 0 where the mask is off (the destination is zero-filled, nothing is read); shorter
// runs fall back to a masked load and a shared store.
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/TileToLLVMUtils.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// How a run of `vector` elements is moved: `words` PTX registers of `wordBits`.
struct AccessShape {
  unsigned vector;
  unsigned elementBits;
  unsigned wordBits;
  unsigned words;

  AccessShape(unsigned vector, unsigned elementBits) : vector(vector), elementBits(elementBits) {
    unsigned bits = vector * elementBits;
    wordBits = bits >= 32 ? std::max(32u, std::min(elementBits, 64u)) : bits;
    words = bits / wordBits;
  }
  unsigned registerBits() const { return std::max(16u, wordBits); }
  std::string ptxType() const {
    return (wordBits == 8 ? "u8" : "b" + std::to_string(wordBits));
  }
  const char *constraint() const {
    return registerBits() == 16 ? "h" : registerBits() == 32 ? "r" : "l";
  }
  std::string vectorSuffix() const { return words > 1 ? ".v" + std::to_string(words) : ""; }
};

/// Elements -> PTX-register-sized words (and back), through an LLVM vector bitcast.
SmallVector<Value> packWords(OpBuilder &b, Location loc, ValueRange elements,
                             const AccessShape &shape) {
  Type wordType = b.getIntegerType(shape.wordBits);
  Type regType = b.getIntegerType(shape.registerBits());
  Type elementType = elements.front().getType();
  Value vector = LLVM::PoisonOp::create(b, loc, VectorType::get({shape.vector}, elementType));
  for (auto [i, element] : llvm::enumerate(elements))
    vector = LLVM::InsertElementOp::create(b, loc, vector, element, createI32(b, loc, i));
  Value words = LLVM::BitcastOp::create(b, loc, VectorType::get({shape.words}, wordType), vector);
  SmallVector<Value> result;
  for (unsigned i = 0; i < shape.words; ++i) {
    Value word = LLVM::ExtractElementOp::create(b, loc, words, createI32(b, loc, i));
    if (regType != wordType)
      word = LLVM::ZExtOp::create(b, loc, regType, word);
    result.push_back(word);
  }
  return result;
}

SmallVector<Value> unpackWords(OpBuilder &b, Location loc, ValueRange regs, Type elementType,
                               const AccessShape &shape) {
  Type wordType = b.getIntegerType(shape.wordBits);
  Value words = LLVM::PoisonOp::create(b, loc, VectorType::get({shape.words}, wordType));
  for (auto [i, reg] : llvm::enumerate(regs)) {
    Value word = reg;
    if (reg.getType() != wordType)
      word = LLVM::TruncOp::create(b, loc, wordType, reg);
    words = LLVM::InsertElementOp::create(b, loc, words, word, createI32(b, loc, i));
  }
  Value vector =
      LLVM::BitcastOp::create(b, loc, VectorType::get({shape.vector}, elementType), words);
  SmallVector<Value> result;
  for (unsigned i = 0; i < shape.vector; ++i)
    result.push_back(LLVM::ExtractElementOp::create(b, loc, vector, createI32(b, loc, i)));
  return result;
}

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
}

SmallVector<Value> emitLoad(OpBuilder &b, Location loc, Value ptr, Value mask,
                            ValueRange others, Type elementType, unsigned vector) {
  unsigned elementBits = elementType.getIntOrFloatBitWidth();
  unsigned bytes = vector * elementBits / 8;
  if (!mask) {
    if (vector == 1)
      return {LLVM::LoadOp::create(b, loc, elementType, ptr, bytes).getResult()};
    Type vectorType = VectorType::get({vector}, elementType);
    Value loaded = LLVM::LoadOp::create(b, loc, vectorType, ptr, bytes);
    SmallVector<Value> result;
    for (unsigned i = 0; i < vector; ++i)
      result.push_back(LLVM::ExtractElementOp::create(b, loc, loaded, createI32(b, loc, i)));
    return result;
  }
  AccessShape shape(vector, elementBits);
  SmallVector<Value> otherElements(others.begin(), others.end());
  if (otherElements.empty())
    otherElements.assign(vector, zeroOf(b, loc, elementType));
  SmallVector<Value> otherWords = packWords(b, loc, otherElements, shape);

  std::string asmText, constraints;
  unsigned w = shape.words;
  for (unsigned i = 0; i < w; ++i) {
    asmText += llvm::formatv("mov.b{0} ${1}, ${2};\n\t", shape.registerBits(), i, w + 2 + i);
    constraints += std::string("=") + shape.constraint() + ",";
  }
  asmText += llvm::formatv("@${0} ld.global{1}.{2} ", w + 1, shape.vectorSuffix(), shape.ptxType());
  asmText += w > 1 ? "{" : "";
  for (unsigned i = 0; i < w; ++i)
    asmText += (i ? ", $" : "$") + std::to_string(i);
  asmText += w > 1 ? "}" : "";
  asmText += llvm::formatv(", [ ${0} + 0 ];", w);
  constraints += "l,b";
  for (unsigned i = 0; i < w; ++i)
    constraints += std::string(",") + shape.constraint();

  Type regType = b.getIntegerType(shape.registerBits());
  Type resultType = regType;
  if (w > 1)
    resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(w, regType));
  SmallVector<Value> operands{ptr, mask};
  operands.append(otherWords);
  auto inlineAsm = createInlinePtx(b, loc, resultType, operands, asmText, constraints);
  SmallVector<Value> regs;
  if (w == 1)
    regs.push_back(inlineAsm.getResult(0));
  else
    for (unsigned i = 0; i < w; ++i)
      regs.push_back(LLVM::ExtractValueOp::create(b, loc, inlineAsm.getResult(0), i));
  return unpackWords(b, loc, regs, elementType, shape);
}

void emitStore(OpBuilder &b, Location loc, Value ptr, Value mask, ValueRange values,
               unsigned vector) {
  Type elementType = values.front().getType();
  unsigned elementBits = elementType.getIntOrFloatBitWidth();
  unsigned bytes = vector * elementBits / 8;
  if (!mask) {
    if (vector == 1) {
      LLVM::StoreOp::create(b, loc, values.front(), ptr, bytes);
      return;
    }
    Value packed = LLVM::PoisonOp::create(b, loc, VectorType::get({vector}, elementType));
    for (auto [i, value] : llvm::enumerate(values))
      packed = LLVM::InsertElementOp::create(b, loc, packed, value, createI32(b, loc, i));
    LLVM::StoreOp::create(b, loc, packed, ptr, bytes);
    return;
  }
  AccessShape shape(vector, elementBits);
  SmallVector<Value> words = packWords(b, loc, values, shape);
  unsigned w = shape.words;
  std::string asmText =
      llvm::formatv("@$0 st.global{0}.{1} [ $1 + 0 ], ", shape.vectorSuffix(), shape.ptxType());
  asmText += w > 1 ? "{" : "";
  for (unsigned i = 0; i < w; ++i)
    asmText += (i ? ", $" : "$") + std::to_string(i + 2);
  asmText += w > 1 ? "};" : ";";
  std::string constraints = "b,l";
  for (unsigned i = 0; i < w; ++i)
    constraints += std::string(",") + shape.constraint();
  SmallVector<Value> operands{mask, ptr};
  operands.append(words);
  createInlinePtx(b, loc, Type(), operands, asmText, constraints);
}

LogicalResult checkElementType(Operation *op, Type elementType) {
  if (elementType.getIntOrFloatBitWidth() < 8)
    return op->emitError("memory access of ")
           << elementType << " elements is not supported; use i8 (e.g. `*i8`) for booleans";
  return success();
}

struct LoadLowering : OpConversionPattern<LoadOp> {
  LoadLowering(const TypeConverter &converter, MLIRContext *ctx, const AxisInfoAnalysis &info)
      : OpConversionPattern(converter, ctx), axisInfo(info) {}

  LogicalResult matchAndRewrite(LoadOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type elementType = getElementTypeOrSelf(op.getType());
    if (failed(checkElementType(op, elementType)))
      return failure();
    unsigned vector = getAccessWidth(axisInfo, op.getPtr(), op.getMask(), elementType);
    ValueRange ptrs = adaptor.getPtr();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    ValueRange others = op.getOther() ? adaptor.getOther() : ValueRange();
    SmallVector<Value> results;
    for (unsigned i = 0, e = ptrs.size(); i < e; i += vector) {
      ValueRange runOthers = others.empty() ? ValueRange() : others.slice(i, vector);
      auto loaded = emitLoad(rewriter, op.getLoc(), ptrs[i], masks.empty() ? Value() : masks[i],
                             runOthers, elementType, vector);
      results.append(loaded);
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }
  const AxisInfoAnalysis &axisInfo;
};

/// Lanes whose runs are adjacent in memory can trade elements so that each stores one
/// wide run (Triton's epilogues go through shared memory for this; here shuffles do it).
/// A group of g lanes (consecutive along the fastest dimension, the low lane-id bits)
/// holds, for each of its registers' chunks c, g runs of `spt` elements that are adjacent
/// in memory. In a block of g consecutive chunks, lane u takes chunk (block + u) from
/// every lane of the group: a g x g transpose done in g-1 `shfl.bfly` rounds. Returns the
/// group size g (1 when the layout or the pointer's contiguity, alignment or mask do
/// not allow it).
unsigned gatherGroup(const AxisInfoAnalysis &axisInfo, StoreOp op, unsigned vector) {
  auto tile = dyn_cast<RankedTensorType>(op.getPtr().getType());
  if (!tile)
    return 1;
  TileLayout layout = *TileLayout::get(tile);
  unsigned fast = layout.getOrder().front(), r = layout.getRootDim(fast);
  unsigned spt = layout.getRoot().getSizePerThread()[r];
  unsigned tpw = layout.getRoot().getThreadsPerWarp()[r];
  unsigned elementBits = getElementTypeOrSelf(op.getValue().getType()).getIntOrFloatBitWidth();
  if (vector != spt || layout.getLaneStride(r) != 1 || layout.wraps(fast) ||
      (spt * elementBits) % 32 != 0)
    return 1;
  unsigned wide = getAccessVectorWidth(axisInfo, op.getPtr(), op.getMask(), fast,
                                       128 / elementBits, elementBits / 8);
  unsigned g = std::min(wide / spt, tpw);
  unsigned chunks = layout.getRegistersAlong(fast) / spt;
  if (g < 2 || chunks % g != 0)
    return 1;
  return g;
}

/// The gathered store (see gatherGroup): per block of g chunks, the transpose, then one
/// access of g * spt elements from lane u's chunk (block + u), moved back to the run's
/// start (u * spt elements earlier, where lane 0 of the group has its elements).
void emitGatheredStores(OpBuilder &b, Location loc, StoreOp op, ValueRange ptrs,
                        ValueRange masks, ValueRange values, unsigned g) {
  TileLayout layout = *TileLayout::get(cast<RankedTensorType>(op.getPtr().getType()));
  unsigned fast = layout.getOrder().front();
  unsigned spt = layout.getRoot().getSizePerThread()[layout.getRootDim(fast)];
  Type elementType = values.front().getType();
  unsigned elementBits = elementType.getIntOrFloatBitWidth();
  AccessShape chunkShape(spt, elementBits); // a chunk as 32-bit words
  Value u = arith::AndIOp::create(b, loc, getThreadIndex(b, loc).lane, createI32(b, loc, g - 1));
  SmallVector<Value> isLane; // u == k
  for (unsigned k = 0; k < g; ++k)
    isLane.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, u, createI32(b, loc, k)));
  // Picks choices[u ^ t] (t = 0: choices[u]).
  auto pick = [&](ArrayRef<Value> choices, unsigned t) {
    Value v = choices[t];
    for (unsigned k = 1; k < g; ++k)
      v = arith::SelectOp::create(b, loc, isLane[k], choices[k ^ t], v);
    return v;
  };
  for (unsigned reg = 0, e = values.size(); reg < e; ++reg) {
    SmallVector<unsigned> index = layout.getRegisterIndex(reg);
    if (index[fast] % (g * spt) != 0)
      continue;
    // in[k]: the words of chunk k of this block; regs[k]: its first register.
    SmallVector<SmallVector<Value>> in;
    SmallVector<Value> chunkPtrs(g), chunkMasks(masks.empty() ? 0 : g);
    for (unsigned k = 0; k < g; ++k) {
      SmallVector<unsigned> at = index;
      at[fast] += k * spt;
      unsigned first = layout.getRegister(at);
      SmallVector<Value> elements;
      for (unsigned i = 0; i < spt; ++i) {
        SmallVector<unsigned> element = at;
        element[fast] += i;
        elements.push_back(values[layout.getRegister(element)]);
      }
      in.push_back(packWords(b, loc, elements, chunkShape));
      chunkPtrs[k] = ptrs[first];
      if (!masks.empty())
        chunkMasks[k] = masks[first];
    }
    // out[p]: lane p's part of chunk u; the round with t = u ^ p brings it.
    SmallVector<SmallVector<Value>> out = in;
    for (unsigned t = 1; t < g; ++t) {
      for (unsigned w = 0; w < chunkShape.words; ++w) {
        SmallVector<Value> column;
        for (unsigned k = 0; k < g; ++k)
          column.push_back(in[k][w]);
        Value received = shuffleXor(b, loc, pick(column, t), t);
        for (unsigned p = 0; p < g; ++p) {
          // Lane u keeps `received` as out[u ^ t]: for p, when u == p ^ t.
          out[p][w] = arith::SelectOp::create(b, loc, isLane[p ^ t], received, out[p][w]);
        }
      }
    }
    SmallVector<Value> elements;
    for (unsigned p = 0; p < g; ++p)
      elements.append(unpackWords(b, loc, out[p], elementType, chunkShape));
    Value ptr = pick(chunkPtrs, 0);
    Value back = arith::MulIOp::create(b, loc, u, createI32(b, loc, -int64_t(spt)));
    ptr = LLVM::GEPOp::create(b, loc, ptr.getType(), elementType, ptr, ValueRange{back});
    Value mask = chunkMasks.empty() ? Value() : pick(chunkMasks, 0);
    emitStore(b, loc, ptr, mask, elements, g * spt);
  }
}

struct StoreLowering : OpConversionPattern<StoreOp> {
  StoreLowering(const TypeConverter &converter, MLIRContext *ctx, const AxisInfoAnalysis &info)
      : OpConversionPattern(converter, ctx), axisInfo(info) {}

  LogicalResult matchAndRewrite(StoreOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type elementType = getElementTypeOrSelf(op.getValue().getType());
    if (failed(checkElementType(op, elementType)))
      return failure();
    unsigned vector = getAccessWidth(axisInfo, op.getPtr(), op.getMask(), elementType);
    ValueRange ptrs = adaptor.getPtr();
    ValueRange values = adaptor.getValue();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    if (unsigned g = gatherGroup(axisInfo, op, vector); g > 1) {
      emitGatheredStores(rewriter, op.getLoc(), op, ptrs, masks, values, g);
      rewriter.eraseOp(op);
      return success();
    }
    for (unsigned i = 0, e = ptrs.size(); i < e; i += vector)
      emitStore(rewriter, op.getLoc(), ptrs[i], masks.empty() ? Value() : masks[i],
                values.slice(i, vector), vector);
    rewriter.eraseOp(op);
    return success();
  }
  const AxisInfoAnalysis &axisInfo;
};
struct AsyncCopyLowering : OpConversionPattern<AsyncCopyOp> {
  AsyncCopyLowering(const TypeConverter &converter, MLIRContext *ctx,
                    const AxisInfoAnalysis &info)
      : OpConversionPattern(converter, ctx), axisInfo(info) {}

  LogicalResult matchAndRewrite(AsyncCopyOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SharedType dst = op.getDst().getType();
    Type elementType = dst.getElementType();
    unsigned elementBytes = elementType.getIntOrFloatBitWidth() / 8;
    FailureOr<TileLayout> layout = TileLayout::get(op.getPtr().getType());
    if (failed(layout))
      return rewriter.notifyMatchFailure(op, "tile has no layout");
    // Shared rows are contiguous: only runs along the last dimension stay vectors.
    unsigned vector = layout->getOrder().front() == 1
                          ? getAccessWidth(axisInfo, op.getPtr(), op.getMask(), elementType)
                          : 1;
    unsigned runBytes = vector * elementBytes;
    ThreadIndex thread = getThreadIndex(rewriter, loc);
    auto coords = getCoordinates(rewriter, loc, *layout, thread);
    Value base = adaptor.getDst().front();
    ValueRange ptrs = adaptor.getPtr();
    ValueRange masks = op.getMask() ? adaptor.getMask() : ValueRange();
    Value stride = createI32(rewriter, loc, dst.getRowStride());
    Value bytes = createI32(rewriter, loc, elementBytes);
    // A wgmma operand's buffer has wgmma's swizzled layout (WgmmaLayout.h); any other,
    // padded rows.
    SharedLayout sharedLayout = dst.getLayout();
    unsigned numWarps = getNumWarps(op);
    for (unsigned i = 0, e = ptrs.size(); i < e; i += vector) {
      Value offset;
      if (!dst.isPadded()) {
        offset = getWgmmaSharedOffset(rewriter, loc, sharedLayout, coords[i][0], coords[i][1],
                                      dst.getShape()[0], dst.getShape()[1], numWarps,
                                      elementBytes);
      } else {
        Value index = arith::MulIOp::create(rewriter, loc, coords[i][0], stride);
        index = arith::AddIOp::create(rewriter, loc, index, coords[i][1]);
        offset = arith::MulIOp::create(rewriter, loc, index, bytes);
      }
      Value address = byteOffset(rewriter, loc, base, offset);
      Value mask = masks.empty() ? Value() : masks[i];
      if (runBytes >= 4) {
        Value srcSize;
        if (mask)
          srcSize = arith::SelectOp::create(rewriter, loc, mask,
                                            createI32(rewriter, loc, runBytes),
                                            createI32(rewriter, loc, 0));
        NVVM::CpAsyncOp::create(rewriter, loc, address, ptrs[i], runBytes,
                                runBytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                               : NVVM::LoadCacheModifierKind::CA,
                                srcSize);
        continue;
      }
      SmallVector<Value> values =
          emitLoad(rewriter, loc, ptrs[i], mask, ValueRange(), elementType, vector);
      for (unsigned j = 0; j < vector; ++j)
        LLVM::StoreOp::create(rewriter, loc, values[j],
                              byteOffset(rewriter, loc, address,
                                         createI32(rewriter, loc, j * elementBytes)),
                              elementBytes);
    }
    rewriter.eraseOp(op);
    return success();
  }
  const AxisInfoAnalysis &axisInfo;
};

struct AsyncCommitLowering : OpConversionPattern<AsyncCommitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AsyncCommitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncCommitGroupOp>(op);
    return success();
  }
};

struct AsyncWaitLowering : OpConversionPattern<AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AsyncWaitOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncWaitGroupOp>(op, op.getPending());
    return success();
  }
};

struct BarrierLowering : OpConversionPattern<BarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(BarrierOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    // arrive has release and wait acquire semantics (the defaults) at cluster scope: the
    // reads before it are done before any program of the cluster overwrites their buffer.
    if (op.getCluster())
      createInlinePtx(rewriter, op.getLoc(), Type(), ValueRange(),
                      "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;", "");
    else
      createBarrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

struct FenceAsyncSharedLowering : OpConversionPattern<FenceAsyncSharedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(FenceAsyncSharedOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    createAsyncProxyFence(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// A buffer is the scratch base plus the offset -tessel-allocate-shared-memory chose.
struct LocalAllocLowering : OpConversionPattern<LocalAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LocalAllocOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.getOffset())
      return op.emitError("shared buffer has no offset; run -tessel-allocate-shared-memory");
    Value base = getSharedMemoryBase(rewriter, op.getLoc());
    rewriter.replaceOp(op, byteOffset(rewriter, op.getLoc(), base,
                                      createI32(rewriter, op.getLoc(), *op.getOffset())));
    return success();
  }
};

struct LocalIndexLowering : OpConversionPattern<LocalIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(LocalIndexOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value tileBytes = createI32(rewriter, loc, op.getResult().getType().getSizeInBytes());
    Value offset = arith::MulIOp::create(rewriter, loc, adaptor.getIndex(), tileBytes);
    rewriter.replaceOp(op, byteOffset(rewriter, loc, adaptor.getSrc(), offset));
    return success();
  }
};
} // namespace

unsigned mlir::tessel::getAccessWidth(const AxisInfoAnalysis &axisInfo, Value ptr, Value mask,
                                      Type elementType) {
  auto tile = dyn_cast<RankedTensorType>(ptr.getType());
  if (!tile)
    return 1;
  TileLayout layout = *TileLayout::get(tile);
  unsigned fast = layout.getOrder().front();
  unsigned run = std::min<int64_t>(
      {layout.getRoot().getSizePerThread()[layout.getRootDim(fast)],
       layout.getRegistersAlong(fast), layout.getDimSize(fast)});
  return getAccessVectorWidth(axisInfo, ptr, mask, fast, run,
                              elementType.getIntOrFloatBitWidth() / 8);
}

void mlir::tessel::populateMemoryToLLVMPatterns(const TypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                const AxisInfoAnalysis &axisInfo) {
  patterns.add<LoadLowering, StoreLowering, AsyncCopyLowering>(converter, patterns.getContext(),
                                                               axisInfo);
  patterns.add<AsyncCommitLowering, AsyncWaitLowering, BarrierLowering, LocalAllocLowering,
               LocalIndexLowering, FenceAsyncSharedLowering>(converter, patterns.getContext());
}
