// RUN: tessel-opt %s -split-input-file -verify-diagnostics

func.func @inner_mismatch(%a: tensor<64x32xbf16>, %b: tensor<16x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{a is 64x32 but b has 16 rows}}
  %0 = tessel.dot %a, %b, %c : tensor<64x32xbf16>, tensor<16x64xbf16> -> tensor<64x64xf32>
  return
}

// -----

func.func @acc_shape(%a: tensor<64x32xbf16>, %b: tensor<32x64xbf16>, %c: tensor<32x64xf32>) {
  // expected-error @+1 {{accumulator must be 64x64}}
  %0 = tessel.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<32x64xf32>
  return
}

// -----

func.func @small_k(%a: tensor<16x8xf16>, %b: tensor<8x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{K must be at least 16, got 8}}
  %0 = tessel.dot %a, %b, %c : tensor<16x8xf16>, tensor<8x16xf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @mixed(%a: tensor<16x16xf16>, %b: tensor<16x16xbf16>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{a and b must have the same element type}}
  %0 = tessel.dot %a, %b, %c : tensor<16x16xf16>, tensor<16x16xbf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @int_operands(%a: tensor<16x16xi32>, %b: tensor<16x16xi32>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{operands must be f16, bf16 or f32}}
  %0 = tessel.dot %a, %b, %c : tensor<16x16xi32>, tensor<16x16xi32> -> tensor<16x16xf32>
  return
}

// -----

func.func @f16_acc(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf16>) {
  // expected-error @+1 {{accumulator must be f32}}
  %0 = tessel.dot %a, %b, %c : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf16>
  return
}

// -----

func.func @precision(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) {
  // expected-error @+1 {{inputPrecision must be "tf32" or "ieee", got "tf32x3"}}
  %0 = tessel.dot %a, %b, %c {inputPrecision = "tf32x3"} : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @trans_shape(%x: tensor<64x32xf16>) {
  // expected-error @+1 {{result must be the operand transposed}}
  %t = tessel.trans %x : tensor<64x32xf16> -> tensor<64x32xf16>
  return
}

// -----

func.func @negative_pending(%c: tensor<64x64xf32>) {
  // expected-error @+1 {{attribute 'pending' failed to satisfy constraint}}
  %0 = tessel.dot_wait %c {pending = -1 : i32} : tensor<64x64xf32>
  return
}
