//===- DotToLLVM.cpp - tessel.dot: pick the instructions, stage, emit ------===//
//
// Picks a dot's instruction family and emits it (DotEmitters.h, one file per family):
//  - mma.sync (the result has the accumulator layout of MmaLayout.h and the operands are
//    f16/bf16, or f32 with inputPrecision = "tf32"): DotOnMmaSync.cpp.
//  - wgmma (sm_90a, WgmmaLayout.h): f16/bf16 from two descriptors into the bulk copies'
//    buffers; f16/bf16 with A from registers and B by descriptor; tf32 transposed:
//    DotOnWgmma.cpp.
//  - FMAs (any layout; f32 "ieee", or tiles too small for every warp to hold whole
//    instruction tiles): DotOnFma.cpp.
// Register operands are staged in the scratch first (DotStaging.cpp): every thread writes
// its registers of a (MxK) and b (KxN) row-major, each row padded by 16 bytes so that the
// eight 16-byte rows one ldmatrix reads for an 8x8 matrix land in distinct banks; then a
// barrier, and a final one after the dot: the scratch is shared with the next op.
// Operands already in shared memory (`!tessel.shared`, filled by the software pipeliner's
// copies) are read in place: no staging and no barriers here (-tessel-insert-barriers
// places them).
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/DotEmitters.h"
#include "lowering/MmaLayout.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tessel;
using namespace mlir::tessel::dot;

namespace {

struct DotLowering : OpConversionPattern<DotOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(DotOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<TileLayout> layout = TileLayout::get(op.getType());
    bool aShared = isa<SharedType>(op.getA().getType());
    bool bShared = isa<SharedType>(op.getB().getType());
    if (failed(layout) ||
        (!aShared && failed(TileLayout::get(cast<RankedTensorType>(op.getA().getType())))) ||
        (!bShared && failed(TileLayout::get(cast<RankedTensorType>(op.getB().getType())))))
      return rewriter.notifyMatchFailure(op, "tiles have no layout");
    Staging staging(op);
    ThreadIndex thread = getThreadIndex(rewriter, loc);
    Value scratch = getSharedMemoryBase(rewriter, loc);
    bool useMma = getMmaK(op) != 0 && isMmaAccumulatorLayout(*layout);
    bool tf32 = useMma && getElementTypeOrSelf(op.getA().getType()).isF32();
    Target target = Target::of(op);
    unsigned numWarps = layout->getRoot().getNumWarps();
    bool hopper = target.hasRoundToNearestTf32();
    bool tf32Wgmma = canUseTf32Wgmma(op, numWarps, target.arch()) &&
                     layout->getRoot() == getTf32WgmmaAccumulatorLayout(op.getContext(), numWarps);
    if (getSharedLayout(op.getA()) == SharedLayout::Interleaved ||
        (getSharedLayout(op.getB()) == SharedLayout::Interleaved && !(useMma && tf32)))
      return op.emitOpError("reads an interleaved buffer but is not a tf32 dot on mma.sync "
                            "reading it as B");
    for (Value operand : {op.getA(), op.getB()}) {
      if (tf32Wgmma || getSharedLayout(operand) != SharedLayout::Swizzled)
        continue;
      auto type = cast<SharedType>(operand.getType());
      int64_t rowBytes = type.getShape()[1] * (type.getElementType().getIntOrFloatBitWidth() / 8);
      if (!useMma || rowBytes % 128 != 0 || (operand == op.getA() && rowBytes != 128))
        return op.emitOpError("reads a swizzled buffer but does not run on mma.sync with "
                              "128-byte rows of A");
    }
    // Register-A wgmma (WgmmaLayout.h): B from its wgmma_b or swizzled ring, or staged
    // swizzled, K-major where K fills 128-byte rows and B's registers run along K (or N
    // does not fill them).
    bool registerWgmma = runsOnRegisterWgmma(op);
    auto bType = cast<ShapedType>(op.getB().getType());
    int64_t perRow = getSwizzleBlockColumns(bType.getElementType());
    // A transposed view of a ring slot (SoftwarePipeline.cpp) is read K-major, and only so.
    bool bSharedTransposed = bShared && op.getB().getDefiningOp<TransOp>();
    bool sharedWgmma = getSharedLayout(op.getA()) == SharedLayout::WgmmaA &&
                       getSharedLayout(op.getB()) == SharedLayout::WgmmaB;
    if (bSharedTransposed && !registerWgmma && !sharedWgmma)
      return op.emitOpError("reads a transposed shared tile but does not run on wgmma "
                            "(sm_90a, A in registers or a wgmma_a buffer, K in 128-byte rows)");
    bool bKMajor = bSharedTransposed ||
                   (registerWgmma && !bShared && bType.getDimSize(0) % perRow == 0 &&
                    (bType.getDimSize(1) % perRow != 0 || staging.bTransposed));
    // Register operands go to the scratch (rounded to tf32 there); shared ones are read
    // in place, and -tessel-insert-barriers has ordered their copies.
    Value aBase = scratch, bBase;
    bool aStaged = !aShared && !staging.aInRegisters;
    if (aShared)
      aBase = adaptor.getA().front();
    else if (aStaged)
      stageTile(rewriter, loc, adaptor.getA(), cast<RankedTensorType>(op.getA().getType()),
                aBase, staging.aStride, staging.elementBytes, thread, tf32, hopper);
    if (bShared) {
      bBase = adaptor.getB().front();
    } else {
      bBase = byteOffset(rewriter, loc, scratch,
                          createI32(rewriter, loc, staging.bOffset * staging.elementBytes));
      if (registerWgmma)
        stageTile(rewriter, loc, adaptor.getB(), cast<RankedTensorType>(op.getB().getType()),
                  bBase, 0, staging.elementBytes, thread, false, hopper, bKMajor,
                  bKMajor ? bType.getDimSize(1) : bType.getDimSize(0));
      else
        stageTile(rewriter, loc, adaptor.getB(), cast<RankedTensorType>(op.getB().getType()),
                  bBase, staging.bStride, staging.elementBytes, thread, tf32, hopper,
                  staging.bTransposed);
    }
    bool staged = aStaged || !bShared;
    // wgmma reads the staged B through the async proxy.
    if (registerWgmma && staged)
      createAsyncProxyFence(rewriter, loc);
    if (staged)
      createBarrier(rewriter, loc);
    SmallVector<Value> acc(adaptor.getAcc().begin(), adaptor.getAcc().end());
    if (registerWgmma)
      emitRegisterWgmma(rewriter, loc, op, *layout, adaptor.getA(), bBase, bKMajor, acc);
    else if (sharedWgmma)
      emitWgmma(rewriter, loc, op, *layout, aBase, bBase, bSharedTransposed, thread, acc);
    else if (tf32Wgmma)
      emitWgmmaTf32(rewriter, loc, op, *layout, aBase, bBase, thread, acc);
    else if (useMma)
      emitMma(rewriter, loc, op, *layout, staging, aBase, bBase, adaptor.getA(), thread,
              tf32 && aShared, tf32 && bShared, hopper, acc);
    else
      emitFma(rewriter, loc, op, *layout, staging, aBase, bBase, thread, acc);
    if (staged)
      createBarrier(rewriter, loc);
    rewriter.replaceOpWithMultiple(op, {acc});
    return success();
  }
};
/// tessel.dot_wait: wgmma.wait_group on sm_90a (the only target with asynchronous dots);
/// elsewhere the registers pass through unchanged.
struct DotWaitLowering : OpConversionPattern<DotWaitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(DotWaitOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> regs(adaptor.getSrc().begin(), adaptor.getSrc().end());
    if (Target::of(op).hasWgmma()) {
      // An async tf32 dot commits one group per K step (emitWgmmaTf32).
      unsigned pending = op.getPending();
      FailureOr<TileLayout> layout = TileLayout::get(op.getSrc().getType());
      if (succeeded(layout) &&
          layout->getRoot() == getTf32WgmmaAccumulatorLayout(op.getContext(),
                                                               layout->getRoot().getNumWarps()))
        pending *= kTf32WgmmaGroups;
      waitForWgmma(rewriter, op.getLoc(), pending, regs);
    }
    rewriter.replaceOpWithMultiple(op, {regs});
    return success();
  }
};
} // namespace

int64_t mlir::tessel::getDotScratchBytes(DotOp dot) { return Staging(dot).totalBytes; }

void mlir::tessel::populateDotToLLVMPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<DotLowering, DotWaitLowering>(converter, patterns.getContext());
}
