// RUN: tessel-opt %s -split-input-file -tessel-assign-layouts -tessel-allocate-shared-memory -convert-tessel-to-llvm -verify-diagnostics
// Buffers in the bulk tensor engine's layouts (WgmmaLayout.h) that the dot reading them
// cannot take: the lowering says so instead of reading the wrong elements.

// A "swizzled" A whose rows are 64 bytes, not one 128-byte swizzle row.
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
  func.func @short_rows(%base: !tessel.ptr<f32>) {
    %p = tessel.splat %base : tensor<64x64x!tessel.ptr<f32>>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %x = tessel.local_alloc : !tessel.shared<64x16xbf16, swizzled>
    %y = tessel.local_alloc : !tessel.shared<16x64xbf16, swizzled>
    // expected-error @+2 {{reads a swizzled buffer but does not run on mma.sync with 128-byte rows of A}}
    // expected-error @+1 {{failed to legalize}}
    %d = tessel.dot %x, %y, %zero : !tessel.shared<64x16xbf16, swizzled>, !tessel.shared<16x64xbf16, swizzled> -> tensor<64x64xf32>
    tessel.store %p, %d : tensor<64x64x!tessel.ptr<f32>>
    return
  }
}

// -----

// An "interleaved" buffer (tf32 mma.sync's B layout) read as A.
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
  func.func @interleaved_a(%base: !tessel.ptr<f32>) {
    %p = tessel.splat %base : tensor<64x64x!tessel.ptr<f32>>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %x = tessel.local_alloc : !tessel.shared<64x32xf32, interleaved>
    %y = tessel.local_alloc : !tessel.shared<32x64xf32, interleaved>
    // expected-error @+2 {{reads an interleaved buffer but is not a tf32 dot on mma.sync reading it as B}}
    // expected-error @+1 {{failed to legalize}}
    %d = tessel.dot %x, %y, %zero : !tessel.shared<64x32xf32, interleaved>, !tessel.shared<32x64xf32, interleaved> -> tensor<64x64xf32>
    tessel.store %p, %d : tensor<64x64x!tessel.ptr<f32>>
    return
  }
}
