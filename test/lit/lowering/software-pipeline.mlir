// RUN: tessel-opt %s -split-input-file -tessel-software-pipeline=num-stages=3 | FileCheck %s
// Loads feeding a dot become cp.async copies into a 3-deep ring of shared tiles.

// CHECK-LABEL: func.func @pipelined
// CHECK: %[[A:.*]] = tessel.local_alloc : !tessel.shared<3x64x32xbf16>
// CHECK: %[[B:.*]] = tessel.local_alloc : !tessel.shared<3x32x64xbf16>
// Prologue: iterations 0 and 1 into slots 0 and 1, masked by `iteration < ub`.
// CHECK: %[[IN0:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB:.*]] : i32
// CHECK: tessel.splat %[[IN0]] : tensor<64x32xi1>
// CHECK: %[[S0:.*]] = tessel.local_index %[[A]][%{{.*}}]
// CHECK: tessel.async_copy %{{.*}}, %{{.*}} into %[[S0]]
// CHECK: tessel.async_copy
// CHECK: tessel.async_commit
// CHECK: arith.addi %[[LB]], %c32
// CHECK: tessel.async_copy
// CHECK: tessel.async_copy
// CHECK: tessel.async_commit
// The loop carries the slot it reads (from 0) and the slot it fills (from 2). The dot
// (mma.sync here) comes first, the copies 2 iterations ahead after it, so the tensor
// cores need not wait for the copies to be issued.
// CHECK: scf.for %[[IV:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[READ:.*]] = %c0_i32{{.*}}, %[[WRITE:.*]] = %c2_i32) -> (tensor<64x64xf32>, i32, i32)
// CHECK-NEXT: tessel.async_wait {pending = 1 : i32}
// CHECK-NOT: tessel.load
// CHECK-NOT: tessel.async_copy
// CHECK: %[[X:.*]] = tessel.local_index %[[A]][%[[READ]]]
// CHECK-NOT: tessel.async_copy
// CHECK: %[[Y:.*]] = tessel.local_index %[[B]][%[[READ]]]
// CHECK-NOT: tessel.async_copy
// CHECK: tessel.dot %[[X]], %[[Y]], %[[ACC]] : !tessel.shared<64x32xbf16>, !tessel.shared<32x64xbf16> -> tensor<64x64xf32>
// CHECK: %[[AHEAD:.*]] = arith.addi %[[IV]], %c64
// CHECK: arith.cmpi slt, %[[AHEAD]], %[[UB]]
// CHECK: tessel.local_index %[[A]][%[[WRITE]]]
// CHECK: tessel.async_copy
// CHECK: tessel.local_index %[[B]][%[[WRITE]]]
// CHECK: tessel.async_copy
// CHECK: tessel.async_commit
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tessel.async_wait {pending = 0 : i32}
func.func @pipelined(%pa: tensor<64x32x!tessel.ptr<bf16>>, %pb: tensor<32x64x!tessel.ptr<bf16>>,
                     %ma: tensor<64x32xi1>, %lb: i32, %ub: i32) -> tensor<64x64xf32> {
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zb = arith.constant dense<0.0> : tensor<64x32xbf16>
  %r = scf.for %iv = %lb to %ub step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %off = tessel.splat %iv : tensor<64x32xi32>
    %a = tessel.addptr %pa, %off : tensor<64x32x!tessel.ptr<bf16>>, tensor<64x32xi32>
    %x = tessel.load %a, %ma, %zb : tensor<64x32x!tessel.ptr<bf16>>
    %offb = tessel.splat %iv : tensor<32x64xi32>
    %b = tessel.addptr %pb, %offb : tensor<32x64x!tessel.ptr<bf16>>, tensor<32x64xi32>
    %y = tessel.load %b : tensor<32x64x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// Pointers advanced through the loop (a loop-carried value) cannot be recomputed for
// a later iteration: left alone. So is a load with a non-zero `other`.
// CHECK-LABEL: func.func @not_pipelined
// CHECK-NOT: tessel.local_alloc
// CHECK-NOT: tessel.async_copy
// CHECK: tessel.load
// CHECK: tessel.load
func.func @not_pipelined(%pa: tensor<64x32x!tessel.ptr<bf16>>, %y: tensor<32x64xbf16>,
                         %pb: tensor<32x64x!tessel.ptr<bf16>>, %ub: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c32 = arith.constant 32 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %one = arith.constant dense<1.0> : tensor<32x64xbf16>
  %step = arith.constant dense<32> : tensor<64x32xi32>
  %r:2 = scf.for %iv = %c0 to %ub step %c32 iter_args(%acc = %zero, %p = %pa)
      -> (tensor<64x64xf32>, tensor<64x32x!tessel.ptr<bf16>>) : i32 {
    %x = tessel.load %p : tensor<64x32x!tessel.ptr<bf16>>
    %cond = arith.constant dense<true> : tensor<32x64xi1>
    %yy = tessel.load %pb, %cond, %one : tensor<32x64x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %yy, %acc : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    %next = tessel.addptr %p, %step : tensor<64x32x!tessel.ptr<bf16>>, tensor<64x32xi32>
    scf.yield %d, %next : tensor<64x64xf32>, tensor<64x32x!tessel.ptr<bf16>>
  }
  return %r#0 : tensor<64x64xf32>
}

// -----

// On sm_90a a wgmma-shaped dot (bf16, K = 64, N = 128, M a multiple of 16 * num_warps)
// whose accumulator only goes from one iteration's dot to the next becomes async: its
// group stays in flight during the next iteration (dot_wait pending 1) and is retired
// after the loop (pending 0). Copies run S-2 = 1 iteration ahead, so the slot being
// filled is never the one the in-flight dot reads.
// The loads have no mask (and no alignment facts), so they are not blocks the bulk
// tensor engine could copy: cp.async, no tensor map, no mbarrier.
// CHECK-LABEL: func.func @async_wgmma
// CHECK-NOT: tessel.mbarrier_init
// CHECK: tessel.async_commit
// CHECK-NOT: tessel.async_commit
// CHECK: scf.for %[[IV:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[READ:.*]] = %c0_i32{{.*}}, %[[WRITE:.*]] = %c1_i32) -> (tensor<128x128xf32>, i32, i32)
// CHECK-NEXT: tessel.async_wait {pending = 0 : i32}
// CHECK: %[[AHEAD:.*]] = arith.addi %[[IV]], %c64
// CHECK: tessel.local_index %{{.*}}[%[[WRITE]]]
// CHECK: tessel.async_commit
// CHECK: %[[D:.*]] = tessel.dot %{{.*}}, %{{.*}}, %[[ACC]] {async}
// CHECK-NEXT: %[[W:.*]] = tessel.dot_wait %[[D]] {pending = 1 : i32} : tensor<128x128xf32>
// CHECK: scf.yield %[[W]],
// CHECK-NEXT: }
// CHECK-NEXT: %[[R:.*]] = tessel.dot_wait %{{.*}}#0 {pending = 0 : i32} : tensor<128x128xf32>
// CHECK-NEXT: tessel.async_wait {pending = 0 : i32}
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: tessel.tma_copy
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @async_wgmma(%pa: tensor<128x64x!tessel.ptr<bf16>>, %pb: tensor<64x128x!tessel.ptr<bf16>>,
                       %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %offb = tessel.splat %iv : tensor<64x128xi32>
    %b = tessel.addptr %pb, %offb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %y = tessel.load %b : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// The same dot stays synchronous where something else reads the accumulator inside the
// loop (its registers would be read while the tensor cores still write them), and for
// other targets; copies then run S-1 = 2 iterations ahead.
// CHECK-LABEL: func.func @sync_when_acc_is_read
// CHECK: iter_args({{.*}}%c2_i32) ->
// CHECK-NOT: async}
// CHECK-NOT: tessel.dot_wait
// CHECK: return
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @sync_when_acc_is_read(%pa: tensor<128x64x!tessel.ptr<bf16>>, %pb: tensor<64x128x!tessel.ptr<bf16>>,
                                 %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %half = arith.constant dense<0.5> : tensor<128x128xf32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %offb = tessel.splat %iv : tensor<64x128xi32>
    %b = tessel.addptr %pb, %offb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %y = tessel.load %b : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    %s = arith.mulf %d, %half : tensor<128x128xf32>
    scf.yield %s : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// CHECK-LABEL: func.func @sync_on_sm90
// CHECK: iter_args({{.*}}%c2_i32) ->
// CHECK-NOT: tessel.dot_wait
module attributes {tessel.arch = "sm_90", tessel.num_warps = 4 : i32} {
func.func @sync_on_sm90(%pa: tensor<128x64x!tessel.ptr<bf16>>, %pb: tensor<64x128x!tessel.ptr<bf16>>,
                        %ub: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %r = scf.for %iv = %c0 to %ub step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %off = tessel.splat %iv : tensor<128x64xi32>
    %a = tessel.addptr %pa, %off : tensor<128x64x!tessel.ptr<bf16>>, tensor<128x64xi32>
    %x = tessel.load %a : tensor<128x64x!tessel.ptr<bf16>>
    %offb = tessel.splat %iv : tensor<64x128xi32>
    %b = tessel.addptr %pb, %offb : tensor<64x128x!tessel.ptr<bf16>>, tensor<64x128xi32>
    %y = tessel.load %b : tensor<64x128x!tessel.ptr<bf16>>
    %d = tessel.dot %x, %y, %acc : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
}

// -----

// B is the block [k, k+64) x [n0, n0+128) of a row-major K x N matrix whose pointer,
// row stride and bounds are kernel arguments known 16-byte aligned: the bulk tensor engine
// copies it (the default `tma=b`). A tensor-map parameter is appended to the kernel and
// its recipe recorded on the module; one mbarrier per slot; each iteration waits on its
// slot's phase. A (unmasked here) stays on cp.async.
// CHECK-LABEL: module attributes
// CHECK-SAME: tessel.tensor_maps = [{box = [64, 64], cols = {param = 3 : i64}, dtype = "bf16", param = 6 : i64, pointer = 1 : i64, row_stride = {param = 3 : i64}, rows = {param = 4 : i64}}]
// CHECK-LABEL: func.func @tma_b
// CHECK-SAME: %[[MAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, tessel.grid_constant})
// CHECK: %[[BARS:.*]] = tessel.local_alloc : !tessel.shared<3x1x1xi64>
// CHECK: tessel.mbarrier_init %{{.*}} {count = 1 : i32}
// CHECK: tessel.mbarrier_init
// CHECK: tessel.mbarrier_init
// CHECK-NEXT: tessel.barrier
// CHECK: tessel.tma_copy %[[MAP]][%{{.*}}, %[[N0:[a-z0-9_]+]]] into %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr, !tessel.shared<64x128xbf16>, !tessel.shared<1x1xi64>
// CHECK: tessel.async_copy
// CHECK: scf.for %[[IV:[^ ]*]] =
// CHECK: tessel.async_wait {pending = 0 : i32}
// CHECK: %[[J:.*]] = arith.divui
// CHECK: %[[K:.*]] = arith.divui %[[J]], %c3
// CHECK: %[[PHASE:.*]] = arith.andi %[[K]], %c1
// CHECK: tessel.mbarrier_wait %{{.*}}, %[[PHASE]]
// CHECK: tessel.tma_copy %[[MAP]][%[[AHEAD:[a-z0-9_]+]], %[[N0]]]
// CHECK: tessel.dot {{.*}} {async}
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @tma_b(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
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

// The same B block where n0 is known to start a 64-column block (divisibility 128): the
// tile's two 128-byte column blocks may come in one box. The recipe says so (col_blocks)
// and each copy gets the kernel's test of the runtime's condition, N % 64 == 0.
// CHECK-LABEL: module attributes
// CHECK-SAME: tessel.tensor_maps = [{box = [64, 64], col_blocks = 2 : i64, cols = {param = 3 : i64}
// CHECK-LABEL: func.func @tma_b_whole_blocks
// CHECK-SAME: %[[N:[a-z0-9]+]]: i32 {tessel.divisibility = 16 : i32}
// CHECK: %[[REM:.*]] = arith.remsi %[[N]], %c64
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[REM]], %c0
// CHECK: tessel.tma_copy %{{.*}} whole_blocks %[[WHOLE]] : !llvm.ptr, !tessel.shared<64x128xbf16>
// CHECK: scf.for
// CHECK: tessel.tma_copy %{{.*}} whole_blocks %[[WHOLE]] : !llvm.ptr, !tessel.shared<64x128xbf16>
module attributes {tessel.arch = "sm_90a", tessel.num_warps = 4 : i32} {
func.func @tma_b_whole_blocks(%pa: tensor<128x64x!tessel.ptr<bf16>>, %b: !tessel.ptr<bf16> {tessel.divisibility = 16 : i32},
                 %n0: i32 {tessel.divisibility = 128 : i32}, %N: i32 {tessel.divisibility = 16 : i32}, %K: i32, %ub: i32) -> tensor<128x128xf32> {
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
