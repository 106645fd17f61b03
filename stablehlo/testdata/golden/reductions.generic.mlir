"builtin.module"() <{sym_name = "reductions"}> ({
  "func.func"() <{function_type = (tensor<4x6xf32>, tensor<f32>, tensor<4x6xi32>, tensor<i32>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<f32>, %arg2: tensor<4x6xi32>, %arg3: tensor<i32>):
    %0 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg34: tensor<f32>, %arg35: tensor<f32>):
      %29 = "stablehlo.add"(%arg34, %arg35) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%29) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
    %1 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg32: tensor<f32>, %arg33: tensor<f32>):
      %28 = "stablehlo.multiply"(%arg32, %arg33) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%28) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg30: tensor<f32>, %arg31: tensor<f32>):
      %27 = "stablehlo.maximum"(%arg30, %arg31) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%27) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %3 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg28: tensor<f32>, %arg29: tensor<f32>):
      %26 = "stablehlo.minimum"(%arg28, %arg29) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%26) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.reduce"(%arg2, %arg3) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg26: tensor<i32>, %arg27: tensor<i32>):
      %25 = "stablehlo.and"(%arg26, %arg27) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%25) : (tensor<i32>) -> ()
    }) : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %5 = "stablehlo.reduce"(%arg2, %arg3) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg24: tensor<i32>, %arg25: tensor<i32>):
      %24 = "stablehlo.or"(%arg24, %arg25) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%24) : (tensor<i32>) -> ()
    }) : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %6 = "stablehlo.reduce"(%arg2, %arg3) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg22: tensor<i32>, %arg23: tensor<i32>):
      %23 = "stablehlo.xor"(%arg22, %arg23) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%23) : (tensor<i32>) -> ()
    }) : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %7 = "stablehlo.reduce"(%arg0, %arg1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg20: tensor<f32>, %arg21: tensor<f32>):
      %22 = "stablehlo.subtract"(%arg20, %arg21) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%22) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
    %8:2 = "stablehlo.reduce"(%arg0, %arg2, %arg1, %arg3) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg16: tensor<f32>, %arg17: tensor<i32>, %arg18: tensor<f32>, %arg19: tensor<i32>):
      %19 = "stablehlo.compare"(%arg16, %arg18) <{comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %20 = "stablehlo.select"(%19, %arg16, %arg18) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %21 = "stablehlo.select"(%19, %arg17, %arg19) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%20, %21) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
    %9 = "stablehlo.reduce_window"(%arg0, %arg1) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %18 = "stablehlo.maximum"(%arg14, %arg15) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%18) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x3xf32>
    %10 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
    %11 = "stablehlo.select_and_scatter"(%arg0, %10, %arg1) <{padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
    ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
      %17 = "stablehlo.compare"(%arg12, %arg13) <{comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%17) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %16 = "stablehlo.add"(%arg10, %arg11) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
    %12:2 = "stablehlo.sort"(%arg0, %arg2) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>, %arg8: tensor<i32>, %arg9: tensor<i32>):
      %15 = "stablehlo.compare"(%arg6, %arg7) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }) : (tensor<4x6xf32>, tensor<4x6xi32>) -> (tensor<4x6xf32>, tensor<4x6xi32>)
    %13 = "stablehlo.map"(%arg0, %arg0) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %14 = "stablehlo.multiply"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%14) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
