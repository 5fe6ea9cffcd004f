// RUN: tessel-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the tessel dialect.

func.func @range_not_power_of_two() {
  // expected-error @+1 {{range length must be a positive power of two, got 100}}
  %r = tessel.make_range {end = 100 : i32, start = 0 : i32} : tensor<100xi32>
  return
}

// -----

func.func @range_length_mismatch() {
  // expected-error @+1 {{result has 64 elements, the range has 128}}
  %r = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<64xi32>
  return
}

// -----

func.func @broadcast_bad_dim(%t: tensor<4x2xf32>) {
  // expected-error @+1 {{cannot broadcast dimension 1 of size 2 to 8}}
  %b = tessel.broadcast %t : tensor<4x2xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @expand_dims_bad_shape(%t: tensor<4xf32>) {
  // expected-error @+1 {{result must be the operand with a size-1 dimension at 0}}
  %e = tessel.expand_dims %t {axis = 0 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  return
}

// -----

#blocked = #tessel.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked1 = #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
func.func @expand_dims_bad_layout(%t: tensor<4xf32, #blocked1>) {
  // expected-error @+1 {{operand layout must be the result layout sliced along axis 1}}
  %e = tessel.expand_dims %t {axis = 1 : i32} : tensor<4xf32, #blocked1> -> tensor<4x1xf32, #blocked>
  return
}

// -----

func.func @reduce_wrong_result(%t: tensor<4x8xf32>) {
  // expected-error @+1 {{result must be the operand without dimension 1}}
  %r = tessel.reduce add %t {axis = 1 : i32} : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_axis_out_of_range(%t: tensor<4xf32>) {
  // expected-error @+1 {{axis 1 out of range for a rank-1 tile}}
  %r = tessel.reduce add %t {axis = 1 : i32} : tensor<4xf32> -> f32
  return
}

// -----

// A 16x16 tile reduced along axis 1 must have the layout sliced along 1 (the shapes alone
// would allow the slice along 0).
#blocked = #tessel.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
func.func @reduce_slice_along_other_axis(%t: tensor<16x16xf32, #blocked>) {
  // expected-error @+1 {{result layout must be the operand layout sliced along axis 1}}
  %r = tessel.reduce add %t {axis = 1 : i32} : tensor<16x16xf32, #blocked> -> tensor<16xf32, #tessel.slice<{dim = 0, parent = #blocked}>>
  return
}

// -----

func.func @load_type_mismatch(%p: tensor<4x!tessel.ptr<f32>>, %m: tensor<8xi1>) {
  // expected-error @+1 {{mask has the shape of ptr}}
  %x = "tessel.load"(%p, %m) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4x!tessel.ptr<f32>>, tensor<8xi1>) -> tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{threadsPerWarp must multiply to 32, got 16}}
func.func @bad_blocked(%t: tensor<4xf32, #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [16], warpsPerCTA = [4], order = [0]}>>) {
  return
}

// -----

// expected-error @+1 {{slice layout: dim 1 out of range for a rank-1 parent}}
func.func @bad_slice(%t: tensor<f32, #tessel.slice<{dim = 1, parent = #tessel.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>}>>) {
  return
}

// -----

// A multicast copy is split into pieces of whole column blocks: it needs whole_blocks.
func.func @multicast_without_whole_blocks(%map: !llvm.ptr, %b: !tessel.shared<32x128xf32>,
                                          %bar: !tessel.shared<1x1xi64>, %i: i32, %p: i1) {
  // expected-error @+1 {{'multicast' needs 'whole_blocks' (the pieces are column blocks)}}
  tessel.tma_copy %map[%i, %i] into %b, %bar, %p multicast %p {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>
  return
}

// -----

func.func @multicast_cluster_of_three(%map: !llvm.ptr, %b: !tessel.shared<32x128xf32>,
                                      %bar: !tessel.shared<1x1xi64>, %i: i32, %p: i1) {
  // expected-error @+1 {{'ctas' must be 2, 4 or 8, got 3}}
  tessel.tma_copy %map[%i, %i] into %b, %bar, %p whole_blocks %p multicast %p {ctas = 3 : i64} : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>
  return
}

// -----

func.func @multicast_without_ctas(%map: !llvm.ptr, %b: !tessel.shared<32x128xf32>,
                                  %bar: !tessel.shared<1x1xi64>, %i: i32, %p: i1) {
  // expected-error @+1 {{'multicast' and 'ctas' go together}}
  tessel.tma_copy %map[%i, %i] into %b, %bar, %p whole_blocks %p multicast %p : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>
  return
}

// -----

// `after` (wait for the others' release) needs all three of its operands (generic form:
// the custom syntax cannot leave one out).
func.func @multicast_after_without_phase(%map: !llvm.ptr, %b: !tessel.shared<32x128xf32>,
                                         %bar: !tessel.shared<1x1xi64>, %i: i32, %p: i1) {
  // expected-error @+1 {{'after' needs an mbarrier, a phase and a condition}}
  "tessel.tma_copy"(%map, %i, %i, %b, %bar, %p, %p, %p, %bar) <{ctas = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0>}> : (!llvm.ptr, i32, i32, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>, i1, i1, i1, !tessel.shared<1x1xi64>) -> ()
  return
}

// -----

// A tensor map has five dimensions: columns, rows, the column block and two of a batch.
func.func @tma_three_batch_coordinates(%map: !llvm.ptr, %b: !tessel.shared<64x64xbf16, wgmma_b>,
                                       %bar: !tessel.shared<1x1xi64>, %i: i32, %p: i1) {
  // expected-error @+1 {{at most 2 batch coordinates (a tensor map has 5 dimensions), got 3}}
  tessel.tma_copy %map[%i, %i, %i, %i, %i] into %b, %bar, %p : !llvm.ptr, !tessel.shared<64x64xbf16, wgmma_b>, !tessel.shared<1x1xi64>
  return
}

// -----

// An interleaved tile already spends the map's dimensions on its row order.
func.func @tma_interleaved_batch(%map: !llvm.ptr, %b: !tessel.shared<32x128xf32, interleaved>,
                                 %bar: !tessel.shared<1x1xi64>, %i: i32, %p: i1) {
  // expected-error @+1 {{an interleaved tile's map has no room for batch coordinates}}
  tessel.tma_copy %map[%i, %i, %i] into %b, %bar, %p : !llvm.ptr, !tessel.shared<32x128xf32, interleaved>, !tessel.shared<1x1xi64>
  return
}

// -----

func.func @atomic_kind(%p: !tessel.ptr<f32>, %x: f32) {
  // expected-error @+1 {{kind 'max' is not supported (expected "add")}}
  tessel.atomic_rmw "max" %p, %x : !tessel.ptr<f32>
  return
}

// -----

func.func @atomic_bf16(%p: !tessel.ptr<bf16>, %x: bf16) {
  // expected-error @+1 {{add takes f32 or i32 elements, got 'bf16'}}
  tessel.atomic_rmw "add" %p, %x : !tessel.ptr<bf16>
  return
}
