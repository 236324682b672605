// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir

// Complex element types import as they are: stablehlo.fft keeps its type
// and lengths, real/imag/complex are the registry's ops, abs of a complex
// number has a real result, and a complex constant keeps both parts.

// CHECK: brt.fft(%arg0) {fft_length = array<i64: 8>, fft_type = "RFFT"} : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
// CHECK: brt.constant() {value = dense<(1.500000e+00,-2.000000e+00)> : tensor<complex<f32>>}
// CHECK: brt.multiply
// CHECK-SAME: -> tensor<2x5xcomplex<f32>>
// CHECK: brt.abs({{.*}}) : (tensor<2x5xcomplex<f32>>) -> tensor<2x5xf32>
// CHECK: brt.real({{.*}}) : (tensor<2x5xcomplex<f32>>) -> tensor<2x5xf32>
// CHECK: brt.imag({{.*}}) : (tensor<2x5xcomplex<f32>>) -> tensor<2x5xf32>
// CHECK: brt.complex({{.*}}) : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xcomplex<f32>>
// CHECK: brt.fft({{.*}}) {fft_length = array<i64: 8>, fft_type = "IRFFT"} : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>

"builtin.module"() ({
"func.func"() <{function_type = (tensor<2x8xf32>) -> (tensor<2x5xf32>, tensor<2x8xf32>), sym_name = "main"}> ({
^bb0(%x: tensor<2x8xf32>):
  %0 = "stablehlo.fft"(%x) <{fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
  %c = "stablehlo.constant"() <{value = dense<(1.5, -2.0)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
  %cb = "stablehlo.broadcast_in_dim"(%c) <{broadcast_dimensions = array<i64>}> : (tensor<complex<f32>>) -> tensor<2x5xcomplex<f32>>
  %1 = "stablehlo.multiply"(%0, %cb) : (tensor<2x5xcomplex<f32>>, tensor<2x5xcomplex<f32>>) -> tensor<2x5xcomplex<f32>>
  %2 = "stablehlo.abs"(%1) : (tensor<2x5xcomplex<f32>>) -> tensor<2x5xf32>
  %3 = "stablehlo.real"(%1) : (tensor<2x5xcomplex<f32>>) -> tensor<2x5xf32>
  %4 = "stablehlo.imag"(%1) : (tensor<2x5xcomplex<f32>>) -> tensor<2x5xf32>
  %5 = "stablehlo.complex"(%3, %4) : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xcomplex<f32>>
  %6 = "stablehlo.fft"(%5) <{fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type IRFFT>}> : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>
  "func.return"(%2, %6) : (tensor<2x5xf32>, tensor<2x8xf32>) -> ()
}) : () -> ()
}) : () -> ()
