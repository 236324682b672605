// symbolic_pipeline.mlir's program for --target=cuda: fuse-elementwise runs,
// and generate-cuda-kernels gives the fused op a kernel that reads the batch
// "b" from its extent parameters (docs/format.md, 1.7).
// REQUIRES: nvrtc, cuda-providers
// RUN: rm -rf %t && mkdir %t
// RUN: brt-compile %S/symbolic_pipeline.mlir -o %t/cuda.brtx --target=cuda --dump-after-each %t/cuda
// RUN: FileCheck %s < %t/cuda/19-generate-cuda-kernels.mlir

// CHECK: brt.fused_elementwise(%arg0, %arg1) {brt.device = "cuda", brt.generated_kernel = {block_size = 256 : i64,
// CHECK-SAME: source = "{{.*}}float* out, long long in0_d0, long long in0_d1, long long in1_d0, long long out0_d0, long long out0_d1) {{.*}}const long long n = (8LL * out0_d0);
// CHECK-SAME: constants = array<f64: 5.000000e-01>, ops = "add,tanh,multiply"
// CHECK-SAME: -> tensor<?x8xf32, ["b", ""]>
