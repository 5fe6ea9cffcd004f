// RUN: tessel-opt %s -split-input-file -tessel-assign-layouts -tessel-allocate-shared-memory -tessel-insert-barriers | FileCheck %s
// sm_90a: a dot reading pipelined bf16 buffers with K = 64 takes the wgmma accumulator
// layout (all warps along M), its buffers are marked for wgmma's swizzled layout, placed
// 1024-byte aligned without padding (3 x 128 x 64 x 2 = 49152 bytes, then 3 x 64 x 128 x 2),
// and the barrier after the wait is preceded by an async-proxy fence.

// CHECK: #blocked = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 98304 : i32}
// CHECK: tessel.local_alloc {offset = 0 : i64} : !tessel.shared<3x128x64xbf16, wgmma_a>
// CHECK: tessel.local_alloc {offset = 49152 : i64} : !tessel.shared<3x64x128xbf16, wgmma_b>
// CHECK: tessel.async_wait {pending = 1 : i32}
// CHECK-NEXT: tessel.fence_async_shared
// CHECK-NEXT: tessel.barrier
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #blocked>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
  func.func @wgmma(%n: i32, %base: !tessel.ptr<f32>) {
    %p = tessel.splat %base : tensor<128x128x!tessel.ptr<f32>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %ra = tessel.local_alloc : !tessel.shared<3x128x64xbf16>
    %rb = tessel.local_alloc : !tessel.shared<3x64x128xbf16>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      tessel.async_wait {pending = 1 : i32}
      %x = tessel.local_index %ra[%i] : !tessel.shared<3x128x64xbf16> -> !tessel.shared<128x64xbf16>
      %y = tessel.local_index %rb[%i] : !tessel.shared<3x64x128xbf16> -> !tessel.shared<64x128xbf16>
      %d = tessel.dot %x, %y, %acc : !tessel.shared<128x64xbf16>, !tessel.shared<64x128xbf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    tessel.store %p, %r : tensor<128x128x!tessel.ptr<f32>>
    return
  }
}

// -----

// sm_90 (no `a`): the same dot keeps mma.sync's layout (warps split 2 x 2) and padded buffers.
// CHECK: #blocked = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [1, 0]}>
// CHECK: module attributes {tessel.arch = "sm_90"
// CHECK-NOT: , wgmma_
// CHECK-NOT: tessel.fence_async_shared
// CHECK: return
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
  func.func @mma(%n: i32, %base: !tessel.ptr<f32>) {
    %p = tessel.splat %base : tensor<128x128x!tessel.ptr<f32>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %ra = tessel.local_alloc : !tessel.shared<3x128x64xbf16>
    %rb = tessel.local_alloc : !tessel.shared<3x64x128xbf16>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      tessel.async_wait {pending = 1 : i32}
      %x = tessel.local_index %ra[%i] : !tessel.shared<3x128x64xbf16> -> !tessel.shared<128x64xbf16>
      %y = tessel.local_index %rb[%i] : !tessel.shared<3x64x128xbf16> -> !tessel.shared<64x128xbf16>
      %d = tessel.dot %x, %y, %acc : !tessel.shared<128x64xbf16>, !tessel.shared<64x128xbf16> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    tessel.store %p, %r : tensor<128x128x!tessel.ptr<f32>>
    return
  }
}

// -----

// sm_90a, tf32 (f32 operands, K = 32) in the "swizzled" buffers the bulk copies fill: the
// dot runs transposed on wgmma and its accumulator takes C^T's fragment layout (two rows
// by one column per thread, lanes four along M, warps along N); no async-proxy fence
// (only the bulk copies write those buffers).
// CHECK: #blocked = #tessel.blocked<{sizePerThread = [2, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK: tessel.local_alloc {offset = 0 : i64} : !tessel.shared<3x128x32xf32, swizzled>
// CHECK-NOT: tessel.fence_async_shared
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #blocked>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
  func.func @tf32_wgmma(%n: i32, %base: !tessel.ptr<f32>) {
    %p = tessel.splat %base : tensor<128x128x!tessel.ptr<f32>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %ra = tessel.local_alloc : !tessel.shared<3x128x32xf32, swizzled>
    %rb = tessel.local_alloc : !tessel.shared<3x32x128xf32, swizzled>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = tessel.local_index %ra[%i] : !tessel.shared<3x128x32xf32, swizzled> -> !tessel.shared<128x32xf32, swizzled>
      %y = tessel.local_index %rb[%i] : !tessel.shared<3x32x128xf32, swizzled> -> !tessel.shared<32x128xf32, swizzled>
      %d = tessel.dot %x, %y, %acc : !tessel.shared<128x32xf32, swizzled>, !tessel.shared<32x128xf32, swizzled> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    tessel.store %p, %r : tensor<128x128x!tessel.ptr<f32>>
    return
  }
}

// -----

// The same tf32 dot on sm_90 (no wgmma) keeps mma.sync's layout.
// CHECK: #blocked = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [1, 0]}>
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #blocked>
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
  func.func @tf32_mma(%n: i32, %base: !tessel.ptr<f32>) {
    %p = tessel.splat %base : tensor<128x128x!tessel.ptr<f32>>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %ra = tessel.local_alloc : !tessel.shared<3x128x32xf32, swizzled>
    %rb = tessel.local_alloc : !tessel.shared<3x32x128xf32, swizzled>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
      %x = tessel.local_index %ra[%i] : !tessel.shared<3x128x32xf32, swizzled> -> !tessel.shared<128x32xf32, swizzled>
      %y = tessel.local_index %rb[%i] : !tessel.shared<3x32x128xf32, swizzled> -> !tessel.shared<32x128xf32, swizzled>
      %d = tessel.dot %x, %y, %acc : !tessel.shared<128x32xf32, swizzled>, !tessel.shared<32x128xf32, swizzled> -> tensor<128x128xf32>
      scf.yield %d : tensor<128x128xf32>
    }
    tessel.store %p, %r : tensor<128x128x!tessel.ptr<f32>>
    return
  }
}
