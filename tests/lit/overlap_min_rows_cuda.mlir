// overlap_min_rows.mlir's program for --target=cuda: AG+GEMM stays serial
// below 512 rows per rank by default, and --overlap-min-rows=0 fuses it.
// REQUIRES: nvrtc, cuda-providers
// RUN: rm -rf %t && mkdir %t
// RUN: brt-compile %S/overlap_min_rows.mlir -o %t/cuda.brtx --target=cuda --dump-after-each %t/cuda
// RUN: FileCheck %s --check-prefix=SERIAL < %t/cuda/09-fuse-collective-matmul.mlir
// RUN: brt-compile %S/overlap_min_rows.mlir -o %t/cuda0.brtx --target=cuda --overlap-min-rows=0 --dump-after-each %t/cuda0
// RUN: FileCheck %s --check-prefix=FUSED < %t/cuda0/09-fuse-collective-matmul.mlir

// FUSED: brt.all_gather_matmul
// SERIAL-NOT: brt.all_gather_matmul
// SERIAL: brt.all_gather
// SERIAL: brt.dot_general
