// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm | FileCheck %s
// Tiles become the registers each thread holds; memory access is as wide as the facts
// allow; reductions use shuffles and, across warps, shared memory.

// Aligned, contiguous, mask constant over 4 elements: one predicated 16-byte load and
// one predicated 16-byte store per run of 4 registers.
// CHECK-LABEL: llvm.mlir.global external @tessel_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: func.func @copy_masked
// CHECK-SAME: (%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32)
// CHECK-COUNT-2: ld.global.v4.b32
// CHECK-COUNT-2: st.global.v4.b32
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32, tessel.shared = 16 : i32} {
  func.func @copy_masked(%out: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}, %n: i32 {tessel.divisibility = 16 : i32}) attributes {tessel.kernel} {
    %r = tessel.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #b>
    %ns = tessel.splat %n : tensor<1024xi32, #b>
    %m = arith.cmpi slt, %r, %ns : tensor<1024xi32, #b>
    %pi = tessel.splat %in : tensor<1024x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %r : tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xi32, #b>
    %x = tessel.load %a, %m : tensor<1024x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<1024x!tessel.ptr<f32>, #b>
    %o = tessel.addptr %po, %r : tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xi32, #b>
    tessel.store %o, %x, %m : tensor<1024x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// Nothing known about alignment or n: one element per access.
// CHECK-LABEL: func.func @copy_unaligned
// CHECK-NOT: ld.global.v4
// CHECK-COUNT-8: ld.global.b32
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @copy_unaligned(%out: !tessel.ptr<f32>, %in: !tessel.ptr<f32>, %n: i32) attributes {tessel.kernel} {
    %r = tessel.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32, #b>
    %ns = tessel.splat %n : tensor<1024xi32, #b>
    %m = arith.cmpi slt, %r, %ns : tensor<1024xi32, #b>
    %pi = tessel.splat %in : tensor<1024x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %r : tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xi32, #b>
    %x = tessel.load %a, %m : tensor<1024x!tessel.ptr<f32>, #b>
    %po = tessel.splat %out : tensor<1024x!tessel.ptr<f32>, #b>
    %o = tessel.addptr %po, %r : tensor<1024x!tessel.ptr<f32>, #b>, tensor<1024xi32, #b>
    tessel.store %o, %x, %m : tensor<1024x!tessel.ptr<f32>, #b>
    return
  }
}

// -----

// Unmasked and aligned: a plain vector load.
// CHECK-LABEL: func.func @load_unmasked
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {tessel.num_warps = 1 : i32} {
  func.func @load_unmasked(%in: !tessel.ptr<f32> {tessel.divisibility = 16 : i32}) -> f32 attributes {tessel.kernel} {
    %r = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32, #b>
    %pi = tessel.splat %in : tensor<128x!tessel.ptr<f32>, #b>
    %a = tessel.addptr %pi, %r : tensor<128x!tessel.ptr<f32>, #b>, tensor<128xi32, #b>
    %x = tessel.load %a : tensor<128x!tessel.ptr<f32>, #b>
    %s = tessel.reduce add %x {axis = 0 : i32} : tensor<128xf32, #b> -> f32
    return %s : f32
  }
}

// -----

// A row reduction over 4 warps: in-thread adds, 5 butterfly shuffles, a barrier-fenced
// exchange through shared memory. exp goes through ex2.approx.
// CHECK-LABEL: func.func @sum_exp
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-COUNT-5: nvvm.shfl.sync bfly
// CHECK: llvm.mlir.addressof @tessel_smem : !llvm.ptr<3>
// CHECK: llvm.store
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
#b = #tessel.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32, tessel.shared = 16 : i32} {
  func.func @sum_exp(%x: tensor<512xf32, #b>) -> f32 {
    %e = math.exp %x : tensor<512xf32, #b>
    %s = tessel.reduce add %e {axis = 0 : i32} : tensor<512xf32, #b> -> f32
    return %s : f32
  }
}

// -----

// tessel.dot_wait passes the accumulator's registers through wgmma.wait_group on sm_90a,
// so nothing reads them before the asynchronous dot that writes them has retired.
// CHECK-LABEL: func.func @dot_wait_sm90a
// (A 64x64 f32 tile on 128 threads: 32 registers each, outputs tied to inputs.)
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "wgmma.wait_group.sync.aligned 1;", "=f,{{(=f,)+}}0,1,2,{{.*}},30,31"
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32, tessel.shared = 1024 : i32} {
  func.func @dot_wait_sm90a(%x: f32) -> f32 attributes {tessel.kernel} {
    %t = tessel.splat %x : tensor<64x64xf32, #acc>
    %w = tessel.dot_wait %t {pending = 1 : i32} : tensor<64x64xf32, #acc>
    %s = tessel.reduce add %w {axis = 0 : i32} : tensor<64x64xf32, #acc> -> tensor<64xf32, #tessel.slice<{dim = 0, parent = #acc}>>
    %r = tessel.reduce add %s {axis = 0 : i32} : tensor<64xf32, #tessel.slice<{dim = 0, parent = #acc}>> -> f32
    return %r : f32
  }
}

// -----

// Elsewhere there are no asynchronous dots: the registers pass through unchanged.
// CHECK-LABEL: func.func @dot_wait_sm90
// CHECK-NOT: wgmma
// CHECK: return
#acc = #tessel.blocked<{sizePerThread = [1, 2], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32, tessel.shared = 1024 : i32} {
  func.func @dot_wait_sm90(%x: f32) -> f32 attributes {tessel.kernel} {
    %t = tessel.splat %x : tensor<64x64xf32, #acc>
    %w = tessel.dot_wait %t {pending = 1 : i32} : tensor<64x64xf32, #acc>
    %s = tessel.reduce add %w {axis = 0 : i32} : tensor<64x64xf32, #acc> -> tensor<64xf32, #tessel.slice<{dim = 0, parent = #acc}>>
    %r = tessel.reduce add %s {axis = 0 : i32} : tensor<64xf32, #tessel.slice<{dim = 0, parent = #acc}>> -> f32
    return %r : f32
  }
}
