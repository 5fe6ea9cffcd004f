// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm | FileCheck %s
// AxisInfo.cpp, through the access widths it allows: a run of 4 f32 becomes one 16-byte
// access only where the pointers are contiguous and 16-byte aligned and the mask is
// constant over the run.

// The offset 4x + r is a multiple of 4 elements, 16 bytes of f32: 16-byte loads.
// (Counted in elements, 4 would only be 4 bytes.)
// CHECK-LABEL: func.func @offset_in_bytes
// CHECK-NOT: -> f32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: -> f32
// CHECK: return
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @offset_in_bytes(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32) attributes {tessel.kernel} {
    %c4 = arith.constant 4 : i32
    %x4 = arith.muli %x, %c4 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x4 : tensor<512xi32, #b>
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

// The mask (x + r) < n with x unknown: a run of 4 consecutive indices may straddle n,
// so the mask is not constant over it and the loads stay single (the pointers alone
// would allow 16 bytes).
// CHECK-LABEL: func.func @mask_unaligned
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-4: "mov.b32 $0, $3;\0A\09@$2 ld.global.b32 $0, [ $1 + 0 ];", "=r,l,b,r"
// CHECK-NOT: ld.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @mask_unaligned(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x : tensor<512xi32, #b>
    %i = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tessel.splat %n : tensor<512xi32, #b>
    %m = arith.cmpi slt, %i, %ns : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tessel.load %a, %m : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// A loop from an unknown lower bound in steps of 512: the induction variable is not
// known to be a multiple of anything, so neither is in + iv + r: 4-byte loads.
// CHECK-LABEL: func.func @loop_from_unknown_bound
// CHECK: scf.for
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @loop_from_unknown_bound(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %lb: i32, %ub: i32) attributes {tessel.kernel} {
    %c512 = arith.constant 512 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    scf.for %iv = %lb to %ub step %c512 : i32 {
      %s = tessel.splat %iv : tensor<512xi32, #b>
      %o = arith.addi %s, %r : tensor<512xi32, #b>
      %a = tessel.addptr %pi, %o : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
      %v = tessel.load %a : tensor<512x!tessel.ptr<f32>, #b>
      %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
      tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    }
    return
  }
}

// -----

// The same loop from 0 in steps of 512: iv, and so in + iv + r, stays 16-byte aligned.
// CHECK-LABEL: func.func @loop_from_zero
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @loop_from_zero(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %ub: i32) attributes {tessel.kernel} {
    %c0 = arith.constant 0 : i32
    %c512 = arith.constant 512 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    scf.for %iv = %c0 to %ub step %c512 : i32 {
      %s = tessel.splat %iv : tensor<512xi32, #b>
      %o = arith.addi %s, %r : tensor<512xi32, #b>
      %a = tessel.addptr %pi, %o : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
      %v = tessel.load %a : tensor<512x!tessel.ptr<f32>, #b>
      %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
      tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    }
    return
  }
}
