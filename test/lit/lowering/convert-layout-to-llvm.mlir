// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// ConvertLayoutToLLVM.cpp, pinned: every thread writes its registers at their row-major
// index in the scratch (pointers as i64, i1 as i8), a barrier, reads the indices of its
// new registers, a barrier.

// 2x32 pointers: lane l holds (0, l) and (1, l), so it writes i64 slots l and l + 32;
// in the new layout it holds row (l >> 4) & 1, columns l & 15 and (l & 15) + 16.
// CHECK-LABEL: func.func @pointers
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[I0:.*]] = llvm.ptrtoint %arg0 : !llvm.ptr<1> to i64
// CHECK-NEXT: %[[A0:.*]] = llvm.getelementptr %[[BASE]][%[[LANE]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT: llvm.store %[[I0]], %[[A0]] : i64, !llvm.ptr<3>
// CHECK-NEXT: %[[I1:.*]] = llvm.ptrtoint %arg1 : !llvm.ptr<1> to i64
// CHECK-NEXT: %[[L1:.*]] = arith.addi %[[LANE]], %c32_i32 : i32
// CHECK-NEXT: %[[A1:.*]] = llvm.getelementptr %[[BASE]][%[[L1]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT: llvm.store %[[I1]], %[[A1]] : i64, !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: %[[R:.*]] = arith.shrui %[[LANE]], %c4_i32 : i32
// CHECK-NEXT: %[[ROW:.*]] = arith.andi %[[R]], %c1_i32 : i32
// CHECK-NEXT: %[[COL:.*]] = arith.andi %[[LANE]], %c15_i32 : i32
// CHECK-NEXT: %[[COL1:.*]] = arith.addi %[[COL]], %c16_i32 : i32
// CHECK-NEXT: %[[ROWOFF:.*]] = arith.muli %[[ROW]], %c32_i32 : i32
// CHECK-NEXT: %[[J0:.*]] = arith.addi %[[ROWOFF]], %[[COL]] : i32
// CHECK-NEXT: %[[B0:.*]] = llvm.getelementptr %[[BASE]][%[[J0]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT: %[[V0:.*]] = llvm.load %[[B0]] : !llvm.ptr<3> -> i64
// CHECK-NEXT: %[[P0:.*]] = llvm.inttoptr %[[V0]] : i64 to !llvm.ptr<1>
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[ROWOFF]], %[[COL1]] : i32
// CHECK-NEXT: %[[B1:.*]] = llvm.getelementptr %[[BASE]][%[[J1]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT: %[[V1:.*]] = llvm.load %[[B1]] : !llvm.ptr<3> -> i64
// CHECK-NEXT: %[[P1:.*]] = llvm.inttoptr %[[V1]] : i64 to !llvm.ptr<1>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.store %arg2, %[[P0]]
// CHECK-NEXT: llvm.store %arg3, %[[P1]]
#a = #tessel.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>
#b = #tessel.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [1, 1], order = [1, 0]}>
module attributes {tessel.num_warps = 1 : i32, tessel.shared = 512 : i32} {
  func.func @pointers(%x: tensor<2x32x!tessel.ptr<f32>, #a>, %v: tensor<2x32xf32, #b>) {
    %c = tessel.convert_layout %x : tensor<2x32x!tessel.ptr<f32>, #a> -> tensor<2x32x!tessel.ptr<f32>, #b>
    tessel.store %c, %v : tensor<2x32x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// i1 goes through bytes: zero-extended to i8, truncated back.
// CHECK-LABEL: func.func @booleans
// CHECK: %[[B:.*]] = arith.extui %arg0 : i1 to i8
// CHECK-NEXT: %[[A:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: llvm.store %[[B]], %[[A]] : i8, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: %[[L:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i8
// CHECK-NEXT: arith.trunci %[[L]] : i8 to i1
// CHECK: nvvm.barrier0
#a = #tessel.blocked<{sizePerThread = [2, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]}>
#b = #tessel.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [1, 1], order = [1, 0]}>
module attributes {tessel.num_warps = 1 : i32, tessel.shared = 64 : i32} {
  func.func @booleans(%x: tensor<2x32xi1, #a>, %p: tensor<2x32x!tessel.ptr<i8>, #b>) {
    %c = tessel.convert_layout %x : tensor<2x32xi1, #a> -> tensor<2x32xi1, #b>
    %e = arith.extui %c : tensor<2x32xi1, #b> to tensor<2x32xi8, #b>
    tessel.store %p, %e : tensor<2x32x!tessel.ptr<i8>, #b>
    return
  }
}
