module @reductions {
  func.func @main(%arg0: tensor<4x6xf32>, %arg1: tensor<f32>, %arg2: tensor<4x6xi32>, %arg3: tensor<i32>) -> tensor<4xf32> {
    %0 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.add across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
    %1 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.multiply across dimensions = [0, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %3 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.minimum across dimensions = [0, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %4 = stablehlo.reduce(%arg2 init: %arg3) applies stablehlo.and across dimensions = [0] : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %5 = stablehlo.reduce(%arg2 init: %arg3) applies stablehlo.or across dimensions = [0] : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %6 = stablehlo.reduce(%arg2 init: %arg3) applies stablehlo.xor across dimensions = [0] : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %7 = stablehlo.reduce(%arg0 init: %arg1) across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
     reducer(%arg4: tensor<f32>, %arg5: tensor<f32>)  {
      %13 = stablehlo.subtract %arg4, %arg5 : tensor<f32>
      stablehlo.return %13 : tensor<f32>
    }
    %8:2 = stablehlo.reduce(%arg0 init: %arg1), (%arg2 init: %arg3) across dimensions = [1] : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
     reducer(%arg4: tensor<f32>, %arg6: tensor<f32>) (%arg5: tensor<i32>, %arg7: tensor<i32>)  {
      %13 = stablehlo.compare  GT, %arg4, %arg6 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %14 = stablehlo.select %13, %arg4, %arg6 : tensor<i1>, tensor<f32>
      %15 = stablehlo.select %13, %arg5, %arg7 : tensor<i1>, tensor<i32>
      stablehlo.return %14, %15 : tensor<f32>, tensor<i32>
    }
    %9 = "stablehlo.reduce_window"(%arg0, %arg1) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %13 = stablehlo.maximum %arg4, %arg5 : tensor<f32>
      stablehlo.return %13 : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2x3xf32>
    %10 = "stablehlo.select_and_scatter"(%arg0, %cst, %arg1) <{padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %13 = stablehlo.compare  GE, %arg4, %arg5 : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %13 : tensor<i1>
    }, {
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %13 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %13 : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
    %11:2 = "stablehlo.sort"(%arg0, %arg2) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>, %arg6: tensor<i32>, %arg7: tensor<i32>):
      %13 = stablehlo.compare  LT, %arg4, %arg5,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %13 : tensor<i1>
    }) : (tensor<4x6xf32>, tensor<4x6xi32>) -> (tensor<4x6xf32>, tensor<4x6xi32>)
    %12 = "stablehlo.map"(%arg0, %arg0) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %13 = stablehlo.multiply %arg4, %arg5 : tensor<f32>
      stablehlo.return %13 : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    return %0 : tensor<4xf32>
  }
}
