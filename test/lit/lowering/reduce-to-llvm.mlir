// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// ReduceToLLVM.cpp, pinned: the butterfly's lane offsets (the axis's lane stride times
// 1, 2, 4, ...), its full-warp mask and clamp, the combining op per kind and type, and
// the exchange across warps (one slot per warp, a barrier before and after the reads).

// Along axis 0 of a [4, 8]-lane layout (order [1, 0]): the 4 lanes of a column are 8
// apart, so the butterfly exchanges with lanes 8 and 16; signed integer max.
// CHECK-LABEL: func.func @max_columns
// CHECK: %[[S0:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %arg0, %c8_i32, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[M0:.*]] = arith.maxsi %arg0, %[[S0]] : i32
// CHECK-NEXT: %[[S1:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %arg1, %c8_i32, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[M1:.*]] = arith.maxsi %arg1, %[[S1]] : i32
// CHECK-NEXT: %[[S2:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %[[M0]], %c16_i32, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[R0:.*]] = arith.maxsi %[[M0]], %[[S2]] : i32
// CHECK-NEXT: %[[S3:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %[[M1]], %c16_i32, %c31_i32 : i32 -> i32
// CHECK-NEXT: %[[R1:.*]] = arith.maxsi %[[M1]], %[[S3]] : i32
// CHECK-NEXT: llvm.store %[[R0]], %arg2
// CHECK-NEXT: llvm.store %[[R1]], %arg3
// CHECK-NOT: nvvm.barrier0
#b = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>
module attributes {tessel.num_warps = 1 : i32} {
  func.func @max_columns(%x: tensor<4x16xi32, #b>, %p: tensor<16x!tessel.ptr<i32>, #tessel.slice<{dim = 0, parent = #b}>>) {
    %m = tessel.reduce max %x {axis = 0 : i32} : tensor<4x16xi32, #b> -> tensor<16xi32, #tessel.slice<{dim = 0, parent = #b}>>
    tessel.store %p, %m : tensor<16x!tessel.ptr<i32>, #tessel.slice<{dim = 0, parent = #b}>>
    return
  }
}

// -----

// 64 f32 over 2 warps: five butterfly rounds (lanes 1 .. 16), then warp w = (tid >> 5) & 1
// writes its partial to slot w, a barrier, everyone reads slots 0 and 1 and combines
// them, a barrier (the scratch is reused).
// CHECK-LABEL: func.func @min_across_warps
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: %[[S0:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %arg0, %c1_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[M0:.*]] = arith.minimumf %arg0, %[[S0]] : f32
// CHECK-NEXT: %[[S1:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %[[M0]], %c2_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[M1:.*]] = arith.minimumf %[[M0]], %[[S1]] : f32
// CHECK-NEXT: %[[S2:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %[[M1]], %c4_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[M2:.*]] = arith.minimumf %[[M1]], %[[S2]] : f32
// CHECK-NEXT: %[[S3:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %[[M2]], %c8_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[M3:.*]] = arith.minimumf %[[M2]], %[[S3]] : f32
// CHECK-NEXT: %[[S4:.*]] = nvvm.shfl.sync  bfly %c-1_i32, %[[M3]], %c16_i32, %c31_i32 : f32 -> f32
// CHECK-NEXT: %[[PART:.*]] = arith.minimumf %[[M3]], %[[S4]] : f32
// CHECK-NEXT: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[W:.*]] = arith.shrui %[[TID]], %c5_i32 : i32
// CHECK-NEXT: %[[WARP:.*]] = arith.andi %[[W]], %c1_i32 : i32
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[WARP]], %c2_i32 : i32
// CHECK-NEXT: %[[ADDR:.*]] = llvm.getelementptr %[[BASE]][%[[SLOT]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.store %[[PART]], %[[ADDR]] : f32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[P0:.*]] = llvm.load %[[BASE]] : !llvm.ptr<3> -> f32
// CHECK-NEXT: %[[A1:.*]] = llvm.getelementptr %[[BASE]][1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f32
// CHECK-NEXT: %[[P1:.*]] = llvm.load %[[A1]] : !llvm.ptr<3> -> f32
// CHECK-NEXT: %[[R:.*]] = arith.minimumf %[[P0]], %[[P1]] : f32
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.store %[[R]], %arg1
#b = #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>
module attributes {tessel.num_warps = 2 : i32, tessel.shared = 8 : i32} {
  func.func @min_across_warps(%x: tensor<64xf32, #b>, %p: !tessel.ptr<f32>) {
    %s = tessel.reduce min %x {axis = 0 : i32} : tensor<64xf32, #b> -> f32
    tessel.store %p, %s : !tessel.ptr<f32>
    return
  }
}
