// RUN: rm -rf %t %t.static && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir
// RUN: brt-compile %S/import_loops_and_conv_gradients.mlir -o %t.static.brtx --unroll-max-ops=0 --dump-after-each %t.static
// RUN: FileCheck %s --check-prefix=STATIC < %t.static/00-import.mlir

// Made by brt.export_stablehlo from
//   r = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.tanh(c[1]) * y), (0, x))
//   s = lax.cond(p, lambda: jnp.sin(x), lambda: y * 2.0)
// A loop whose trip count is an input, and a branch on an input: both stay
// control flow, their regions functions of the module after @main, named by
// position. JAX carries the loop's constants (n, y): the body returns them
// unchanged, so they are read by the regions, not carried. The body's
// carried arguments are written in place by its results. The branches read
// x and y from around the case, as arguments.

// CHECK: func.func @main(
// CHECK: %[[ZERO:.*]] = brt.constant() {value = dense<0> : tensor<i32>}
// CHECK: %[[LOOP:.*]]:2 = brt.while(%[[ZERO]], %arg1, %arg0, %arg2) {body = 2 : i64, cond = 1 : i64} : (tensor<i32>, tensor<4xf32>, tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
// CHECK: %[[INDEX:.*]] = brt.convert(%arg3) : (tensor<i1>) -> tensor<i32>
// CHECK: %[[CASE:.*]] = brt.case(%[[INDEX]], %arg2, %arg1) {branches = array<i64: 3, 4>}
// CHECK: return %[[LOOP]]#1, %[[CASE]]
// CHECK: func.func @while0.cond(%arg0: tensor<i32>, %arg1: tensor<4xf32>, %arg2: tensor<i32>, %arg3: tensor<4xf32>) -> tensor<i1> attributes {brt.region}
// CHECK: brt.compare(%{{.*}}, %arg2) {comparison_direction = "LT"}
// CHECK: func.func @while0.body(%arg0: tensor<i32> {brt.aliasing_output = 0 : i64}, %arg1: tensor<4xf32> {brt.aliasing_output = 1 : i64}, %arg2: tensor<i32>, %arg3: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) attributes {brt.region}
// CHECK: %[[T:.*]] = brt.tanh(%arg1)
// CHECK: brt.multiply(%[[T]], %arg3)
// CHECK: func.func @case1.branch0(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> attributes {brt.region}
// CHECK: brt.multiply(%arg0,
// CHECK: func.func @case1.branch1(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> attributes {brt.region}
// CHECK: brt.sine(%arg1)

// The same fori_loop of 3 trips that is unrolled by default runs as a loop
// when nothing may be unrolled.
// STATIC: brt.while({{.*}}) {body = 2 : i64, cond = 1 : i64}
// STATIC: func.func @while0.cond(
// STATIC: func.func @while0.body(
// STATIC: brt.tanh(

"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{brt.name = "n"}, {brt.name = "x"}, {brt.name = "y"}, {brt.name = "p"}], function_type = (tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<i32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<i1>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1:4 = "stablehlo.while"(%arg0, %arg2, %0, %arg1) ({
    ^bb0(%arg8: tensor<i32>, %arg9: tensor<4xf32>, %arg10: tensor<i32>, %arg11: tensor<4xf32>):
      %12 = "stablehlo.convert"(%arg10) : (tensor<i32>) -> tensor<i32>
      %13 = "stablehlo.compare"(%12, %arg8) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%13) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg4: tensor<i32>, %arg5: tensor<4xf32>, %arg6: tensor<i32>, %arg7: tensor<4xf32>):
      %8 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %9 = "stablehlo.add"(%arg6, %8) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %10 = "stablehlo.tanh"(%arg7) : (tensor<4xf32>) -> tensor<4xf32>
      %11 = "stablehlo.multiply"(%10, %arg5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%arg4, %arg5, %9, %11) : (tensor<i32>, tensor<4xf32>, tensor<i32>, tensor<4xf32>) -> ()
    }) : (tensor<i32>, tensor<4xf32>, tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>, tensor<i32>, tensor<4xf32>)
    %2 = "stablehlo.convert"(%arg3) : (tensor<i1>) -> tensor<i32>
    %3 = "stablehlo.case"(%2) ({
      %5 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
      %7 = "stablehlo.multiply"(%arg2, %6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%7) : (tensor<4xf32>) -> ()
    }, {
      %4 = "stablehlo.sine"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%4) : (tensor<4xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4xf32>
    "func.return"(%1#3, %3) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()

