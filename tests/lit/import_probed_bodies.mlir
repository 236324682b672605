// RUN: rm -rf %t && brt-compile %s -o %t.brtx --dump-after-each %t
// RUN: FileCheck %s < %t/00-import.mlir
// RUN: sed -e 's/\(%117 = .*comparison_direction \)GT/\1LT/' %s > %t.mixed_order.mlir
// RUN: not brt-compile %t.mixed_order.mlir -o %t.mixed_order.brtx 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: sed -e 's/%41 = "stablehlo.log_plus_one"/%41 = "stablehlo.log"/' %s > %t.log.mlir
// RUN: not brt-compile %t.log.mlir -o %t.log.brtx 2>&1 | FileCheck %s --check-prefix=LOG

// Bodies JAX writes (jax.jit(f).lower(...), generic form): lax.reduce_xor on
// i32 and bool; reduce_max and reduce_min of complex numbers, written as
// compares of the real and imaginary parts and selects, taken as max and min
// (ordered lexicographically) by running them on probe values;
// lax.cumlogsumexp's logaddexp bodies, f32 and complex; a complex sort, by
// the real and then the imaginary part as keys of their own; a complex
// scatter_max with duplicate indices. A complex body ordering the real part
// descending and the imaginary part ascending is neither max nor min, and a
// logaddexp with log in place of log1p is no logaddexp: both refused.

// CHECK: brt.reduce(%arg0, %{{.*}}) {dimensions = array<i64: 1>, reducer = "xor"} : (tensor<3x4xi32>
// CHECK: brt.reduce(%arg1, %{{.*}}) {dimensions = array<i64: 1>, reducer = "xor"} : (tensor<3x4xi1>
// CHECK: brt.reduce(%arg2, %{{.*}}) {dimensions = array<i64: 1>, reducer = "max"} : (tensor<3x4xcomplex<f32>>
// CHECK: brt.reduce(%arg2, %{{.*}}) {dimensions = array<i64: 1>, reducer = "min"} : (tensor<3x4xcomplex<f32>>
// CHECK: brt.reduce_window(%arg3, %{{.*}}) {{{.*}}reducer = "logaddexp"{{.*}} : (tensor<3x4xf32>
// CHECK: brt.reduce_window(%arg2, %{{.*}}) {{{.*}}reducer = "logaddexp"{{.*}} : (tensor<3x4xcomplex<f32>>
// CHECK: %[[RE:.*]] = brt.real(%arg2)
// CHECK: %[[IM:.*]] = brt.imag(%arg2)
// CHECK: brt.sort(%arg2, %[[RE]], %[[IM]]) {dimension = 1 : i64, key = 1 : i64, order = "ascending", tie_keys = array<i64: 2, 0, 0>}
// CHECK: brt.scatter(%arg2, %arg4, %arg5) {{{.*}}mode = "max"{{.*}} : (tensor<3x4xcomplex<f32>>
// ORDER: reduce body is not a single add/multiply/maximum/minimum/and/or/xor, the maximum or minimum of complex numbers, or a logaddexp
// LOG: reduce_window body is not a single add/multiply/maximum/minimum/and/or/xor

"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}, {}], function_type = (tensor<3x4xi32>, tensor<3x4xi1>, tensor<3x4xcomplex<f32>>, tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xcomplex<f32>>) -> (tensor<3xi32>, tensor<3xi1>, tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>, tensor<3x4xf32>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}, {jax.result_info = "result[7]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg6: tensor<3x4xi32>, %arg7: tensor<3x4xi1>, %arg8: tensor<3x4xcomplex<f32>>, %arg9: tensor<3x4xf32>, %arg10: tensor<2x1xi32>, %arg11: tensor<2x4xcomplex<f32>>):
    %44 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %45 = "stablehlo.reduce"(%arg6, %44) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg22: tensor<i32>, %arg23: tensor<i32>):
      %121 = "stablehlo.xor"(%arg22, %arg23) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%121) : (tensor<i32>) -> ()
    }) : (tensor<3x4xi32>, tensor<i32>) -> tensor<3xi32>
    %46 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %47 = "stablehlo.reduce"(%arg7, %46) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg20: tensor<i1>, %arg21: tensor<i1>):
      %120 = "stablehlo.xor"(%arg20, %arg21) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%120) : (tensor<i1>) -> ()
    }) : (tensor<3x4xi1>, tensor<i1>) -> tensor<3xi1>
    %48 = "stablehlo.constant"() <{value = dense<(0xFF800000,0.000000e+00)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
    %49 = "stablehlo.reduce"(%arg8, %48) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg18: tensor<complex<f32>>, %arg19: tensor<complex<f32>>):
      %111 = "stablehlo.real"(%arg18) : (tensor<complex<f32>>) -> tensor<f32>
      %112 = "stablehlo.real"(%arg19) : (tensor<complex<f32>>) -> tensor<f32>
      %113 = "stablehlo.compare"(%111, %112) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %114 = "stablehlo.compare"(%111, %112) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %115 = "stablehlo.imag"(%arg18) : (tensor<complex<f32>>) -> tensor<f32>
      %116 = "stablehlo.imag"(%arg19) : (tensor<complex<f32>>) -> tensor<f32>
      %117 = "stablehlo.compare"(%115, %116) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %118 = "stablehlo.select"(%113, %117, %114) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
      %119 = "stablehlo.select"(%118, %arg18, %arg19) : (tensor<i1>, tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      "stablehlo.return"(%119) : (tensor<complex<f32>>) -> ()
    }) : (tensor<3x4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    %50 = "stablehlo.constant"() <{value = dense<(0x7F800000,0.000000e+00)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
    %51 = "stablehlo.reduce"(%arg8, %50) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg16: tensor<complex<f32>>, %arg17: tensor<complex<f32>>):
      %102 = "stablehlo.real"(%arg16) : (tensor<complex<f32>>) -> tensor<f32>
      %103 = "stablehlo.real"(%arg17) : (tensor<complex<f32>>) -> tensor<f32>
      %104 = "stablehlo.compare"(%102, %103) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %105 = "stablehlo.compare"(%102, %103) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %106 = "stablehlo.imag"(%arg16) : (tensor<complex<f32>>) -> tensor<f32>
      %107 = "stablehlo.imag"(%arg17) : (tensor<complex<f32>>) -> tensor<f32>
      %108 = "stablehlo.compare"(%106, %107) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %109 = "stablehlo.select"(%104, %108, %105) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
      %110 = "stablehlo.select"(%109, %arg16, %arg17) : (tensor<i1>, tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      "stablehlo.return"(%110) : (tensor<complex<f32>>) -> ()
    }) : (tensor<3x4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3xcomplex<f32>>
    %52 = "func.call"(%arg9) <{callee = @cumlogsumexp}> : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %53 = "func.call"(%arg8) <{callee = @cumlogsumexp_0}> : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
    %54 = "stablehlo.sort"(%arg8) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg14: tensor<complex<f32>>, %arg15: tensor<complex<f32>>):
      %65 = "stablehlo.real"(%arg14) : (tensor<complex<f32>>) -> tensor<f32>
      %66 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %67 = "stablehlo.compare"(%65, %66) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %68 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %69 = "stablehlo.select"(%67, %68, %65) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %70 = "stablehlo.compare"(%65, %65) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %71 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %72 = "stablehlo.select"(%70, %71, %69) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %73 = "stablehlo.imag"(%arg14) : (tensor<complex<f32>>) -> tensor<f32>
      %74 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %75 = "stablehlo.compare"(%73, %74) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %76 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %77 = "stablehlo.select"(%75, %76, %73) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %78 = "stablehlo.compare"(%73, %73) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %79 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %80 = "stablehlo.select"(%78, %79, %77) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %81 = "stablehlo.real"(%arg15) : (tensor<complex<f32>>) -> tensor<f32>
      %82 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %83 = "stablehlo.compare"(%81, %82) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %84 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %85 = "stablehlo.select"(%83, %84, %81) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %86 = "stablehlo.compare"(%81, %81) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %87 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %88 = "stablehlo.select"(%86, %87, %85) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %89 = "stablehlo.imag"(%arg15) : (tensor<complex<f32>>) -> tensor<f32>
      %90 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %91 = "stablehlo.compare"(%89, %90) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %92 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %93 = "stablehlo.select"(%91, %92, %89) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %94 = "stablehlo.compare"(%89, %89) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %95 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %96 = "stablehlo.select"(%94, %95, %93) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %97 = "stablehlo.compare"(%80, %96) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %98 = "stablehlo.compare"(%72, %88) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %99 = "stablehlo.compare"(%72, %88) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %100 = "stablehlo.and"(%99, %97) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %101 = "stablehlo.or"(%98, %100) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%101) : (tensor<i1>) -> ()
    }) : (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
    %55 = "stablehlo.scatter"(%arg8, %arg10, %arg11) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg12: tensor<complex<f32>>, %arg13: tensor<complex<f32>>):
      %56 = "stablehlo.real"(%arg12) : (tensor<complex<f32>>) -> tensor<f32>
      %57 = "stablehlo.real"(%arg13) : (tensor<complex<f32>>) -> tensor<f32>
      %58 = "stablehlo.compare"(%56, %57) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %59 = "stablehlo.compare"(%56, %57) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %60 = "stablehlo.imag"(%arg12) : (tensor<complex<f32>>) -> tensor<f32>
      %61 = "stablehlo.imag"(%arg13) : (tensor<complex<f32>>) -> tensor<f32>
      %62 = "stablehlo.compare"(%60, %61) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %63 = "stablehlo.select"(%58, %62, %59) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
      %64 = "stablehlo.select"(%63, %arg12, %arg13) : (tensor<i1>, tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      "stablehlo.return"(%64) : (tensor<complex<f32>>) -> ()
    }) : (tensor<3x4xcomplex<f32>>, tensor<2x1xi32>, tensor<2x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>
    "func.return"(%45, %47, %49, %51, %52, %53, %54, %55) : (tensor<3xi32>, tensor<3xi1>, tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>, tensor<3x4xf32>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>, tensor<3x4xcomplex<f32>>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xf32>) -> tensor<3x4xf32>, sym_name = "cumlogsumexp", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3x4xf32>):
    %32 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %33 = "stablehlo.reduce_window"(%arg3, %32) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %34 = "stablehlo.maximum"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %35 = "stablehlo.subtract"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %36 = "stablehlo.compare"(%35, %35) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %37 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %38 = "stablehlo.abs"(%35) : (tensor<f32>) -> tensor<f32>
      %39 = "stablehlo.negate"(%38) : (tensor<f32>) -> tensor<f32>
      %40 = "stablehlo.exponential"(%39) : (tensor<f32>) -> tensor<f32>
      %41 = "stablehlo.log_plus_one"(%40) : (tensor<f32>) -> tensor<f32>
      %42 = "stablehlo.add"(%34, %41) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %43 = "stablehlo.select"(%36, %37, %42) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%43) : (tensor<f32>) -> ()
    }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
    "func.return"(%33) : (tensor<3x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x4xcomplex<f32>>) -> tensor<3x4xcomplex<f32>>, sym_name = "cumlogsumexp_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x4xcomplex<f32>>):
    %0 = "stablehlo.constant"() <{value = dense<(0xFF800000,0.000000e+00)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<complex<f32>>, %arg2: tensor<complex<f32>>):
      %2 = "stablehlo.real"(%arg1) : (tensor<complex<f32>>) -> tensor<f32>
      %3 = "stablehlo.real"(%arg2) : (tensor<complex<f32>>) -> tensor<f32>
      %4 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %5 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.imag"(%arg1) : (tensor<complex<f32>>) -> tensor<f32>
      %7 = "stablehlo.imag"(%arg2) : (tensor<complex<f32>>) -> tensor<f32>
      %8 = "stablehlo.compare"(%6, %7) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %9 = "stablehlo.select"(%4, %8, %5) : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
      %10 = "stablehlo.select"(%9, %arg1, %arg2) : (tensor<i1>, tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      %11 = "stablehlo.add"(%arg1, %arg2) : (tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      %12 = "stablehlo.constant"() <{value = dense<(2.000000e+00,0.000000e+00)> : tensor<complex<f32>>}> : () -> tensor<complex<f32>>
      %13 = "stablehlo.multiply"(%10, %12) : (tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      %14 = "stablehlo.subtract"(%11, %13) : (tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      %15 = "stablehlo.exponential"(%14) : (tensor<complex<f32>>) -> tensor<complex<f32>>
      %16 = "stablehlo.log_plus_one"(%15) : (tensor<complex<f32>>) -> tensor<complex<f32>>
      %17 = "stablehlo.add"(%10, %16) : (tensor<complex<f32>>, tensor<complex<f32>>) -> tensor<complex<f32>>
      %18 = "stablehlo.real"(%17) : (tensor<complex<f32>>) -> tensor<f32>
      %19 = "stablehlo.imag"(%17) : (tensor<complex<f32>>) -> tensor<f32>
      %20 = "stablehlo.constant"() <{value = dense<3.14159274> : tensor<f32>}> : () -> tensor<f32>
      %21 = "stablehlo.add"(%19, %20) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %22 = "stablehlo.constant"() <{value = dense<6.28318548> : tensor<f32>}> : () -> tensor<f32>
      %23 = "stablehlo.remainder"(%21, %22) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %24 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %25 = "stablehlo.compare"(%23, %24) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %26 = "stablehlo.constant"() <{value = dense<6.28318548> : tensor<f32>}> : () -> tensor<f32>
      %27 = "stablehlo.add"(%23, %26) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %28 = "stablehlo.select"(%25, %27, %23) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %29 = "stablehlo.constant"() <{value = dense<3.14159274> : tensor<f32>}> : () -> tensor<f32>
      %30 = "stablehlo.subtract"(%28, %29) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %31 = "stablehlo.complex"(%18, %30) : (tensor<f32>, tensor<f32>) -> tensor<complex<f32>>
      "stablehlo.return"(%31) : (tensor<complex<f32>>) -> ()
    }) : (tensor<3x4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<3x4xcomplex<f32>>
    "func.return"(%1) : (tensor<3x4xcomplex<f32>>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
