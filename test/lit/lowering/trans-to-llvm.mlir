// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// TransToLLVM.cpp, pinned: a register tile's transpose into a layout that is not the
// source's transposed one goes through the scratch: each register stored at its
// transposed row-major index, a barrier, the new registers read, a barrier.

// 2x32 -> 32x2: lane l holds (0, l) and (1, l) and writes them at (l, 0) and (l, 1) of
// the 32x2 result, indices 2l and 2l + 1; it then holds row l of the result.
// CHECK-LABEL: func.func @through_scratch
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[I0:.*]] = arith.muli %[[LANE]], %c2_i32 : i32
// CHECK-NEXT: %[[A0:.*]] = llvm.getelementptr %[[BASE]][%[[I0]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.store %arg0, %[[A0]] : f32, !llvm.ptr<3>
// CHECK-NEXT: %[[I1:.*]] = arith.addi %[[I0]], %c1_i32 : i32
// CHECK-NEXT: %[[A1:.*]] = llvm.getelementptr %[[BASE]][%[[I1]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK-NEXT: llvm.store %arg1, %[[A1]] : f32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[V0:.*]] = llvm.load %[[A0]] : !llvm.ptr<3> -> f32
// CHECK-NEXT: %[[V1:.*]] = llvm.load %[[A1]] : !llvm.ptr<3> -> f32
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.store %[[V0]], %arg2
// CHECK-NEXT: llvm.store %[[V1]], %arg3
#src = #tessel.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>
#dst = #tessel.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [1, 0]}>
module attributes {tessel.num_warps = 1 : i32, tessel.shared = 256 : i32} {
  func.func @through_scratch(%x: tensor<2x32xf32, #src>, %p: tensor<32x2x!tessel.ptr<f32>, #dst>) {
    %t = tessel.trans %x : tensor<2x32xf32, #src> -> tensor<32x2xf32, #dst>
    tessel.store %p, %t : tensor<32x2x!tessel.ptr<f32>, #dst>
    return
  }
}

// -----

// Into the transposed layout (sizes, lanes, warps and order swapped) nothing moves: the
// registers are relabelled, no scratch, no barrier.
// CHECK-LABEL: func.func @relabelled
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.store %arg0, %arg2
// CHECK-NEXT: llvm.store %arg1, %arg3
#src = #tessel.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>
#dst = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [32, 1], warpsPerCTA = [1, 1], order = [0, 1]}>
module attributes {tessel.num_warps = 1 : i32} {
  func.func @relabelled(%x: tensor<2x32xf32, #src>, %p: tensor<32x2x!tessel.ptr<f32>, #dst>) {
    %t = tessel.trans %x : tensor<2x32xf32, #src> -> tensor<32x2xf32, #dst>
    tessel.store %p, %t : tensor<32x2x!tessel.ptr<f32>, #dst>
    return
  }
}
