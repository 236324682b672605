// REQUIRES: nvrtc
// RUN: brt-opt %s --brt-generate-cuda-kernels | FileCheck %s
// RUN: brt-opt %s --brt-generate-cuda-kernels=arch=compute_90 | FileCheck %s --check-prefix=SM90

// A fused elementwise op on cuda gets its CUDA C and PTX attached; the same op
// on the CPU, and kinds the generator does not take, get none.
// CHECK-LABEL: func.func @fused_on_cuda
// CHECK: brt.fused_elementwise
// CHECK-SAME: brt.generated_kernel = {block_size = 256 : i64,
// CHECK-SAME: image = "{{.*}}.entry brt_kernel_0
// CHECK-SAME: name = "brt_kernel_0"
// CHECK-SAME: source = "{{.*}}tanh(
// CHECK-SAME: target = "ptx:compute_80"
// CHECK: brt.fused_elementwise
// CHECK-NOT: brt.generated_kernel
// CHECK-SAME: brt.device = "cpu"
// CHECK: brt.exponential
// CHECK-NOT: brt.generated_kernel
// SM90: target = "ptx:compute_90"
func.func @fused_on_cuda(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %f = brt.fused_elementwise(%a, %b) {brt.device = "cuda", ops = "multiply,tanh", program = array<i64: 0, 1, -1, 2, -1, -1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = brt.fused_elementwise(%a, %b) {brt.device = "cpu", ops = "multiply,tanh", program = array<i64: 0, 1, -1, 2, -1, -1>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = brt.exponential(%a) {brt.device = "cuda"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %f, %g, %e : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// A row reduction over an empty row still writes every output element (the
// init): the kernel loops over the 4 kept rows, not over numel / row = 0.
// CHECK-LABEL: func.func @reduce_empty_rows
// CHECK: brt.reduce
// CHECK-SAME: brt.generated_kernel = {block_size = 256 : i64,
// CHECK-SAME: source = "{{.*}}row < (4LL); row += gridDim.x{{.*}}j < (0LL);
func.func @reduce_empty_rows(%a: tensor<4x0xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  %r = brt.reduce(%a, %init) {brt.device = "cuda", dimensions = array<i64: 1>, reducer = "add"} : (tensor<4x0xf32>, tensor<f32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Over symbolic shapes the kernel takes every operand's and result's extents
// after its buffers and reads the symbolic ones from them; static ones stay
// literals.
// CHECK-LABEL: func.func @symbolic_extents
// CHECK: brt.fused_elementwise
// CHECK-SAME: source = "{{.*}}float* out, long long in0_d0, long long in0_d1, long long in1_d0, long long out0_d0, long long out0_d1) {{.*}}const long long n = (8LL * out0_d0);{{.*}}o0 += (r % out0_d0) * (8LL);
// CHECK: brt.reduce
// CHECK-SAME: source = "{{.*}}long long in0_d0, long long in0_d1, long long out0_d0) {{.*}}row < (1LL * in0_d0);{{.*}}j < (8LL);
func.func @symbolic_extents(%a: tensor<?x8xf32, ["b", ""]>, %b: tensor<8xf32>, %init: tensor<f32>) -> (tensor<?x8xf32, ["b", ""]>, tensor<?xf32, ["b"]>) {
  %f = brt.fused_elementwise(%a, %b) {brt.device = "cuda", ops = "multiply,tanh", program = array<i64: 0, 1, -1, 2, -1, -1>} : (tensor<?x8xf32, ["b", ""]>, tensor<8xf32>) -> tensor<?x8xf32, ["b", ""]>
  %r = brt.reduce(%f, %init) {brt.device = "cuda", dimensions = array<i64: 1>, reducer = "add"} : (tensor<?x8xf32, ["b", ""]>, tensor<f32>) -> tensor<?xf32, ["b"]>
  return %f, %r : tensor<?x8xf32, ["b", ""]>, tensor<?xf32, ["b"]>
}
