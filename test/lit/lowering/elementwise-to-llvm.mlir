// RUN: tessel-opt %s -split-input-file -convert-tessel-to-llvm -canonicalize -cse | FileCheck %s
// ElementwiseToLLVM.cpp and the thread coordinates of TileToLLVMUtils.cpp, pinned: the
// lane and warp of a thread, the element each register holds, grid queries per axis, and
// the constants of the approximate math.

// 256 elements, 2 per thread, 32 lanes, 4 warps: lane = tid & 31, warp = (tid >> 5) & 3,
// register j holds element 2 (32 warp + lane) + j, plus the range's start 8.
// CHECK-LABEL: func.func @range
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32 : i32
// CHECK-NEXT: %[[W:.*]] = arith.shrui %[[TID]], %c5_i32 : i32
// CHECK-NEXT: %[[WARP:.*]] = arith.andi %[[W]], %c3_i32 : i32
// CHECK-NEXT: %[[WL:.*]] = arith.muli %[[WARP]], %c32_i32 : i32
// CHECK-NEXT: %[[T:.*]] = arith.addi %[[WL]], %[[LANE]] : i32
// CHECK-NEXT: %[[E:.*]] = arith.muli %[[T]], %c2_i32 : i32
// CHECK-NEXT: %[[R0:.*]] = arith.addi %[[E]], %c8_i32 : i32
// CHECK-NEXT: %[[R1:.*]] = arith.addi %[[E]], %c9_i32 : i32
// CHECK-NEXT: llvm.store %[[R0]], %arg0
// CHECK-NEXT: llvm.store %[[R1]], %arg1
#b = #tessel.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @range(%p: tensor<256x!tessel.ptr<i32>, #b>) {
    %r = tessel.make_range {end = 264 : i32, start = 8 : i32} : tensor<256xi32, #b>
    tessel.store %p, %r : tensor<256x!tessel.ptr<i32>, #b>
    return
  }
}

// -----

// 512 elements in the same layout (which covers 256): two repetitions of 2 adjacent
// registers, elements e, e + 1, e + 256, e + 257 with e = 2 (32 warp + lane).
// CHECK-LABEL: func.func @repeated
// CHECK: %[[E:.*]] = arith.muli %{{.*}}, %c2_i32 : i32
// CHECK-NEXT: %[[R1:.*]] = arith.addi %[[E]], %c1_i32 : i32
// CHECK-NEXT: %[[R2:.*]] = arith.addi %[[E]], %c256_i32 : i32
// CHECK-NEXT: %[[R3:.*]] = arith.addi %[[E]], %c257_i32 : i32
// CHECK-NEXT: llvm.store %[[E]], %arg0
// CHECK-NEXT: llvm.store %[[R1]], %arg1
// CHECK-NEXT: llvm.store %[[R2]], %arg2
// CHECK-NEXT: llvm.store %[[R3]], %arg3
#b = #tessel.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @repeated(%p: tensor<512x!tessel.ptr<i32>, #b>) {
    %r = tessel.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #b>
    tessel.store %p, %r : tensor<512x!tessel.ptr<i32>, #b>
    return
  }
}

// -----

// A 16-element tile in a layout covering 256: coordinates wrap modulo 16 (& 15).
// CHECK-LABEL: func.func @wrapped
// CHECK: %[[E:.*]] = arith.muli %{{.*}}, %c2_i32 : i32
// CHECK-NEXT: %[[R0:.*]] = arith.andi %[[E]], %c15_i32 : i32
// CHECK-NEXT: %[[E1:.*]] = arith.addi %[[E]], %c1_i32 : i32
// CHECK-NEXT: %[[R1:.*]] = arith.andi %[[E1]], %c15_i32 : i32
// CHECK-NEXT: llvm.store %[[R0]], %arg0
// CHECK-NEXT: llvm.store %[[R1]], %arg1
#b = #tessel.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tessel.num_warps = 4 : i32} {
  func.func @wrapped(%p: tensor<16x!tessel.ptr<i32>, #b>) {
    %r = tessel.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32, #b>
    tessel.store %p, %r : tensor<16x!tessel.ptr<i32>, #b>
    return
  }
}

// -----

// program_id / num_programs axis a: ctaid / nctaid of x, y, z.
// CHECK-LABEL: func.func @grid
// CHECK-NEXT: %[[X:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT: %[[Y:.*]] = nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK-NEXT: %[[Z:.*]] = nvvm.read.ptx.sreg.ctaid.z : i32
// CHECK-NEXT: %[[NX:.*]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT: %[[NY:.*]] = nvvm.read.ptx.sreg.nctaid.y : i32
// CHECK-NEXT: %[[NZ:.*]] = nvvm.read.ptx.sreg.nctaid.z : i32
// CHECK-NEXT: llvm.store %[[X]], %arg0
// CHECK-NEXT: llvm.store %[[Y]], %arg1
// CHECK-NEXT: llvm.store %[[Z]], %arg2
// CHECK-NEXT: llvm.store %[[NX]], %arg3
// CHECK-NEXT: llvm.store %[[NY]], %arg4
// CHECK-NEXT: llvm.store %[[NZ]], %arg5
module attributes {tessel.num_warps = 4 : i32} {
  func.func @grid(%p0: !tessel.ptr<i32>, %p1: !tessel.ptr<i32>, %p2: !tessel.ptr<i32>,
                  %p3: !tessel.ptr<i32>, %p4: !tessel.ptr<i32>, %p5: !tessel.ptr<i32>) {
    %x = tessel.program_id 0 : i32
    %y = tessel.program_id 1 : i32
    %z = tessel.program_id 2 : i32
    %nx = tessel.num_programs 0 : i32
    %ny = tessel.num_programs 1 : i32
    %nz = tessel.num_programs 2 : i32
    tessel.store %p0, %x : !tessel.ptr<i32>
    tessel.store %p1, %y : !tessel.ptr<i32>
    tessel.store %p2, %z : !tessel.ptr<i32>
    tessel.store %p3, %nx : !tessel.ptr<i32>
    tessel.store %p4, %ny : !tessel.ptr<i32>
    tessel.store %p5, %nz : !tessel.ptr<i32>
    return
  }
}

// -----

// exp(x) = ex2(x log2 e), log(x) = lg2(x) ln 2, exp2 and log2 unscaled; bf16 in f32.
// CHECK-LABEL: func.func @math
// CHECK-DAG: %[[LN2:.*]] = arith.constant 0.693147182 : f32
// CHECK-DAG: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[S:.*]] = arith.mulf %arg0, %[[LOG2E]] : f32
// CHECK-NEXT: %[[EXP:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[S]]) : (f32) -> f32
// CHECK-NEXT: %[[LG:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%arg0) : (f32) -> f32
// CHECK-NEXT: %[[LOG:.*]] = arith.mulf %[[LG]], %[[LN2]] : f32
// CHECK-NEXT: %[[EXP2:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%arg0) : (f32) -> f32
// CHECK-NEXT: %[[LOG2:.*]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%arg0) : (f32) -> f32
// CHECK: %[[H:.*]] = arith.extf %arg1 : bf16 to f32
// CHECK-NEXT: %[[HS:.*]] = arith.mulf %[[H]], %[[LOG2E]] : f32
// CHECK-NEXT: %[[HE:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[HS]]) : (f32) -> f32
// CHECK-NEXT: arith.truncf %[[HE]] : f32 to bf16
#b = #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
module attributes {tessel.num_warps = 1 : i32} {
  func.func @math(%x: tensor<32xf32, #b>, %h: tensor<32xbf16, #b>, %p: tensor<32x!tessel.ptr<f32>, #b>,
                  %q: tensor<32x!tessel.ptr<bf16>, #b>) {
    %e = math.exp %x : tensor<32xf32, #b>
    %l = math.log %x : tensor<32xf32, #b>
    %e2 = math.exp2 %x : tensor<32xf32, #b>
    %l2 = math.log2 %x : tensor<32xf32, #b>
    %s0 = arith.addf %e, %l : tensor<32xf32, #b>
    %s1 = arith.addf %e2, %l2 : tensor<32xf32, #b>
    %s = arith.addf %s0, %s1 : tensor<32xf32, #b>
    tessel.store %p, %s : tensor<32x!tessel.ptr<f32>, #b>
    %he = math.exp %h : tensor<32xbf16, #b>
    tessel.store %q, %he : tensor<32x!tessel.ptr<bf16>, #b>
    return
  }
}
