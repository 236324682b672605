// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir

// lax.approx_min_k(x, 2, reduction_dimension=0): JAX's ApproxTopK
// custom_call, computed exactly as XLA does on the CPU: an ascending sort of
// x and its iota along dimension 0 by the comparator (LT on x), the first 2
// rows kept.

// CHECK: %[[SORTED:.*]]:2 = brt.sort(%arg0, %{{.*}}) {dimension = 0 : i64, key = 0 : i64, order = "ascending"}
// CHECK-DAG: brt.slice(%[[SORTED]]#0) {limit_indices = array<i64: 2, 6>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<5x6xf32>) -> tensor<2x6xf32>
// CHECK-DAG: brt.slice(%[[SORTED]]#1) {limit_indices = array<i64: 2, 6>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<5x6xi32>) -> tensor<2x6xi32>

"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>) -> tensor<i1>, sym_name = "top_k_lt_f32_comparator"}> ({
  ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
    %4 = "stablehlo.compare"(%arg1, %arg2) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%4) : (tensor<i1>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<5x6xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5x6xi32>
    %1 = "stablehlo.constant"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %3:2 = "stablehlo.custom_call"(%arg0, %0, %2, %1) <{api_version = 1 : i32, backend_config = "", call_target_name = "ApproxTopK", called_computations = [@top_k_lt_f32_comparator], has_side_effect = false}> {mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}} : (tensor<5x6xf32>, tensor<5x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x6xf32>, tensor<2x6xi32>)
    "func.return"(%3#0, %3#1) : (tensor<2x6xf32>, tensor<2x6xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
