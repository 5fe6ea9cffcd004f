// RUN: tessel-opt %s -tessel-software-pipeline="num-stages=3" | FileCheck %s
// RUN: tessel-opt %s -tessel-software-pipeline="num-stages=3" -tessel-insert-barriers | FileCheck %s --check-prefix=BARRIER

// Both operands of an mma.sync dot come by bulk copies, issued after the dot (3 stages):
// besides its "full" mbarrier (two copies arrive) each slot gets an "empty" one that
// expects one arrival per warp (4). In the loop, after the dot, every warp releases the
// slot just read (tessel.warp_release); the copies into the slot about to be refilled
// wait (their issuing lanes only) for every warp's release of it from the iteration
// before, from the second iteration on and while there is an iteration to copy.
// CHECK-LABEL: func.func @both_by_bulk_copies
// CHECK: %[[FULL:.*]] = tessel.local_alloc : !tessel.shared<3x1x1xi64>
// CHECK-COUNT-3: tessel.mbarrier_init %{{.*}} {count = 2 : i32}
// CHECK: %[[EMPTY:.*]] = tessel.local_alloc : !tessel.shared<3x1x1xi64>
// CHECK-COUNT-3: tessel.mbarrier_init %{{.*}} {count = 4 : i32}
// CHECK-NEXT: tessel.barrier{{$}}
// CHECK: scf.for %[[IV:.*]] = %[[LB:.*]] to %[[UB:.*]] step %{{.*}} iter_args(%{{.*}}, %[[READ:.*]] = %{{.*}}, %[[WRITE:.*]] = %{{.*}})
// CHECK: tessel.mbarrier_wait
// CHECK: tessel.dot
// CHECK: %[[AHEAD:.*]] = arith.addi %[[IV]], %c128_i32
// CHECK: %[[RELEASE_SLOT:.*]] = tessel.local_index %[[EMPTY]][%[[READ]]]
// CHECK: tessel.warp_release %[[RELEASE_SLOT]], %true
// CHECK: %[[LATER:.*]] = arith.cmpi sgt, %[[IV]], %[[LB]]
// CHECK: %[[INRANGE:.*]] = arith.cmpi slt, %[[AHEAD]], %[[UB]]
// CHECK: %[[COPYING:.*]] = arith.andi %[[LATER]], %[[INRANGE]]
// CHECK: %[[WAIT_SLOT:.*]] = tessel.local_index %[[EMPTY]][%[[WRITE]]]
// CHECK: tessel.tma_copy %{{.*}} after %[[WAIT_SLOT]][%{{.*}}] if %[[COPYING]] : !llvm.ptr, !tessel.shared<128x64xbf16>
// CHECK: tessel.tma_copy %{{.*}} after %[[WAIT_SLOT]][%{{.*}}] if %[[COPYING]] : !llvm.ptr, !tessel.shared<64x128xbf16>
// CHECK: scf.yield
// No block barrier in the loop: the release protocol orders the copies after the reads.
// BARRIER-LABEL: func.func @both_by_bulk_copies
// BARRIER: tessel.barrier{{$}}
// BARRIER: scf.for
// BARRIER-NOT: tessel.barrier
// BARRIER: tessel.warp_release
// BARRIER-NOT: tessel.barrier
// BARRIER: scf.yield
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
func.func @both_by_bulk_copies(%a: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32}, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %M: i32, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32 {tessel.divisibility = 16 : i32}, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %rows = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %rm2 = tessel.expand_dims %rows {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  %Ka = tessel.splat %K : tensor<128x1xi32>
  %arow = arith.muli %rm2, %Ka : tensor<128x1xi32>
  %as = tessel.splat %a : tensor<128x1x!tessel.ptr<bf16>>
  %arowptr = tessel.addptr %as, %arow : tensor<128x1x!tessel.ptr<bf16>>, tensor<128x1xi32>
  %arowptrb = tessel.broadcast %arowptr : tensor<128x1x!tessel.ptr<bf16>> -> tensor<128x64x!tessel.ptr<bf16>>
  %cols = tessel.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %rn2 = tessel.expand_dims %cols {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %rnb = tessel.broadcast %rn2 : tensor<1x128xi32> -> tensor<64x128xi32>
  %krange = tessel.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tessel.splat %b : tensor<64x1x!tessel.ptr<bf16>>
  %Nk = tessel.splat %N : tensor<64x1xi32>
  %Kk = tessel.splat %K : tensor<64x1xi32>
  %Ms = tessel.splat %M : tensor<128x1xi32>
  %mok = arith.cmpi slt, %rm2, %Ms : tensor<128x1xi32>
  %mokb = tessel.broadcast %mok : tensor<128x1xi1> -> tensor<128x64xi1>
  %Kr = tessel.splat %K : tensor<1x64xi32>
  %Ns = tessel.splat %N : tensor<1x128xi32>
  %nok = arith.cmpi slt, %rn2, %Ns : tensor<1x128xi32>
  %nokb = tessel.broadcast %nok : tensor<1x128xi1> -> tensor<64x128xi1>
  %za = arith.constant dense<0.0> : tensor<128x64xbf16>
  %zb = arith.constant dense<0.0> : tensor<64x128xbf16>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %ivs = tessel.splat %iv : tensor<64xi32>
    %ks = arith.addi %ivs, %krange : tensor<64xi32>
    %ka = tessel.expand_dims %ks {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
    %kab = tessel.broadcast %ka : tensor<1x64xi32> -> tensor<128x64xi32>
    %pa = tessel.addptr %arowptrb, %kab : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %kaok = arith.cmpi slt, %ka, %Kr : tensor<1x64xi32>
    %kaokb = tessel.broadcast %kaok : tensor<1x64xi1> -> tensor<128x64xi1>
    %ma = arith.andi %mokb, %kaokb : tensor<128x64xi1>
    %x = tessel.load %pa, %ma, %za : tensor<128x64x!tessel.ptr<bf16>>
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
