// RUN: tessel-opt %s | tessel-opt | FileCheck %s

// Round trip; the default input precision is tf32.
// CHECK-LABEL: func.func @dot
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xbf16>, tensor<32x128xbf16> -> tensor<64x128xf32>
// CHECK: tessel.dot %{{.*}}, %{{.*}}, %{{.*}} {inputPrecision = "ieee"} : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
func.func @dot(%a: tensor<64x32xbf16>, %b: tensor<32x128xbf16>, %c: tensor<64x128xf32>,
               %x: tensor<16x16xf32>, %y: tensor<16x16xf32>) -> (tensor<64x128xf32>, tensor<16x16xf32>) {
  %0 = tessel.dot %a, %b, %c : tensor<64x32xbf16>, tensor<32x128xbf16> -> tensor<64x128xf32>
  %1 = tessel.dot %x, %y, %y {inputPrecision = "ieee"} : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %0, %1 : tensor<64x128xf32>, tensor<16x16xf32>
}

// CHECK-LABEL: func.func @trans
// CHECK: tessel.trans %{{.*}} : tensor<64x32xf16> -> tensor<32x64xf16>
func.func @trans(%x: tensor<64x32xf16>) -> tensor<32x64xf16> {
  %t = tessel.trans %x : tensor<64x32xf16> -> tensor<32x64xf16>
  return %t : tensor<32x64xf16>
}

// An asynchronous dot and the wait that retires it.
// CHECK-LABEL: func.func @async_dot
// CHECK: %[[D:.*]] = tessel.dot %{{.*}}, %{{.*}}, %{{.*}} {async} : tensor<64x32xbf16>, tensor<32x128xbf16> -> tensor<64x128xf32>
// CHECK: tessel.dot_wait %[[D]] {pending = 1 : i32} : tensor<64x128xf32>
func.func @async_dot(%a: tensor<64x32xbf16>, %b: tensor<32x128xbf16>, %c: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = tessel.dot %a, %b, %c {async} : tensor<64x32xbf16>, tensor<32x128xbf16> -> tensor<64x128xf32>
  %1 = tessel.dot_wait %0 {pending = 1 : i32} : tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}
