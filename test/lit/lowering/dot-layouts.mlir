// RUN: tessel-opt %s -split-input-file -tessel-assign-layouts -mlir-print-local-scope | FileCheck %s
// Layouts of tessel.dot: the accumulator group takes the mma.sync fragment layout (a
// blocked layout, see lowering/MmaLayout.h); a and b keep the layouts of their loads.

// bf16 on 4 warps: warps split 2x2; the splat, the dot and the stored tile agree.
// CHECK-LABEL: func.func @mma_accumulator
// CHECK: tessel.splat %{{.*}} : tensor<128x128xf32, #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [1, 0]}>>
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [1, 0]}>>
// CHECK: tessel.store %{{.*}}, %{{.*}} : tensor<128x128x!tessel.ptr<f32>, #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [2, 2], order = [1, 0]}>>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @mma_accumulator(%pa: !tessel.ptr<bf16>, %pb: !tessel.ptr<bf16>, %pc: !tessel.ptr<f32>) {
    %a_ptrs = tessel.splat %pa : tensor<128x32x!tessel.ptr<bf16>>
    %b_ptrs = tessel.splat %pb : tensor<32x128x!tessel.ptr<bf16>>
    %c_ptrs = tessel.splat %pc : tensor<128x128x!tessel.ptr<f32>>
    %a = tessel.load %a_ptrs : tensor<128x32x!tessel.ptr<bf16>>
    %b = tessel.load %b_ptrs : tensor<32x128x!tessel.ptr<bf16>>
    %zero = arith.constant 0.0 : f32
    %acc = tessel.splat %zero : tensor<128x128xf32>
    %d = tessel.dot %a, %b, %acc : tensor<128x32xbf16>, tensor<32x128xbf16> -> tensor<128x128xf32>
    tessel.store %c_ptrs, %d : tensor<128x128x!tessel.ptr<f32>>
    return
  }
}

// -----

// Exact f32 (inputPrecision = "ieee") runs on FMAs and keeps the default layout.
// CHECK-LABEL: func.func @ieee
// CHECK-NOT: threadsPerWarp = [8, 4]
// CHECK: tessel.dot {{.*}} {inputPrecision = "ieee"}
// CHECK-NOT: threadsPerWarp = [8, 4]
module attributes {tessel.num_warps = 4 : i32} {
  func.func @ieee(%pa: !tessel.ptr<f32>, %pb: !tessel.ptr<f32>, %pc: !tessel.ptr<f32>) {
    %a_ptrs = tessel.splat %pa : tensor<64x32x!tessel.ptr<f32>>
    %b_ptrs = tessel.splat %pb : tensor<32x64x!tessel.ptr<f32>>
    %c_ptrs = tessel.splat %pc : tensor<64x64x!tessel.ptr<f32>>
    %a = tessel.load %a_ptrs : tensor<64x32x!tessel.ptr<f32>>
    %b = tessel.load %b_ptrs : tensor<32x64x!tessel.ptr<f32>>
    %zero = arith.constant 0.0 : f32
    %acc = tessel.splat %zero : tensor<64x64xf32>
    %d = tessel.dot %a, %b, %acc {inputPrecision = "ieee"} : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
    tessel.store %c_ptrs, %d : tensor<64x64x!tessel.ptr<f32>>
    return
  }
}

// -----

// 8 warps on a 256x128 tile: 4 along M and 2 along N (64x64 per warp); tf32 also uses
// tensor cores. The loop-carried accumulator shares the layout.
// CHECK-LABEL: func.func @eight_warps_in_a_loop
// CHECK: scf.for {{.*}} -> (tensor<256x128xf32, #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 2], order = [1, 0]}>>)
// CHECK: tessel.dot {{.*}} -> tensor<256x128xf32, #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 2], order = [1, 0]}>>
module attributes {tessel.num_warps = 8 : i32} {
  func.func @eight_warps_in_a_loop(%pa: !tessel.ptr<f32>, %pb: !tessel.ptr<f32>, %pc: !tessel.ptr<f32>, %n: i32) {
    %a_ptrs = tessel.splat %pa : tensor<256x32x!tessel.ptr<f32>>
    %b_ptrs = tessel.splat %pb : tensor<32x128x!tessel.ptr<f32>>
    %c_ptrs = tessel.splat %pc : tensor<256x128x!tessel.ptr<f32>>
    %zero = arith.constant 0.0 : f32
    %acc = tessel.splat %zero : tensor<256x128xf32>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %acc) -> (tensor<256x128xf32>) : i32 {
      %a = tessel.load %a_ptrs : tensor<256x32x!tessel.ptr<f32>>
      %b = tessel.load %b_ptrs : tensor<32x128x!tessel.ptr<f32>>
      %d = tessel.dot %a, %b, %x : tensor<256x32xf32>, tensor<32x128xf32> -> tensor<256x128xf32>
      scf.yield %d : tensor<256x128xf32>
    }
    tessel.store %c_ptrs, %r : tensor<256x128x!tessel.ptr<f32>>
    return
  }
}

// -----

// A 16x16 tile on 4 warps cannot give every warp a whole 16x8 instruction tile: FMA path.
// CHECK-LABEL: func.func @too_small
// CHECK-NOT: threadsPerWarp = [8, 4]
// CHECK: tessel.dot
// CHECK-NOT: threadsPerWarp = [8, 4]
module attributes {tessel.num_warps = 4 : i32} {
  func.func @too_small(%pa: !tessel.ptr<f16>, %pc: !tessel.ptr<f32>) {
    %a_ptrs = tessel.splat %pa : tensor<16x16x!tessel.ptr<f16>>
    %c_ptrs = tessel.splat %pc : tensor<16x16x!tessel.ptr<f32>>
    %a = tessel.load %a_ptrs : tensor<16x16x!tessel.ptr<f16>>
    %zero = arith.constant 0.0 : f32
    %acc = tessel.splat %zero : tensor<16x16xf32>
    %d = tessel.dot %a, %a, %acc : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
    tessel.store %c_ptrs, %d : tensor<16x16x!tessel.ptr<f32>>
    return
  }
}

// -----

// 128x128 on 8 warps: each doubling goes to the dimension whose share per warp is larger,
// M on a tie (128/1 vs 128/1: M; 64 vs 128: N; 64 vs 64: M), so warps split 4x2.
// CHECK-LABEL: func.func @square_on_eight_warps
// CHECK: tessel.dot {{.*}} -> tensor<128x128xf32, #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 2], order = [1, 0]}>>
module attributes {tessel.num_warps = 8 : i32} {
  func.func @square_on_eight_warps(%pa: !tessel.ptr<bf16>, %pb: !tessel.ptr<bf16>, %pc: !tessel.ptr<f32>) {
    %a_ptrs = tessel.splat %pa : tensor<128x32x!tessel.ptr<bf16>>
    %b_ptrs = tessel.splat %pb : tensor<32x128x!tessel.ptr<bf16>>
    %c_ptrs = tessel.splat %pc : tensor<128x128x!tessel.ptr<f32>>
    %a = tessel.load %a_ptrs : tensor<128x32x!tessel.ptr<bf16>>
    %b = tessel.load %b_ptrs : tensor<32x128x!tessel.ptr<bf16>>
    %zero = arith.constant 0.0 : f32
    %acc = tessel.splat %zero : tensor<128x128xf32>
    %d = tessel.dot %a, %b, %acc : tensor<128x32xbf16>, tensor<32x128xbf16> -> tensor<128x128xf32>
    tessel.store %c_ptrs, %d : tensor<128x128x!tessel.ptr<f32>>
    return
  }
}
