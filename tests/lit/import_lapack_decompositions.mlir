// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir
// RUN: sed -e 's/compute_right = 86/compute_right = 78/' %s > %t.u.mlir
// RUN: not brt-compile %t.u.mlir -o %t.u.brtx 2>&1 | FileCheck %s --check-prefix=UNUSED

// JAX's LAPACK decompositions on the CPU import as the registry's op of the
// same purpose: syevd (uplo U) as eigh with lower 0; gesdd without vectors
// (mode N) as svd whose u and vt are 0x0; geqrf and ungqr as geqrf and
// householder_product; a real geev's eigenvalue parts as real and imag of
// eig's complex eigenvalues, the left eigenvectors it does not compute 0x0;
// gehrd and hetrd drop their info (LAPACK's is 0 on valid arguments: the
// program reads a constant); gtsv keeps its info. Using right eigenvectors geev was
// told not to compute is refused.

// CHECK: %[[EIGH:.*]]:3 = brt.eigh(%arg0) {lower = 0 : i64} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>)
// CHECK: %[[SVD:.*]]:4 = brt.svd(%arg1) {compute_uv = 0 : i64, full_matrices = 0 : i64} : (tensor<5x3xcomplex<f32>>) -> (tensor<3xf32>, tensor<0x0xcomplex<f32>>, tensor<0x0xcomplex<f32>>, tensor<i32>)
// CHECK: %[[QR:.*]]:2 = brt.geqrf(%arg1) : (tensor<5x3xcomplex<f32>>) -> (tensor<5x3xcomplex<f32>>, tensor<3xcomplex<f32>>)
// CHECK: %[[Q:.*]] = brt.householder_product(%[[QR]]#0, %[[QR]]#1) : (tensor<5x3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<5x3xcomplex<f32>>
// CHECK: %[[EIG:.*]]:4 = brt.eig(%arg2) {compute_left = 0 : i64} : (tensor<4x4xf64>) -> (tensor<4xcomplex<f64>>, tensor<0x0xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>)
// CHECK: %[[WR:.*]] = brt.real(%[[EIG]]#0) : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
// CHECK: %[[WI:.*]] = brt.imag(%[[EIG]]#0) : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
// CHECK: %[[HESS:.*]]:2 = brt.hessenberg(%arg3) : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<3xcomplex<f64>>)
// CHECK: %[[ZERO:.*]] = brt.constant() {value = dense<0> : tensor<i32>}
// CHECK: %[[INFO:.*]] = brt.broadcast_in_dim(%[[ZERO]]) {broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<i32>
// CHECK: %[[TRI:.*]]:4 = brt.tridiagonal(%arg3) : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4xf64>, tensor<3xf64>, tensor<3xcomplex<f64>>)
// CHECK: %[[GTSV:.*]]:2 = brt.tridiagonal_solve(%arg4, %arg4, %arg4, %arg5) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<i32>)
// CHECK: return %[[EIGH]]#0, %[[EIGH]]#1, %[[EIGH]]#2, %[[SVD]]#0, %[[SVD]]#3, %[[Q]], %[[WR]], %[[WI]], %[[EIG]]#2, %[[HESS]]#0, %[[INFO]], %[[TRI]]#1, %[[TRI]]#2, %[[GTSV]]#0, %[[GTSV]]#1 :

// UNUSED: lapack_dgeev_ffi's result 3 is used: brt's eig does not compute it

"builtin.module"() ({
"func.func"() <{function_type = (tensor<2x4x4xf32>, tensor<5x3xcomplex<f32>>, tensor<4x4xf64>, tensor<4x4xcomplex<f64>>, tensor<4xf32>, tensor<4x2xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<3xf32>, tensor<i32>, tensor<5x3xcomplex<f32>>, tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>, tensor<4xf64>, tensor<3xf64>, tensor<4x2xf32>, tensor<i32>), sym_name = "main"}> ({
^bb0(%a: tensor<2x4x4xf32>, %b: tensor<5x3xcomplex<f32>>, %c: tensor<4x4xf64>, %d: tensor<4x4xcomplex<f64>>, %dl: tensor<4xf32>, %rhs: tensor<4x2xf32>):
  %0:3 = "stablehlo.custom_call"(%a) <{call_target_name = "lapack_ssyevd_ffi"}> {mhlo.backend_config = {mode = 86 : ui8, uplo = 85 : ui8}} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>)
  %1:5 = "stablehlo.custom_call"(%b) <{call_target_name = "lapack_cgesdd_ffi"}> {mhlo.backend_config = {mode = 78 : ui8}} : (tensor<5x3xcomplex<f32>>) -> (tensor<5x3xcomplex<f32>>, tensor<3xf32>, tensor<5x5xcomplex<f32>>, tensor<3x3xcomplex<f32>>, tensor<i32>)
  %2:2 = "stablehlo.custom_call"(%b) <{call_target_name = "lapack_cgeqrf_ffi"}> {mhlo.backend_config = {}} : (tensor<5x3xcomplex<f32>>) -> (tensor<5x3xcomplex<f32>>, tensor<3xcomplex<f32>>)
  %3 = "stablehlo.custom_call"(%2#0, %2#1) <{call_target_name = "lapack_cungqr_ffi"}> {mhlo.backend_config = {}} : (tensor<5x3xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<5x3xcomplex<f32>>
  %4:5 = "stablehlo.custom_call"(%c) <{call_target_name = "lapack_dgeev_ffi"}> {mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}} : (tensor<4x4xf64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>)
  %5:3 = "stablehlo.custom_call"(%d) <{call_target_name = "lapack_zgehrd_ffi"}> {mhlo.backend_config = {high = 4 : i32, low = 1 : i32}} : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<3xcomplex<f64>>, tensor<i32>)
  %6:5 = "stablehlo.custom_call"(%d) <{call_target_name = "lapack_zhetrd_ffi"}> {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<4x4xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4xf64>, tensor<3xf64>, tensor<3xcomplex<f64>>, tensor<i32>)
  %7:5 = "stablehlo.custom_call"(%dl, %dl, %dl, %rhs) <{call_target_name = "lapack_sgtsv_ffi"}> {mhlo.backend_config = {}} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>, tensor<i32>)
  "func.return"(%0#0, %0#1, %0#2, %1#1, %1#4, %3, %4#0, %4#1, %4#3, %5#0, %5#2, %6#1, %6#2, %7#3, %7#4) : (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2xi32>, tensor<3xf32>, tensor<i32>, tensor<5x3xcomplex<f32>>, tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>, tensor<4xf64>, tensor<3xf64>, tensor<4x2xf32>, tensor<i32>) -> ()
}) : () -> ()
}) : () -> ()
