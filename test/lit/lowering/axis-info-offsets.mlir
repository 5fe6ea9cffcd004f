// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm | FileCheck %s
// AxisInfo.cpp's contiguity and divisibility of offsets, through the access widths they
// allow: in + o + r (r = arange) becomes 16-byte loads of 4 f32 only where o is known to
// be a multiple of 4 elements and the offsets run upward by one. Each case builds an
// offset the analysis must not trust that far; the last one is the control.

// 4x - r runs downward: its elements are not contiguous (a subtraction is not
// commutative), though 4x is a multiple of 4.
// CHECK-LABEL: func.func @minus_range
// CHECK-NOT: -> vector<4xf32>
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @minus_range(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %y: i32, %z: i32 {tessel.divisibility = 16 : i32}, %flag: i1) attributes {tessel.kernel} {
    %c4 = arith.constant 4 : i32
    %x4 = arith.muli %x, %c4 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x4 : tensor<512xi32, #b>
    %o = arith.subi %s, %r : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %o : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tessel.load %a : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// x // 4 + r: a quotient is not a multiple of its divisor.
// CHECK-LABEL: func.func @quotient
// CHECK-NOT: -> vector<4xf32>
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @quotient(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %y: i32, %z: i32 {tessel.divisibility = 16 : i32}, %flag: i1) attributes {tessel.kernel} {
    %c4 = arith.constant 4 : i32
    %x4 = arith.muli %x, %c4 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %q = arith.divsi %x, %c4 : i32
    %s = tessel.splat %q : tensor<512xi32, #b>
    %o = arith.addi %s, %r : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %o : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tessel.load %a : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// (4x if flag else y) + r: only one side is a multiple of 4, so the select is not.
// CHECK-LABEL: func.func @select_true_aligned
// CHECK-NOT: -> vector<4xf32>
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @select_true_aligned(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %y: i32, %z: i32 {tessel.divisibility = 16 : i32}, %flag: i1) attributes {tessel.kernel} {
    %c4 = arith.constant 4 : i32
    %x4 = arith.muli %x, %c4 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %sel = arith.select %flag, %x4, %y : i32
    %s = tessel.splat %sel : tensor<512xi32, #b>
    %o = arith.addi %s, %r : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %o : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tessel.load %a : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// (y if flag else 4x) + r: the same with the sides exchanged.
// CHECK-LABEL: func.func @select_false_aligned
// CHECK-NOT: -> vector<4xf32>
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @select_false_aligned(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %y: i32, %z: i32 {tessel.divisibility = 16 : i32}, %flag: i1) attributes {tessel.kernel} {
    %c4 = arith.constant 4 : i32
    %x4 = arith.muli %x, %c4 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %sel = arith.select %flag, %y, %x4 : i32
    %s = tessel.splat %sel : tensor<512xi32, #b>
    %o = arith.addi %s, %r : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %o : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tessel.load %a : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// The control: (4x if flag else z) + r, z a multiple of 16: 16-byte loads.
// CHECK-LABEL: func.func @control_aligned
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: -> f32
// CHECK: return
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @control_aligned(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %y: i32, %z: i32 {tessel.divisibility = 16 : i32}, %flag: i1) attributes {tessel.kernel} {
    %c4 = arith.constant 4 : i32
    %x4 = arith.muli %x, %c4 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %sel = arith.select %flag, %x4, %z : i32
    %s = tessel.splat %sel : tensor<512xi32, #b>
    %o = arith.addi %s, %r : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %o : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tessel.load %a : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    return
  }
}
