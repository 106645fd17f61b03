module @linalg attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>, %arg2: tensor<3x3xf32>, %arg3: tensor<4xf32>, %arg4: tensor<8xcomplex<f32>>) -> tensor<2x3x5xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    %1 = stablehlo.dot_general %arg2, %arg2, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %2 = stablehlo.dot %arg3, %arg3, precision = [DEFAULT, HIGHEST] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %3 = stablehlo.dot %arg2, %arg2 : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %4 = stablehlo.einsum %arg2, %arg2, config = "ab,bc->ac" : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %5 = stablehlo.unary_einsum %arg2, config = "ab->a" : (tensor<3x3xf32>) -> tensor<3xf32>
    %6 = stablehlo.cholesky %arg2, lower = true : tensor<3x3xf32>
    %7 = stablehlo.cholesky %arg2 : tensor<3x3xf32>
    %8 = stablehlo.cholesky %arg2 {lower = false} : tensor<3x3xf32>
    %9 = "stablehlo.triangular_solve"(%arg2, %arg2) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %10 = stablehlo.fft %arg4, type =  FFT, length = [8] : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<1x8x8x3xf32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<3x3x3x16xf32>
    %11 = stablehlo.convolution(%cst, %cst_0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x8x8x16xf32>
    %12 = stablehlo.convolution(%cst, %cst_0) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>
    %13 = "stablehlo.convolution"(%cst, %cst_0) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 0, input_spatial_dimensions = [1], kernel_input_feature_dimension = 0, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [], output_batch_dimension = 0, output_feature_dimension = 0, output_spatial_dimensions = []>, feature_group_count = 1 : i64, padding = dense<0> : tensor<2x2xi64>}> : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>
    %c = stablehlo.constant dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>
    %14 = stablehlo.dynamic_conv(%cst, %cst_0, %c) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>, tensor<2x2xi64>) -> tensor<1x8x8x16xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<2x3xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<3xf32>
    %15 = "stablehlo.batch_norm_inference"(%cst_1, %cst_2, %cst_2, %cst_2, %cst_2) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %16:3 = "stablehlo.batch_norm_training"(%cst_1, %cst_2, %cst_2) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
    %17:3 = "stablehlo.batch_norm_grad"(%cst_1, %cst_2, %cst_2, %cst_2, %cst_1) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
    return %0 : tensor<2x3x5xf32>
  }
}
