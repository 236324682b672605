// symbolic_pipeline.mlir's program for --target=cuda: fuse-elementwise runs
// (the CUDA provider interprets a brt.fused_elementwise without generated
// code), generate-cuda-kernels does not (its kernels are not written for
// symbolic sizes), so the fused op has no generated kernel.
// REQUIRES: nvrtc, cuda-providers
// RUN: rm -rf %t && mkdir %t
// RUN: brt-compile %S/symbolic_pipeline.mlir -o %t/cuda.brtx --target=cuda --dump-after-each %t/cuda
// RUN: FileCheck %s --implicit-check-not=brt.generated_kernel < %t/cuda/19-generate-cuda-kernels.mlir

// CHECK: brt.fused_elementwise(%arg0, %arg1) {brt.device = "cuda", constants = array<f64: 5.000000e-01>, ops = "add,tanh,multiply"
// CHECK-SAME: -> tensor<?x8xf32, ["b", ""]>
