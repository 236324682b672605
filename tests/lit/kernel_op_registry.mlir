// RUN: brt-opt %s -split-input-file -verify-diagnostics

// The ops of registry kinds (brt/ops.def) are checked against their rows:
// arity by a trait, attributes by the generated op's verifier.
func.func @wrong_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'brt.add' op takes 2 operands, got 1}}
  %0 = brt.add(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @missing_attribute(%a: tensor<4x3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'brt.transpose' op requires attribute 'permutation'}}
  %0 = brt.transpose(%a) : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @attribute_of_the_wrong_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'brt.reduce' op attribute 'dimensions' failed to satisfy constraint: i64 dense array attribute}}
  %0 = brt.reduce(%a, %a) {dimensions = 0 : i64, reducer = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A kind the registry does not have is a plugin's: left to the runtime.
func.func @plugin_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = brt.kernel "example.frobnicate"(%a) {} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A registry kind is written as its own op, never as brt.kernel.
func.func @registry_kind_as_kernel(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'negate' is a kind of the op registry: write it as its own op, brt.negate}}
  %0 = brt.kernel "negate"(%a) {} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
