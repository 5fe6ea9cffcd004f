// RUN: tessel-opt %s -split-input-file -tessel-software-pipeline=num-stages=3 | FileCheck %s
// BlockAccess.cpp through the pipeliner: a load is copied by the bulk tensor engine only
// where it reads one block of a row-major matrix: ptr = base + r[:, None] * stride +
// c[None, :] with r = row0 + arange(0, BLOCK_K), c = col0 + arange(0, BLOCK_N), masked by
// r < rows and c < cols. The recipe names the kernel parameters of each.

// The block (rows K, param 4; columns and row stride N, param 3; pointer param 1).
// CHECK-LABEL: module attributes
// CHECK-SAME: tessel.tensor_maps = [{box = [64, 64], cols = {param = 3 : i64}, dtype = "bf16", param = 6 : i64, pointer = 1 : i64, row_stride = {param = 3 : i64}, rows = {param = 4 : i64}}]
// CHECK-LABEL: func.func @block
// CHECK: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @block(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi slt, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// Rows row0 + arange(8, 72): not the block starting at row0 (the map's box would start 8
// rows early): cp.async.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @rows_from_eight
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @rows_from_eight(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 72 : i32, start = 8 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi slt, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// One column (arange(0, 1)) broadcast over the tile's 128: not a block of 128 columns.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @one_column
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @one_column(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 1 : i32, start = 0 : i32} : tensor<1xi32>
  %n0s = tessel.splat %n0 : tensor<1xi32>
  %rn = arith.addi %n0s, %cols : tensor<1xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<1xi32> -> tensor<1x1xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x1xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x1xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x1xi32>
  %nokb = tessel.broadcast %nok : tensor<1x1xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi slt, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// Columns arange(8, 136) (no start added): not a block starting at column 0 either.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @cols_from_eight
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @cols_from_eight(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %rn = tessel.make_range {end = 136 : i32, start = 8 : i32} : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi slt, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// Rows masked by r <= K (row K read too): not the block bounded by K (the map would
// zero-fill row K): cp.async.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @rows_inclusive
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @rows_inclusive(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi sle, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// The row mask compares arange(0, 64), the block's own row numbers, with K, while the
// address reads rows iv + arange(0, 64): K bounds another index than the rows read
// (the map would zero-fill from row K of the matrix, the kernel from row iv + K).
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @rows_mask_other_index
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @rows_mask_other_index(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kl = tessel.expand_dims %krange {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %kok = arith.cmpi slt, %kl, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// The column mask compares arange(0, 128) with N, the address reads columns
// n0 + arange(0, 128): N bounds another index than the columns read.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @cols_mask_other_index
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @cols_mask_other_index(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %cl = tessel.expand_dims %cols {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %nok = arith.cmpi slt, %cl, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi slt, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// Rows masked by r <u K: unsigned, all rows when K < 0, where r < K takes none: not the
// bound the map applies.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @rows_unsigned
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @rows_unsigned(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi ult, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// Columns masked by c > N, the other side of N: not a bound at all.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @cols_above
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @cols_above(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi sgt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %kok = arith.cmpi slt, %ks2, %Kk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// The block read transposed: element (i, j) at b + r[j] * N + c[i], the rows r along the
// tile's columns (expand_dims axis 0) and the columns c along its rows (axis 1), masked
// to match. The map would copy the block untransposed: not a block access.
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @transposed(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %zb = arith.constant dense<0.0> : tensor<64x64xbf16>
  %cols = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %n0s = tessel.splat %n0 : tensor<64xi32>
  %rn = arith.addi %n0s, %cols : tensor<64xi32>
  %rn2 = tessel.expand_dims %rn {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rnb = tessel.broadcast %rn2 : tensor<64x1xi32> -> tensor<64x64xi32>
  %Ns = tessel.splat %N : tensor<64x1xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<64x1xi32>
  %nokb = tessel.broadcast %nok : tensor<64x1xi1> -> tensor<64x64xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<1x64x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<1x64xi32>
  %Kk = tessel.splat %K : tensor<1x64xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<1x64xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<1x64x!tessel.ptr<bf16>>, tensor<1x64xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<1x64x!tessel.ptr<bf16>> -> tensor<64x64x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x64x!tessel.ptr<bf16>>, tensor<64x64xi32>
    %kok = arith.cmpi slt, %ks2, %Kk : tensor<1x64xi32>
    %kokb = tessel.broadcast %kok : tensor<1x64xi1> -> tensor<64x64xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x64xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x64x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %d : tensor<128x64xf32>
  }
  return %r : tensor<128x64xf32>
}
}

// -----

// Rows bounded by the loop's induction variable, not a kernel parameter: a tensor map's
// dimensions are fixed at launch, so no map can apply a bound that moves (the block
// argument is the loop's, not the function's).
// CHECK-LABEL: module attributes
// CHECK-NOT: tessel.tensor_maps
// CHECK-LABEL: func.func @rows_bound_in_loop
// CHECK-NOT: tessel.tma_copy
// CHECK: tessel.async_copy
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @rows_bound_in_loop(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %n0s = tessel.splat %n0 : tensor<128xi32>
  %rn = arith.addi %n0s, %cols : tensor<128xi32>
  %rn2 = tessel.expand_dims %rn {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ks2 = tessel.expand_dims %ks {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rowoff = arith.muli %ks2, %Nk : tensor<64x1xi32>
    %rowptr = tessel.addptr %bs, %rowoff : tensor<64x1x!tessel.ptr<bf16>>, tensor<64x1xi32>
    %rowptrb = tessel.broadcast %rowptr : tensor<64x1x!tessel.ptr<bf16>> -> tensor<64x128x!tessel.ptr<bf16>>
    %pb = tessel.addptr %rowptrb, %rnb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %ivk = tessel.splat %iv : tensor<64x1xi32>
    %kok = arith.cmpi slt, %ks2, %ivk : tensor<64x1xi32>
    %kokb = tessel.broadcast %kok : tensor<64x1xi1> -> tensor<64x128xi1>
    %mb = arith.andi %kokb, %nokb : tensor<64x128xi1>
    %y = tessel.load %pb, %mb, %zb : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}
