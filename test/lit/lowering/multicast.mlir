// RUN: tessel-opt %s -split-input-file -tessel-software-pipeline="num-stages=3 multicast-b=2" | FileCheck %s
// RUN: tessel-opt %s -split-input-file -tessel-software-pipeline="num-stages=3 multicast-b=2" -tessel-insert-barriers | FileCheck %s --check-prefix=BARRIER

// A B tile of two whole 64-column blocks, its first column (program_id(0) / 4) * 128, on
// mma.sync (copies after the dots): programs 2j and 2j+1 of a cluster of two share each
// copy where they compute the same column. The kernel recomputes the column for both ids
// (its own rounded down to even, and that one plus 1) and compares; the copies share
// where that holds and the launch made a cluster of two (tessel.cluster_size); the
// recipe says multicast 2 (the runtime halves the box). Each slot gets an "empty"
// mbarrier (one arrival: the other program's release) beside its full one, and the
// barrier after their init is a cluster barrier. In the loop, after the dot: release the
// slot just read to the other program (where it will copy into it again); the copy into
// the slot about to be refilled waits (its issuing lane only) for the other's release of
// it from the iteration before.
// CHECK-LABEL: module attributes
// CHECK-SAME: tessel.tensor_maps = [{box = [64, 64], col_blocks = 2 : i64, cols = {param = 2 : i64}, dtype = "bf16", multicast = 2 : i64
// CHECK-LABEL: func.func @multicast_b
// CHECK: %[[FULL:.*]] = tessel.local_alloc : !tessel.shared<3x1x1xi64>
// CHECK-COUNT-3: tessel.mbarrier_init %{{.*}} {count = 1 : i32}
// CHECK: %[[EMPTY:.*]] = tessel.local_alloc : !tessel.shared<3x1x1xi64>
// CHECK-COUNT-3: tessel.mbarrier_init %{{.*}} {count = 1 : i32}
// CHECK-NEXT: tessel.barrier {cluster}
// CHECK: %[[PID:.*]] = tessel.program_id 0 : i32
// CHECK: %[[FIRST:.*]] = arith.andi %[[PID]], %c-2_i32
// CHECK: %[[PN0:.*]] = arith.divsi %[[FIRST]], %c4
// CHECK: %[[N00:.*]] = arith.muli %[[PN0]], %c128
// CHECK: %[[SECOND:.*]] = arith.ori %[[FIRST]], %c1_i32
// CHECK: %[[PN1:.*]] = arith.divsi %[[SECOND]], %c4
// CHECK: %[[N01:.*]] = arith.muli %[[PN1]], %c128
// CHECK: %[[SHARED:.*]] = arith.cmpi eq, %[[N01]], %[[N00]]
// CHECK: %[[SIZE:.*]] = tessel.cluster_size : i32
// CHECK: %[[PAIR:.*]] = arith.cmpi eq, %[[SIZE]], %c2
// CHECK: %[[ACTIVE:.*]] = arith.andi %[[PAIR]], %[[SHARED]]
// CHECK: tessel.tma_copy %{{.*}} whole_blocks %{{.*}} multicast %[[ACTIVE]] {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<64x128xbf16, swizzled>
// CHECK: scf.for %[[IV:.*]] = %[[LB:.*]] to %[[UB:.*]] step %{{.*}} iter_args(%{{.*}}, %[[READ:.*]] = %{{.*}}, %[[WRITE:.*]] = %{{.*}})
// CHECK: tessel.dot
// CHECK: %[[RELEASE_SLOT:.*]] = tessel.local_index %[[EMPTY]][%[[READ]]]
// CHECK: tessel.cluster_release %[[RELEASE_SLOT]], %{{.*}} {ctas = 2 : i64}
// CHECK: %[[WAIT_SLOT:.*]] = tessel.local_index %[[EMPTY]][%[[WRITE]]]
// CHECK: tessel.tma_copy %{{.*}} whole_blocks %{{.*}} multicast %[[ACTIVE]] after %[[WAIT_SLOT]][%{{.*}}] if %{{.*}} {ctas = 2 : i64} : !llvm.ptr, !tessel.shared<64x128xbf16, swizzled>, !tessel.shared<1x1xi64>, !tessel.shared<1x1xi64>
// CHECK: scf.yield
// The release is the iteration's barrier before the copies: the one left is after the
// wait for A's cp.async copies (read after write).
// BARRIER-LABEL: func.func @multicast_b
// BARRIER: tessel.barrier {cluster}
// BARRIER: scf.for
// BARRIER-NEXT: tessel.async_wait
// BARRIER-NEXT: tessel.barrier{{$}}
// BARRIER-NOT: tessel.barrier
// BARRIER: tessel.cluster_release
// BARRIER-NOT: tessel.barrier
// BARRIER: tessel.tma_copy {{.*}} multicast
// BARRIER-NOT: tessel.barrier
// BARRIER: scf.yield
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
func.func @multicast_b(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c4 = arith.constant 4 : i32
  %c128 = arith.constant 128 : i32
  %pid = tessel.program_id 0 : i32
  %pn = arith.divsi %pid, %c4 : i32
  %n0 = arith.muli %pn, %c128 : i32
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

// Programs that run different numbers of iterations could not meet at the cluster
// barriers: no multicast, a plain barrier.
// CHECK-LABEL: module attributes
// CHECK-NOT: multicast
// CHECK-LABEL: func.func @trip_count_per_program
// CHECK: tessel.barrier{{$}}
// CHECK-NOT: multicast
// CHECK: return
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
func.func @trip_count_per_program(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %c4 = arith.constant 4 : i32
  %c128 = arith.constant 128 : i32
  %pid = tessel.program_id 0 : i32
  %pn = arith.divsi %pid, %c4 : i32
  %n0 = arith.muli %pn, %c128 : i32
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
  %ubp = arith.addi %ub, %pid : i32
  %r = scf.for %iv = %c0 to %ubp step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
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
