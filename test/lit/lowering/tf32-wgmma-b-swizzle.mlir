// RUN: tessel-opt %s -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// tf32 wgmma runs transposed (WgmmaLayout.h): each warp loads its B^T fragments from the
// 128-byte-swizzled B buffer (K x N f32, blocks of 32 columns, K rows of 128 bytes each).
// Lane l of warp w reads column n = 8w + l/4 at rows k = l%4 and l%4 + 4: element (k, n)
// sits at block n/32 (K * 128 bytes), row k (128 bytes), 16-byte chunk ((n%32)/4) ^ (k%8)
// (the 128-byte swizzle: address bits [4:6] ^= bits [7:9]), word n%4. Here K = 32, so a
// block is 4096 bytes.
// CHECK-LABEL: func.func @wgmma_tf32
// CHECK: %[[B:.*]] = llvm.getelementptr %{{.*}}[8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-DAG: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-DAG: %[[WARP:.*]] = arith.shrui %[[TID]], %c5_i32 : i32
// CHECK-DAG: %[[L4:.*]] = arith.shrui %[[LANE]], %c2_i32 : i32
// CHECK-DAG: %[[W8:.*]] = arith.muli %[[WARP]], %c8_i32 : i32
// CHECK-DAG: %[[N:.*]] = arith.addi %[[W8]], %[[L4]] : i32
// CHECK-DAG: %[[K:.*]] = arith.andi %[[LANE]], %c3_i32 : i32
// The word n % 4 and the block n / 32:
// CHECK-DAG: %[[WORD:.*]] = arith.andi %[[N]], %c3_i32 : i32
// CHECK-DAG: %[[WORDB:.*]] = arith.shli %[[WORD]], %c2_i32 : i32
// CHECK-DAG: %[[BLOCK:.*]] = arith.shrui %[[N]], %c5_i32 : i32
// CHECK-DAG: %[[BLOCKB:.*]] = arith.muli %[[BLOCK]], %c4096_i32 : i32
// CHECK-DAG: %[[COLPART:.*]] = arith.addi %[[BLOCKB]], %[[WORDB]] : i32
// The chunk (n % 32) / 4, swizzled by the row k (first half) and k + 4 (second half):
// CHECK-DAG: %[[N4:.*]] = arith.shrui %[[N]], %c2_i32 : i32
// CHECK-DAG: %[[NCHUNK:.*]] = arith.andi %[[N4]], %c7_i32 : i32
// CHECK-DAG: %[[CHUNK0:.*]] = arith.xori %[[NCHUNK]], %[[K]] : i32
// CHECK-DAG: %[[CHUNK0B:.*]] = arith.shli %[[CHUNK0]], %c4_i32 : i32
// CHECK-DAG: %[[ROW0:.*]] = arith.shli %[[K]], %c7_i32 : i32
// CHECK-DAG: %[[PART0:.*]] = arith.addi %[[COLPART]], %[[ROW0]] : i32
// CHECK-DAG: %[[OFF0:.*]] = arith.addi %[[PART0]], %[[CHUNK0B]] : i32
// CHECK-DAG: %[[K4:.*]] = arith.addi %[[K]], %c4_i32 : i32
// CHECK-DAG: %[[CHUNK1:.*]] = arith.xori %[[NCHUNK]], %[[K4]] : i32
// CHECK-DAG: %[[CHUNK1B:.*]] = arith.shli %[[CHUNK1]], %c4_i32 : i32
// CHECK-DAG: %[[ROW1:.*]] = arith.shli %[[K4]], %c7_i32 : i32
// CHECK-DAG: %[[PART1:.*]] = arith.addi %[[COLPART]], %[[ROW1]] : i32
// CHECK-DAG: %[[OFF1:.*]] = arith.addi %[[PART1]], %[[CHUNK1B]] : i32
// CHECK: %[[P0:.*]] = llvm.getelementptr %[[B]][%[[OFF0]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: llvm.load %[[P0]] {alignment = 4 : i64} : !llvm.ptr<3> -> i32
// CHECK: llvm.getelementptr %[[B]][%[[OFF1]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
#t = #tessel.blocked<{sizePerThread = [2, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 16384 : i32} {
  func.func @wgmma_tf32(%c: tensor<64x64xf32, #t>, %p: tensor<64x64x!tessel.ptr<f32>, #t>) {
    %ra = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x32xf32, swizzled>
    %rb = tessel.local_alloc {offset = 8192 : i64} : !tessel.shared<32x64xf32, swizzled>
    %d = tessel.dot %ra, %rb, %c {inputPrecision = "tf32"} : !tessel.shared<64x32xf32, swizzled>, !tessel.shared<32x64xf32, swizzled> -> tensor<64x64xf32, #t>
    tessel.store %p, %d : tensor<64x64x!tessel.ptr<f32>, #t>
    return
  }
}
