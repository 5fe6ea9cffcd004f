// RUN: tessel-opt %s -tessel-mark-kernel-entries | FileCheck %s
// Kernels become PTX entry points with the block size fixed by num_warps.

// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.reqntid = array<i32: 256, 1, 1>
// CHECK-NOT: tessel.kernel
// CHECK-LABEL: llvm.func @helper
// CHECK-NOT: nvvm.kernel
module attributes {tessel.num_warps = 8 : i32} {
  llvm.func @kernel() attributes {tessel.kernel} {
    llvm.return
  }
  llvm.func @helper() {
    llvm.return
  }
}
