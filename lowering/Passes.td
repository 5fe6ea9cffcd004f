//===- Passes.td - the lowering passes of Tessel -------------*- tablegen -*-===//
#ifndef TESSEL_LOWERING_PASSES_TD
#define TESSEL_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def TesselAssignLayouts : Pass<"tessel-assign-layouts", "ModuleOp"> {
  let summary = "Give every tile a layout encoding (which thread holds which element)";
  let description = [{
    Every tile type gets a `#tessel.blocked` layout or a `#tessel.slice` of one. Values
    tied together by an op (elementwise operands and results, loop-carried values, `if`
    results) share one layout; reductions and `expand_dims` relate a rank-r layout to a
    slice of a rank-(r+1) one. Layouts of each rank default to a blocked layout with
    16-byte runs per thread along the fastest dimension, so loads and stores vectorise.
    Where two constraints disagree a `tessel.convert_layout` is inserted;
    canonicalisation then recomputes cheap producers in the wanted layout instead.
  }];
  let options = [
    Option<"numWarps", "num-warps", "unsigned", /*default=*/"0",
           "Warps per program (0: take the module's tessel.num_warps, else 4)">,
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselNarrowDivisibility : Pass<"tessel-narrow-divisibility", "ModuleOp"> {
  let summary = "Keep a parameter's divisibility assumption only where access widths need it";
  let description = [{
    Removes `tessel.divisibility` from each integer argument whose assumption changes no
    fact that decides an access width (AxisInfo.h): the contiguity, divisibility and
    constancy of every memory access's pointer operand, and its mask's constancy along
    the dimensions where the pointer is contiguous. Pointer arguments keep theirs. The
    arguments still assumed divisible are recorded in the module's
    `tessel.divisible_args` (function name -> argument numbers): the runtime then picks
    the specialised variant whenever those are divisible.
  }];
}

def TesselSoftwarePipeline : Pass<"tessel-software-pipeline", "ModuleOp"> {
  let summary = "Pipeline the loads that feed tessel.dot in loops, num_stages deep";
  let description = [{
    In an `scf.for` with a positive constant step, a `tessel.load` whose only use is an
    operand of a `tessel.dot` in the same body (zero or no `other`, its address and mask
    computed from the induction variable and loop invariants only) becomes an
    asynchronous copy into a `num_stages`-deep ring of shared-memory tiles:

    - before the loop, copies for iterations 0 .. S-2, one `tessel.async_commit` group
      each (iterations past the end are masked off);
    - at the top of iteration i, `tessel.async_wait {pending = S-2}` (iteration i's group
      has landed), then the copies for iteration i + S-1 into the slot iteration i-1 used;
    - the dot reads slot i mod S (`tessel.local_index`) directly;
    - after the loop, `tessel.async_wait {pending = 0}`.

    On sm_90a a wgmma-shaped dot whose accumulator only goes from one iteration's dot to
    the next becomes `async` (`tessel.dot_wait {pending = 1}` after it, `{pending = 0}`
    after the loop) and the copies run S-2 iterations ahead. Its operands named by the
    `tma` option that read one block of a row-major matrix (lowering/BlockAccess.h) are
    copied by the bulk tensor engine instead: `tessel.tma_copy` on one mbarrier per slot,
    `tessel.mbarrier_wait` at the top of the iteration, a tensor-map kernel parameter per
    load and its recipe in the module's `tessel.tensor_maps`. On sm_90 and sm_90a the
    operands of mma.sync dots named by `mma-tma` go the same way, into buffers with the
    128-byte swizzle (`!tessel.shared<..., swizzled>`) that ldmatrix reads.

    Copies for mma.sync dots come after the dots in the iteration (the tensor cores start
    on the landed slot right after the barrier), except bulk copies with 2 stages; for
    wgmma dots they come first.

    Barriers are not placed here: -tessel-insert-barriers does it. With num_stages < 2
    the pass does nothing.
  }];
  let options = [
    Option<"numStages", "num-stages", "unsigned", /*default=*/"0",
           "Stages (0: take the module's tessel.num_stages, else 1)">,
    Option<"tmaOperands", "tma", "std::string", /*default=*/"\"b\"",
           "On sm_90a, the operands of async wgmma dots (\"a\", \"b\", \"ab\" or \"\") "
           "copied by the bulk tensor engine when they are blocks of row-major matrices "
           "(a tensor-map kernel parameter each)">,
    Option<"mmaTmaOperands", "mma-tma", "std::string", /*default=*/"\"ab\"",
           "On sm_90 and sm_90a, the operands of mma.sync dots (\"a\", \"b\", \"ab\" or "
           "\"\") copied by the bulk tensor engine into swizzled buffers when they are "
           "blocks of row-major matrices (A one 128-byte row wide, B a multiple of that)">,
    Option<"multicastB", "multicast-b", "unsigned", /*default=*/"1",
           "Programs (2, 4 or 8; 1: none) launched as a cluster that share one fetch of a "
           "bulk-copied B tile of whole column blocks (TMA multicast), where the kernel "
           "can test that consecutive program ids copy the same tile">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"false",
           "Where every load of a loop comes by the bulk tensor engine and its dots stay in "
           "flight: a producer warpgroup copies, the num_warps consumer warps compute "
           "(tessel.warp_specialize)">,
    Option<"warpgroupTurns", "warpgroup-turns", "bool", /*default=*/"false",
           "In a specialized loop whose dots retire within the iteration, two or more "
           "consumer warpgroups issue their first product in turn (tessel.warpgroup_turn: "
           "one's softmax runs while the other's products do)">,
  ];
  let dependentDialects = ["::mlir::tessel::TesselDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect"];
}

def TesselInvariantOperandsToShared : Pass<"tessel-invariant-operands-to-shared", "ModuleOp"> {
  let summary = "Keep loop-invariant wgmma operands in shared memory, not registers";
  let description = [{
    On sm_90a, after the software pipeliner: a load marked `shared`
    (`load(..., shared=True)`) before a loop, whose every use is the A operand of a dot
    in the loop with B in a ring slot, or the B of a register-A wgmma, is copied once a
    role into a shared buffer (cp.async, masked-off elements zero; wgmma_a for the A
    role, wgmma_b for the B role), and the dots read it by descriptor instead of holding
    it in registers for the whole loop (FlashAttention's backward: K and V of the key
    tile, and K for dQ = dS K). A marked load that does not qualify stays as it is.
  }];
  let dependentDialects = ["::mlir::tessel::TesselDialect",
                           "::mlir::arith::ArithDialect"];
}

def TesselBulkReductions : Pass<"tessel-bulk-reductions", "ModuleOp"> {
  let summary = "Mark atomic adds of whole f32 rows for the bulk copy engine";
  let description = [{
    On sm_90 and sm_90a: a `tessel.atomic_rmw "add"` of a 2-D f32 tile whose rows are
    contiguous, 16-byte aligned runs of memory (AxisInfo), masked by whole rows if at all,
    gets `tessel.bulk`: it is lowered as one `cp.reduce.async.bulk` add a row from the
    scratch, instead of one `red.global.add` an element. The rest are left as they are.
  }];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselAsyncDots : Pass<"tessel-async-dots", "ModuleOp"> {
  let summary = "Let register-A wgmma dots run until their result is needed";
  let description = [{
    On sm_90a, after layout assignment: a dot that lowers to register-A wgmma
    (lowering/WgmmaLayout.h) with B read from a ring slot becomes `async`, and a
    `tessel.dot_wait` goes before the first op of its block that needs the result (or
    copies into B's buffer), the block's terminator at the latest. Its `pending` is the
    number of async dots issued in between, which may keep running. The work the kernel
    puts between a dot and its use (another dot, the softmax of earlier scores) is then
    issued while the tensor cores run.
  }];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselInsertBarriers : Pass<"tessel-insert-barriers", "ModuleOp"> {
  let summary = "Place barriers where shared-memory buffers change hands";
  let description = [{
    Two hazards on `tessel.local_alloc` buffers need every thread of the program to meet:
    reading copies other threads waited for (a barrier after the `tessel.async_wait`,
    before the read), and overwriting a buffer other threads may still read (a barrier
    before the `tessel.async_copy`). The pass follows program order through `scf.for`
    (the back edge included: iteration i+1 overwrites what iteration i read) and `scf.if`,
    and puts one barrier where both hazards meet, right after the wait. Buffers are
    tracked whole (all slots of a ring together), which is conservative.
  }];
  let dependentDialects = ["::mlir::tessel::TesselDialect"];
}

def TesselAllocateSharedMemory : Pass<"tessel-allocate-shared-memory", "ModuleOp"> {
  let summary = "Size the shared-memory scratch used by reductions and layout conversions";
  let description = [{
    Cross-warp reductions and layout conversions exchange values through shared memory.
    They run one after another with a barrier after each, so they share one scratch
    buffer at offset 0. Buffers (`tessel.local_alloc`) follow it at 128-byte aligned
    offsets (1024 for swizzled ones); tile buffers whose live ranges do not meet (the
    rings of successive loops) share bytes. The total is recorded as the module attribute
    `tessel.shared` (bytes) and becomes the launch's dynamic shared memory.
  }];
}

def ConvertTesselToLLVM : Pass<"convert-tessel-to-llvm", "ModuleOp"> {
  let summary = "Distribute tiles over threads and lower tessel ops to LLVM/NVVM";
  let description = [{
    Each tile becomes the registers one thread holds (a 1:N type conversion), so
    elementwise `arith`/`math` on tiles become scalar ops and `scf` loops carry registers.
    Loads and stores become (predicated) vector accesses as wide as alignment and
    contiguity allow, up to 16 bytes; reductions combine within a thread, across lanes with
    `shfl.sync.bfly`, and across warps through shared memory. `exp`, `exp2`, `log`,
    `log2` and `rsqrt` use the approximate SFU instructions (`ex2.approx.ftz.f32` etc.),
    as Triton does (exp and exp2 flush subnormal results to zero). Scalar `arith`, `math`, `scf`, `cf` and `func` are left for MLIR's own
    conversions.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def TesselMarkKernelEntries : Pass<"tessel-mark-kernel-entries", "ModuleOp"> {
  let summary = "Turn `tessel.kernel` LLVM functions into PTX entry points";
  let description = [{
    Runs after `convert-func-to-llvm`: functions marked `tessel.kernel` get `nvvm.kernel`
    (a `.entry`) and `nvvm.reqntid` (`num_warps * 32` threads), which lets the back end
    budget registers for the real block size. When the module's shared memory
    (`tessel.shared`, on `tessel.arch`) leaves room for so few blocks per SM that every
    thread may have 255 registers, they also get `nvvm.minctasm` (`.minnctapersm`) with
    that block count, so ptxas does not budget registers for an occupancy it cannot reach.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

#endif // TESSEL_LOWERING_PASSES_TD
