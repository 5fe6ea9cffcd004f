// RUN: tessel-opt %s -split-input-file -canonicalize | FileCheck %s
// convert_layout of values computed from scalars is replaced by computing them again in
// the target layout; a conversion of a loaded tile stays.

#a = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>

// CHECK-LABEL: func.func @range_plus_splat
// CHECK-NOT: tessel.convert_layout
// CHECK: tessel.make_range {{.*}} : tensor<128xi32, #[[B:.*]]>
// CHECK: tessel.splat %{{.*}} : tensor<128xi32, #[[B]]>
// CHECK: arith.addi %{{.*}}, %{{.*}} : tensor<128xi32, #[[B]]>
func.func @range_plus_splat(%s: i32) -> tensor<128xi32, #b> {
  %r = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #a>
  %t = tessel.splat %s : tensor<128xi32, #a>
  %sum = arith.addi %r, %t : tensor<128xi32, #a>
  %c = tessel.convert_layout %sum : tensor<128xi32, #a> -> tensor<128xi32, #b>
  return %c : tensor<128xi32, #b>
}

// -----

#a = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>

// CHECK-LABEL: func.func @loaded_tile_keeps_its_conversion
// CHECK: tessel.load
// CHECK: tessel.convert_layout
func.func @loaded_tile_keeps_its_conversion(%p: tensor<128x!tessel.ptr<f32>, #a>) -> tensor<128xf32, #b> {
  %x = tessel.load %p : tensor<128x!tessel.ptr<f32>, #a>
  %c = tessel.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf32, #b>
  return %c : tensor<128xf32, #b>
}

// -----

#a = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>

// Converting to the same layout folds away.
// CHECK-LABEL: func.func @identity
// CHECK-NOT: tessel.convert_layout
func.func @identity(%x: tensor<128xf32, #a>) -> tensor<128xf32, #a> {
  %c = tessel.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf32, #a>
  return %c : tensor<128xf32, #a>
}
