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
