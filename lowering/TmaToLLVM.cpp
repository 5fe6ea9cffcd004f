//===- TmaToLLVM.cpp - bulk tensor copies and mbarriers (sm_90a) -----------===//
//
// `tessel.tma_copy` becomes (where `pred` holds) one `mbarrier.arrive.expect_tx`
// announcing the tile's bytes and one `cp.async.bulk.tensor.2d` per box, the boxes dealt
// round-robin to one elected lane of each warp (a warp branches past the others'; issued
// from thread 0 alone they cost warp 0 ~100 instructions between the block's barriers
// and the next K step): a wgmma A tile
// as BLOCK_M/8 boxes of 8 rows x 64 columns, each landing at the shared row the
// accumulator layout wants (WgmmaLayout.h permutes A's 8-row groups); a wgmma B tile as
// BLOCK_N/64 boxes of 64 columns, one per 128-byte swizzle block (mma.sync's "swizzled"
// buffers likewise; tf32 mma.sync's "interleaved" B through a rank-4 map, one
// `cp.async.bulk.tensor.4d` per block). A tile several column blocks wide whose matrix
// has whole blocks (the op's `whole_blocks`, the runtime's same test) takes one box
// instead, through a map with the block as its outermost dimension (rank 3, or 5 when
// interleaved): one issue instead of BLOCK_N/64 (tf32: /32); with `multicast`, in a
// cluster whose programs copy the same tile, one piece each for all of them
// (`.multicast::cluster`, the fetch from L2 shared). The tensor map's 128-byte
// swizzle writes exactly the layout wgmma reads. `tessel.mbarrier_wait` spins on
// `mbarrier.try_wait.parity`.
//
//===----------------------------------------------------------------------===//
#include "dialect/Target.h"
#include "lowering/TileToLLVMUtils.h"
#include "lowering/WgmmaLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tessel;

namespace {

/// Attribute of a tessel.tma_copy: the index of its first box among its block's boxes
/// (assignTmaIssuers), which decides the warp that issues each.
constexpr llvm::StringLiteral kFirstBoxAttr = "tessel.first_box";

Value sharedAddress(OpBuilder &b, Location loc, Value pointer) {
  return LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), pointer);
}

/// Replaces `op` (no results) by one inline-PTX statement.
LogicalResult replaceWithPtx(ConversionPatternRewriter &rewriter, Operation *op,
                             ValueRange operands, StringRef text, StringRef constraints) {
  createInlinePtx(rewriter, op->getLoc(), Type(), operands, text, constraints);
  rewriter.eraseOp(op);
  return success();
}

/// Thread 0 in predicate p.
std::string threadZero() {
  return "{\n.reg .pred p;\n.reg .b32 t, rr, cc, zz;\nmov.u32 t, %tid.x;\nmov.b32 zz, 0;\n"
         "setp.eq.u32 p, t, 0;\n";
}

struct MBarrierInitLowering : OpConversionPattern<MBarrierInitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MBarrierInitOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value bar = sharedAddress(rewriter, op.getLoc(), adaptor.getBarrier().front());
    std::string text = threadZero() +
                       llvm::formatv("@p mbarrier.init.shared::cta.b64 [$0], {0};\n"
                                     "@p fence.mbarrier_init.release.cluster;\n}",
                                     op.getCount())
                           .str();
    return replaceWithPtx(rewriter, op, ValueRange{bar}, text, "r");
  }
};

/// The tile (row, column) where each box (one `cp.async.bulk.tensor`) of a copy into
/// `dst` starts: a wgmma A tile in 8-row groups, every other tile in 128-byte column
/// blocks.
SmallVector<std::pair<int64_t, int64_t>> getBoxOrigins(TmaCopyOp op) {
  SharedType dst = op.getDst().getType();
  SmallVector<std::pair<int64_t, int64_t>> origins;
  if (dst.getLayout() == SharedLayout::WgmmaA)
    for (int64_t row = 0; row < dst.getShape()[0]; row += 8)
      origins.push_back({row, 0});
  else
    for (int64_t col = 0; col < dst.getShape()[1]; col += getSwizzleBlockColumns(dst.getElementType()))
      origins.push_back({0, col});
  return origins;
}

struct TmaCopyLowering : OpConversionPattern<TmaCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(TmaCopyOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SharedType dst = op.getDst().getType();
    SharedLayout layout = dst.getLayout();
    if (dst.isPadded())
      return rewriter.notifyMatchFailure(op, "bulk copies write wgmma operand buffers only");
    int64_t rows = dst.getShape()[0], cols = dst.getShape()[1];
    int64_t elementBytes = dst.getElementType().getIntOrFloatBitWidth() / 8;
    // The warps that run the copy deal its boxes: the program's, or a warp-specialized
    // producer's (warps firstWarp ..).
    WarpPartition partition = getWarpPartition(op->getBlock());
    // (The tile's layout is made for the program's num_warps: numWarps, not dealWarps.)
    unsigned numWarps = getNumWarps(op);
    unsigned dealWarps = partition.numWarps ? partition.numWarps : numWarps;
    int64_t firstBox = 0;
    if (auto attr = op->getAttrOfType<IntegerAttr>(kFirstBoxAttr))
      firstBox = attr.getInt();
    // $0 map, $1 row, $2 col, $3 dst, $4 barrier, $5 pred. One lane of warp w (elect.sync,
    // which lets ptxas issue the copy from uniform registers without a loop over lanes)
    // issues the boxes whose index among the block's copies is w modulo the warps (the
    // first of them also announces the tile's bytes); the other warps branch past them.
    // Batch coordinates (the map's outer dimensions) follow every other operand.
    bool wholeBlocks = bool(op.getWholeBlocks());
    unsigned batchStart = 6 + unsigned(wholeBlocks) + unsigned(bool(op.getMulticast())) +
                          (op.getEmpty() ? 3 : 0);
    std::string batch;
    for (unsigned i = 0; i < op.getBatch().size(); ++i)
      batch += ", $" + std::to_string(batchStart + i);
    unsigned rank = 2 + unsigned(op.getBatch().size());
    std::string firstWarp =
        partition.firstWarp ? "sub.u32 w, w, " + std::to_string(partition.firstWarp) + ";\n" : "";
    std::string text = "{\n.reg .pred p, q;\n.reg .b32 t, w, rr, cc, zz, bb;\nmov.u32 t, %tid.x;\n"
                       "shr.u32 w, t, 5;\n" + firstWarp + "mov.b32 zz, 0;\n"
                       "elect.sync _|p, 0xffffffff;\nand.pred p, p, $5;\n";
    // An "interleaved" tile comes through a rank-4 map (columns, k / 4 % 2, k % 4, k / 8;
    // runtime/Kernel.cpp) that writes its rows in that order.
    bool interleaved = layout == SharedLayout::Interleaved;
    int64_t index = 0;
    auto box = [&](int64_t rowOffset, int64_t colOffset, int64_t dstOffset) {
      int64_t warp = (firstBox + index) % dealWarps;
      std::string skip = "TESSEL_TMA_${:uid}_" + std::to_string(index);
      text += llvm::formatv("setp.ne.u32 q, w, {0};\n@q bra.uni {1};\n", warp, skip).str();
      if (index++ == 0)
        text += llvm::formatv("@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$4], {0};\n",
                              rows * cols * elementBytes)
                    .str();
      text += llvm::formatv("add.s32 rr, $1, {0};\nadd.s32 cc, $2, {1};\n", rowOffset,
                            colOffset)
                  .str();
      if (interleaved)
        text += llvm::formatv("shr.s32 rr, rr, 3;\n@p cp.async.bulk.tensor.4d.shared::cluster."
                              "global.mbarrier::complete_tx::bytes [$3+{0}], [$0, {{cc, zz, zz, "
                              "rr}], [$4];\n",
                              dstOffset)
                    .str();
      else
        text += llvm::formatv("@p cp.async.bulk.tensor.{1}d.shared::cluster.global.mbarrier::"
                              "complete_tx::bytes [$3+{0}], [$0, {{cc, rr{2}}], [$4];\n",
                              dstOffset, rank, batch)
                    .str();
      text += skip + ":\n";
    };
    // Whole column blocks ($6): the map's outermost dimension is the block, and one box
    // from the tile's first block brings them all, block after block as the per-block
    // boxes below would land; the warp of the copy's first box issues it.
    if (wholeBlocks) {
      int64_t perBlock = getSwizzleBlockColumns(dst.getElementType());
      if (layout == SharedLayout::WgmmaA || cols % perBlock != 0 || cols == perBlock)
        return rewriter.notifyMatchFailure(op, "whole_blocks needs a tile of column blocks");
      if (auto ctas = op.getCtas(); ctas && (cols / perBlock) % *ctas != 0)
        return rewriter.notifyMatchFailure(op, "multicast pieces must be whole column blocks");
      text += llvm::formatv("@!$6 bra.uni TESSEL_TMA_${{:uid}_BLOCKS;\n"
                            "setp.ne.u32 q, w, {0};\n@q bra.uni TESSEL_TMA_${{:uid}_END;\n"
                            "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$4], {1};\n"
                            "shr.s32 bb, $2, {2};\n",
                            firstBox % dealWarps, rows * cols * elementBytes,
                            llvm::Log2_64(perBlock))
                  .str();
      // One box of `pieces` column blocks from block `bb` into `dst` (+ `multicast`).
      auto wholeBox = [&](StringRef dst, StringRef multicast) {
        std::string suffix = multicast.empty() ? "" : ".multicast::cluster";
        std::string mask = multicast.empty() ? "" : (", " + multicast).str();
        if (interleaved)
          return llvm::formatv("@p cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::"
                               "complete_tx::bytes{0} [{1}], [$0, {{zz, zz, zz, rr, bb}], "
                               "[$4]{2};\n",
                               suffix, dst, mask)
              .str();
        return llvm::formatv("@p cp.async.bulk.tensor.{3}d.shared::cluster.global.mbarrier::"
                             "complete_tx::bytes{0} [{1}], [$0, {{zz, $1, bb{4}}], [$4]{2};\n",
                             suffix, dst, mask, rank + 1, batch)
            .str();
      };
      if (interleaved)
        text += "shr.s32 rr, $1, 3;\n";
      if (auto ctas = op.getCtas()) {
        // The map's box is 1/ctas of the tile. Where the cluster of ctas programs all
        // copy this tile ($7), program r fetches piece r for all of them (it lands at the
        // same offset in each one's dst and signals each one's barrier); otherwise this
        // program fetches every piece itself.
        int64_t pieceBlocks = cols / perBlock / *ctas;
        int64_t pieceBytes = rows * cols * elementBytes / *ctas;
        text += ".reg .b32 r, d;\n.reg .b16 k;\n@!$7 bra.uni TESSEL_TMA_${:uid}_OWN;\n";
        // The issuing lane waits for the others' release of the slot ($8, parity $9,
        // where $10); the other warps have branched past.
        if (op.getEmpty())
          text += ".reg .pred e;\nand.pred e, p, $10;\n@!e bra TESSEL_TMA_${:uid}_ISSUE;\n"
                  "TESSEL_TMA_${:uid}_EMPTY:\n"
                  "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 e, [$8], $9;\n"
                  "@!e bra TESSEL_TMA_${:uid}_EMPTY;\nTESSEL_TMA_${:uid}_ISSUE:\n"
                  "bar.warp.sync 0xffffffff;\n";
        text += llvm::formatv("mov.u32 r, %cluster_ctarank;\nmad.lo.s32 bb, r, {0}, bb;\n"
                              "mad.lo.s32 d, r, {1}, $3;\nmov.b16 k, {2};\n",
                              pieceBlocks, pieceBytes, (1 << *ctas) - 1)
                    .str();
        text += wholeBox("d", "k");
        text += "bra.uni TESSEL_TMA_${:uid}_END;\nTESSEL_TMA_${:uid}_OWN:\n";
        for (int64_t piece = 0; piece < *ctas; ++piece) {
          if (piece)
            text += llvm::formatv("add.s32 bb, bb, {0};\n", pieceBlocks).str();
          text += wholeBox(llvm::formatv("$3+{0}", piece * pieceBytes).str(), "");
        }
      } else {
        text += wholeBox("$3", "");
      }
      text += "bra.uni TESSEL_TMA_${:uid}_END;\nTESSEL_TMA_${:uid}_BLOCKS:\n";
    }
    // A: 8-row groups to their shared rows; B: one box per 128-byte column block.
    for (auto [row, col] : getBoxOrigins(op))
      box(row, col, getWgmmaBoxOffset(layout, row, col, rows, numWarps, elementBytes));
    if (wholeBlocks)
      text += "TESSEL_TMA_${:uid}_END:\n";
    text += "}";
    SmallVector<Value> operands{adaptor.getTensorMap().front(), adaptor.getRow().front(),
                                adaptor.getCol().front(),
                                sharedAddress(rewriter, loc, adaptor.getDst().front()),
                                sharedAddress(rewriter, loc, adaptor.getBarrier().front()),
                                adaptor.getPred().front()};
    std::string constraints = "l,r,r,r,r,b";
    if (wholeBlocks) {
      operands.push_back(adaptor.getWholeBlocks().front());
      constraints += ",b";
    }
    if (op.getMulticast()) {
      operands.push_back(adaptor.getMulticast().front());
      constraints += ",b";
    }
    if (op.getEmpty()) {
      operands.push_back(sharedAddress(rewriter, loc, adaptor.getEmpty().front()));
      operands.push_back(adaptor.getEmptyPhase().front());
      operands.push_back(adaptor.getEmptyWait().front());
      constraints += ",r,r,b";
    }
    for (ValueRange coordinate : adaptor.getBatch()) {
      operands.push_back(coordinate.front());
      constraints += ",r";
    }
    return replaceWithPtx(rewriter, op, operands, text, constraints);
  }
};

struct MBarrierWaitLowering : OpConversionPattern<MBarrierWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MBarrierWaitOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value bar = sharedAddress(rewriter, op.getLoc(), adaptor.getBarrier().front());
    std::string text = llvm::formatv("{\n.reg .pred p;\nTESSEL_WAIT_${{:uid}:\n"
                                     "mbarrier.try_wait.parity{0}.shared::cta.b64 p, [$0], $1;\n"
                                     "@!p bra TESSEL_WAIT_${{:uid};\n}",
                                     op.getCluster() ? ".acquire.cluster" : "")
                           .str();
    return replaceWithPtx(rewriter, op, ValueRange{bar, adaptor.getPhase().front()}, text,
                          "r,r");
  }
};

/// Warpgroup g's turn is named barrier kFirstTurnBarrier + g (bar.sync 1 and 2 are the
/// partitions', TileToLLVMUtils.h): 128 threads of the warpgroup before it arrive, its own
/// 128 wait.
struct WarpgroupTurnLowering : OpConversionPattern<WarpgroupTurnOp> {
  using OpConversionPattern::OpConversionPattern;
  static constexpr int kFirstTurnBarrier = 3;
  LogicalResult matchAndRewrite(WarpgroupTurnOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    int groups = op.getGroups();
    std::string first = std::to_string(kFirstTurnBarrier);
    std::string text = "{\n.reg .b32 g;\n.reg .pred p;\nmov.u32 g, %tid.x;\nshr.u32 g, g, 7;\n";
    switch (op.getStep()) {
    case WarpgroupTurnStep::Start:
      text += "setp.eq.u32 p, g, " + std::to_string(groups - 1) + ";\n@p bar.arrive " + first +
              ", 256;\n}";
      break;
    case WarpgroupTurnStep::Wait:
      text += "add.u32 g, g, " + first + ";\nbar.sync g, 256;\n}";
      break;
    case WarpgroupTurnStep::Pass:
      text += "add.u32 g, g, 1;\nsetp.eq.u32 p, g, " + std::to_string(groups) +
              ";\nselp.u32 g, 0, g, p;\nadd.u32 g, g, " + first + ";\nbar.arrive g, 256;\n}";
      break;
    }
    return replaceWithPtx(rewriter, op, ValueRange(), text, "");
  }
};

/// Lane 0 of the warp (where $1) arrives on the mbarrier at $0, releasing the warp's reads.
struct MBarrierArriveLowering : OpConversionPattern<MBarrierArriveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(MBarrierArriveOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value bar = sharedAddress(rewriter, op.getLoc(), adaptor.getBarrier().front());
    std::string text = "{\n.reg .pred p;\n.reg .b32 l;\nmov.u32 l, %laneid;\n"
                       "setp.eq.and.u32 p, l, 0, $1;\n"
                       "@p mbarrier.arrive.release.cta.shared::cta.b64 _, [$0];\n}";
    return replaceWithPtx(rewriter, op, ValueRange{bar, adaptor.getPred().front()}, text,
                          "r,b");
  }
};

/// bar.sync, then thread 0 (where $1) arrives on the mbarrier at $0's place in each other
/// program of the cluster (mapa: the same shared offset in program r ^ q).
struct ClusterReleaseLowering : OpConversionPattern<ClusterReleaseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ClusterReleaseOp op, OneToNOpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value bar = sharedAddress(rewriter, op.getLoc(), adaptor.getBarrier().front());
    std::string text = "{\n.reg .pred p;\n.reg .b32 t, r, x, a;\nbar.sync 0;\n"
                       "mov.u32 t, %tid.x;\nsetp.eq.u32 p, t, 0;\nand.pred p, p, $1;\n"
                       "mov.u32 r, %cluster_ctarank;\n";
    for (int64_t q = 1; q < op.getCtas(); ++q)
      text += llvm::formatv("xor.b32 x, r, {0};\nmapa.shared::cluster.u32 a, $0, x;\n"
                            "@p mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a];\n",
                            q)
                  .str();
    text += "}";
    return replaceWithPtx(rewriter, op, ValueRange{bar, adaptor.getPred().front()}, text,
                          "r,b");
  }
};

struct ClusterSizeLowering : OpConversionPattern<ClusterSizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ClusterSizeOp op, OneToNOpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, createInlinePtx(rewriter, op.getLoc(), rewriter.getI32Type(),
                                           ValueRange(), "mov.u32 $0, %cluster_nctarank;",
                                           "=r")
                               ->getResults());
    return success();
  }
};
} // namespace

void mlir::tessel::assignTmaIssuers(ModuleOp module) {
  // Each block's copies (an iteration's, or the prologue's) number their boxes in order.
  module.walk([](Block *block) {
    int64_t next = 0;
    for (auto copy : block->getOps<TmaCopyOp>()) {
      copy->setAttr(kFirstBoxAttr, IntegerAttr::get(IntegerType::get(copy.getContext(), 64), next));
      next += int64_t(getBoxOrigins(copy).size());
    }
  });
}

void mlir::tessel::populateTmaToLLVMPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<MBarrierInitLowering, TmaCopyLowering, MBarrierWaitLowering,
               MBarrierArriveLowering, WarpgroupTurnLowering, ClusterReleaseLowering, ClusterSizeLowering>(converter, patterns.getContext());
}
