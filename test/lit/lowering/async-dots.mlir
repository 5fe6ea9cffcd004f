// RUN: tessel-opt %s -split-input-file -tessel-async-dots | FileCheck %s
// -tessel-async-dots on register-A wgmma dots (sm_90a, A in the mma rows layout, B a
// "b" ring slot): each becomes async, and its tessel.dot_wait goes before the first op
// that needs the result, with `pending` the number of async dots issued in between.

// Three dots, their results used in issue order: waits with pending 2, 1, 0.
// CHECK-LABEL: func.func @pending
// CHECK: %[[D0:.*]] = tessel.dot %arg0, %{{.*}}, %arg1 {async}
// CHECK-NEXT: %[[D1:.*]] = tessel.dot %arg0, %{{.*}}, %arg1 {async}
// CHECK-NEXT: %[[D2:.*]] = tessel.dot %arg0, %{{.*}}, %arg1 {async}
// CHECK-NEXT: %[[W0:.*]] = tessel.dot_wait %[[D0]] {pending = 2 : i32}
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[W0]], %arg1
// CHECK-NEXT: %[[W1:.*]] = tessel.dot_wait %[[D1]] {pending = 1 : i32}
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[W1]], %[[S0]]
// CHECK-NEXT: %[[W2:.*]] = tessel.dot_wait %[[D2]] {pending = 0 : i32}
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[W2]], %[[S1]]
// CHECK-NEXT: return %[[S2]]
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
  func.func @pending(%a: tensor<64x64xbf16, #acc>, %acc: tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ring = tessel.local_alloc : !tessel.shared<2x64x64xbf16, wgmma_b>
    %b0 = tessel.local_index %ring[%c0] : !tessel.shared<2x64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, wgmma_b>
    %b1 = tessel.local_index %ring[%c1] : !tessel.shared<2x64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, wgmma_b>
    %d0 = tessel.dot %a, %b0, %acc : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    %d1 = tessel.dot %a, %b1, %acc : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    %d2 = tessel.dot %a, %b0, %acc : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    %s0 = arith.addf %d0, %acc : tensor<64x64xf32, #acc>
    %s1 = arith.addf %d1, %s0 : tensor<64x64xf32, #acc>
    %s2 = arith.addf %d2, %s1 : tensor<64x64xf32, #acc>
    return %s2 : tensor<64x64xf32, #acc>
  }
}

// -----

// A copy into the B ring between the dot and its use could overwrite what the dot
// still reads: the wait goes before the copy.
// CHECK-LABEL: func.func @copy_into_b
// CHECK: %[[D:.*]] = tessel.dot %arg0, %{{.*}}, %arg1 {async}
// CHECK-NEXT: %[[W:.*]] = tessel.dot_wait %[[D]] {pending = 0 : i32}
// CHECK-NEXT: tessel.async_copy %arg2 into
// CHECK-NEXT: arith.addf %[[W]], %arg1
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
#ld = #tessel.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
  func.func @copy_into_b(%a: tensor<64x64xbf16, #acc>, %acc: tensor<64x64xf32, #acc>, %p: tensor<64x64x!tessel.ptr<bf16>, #ld>) -> tensor<64x64xf32, #acc> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %ring = tessel.local_alloc : !tessel.shared<2x64x64xbf16, wgmma_b>
    %b0 = tessel.local_index %ring[%c0] : !tessel.shared<2x64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, wgmma_b>
    %b1 = tessel.local_index %ring[%c1] : !tessel.shared<2x64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, wgmma_b>
    %d0 = tessel.dot %a, %b0, %acc : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    tessel.async_copy %p into %b1 : tensor<64x64x!tessel.ptr<bf16>, #ld>, !tessel.shared<64x64xbf16, wgmma_b>
    %s0 = arith.addf %d0, %acc : tensor<64x64xf32, #acc>
    return %s0 : tensor<64x64xf32, #acc>
  }
}

// -----

// A result used only in a nested region: the wait goes before the op holding the use.
// An unused result is waited for before the terminator. A dot whose B is a register
// tile (staged in scratch the next op reuses) stays synchronous.
// CHECK-LABEL: func.func @nested_and_unused
// CHECK: %[[D0:.*]] = tessel.dot %arg0, %{{.*}}, %arg1 {async}
// CHECK-NEXT: %[[D1:.*]] = tessel.dot %arg0, %{{.*}}, %arg1 {async}
// CHECK-NEXT: %[[R:.*]] = tessel.dot %arg0, %arg3, %arg1 :
// CHECK-NEXT: %[[W0:.*]] = tessel.dot_wait %[[D0]] {pending = 1 : i32}
// CHECK-NEXT: scf.if %arg2
// CHECK-NEXT: arith.addf %[[W0]], %[[R]]
// CHECK: %[[W1:.*]] = tessel.dot_wait %[[D1]] {pending = 0 : i32}
// CHECK-NEXT: return
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
  func.func @nested_and_unused(%a: tensor<64x64xbf16, #acc>, %acc: tensor<64x64xf32, #acc>, %c: i1,
                               %rb: tensor<64x64xbf16, #acc>) {
    %c0 = arith.constant 0 : i32
    %ring = tessel.local_alloc : !tessel.shared<2x64x64xbf16, wgmma_b>
    %b0 = tessel.local_index %ring[%c0] : !tessel.shared<2x64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, wgmma_b>
    %d0 = tessel.dot %a, %b0, %acc : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    %d1 = tessel.dot %a, %b0, %acc : tensor<64x64xbf16, #acc>, !tessel.shared<64x64xbf16, wgmma_b> -> tensor<64x64xf32, #acc>
    %r = tessel.dot %a, %rb, %acc : tensor<64x64xbf16, #acc>, tensor<64x64xbf16, #acc> -> tensor<64x64xf32, #acc>
    scf.if %c {
      %s = arith.addf %d0, %r : tensor<64x64xf32, #acc>
    }
    return
  }
}
