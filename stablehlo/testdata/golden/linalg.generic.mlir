"builtin.module"() <{sym_name = "linalg"}> ({
  "func.func"() <{function_type = (tensor<2x3x4xf32>, tensor<2x4x5xf32>, tensor<3x3xf32>, tensor<4xf32>, tensor<8xcomplex<f32>>) -> tensor<2x3x5xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>, %arg2: tensor<3x3xf32>, %arg3: tensor<4xf32>, %arg4: tensor<8xcomplex<f32>>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    %1 = "stablehlo.dot_general"(%arg2, %arg2) <{algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>, dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %2 = "stablehlo.dot"(%arg3, %arg3) <{precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
    %3 = "stablehlo.dot"(%arg2, %arg2) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %4 = "stablehlo.einsum"(%arg2, %arg2) <{einsum_config = "ab,bc->ac"}> : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %5 = "stablehlo.unary_einsum"(%arg2) <{einsum_config = "ab->a"}> : (tensor<3x3xf32>) -> tensor<3xf32>
    %6 = "stablehlo.cholesky"(%arg2) <{lower = true}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %7 = "stablehlo.cholesky"(%arg2) : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %8 = "stablehlo.cholesky"(%arg2) <{lower = false}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
    %9 = "stablehlo.triangular_solve"(%arg2, %arg2) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
    %10 = "stablehlo.fft"(%arg4) <{fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type FFT>}> : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
    %11 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<1x8x8x3xf32>}> : () -> tensor<1x8x8x3xf32>
    %12 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<3x3x3x16xf32>}> : () -> tensor<3x3x3x16xf32>
    %13 = "stablehlo.convolution"(%11, %12) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, true>, window_strides = array<i64: 1, 1>}> : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x8x8x16xf32>
    %14 = "stablehlo.convolution"(%11, %12) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64}> : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>
    %15 = "stablehlo.convolution"(%11, %12) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 0, input_spatial_dimensions = [1], kernel_input_feature_dimension = 0, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [], output_batch_dimension = 0, output_feature_dimension = 0, output_spatial_dimensions = []>, feature_group_count = 1 : i64, padding = dense<0> : tensor<2x2xi64>}> : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x6x6x16xf32>
    %16 = "stablehlo.constant"() <{value = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>}> : () -> tensor<2x2xi64>
    %17 = "stablehlo.dynamic_conv"(%11, %12, %16) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, window_strides = array<i64: 1, 1>}> : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>, tensor<2x2xi64>) -> tensor<1x8x8x16xf32>
    %18 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
    %19 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<3xf32>}> : () -> tensor<3xf32>
    %20 = "stablehlo.batch_norm_inference"(%18, %19, %19, %19, %19) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %21:3 = "stablehlo.batch_norm_training"(%18, %19, %19) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
    %22:3 = "stablehlo.batch_norm_grad"(%18, %19, %19, %19, %18) <{epsilon = 9.99999974E-6 : f32, feature_index = 1 : i64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
    "func.return"(%0) : (tensor<2x3x5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
