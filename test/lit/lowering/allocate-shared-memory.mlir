// RUN: tessel-opt %s -split-input-file -tessel-allocate-shared-memory | FileCheck %s
// Scratch for cross-warp reductions and layout conversions; the largest need wins.

// 1024 f32 over 4 warps: each warp leaves one partial, 4 x 4 bytes.
// CHECK: module attributes {tessel.shared = 16 : i32}
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module {
  func.func @reduce_across_warps(%x: tensor<1024xf32, #b>) -> f32 {
    %s = tessel.reduce add %x {axis = 0 : i32} : tensor<1024xf32, #b> -> f32
    return %s : f32
  }
}

// -----

// One warp holds the whole row: shuffles only, no scratch.
// CHECK: module attributes {tessel.shared = 0 : i32}
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module {
  func.func @reduce_in_a_warp(%x: tensor<128xf32, #b>) -> f32 {
    %s = tessel.reduce max %x {axis = 0 : i32} : tensor<128xf32, #b> -> f32
    return %s : f32
  }
}

// -----

// A layout conversion of 64x64 f32 goes through 16 KiB.
// CHECK: module attributes {tessel.shared = 16384 : i32}
#a = #tessel.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#b = #tessel.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
module {
  func.func @convert(%x: tensor<64x64xf32, #a>) -> tensor<64x64xf32, #b> {
    %c = tessel.convert_layout %x : tensor<64x64xf32, #a> -> tensor<64x64xf32, #b>
    return %c : tensor<64x64xf32, #b>
  }
}

// -----

// Buffers follow the scratch, 128-byte aligned: 16 bytes of reduction scratch, then
// 3 x 64 rows x (32 + 8) bf16 = 15360 bytes at 128, then 32 x (64 + 8) bf16 = 4608 at 15488.
// CHECK: module attributes {tessel.shared = 20096 : i32}
// CHECK: tessel.local_alloc {offset = 128 : i64} : !tessel.shared<3x64x32xbf16>
// CHECK: tessel.local_alloc {offset = 15488 : i64} : !tessel.shared<32x64xbf16>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module {
  func.func @buffers(%x: tensor<1024xf32, #b>) -> f32 {
    %s = tessel.reduce add %x {axis = 0 : i32} : tensor<1024xf32, #b> -> f32
    %ring = tessel.local_alloc : !tessel.shared<3x64x32xbf16>
    %one = tessel.local_alloc : !tessel.shared<32x64xbf16>
    %c0 = arith.constant 0 : i32
    %slot = tessel.local_index %ring[%c0] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<64x32xbf16>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tessel.dot %slot, %one, %zero : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
    return %s : f32
  }
}

// -----

// A wgmma operand's buffer starts 1024-byte aligned (its 128-byte swizzle repeats every
// 1024 bytes): after 16 bytes of scratch, at 1024, unpadded (64 x 64 x 2 = 8192 bytes);
// a padded buffer after it 128-byte aligned, at 9216.
// CHECK: module attributes {tessel.shared = 18432 : i32}
// CHECK: tessel.local_alloc {offset = 1024 : i64} : !tessel.shared<1x64x64xbf16, wgmma_b>
// CHECK: tessel.local_alloc {offset = 9216 : i64} : !tessel.shared<1x64x64xbf16>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module {
  func.func @wgmma_buffer(%x: tensor<1024xf32, #b>) -> f32 {
    %s = tessel.reduce add %x {axis = 0 : i32} : tensor<1024xf32, #b> -> f32
    %w = tessel.local_alloc : !tessel.shared<1x64x64xbf16, wgmma_b>
    %p = tessel.local_alloc : !tessel.shared<1x64x64xbf16>
    tessel.mbarrier_init %w {count = 1 : i32} : !tessel.shared<1x64x64xbf16, wgmma_b>
    tessel.mbarrier_init %p {count = 1 : i32} : !tessel.shared<1x64x64xbf16>
    return %s : f32
  }
}

// -----

// Several scratch users: the largest (a 64x64 f32 conversion, 16 KiB) wins, whatever
// comes after it.
// CHECK: module attributes {tessel.shared = 16384 : i32}
#a = #tessel.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
#c = #tessel.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module {
  func.func @largest_wins(%x: tensor<64x64xf32, #a>, %y: tensor<1024xf32, #b>) -> f32 {
    %c = tessel.convert_layout %x : tensor<64x64xf32, #a> -> tensor<64x64xf32, #c>
    %s = tessel.reduce add %y {axis = 0 : i32} : tensor<1024xf32, #b> -> f32
    return %s : f32
  }
}

// -----

// Buffers whose lives do not meet share memory: the rings of two loops one after the
// other (attention's key-tile loops) take the same bytes, after the dots' 4608 bytes of
// scratch, while a buffer the second loop reads that was filled before the first lives
// across it and gets bytes of its own (padded rows: 10240 and 1536 bytes).
// CHECK: module attributes {tessel.shared = 16384 : i32}
// CHECK-LABEL: func.func @successive_loops
// CHECK: tessel.local_alloc {offset = 4608 : i64} : !tessel.shared<2x64x32xbf16>
// CHECK: tessel.local_alloc {offset = 14848 : i64} : !tessel.shared<32x16xbf16>
// CHECK: tessel.local_alloc {offset = 4608 : i64} : !tessel.shared<2x64x32xbf16>
module {
  func.func @successive_loops(%p: tensor<64x32x!tessel.ptr<bf16>>, %q: tensor<32x16x!tessel.ptr<bf16>>,
                              %y: tensor<32x64xbf16>, %n: i32) -> tensor<64x16xf32> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %zero16 = arith.constant dense<0.0> : tensor<64x16xf32>
    %first = tessel.local_alloc : !tessel.shared<2x64x32xbf16>
    %kept = tessel.local_alloc : !tessel.shared<32x16xbf16>
    tessel.async_copy %q into %kept : tensor<32x16x!tessel.ptr<bf16>>, !tessel.shared<32x16xbf16>
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
      %s = tessel.local_index %first[%i] : !tessel.shared<2x64x32xbf16> -> !tessel.shared<64x32xbf16>
      tessel.async_copy %p into %s : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
      %d = tessel.dot %s, %y, %acc : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    %second = tessel.local_alloc : !tessel.shared<2x64x32xbf16>
    %t = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero16) -> (tensor<64x16xf32>) : i32 {
      %s = tessel.local_index %second[%i] : !tessel.shared<2x64x32xbf16> -> !tessel.shared<64x32xbf16>
      tessel.async_copy %p into %s : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
      %d = tessel.dot %s, %kept, %acc : !tessel.shared<64x32xbf16>, !tessel.shared<32x16xbf16> -> tensor<64x16xf32>
      scf.yield %d : tensor<64x16xf32>
    }
    return %t : tensor<64x16xf32>
  }
}

// -----

// Made before an outer loop and used in two inner loops of it, two rings are live for
// the whole outer loop (its next iteration runs the first inner loop again): no sharing.
// CHECK: module attributes {tessel.shared = 25088 : i32}
// CHECK-LABEL: func.func @rings_of_an_outer_loop
// CHECK: tessel.local_alloc {offset = 4608 : i64}
// CHECK: tessel.local_alloc {offset = 14848 : i64}
module {
  func.func @rings_of_an_outer_loop(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>,
                                    %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %a = tessel.local_alloc : !tessel.shared<2x64x32xbf16>
    %b = tessel.local_alloc : !tessel.shared<2x64x32xbf16>
    scf.for %j = %c0 to %n step %c1 : i32 {
      scf.for %i = %c0 to %n step %c1 : i32 {
        %s = tessel.local_index %a[%i] : !tessel.shared<2x64x32xbf16> -> !tessel.shared<64x32xbf16>
        tessel.async_copy %p into %s : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
      }
      scf.for %i = %c0 to %n step %c1 : i32 {
        %s = tessel.local_index %b[%i] : !tessel.shared<2x64x32xbf16> -> !tessel.shared<64x32xbf16>
        %d = tessel.dot %s, %y, %zero : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
      }
    }
    return
  }
}

// -----

// Partitions of a warp-specialized program run side by side: a ring the producer fills
// and one the consumers read are both live for the whole op. An mbarrier ring (not a
// tile buffer) keeps its bytes for the whole kernel, though its last use comes early.
// CHECK: module attributes {tessel.shared = 25216 : i32}
// CHECK-LABEL: func.func @partitions_and_mbarriers
// CHECK: tessel.local_alloc {offset = 4608 : i64} : !tessel.shared<2x1x1xi64>
// CHECK: tessel.local_alloc {offset = 4736 : i64}
// CHECK: tessel.local_alloc {offset = 14976 : i64}
module {
  func.func @partitions_and_mbarriers(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>) {
    %c0 = arith.constant 0 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %bars = tessel.local_alloc : !tessel.shared<2x1x1xi64>
    %b0 = tessel.local_index %bars[%c0] : !tessel.shared<2x1x1xi64> -> !tessel.shared<1x1xi64>
    tessel.mbarrier_init %b0 {count = 1 : i32} : !tessel.shared<1x1xi64>
    %a = tessel.local_alloc : !tessel.shared<2x64x32xbf16>
    %b = tessel.local_alloc : !tessel.shared<2x64x32xbf16>
    tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 24 : i32, consumer_registers = 240 : i32} producer {
      %s = tessel.local_index %a[%c0] : !tessel.shared<2x64x32xbf16> -> !tessel.shared<64x32xbf16>
      tessel.async_copy %p into %s : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    } consumers {
      %s = tessel.local_index %b[%c0] : !tessel.shared<2x64x32xbf16> -> !tessel.shared<64x32xbf16>
      %d = tessel.dot %s, %y, %zero : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    }
    return
  }
}

// -----

// Buffers that all meet stay one after another: a small buffer after a 1024-aligned one
// goes on top, not into the gap below it (only a dead buffer's bytes are reused), so a
// program with nothing to reuse keeps the offsets it always had.
// CHECK: module attributes {tessel.shared = 9472 : i32}
// CHECK-LABEL: func.func @no_gap_filling
// CHECK: tessel.local_alloc {offset = 1024 : i64} : !tessel.shared<1x64x64xbf16, wgmma_b>
// CHECK: tessel.local_alloc {offset = 9216 : i64} : !tessel.shared<1x8x8xbf16>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module {
  func.func @no_gap_filling(%x: tensor<1024xf32, #b>) -> f32 {
    %s = tessel.reduce add %x {axis = 0 : i32} : tensor<1024xf32, #b> -> f32
    %w = tessel.local_alloc : !tessel.shared<1x64x64xbf16, wgmma_b>
    %p = tessel.local_alloc : !tessel.shared<1x8x8xbf16>
    tessel.mbarrier_init %w {count = 1 : i32} : !tessel.shared<1x64x64xbf16, wgmma_b>
    tessel.mbarrier_init %p {count = 1 : i32} : !tessel.shared<1x8x8xbf16>
    return %s : f32
  }
}

// -----

// Widening to the loop: a buffer filled before a loop and read in it is live for the
// whole loop, so a buffer made inside the loop body (after the read) does not take its
// bytes; and a ring the producer partition fills lives for the whole warp_specialize, so
// a buffer the consumers make does not take its bytes either (the partitions run side by
// side). Without the widening both would start at the dots' scratch end.
// CHECK: module attributes {tessel.shared = 14848 : i32}
// CHECK-LABEL: func.func @filled_before_a_loop
// CHECK: tessel.local_alloc {offset = 4608 : i64}
// CHECK: tessel.local_alloc {offset = 9728 : i64}
module {
  func.func @filled_before_a_loop(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %a = tessel.local_alloc : !tessel.shared<64x32xbf16>
    tessel.async_copy %p into %a : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    scf.for %j = %c0 to %n step %c1 : i32 {
      %d = tessel.dot %a, %y, %zero : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
      %b = tessel.local_alloc : !tessel.shared<64x32xbf16>
      tessel.async_copy %p into %b : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
      %e = tessel.dot %b, %y, %zero : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    }
    return
  }
}

// -----

// CHECK: module attributes {tessel.shared = 19968 : i32}
// CHECK-LABEL: func.func @consumers_buffer
// CHECK: tessel.local_alloc {offset = 4608 : i64}
// CHECK: tessel.local_alloc {offset = 14848 : i64}
module {
  func.func @consumers_buffer(%p: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>) {
    %c0 = arith.constant 0 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %a = tessel.local_alloc : !tessel.shared<2x64x32xbf16>
    tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 24 : i32, consumer_registers = 240 : i32} producer {
      %s = tessel.local_index %a[%c0] : !tessel.shared<2x64x32xbf16> -> !tessel.shared<64x32xbf16>
      tessel.async_copy %p into %s : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
    } consumers {
      %b = tessel.local_alloc : !tessel.shared<64x32xbf16>
      tessel.async_copy %p into %b : tensor<64x32x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
      %d = tessel.dot %b, %y, %zero : !tessel.shared<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    }
    return
  }
}
