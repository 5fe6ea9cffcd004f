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

// -----

// The software pipeliner's mma.sync loop: the dot reads slot %read, then the copies fill
// slot %write. Both rotate modulo 3 from different starts, so they never meet within an
// iteration: no barrier between the dot and the copy. The slot %write names was read by
// the previous iteration's dot, which the barrier after the wait already waited for.
// CHECK-LABEL: func.func @copy_after_dot_other_slot
// CHECK: scf.for
// CHECK-NEXT: tessel.async_wait {pending = 1 : i32}
// CHECK-NEXT: tessel.barrier
// CHECK-NOT: tessel.barrier
// CHECK: tessel.dot
// CHECK-NOT: tessel.barrier
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.barrier
// CHECK: scf.yield
func.func @copy_after_dot_other_slot(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: !tessel.shared<32x64xbf16>,
                                     %n: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %ring = tessel.local_alloc : !tessel.shared<3x64x32xbf16>
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %read = %c0, %write = %c2)
      -> (tensor<64x64xf32>, i32, i32) : i32 {
    tessel.async_wait {pending = 1 : i32}
    %x = tessel.local_index %ring[%read] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    %d = tessel.dot %x, %y, %acc : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
    %w = tessel.local_index %ring[%write] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    tessel.async_copy %p into %w : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    tessel.async_commit
    %r1 = arith.addi %read, %c1 : i32
    %rw = arith.cmpi eq, %r1, %c3 : i32
    %rn = arith.select %rw, %c0, %r1 : i32
    %w1 = arith.addi %write, %c1 : i32
    %ww = arith.cmpi eq, %w1, %c3 : i32
    %wn = arith.select %ww, %c0, %w1 : i32
    scf.yield %d, %rn, %wn : tensor<64x64xf32>, i32, i32
  }
  return %r#0 : tensor<64x64xf32>
}

// -----

// The same loop with both slots starting at 0: they are the same slot, so the copy must
// wait for every thread's dot.
// CHECK-LABEL: func.func @copy_after_dot_same_slot
// CHECK: tessel.dot
// CHECK-NEXT: tessel.local_index
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.async_copy
func.func @copy_after_dot_same_slot(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: !tessel.shared<32x64xbf16>,
                                    %n: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %ring = tessel.local_alloc : !tessel.shared<3x64x32xbf16>
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %read = %c0, %write = %c0)
      -> (tensor<64x64xf32>, i32, i32) : i32 {
    tessel.async_wait {pending = 1 : i32}
    %x = tessel.local_index %ring[%read] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    %d = tessel.dot %x, %y, %acc : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
    %w = tessel.local_index %ring[%write] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    tessel.async_copy %p into %w : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    tessel.async_commit
    %r1 = arith.addi %read, %c1 : i32
    %rw = arith.cmpi eq, %r1, %c3 : i32
    %rn = arith.select %rw, %c0, %r1 : i32
    %w1 = arith.addi %write, %c1 : i32
    %ww = arith.cmpi eq, %w1, %c3 : i32
    %wn = arith.select %ww, %c0, %w1 : i32
    scf.yield %d, %rn, %wn : tensor<64x64xf32>, i32, i32
  }
  return %r#0 : tensor<64x64xf32>
}

// -----

// Slots that are not known to rotate (here the induction variable) may coincide: barrier.
// Constant slots that differ need none.
// CHECK-LABEL: func.func @unknown_and_constant_slots
// CHECK: tessel.dot
// CHECK-NEXT: tessel.local_index
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.async_copy
// CHECK: tessel.dot
// CHECK-NEXT: tessel.local_index
// CHECK-NEXT: tessel.async_copy
func.func @unknown_and_constant_slots(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: !tessel.shared<32x64xbf16>,
                                      %acc: tensor<64x64xf32>, %i: i32, %j: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ring = tessel.local_alloc : !tessel.shared<3x64x32xbf16>
  tessel.async_wait {pending = 0 : i32}
  %x = tessel.local_index %ring[%i] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
  %d = tessel.dot %x, %y, %acc : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
  %w = tessel.local_index %ring[%j] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %w : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_commit
  tessel.async_wait {pending = 0 : i32}
  %x0 = tessel.local_index %ring[%c0] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
  %e = tessel.dot %x0, %y, %d : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
  %w1 = tessel.local_index %ring[%c1] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %w1 : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  return %e : tensor<64x64xf32>
}

// -----

// Without a barrier at the top of the loop, the copy of iteration i+1 would overwrite the
// slot iteration i's dot read (%write advances into %read's old slot): reads that cross
// the back edge count for the whole ring, so the copy gets a barrier.
// CHECK-LABEL: func.func @back_edge_forgets_slots
// CHECK: scf.for
// CHECK: tessel.dot
// CHECK-NEXT: tessel.local_index
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.async_copy
func.func @back_edge_forgets_slots(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: !tessel.shared<32x64xbf16>,
                                   %n: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %ring = tessel.local_alloc : !tessel.shared<3x64x32xbf16>
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %read = %c0, %write = %c2)
      -> (tensor<64x64xf32>, i32, i32) : i32 {
    %x = tessel.local_index %ring[%read] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    %d = tessel.dot %x, %y, %acc : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
    %w = tessel.local_index %ring[%write] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    tessel.async_copy %p into %w : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    %r1 = arith.addi %read, %c1 : i32
    %rw = arith.cmpi eq, %r1, %c3 : i32
    %rn = arith.select %rw, %c0, %r1 : i32
    %w1 = arith.addi %write, %c1 : i32
    %ww = arith.cmpi eq, %w1, %c3 : i32
    %wn = arith.select %ww, %c0, %w1 : i32
    scf.yield %d, %rn, %wn : tensor<64x64xf32>, i32, i32
  }
  return %r#0 : tensor<64x64xf32>
}
// -----

// A read in either branch of an `if` counts after it: the copy into the buffer the else
// branch's dot read waits for every reader.
// CHECK-LABEL: func.func @read_in_else
// CHECK: tessel.async_wait {pending = 0 : i32}
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: scf.if
// CHECK-NOT: tessel.barrier
// CHECK: tessel.dot
// CHECK-NOT: tessel.barrier
// CHECK: }
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.async_copy
func.func @read_in_else(%c: i1, %p: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>,
                        %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %buf = tessel.local_alloc : !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %buf : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_commit
  tessel.async_wait {pending = 0 : i32}
  %r = scf.if %c -> (tensor<64x64xf32>) {
    scf.yield %acc : tensor<64x64xf32>
  } else {
    %d = tessel.dot %buf, %y, %acc : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tessel.async_copy %p into %buf : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  return %r : tensor<64x64xf32>
}

// -----

// A dot reading wgmma operand buffers (written through the generic proxy by cp.async,
// read through the async proxy): fence.proxy.async, then the barrier.
// CHECK-LABEL: func.func @wgmma_fence
// CHECK: tessel.async_wait {pending = 0 : i32}
// CHECK-NEXT: tessel.fence_async_shared
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.local_index
func.func @wgmma_fence(%p: tensor<128x64x!tessel.ptr<bf16>>, %q: tensor<64x128x!tessel.ptr<bf16>>,
                       %acc: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %ra = tessel.local_alloc : !tessel.shared<1x128x64xbf16, wgmma_a>
  %rb = tessel.local_alloc : !tessel.shared<1x64x128xbf16, wgmma_b>
  %a = tessel.local_index %ra[%c0] : !tessel.shared<1x128x64xbf16, wgmma_a> -> !tessel.shared<128x64xbf16, wgmma_a>
  %b = tessel.local_index %rb[%c0] : !tessel.shared<1x64x128xbf16, wgmma_b> -> !tessel.shared<64x128xbf16, wgmma_b>
  tessel.async_copy %p into %a : tensor<128x64x!tessel.ptr<bf16>>, !tessel.shared<128x64xbf16, wgmma_a>
  tessel.async_copy %q into %b : tensor<64x128x!tessel.ptr<bf16>>, !tessel.shared<64x128xbf16, wgmma_b>
  tessel.async_commit
  tessel.async_wait {pending = 0 : i32}
  %x = tessel.local_index %ra[%c0] : !tessel.shared<1x128x64xbf16, wgmma_a> -> !tessel.shared<128x64xbf16, wgmma_a>
  %y = tessel.local_index %rb[%c0] : !tessel.shared<1x64x128xbf16, wgmma_b> -> !tessel.shared<64x128xbf16, wgmma_b>
  %d = tessel.dot %x, %y, %acc : !tessel.shared<128x64xbf16, wgmma_a>, !tessel.shared<64x128xbf16, wgmma_b> -> tensor<128x128xf32>
  return %d : tensor<128x128xf32>
}

// -----

// Two buffers on the same bytes (-tessel-allocate-shared-memory's offsets: successive
// loops' rings) are one buffer: the second loop's first copy waits for every thread's
// reads of the first ring, though it copies into another buffer.
// CHECK-LABEL: func.func @shared_bytes_after_reads
// CHECK: scf.for
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tessel.async_wait {pending = 0 : i32}
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.async_copy
func.func @shared_bytes_after_reads(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>,
                                    %n: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %first = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x32xbf16>
  %second = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x32xbf16>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    tessel.async_copy %p into %first : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    tessel.async_commit
    tessel.async_wait {pending = 0 : i32}
    %d = tessel.dot %first, %y, %acc : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tessel.async_wait {pending = 0 : i32}
  tessel.async_copy %p into %second : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  return %r : tensor<64x64xf32>
}

// -----

// Copies nobody read (a pipeline's zero-filled copies past its loop's end) still land
// late: a copy into another buffer on their bytes waits for this thread's copies and
// then for every thread. Buffers on other bytes need neither.
// CHECK-LABEL: func.func @shared_bytes_after_copies
// CHECK: tessel.async_copy %{{.*}} into %[[FIRST:.*]] :
// CHECK-NEXT: tessel.async_commit
// CHECK-NEXT: tessel.async_copy %{{.*}} into %[[OTHER:.*]] :
// CHECK-NEXT: tessel.async_wait {pending = 0 : i32}
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.async_copy
// CHECK-NOT: tessel.barrier
// CHECK: return
func.func @shared_bytes_after_copies(%p: tensor<64x32x!tessel.ptr<bf16>>) {
  %first = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x32xbf16>
  %other = tessel.local_alloc {offset = 10240 : i64} : !tessel.shared<64x32xbf16>
  %second = tessel.local_alloc {offset = 4096 : i64} : !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %first : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_commit
  tessel.async_copy %p into %other : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_copy %p into %second : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  tessel.async_commit
  tessel.async_wait {pending = 0 : i32}
  return
}

// -----

// cp.async writes through the generic proxy, a bulk copy through the async proxy: a bulk
// copy onto bytes that cp.async wrote since the last fence.proxy.async gets the fence and
// a barrier, though a barrier (the pipeliner's, after its mbarriers' initialisation) came
// between. A bulk copy onto other bytes needs neither.
// CHECK-LABEL: func.func @bulk_copy_after_generic_writes
// CHECK: tessel.async_wait {pending = 0 : i32}
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.fence_async_shared
// CHECK-NEXT: tessel.barrier
// CHECK-NEXT: tessel.tma_copy %{{.*}} into %[[SECOND:[^,]*]],
// CHECK-NEXT: tessel.tma_copy
// CHECK-NEXT: return
func.func @bulk_copy_after_generic_writes(%p: tensor<64x64x!tessel.ptr<bf16>>, %map: !llvm.ptr,
                                          %bar: !tessel.shared<1x1xi64>, %go: i1) {
  %c0 = arith.constant 0 : i32
  %first = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x64xbf16, wgmma_b>
  %second = tessel.local_alloc {offset = 0 : i64} : !tessel.shared<64x64xbf16, wgmma_b>
  %elsewhere = tessel.local_alloc {offset = 8192 : i64} : !tessel.shared<64x64xbf16, wgmma_b>
  tessel.async_copy %p into %first : tensor<64x64x!tessel.ptr<bf16>>, !tessel.shared<64x64xbf16, wgmma_b>
  tessel.async_commit
  tessel.async_wait {pending = 0 : i32}
  tessel.barrier
  tessel.tma_copy %map[%c0, %c0] into %second, %bar, %go : !llvm.ptr, !tessel.shared<64x64xbf16, wgmma_b>, !tessel.shared<1x1xi64>
  tessel.tma_copy %map[%c0, %c0] into %elsewhere, %bar, %go : !llvm.ptr, !tessel.shared<64x64xbf16, wgmma_b>, !tessel.shared<1x1xi64>
  return
}
