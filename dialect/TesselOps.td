//===- TesselOps.td - tile operations -----------------------*- tablegen -*-===//
#ifndef TESSEL_OPS_TD
#define TESSEL_OPS_TD

include "dialect/TesselDialect.td"
include "dialect/TesselTypes.td"
include "dialect/TesselAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Program coordinates
//===----------------------------------------------------------------------===//

def Tessel_ProgramIdOp : Tessel_Op<"program_id", [Pure]> {
  let summary = "Index of this program instance along a grid axis";
  let description = [{
    ```mlir
    %row = tessel.program_id 0 : i32
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Tessel_ClusterSizeOp : Tessel_Op<"cluster_size", [Pure]> {
  let summary = "Programs in this program's cluster (1 without a cluster launch)";
  let description = [{
    ```mlir
    %n = tessel.cluster_size : i32
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Tessel_NumProgramsOp : Tessel_Op<"num_programs", [Pure]> {
  let summary = "Number of program instances along a grid axis";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Tile construction and shape
//===----------------------------------------------------------------------===//

def Tessel_MakeRangeOp : Tessel_Op<"make_range", [Pure]> {
  let summary = "The tile [start, start + 1, ..., end - 1]";
  let description = [{
    ```mlir
    %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    ```
    The length `end - start` must be a power of two and match the result's only dimension.
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tessel_SplatOp : Tessel_Op<"splat", [Pure,
    TypesMatchWith<"result element type matches the scalar", "result", "src",
                   "::llvm::cast<RankedTensorType>($_self).getElementType()">]> {
  let summary = "A tile with every element equal to a scalar";
  let description = [{
    ```mlir
    %t = tessel.splat %x : tensor<128xf32>
    ```
  }];
  let arguments = (ins Tessel_Elem:$src);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
}

def Tessel_BroadcastOp : Tessel_Op<"broadcast", [Pure]> {
  let summary = "Repeat a tile along its size-1 dimensions";
  let description = [{
    ```mlir
    %b = tessel.broadcast %a : tensor<128x1xf32> -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Tessel_Tile:$src);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tessel_ExpandDimsOp : Tessel_Op<"expand_dims", [Pure]> {
  let summary = "Insert a dimension of size 1 (`x[:, None]`)";
  let description = [{
    ```mlir
    %c = tessel.expand_dims %r {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    ```
    With layouts, the operand's encoding is the `#tessel.slice` of the result's along `axis`.
  }];
  let arguments = (ins Tessel_Tile:$src, I32Attr:$axis);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

def Tessel_ConvertLayoutOp : Tessel_Op<"convert_layout", [Pure, SameOperandsAndResultShape,
                                                          SameOperandsAndResultElementType]> {
  let summary = "Move a tile's elements to another layout";
  let description = [{
    Redistributes the elements between threads (through shared memory in general).
    Canonicalisation removes conversions whose source can be recomputed cheaply in the
    target layout.
  }];
  let arguments = (ins Tessel_Tile:$src);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Tessel_AddPtrOp : Tessel_Op<"addptr", [Pure, Elementwise, SameOperandsAndResultShape,
    AllTypesMatch<["ptr", "result"]>]> {
  let summary = "Offset pointers by a number of elements";
  let description = [{
    ```mlir
    %p = tessel.addptr %base, %offsets : tensor<128x!tessel.ptr<f32>>, tensor<128xi32>
    ```
  }];
  let arguments = (ins Tessel_PtrLike:$ptr, Tessel_IntLike:$offset);
  let results = (outs Tessel_PtrLike:$result);
  let assemblyFormat = "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)";
}

def Tessel_LoadOp : Tessel_Op<"load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead]>,
    TypesMatchWith<"result matches the pointee type", "ptr", "result",
                   "::mlir::tessel::getPointeeType($_self)">,
    TypesMatchWith<"mask has the shape of ptr", "ptr", "mask",
                   "::mlir::tessel::getI1SameShape($_self)",
                   "($_op.getOperands().size() <= 1) || std::equal_to<>()">,
    TypesMatchWith<"other matches the pointee type", "ptr", "other",
                   "::mlir::tessel::getPointeeType($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let summary = "Load a tile (or a scalar) from global memory, with an optional mask";
  let description = [{
    Elements whose mask is false are not read and take the value of `other`
    (undefined without `other`). A unit attribute `shared` (the language's
    `load(..., shared=True)`) lets a tile loaded before a loop and read there only as
    dots' A operand stay in shared memory (-tessel-invariant-operands-to-shared).

    ```mlir
    %x = tessel.load %p, %mask, %other : tensor<128x!tessel.ptr<f32>>
    ```
  }];
  let arguments = (ins Tessel_PtrLike:$ptr, Optional<Tessel_BoolLike>:$mask,
                       Optional<Tessel_ValueLike>:$other);
  let results = (outs Tessel_ValueLike:$result);
  let assemblyFormat = "$ptr (`,` $mask^)? (`,` $other^)? attr-dict `:` type($ptr)";
  let extraClassDeclaration = [{
    static ::llvm::StringRef getSharedHintName() { return "shared"; }
  }];
}

def Tessel_StoreOp : Tessel_Op<"store", [
    MemoryEffects<[MemWrite]>,
    TypesMatchWith<"value matches the pointee type", "ptr", "value",
                   "::mlir::tessel::getPointeeType($_self)">,
    TypesMatchWith<"mask has the shape of ptr", "ptr", "mask",
                   "::mlir::tessel::getI1SameShape($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let summary = "Store a tile (or a scalar) to global memory, with an optional mask";
  let description = [{
    ```mlir
    tessel.store %p, %x, %mask : tensor<128x!tessel.ptr<f32>>
    ```
  }];
  let arguments = (ins Tessel_PtrLike:$ptr, Tessel_ValueLike:$value, Optional<Tessel_BoolLike>:$mask);
  let assemblyFormat = "$ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr)";
}

def Tessel_AtomicRMWOp : Tessel_Op<"atomic_rmw", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"value matches the pointee type", "ptr", "value",
                   "::mlir::tessel::getPointeeType($_self)">,
    TypesMatchWith<"mask has the shape of ptr", "ptr", "mask",
                   "::mlir::tessel::getI1SameShape($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let summary = "Atomically combine a tile into global memory, element by element";
  let description = [{
    Each element whose mask is true is combined into its address atomically (`add`:
    `*p += x`), once, however many threads hold it. The old values are not returned:
    this is an accumulation (`red` in PTX). `add` takes f32 and i32.

    ```mlir
    tessel.atomic_rmw "add" %p, %x, %mask : tensor<64x128x!tessel.ptr<f32>>
    ```
  }];
  let arguments = (ins StrAttr:$kind, Tessel_PtrLike:$ptr, Tessel_ValueLike:$value,
                       Optional<Tessel_BoolLike>:$mask);
  let assemblyFormat = "$kind $ptr `,` $value (`,` $mask^)? attr-dict `:` type($ptr)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Tessel_ReduceOp : Tessel_Op<"reduce", [Pure]> {
  let summary = "Reduce a tile along one axis with add, max or min";
  let description = [{
    The result drops `axis`; reducing a 1-D tile gives a scalar. Float `max`/`min`
    propagate NaN.

    ```mlir
    %m = tessel.reduce max %x {axis = 0 : i32} : tensor<128xf32> -> f32
    %s = tessel.reduce add %t {axis = 1 : i32} : tensor<64x128xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Tessel_ReduceKindAttr:$kind, Tessel_Tile:$src, I32Attr:$axis);
  let results = (outs Tessel_ValueLike:$result);
  let assemblyFormat = "$kind $src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix multiply
//===----------------------------------------------------------------------===//

def Tessel_DotOperand : AnyTypeOf<[Tessel_Tile, Tessel_SharedType]>;

def Tessel_DotOp : Tessel_Op<"dot", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "Matrix product of two tiles added to an f32 accumulator";
  let description = [{
    `result = a * b + acc` with `a`: MxK, `b`: KxN, `acc` and `result`: MxN f32. The
    operands are f16, bf16 or f32 (all the same); products are accumulated in f32.
    `inputPrecision` says how f32 operands are multiplied: `"tf32"` (the default) lets
    tensor cores round them to tf32, `"ieee"` keeps full f32 (an FMA loop). It does not
    matter for f16 and bf16 operands. M, N and K are powers of two with K >= 16.

    `async` (set by -tessel-software-pipeline) lets a dot that runs on Hopper's
    asynchronous `wgmma` only issue its products: the result and the shared operands stay
    in use until a `tessel.dot_wait` retires it. Other paths are synchronous and ignore it.

    ```mlir
    %d = tessel.dot %a, %b, %c {inputPrecision = "tf32"}
        : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Tessel_DotOperand:$a, Tessel_DotOperand:$b, Tessel_Tile:$acc,
                       DefaultValuedStrAttr<StrAttr, "tf32">:$inputPrecision,
                       UnitAttr:$async);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tessel_DotWaitOp : Tessel_Op<"dot_wait", [SameOperandsAndResultType]> {
  let summary = "Retire asynchronous dots until at most `pending` groups are in flight";
  let description = [{
    Returns its operand, the result of an `async` dot (or a value carried from one), once
    all but the newest `pending` asynchronous dot groups of this thread have completed:
    `wgmma.wait_group pending` on sm_90a, nothing elsewhere. Until then the operand's
    registers and the dot's shared operands are still in use by the tensor cores.

    ```mlir
    %d = tessel.dot %a, %b, %acc {async} : !tessel.shared<128x64xbf16>, !tessel.shared<64x128xbf16> -> tensor<128x128xf32>
    %r = tessel.dot_wait %d {pending = 1 : i32} : tensor<128x128xf32>
    ```
  }];
  let arguments = (ins Tessel_Tile:$src, ConfinedAttr<I32Attr, [IntMinValue<0>]>:$pending);
  let results = (outs Tessel_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
}

def Tessel_TransOp : Tessel_Op<"trans", [Pure]> {
  let summary = "Transpose a 2-D tile, or view a shared tile transposed";
  let description = [{
    ```mlir
    %t = tessel.trans %x : tensor<64x32xf16> -> tensor<32x64xf16>
    %v = tessel.trans %slot : !tessel.shared<64x32xf16> -> !tessel.shared<32x64xf16>
    ```
    A register tile's transpose moves no data when the result takes the transposed layout,
    else goes through shared memory. A shared tile's transpose is a view that only a dot
    reads, as its B operand (the software pipeliner makes it for `dot(a, trans(load))`:
    the ring holds the loaded tile, and the dot reads it K-major).
  }];
  let arguments = (ins AnyTypeOf<[Tessel_Tile, Tessel_SharedType]>:$src);
  let results = (outs AnyTypeOf<[Tessel_Tile, Tessel_SharedType]>:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared memory and asynchronous copies (made by -tessel-software-pipeline)
//===----------------------------------------------------------------------===//

def Tessel_LocalAllocOp : Tessel_Op<"local_alloc", [MemoryEffects<[MemAlloc]>]> {
  let summary = "A buffer in shared memory";
  let description = [{
    ```mlir
    %buf = tessel.local_alloc : !tessel.shared<3x128x32xbf16>
    ```
    `-tessel-allocate-shared-memory` places it and records its byte `offset`.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Tessel_SharedType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Tessel_LocalIndexOp : Tessel_Op<"local_index", [Pure]> {
  let summary = "One tile of a stack of tiles in shared memory";
  let description = [{
    ```mlir
    %a = tessel.local_index %buf[%stage] : !tessel.shared<3x128x32xbf16> -> !tessel.shared<128x32xbf16>
    ```
  }];
  let arguments = (ins Tessel_SharedType:$src, I32:$index);
  let results = (outs Tessel_SharedType:$result);
  let assemblyFormat = [{
    $src `[` $index `]` attr-dict `:` qualified(type($src)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tessel_AsyncCopyOp : Tessel_Op<"async_copy", [
    MemoryEffects<[MemRead, MemWrite]>,
    TypesMatchWith<"mask has the shape of ptr", "ptr", "mask",
                   "::mlir::tessel::getI1SameShape($_self)",
                   "($_op.getOperands().size() <= 2) || std::equal_to<>()">]> {
  let summary = "Start copying a tile from global to shared memory";
  let description = [{
    Each thread copies the elements its registers of `ptr` address (per the tile's layout)
    into the same positions of `dst`, with `cp.async` where runs of 4, 8 or 16 bytes allow
    (masked-off elements are zero-filled and not read), else with ordinary loads and
    stores. The copy is complete, for this thread, after `tessel.async_commit` and a
    `tessel.async_wait` that leaves fewer groups pending; other threads see it after a
    barrier.

    ```mlir
    tessel.async_copy %ptrs, %mask into %dst : tensor<128x32x!tessel.ptr<bf16>>, !tessel.shared<128x32xbf16>
    ```
  }];
  let arguments = (ins Tessel_PtrTile:$ptr, Tessel_SharedType:$dst,
                       Optional<RankedTensorOf<[I1]>>:$mask);
  let assemblyFormat = [{
    $ptr (`,` $mask^)? `into` $dst attr-dict `:` type($ptr) `,` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def Tessel_AsyncCommitOp : Tessel_Op<"async_commit"> {
  let summary = "Close the group of asynchronous copies this thread started";
  let assemblyFormat = "attr-dict";
}

def Tessel_AsyncWaitOp : Tessel_Op<"async_wait"> {
  let summary = "Wait until at most `pending` groups of this thread's copies are in flight";
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>]>:$pending);
  let assemblyFormat = "attr-dict";
}

def Tessel_BarrierOp : Tessel_Op<"barrier"> {
  let summary = "All threads of the program wait here (bar.sync 0)";
  let description = [{
    Placed by `-tessel-insert-barriers` where shared-memory buffers change hands between
    threads; ops that use the scratch area place their own. With `cluster`, every thread
    of every program of the cluster waits (`barrier.cluster.arrive` then `.wait`): where
    the programs of a cluster write each other's buffers (multicast bulk copies). A
    launch without a cluster is a cluster of one program.

    ```mlir
    tessel.barrier
    tessel.barrier {cluster}
    ```
  }];
  let arguments = (ins UnitAttr:$cluster);
  let assemblyFormat = "attr-dict";
}

def Tessel_FenceAsyncSharedOp : Tessel_Op<"fence_async_shared"> {
  let summary = "Order this thread's shared-memory writes before async-proxy reads";
  let description = [{
    `fence.proxy.async.shared::cta`: copies made through the generic proxy (cp.async,
    stores) become visible to wgmma, which reads shared memory through the async proxy.
    Placed by `-tessel-insert-barriers` before the barrier that hands such buffers over.
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Bulk tensor copies (TMA) and mbarriers (sm_90a; made by -tessel-software-pipeline)
//===----------------------------------------------------------------------===//

def Tessel_MBarrierInitOp : Tessel_Op<"mbarrier_init"> {
  let summary = "Initialise an mbarrier in shared memory (one thread does it)";
  let description = [{
    `mbarrier.init` with `count` expected arrivals per phase, by thread 0, followed by
    the fence that makes the initialisation visible to the bulk-copy engine. A barrier
    must follow before other threads use it.

    ```mlir
    tessel.mbarrier_init %bar {count = 2 : i32} : !tessel.shared<1x1xi64>
    ```
  }];
  let arguments = (ins Tessel_SharedType:$barrier, ConfinedAttr<I32Attr, [IntMinValue<1>]>:$count);
  let assemblyFormat = "$barrier attr-dict `:` qualified(type($barrier))";
}

def Tessel_TmaCopyOp : Tessel_Op<"tma_copy", [MemoryEffects<[MemRead, MemWrite]>,
                                              AttrSizedOperandSegments]> {
  let summary = "Copy a tile from global to shared memory with the bulk tensor engine";
  let description = [{
    Where `pred` holds, one lane of one warp arrives on `barrier` announcing the tile's
    bytes, and the copy's boxes (`cp.async.bulk.tensor`, dealt to the warps in turn) fetch
    the block of rows `row`.. and columns `col`.. of
    the row-major matrix that `tensorMap` (a `__grid_constant__` CUtensorMap kernel
    parameter the runtime encodes) describes; elements outside the matrix arrive as zero.
    The copy lands in `dst` in the layout the wgmma lowering reads (WgmmaLayout.h), box by
    box; it is complete for everyone once `tessel.mbarrier_wait` sees the phase flip.

    A tile several 128-byte column blocks wide takes one box per block, unless
    `whole_blocks` holds: then the matrix's columns are whole blocks, the runtime encoded
    the map with the block as one more dimension (the recipe's `col_blocks`), and one box
    brings the tile (`col` must then start a block).

    With `multicast %active` (and `whole_blocks`), the map's box is 1/`ctas` of the
    tile's blocks (the recipe's `multicast`). Where `active` holds (the program runs in a
    cluster of `ctas` programs that all copy this very tile), program r of the cluster
    fetches piece r once for all of them (`.multicast::cluster`: it lands at the same
    place in each program's `dst` and signals each one's `barrier`); otherwise the
    program fetches all `ctas` pieces itself. Overwriting a slot the others may still
    read needs their release of it first: with `after %empty[%phase] if %wait`, the lane
    that issues the shared piece first waits (acquire, cluster scope) where `wait` holds
    for phase parity `phase` of the mbarrier `empty`, on which the others release the
    slot (`tessel.cluster_release`); other warps do not wait. Without it,
    `-tessel-insert-barriers` places a cluster barrier before the copy.

    With `batch` coordinates (at most two, not for an "interleaved" tile), the map has
    that many more dimensions outside the rows (and the column block): the matrix is one of
    a batch, at those indices (attention's batch and head, BlockAccess.h).

    ```mlir
    tessel.tma_copy %map[%row, %col] into %a, %bar, %pred : !llvm.ptr, !tessel.shared<128x64xbf16>, !tessel.shared<1x1xi64>
    tessel.tma_copy %map[%row, %col, %b, %h] into %k, %bar, %pred : !llvm.ptr, !tessel.shared<64x64xbf16, wgmma_b>, !tessel.shared<1x1xi64>
    tessel.tma_copy %map[%row, %col] into %b, %bar, %pred whole_blocks %whole : !llvm.ptr, !tessel.shared<64x256xbf16>, !tessel.shared<1x1xi64>
    tessel.tma_copy %map[%row, %col] into %b, %bar, %pred whole_blocks %whole multicast %shared {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>
    ```
  }];
  let arguments = (ins AnyType:$tensorMap, I32:$row, I32:$col, Variadic<I32>:$batch,
                       Tessel_SharedType:$dst,
                       Tessel_SharedType:$barrier, I1:$pred, Optional<I1>:$wholeBlocks,
                       Optional<I1>:$multicast, Optional<Tessel_SharedType>:$empty,
                       Optional<I32>:$emptyPhase, Optional<I1>:$emptyWait,
                       OptionalAttr<I64Attr>:$ctas);
  let assemblyFormat = [{
    $tensorMap `[` $row `,` $col (`,` $batch^)? `]` `into` $dst `,` $barrier `,` $pred
    (`whole_blocks` $wholeBlocks^)? (`multicast` $multicast^)?
    (`after` $empty^ `[` $emptyPhase `]` `if` $emptyWait)? attr-dict `:`
    type($tensorMap) `,` qualified(type($dst)) `,` qualified(type($barrier))
    (`,` qualified(type($empty))^)?
  }];
  let hasVerifier = 1;
}

def Tessel_MBarrierWaitOp : Tessel_Op<"mbarrier_wait"> {
  let summary = "Wait until an mbarrier's phase with parity `phase` has completed";
  let description = [{
    Every thread spins on `mbarrier.try_wait.parity`: after it, the bulk copies that
    arrived on the barrier in that phase are visible to this thread (and to wgmma).
    With `cluster`, the wait acquires at cluster scope: what other programs of the
    cluster did before arriving (`tessel.cluster_release`) happened before it.

    ```mlir
    tessel.mbarrier_wait %bar, %phase : !tessel.shared<1x1xi64>
    tessel.mbarrier_wait %empty, %phase {cluster} : !tessel.shared<1x1xi64>
    ```
  }];
  let arguments = (ins Tessel_SharedType:$barrier, I32:$phase, UnitAttr:$cluster);
  let assemblyFormat = "$barrier `,` $phase attr-dict `:` qualified(type($barrier))";
}

def Tessel_ClusterReleaseOp : Tessel_Op<"cluster_release"> {
  let summary = "A block barrier, then tell the cluster's other programs on an mbarrier";
  let description = [{
    All threads of the program wait here (`bar.sync 0`: its reads so far are done); then,
    where `pred` holds, thread 0 arrives (release, cluster scope) on the mbarrier at
    `barrier`'s place in each of the other `ctas - 1` programs of its cluster. The
    software pipeliner releases each slot of a ring whose bulk copies the cluster shares
    (multicast) this way: a program overwrites a slot in the others only after waiting
    (`tessel.mbarrier_wait {cluster}`) for their release of it.

    ```mlir
    tessel.cluster_release %empty, %pred {ctas = 2 : i64} : !tessel.shared<1x1xi64>
    ```
  }];
  let arguments = (ins Tessel_SharedType:$barrier, I1:$pred,
                       ConfinedAttr<I64Attr, [IntMinValue<2>, IntMaxValue<8>]>:$ctas);
  let assemblyFormat = "$barrier `,` $pred attr-dict `:` qualified(type($barrier))";
}

def Tessel_MBarrierArriveOp : Tessel_Op<"mbarrier_arrive"> {
  let summary = "One thread of each warp arrives on an mbarrier";
  let description = [{
    Where `pred` holds, lane 0 of each warp that runs it arrives on `barrier`
    (`mbarrier.arrive`, release at CTA scope): the warp's reads before it, wgmma's
    included once waited for, happen before the phase completes. The consumers of a
    warp-specialized loop release a ring slot this way; the barrier expects one arrival
    per consumer warp.

    ```mlir
    tessel.mbarrier_arrive %empty, %pred : !tessel.shared<1x1xi64>
    ```
  }];
  let arguments = (ins Tessel_SharedType:$barrier, I1:$pred);
  let assemblyFormat = "$barrier `,` $pred attr-dict `:` qualified(type($barrier))";
}

//===----------------------------------------------------------------------===//
// Warp specialization (made by -tessel-software-pipeline with warp-specialize)
//===----------------------------------------------------------------------===//

def Tessel_WarpgroupTurnOp : Tessel_Op<"warpgroup_turn"> {
  let summary = "Consumer warpgroups take turns at issuing their products";
  let description = [{
    The `groups` consumer warpgroups of a warp-specialized program issue their products in
    turn (FlashAttention-3's ping-pong), so that one warpgroup's softmax runs while the
    next one's products do: one named barrier per warpgroup (ids 3 ..; `bar.sync 1` and
    `2` are the partitions'), of 256 threads (the warpgroup and the one before it).
    - `start`: the last warpgroup gives the first its first turn (`bar.arrive` on the
      first's barrier), once, before any `wait`.
    - `wait`: a warpgroup waits for its turn (`bar.sync` on its barrier).
    - `pass`: it gives the next warpgroup its turn (`bar.arrive` on the next's barrier).
    Every warpgroup must run the same sequence of waits and passes.

    ```mlir
    tessel.warpgroup_turn wait {groups = 2 : i32}
    ```
  }];
  let arguments = (ins Tessel_WarpgroupTurnStepAttr:$step,
                       ConfinedAttr<I32Attr, [IntMinValue<2>, IntMaxValue<13>]>:$groups);
  let assemblyFormat = "$step attr-dict";
}

def Tessel_WarpSpecializeOp : Tessel_Op<"warp_specialize",
    [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "Run one region in producer warps and another in the consumer warps";
  let description = [{
    The program's warps split in two partitions: the module's `tessel.num_warps` consumer
    warps (0 .. num_warps - 1, the warps every layout is made for) run `consumers`; the
    `producer_warps` warps after them run `producer`. They meet again after the op. The
    producer issues copies into rings and the consumers compute on them; they hand slots
    over through mbarriers only (full barriers the copies complete, empty barriers the
    consumers arrive on), never through `bar.sync 0`: a barrier inside a partition
    synchronizes that partition alone (a named barrier).

    With `consumer_registers` > 0, each partition first sets its register count with
    `setmaxnreg` (the producer down to `producer_registers`, the consumers up): the
    producer only issues copies, and the consumers' registers hold the accumulators.

    ```mlir
    tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 24 : i32, consumer_registers = 240 : i32} producer {
      ...
    } consumers {
      ...
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<1>]>:$producer_warps,
                       I32Attr:$producer_registers, I32Attr:$consumer_registers);
  let regions = (region SizedRegion<1>:$producer, SizedRegion<1>:$consumers);
  let assemblyFormat = "attr-dict `producer` $producer `consumers` $consumers";
  let hasVerifier = 1;
}

#endif // TESSEL_OPS_TD
