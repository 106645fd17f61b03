module @effects {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<4xf32>, %arg1: !stablehlo.token, %arg2: tensor<2xui64>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<7> : tensor<i32>
    %0 = stablehlo.tuple %c : tuple<tensor<i32>>
    %1 = stablehlo.tuple %arg0, %0 : tuple<tensor<4xf32>, tuple<tensor<i32>>>
    %2 = stablehlo.tuple : tuple<>
    %3 = stablehlo.get_tuple_element %1[0] : (tuple<tensor<4xf32>, tuple<tensor<i32>>>) -> tensor<4xf32>
    %4 = stablehlo.create_token : !stablehlo.token
    %5 = stablehlo.after_all %arg1, %4 : !stablehlo.token
    %6 = stablehlo.after_all : !stablehlo.token
    %7 = stablehlo.custom_call @foo(%3) {api_version = 2 : i32, backend_config = "cfg", called_computations = [@main], has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
    %8:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%5, %3) {api_version = 4 : i32, backend_config = {index = 1 : ui64}, has_side_effect = true, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (!stablehlo.token, tensor<4xf32>) -> (!stablehlo.token, tensor<4xf32>)
    stablehlo.custom_call @"name with spaces-and-dashes"() : () -> ()
    %9 = stablehlo.custom_call @__gpu$xla.gpu.triton(%3) {api_version = 1 : i32, backend_config = "", mhlo.backend_config = {grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "\00\01\22\\\0A", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
    %10 = "stablehlo.send"(%3, %5) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true}> : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token
    %11:2 = "stablehlo.recv"(%10) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>, is_host_transfer = true}> : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
    %12:2 = "stablehlo.infeed"(%11#1) <{infeed_config = "", layout = [[0], unit]}> : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
    %13 = "stablehlo.outfeed"(%12#0, %12#1) <{outfeed_config = "x"}> : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token
    stablehlo.trace %3, "here" : tensor<4xf32>
    %output_state, %output = stablehlo.rng_bit_generator %arg2, algorithm =  THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
    %output_state_0, %output_1 = stablehlo.rng_bit_generator %output_state, algorithm =  DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c_2 = stablehlo.constant dense<[4]> : tensor<1xi64>
    %14 = stablehlo.rng %cst, %cst, %c_2, distribution =  NORMAL : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
    %15 = stablehlo.replica_id : tensor<ui32>
    %16 = stablehlo.partition_id : tensor<ui32>
    %17 = "stablehlo.all_reduce"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %30 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %30 : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %18 = "stablehlo.all_gather"(%3) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<8xf32>
    %19 = "stablehlo.collective_reduce"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %30 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %30 : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %20 = "stablehlo.reduce_scatter"(%3) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %30 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %30 : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<2xf32>
    %21 = "stablehlo.all_to_all"(%3) <{concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
    %22 = "stablehlo.collective_permute"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %23 = "stablehlo.collective_broadcast"(%3) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %24 = "stablehlo.cross-replica-sum"(%3) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %25 = stablehlo.uniform_quantize %3 : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 3.400000e+01:16>>
    %26 = stablehlo.uniform_dequantize %25 : (tensor<4x!quant.uniform<i8:f32, 3.400000e+01:16>>) -> tensor<4xf32>
    check.expect_eq %3, %3 : tensor<4xf32>
    check.expect_almost_eq %3, %3, tolerance = 1.000000e-03 : tensor<4xf32>
    check.expect_close %3, %3, max_ulp_difference = 3 : tensor<4xf32>
    check.expect_eq_const %3, dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
    check.expect_almost_eq_const %3, dense<1.000000e+00> : tensor<4xf32> {tolerance = 1.000000e-01 : f64}
    %27 = stablehlo.custom_call @Sharding(%3) {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<4xf32>) -> tensor<4xf32>
    %28 = sdy.sharding_constraint %27 <@mesh, [{"x"}]> : tensor<4xf32>
    %29:2 = "foo.unknown_with_region"(%3) ({
    ^bb0(%arg3: tensor<4xf32>):
      "foo.yield"(%arg3) : (tensor<4xf32>) -> ()
    }, {
    }) {prop = 3 : i32, unit} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) loc("unknown op"("x.py":3:4))
    return %29#1 : tensor<4xf32>
  }
}
