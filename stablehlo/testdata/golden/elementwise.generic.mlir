"builtin.module"() <{sym_name = "elementwise"}> ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xcomplex<f32>>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xi32>, %arg3: tensor<4xi1>, %arg4: tensor<4xcomplex<f32>>):
    %0 = "stablehlo.abs"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.cbrt"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.ceil"(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.cosine"(%2) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "stablehlo.exponential"(%3) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.exponential_minus_one"(%4) : (tensor<4xf32>) -> tensor<4xf32>
    %6 = "stablehlo.floor"(%5) : (tensor<4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.log"(%6) : (tensor<4xf32>) -> tensor<4xf32>
    %8 = "stablehlo.log_plus_one"(%7) : (tensor<4xf32>) -> tensor<4xf32>
    %9 = "stablehlo.logistic"(%8) : (tensor<4xf32>) -> tensor<4xf32>
    %10 = "stablehlo.negate"(%9) : (tensor<4xf32>) -> tensor<4xf32>
    %11 = "stablehlo.round_nearest_afz"(%10) : (tensor<4xf32>) -> tensor<4xf32>
    %12 = "stablehlo.round_nearest_even"(%11) : (tensor<4xf32>) -> tensor<4xf32>
    %13 = "stablehlo.rsqrt"(%12) : (tensor<4xf32>) -> tensor<4xf32>
    %14 = "stablehlo.sign"(%13) : (tensor<4xf32>) -> tensor<4xf32>
    %15 = "stablehlo.sine"(%14) : (tensor<4xf32>) -> tensor<4xf32>
    %16 = "stablehlo.sqrt"(%15) : (tensor<4xf32>) -> tensor<4xf32>
    %17 = "stablehlo.square"(%16) : (tensor<4xf32>) -> tensor<4xf32>
    %18 = "stablehlo.tan"(%17) : (tensor<4xf32>) -> tensor<4xf32>
    %19 = "stablehlo.tanh"(%18) : (tensor<4xf32>) -> tensor<4xf32>
    %20 = "stablehlo.count_leading_zeros"(%arg2) : (tensor<4xi32>) -> tensor<4xi32>
    %21 = "stablehlo.popcnt"(%arg2) : (tensor<4xi32>) -> tensor<4xi32>
    %22 = "stablehlo.not"(%arg3) : (tensor<4xi1>) -> tensor<4xi1>
    %23 = "stablehlo.is_finite"(%19) : (tensor<4xf32>) -> tensor<4xi1>
    %24 = "stablehlo.real"(%arg4) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %25 = "stablehlo.imag"(%arg4) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %26 = "stablehlo.abs"(%arg4) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %27 = "stablehlo.complex"(%19, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
    %28 = "stablehlo.convert"(%19) : (tensor<4xf32>) -> tensor<4xi32>
    %29 = "stablehlo.bitcast_convert"(%19) : (tensor<4xf32>) -> tensor<4xi32>
    %30 = "stablehlo.reduce_precision"(%19) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<4xf32>) -> tensor<4xf32>
    %31 = "stablehlo.exponential"(%19) <{result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}> : (tensor<4xf32>) -> tensor<4xf32>
    %32 = "stablehlo.add"(%19, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %33 = "stablehlo.atan2"(%32, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %34 = "stablehlo.divide"(%33, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %35 = "stablehlo.maximum"(%34, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %36 = "stablehlo.minimum"(%35, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %37 = "stablehlo.multiply"(%36, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %38 = "stablehlo.power"(%37, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %39 = "stablehlo.remainder"(%38, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %40 = "stablehlo.subtract"(%39, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %41 = "stablehlo.and"(%arg2, %arg2) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %42 = "stablehlo.or"(%41, %arg2) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %43 = "stablehlo.xor"(%42, %arg2) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %44 = "stablehlo.shift_left"(%43, %arg2) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %45 = "stablehlo.shift_right_arithmetic"(%44, %arg2) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %46 = "stablehlo.shift_right_logical"(%45, %arg2) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %47 = "stablehlo.and"(%arg3, %arg3) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %48 = "stablehlo.compare"(%40, %19) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %49 = "stablehlo.compare"(%46, %46) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %50 = "stablehlo.select"(%48, %40, %19) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %51 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %52 = "stablehlo.select"(%51, %40, %19) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %53 = "stablehlo.clamp"(%19, %50, %arg1) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %54 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %55 = "stablehlo.clamp"(%54, %53, %arg1) : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%55) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
