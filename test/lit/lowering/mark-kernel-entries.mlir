// RUN: tessel-opt %s -split-input-file -tessel-mark-kernel-entries | FileCheck %s
// Kernels become PTX entry points with the block size fixed by num_warps.

// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.reqntid = array<i32: 256, 1, 1>
// CHECK-NOT: nvvm.minctasm
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

// -----

// 98432 bytes of shared memory on sm_90 (228 KB per SM, 1 KB more per block): two blocks
// of 128 threads per SM, so each thread may have 255 registers: ptxas is told.
// CHECK-LABEL: llvm.func @two_blocks
// CHECK-SAME: nvvm.minctasm = 2 : i32
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32, tessel.shared = 98432 : i32} {
  llvm.func @two_blocks() attributes {tessel.kernel} {
    llvm.return
  }
}

// -----

// 65664 bytes: three blocks of 128 threads fit, whose registers ptxas must budget itself
// (a hint would cap them at 170): nothing is said.
// CHECK-LABEL: llvm.func @three_blocks
// CHECK-NOT: nvvm.minctasm
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 65664 : i32} {
  llvm.func @three_blocks() attributes {tessel.kernel} {
    llvm.return
  }
}

// -----

// One block of 256 threads (196736 bytes) on sm_90a; on sm_80 (164 KB) 98432 bytes leave
// one block of 128 threads.
// CHECK-LABEL: llvm.func @one_block
// CHECK-SAME: nvvm.minctasm = 1 : i32
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 8 : i32, tessel.shared = 196736 : i32} {
  llvm.func @one_block() attributes {tessel.kernel} {
    llvm.return
  }
}

// -----

// CHECK-LABEL: llvm.func @sm80
// CHECK-SAME: nvvm.minctasm = 1 : i32
module attributes {tessel.arch = "sm_80", tessel.num_warps = 4 : i32, tessel.shared = 98432 : i32} {
  llvm.func @sm80() attributes {tessel.kernel} {
    llvm.return
  }
}

// -----

// 116000 bytes on sm_90: with the driver's 1 KB per block, 117024 bytes a block, so one
// block of 128 threads per SM (two would need 234048 > 233472 bytes).
// CHECK-LABEL: llvm.func @reserved_kilobyte
// CHECK-SAME: nvvm.minctasm = 1 : i32
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32, tessel.shared = 116000 : i32} {
  llvm.func @reserved_kilobyte() attributes {tessel.kernel} {
    llvm.return
  }
}
