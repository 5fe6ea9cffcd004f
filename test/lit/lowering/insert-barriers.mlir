// RUN: tessel-opt %s -split-input-file -tessel-insert-barriers | FileCheck %s

// The pipelined loop: one barrier per iteration, right after the wait. It makes the
// copies other threads waited for visible to the dot (read after write) and keeps the
// next copy from overwriting the slot the previous iteration's dot read (write after
// read, across the back edge).
// CHECK-LABEL: func.func @pipelined_loop
// CHECK: scf.for
// CHECK-NEXT: tessel.async_wait {pending = 1 : i32}
// CHECK-NEXT: tessel.barrier
// CHECK-NOT: tessel.barrier
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.barrier
// CHECK: tessel.dot
// CHECK-NOT: tessel.barrier
// CHECK: scf.yield
// CHECK: tessel.async_wait {pending = 0 : i32}
// CHECK-NOT: tessel.barrier
// CHECK: return
func.func @pipelined_loop(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: !tessel.shared<32x64xbf16>,
                          %n: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %ring = tessel.local_alloc : !tessel.shared<3x64x32xbf16>
  %s0 = tessel.local_index %ring[%c0] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %s0 : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_commit
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    tessel.async_wait {pending = 1 : i32}
    %w = tessel.local_index %ring[%i] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    tessel.async_copy %p into %w : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    tessel.async_commit
    %x = tessel.local_index %ring[%i] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    %d = tessel.dot %x, %y, %acc : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tessel.async_wait {pending = 0 : i32}
  return %r : tensor<64x64xf32>
}

// -----

// A copy into a buffer that was read since the last barrier waits for every reader.
// CHECK-LABEL: func.func @overwrite_after_read
// CHECK: tessel.barrier
// CHECK-NEXT: tessel.dot
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.async_copy
func.func @overwrite_after_read(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>,
                                %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %buf = tessel.local_alloc : !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %buf : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_commit
  tessel.async_wait {pending = 0 : i32}
  %d = tessel.dot %buf, %y, %acc : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
  tessel.async_copy %p into %buf : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  return %d : tensor<64x64xf32>
}

// -----

// Nothing shared is read: no barrier.
// CHECK-LABEL: func.func @no_reader
// CHECK-NOT: tessel.barrier
func.func @no_reader(%p: tensor<64x32x!tessel.ptr<bf16>>) {
  %buf = tessel.local_alloc : !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %buf : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_commit
  tessel.async_wait {pending = 0 : i32}
  return
}
