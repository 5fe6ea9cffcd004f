// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// TmaToLLVM.cpp (and the box numbering of ConvertTesselToLLVM.cpp, the A rows of
// WgmmaLayout.cpp), pinned: the bytes each copy announces, which warp issues which box,
// each box's tile coordinates and shared offset, the mbarrier init's fence, the waits'
// scope, and the multicast pieces.

// Two copies on one mbarrier (initialised for 2 arrivals, then fenced for the cluster):
// B tiles of 64 x 128 and 64 x 192 bf16 (16384 and 24576 bytes), one box per 64-column
// block, 8192 bytes apart. The block's boxes are numbered across its copies and dealt to
// the 4 warps round-robin: warps 0, 1 for the first copy, 2, 3, 0 for the second.
// CHECK-LABEL: func.func @boxes
// CHECK: "{\0A.reg .pred p;\0A.reg .b32 t, rr, cc, zz;\0Amov.u32 t, %tid.x;\0Amov.b32 zz, 0;\0Asetp.eq.u32 p, t, 0;\0A@p mbarrier.init.shared::cta.b64 [$0], 2;\0A@p fence.mbarrier_init.release.cluster;\0A}", "r"
// CHECK: "{\0A.reg .pred p, q;\0A.reg .b32 t, w, rr, cc, zz, bb;\0Amov.u32 t, %tid.x;\0Ashr.u32 w, t, 5;\0Amov.b32 zz, 0;\0Aelect.sync _|p, 0xffffffff;\0Aand.pred p, p, $5;
// CHECK-SAME: \0Asetp.ne.u32 q, w, 0;\0A@q bra.uni TESSEL_TMA_${:uid}_0;\0A@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$4], 16384;
// CHECK-SAME: \0Aadd.s32 rr, $1, 0;\0Aadd.s32 cc, $2, 0;\0A@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+0], [$0, {cc, rr}], [$4];\0ATESSEL_TMA_${:uid}_0:
// CHECK-SAME: \0Asetp.ne.u32 q, w, 1;\0A@q bra.uni TESSEL_TMA_${:uid}_1;
// CHECK-SAME: \0Aadd.s32 rr, $1, 0;\0Aadd.s32 cc, $2, 64;\0A@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+8192], [$0, {cc, rr}], [$4];\0ATESSEL_TMA_${:uid}_1:\0A}", "l,r,r,r,r,b"
// CHECK: "{\0A.reg .pred p, q;\0A.reg .b32 t, w, rr, cc, zz, bb;\0Amov.u32 t, %tid.x;\0Ashr.u32 w, t, 5;\0Amov.b32 zz, 0;\0Aelect.sync _|p, 0xffffffff;\0Aand.pred p, p, $5;
// CHECK-SAME: \0Asetp.ne.u32 q, w, 2;\0A@q bra.uni TESSEL_TMA_${:uid}_0;\0A@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$4], 24576;
// CHECK-SAME: \0Aadd.s32 rr, $1, 0;\0Aadd.s32 cc, $2, 0;\0A@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+0], [$0, {cc, rr}], [$4];\0ATESSEL_TMA_${:uid}_0:
// CHECK-SAME: \0Asetp.ne.u32 q, w, 3;\0A@q bra.uni TESSEL_TMA_${:uid}_1;
// CHECK-SAME: \0Aadd.s32 rr, $1, 0;\0Aadd.s32 cc, $2, 64;\0A@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+8192], [$0, {cc, rr}], [$4];\0ATESSEL_TMA_${:uid}_1:
// CHECK-SAME: \0Asetp.ne.u32 q, w, 0;\0A@q bra.uni TESSEL_TMA_${:uid}_2;
// CHECK-SAME: \0Aadd.s32 rr, $1, 0;\0Aadd.s32 cc, $2, 128;\0A@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+16384], [$0, {cc, rr}], [$4];\0ATESSEL_TMA_${:uid}_2:\0A}", "l,r,r,r,r,b"
// The wait spins on the phase's parity; within a cluster with acquire at cluster scope.
// CHECK: "{\0A.reg .pred p;\0ATESSEL_WAIT_${:uid}:\0Ambarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\0A@!p bra TESSEL_WAIT_${:uid};\0A}", "r,r"
// CHECK: "{\0A.reg .pred p;\0ATESSEL_WAIT_${:uid}:\0Ambarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [$0], $1;\0A@!p bra TESSEL_WAIT_${:uid};\0A}", "r,r"
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 65536 : i32} {
  func.func @boxes(%ma: !llvm.ptr, %mb: !llvm.ptr, %row: i32, %col: i32, %pred: i1) {
    %c0 = arith.constant 0 : i32
    %a = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x128xbf16, wgmma_b>
    %b = tessel.local_alloc {offset = 16384 : i64} : !tessel.shared<64x192xbf16, wgmma_b>
    %bars = tessel.local_alloc {offset = 49152 : i64} : !tessel.shared<1x1x1xi64>
    %bar = tessel.local_index %bars[%c0] : !tessel.shared<1x1x1xi64> -> !tessel.shared<1x1xi64>
    tessel.mbarrier_init %bar {count = 2 : i32} : !tessel.shared<1x1xi64>
    tessel.tma_copy %ma[%row, %col] into %a, %bar, %pred : !llvm.ptr, !tessel.shared<64x128xbf16, wgmma_b>, !tessel.shared<1x1xi64>
    tessel.tma_copy %mb[%row, %col] into %b, %bar, %pred : !llvm.ptr, !tessel.shared<64x192xbf16, wgmma_b>, !tessel.shared<1x1xi64>
    tessel.mbarrier_wait %bar, %c0 : !tessel.shared<1x1xi64>
    tessel.mbarrier_wait %bar, %c0 {cluster} : !tessel.shared<1x1xi64>
    return
  }
}

// -----

// A wgmma A tile (128 x 64 bf16, 4 warps) comes in 8-row boxes, each landing at the
// shared row of the accumulator layout (WgmmaLayout.h): tile row t goes to shared row
// 64 (r >> 1) + 16 (w & 3) + 8 (r & 1) + t % 8 with w = (t >> 3) & 3, r = t / 32, so
// rows 0, 8, 16, 24, 32, .. land at bytes 0, 2048, 4096, 6144, 1024, ...
// CHECK-LABEL: func.func @a_rows
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [$4], 16384;
// CHECK-SAME: add.s32 rr, $1, 0;\0Aadd.s32 cc, $2, 0;\0A@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+0],
// CHECK-SAME: add.s32 rr, $1, 8;\0Aadd.s32 cc, $2, 0;\0A@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+2048],
// CHECK-SAME: add.s32 rr, $1, 16;{{.*}}[$3+4096],
// CHECK-SAME: add.s32 rr, $1, 24;{{.*}}[$3+6144],
// CHECK-SAME: add.s32 rr, $1, 32;{{.*}}[$3+1024],
// CHECK-SAME: add.s32 rr, $1, 40;{{.*}}[$3+3072],
// CHECK-SAME: add.s32 rr, $1, 48;{{.*}}[$3+5120],
// CHECK-SAME: add.s32 rr, $1, 56;{{.*}}[$3+7168],
// CHECK-SAME: add.s32 rr, $1, 64;{{.*}}[$3+8192],
// CHECK-SAME: add.s32 rr, $1, 72;{{.*}}[$3+10240],
// CHECK-SAME: add.s32 rr, $1, 80;{{.*}}[$3+12288],
// CHECK-SAME: add.s32 rr, $1, 88;{{.*}}[$3+14336],
// CHECK-SAME: add.s32 rr, $1, 96;{{.*}}[$3+9216],
// CHECK-SAME: add.s32 rr, $1, 104;{{.*}}[$3+11264],
// CHECK-SAME: add.s32 rr, $1, 112;{{.*}}[$3+13312],
// CHECK-SAME: add.s32 rr, $1, 120;{{.*}}[$3+15360],
// CHECK-SAME: TESSEL_TMA_${:uid}_15:\0A}"
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 65536 : i32} {
  func.func @a_rows(%ma: !llvm.ptr, %row: i32, %col: i32, %pred: i1) {
    %c0 = arith.constant 0 : i32
    %a = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<128x64xbf16, wgmma_a>
    %bars = tessel.local_alloc {offset = 49152 : i64} : !tessel.shared<1x1x1xi64>
    %bar = tessel.local_index %bars[%c0] : !tessel.shared<1x1x1xi64> -> !tessel.shared<1x1xi64>
    tessel.tma_copy %ma[%row, %col] into %a, %bar, %pred : !llvm.ptr, !tessel.shared<128x64xbf16, wgmma_a>, !tessel.shared<1x1xi64>
    return
  }
}

// -----

// Whole column blocks ($6) with multicast ($7) in a cluster of 2: one box of the tile's
// 4 blocks (32768 bytes) starting at block col / 64. Where the cluster shares it, the
// issuing lane waits for the slot's release ($8, parity $9, where $10), then program r
// fetches piece r (blocks 2r, 2r + 1, 16384 bytes into its dst) for both (cta mask 0b11);
// otherwise each program fetches both pieces. Without whole blocks, a box per block.
// CHECK-LABEL: func.func @multicast
// CHECK: "{\0A.reg .pred p, q;\0A.reg .b32 t, w, rr, cc, zz, bb;\0Amov.u32 t, %tid.x;\0Ashr.u32 w, t, 5;\0Amov.b32 zz, 0;\0Aelect.sync _|p, 0xffffffff;\0Aand.pred p, p, $5;
// CHECK-SAME: \0A@!$6 bra.uni TESSEL_TMA_${:uid}_BLOCKS;\0Asetp.ne.u32 q, w, 0;\0A@q bra.uni TESSEL_TMA_${:uid}_END;
// CHECK-SAME: \0A@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$4], 32768;\0Ashr.s32 bb, $2, 6;
// CHECK-SAME: \0A.reg .b32 r, d;\0A.reg .b16 k;\0A@!$7 bra.uni TESSEL_TMA_${:uid}_OWN;
// CHECK-SAME: \0A.reg .pred e;\0Aand.pred e, p, $10;\0A@!e bra TESSEL_TMA_${:uid}_ISSUE;\0ATESSEL_TMA_${:uid}_EMPTY:
// CHECK-SAME: \0Ambarrier.try_wait.parity.acquire.cluster.shared::cta.b64 e, [$8], $9;\0A@!e bra TESSEL_TMA_${:uid}_EMPTY;\0ATESSEL_TMA_${:uid}_ISSUE:\0Abar.warp.sync 0xffffffff;
// CHECK-SAME: \0Amov.u32 r, %cluster_ctarank;\0Amad.lo.s32 bb, r, 2, bb;\0Amad.lo.s32 d, r, 16384, $3;\0Amov.b16 k, 3;
// CHECK-SAME: \0A@p cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [d], [$0, {zz, $1, bb}], [$4], k;
// CHECK-SAME: \0Abra.uni TESSEL_TMA_${:uid}_END;\0ATESSEL_TMA_${:uid}_OWN:
// CHECK-SAME: \0A@p cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+0], [$0, {zz, $1, bb}], [$4];
// CHECK-SAME: \0Aadd.s32 bb, bb, 2;
// CHECK-SAME: \0A@p cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$3+16384], [$0, {zz, $1, bb}], [$4];
// CHECK-SAME: \0Abra.uni TESSEL_TMA_${:uid}_END;\0ATESSEL_TMA_${:uid}_BLOCKS:
// CHECK-SAME: \0Asetp.ne.u32 q, w, 0;{{.*}}expect_tx.shared::cta.b64 _, [$4], 32768;{{.*}}add.s32 cc, $2, 0;{{.*}}[$3+0]
// CHECK-SAME: \0Asetp.ne.u32 q, w, 1;{{.*}}add.s32 cc, $2, 64;{{.*}}[$3+8192]
// CHECK-SAME: \0Asetp.ne.u32 q, w, 2;{{.*}}add.s32 cc, $2, 128;{{.*}}[$3+16384]
// CHECK-SAME: \0Asetp.ne.u32 q, w, 3;{{.*}}add.s32 cc, $2, 192;{{.*}}[$3+24576]
// CHECK-SAME: TESSEL_TMA_${:uid}_3:\0ATESSEL_TMA_${:uid}_END:\0A}", "l,r,r,r,r,b,b,b,r,r,b"
// A release: a block barrier, then thread 0 (where $1) arrives on the mbarrier at the
// same offset in each other program of the cluster of 4 (rank r ^ 1, r ^ 2, r ^ 3).
// CHECK: "{\0A.reg .pred p;\0A.reg .b32 t, r, x, a;\0Abar.sync 0;\0Amov.u32 t, %tid.x;\0Asetp.eq.u32 p, t, 0;\0Aand.pred p, p, $1;\0Amov.u32 r, %cluster_ctarank;
// CHECK-SAME: \0Axor.b32 x, r, 1;\0Amapa.shared::cluster.u32 a, $0, x;\0A@p mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a];
// CHECK-SAME: \0Axor.b32 x, r, 2;\0Amapa.shared::cluster.u32 a, $0, x;\0A@p mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a];
// CHECK-SAME: \0Axor.b32 x, r, 3;\0Amapa.shared::cluster.u32 a, $0, x;\0A@p mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a];\0A}", "r,b"
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 65536 : i32} {
  func.func @multicast(%mb: !llvm.ptr, %row: i32, %col: i32, %pred: i1, %whole: i1, %mc: i1, %phase: i32, %w: i1) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %b = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x256xbf16, swizzled>
    %bars = tessel.local_alloc {offset = 49152 : i64} : !tessel.shared<2x1x1xi64>
    %bar = tessel.local_index %bars[%c0] : !tessel.shared<2x1x1xi64> -> !tessel.shared<1x1xi64>
    %empty = tessel.local_index %bars[%c1] : !tessel.shared<2x1x1xi64> -> !tessel.shared<1x1xi64>
    tessel.tma_copy %mb[%row, %col] into %b, %bar, %pred whole_blocks %whole multicast %mc after %empty[%phase] if %w {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<64x256xbf16, swizzled>, !tessel.shared<1x1xi64>, !tessel.shared<1x1xi64>
    tessel.cluster_release %empty, %pred {ctas = 4 : i64} : !tessel.shared<1x1xi64>
    return
  }
}
