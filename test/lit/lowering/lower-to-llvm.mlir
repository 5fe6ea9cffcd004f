// RUN: tessel-opt %s -tessel-lower-to-llvm | FileCheck %s
// Pipeline.cpp's -tessel-lower-to-llvm: loop-invariant arithmetic leaves the loop before
// the pipeliner clones address slices (the multiply lands before the loop's header), the
// shared size is recorded, and the kernel becomes a PTX entry point.
// CHECK: module attributes {tessel.num_warps = 4 : i32, tessel.shared = 0 : i32}
// CHECK-LABEL: llvm.func @licm(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: !llvm.ptr<1>)
// CHECK-SAME: attributes {nvvm.kernel, nvvm.reqntid = array<i32: 128, 1, 1>}
// CHECK: %[[M:.*]] = llvm.mul %arg0, %arg1 : i32
// CHECK-NEXT: llvm.br ^bb1
// CHECK: ^bb2:
// CHECK-NOT: llvm.mul
// CHECK: llvm.add %[[M]], %{{.*}} : i32
// CHECK-NOT: llvm.mul
// CHECK: llvm.return
module attributes {tessel.num_warps = 4 : i32} {
  func.func @licm(%a: i32, %b: i32, %n: i32, %p: !tessel.ptr<i32>) attributes {tessel.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %m = arith.muli %a, %b : i32
      %s = arith.addi %m, %i : i32
      %q = tessel.addptr %p, %i : !tessel.ptr<i32>, i32
      tessel.store %q, %s : !tessel.ptr<i32>
    }
    return
  }
}
