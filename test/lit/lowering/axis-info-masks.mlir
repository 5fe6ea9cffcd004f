// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm | FileCheck %s
// AxisInfo.cpp's constancy of masks, through the access widths it allows: a run of 4 f32
// becomes one 16-byte access only where the mask is constant over the run. Each case
// builds a mask from parts that are constant over runs and one that is not (i = x + r
// with x unknown, so i < n can change anywhere); the analysis must refuse the mask, and
// the loads stay single. The last case is the control: every part constant over runs
// of 4, so the wide load is allowed and the analysis is seen to run.

// select(c, true, false) is c: its constancy is at most its condition's, however constant
// the two values are.
// CHECK-LABEL: func.func @select_condition
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-4: "mov.b32 $0, $3;\0A\09@$2 ld.global.b32 $0, [ $1 + 0 ];", "=r,l,b,r"
// CHECK-NOT: ld.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @select_condition(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %true = arith.constant true
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x : tensor<512xi32, #b>
    %i = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tessel.splat %n : tensor<512xi32, #b>
    %c = arith.cmpi slt, %i, %ns : tensor<512xi32, #b>
    %k = tessel.splat %true : tensor<512xi1, #b>
    %f = arith.xori %k, %k : tensor<512xi1, #b>
    %m = arith.select %c, %k, %f : tensor<512xi1, #b>, tensor<512xi1, #b>
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

// select(k, c, k): the false value is the unaligned comparison.
// CHECK-LABEL: func.func @select_value
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-4: "mov.b32 $0, $3;\0A\09@$2 ld.global.b32 $0, [ $1 + 0 ];", "=r,l,b,r"
// CHECK-NOT: ld.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @select_value(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %true = arith.constant true
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x : tensor<512xi32, #b>
    %i = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tessel.splat %n : tensor<512xi32, #b>
    %c = arith.cmpi slt, %i, %ns : tensor<512xi32, #b>
    %k = tessel.splat %true : tensor<512xi1, #b>
    %m = arith.select %k, %k, %c : tensor<512xi1, #b>, tensor<512xi1, #b>
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

// k & c: an and is constant only where both sides are (the constant side on the left).
// CHECK-LABEL: func.func @and_constant_left
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-4: "mov.b32 $0, $3;\0A\09@$2 ld.global.b32 $0, [ $1 + 0 ];", "=r,l,b,r"
// CHECK-NOT: ld.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @and_constant_left(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %true = arith.constant true
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x : tensor<512xi32, #b>
    %i = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tessel.splat %n : tensor<512xi32, #b>
    %c = arith.cmpi slt, %i, %ns : tensor<512xi32, #b>
    %k = tessel.splat %true : tensor<512xi1, #b>
    %m = arith.andi %k, %c : tensor<512xi1, #b>
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

// c | k: the constant side on the right.
// CHECK-LABEL: func.func @or_constant_right
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-4: "mov.b32 $0, $3;\0A\09@$2 ld.global.b32 $0, [ $1 + 0 ];", "=r,l,b,r"
// CHECK-NOT: ld.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @or_constant_right(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %true = arith.constant true
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x : tensor<512xi32, #b>
    %i = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tessel.splat %n : tensor<512xi32, #b>
    %c = arith.cmpi slt, %i, %ns : tensor<512xi32, #b>
    %k = tessel.splat %true : tensor<512xi1, #b>
    %m = arith.ori %c, %k : tensor<512xi1, #b>
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

// n > i: the comparison with the constant on the left, as unaligned as i < n.
// CHECK-LABEL: func.func @cmp_constant_left
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-4: "mov.b32 $0, $3;\0A\09@$2 ld.global.b32 $0, [ $1 + 0 ];", "=r,l,b,r"
// CHECK-NOT: ld.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @cmp_constant_left(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %true = arith.constant true
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x : tensor<512xi32, #b>
    %i = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tessel.splat %n : tensor<512xi32, #b>
    %c = arith.cmpi slt, %i, %ns : tensor<512xi32, #b>
    %k = tessel.splat %true : tensor<512xi1, #b>
    %m = arith.cmpi sgt, %ns, %i : tensor<512xi32, #b>
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

// The control: r < n (n a multiple of 16) is constant over runs of 4, and so are
// select(r < n, k, r < n) and (r < n) & k: 16-byte loads.
// CHECK-LABEL: func.func @control_aligned
// CHECK-NOT: ld.global.b32
// CHECK: ld.global.v4.b32
// CHECK-NOT: ld.global.b32
// CHECK: return
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @control_aligned(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %x: i32, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %true = arith.constant true
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %s = tessel.splat %x : tensor<512xi32, #b>
    %i = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tessel.splat %n : tensor<512xi32, #b>
    %c = arith.cmpi slt, %i, %ns : tensor<512xi32, #b>
    %k = tessel.splat %true : tensor<512xi1, #b>
    %a16 = arith.cmpi slt, %r, %ns : tensor<512xi32, #b>
    %sel = arith.select %a16, %k, %a16 : tensor<512xi1, #b>, tensor<512xi1, #b>
    %m = arith.andi %sel, %k : tensor<512xi1, #b>
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

// Rank 2, the comparison's right side constant only in runs of 2: r < b with
// b = where(r < 2y, 64, 32) along the fast dimension. b's values are multiples of 32 but
// b changes at the even index 2y, inside a run of 4 (for y = 17: r = 32..35 against
// 64, 64, 32, 32), so r < b is not constant over runs of 4; it is over the aligned pairs
// b is constant on (b is even, so 2k < b implies 2k + 1 < b): two 8-byte loads per thread.
// (The same mask in rank 1 was given runs of 32, and loaded data the mask excludes: the
// next case.)
// CHECK-LABEL: func.func @cmp_partly_constant_2d
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-2: "mov.b32 $0, $4;\0A\09mov.b32 $1, $5;\0A\09@$3 ld.global.v2.b32 {$0, $1}, [ $2 + 0 ];"
// CHECK-NOT: ld.global
// CHECK: return
#b2 = #tessel.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#row = #tessel.slice<{dim = 0, parent = #b2}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @cmp_partly_constant_2d(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %y: i32) attributes {tessel.kernel} {
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %c32 = arith.constant 32 : i32
    %y2 = arith.muli %y, %c2 : i32
    %r1 = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #row>
    %r = tessel.expand_dims %r1 {axis = 0 : i32} : tensor<512xi32, #row> -> tensor<1x512xi32, #b2>
    %ys = tessel.splat %y2 : tensor<1x512xi32, #b2>
    %m = arith.cmpi slt, %r, %ys : tensor<1x512xi32, #b2>
    %s64 = tessel.splat %c64 : tensor<1x512xi32, #b2>
    %s32 = tessel.splat %c32 : tensor<1x512xi32, #b2>
    %bound = arith.select %m, %s64, %s32 : tensor<1x512xi1, #b2>, tensor<1x512xi32, #b2>
    %mask = arith.cmpi slt, %r, %bound : tensor<1x512xi32, #b2>
    %pi = tessel.splat %in : tensor<1x512x!tessel.ptr<f32>, #b2>
    %a = tessel.addptr %pi, %r : tensor<1x512x!tessel.ptr<f32>, #b2>, tensor<1x512xi32, #b2>
    %v = tessel.load %a, %mask : tensor<1x512x!tessel.ptr<f32>, #b2>
    %po = tessel.splat %out : tensor<1x512x!tessel.ptr<f32>, #b2>
    %p = tessel.addptr %po, %r : tensor<1x512x!tessel.ptr<f32>, #b2>, tensor<1x512xi32, #b2>
    tessel.store %p, %v : tensor<1x512x!tessel.ptr<f32>, #b2>
    return
  }
}

// -----

// Rank 1, the same comparison: r < b with b = where(r < 2y, 64, 32). The analysis once
// applied "a run starting at a multiple of D compared with a multiple of D" to every rank-1
// comparison without asking whether b stays the same along the run, gave the mask runs of
// 32, and one predicated 16-byte load read elements 34 and 35 for y = 17, which the mask
// excludes (test/mutation/README.md). As in rank 2: two 8-byte loads per thread.
// CHECK-LABEL: func.func @cmp_partial
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-2: "mov.b32 $0, $4;\0A\09mov.b32 $1, $5;\0A\09@$3 ld.global.v2.b32 {$0, $1}, [ $2 + 0 ];"
// CHECK-NOT: ld.global
// CHECK: return
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @cmp_partial(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %y: i32) attributes {tessel.kernel} {
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %c32 = arith.constant 32 : i32
    %y2 = arith.muli %y, %c2 : i32
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    %ys = tessel.splat %y2 : tensor<512xi32, #b>
    %m = arith.cmpi slt, %r, %ys : tensor<512xi32, #b>
    %s64 = tessel.splat %c64 : tensor<512xi32, #b>
    %s32 = tessel.splat %c32 : tensor<512xi32, #b>
    %bound = arith.select %m, %s64, %s32 : tensor<512xi1, #b>, tensor<512xi32, #b>
    %mask = arith.cmpi slt, %r, %bound : tensor<512xi32, #b>
    %pi = tessel.splat %in : tensor<512x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tessel.load %a, %mask : tensor<512x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<512x!tessel.ptr<f32>, #b>
    %p = tessel.addptr %po, %r : tensor<512x!tessel.ptr<f32>, #b>, tensor<512xi32, #b>
    tessel.store %p, %v : tensor<512x!tessel.ptr<f32>, #b>
    return
  }
}
