// RUN: tessel-opt %s | tessel-opt | FileCheck %s
// Every op prints in a form that parses back to the same thing.

#blocked = #tessel.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#row = #tessel.slice<{dim = 1, parent = #blocked}>

// CHECK: #[[BLOCKED:.*]] = #tessel.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[SLICE:.*]] = #tessel.slice<{dim = 1, parent = #[[BLOCKED]]}>
// CHECK-LABEL: func.func @ops
func.func @ops(%p: !tessel.ptr<f32>, %n: i32) {
  // CHECK: tessel.program_id 1 : i32
  %pid = tessel.program_id 1 : i32
  // CHECK: tessel.num_programs 0 : i32
  %np = tessel.num_programs 0 : i32
  // CHECK: tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #[[SLICE]]>
  %r = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #row>
  // CHECK: tessel.expand_dims %{{.*}} {axis = 1 : i32} : tensor<64xi32, #[[SLICE]]> -> tensor<64x1xi32, #[[BLOCKED]]>
  %e = tessel.expand_dims %r {axis = 1 : i32} : tensor<64xi32, #row> -> tensor<64x1xi32, #blocked>
  // CHECK: tessel.broadcast %{{.*}} : tensor<64x1xi32, #[[BLOCKED]]> -> tensor<64x32xi32, #[[BLOCKED]]>
  %b = tessel.broadcast %e : tensor<64x1xi32, #blocked> -> tensor<64x32xi32, #blocked>
  // CHECK: tessel.splat %{{.*}} : tensor<64x32x!tessel.ptr<f32>, #[[BLOCKED]]>
  %ps = tessel.splat %p : tensor<64x32x!tessel.ptr<f32>, #blocked>
  // CHECK: tessel.addptr %{{.*}}, %{{.*}} : tensor<64x32x!tessel.ptr<f32>, #[[BLOCKED]]>, tensor<64x32xi32, #[[BLOCKED]]>
  %a = tessel.addptr %ps, %b : tensor<64x32x!tessel.ptr<f32>, #blocked>, tensor<64x32xi32, #blocked>
  %ns = tessel.splat %n : tensor<64x32xi32, #blocked>
  %m = arith.cmpi slt, %b, %ns : tensor<64x32xi32, #blocked>
  %zero = arith.constant 0.0 : f32
  %other = tessel.splat %zero : tensor<64x32xf32, #blocked>
  // CHECK: tessel.load %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32x!tessel.ptr<f32>, #[[BLOCKED]]>
  %x = tessel.load %a, %m, %other : tensor<64x32x!tessel.ptr<f32>, #blocked>
  // CHECK: tessel.load %{{.*}} : tensor<64x32x!tessel.ptr<f32>, #[[BLOCKED]]>
  %y = tessel.load %a : tensor<64x32x!tessel.ptr<f32>, #blocked>
  // CHECK: tessel.reduce max %{{.*}} {axis = 1 : i32} : tensor<64x32xf32, #[[BLOCKED]]> -> tensor<64xf32, #[[SLICE]]>
  %s = tessel.reduce max %x {axis = 1 : i32} : tensor<64x32xf32, #blocked> -> tensor<64xf32, #row>
  // CHECK: tessel.convert_layout %{{.*}} : tensor<64x32xf32, #[[BLOCKED]]> -> tensor<64x32xf32>
  %c = tessel.convert_layout %y : tensor<64x32xf32, #blocked> -> tensor<64x32xf32>
  // CHECK: tessel.store %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32x!tessel.ptr<f32>, #[[BLOCKED]]>
  tessel.store %a, %x, %m : tensor<64x32x!tessel.ptr<f32>, #blocked>
  // CHECK: tessel.atomic_rmw "add" %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32x!tessel.ptr<f32>, #[[BLOCKED]]>
  tessel.atomic_rmw "add" %a, %x, %m : tensor<64x32x!tessel.ptr<f32>, #blocked>
  // CHECK: tessel.store %{{.*}}, %{{.*}} : !tessel.ptr<f32>
  %q = tessel.addptr %p, %n : !tessel.ptr<f32>, i32
  tessel.store %q, %zero : !tessel.ptr<f32>
  return
}

// Bulk copies shared by a cluster, and the cluster barrier.
// CHECK-LABEL: func.func @multicast_copy
func.func @multicast_copy(%map: !llvm.ptr, %b: !tessel.shared<32x128xf32>,
                          %bar: !tessel.shared<1x1xi64>, %i: i32, %p: i1, %w: i1, %s: i1) {
  // CHECK: tessel.barrier {cluster}
  tessel.barrier {cluster}
  // CHECK: tessel.tma_copy %{{.*}}[%{{.*}}, %{{.*}}] into %{{.*}}, %{{.*}}, %{{.*}} whole_blocks %{{.*}} multicast %{{.*}} {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>
  tessel.tma_copy %map[%i, %i] into %b, %bar, %p whole_blocks %w multicast %s {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>
  // CHECK: tessel.barrier{{$}}
  tessel.barrier
  // CHECK: tessel.cluster_size : i32
  %n = tessel.cluster_size : i32
  // CHECK: tessel.cluster_release %{{.*}}, %{{.*}} {ctas = 2 : i64} : !tessel.shared<1x1xi64>
  tessel.cluster_release %bar, %p {ctas = 2 : i64} : !tessel.shared<1x1xi64>
  // CHECK: tessel.mbarrier_wait %{{.*}}, %{{.*}} {cluster} : !tessel.shared<1x1xi64>
  tessel.mbarrier_wait %bar, %i {cluster} : !tessel.shared<1x1xi64>
  // CHECK: tessel.tma_copy %{{.*}} whole_blocks %{{.*}} multicast %{{.*}} after %{{.*}}[%{{.*}}] if %{{.*}} {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>, !tessel.shared<1x1xi64>
  tessel.tma_copy %map[%i, %i] into %b, %bar, %p whole_blocks %w multicast %s after %bar[%i] if %p {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<32x128xf32>, !tessel.shared<1x1xi64>, !tessel.shared<1x1xi64>
  return
}

// The shared layout is part of the type: padded rows print bare, the others by name, and a
// tile of a stack keeps its stack's layout.
// CHECK-LABEL: func.func @shared_layouts
// CHECK-SAME: !tessel.shared<3x128x64xbf16, wgmma_a>, %{{.*}}: !tessel.shared<3x64x128xbf16, wgmma_b>
// CHECK-SAME: !tessel.shared<2x64x32xf32, swizzled>, %{{.*}}: !tessel.shared<2x32x64xf32, interleaved>
// CHECK-SAME: !tessel.shared<2x64x32xbf16>
func.func @shared_layouts(%a: !tessel.shared<3x128x64xbf16, wgmma_a>, %b: !tessel.shared<3x64x128xbf16, wgmma_b>,
                          %s: !tessel.shared<2x64x32xf32, swizzled>, %t: !tessel.shared<2x32x64xf32, interleaved>,
                          %p: !tessel.shared<2x64x32xbf16, padded>, %i: i32) {
  // CHECK: tessel.local_index %{{.*}}[%{{.*}}] : !tessel.shared<3x128x64xbf16, wgmma_a> -> !tessel.shared<128x64xbf16, wgmma_a>
  %x = tessel.local_index %a[%i] : !tessel.shared<3x128x64xbf16, wgmma_a> -> !tessel.shared<128x64xbf16, wgmma_a>
  return
}

// Warp specialization: partitions and the consumers' release of a slot.
// CHECK-LABEL: func.func @partitions
// CHECK: tessel.warp_specialize {consumer_registers = 240 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32} producer {
// CHECK: tessel.mbarrier_wait
// CHECK: } consumers {
// CHECK: tessel.mbarrier_arrive %{{.*}}, %{{.*}} : !tessel.shared<1x1xi64>
func.func @partitions(%bar: !tessel.shared<1x1xi64>, %phase: i32, %p: i1) {
  tessel.warp_specialize {producer_warps = 4 : i32, producer_registers = 24 : i32, consumer_registers = 240 : i32} producer {
    tessel.mbarrier_wait %bar, %phase : !tessel.shared<1x1xi64>
  } consumers {
    tessel.mbarrier_arrive %bar, %p : !tessel.shared<1x1xi64>
  }
  return
}
