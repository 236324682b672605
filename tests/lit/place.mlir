// The cuda and nccl plugins say which kinds run on CUDA: without them (a
// build with no CUDA toolkit) only the CPU placement is checked.
// RUN: %if cuda-providers %{ brt-opt %s --brt-place=target=cuda | FileCheck %s %}
// RUN: brt-opt %s --brt-place=target=cpu | FileCheck %s --check-prefix=CPU

// A kind without a CUDA kernel (here one the table does not know) runs on
// the CPU between two copies; everything else, and the function's results,
// stay on the device.
// CHECK-LABEL: func.func @pool_between_cuda_ops
// CHECK: %[[E:.*]] = brt.exponential(%arg0) {brt.device = "cuda"}
// CHECK: %[[TOCPU:.*]] = brt.copy(%[[E]]) {brt.device = "cpu"}
// CHECK: %[[P:.*]] = brt.kernel "host_only_pool"(%[[TOCPU]], %{{.*}}) {{.*}} {brt.device = "cpu"}
// CHECK: %[[BACK:.*]] = brt.copy(%[[P]]) {brt.device = "cuda"}
// CHECK: brt.tanh(%[[BACK]]) {brt.device = "cuda"}
// CPU-NOT: brt.copy
// CPU-NOT: "cuda"
func.func @pool_between_cuda_ops(%x: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  %e = brt.exponential(%x) : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %i = brt.constant() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %p = brt.kernel "host_only_pool"(%e, %i) {reducer = "max", window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<1x4x4x1xf32>, tensor<f32>) -> tensor<1x2x2x1xf32>
  %t = brt.tanh(%p) : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %t : tensor<1x2x2x1xf32>
}

// brt's fused kinds run on CUDA too: no copies around them.
// CHECK-LABEL: func.func @fused_kinds_stay_on_cuda
// CHECK-NOT: brt.copy
// CHECK: brt.conv(%arg0, %arg1) {brt.device = "cuda"}
// CHECK-NOT: brt.copy
// CHECK: brt.softmax
// CHECK-SAME: brt.device = "cuda"

func.func @fused_kinds_stay_on_cuda(%x: tensor<1x4x4x1xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32> {
  %c = brt.conv(%x, %w) : (tensor<1x4x4x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x1xf32>
  %s = brt.softmax(%c) {axis = 3 : i64} : (tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  return %s : tensor<1x4x4x1xf32>
}

// A kind CUDA runs, on dtypes it does not: an iota of complex numbers runs on
// the CPU and is copied to the device; the complex multiply, the magnitude
// of a complex number and a complex dot_general stay there.
// CHECK-LABEL: func.func @dtypes_cuda_lacks_stay_on_the_cpu
// CHECK: %[[I:.*]] = brt.iota() {brt.device = "cpu"
// CHECK: %[[TOCUDA:.*]] = brt.copy(%[[I]]) {brt.device = "cuda"}
// CHECK: %[[M:.*]] = brt.multiply(%[[TOCUDA]], %arg0) {brt.device = "cuda"}
// CHECK-NOT: brt.copy
// CHECK: brt.abs(%[[M]]) {brt.device = "cuda"}
// CHECK-NOT: brt.copy
// CHECK: brt.dot_general(%[[M]], %[[M]]) {brt.device = "cuda"
func.func @dtypes_cuda_lacks_stay_on_the_cpu(%z: tensor<4x4xcomplex<f32>>) -> (tensor<4x4xf32>, tensor<4x4xcomplex<f32>>) {
  %i = brt.iota() {iota_dimension = 0 : i64} : () -> tensor<4x4xcomplex<f32>>
  %m = brt.multiply(%i, %z) : (tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
  %a = brt.abs(%m) : (tensor<4x4xcomplex<f32>>) -> tensor<4x4xf32>
  %d = brt.dot_general(%m, %m) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
  return %a, %d : tensor<4x4xf32>, tensor<4x4xcomplex<f32>>
}
