// A JAX program of symbolic shape (jax.export.symbolic_shape("b"): x is
// [b, 8]) through brt-compile's pipeline: fuse-elementwise runs on it and its
// fused op keeps the expression "b". symbolic_pipeline_cuda.mlir compiles it
// for --target=cuda.
// RUN: rm -rf %t && mkdir %t
// RUN: brt-compile %s -o %t/cpu.brtx --dump-after-each %t/cpu
// RUN: FileCheck %s < %t/cpu/15-fuse-elementwise.mlir
// RUN: brt-compile %s -o %t/stats.brtx --stats | FileCheck %s --check-prefix=STATS
// STATS: passes not written for symbolic sizes, not run: fold-batch-norm, channels-last, fuse-collective-matmul, bucket-all-reduce

// CHECK: brt.fused_elementwise(%arg0, %arg1) {constants = array<f64: 5.000000e-01>, ops = "add,tanh,multiply"
// CHECK-SAME: (tensor<?x8xf32, ["b", ""]>, tensor<8xf32>) -> tensor<?x8xf32, ["b", ""]>
"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{brt.name = "x"}, {brt.name = "y"}], function_type = (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<?x8xf32>, %arg4: tensor<8xf32>):
    %12 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %13 = "stablehlo.get_dimension_size"(%arg3) <{dimension = 0 : i64}> : (tensor<?x8xf32>) -> tensor<i32>
    %14 = "stablehlo.compare"(%13, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.custom_call"(%14, %13) <{api_version = 2 : i32, call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "b >= 1"} : (tensor<i1>, tensor<i32>) -> ()
    %15 = "func.call"(%13, %arg3, %arg4) <{callee = @_wrapped_jax_export_main}> : (tensor<i32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    "func.return"(%15) : (tensor<?x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{jax.global_constant = "b"}, {}, {}], function_type = (tensor<i32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "_wrapped_jax_export_main", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i32>, %arg1: tensor<?x8xf32>, %arg2: tensor<8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.constant"() <{value = dense<8> : tensor<1xi32>}> : () -> tensor<1xi32>
    %2 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
    %3 = "stablehlo.reshape"(%arg0) : (tensor<i32>) -> tensor<1xi32>
    %4 = "stablehlo.concatenate"(%3, %1) <{dimension = 0 : i64}> : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %5 = "stablehlo.dynamic_broadcast_in_dim"(%2, %4) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>, tensor<2xi32>) -> tensor<?x8xf32>
    %6 = "stablehlo.add"(%arg1, %5) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %7 = "stablehlo.tanh"(%6) : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %8 = "stablehlo.reshape"(%arg0) : (tensor<i32>) -> tensor<1xi32>
    %9 = "stablehlo.concatenate"(%8, %1) <{dimension = 0 : i64}> : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %10 = "stablehlo.dynamic_broadcast_in_dim"(%0, %9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>, tensor<2xi32>) -> tensor<?x8xf32>
    %11 = "stablehlo.multiply"(%7, %10) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    "func.return"(%11) : (tensor<?x8xf32>) -> ()
  }) : () -> ()
}) {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

