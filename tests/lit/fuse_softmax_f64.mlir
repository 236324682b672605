// RUN: brt-opt %s --brt-fuse-softmax=target=cpu | FileCheck %s --check-prefix=CPU
// RUN: brt-opt %s --brt-fuse-softmax=target=cuda | FileCheck %s --check-prefix=CUDA

// An f64 softmax: the CPU's brt.softmax takes f32 and bf16 only, so for the
// CPU the ops stay (an executable with it fused did not load); CUDA's takes
// f64. (f16 likewise.)
// CPU-LABEL: func.func @softmax_f64
// CPU-NOT: brt.softmax
// CUDA: brt.softmax(%arg0) {axis = 1 : i64}
func.func @softmax_f64(%arg0: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = brt.constant() {value = dense<0xFFF0000000000000> : tensor<f64>} : () -> tensor<f64>
  %1 = brt.reduce(%arg0, %0) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<2x3xf64>, tensor<f64>) -> tensor<2xf64>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf64>) -> tensor<2x3xf64>
  %3 = brt.subtract(%arg0, %2) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  %4 = brt.exponential(%3) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %5 = brt.constant() {value = dense<0.000000e+00> : tensor<f64>} : () -> tensor<f64>
  %6 = brt.reduce(%4, %5) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<2x3xf64>, tensor<f64>) -> tensor<2xf64>
  %7 = brt.broadcast_in_dim(%6) {broadcast_dimensions = array<i64: 0>} : (tensor<2xf64>) -> tensor<2x3xf64>
  %8 = brt.divide(%4, %7) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  return %8 : tensor<2x3xf64>
}
