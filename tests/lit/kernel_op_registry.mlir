// RUN: brt-opt %s -split-input-file -verify-diagnostics

// brt.kernel ops of a registry kind (brt/ops.def) are checked against it.
func.func @wrong_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'add' takes 2 operands, got 1}}
  %0 = brt.kernel "add"(%a) {} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @missing_attribute(%a: tensor<4x3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'transpose' needs attribute 'permutation'}}
  %0 = brt.kernel "transpose"(%a) {} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @attribute_of_the_wrong_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'reduce' attribute 'dimensions' must be an i64 array}}
  %0 = brt.kernel "reduce"(%a, %a) {dimensions = 0 : i64, reducer = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A kind the registry does not have is a plugin's: left to the runtime.
func.func @plugin_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = brt.kernel "example.frobnicate"(%a) {} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
