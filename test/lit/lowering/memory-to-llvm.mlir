// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// MemoryToLLVM.cpp (and the wgmma shared layout of WgmmaLayout.cpp), pinned: cp.async
// sizes, cache modifiers and zero-fill sizes, shared addresses of padded and swizzled
// buffers, ring slots, commit/wait groups, barriers and fences.

// A masked copy of 4x32 bf16 in runs of 4 (8 bytes): lane l holds row r = (l >> 3) & 3,
// columns 4 (l & 7) ..; the padded row is 32 + 8 elements, so the run's shared byte
// offset is (40 r + 4 (l & 7)) * 2. 8-byte runs are cached in L1 (.ca); the source size
// is 8 where the mask holds, else 0 (zero fill). The commit and the wait keep `pending`.
// CHECK-LABEL: func.func @masked_copy
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[R:.*]] = arith.shrui %[[LANE]], %c3_i32 : i32
// CHECK-NEXT: %[[ROW:.*]] = arith.andi %[[R]], %c3_i32 : i32
// CHECK-NEXT: %[[ROWG:.*]] = arith.muli %[[ROW]], %c32_i32 : i32
// CHECK-NEXT: %[[C:.*]] = arith.andi %[[LANE]], %c7_i32 : i32
// CHECK-NEXT: %[[COL:.*]] = arith.muli %[[C]], %c4_i32 : i32
// CHECK-NEXT: %[[G:.*]] = arith.addi %[[ROWG]], %[[COL]] : i32
// CHECK-NEXT: %[[SRC:.*]] = llvm.getelementptr %arg0[%[[G]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, bf16
// CHECK-NEXT: %[[MASK:.*]] = arith.cmpi slt, %[[ROW]], %arg1 : i32
// CHECK-NEXT: %[[ROWS:.*]] = arith.muli %[[ROW]], %c40_i32 : i32
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[ROWS]], %[[COL]] : i32
// CHECK-NEXT: %[[SB:.*]] = arith.muli %[[S]], %c2_i32 : i32
// CHECK-NEXT: %[[DST:.*]] = llvm.getelementptr %[[BASE]][%[[SB]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[SIZE:.*]] = arith.select %[[MASK]], %c8_i32, %c0_i32 : i32
// CHECK-NEXT: nvvm.cp.async.shared.global %[[DST]], %[[SRC]], 8, cache =  ca, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.cp.async.wait.group 0
#ld = #tessel.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>
#rows = #tessel.slice<{dim = 1, parent = #ld}>
#cols = #tessel.slice<{dim = 0, parent = #ld}>
module attributes {tessel.num_warps = 1 : i32, tessel.shared = 320 : i32} {
  func.func @masked_copy(%base: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}, %n: i32) {
    %buf = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<4x32xbf16>
    %r = tessel.make_range {end = 4 : i32, start = 0 : i32} : tensor<4xi32, #rows>
    %r2 = tessel.expand_dims %r {axis = 1 : i32} : tensor<4xi32, #rows> -> tensor<4x1xi32, #ld>
    %c32 = arith.constant dense<32> : tensor<4x1xi32, #ld>
    %ro = arith.muli %r2, %c32 : tensor<4x1xi32, #ld>
    %rb = tessel.broadcast %ro : tensor<4x1xi32, #ld> -> tensor<4x32xi32, #ld>
    %c = tessel.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #cols>
    %c2 = tessel.expand_dims %c {axis = 0 : i32} : tensor<32xi32, #cols> -> tensor<1x32xi32, #ld>
    %cb = tessel.broadcast %c2 : tensor<1x32xi32, #ld> -> tensor<4x32xi32, #ld>
    %o = arith.addi %rb, %cb : tensor<4x32xi32, #ld>
    %ps = tessel.splat %base : tensor<4x32x!tessel.ptr<bf16>, #ld>
    %p = tessel.addptr %ps, %o : tensor<4x32x!tessel.ptr<bf16>, #ld>, tensor<4x32xi32, #ld>
    %ns = tessel.splat %n : tensor<4x1xi32, #ld>
    %m1 = arith.cmpi slt, %r2, %ns : tensor<4x1xi32, #ld>
    %m = tessel.broadcast %m1 : tensor<4x1xi1, #ld> -> tensor<4x32xi1, #ld>
    tessel.async_copy %p, %m into %buf : tensor<4x32x!tessel.ptr<bf16>, #ld>, !tessel.shared<4x32xbf16>
    tessel.async_commit
    tessel.async_wait {pending = 1 : i32}
    tessel.async_wait {pending = 0 : i32}
    return
  }
}

// -----

// Slot %i of a ring of 16x64 bf16 tiles in wgmma's "b" layout (unpadded: 2048 bytes a
// slot) at offset 1024, filled with 16-byte runs (.cg, no mask: no source size). Element
// (k, n) of a "b" tile sits in 128-byte-swizzled 8x64 atoms: column block n / 64 (16 rows
// of 128 bytes: 2048), k / 8 atoms of 1024 bytes, row k % 8 of 128 bytes, 16-byte chunk
// (n % 64) / 8 xor k % 8, then (n % 8) * 2. Lane l's first run: k = (l >> 2) & 7,
// n = 8 (l & 3).
// CHECK-LABEL: func.func @wgmma_ring
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: %[[RING:.*]] = llvm.getelementptr %[[BASE]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[SLOTOFF:.*]] = arith.muli %arg1, %c2048_i32 : i32
// CHECK-NEXT: %[[SLOT:.*]] = llvm.getelementptr %[[RING]][%[[SLOTOFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[K0:.*]] = arith.shrui %[[LANE]], %c2_i32 : i32
// CHECK-NEXT: %[[K:.*]] = arith.andi %[[K0]], %c7_i32 : i32
// CHECK: %[[N0:.*]] = arith.andi %[[LANE]], %c3_i32 : i32
// CHECK-NEXT: %[[N:.*]] = arith.muli %[[N0]], %c8_i32 : i32
// CHECK: %[[SRC:.*]] = llvm.getelementptr %arg0[%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, bf16
// CHECK: %[[KG:.*]] = arith.shrui %[[K]], %c3_i32 : i32
// CHECK-NEXT: %[[BLK:.*]] = arith.divui %[[N]], %c64_i32 : i32
// CHECK-NEXT: %[[INROW:.*]] = arith.andi %[[N]], %c63_i32 : i32
// CHECK-NEXT: %[[CH:.*]] = arith.divui %[[INROW]], %c8_i32 : i32
// CHECK-NEXT: %[[SW:.*]] = arith.xori %[[CH]], %[[K]] : i32
// CHECK-NEXT: %[[KGO:.*]] = arith.muli %[[KG]], %c1024_i32 : i32
// CHECK-NEXT: %[[BO:.*]] = arith.muli %[[BLK]], %c2048_i32 : i32
// CHECK-NEXT: %[[O1:.*]] = arith.addi %[[BO]], %[[KGO]] : i32
// CHECK-NEXT: %[[RO:.*]] = arith.muli %[[K]], %c128_i32 : i32
// CHECK-NEXT: %[[O2:.*]] = arith.addi %[[O1]], %[[RO]] : i32
// CHECK-NEXT: %[[CO:.*]] = arith.muli %[[SW]], %c16_i32 : i32
// CHECK-NEXT: %[[O3:.*]] = arith.addi %[[O2]], %[[CO]] : i32
// CHECK-NEXT: %[[E:.*]] = arith.andi %[[N]], %c7_i32 : i32
// CHECK-NEXT: %[[EB:.*]] = arith.muli %[[E]], %c2_i32 : i32
// CHECK-NEXT: %[[O:.*]] = arith.addi %[[O3]], %[[EB]] : i32
// CHECK-NEXT: %[[DST:.*]] = llvm.getelementptr %[[SLOT]][%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.cp.async.shared.global %[[DST]], %[[SRC]], 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-COUNT-3: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NOT: nvvm.cp.async.shared.global
#ld = #tessel.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>
#rows = #tessel.slice<{dim = 1, parent = #ld}>
#cols = #tessel.slice<{dim = 0, parent = #ld}>
module attributes {tessel.num_warps = 1 : i32, tessel.shared = 8192 : i32} {
  func.func @wgmma_ring(%base: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}, %i: i32) {
    %ring = tessel.local_alloc {offset = 1024 : i64} : !tessel.shared<2x16x64xbf16, wgmma_b>
    %buf = tessel.local_index %ring[%i] : !tessel.shared<2x16x64xbf16, wgmma_b> -> !tessel.shared<16x64xbf16, wgmma_b>
    %r = tessel.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #rows>
    %r2 = tessel.expand_dims %r {axis = 1 : i32} : tensor<16xi32, #rows> -> tensor<16x1xi32, #ld>
    %c64 = arith.constant dense<64> : tensor<16x1xi32, #ld>
    %ro = arith.muli %r2, %c64 : tensor<16x1xi32, #ld>
    %rb = tessel.broadcast %ro : tensor<16x1xi32, #ld> -> tensor<16x64xi32, #ld>
    %c = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #cols>
    %c2 = tessel.expand_dims %c {axis = 0 : i32} : tensor<64xi32, #cols> -> tensor<1x64xi32, #ld>
    %cb = tessel.broadcast %c2 : tensor<1x64xi32, #ld> -> tensor<16x64xi32, #ld>
    %o = arith.addi %rb, %cb : tensor<16x64xi32, #ld>
    %ps = tessel.splat %base : tensor<16x64x!tessel.ptr<bf16>, #ld>
    %p = tessel.addptr %ps, %o : tensor<16x64x!tessel.ptr<bf16>, #ld>, tensor<16x64xi32, #ld>
    tessel.async_copy %p into %buf : tensor<16x64x!tessel.ptr<bf16>, #ld>, !tessel.shared<16x64xbf16, wgmma_b>
    return
  }
}

// -----

// A padded ring's slots are its padded tiles apart: 16 x (64 + 8) x 2 = 2304 bytes.
// CHECK-LABEL: func.func @padded_ring
// CHECK: %[[RING:.*]] = llvm.getelementptr %{{.*}}[128] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %arg0, %c2304_i32 : i32
// CHECK-NEXT: llvm.getelementptr %[[RING]][%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>
module attributes {tessel.num_warps = 1 : i32, tessel.shared = 8192 : i32} {
  func.func @padded_ring(%i: i32, %p: tensor<16x64x!tessel.ptr<bf16>, #acc>) {
    %ring = tessel.local_alloc {offset = 128 : i64} : !tessel.shared<2x16x64xbf16>
    %buf = tessel.local_index %ring[%i] : !tessel.shared<2x16x64xbf16> -> !tessel.shared<16x64xbf16>
    tessel.async_copy %p into %buf : tensor<16x64x!tessel.ptr<bf16>, #acc>, !tessel.shared<16x64xbf16>
    return
  }
}

// -----

// A block barrier is bar.sync 0; a cluster barrier arrives (release) and waits
// (acquire) at cluster scope; the async-proxy fence.
// CHECK-LABEL: func.func @barriers
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "barrier.cluster.arrive.aligned;\0Abarrier.cluster.wait.aligned;", ""  : () -> ()
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "fence.proxy.async.shared::cta;", ""  : () -> ()
// CHECK-NEXT: return
module attributes {tessel.num_warps = 1 : i32} {
  func.func @barriers() {
    tessel.barrier
    tessel.barrier {cluster}
    tessel.fence_async_shared
    return
  }
}

// -----

// Gathered stores: 4 lanes (u = lane & 3) hold 2 bf16 each of 8 adjacent columns; they
// trade 4-byte words in 3 butterfly rounds (lanes u ^ 1, u ^ 2, u ^ 3), then lane u
// stores 16 bytes of chunk u from the pointer of its first element moved back u * 2
// elements to the run's start.
// CHECK-LABEL: func.func @gathered
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK: %[[U:.*]] = arith.andi %[[LANE]], %c3_i32 : i32
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[U]], %c0_i32 : i32
// CHECK-NEXT: %[[IS1:.*]] = arith.cmpi eq, %[[U]], %c1_i32 : i32
// CHECK-NEXT: %[[IS2:.*]] = arith.cmpi eq, %[[U]], %c2_i32 : i32
// CHECK-NEXT: %[[IS3:.*]] = arith.cmpi eq, %[[U]], %c3_i32 : i32
// CHECK: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c1_i32, %c31_i32 : i32 -> i32
// CHECK: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c2_i32, %c31_i32 : i32 -> i32
// CHECK: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c3_i32, %c31_i32 : i32 -> i32
// CHECK: %[[P1:.*]] = arith.select %[[IS1]], %{{.*}}, %{{.*}} : !llvm.ptr<1>
// CHECK-NEXT: %[[P2:.*]] = arith.select %[[IS2]], %{{.*}}, %[[P1]] : !llvm.ptr<1>
// CHECK-NEXT: %[[P3:.*]] = arith.select %[[IS3]], %{{.*}}, %[[P2]] : !llvm.ptr<1>
// CHECK-NEXT: %[[BACK:.*]] = arith.muli %[[U]], %c-2_i32 : i32
// CHECK-NEXT: %[[AT:.*]] = llvm.getelementptr %[[P3]][%[[BACK]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, bf16
// CHECK: llvm.store %{{.*}}, %[[AT]] {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>
#rows = #tessel.slice<{dim = 1, parent = #acc}>
#cols = #tessel.slice<{dim = 0, parent = #acc}>
module attributes {tessel.num_warps = 1 : i32} {
  func.func @gathered(%base: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}, %v: tensor<8x32xbf16, #acc>) {
    %r = tessel.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #rows>
    %r2 = tessel.expand_dims %r {axis = 1 : i32} : tensor<8xi32, #rows> -> tensor<8x1xi32, #acc>
    %c32 = arith.constant dense<32> : tensor<8x1xi32, #acc>
    %ro = arith.muli %r2, %c32 : tensor<8x1xi32, #acc>
    %rb = tessel.broadcast %ro : tensor<8x1xi32, #acc> -> tensor<8x32xi32, #acc>
    %c = tessel.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #cols>
    %c2 = tessel.expand_dims %c {axis = 0 : i32} : tensor<32xi32, #cols> -> tensor<1x32xi32, #acc>
    %cb = tessel.broadcast %c2 : tensor<1x32xi32, #acc> -> tensor<8x32xi32, #acc>
    %o = arith.addi %rb, %cb : tensor<8x32xi32, #acc>
    %ps = tessel.splat %base : tensor<8x32x!tessel.ptr<bf16>, #acc>
    %p = tessel.addptr %ps, %o : tensor<8x32x!tessel.ptr<bf16>, #acc>, tensor<8x32xi32, #acc>
    tessel.store %p, %v : tensor<8x32x!tessel.ptr<bf16>, #acc>
    return
  }
}
