// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir
// RUN: sed -e 's/"stablehlo.minimum"(%a4, %a5)/"stablehlo.subtract"(%a4, %a5)/' %s > %t.sub.mlir
// RUN: brt-compile %t.sub.mlir -o %t.sub.brtx --dump-after-each %t.sub
// RUN: FileCheck %s --check-prefix=SUB < %t.sub/00-import.mlir
// RUN: sed -e 's/"stablehlo.maximum"(%a0, %a1)/"stablehlo.maximum"(%a1, %a1)/' %s > %t.same.mlir
// RUN: not brt-compile %t.same.mlir -o %t.same.brtx 2>&1 | FileCheck %s --check-prefix=SAME
// RUN: sed -e 's/"stablehlo.maximum"(%a0, %a1)/"stablehlo.maximum"(%a1, %a1)/' -e '/%0 = "stablehlo.scatter"/s/unique_indices = false/unique_indices = true/' %s > %t.unique.mlir
// RUN: brt-compile %t.unique.mlir -o %t.unique.brtx --dump-after-each %t.unique
// RUN: FileCheck %s --check-prefix=UNIQUE < %t.unique/00-import.mlir

// A scatter body combining the old value and the update with maximum,
// multiply (its operands either way round) or minimum becomes that mode;
// unsigned indices (lax.scatter_max with ui8 indices, lax.gather with ui32)
// are kept as they are. The old value minus the update adds the negated
// update. Any other elementwise body (the maximum of the update with
// itself) is refused by name unless the indices are unique; then a replace
// scatter of trues marks the elements reached, one of the updates spreads
// them, and the body runs on whole tensors under a select.

// CHECK: brt.scatter(%arg0, %arg1, %arg2) {{{.*}}mode = "max"{{.*}} : (tensor<5xf32>, tensor<3x1xui8>, tensor<3xf32>) -> tensor<5xf32>
// CHECK: brt.scatter(%arg0, %arg1, %arg2) {{{.*}}mode = "mul"
// CHECK: brt.scatter(%arg0, %arg1, %arg2) {{{.*}}mode = "min"
// CHECK: brt.gather(%{{.*}}, %arg3) {{.*}} : (tensor<5x4xf32>, tensor<3x1xui32>) -> tensor<3x4xf32>
// SUB: %[[NEG:.*]] = brt.negate(%arg2)
// SUB: brt.scatter(%arg0, %arg1, %[[NEG]]) {{{.*}}mode = "add"
// SAME: scatter computations other than replace, add, multiply, maximum and minimum of the old value and the update, and the old value minus the update, are supported with unique_indices = true only (an elementwise body)
// UNIQUE: %[[MASK:.*]] = brt.scatter({{.*}}) {{{.*}}mode = "replace"{{.*}} : (tensor<5xi1>, tensor<3x1xui8>, tensor<3xi1>) -> tensor<5xi1>
// UNIQUE: %[[SPREAD:.*]] = brt.scatter(%arg0, %arg1, %arg2) {{{.*}}mode = "replace"
// UNIQUE: %[[MAX:.*]] = brt.maximum(%[[SPREAD]], %[[SPREAD]]) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// UNIQUE: brt.select(%[[MASK]], %[[MAX]], %arg0)

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<5xf32>, tensor<3x1xui8>, tensor<3xf32>, tensor<3x1xui32>, tensor<5x4xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<3x4xf32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<5xf32>, %arg1: tensor<3x1xui8>, %arg2: tensor<3xf32>, %arg3: tensor<3x1xui32>, %arg4: tensor<5x4xf32>):
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%a0: tensor<f32>, %a1: tensor<f32>):
      %r = "stablehlo.maximum"(%a0, %a1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<5xf32>, tensor<3x1xui8>, tensor<3xf32>) -> tensor<5xf32>
    %1 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%a2: tensor<f32>, %a3: tensor<f32>):
      %r = "stablehlo.multiply"(%a3, %a2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<5xf32>, tensor<3x1xui8>, tensor<3xf32>) -> tensor<5xf32>
    %2 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%a4: tensor<f32>, %a5: tensor<f32>):
      %r = "stablehlo.minimum"(%a4, %a5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%r) : (tensor<f32>) -> ()
    }) : (tensor<5xf32>, tensor<3x1xui8>, tensor<3xf32>) -> tensor<5xf32>
    %3 = "stablehlo.gather"(%arg4, %arg3) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<5x4xf32>, tensor<3x1xui32>) -> tensor<3x4xf32>
    "func.return"(%0, %1, %2, %3) : (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<3x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
