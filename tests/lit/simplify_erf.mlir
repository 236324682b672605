// RUN: brt-opt %s --brt-simplify | FileCheck %s

// XLA's f32 erf approximation, as torch-mlir writes out chlo.erf: clamp to
// [-4, 4], x * P(x^2) / Q(x^2), clamp to [-1, 1]. It becomes the erf op.
// CHECK-LABEL: func.func @xla_erf
// CHECK-NEXT: %[[E:.*]] = brt.erf(%arg0)
// CHECK-NEXT: return %[[E]]
func.func @xla_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %1 = brt.constant() {value = dense<-4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %3 = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %5 = brt.clamp(%2, %x, %4) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = brt.constant() {value = dense<-2.72614237E-10> : tensor<f32>} : () -> tensor<f32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %9 = brt.multiply(%8, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %10 = brt.constant() {value = dense<2.77068146E-8> : tensor<f32>} : () -> tensor<f32>
  %11 = brt.broadcast_in_dim(%10) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %12 = brt.add(%9, %11) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %13 = brt.multiply(%12, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %14 = brt.constant() {value = dense<-2.10102394E-6> : tensor<f32>} : () -> tensor<f32>
  %15 = brt.broadcast_in_dim(%14) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %16 = brt.add(%13, %15) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %17 = brt.multiply(%16, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %18 = brt.constant() {value = dense<-5.69250624E-5> : tensor<f32>} : () -> tensor<f32>
  %19 = brt.broadcast_in_dim(%18) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %20 = brt.add(%17, %19) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %21 = brt.multiply(%20, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %22 = brt.constant() {value = dense<-7.34990637E-4> : tensor<f32>} : () -> tensor<f32>
  %23 = brt.broadcast_in_dim(%22) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %24 = brt.add(%21, %23) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %25 = brt.multiply(%24, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %26 = brt.constant() {value = dense<-2.954600e-03> : tensor<f32>} : () -> tensor<f32>
  %27 = brt.broadcast_in_dim(%26) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %28 = brt.add(%25, %27) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %29 = brt.multiply(%28, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %30 = brt.constant() {value = dense<-0.0160960332> : tensor<f32>} : () -> tensor<f32>
  %31 = brt.broadcast_in_dim(%30) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %32 = brt.add(%29, %31) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %33 = brt.constant() {value = dense<-1.45660715E-5> : tensor<f32>} : () -> tensor<f32>
  %34 = brt.broadcast_in_dim(%33) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %35 = brt.multiply(%34, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %36 = brt.constant() {value = dense<-2.13374049E-4> : tensor<f32>} : () -> tensor<f32>
  %37 = brt.broadcast_in_dim(%36) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %38 = brt.add(%35, %37) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %39 = brt.multiply(%38, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %40 = brt.constant() {value = dense<-0.00168282702> : tensor<f32>} : () -> tensor<f32>
  %41 = brt.broadcast_in_dim(%40) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %42 = brt.add(%39, %41) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %43 = brt.multiply(%42, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %44 = brt.constant() {value = dense<-0.00737332925> : tensor<f32>} : () -> tensor<f32>
  %45 = brt.broadcast_in_dim(%44) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %46 = brt.add(%43, %45) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %47 = brt.multiply(%46, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %48 = brt.constant() {value = dense<-0.0142647391> : tensor<f32>} : () -> tensor<f32>
  %49 = brt.broadcast_in_dim(%48) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %50 = brt.add(%47, %49) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %51 = brt.multiply(%5, %32) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %52 = brt.divide(%51, %50) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %53 = brt.constant() {value = dense<-1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %54 = brt.broadcast_in_dim(%53) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %55 = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %56 = brt.broadcast_in_dim(%55) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %57 = brt.clamp(%54, %52, %56) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %57 : tensor<4x8xf32>
}

// Another rational function of the same shape (one coefficient differs) stays.
// CHECK-LABEL: func.func @not_erf
// CHECK-NOT: brt.erf(
// CHECK: brt.divide(
func.func @not_erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %1 = brt.constant() {value = dense<-4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %2 = brt.broadcast_in_dim(%1) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %3 = brt.constant() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %4 = brt.broadcast_in_dim(%3) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %5 = brt.clamp(%2, %x, %4) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = brt.multiply(%5, %5) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = brt.constant() {value = dense<-2.5E-10> : tensor<f32>} : () -> tensor<f32>
  %8 = brt.broadcast_in_dim(%7) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %9 = brt.multiply(%8, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %10 = brt.constant() {value = dense<2.77068146E-8> : tensor<f32>} : () -> tensor<f32>
  %11 = brt.broadcast_in_dim(%10) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %12 = brt.add(%9, %11) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %13 = brt.multiply(%12, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %14 = brt.constant() {value = dense<-2.10102394E-6> : tensor<f32>} : () -> tensor<f32>
  %15 = brt.broadcast_in_dim(%14) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %16 = brt.add(%13, %15) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %17 = brt.multiply(%16, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %18 = brt.constant() {value = dense<-5.69250624E-5> : tensor<f32>} : () -> tensor<f32>
  %19 = brt.broadcast_in_dim(%18) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %20 = brt.add(%17, %19) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %21 = brt.multiply(%20, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %22 = brt.constant() {value = dense<-7.34990637E-4> : tensor<f32>} : () -> tensor<f32>
  %23 = brt.broadcast_in_dim(%22) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %24 = brt.add(%21, %23) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %25 = brt.multiply(%24, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %26 = brt.constant() {value = dense<-2.954600e-03> : tensor<f32>} : () -> tensor<f32>
  %27 = brt.broadcast_in_dim(%26) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %28 = brt.add(%25, %27) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %29 = brt.multiply(%28, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %30 = brt.constant() {value = dense<-0.0160960332> : tensor<f32>} : () -> tensor<f32>
  %31 = brt.broadcast_in_dim(%30) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %32 = brt.add(%29, %31) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %33 = brt.constant() {value = dense<-1.45660715E-5> : tensor<f32>} : () -> tensor<f32>
  %34 = brt.broadcast_in_dim(%33) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %35 = brt.multiply(%34, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %36 = brt.constant() {value = dense<-2.13374049E-4> : tensor<f32>} : () -> tensor<f32>
  %37 = brt.broadcast_in_dim(%36) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %38 = brt.add(%35, %37) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %39 = brt.multiply(%38, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %40 = brt.constant() {value = dense<-0.00168282702> : tensor<f32>} : () -> tensor<f32>
  %41 = brt.broadcast_in_dim(%40) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %42 = brt.add(%39, %41) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %43 = brt.multiply(%42, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %44 = brt.constant() {value = dense<-0.00737332925> : tensor<f32>} : () -> tensor<f32>
  %45 = brt.broadcast_in_dim(%44) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %46 = brt.add(%43, %45) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %47 = brt.multiply(%46, %6) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %48 = brt.constant() {value = dense<-0.0142647391> : tensor<f32>} : () -> tensor<f32>
  %49 = brt.broadcast_in_dim(%48) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %50 = brt.add(%47, %49) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %51 = brt.multiply(%5, %32) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %52 = brt.divide(%51, %50) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %53 = brt.constant() {value = dense<-1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %54 = brt.broadcast_in_dim(%53) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %55 = brt.constant() {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %56 = brt.broadcast_in_dim(%55) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4x8xf32>
  %57 = brt.clamp(%54, %52, %56) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %57 : tensor<4x8xf32>
}
