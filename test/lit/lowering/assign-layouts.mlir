// RUN: tessel-opt %s -split-input-file -tessel-assign-layouts | FileCheck %s
// Layout assignment: 16-byte runs per thread along the fastest dimension (as long as the
// accesses can be that wide), slices for reductions and expand_dims, one layout for values
// tied together.

// 1-D f32 tile on 4 warps: 4 contiguous f32 (16 bytes) per thread.
// CHECK: #[[B:.*]] = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @row_f32
module attributes {tessel.num_warps = 4 : i32} {
  func.func @row_f32(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
    %ps = tessel.splat %p : tensor<1024x!tessel.ptr<f32>>
    %a = tessel.addptr %ps, %r : tensor<1024x!tessel.ptr<f32>>, tensor<1024xi32>
    // CHECK: tessel.load %{{.*}} : tensor<1024x!tessel.ptr<f32>, #[[B]]>
    %x = tessel.load %a : tensor<1024x!tessel.ptr<f32>>
    // CHECK: tessel.reduce max %{{.*}} {axis = 0 : i32} : tensor<1024xf32, #[[B]]> -> f32
    %m = tessel.reduce max %x {axis = 0 : i32} : tensor<1024xf32> -> f32
    return
  }
}

// -----

// bf16 in memory: 8 elements per thread make the 16 bytes; the f32 math shares it.
// CHECK: #tessel.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
// CHECK-LABEL: func.func @row_bf16
module attributes {tessel.num_warps = 8 : i32} {
  func.func @row_bf16(%p: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {end = 4096 : i32, start = 0 : i32} : tensor<4096xi32>
    %ps = tessel.splat %p : tensor<4096x!tessel.ptr<bf16>>
    %a = tessel.addptr %ps, %r : tensor<4096x!tessel.ptr<bf16>>, tensor<4096xi32>
    %x = tessel.load %a : tensor<4096x!tessel.ptr<bf16>>
    %y = arith.extf %x : tensor<4096xbf16> to tensor<4096xf32>
    %s = tessel.reduce add %y {axis = 0 : i32} : tensor<4096xf32> -> f32
    return
  }
}

// -----

// 2-D: rows[:, None] and cols[None, :] get the slices of the 2-D layout; the row
// reduction's result is the slice along dimension 1.
// CHECK: #[[B2:.*]] = #tessel.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[ROWS:.*]] = #tessel.slice<{dim = 1, parent = #[[B2]]}>
// CHECK-DAG: #[[COLS:.*]] = #tessel.slice<{dim = 0, parent = #[[B2]]}>
// CHECK-LABEL: func.func @tile_2d
module attributes {tessel.num_warps = 4 : i32} {
  func.func @tile_2d(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}) {
    // CHECK: tessel.make_range {{.*}} : tensor<64xi32, #[[ROWS]]>
    %rows = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    // CHECK: tessel.make_range {{.*}} : tensor<64xi32, #[[COLS]]>
    %cols = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %r2 = tessel.expand_dims %rows {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %c2 = tessel.expand_dims %cols {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %stride = arith.constant dense<64> : tensor<64x1xi32>
    %r2s = arith.muli %r2, %stride : tensor<64x1xi32>
    %rb = tessel.broadcast %r2s : tensor<64x1xi32> -> tensor<64x64xi32>
    %cb = tessel.broadcast %c2 : tensor<1x64xi32> -> tensor<64x64xi32>
    %off = arith.addi %rb, %cb : tensor<64x64xi32>
    %ps = tessel.splat %p : tensor<64x64x!tessel.ptr<f32>>
    %a = tessel.addptr %ps, %off : tensor<64x64x!tessel.ptr<f32>>, tensor<64x64xi32>
    // CHECK: tessel.load %{{.*}} : tensor<64x64x!tessel.ptr<f32>, #[[B2]]>
    %x = tessel.load %a : tensor<64x64x!tessel.ptr<f32>>
    // CHECK: tessel.reduce add %{{.*}} {axis = 1 : i32} : tensor<64x64xf32, #[[B2]]> -> tensor<64xf32, #[[ROWS]]>
    %s = tessel.reduce add %x {axis = 1 : i32} : tensor<64x64xf32> -> tensor<64xf32>
    return
  }
}

// -----

// Loop-carried tiles keep one layout through init, iteration argument and yield.
// CHECK: #[[L:.*]] = #tessel.blocked
// CHECK-LABEL: func.func @loop
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<256xf32, #[[L]]>)
// CHECK: scf.yield %{{.*}} : tensor<256xf32, #[[L]]>
module attributes {tessel.num_warps = 2 : i32} {
  func.func @loop(%p: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %z = arith.constant 0.0 : f32
    %init = tessel.splat %z : tensor<256xf32>
    %r = tessel.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
    %ps = tessel.splat %p : tensor<256x!tessel.ptr<f32>>
    %a = tessel.addptr %ps, %r : tensor<256x!tessel.ptr<f32>>, tensor<256xi32>
    %acc = scf.for %i = %c0 to %n step %c1 iter_args(%v = %init) -> (tensor<256xf32>) : i32 {
      %x = tessel.load %a : tensor<256x!tessel.ptr<f32>>
      %s = arith.addf %v, %x : tensor<256xf32>
      scf.yield %s : tensor<256xf32>
    }
    tessel.store %a, %acc : tensor<256x!tessel.ptr<f32>>
    return
  }
}

// -----

// A tile smaller than a warp (2x4): lanes 4 along the columns, 2 along the rows, and the
// 4 lanes left over on the slowest dimension (rows: 8); the warps left over on the
// fastest (columns: 4). Every thread holds one element, most of them copies.
// CHECK: #[[SMALL:.*]] = #tessel.blocked<{sizePerThread = [1, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [1, 0]}>
// CHECK-LABEL: func.func @smaller_than_a_warp
// CHECK: tessel.load %{{.*}} : tensor<2x4x!tessel.ptr<f32>, #[[SMALL]]>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @smaller_than_a_warp(%p: !tessel.ptr<f32>) {
    %ptrs = tessel.splat %p : tensor<2x4x!tessel.ptr<f32>>
    %x = tessel.load %ptrs : tensor<2x4x!tessel.ptr<f32>>
    tessel.store %ptrs, %x : tensor<2x4x!tessel.ptr<f32>>
    return
  }
}

// -----

// A row of odd length (a mask against an n not known to divide by 16, as in the generic
// variant of a kernel over a 50,257-wide vocabulary) cannot be read 16 bytes at a time:
// one bf16 per thread, so that a warp's scalar accesses are adjacent in memory. The
// pointer being 16-byte aligned does not change that. With n divisible by 16 the runs are 8.
// CHECK: #[[ODD:.*]] = #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @odd_row_bf16
// CHECK: tessel.load %{{.*}}, %{{.*}} : tensor<2048x!tessel.ptr<bf16>, #[[ODD]]>
// CHECK: tessel.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<2048x!tessel.ptr<bf16>, #[[ODD]]>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @odd_row_bf16(%p: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}, %n: i32) {
    %r = tessel.make_range {end = 2048 : i32, start = 0 : i32} : tensor<2048xi32>
    %ns = tessel.splat %n : tensor<2048xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<2048xi32>
    %ps = tessel.splat %p : tensor<2048x!tessel.ptr<bf16>>
    %a = tessel.addptr %ps, %r : tensor<2048x!tessel.ptr<bf16>>, tensor<2048xi32>
    %x = tessel.load %a, %m : tensor<2048x!tessel.ptr<bf16>>
    tessel.store %a, %x, %m : tensor<2048x!tessel.ptr<bf16>>
    return
  }
}

// -----

// CHECK: #[[EVEN:.*]] = #tessel.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @even_row_bf16
// CHECK: tessel.load %{{.*}}, %{{.*}} : tensor<2048x!tessel.ptr<bf16>, #[[EVEN]]>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @even_row_bf16(%p: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                           %n: i32 {tessel.divisibility = 16 : i32}) {
    %r = tessel.make_range {end = 2048 : i32, start = 0 : i32} : tensor<2048xi32>
    %ns = tessel.splat %n : tensor<2048xi32>
    %m = arith.cmpi slt, %r, %ns : tensor<2048xi32>
    %ps = tessel.splat %p : tensor<2048x!tessel.ptr<bf16>>
    %a = tessel.addptr %ps, %r : tensor<2048x!tessel.ptr<bf16>>, tensor<2048xi32>
    %x = tessel.load %a, %m : tensor<2048x!tessel.ptr<bf16>>
    tessel.store %a, %x, %m : tensor<2048x!tessel.ptr<bf16>>
    return
  }
}
