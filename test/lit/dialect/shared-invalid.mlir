// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @index_shape(%buf: !tessel.shared<3x64x32xbf16>, %i: i32) {
  // expected-error @+1 {{selects one 2-D tile of a 3-D stack of tiles}}
  %t = tessel.local_index %buf[%i] : !tessel.shared<3x64x32xbf16> -> !tessel.shared<32x64xbf16>
  return
}

// -----

func.func @copy_shape(%p: tensor<64x16x!tessel.ptr<bf16>>, %dst: !tessel.shared<64x32xbf16>) {
  // expected-error @+1 {{copies a tile of the destination's shape}}
  tessel.async_copy %p into %dst : tensor<64x16x!tessel.ptr<bf16>>, !tessel.shared<64x32xbf16>
  return
}

// -----

func.func @copy_type(%p: tensor<64x32x!tessel.ptr<f16>>, %dst: !tessel.shared<64x32xbf16>) {
  // expected-error @+1 {{pointee type must be the destination's element type}}
  tessel.async_copy %p into %dst : tensor<64x32x!tessel.ptr<f16>>, !tessel.shared<64x32xbf16>
  return
}

// -----

// expected-error @+1 {{a shared buffer holds 2-D tiles or stacks of them}}
func.func @rank_one(%buf: !tessel.shared<64xbf16>) {
  return
}

// -----

func.func @trans_shared_to_tile(%buf: !tessel.shared<64x32xbf16>) {
  // expected-error @+1 {{operand and result must both be tiles or both shared tiles}}
  %t = tessel.trans %buf : !tessel.shared<64x32xbf16> -> tensor<32x64xbf16>
  return
}

// -----

func.func @trans_shared_as_a(%buf: !tessel.shared<64x32xbf16>, %b: tensor<64x16xbf16>,
                             %c: tensor<32x16xf32>) {
  // expected-error @+1 {{a transposed shared tile may only be a dot's B operand}}
  %t = tessel.trans %buf : !tessel.shared<64x32xbf16> -> !tessel.shared<32x64xbf16>
  %d = tessel.dot %t, %b, %c : !tessel.shared<32x64xbf16>, tensor<64x16xbf16> -> tensor<32x16xf32>
  return
}

// -----

func.func @trans_shared_shape(%buf: !tessel.shared<64x32xbf16>) {
  // expected-error @+1 {{result must be the operand transposed}}
  %t = tessel.trans %buf : !tessel.shared<64x32xbf16> -> !tessel.shared<64x32xbf16>
  return
}

// -----

// expected-error @+1 {{unknown shared layout 'wgmma_c'}}
func.func @unknown_layout(%buf: !tessel.shared<64x64xbf16, wgmma_c>) {
  return
}

// -----

func.func @index_drops_layout(%buf: !tessel.shared<3x64x64xbf16, wgmma_b>, %i: i32) {
  // expected-error @+1 {{a tile keeps its stack's shared layout}}
  %t = tessel.local_index %buf[%i] : !tessel.shared<3x64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16>
  return
}

// -----

func.func @trans_changes_layout(%buf: !tessel.shared<64x64xbf16, wgmma_b>,
                                %a: tensor<64x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{a transposed view keeps the shared layout}}
  %t = tessel.trans %buf : !tessel.shared<64x64xbf16, wgmma_b> -> !tessel.shared<64x64xbf16, swizzled>
  %d = tessel.dot %a, %t, %c : tensor<64x64xbf16>, !tessel.shared<64x64xbf16, swizzled> -> tensor<64x64xf32>
  return
}

// -----

func.func @producer_not_a_warpgroup() {
  // expected-error @+1 {{producer_warps must be whole warpgroups (a multiple of 4)}}
  tessel.warp_specialize {producer_warps = 2 : i32, producer_registers = 0 : i32, consumer_registers = 0 : i32} producer {
  } consumers {
  }
  return
}

// -----

func.func @registers_not_multiple_of_8() {
  // expected-error @+1 {{register counts for setmaxnreg must be multiples of 8 from 24 to 256}}
  tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 20 : i32, consumer_registers = 240 : i32} producer {
  } consumers {
  }
  return
}

// -----

func.func @registers_the_wrong_way() {
  // expected-error @+1 {{the producer gives registers to the consumers, not the other way}}
  tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 240 : i32, consumer_registers = 24 : i32} producer {
  } consumers {
  }
  return
}

// -----

func.func @nested_partitions() {
  tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 0 : i32, consumer_registers = 0 : i32} producer {
  } consumers {
    // expected-error @+1 {{must be directly in a function's body}}
    tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 0 : i32, consumer_registers = 0 : i32} producer {
    } consumers {
    }
  }
  return
}
