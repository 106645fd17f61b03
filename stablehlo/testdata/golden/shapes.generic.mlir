"builtin.module"() <{sym_name = "shapes"}> ({
  "func.func"() <{function_type = (tensor<2x3xf32>, tensor<i32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x3xf32>, %arg1: tensor<i32>, %arg2: tensor<f32>, %arg3: tensor<2xi64>):
    %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x3xi32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
    %2 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2xf32>
    %3 = "stablehlo.broadcast"(%arg0) <{broadcast_sizes = array<i64: 5>}> : (tensor<2x3xf32>) -> tensor<5x2x3xf32>
    %4 = "stablehlo.reshape"(%arg0) : (tensor<2x3xf32>) -> tensor<6xf32>
    %5 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %6 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 2, 3>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 2>}> : (tensor<2x3xf32>) -> tensor<1x2xf32>
    %7 = "stablehlo.dynamic_slice"(%arg0, %arg1, %arg1) <{slice_sizes = array<i64: 1, 2>}> : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %8 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
    %9 = "stablehlo.dynamic_update_slice"(%arg0, %8, %arg1, %arg1) : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %10 = "stablehlo.concatenate"(%arg0, %arg0) <{dimension = 0 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %11 = "stablehlo.pad"(%arg0, %arg2) <{edge_padding_high = array<i64: 1, 2>, edge_padding_low = array<i64: 0, 1>, interior_padding = array<i64: 0, 1>}> : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x8xf32>
    %12 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64: 0, 1>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %13 = "stablehlo.get_dimension_size"(%arg0) <{dimension = 1 : i64}> : (tensor<2x3xf32>) -> tensor<i32>
    %14 = "stablehlo.set_dimension_size"(%arg0, %arg1) <{dimension = 1 : i64}> : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
    %15 = "stablehlo.dynamic_broadcast_in_dim"(%arg0, %arg3) <{broadcast_dimensions = array<i64: 0, 1>, known_expanding_dimensions = array<i64: 0>}> : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
    %16 = "stablehlo.dynamic_iota"(%arg3) <{iota_dimension = 0 : i64}> : (tensor<2xi64>) -> tensor<?x3xi32>
    %17 = "stablehlo.dynamic_reshape"(%arg0, %arg3) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
    %18 = "stablehlo.dynamic_pad"(%15, %arg2, %arg3, %arg3, %arg3) : (tensor<?x3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
    %19 = "stablehlo.real_dynamic_slice"(%15, %arg3, %arg3, %arg3) : (tensor<?x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
    %20 = "foo.index"() : () -> index
    %21 = "foo.shape"() : () -> tensor<2xindex>
    %22 = "stablehlo.compute_reshape_shape"(%20, %21) : (index, tensor<2xindex>) -> tensor<2xindex>
    "func.return"(%arg0) : (tensor<2x3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
