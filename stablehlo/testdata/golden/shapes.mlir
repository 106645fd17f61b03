module @shapes {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<i32>, %arg2: tensor<f32>, %arg3: tensor<2xi64>) -> tensor<2x3xf32> {
    %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
    %2 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %3 = stablehlo.broadcast %arg0, sizes = [5] : (tensor<2x3xf32>) -> tensor<5x2x3xf32>
    %4 = stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<6xf32>
    %5 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %6 = stablehlo.slice %arg0 [1:2, 0:3:2] : (tensor<2x3xf32>) -> tensor<1x2xf32>
    %7 = stablehlo.dynamic_slice %arg0, %arg1, %arg1, sizes = [1, 2] : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<1x2xf32>
    %8 = stablehlo.dynamic_update_slice %arg0, %cst, %arg1, %arg1 : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %9 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %10 = stablehlo.pad %arg0, %arg2, low = [0, 1], high = [1, 2], interior = [0, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x8xf32>
    %11 = stablehlo.reverse %arg0, dims = [0, 1] : tensor<2x3xf32>
    %12 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
    %13 = stablehlo.set_dimension_size %arg0, %arg1, dim = 1 : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
    %14 = stablehlo.dynamic_broadcast_in_dim %arg0, %arg3, dims = [0, 1] {known_expanding_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
    %15 = stablehlo.dynamic_iota %arg3, dim = 0 : (tensor<2xi64>) -> tensor<?x3xi32>
    %16 = stablehlo.dynamic_reshape %arg0, %arg3 : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
    %17 = stablehlo.dynamic_pad %14, %arg2, %arg3, %arg3, %arg3 : (tensor<?x3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
    %18 = stablehlo.real_dynamic_slice %14, %arg3, %arg3, %arg3 : (tensor<?x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
    %19 = "foo.index"() : () -> index
    %20 = "foo.shape"() : () -> tensor<2xindex>
    %21 = stablehlo.compute_reshape_shape %19, %20 : (index, tensor<2xindex>) -> tensor<2xindex>
    return %arg0 : tensor<2x3xf32>
  }
}
