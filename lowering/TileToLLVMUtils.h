//===- TileToLLVMUtils.h - shared pieces of the tile -> LLVM lowering -----===//
#ifndef TESSEL_LOWERING_TILETOLLVMUTILS_H
#define TESSEL_LOWERING_TILETOLLVMUTILS_H

#include "dialect/Layout.h"
#include "lowering/AxisInfo.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tessel {

/// Name of the dynamic shared-memory array every kernel's scratch lives in.
inline constexpr llvm::StringLiteral kSharedMemoryName = "tessel_smem";

/// Bytes one element of a tile takes in shared memory (i1: 1, pointers: 8).
int64_t getScratchElementBytes(Type elementType);
/// Shared-memory scratch `op` needs when lowered (0 for most ops).
FailureOr<int64_t> getScratchBytes(Operation *op);

/// Shared memory `tessel.dot` stages its operands in (DotToLLVM.cpp).
int64_t getDotScratchBytes(DotOp dot);

/// Threads that hold distinct elements along tile dimension `dim` within a warp, and
/// warps that do (the rest hold copies).
unsigned getDistinctLanes(const TileLayout &layout, unsigned dim);
unsigned getDistinctWarps(const TileLayout &layout, unsigned dim);

Value createI32(OpBuilder &b, Location loc, int64_t value);

struct ThreadIndex {
  Value lane;
  Value warp;
};
ThreadIndex getThreadIndex(OpBuilder &b, Location loc);

/// This thread's index among the threads along root dimension `rootDim` of `layout`:
/// warp_r * threadsPerWarp_r + lane_r.
Value getThreadIndexAlong(OpBuilder &b, Location loc, const TileLayout &layout, unsigned rootDim,
                          const ThreadIndex &thread);
/// Coordinates (i32, one per dimension) of every register of `layout` in this thread.
SmallVector<SmallVector<Value>> getCoordinates(OpBuilder &b, Location loc,
                                               const TileLayout &layout,
                                               const ThreadIndex &thread);
/// Row-major linear index of `coords` in a tile of `shape`.
Value linearize(OpBuilder &b, Location loc, ArrayRef<Value> coords, ArrayRef<int64_t> shape);

/// `base` (any pointer) advanced by `offset` bytes.
Value byteOffset(OpBuilder &b, Location loc, Value base, Value offset);

/// Inline PTX (AT&T dialect); `resultType` may be null. Pure computations pass
/// `sideEffects = false` so LLVM may CSE and move them.
LLVM::InlineAsmOp createInlinePtx(OpBuilder &b, Location loc, Type resultType,
                                  ValueRange operands, StringRef text, StringRef constraints,
                                  bool sideEffects = true);

/// Base address (addrspace 3) of the kernel's shared scratch.
Value getSharedMemoryBase(OpBuilder &b, Location loc);

/// The warps that run code at a point: all the program's, or one partition of a
/// tessel.warp_specialize (the consumers are warps 0 .. num_warps - 1, the producer the
/// warps after them). A partition's barriers are named barriers of its own.
struct WarpPartition {
  unsigned firstWarp = 0, numWarps = 0;
  unsigned barrierId = 0; // 0: the whole program (bar.sync 0)
};
/// The partition of the code at `block` (the innermost tessel.warp_specialize region
/// around it), or the whole program's warps.
WarpPartition getWarpPartition(Block *block);

/// A barrier for the warps that run the code at `b`'s insertion point: `bar.sync 0`, or
/// inside a partition of a tessel.warp_specialize its named barrier.
void createBarrier(OpBuilder &b, Location loc);

/// `fence.proxy.async.shared::cta`: this thread's shared-memory writes become visible to
/// the async proxy (wgmma, bulk copies) once a barrier follows.
void createAsyncProxyFence(OpBuilder &b, Location loc);

/// Butterfly shuffle of any 16-, 32- or 64-bit scalar across lanes.
Value shuffleXor(OpBuilder &b, Location loc, Value value, unsigned laneMask);

/// Tile type -> the scalar type of one register (pointers become !llvm.ptr<1>).
Type convertElementType(Type elementType);

void populateElementwiseToLLVMPatterns(const TypeConverter &converter,
                                       RewritePatternSet &patterns);
void populateMemoryToLLVMPatterns(const TypeConverter &converter, RewritePatternSet &patterns,
                                  const AxisInfoAnalysis &axisInfo);
void populateReduceToLLVMPatterns(const TypeConverter &converter, RewritePatternSet &patterns);
void populateAtomicToLLVMPatterns(const TypeConverter &converter, RewritePatternSet &patterns,
                                  const AxisInfoAnalysis &axisInfo);
/// Elements per global access of a tile through `ptr` (1 for scalars): the thread's run
/// along the fastest dimension that the pointers' contiguity, alignment and the mask allow.
unsigned getAccessWidth(const AxisInfoAnalysis &axisInfo, Value ptr, Value mask, Type elementType);
void populateDotToLLVMPatterns(const TypeConverter &converter, RewritePatternSet &patterns);
void populateTransToLLVMPatterns(const TypeConverter &converter, RewritePatternSet &patterns);
void populateTmaToLLVMPatterns(const TypeConverter &converter, RewritePatternSet &patterns);
/// Turns each tessel.warp_specialize (legal during the tile lowering) into branches on the
/// warp, once the ops inside it are lowered (WarpSpecializeToLLVM.cpp).
void lowerWarpSpecializeOps(ModuleOp module);

/// Which warp issues which box of the bulk copies: numbers each block's boxes in order
/// (the `tessel.first_box` of each `tessel.tma_copy`); run before the conversion.
void assignTmaIssuers(ModuleOp module);
void populateConvertLayoutToLLVMPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns);

} // namespace mlir::tessel

#endif // TESSEL_LOWERING_TILETOLLVMUTILS_H
