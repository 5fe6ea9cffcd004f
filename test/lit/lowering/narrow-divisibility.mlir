// RUN: tessel-opt %s -split-input-file -tessel-narrow-divisibility | FileCheck %s
// An integer parameter keeps its divisibility assumption only where an access width
// depends on it; pointers keep theirs. The kept argument numbers go to the module's
// tessel.divisible_args.

// Attention's addressing: the head count only splits program_id into batch and head,
// whose offsets are multiples of the strides anyway (dropped); the row stride decides
// the alignment of every row (kept); the sequence length bounds the rows, a dimension
// the pointer is not contiguous along (dropped); the head dim bounds the contiguous
// columns, where the mask decides the vector width (kept).
// CHECK: module attributes {tessel.divisible_args = {rows = array<i64: 0, 2, 4>}}
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%arg0: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}, %arg1: i32, %arg2: i32 {tessel.divisibility = 16 : i32}, %arg3: i32, %arg4: i32 {tessel.divisibility = 16 : i32})
func.func @rows(%p: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}, %heads: i32 {tessel.divisibility = 16 : i32}, %stride: i32 {tessel.divisibility = 16 : i32}, %seq: i32 {tessel.divisibility = 16 : i32}, %dim: i32 {tessel.divisibility = 16 : i32}) -> tensor<64x64xbf16> attributes {tessel.kernel} {
  %bh = tessel.program_id 1 : i32
  %b = arith.divsi %bh, %heads : i32
  %bheads = arith.muli %b, %heads : i32
  %h = arith.subi %bh, %bheads : i32
  %off = arith.muli %h, %stride : i32
  %base = tessel.addptr %p, %off : !tessel.ptr<bf16>, i32
  %r = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %re = tessel.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %ss = tessel.splat %stride : tensor<64x1xi32>
  %ro = arith.muli %re, %ss : tensor<64x1xi32>
  %ce = tessel.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %rob = tessel.broadcast %ro : tensor<64x1xi32> -> tensor<64x64xi32>
  %ceb = tessel.broadcast %ce : tensor<1x64xi32> -> tensor<64x64xi32>
  %o = arith.addi %rob, %ceb : tensor<64x64xi32>
  %ps = tessel.splat %base : tensor<64x64x!tessel.ptr<bf16>>
  %ptr = tessel.addptr %ps, %o : tensor<64x64x!tessel.ptr<bf16>>, tensor<64x64xi32>
  %sq = tessel.splat %seq : tensor<64x1xi32>
  %rm = arith.cmpi slt, %re, %sq : tensor<64x1xi32>
  %rmb = tessel.broadcast %rm : tensor<64x1xi1> -> tensor<64x64xi1>
  %dq = tessel.splat %dim : tensor<1x64xi32>
  %cm = arith.cmpi slt, %ce, %dq : tensor<1x64xi32>
  %cmb = tessel.broadcast %cm : tensor<1x64xi1> -> tensor<64x64xi1>
  %m = arith.andi %rmb, %cmb : tensor<64x64xi1>
  %v = tessel.load %ptr, %m : tensor<64x64x!tessel.ptr<bf16>>
  return %v : tensor<64x64xbf16>
}

// -----

// Nothing assumed: no record.
// CHECK-NOT: tessel.divisible_args
// CHECK-LABEL: func.func @none
func.func @none(%p: !tessel.ptr<f32>, %n: i32) attributes {tessel.kernel} {
  return
}
