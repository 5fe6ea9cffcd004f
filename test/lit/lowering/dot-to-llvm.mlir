// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// DotToLLVM.cpp, pinned: where register operands are staged (rows padded by 16 bytes),
// the barriers around the staging, the ldmatrix addresses and layouts, the mma shape,
// the wgmma descriptors (start, leading and stride byte offsets, 128-byte swizzle), their
// per-K-step addresses and immediates, and the groups a wait leaves pending.

// mma.sync, f16, one warp: A (16x16, 8-element rows per thread) staged from 0 with rows of
// 16 + 8 elements (48 bytes), B (16x8) from 16 x 48 = 768 with rows of 8 + 8 (32 bytes);
// a barrier; A by ldmatrix.x4 (row (lane & 7) + 8 ((lane >> 3) & 1), column
// 8 ((lane >> 4) & 1)), B by ldmatrix.x2.trans (row (lane & 7) + 8 ((lane >> 3) & 1)); one
// m16n8k16; a barrier (the scratch is reused).
// CHECK-LABEL: func.func @mma_staged
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[AR0:.*]] = arith.shrui %[[LANE]], %c1_i32 : i32
// CHECK-NEXT: %[[AR:.*]] = arith.andi %[[AR0]], %c15_i32 : i32
// CHECK-NEXT: %[[AC0:.*]] = arith.andi %[[LANE]], %c1_i32 : i32
// CHECK-NEXT: %[[AC:.*]] = arith.muli %[[AC0]], %c8_i32 : i32
// CHECK-NEXT: %[[AROW:.*]] = arith.muli %[[AR]], %c24_i32 : i32
// CHECK-NEXT: %[[AI:.*]] = arith.addi %[[AROW]], %[[AC]] : i32
// CHECK-NEXT: %[[AOFF:.*]] = arith.muli %[[AI]], %c2_i32 : i32
// CHECK-NEXT: %[[AADDR:.*]] = llvm.getelementptr %[[BASE]][%[[AOFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-COUNT-8: llvm.insertelement
// CHECK-NEXT: llvm.store %{{.*}}, %[[AADDR]] {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
// CHECK-NEXT: %[[B:.*]] = llvm.getelementptr %[[BASE]][768] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[BR0:.*]] = arith.shrui %[[LANE]], %c2_i32 : i32
// CHECK-NEXT: %[[BR:.*]] = arith.andi %[[BR0]], %c7_i32 : i32
// CHECK-NEXT: %[[BC0:.*]] = arith.andi %[[LANE]], %c3_i32 : i32
// CHECK-NEXT: %[[BC:.*]] = arith.muli %[[BC0]], %c2_i32 : i32
// CHECK-NEXT: %[[BR8:.*]] = arith.addi %[[BR]], %c8_i32 : i32
// CHECK-NEXT: %[[BROW:.*]] = arith.muli %[[BR]], %c16_i32 : i32
// CHECK-NEXT: %[[BI:.*]] = arith.addi %[[BROW]], %[[BC]] : i32
// CHECK-NEXT: %[[BOFF:.*]] = arith.muli %[[BI]], %c2_i32 : i32
// CHECK-NEXT: %[[BADDR:.*]] = llvm.getelementptr %[[B]][%[[BOFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: llvm.store %{{.*}}, %[[BADDR]] {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// CHECK-NEXT: %[[BROW8:.*]] = arith.muli %[[BR8]], %c16_i32 : i32
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[R8:.*]] = arith.andi %[[LANE]], %c7_i32 : i32
// CHECK-NEXT: %[[M0:.*]] = arith.shrui %[[LANE]], %c3_i32 : i32
// CHECK-NEXT: %[[MAT0:.*]] = arith.andi %[[M0]], %c1_i32 : i32
// CHECK-NEXT: %[[M1:.*]] = arith.shrui %[[LANE]], %c4_i32 : i32
// CHECK-NEXT: %[[MAT1:.*]] = arith.andi %[[M1]], %c1_i32 : i32
// CHECK-NEXT: %[[MR:.*]] = arith.muli %[[MAT0]], %c8_i32 : i32
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[R8]], %[[MR]] : i32
// CHECK-NEXT: %[[COL:.*]] = arith.muli %[[MAT1]], %c8_i32 : i32
// CHECK-NEXT: %[[LA0:.*]] = arith.muli %[[ROW]], %c24_i32 : i32
// CHECK-NEXT: %[[LA1:.*]] = arith.addi %[[LA0]], %[[COL]] : i32
// CHECK-NEXT: %[[LA:.*]] = arith.muli %[[LA1]], %c2_i32 : i32
// CHECK-NEXT: %[[LB:.*]] = arith.muli %[[ROW]], %c32_i32 : i32
// CHECK-NEXT: %[[PA:.*]] = llvm.getelementptr %[[BASE]][%[[LA]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.ldmatrix %[[PA]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: %[[PB:.*]] = llvm.getelementptr %[[B]][%[[LB]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.ldmatrix %[[PB]] {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 2 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[%arg12, %arg13, %arg14, %arg15]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-COUNT-4: llvm.extractvalue
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>
#ld = #tessel.blocked<{sizePerThread = [1, 8], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90", tessel.num_warps = 1 : i32, tessel.shared = 2048 : i32} {
  func.func @mma_staged(%a: tensor<16x16xf16, #ld>, %b: tensor<16x8xf16, #acc>, %c: tensor<16x8xf32, #acc>, %p: tensor<16x8x!tessel.ptr<f32>, #acc>) {
    %d = tessel.dot %a, %b, %c : tensor<16x16xf16, #ld>, tensor<16x8xf16, #acc> -> tensor<16x8xf32, #acc>
    tessel.store %p, %d : tensor<16x8x!tessel.ptr<f32>, #acc>
    return
  }
}

// -----

// wgmma from the swizzled buffers, 64x64x64 bf16 on one warpgroup: descriptors of A
// (leading 16 bytes, stride 1024, 128-byte swizzle: 1 << 62 | 64 << 32 | 1 << 16) from
// A + 8192 x warpgroup, advancing 16 bf16 (32 bytes) a K step, and of B (leading
// 64 x 128 bytes: 512 << 16) advancing 2048 bytes (two 8-row atoms); 4 instructions with
// scale-d p and immediates 1, 1, 0 (A K-major), 1 (B N-major); one commit, a wait for 0.
// CHECK-LABEL: func.func @wgmma
// CHECK-DAG: %[[ADESC:.*]] = arith.constant 4611686293305360384 : i64
// CHECK-DAG: %[[BDESC:.*]] = arith.constant 4611686293338849280 : i64
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: %[[BPTR:.*]] = llvm.getelementptr %[[BASE]][8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[WARP:.*]] = arith.shrui %[[TID]], %c5_i32 : i32
// CHECK-NEXT: %[[WG:.*]] = arith.shrui %[[WARP]], %c2_i32 : i32
// CHECK-NEXT: %[[ABASE:.*]] = llvm.ptrtoint %[[BASE]] : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[WGOFF:.*]] = arith.muli %[[WG]], %c8192_i32 : i32
// CHECK-NEXT: %[[A:.*]] = arith.addi %[[ABASE]], %[[WGOFF]] : i32
// CHECK-NEXT: %[[B:.*]] = llvm.ptrtoint %[[BPTR]] : !llvm.ptr<3> to i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.fence.sync.aligned;", ""
// CHECK-NEXT: %[[A0:.*]] = arith.shrui %[[A]], %c4_i32 : i32
// CHECK-NEXT: %[[A1:.*]] = arith.andi %[[A0]], %c16383_i32 : i32
// CHECK-NEXT: %[[A2:.*]] = arith.extui %[[A1]] : i32 to i64
// CHECK-NEXT: %[[AD:.*]] = arith.ori %[[A2]], %[[ADESC]] : i64
// CHECK-NEXT: %[[B0:.*]] = arith.shrui %[[B]], %c4_i32 : i32
// CHECK-NEXT: %[[B1:.*]] = arith.andi %[[B0]], %c16383_i32 : i32
// CHECK-NEXT: %[[B2:.*]] = arith.extui %[[B1]] : i32 to i64
// CHECK-NEXT: %[[BD:.*]] = arith.ori %[[B2]], %[[BDESC]] : i64
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $34, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, $32, $33, p, 1, 1, 0, 1;\0A}", "{{(=f,)+}}l,l,r,0,1,{{.*}},31" %[[AD]], %[[BD]], %c1_i32,
// CHECK: arith.addi %[[A]], %c32_i32 : i32
// CHECK-NEXT: arith.addi %[[B]], %c2048_i32 : i32
// CHECK: wgmma.mma_async
// CHECK: arith.addi %[[A]], %c64_i32 : i32
// CHECK-NEXT: arith.addi %[[B]], %c4096_i32 : i32
// CHECK: wgmma.mma_async
// CHECK: arith.addi %[[A]], %c96_i32 : i32
// CHECK-NEXT: arith.addi %[[B]], %c6144_i32 : i32
// CHECK: wgmma.mma_async
// CHECK-NOT: wgmma.mma_async
// CHECK: "wgmma.commit_group.sync.aligned;"
// CHECK-NEXT: "wgmma.wait_group.sync.aligned 0;"
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 16384 : i32} {
  func.func @wgmma(%c: tensor<64x64xf32, #acc>, %p: tensor<64x64x!tessel.ptr<f32>, #acc>) {
    %ra = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x64xbf16, wgmma_a>
    %rb = tessel.local_alloc {offset = 8192 : i64} : !tessel.shared<64x64xbf16, wgmma_b>
    %d = tessel.dot %ra, %rb, %c : !tessel.shared<64x64xbf16, wgmma_a>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    tessel.store %p, %d : tensor<64x64x!tessel.ptr<f32>, #acc>
    return
  }
}

// -----

// Register-A wgmma: A's fragments from registers, B by descriptor. B read as is
// (N-major: leading 64 x 128 bytes, a K step of 16 rows = two 1024-byte atoms; imm-trans-b
// 1), then transposed (K-major: leading 16, a K step of 16 bf16 = 32 bytes; imm-trans-b 0).
// CHECK-LABEL: func.func @register_a
// CHECK-DAG: %[[KMAJOR:.*]] = arith.constant 4611686293305360384 : i64
// CHECK-DAG: %[[NMAJOR:.*]] = arith.constant 4611686293338849280 : i64
// CHECK: %[[B:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// CHECK: %[[N0:.*]] = arith.shrui %[[B]], %c4_i32 : i32
// CHECK: %[[N0D:.*]] = arith.ori %{{.*}}, %[[NMAJOR]] : i64
// CHECK: arith.addi %[[B]], %c2048_i32 : i32
// CHECK: arith.ori %{{.*}}, %[[NMAJOR]] : i64
// CHECK: arith.addi %[[B]], %c4096_i32 : i32
// CHECK: arith.ori %{{.*}}, %[[NMAJOR]] : i64
// CHECK: arith.addi %[[B]], %c6144_i32 : i32
// CHECK: arith.ori %{{.*}}, %[[NMAJOR]] : i64
// CHECK-NEXT: "wgmma.fence.sync.aligned;"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 1;\0A}", "{{(=f,)+}}r,r,r,r,l,r,0,
// CHECK-NOT: wgmma.mma_async
// CHECK: "wgmma.commit_group.sync.aligned;"
// CHECK-NEXT: "wgmma.wait_group.sync.aligned 0;"
// CHECK: arith.ori %{{.*}}, %[[KMAJOR]] : i64
// CHECK-NEXT: arith.addi %[[B]], %c32_i32 : i32
// CHECK: arith.ori %{{.*}}, %[[KMAJOR]] : i64
// CHECK-NEXT: arith.addi %[[B]], %c64_i32 : i32
// CHECK: arith.ori %{{.*}}, %[[KMAJOR]] : i64
// CHECK-NEXT: arith.addi %[[B]], %c96_i32 : i32
// CHECK: arith.ori %{{.*}}, %[[KMAJOR]] : i64
// CHECK-NEXT: "wgmma.fence.sync.aligned;"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 0;\0A}", "{{(=f,)+}}r,r,r,r,l,r,0,
// CHECK-NOT: wgmma.mma_async
// CHECK: "wgmma.commit_group.sync.aligned;"
// CHECK-NEXT: "wgmma.wait_group.sync.aligned 0;"
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 32768 : i32} {
  func.func @register_a(%a: tensor<64x64xbf16, #acc>, %c: tensor<64x64xf32, #acc>, %p: tensor<64x64x!tessel.ptr<f32>, #acc>) {
    %c0 = arith.constant 0 : i32
    %ring = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<2x64x64xbf16, wgmma_b>
    %b = tessel.local_index %ring[%c0] : !tessel.shared<2x64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, wgmma_b>
    %d = tessel.dot %a, %b, %c : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    %bt = tessel.trans %b : !tessel.shared<64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, wgmma_b>
    %e = tessel.dot %a, %bt, %d : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    tessel.store %p, %e : tensor<64x64x!tessel.ptr<f32>, #acc>
    return
  }
}

// -----

// A transposed tf32 wgmma dot commits one group per K step (4 per dot): a dot_wait
// leaving 1 dot pending leaves 4 groups.
// CHECK-LABEL: func.func @dot_wait_tf32
// CHECK: "wgmma.wait_group.sync.aligned 4;"
// CHECK: "wgmma.wait_group.sync.aligned 0;"
#t = #tessel.blocked<{sizePerThread = [2, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
  func.func @dot_wait_tf32(%x: f32, %p: tensor<64x128x!tessel.ptr<f32>, #t>) {
    %t = tessel.splat %x : tensor<64x128xf32, #t>
    %w = tessel.dot_wait %t {pending = 1 : i32} : tensor<64x128xf32, #t>
    %v = tessel.dot_wait %w {pending = 0 : i32} : tensor<64x128xf32, #t>
    tessel.store %p, %v : tensor<64x128x!tessel.ptr<f32>, #t>
    return
  }
}
