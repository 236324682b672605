// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir
// RUN: sed -e 's/dense<-2147483648> : tensor<i32>/dense<0> : tensor<i32>/' %s > %t.i32.mlir
// RUN: not brt-compile %t.i32.mlir -o %t.i32.brtx 2>&1 | FileCheck %s --check-prefix=I32
// RUN: sed -e 's/dense<255> : tensor<ui8>/dense<127> : tensor<ui8>/' %s > %t.ui8.mlir
// RUN: not brt-compile %t.ui8.mlir -o %t.ui8.brtx 2>&1 | FileCheck %s --check-prefix=UI8
// RUN: sed -e 's/dense<false> : tensor<i1>/dense<true> : tensor<i1>/' %s > %t.i1.mlir
// RUN: not brt-compile %t.i1.mlir -o %t.i1.brtx 2>&1 | FileCheck %s --check-prefix=I1

// jnp.argmax / argmin's two-operand reduce on integers and bool, with the
// init value the type's minimum (argmax) or maximum (argmin): torch-mlir's
// torch.argmax on i32 (CLIP's pooling; compare GE, select, minimum of the
// indices among equals; i64 indices), JAX's argmin on ui8 (init 255) and
// argmax on i1 (init false), both with i32 indices. Each becomes a max (min)
// reduce, an EQ compare against it (no NaN test: integers have none), a
// select of the indices and a min reduce. An init that max (min) does not
// start from -- 0 for i32 argmax, or torch-mlir's signed bounds on ui8 (127
// for argmin) and i1 (true for argmax) -- is refused, naming the dtype.

// CHECK-LABEL: func.func @main
// CHECK: %[[M0:.*]] = brt.reduce(%arg0, %{{.*}}) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<2x8xi32>, tensor<i32>) -> tensor<2xi32>
// CHECK: %[[B0:.*]] = brt.broadcast_in_dim(%[[M0]]) {broadcast_dimensions = array<i64: 0>} : (tensor<2xi32>) -> tensor<2x8xi32>
// CHECK-NEXT: %[[EQ0:.*]] = brt.compare(%arg0, %[[B0]]) {comparison_direction = "EQ"} : (tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8xi1>
// CHECK-NOT: brt.or
// CHECK: %[[S0:.*]] = brt.select(%[[EQ0]], %{{.*}}, %{{.*}}) : (tensor<2x8xi1>, tensor<2x8xi64>, tensor<i64>) -> tensor<2x8xi64>
// CHECK: brt.reduce(%[[S0]], %{{.*}}) {dimensions = array<i64: 1>, reducer = "min"} : (tensor<2x8xi64>, tensor<i64>) -> tensor<2xi64>
// CHECK: %[[M1:.*]] = brt.reduce(%arg1, %{{.*}}) {dimensions = array<i64: 0>, reducer = "min"} : (tensor<3x4xui8>, tensor<ui8>) -> tensor<4xui8>
// CHECK: brt.compare(%arg1, %{{.*}}) {comparison_direction = "EQ"} : (tensor<3x4xui8>, tensor<3x4xui8>) -> tensor<3x4xi1>
// CHECK-NOT: brt.or
// CHECK: brt.reduce(%{{.*}}, %{{.*}}) {dimensions = array<i64: 0>, reducer = "min"} : (tensor<3x4xi32>, tensor<i32>) -> tensor<4xi32>
// CHECK: brt.reduce(%arg2, %{{.*}}) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<2x5xi1>, tensor<i1>) -> tensor<2xi1>
// CHECK: brt.compare(%arg2, %{{.*}}) {comparison_direction = "EQ"} : (tensor<2x5xi1>, tensor<2x5xi1>) -> tensor<2x5xi1>
// CHECK-NOT: brt.or
// CHECK: brt.reduce(%{{.*}}, %{{.*}}) {dimensions = array<i64: 1>, reducer = "min"} : (tensor<2x5xi32>, tensor<i32>) -> tensor<2xi32>
// I32: stablehlo.reduce computing argmax on i32 is supported with the inits (-2147483648, 0): the type's minimum and index 0
// UI8: stablehlo.reduce computing argmin on ui8 is supported with the inits (255, 0): the type's maximum and index 0
// I1: stablehlo.reduce computing argmax on i1 is supported with the inits (false, 0): the type's minimum and index 0

"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x8xi32>, tensor<3x4xui8>, tensor<2x5xi1>) -> (tensor<2xi64>, tensor<4xi32>, tensor<2xi32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x8xi32>, %arg1: tensor<3x4xui8>, %arg2: tensor<2x5xi1>):
    %0 = "stablehlo.constant"() <{value = dense<-2147483648> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %2 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x8xi64>
    %3:2 = "stablehlo.reduce"(%arg0, %2, %0, %1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%t0: tensor<i32>, %t1: tensor<i64>, %t2: tensor<i32>, %t3: tensor<i64>):
      %4 = "stablehlo.compare"(%t0, %t2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %5 = "stablehlo.select"(%4, %t0, %t2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %6 = "stablehlo.compare"(%t0, %t2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = "stablehlo.minimum"(%t1, %t3) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %8 = "stablehlo.select"(%4, %t1, %t3) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
      %9 = "stablehlo.select"(%6, %7, %8) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
      "stablehlo.return"(%5, %9) : (tensor<i32>, tensor<i64>) -> ()
    }) : (tensor<2x8xi32>, tensor<2x8xi64>, tensor<i32>, tensor<i64>) -> (tensor<2xi32>, tensor<2xi64>)
    %10 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3x4xi32>
    %11 = "stablehlo.constant"() <{value = dense<255> : tensor<ui8>}> : () -> tensor<ui8>
    %12 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %13:2 = "stablehlo.reduce"(%arg1, %10, %11, %12) <{dimensions = array<i64: 0>}> ({
    ^bb0(%u0: tensor<ui8>, %u1: tensor<i32>, %u2: tensor<ui8>, %u3: tensor<i32>):
      %14 = "stablehlo.compare"(%u0, %u2) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
      %15 = "stablehlo.compare"(%u0, %u0) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
      %16 = "stablehlo.or"(%14, %15) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %17 = "stablehlo.compare"(%u0, %u2) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
      %18 = "stablehlo.compare"(%u1, %u3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %19 = "stablehlo.and"(%17, %18) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %20 = "stablehlo.or"(%16, %19) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %21 = "stablehlo.select"(%16, %u0, %u2) : (tensor<i1>, tensor<ui8>, tensor<ui8>) -> tensor<ui8>
      %22 = "stablehlo.select"(%20, %u1, %u3) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%21, %22) : (tensor<ui8>, tensor<i32>) -> ()
    }) : (tensor<3x4xui8>, tensor<3x4xi32>, tensor<ui8>, tensor<i32>) -> (tensor<4xui8>, tensor<4xi32>)
    %23 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x5xi32>
    %24 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %25 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %26:2 = "stablehlo.reduce"(%arg2, %23, %24, %25) <{dimensions = array<i64: 1>}> ({
    ^bb0(%b0: tensor<i1>, %b1: tensor<i32>, %b2: tensor<i1>, %b3: tensor<i32>):
      %27 = "stablehlo.compare"(%b0, %b2) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %28 = "stablehlo.compare"(%b0, %b0) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %29 = "stablehlo.or"(%27, %28) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %30 = "stablehlo.compare"(%b0, %b2) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %31 = "stablehlo.compare"(%b1, %b3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %32 = "stablehlo.and"(%30, %31) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %33 = "stablehlo.or"(%29, %32) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %34 = "stablehlo.select"(%29, %b0, %b2) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
      %35 = "stablehlo.select"(%33, %b1, %b3) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%34, %35) : (tensor<i1>, tensor<i32>) -> ()
    }) : (tensor<2x5xi1>, tensor<2x5xi32>, tensor<i1>, tensor<i32>) -> (tensor<2xi1>, tensor<2xi32>)
    "func.return"(%3#1, %13#1, %26#1) : (tensor<2xi64>, tensor<4xi32>, tensor<2xi32>) -> ()
  }) : () -> ()
}) : () -> ()
