// RUN: brt-opt %s --brt-verify --split-input-file --verify-diagnostics

func.func @bad_broadcast(%a: tensor<3x4xf32>, %b: tensor<5xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'add': operand 1 tensor<5xf32> does not broadcast to the result tensor<3x4xf32>}}
  %0 = brt.add(%a, %b) : (tensor<3x4xf32>, tensor<5xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'multiply': operand 1 tensor<4xi32> has the wrong element type}}
  %0 = brt.multiply(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_contraction(%a: tensor<3x4xf32>, %b: tensor<5x2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'dot_general': contracting dimensions of tensor<3x4xf32> and tensor<5x2xf32> do not match}}
  %0 = brt.dot_general(%a, %b) {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @bad_reduce(%a: tensor<3x4xf32>, %z: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{'reduce': result tensor<4xf32> is not tensor<3x4xf32> reduced over the dimensions}}
  %0 = brt.reduce(%a, %z) {dimensions = array<i64: 1>, reducer = "add"} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_reshape(%a: tensor<3x4xf32>) -> tensor<5x2xf32> {
  // expected-error @+1 {{'reshape': tensor<3x4xf32> and tensor<5x2xf32> do not match}}
  %0 = brt.reshape(%a) : (tensor<3x4xf32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}

// -----

// Well-formed ops pass untouched.
func.func @fine(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %p: tensor<2x3xi1>) -> tensor<2x3xf32> {
  %0 = brt.add(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = brt.select(%p, %0, %a) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = brt.transpose(%1) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = brt.transpose(%2) {permutation = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}
