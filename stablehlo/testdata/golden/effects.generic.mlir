"builtin.module"() <{sym_name = "effects"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>, !stablehlo.token, tensor<2xui64>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: !stablehlo.token, %arg2: tensor<2xui64>):
    %0 = "stablehlo.constant"() <{value = dense<7> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.tuple"(%0) : (tensor<i32>) -> tuple<tensor<i32>>
    %2 = "stablehlo.tuple"(%arg0, %1) : (tensor<4xf32>, tuple<tensor<i32>>) -> tuple<tensor<4xf32>, tuple<tensor<i32>>>
    %3 = "stablehlo.tuple"() : () -> tuple<>
    %4 = "stablehlo.get_tuple_element"(%2) <{index = 0 : i32}> : (tuple<tensor<4xf32>, tuple<tensor<i32>>>) -> tensor<4xf32>
    %5 = "stablehlo.create_token"() : () -> !stablehlo.token
    %6 = "stablehlo.after_all"(%arg1, %5) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
    %7 = "stablehlo.after_all"() : () -> !stablehlo.token
    %8 = "stablehlo.custom_call"(%4) <{api_version = 2 : i32, backend_config = "cfg", call_target_name = "foo", called_computations = [@main], has_side_effect = true}> : (tensor<4xf32>) -> tensor<4xf32>
    %9:2 = "stablehlo.custom_call"(%6, %4) <{api_version = 4 : i32, backend_config = {index = 1 : ui64}, call_target_name = "xla_ffi_python_cpu_callback", has_side_effect = true, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>, #stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]}> : (!stablehlo.token, tensor<4xf32>) -> (!stablehlo.token, tensor<4xf32>)
    "stablehlo.custom_call"() <{call_target_name = "name with spaces-and-dashes"}> : () -> ()
    %10 = "stablehlo.custom_call"(%4) <{api_version = 1 : i32, backend_config = "", call_target_name = "__gpu$xla.gpu.triton"}> {mhlo.backend_config = {grid_x = 8 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "\00\01\22\\\0A", name = "add_one", num_stages = 3 : i32, num_warps = 4 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
    %11 = "stablehlo.send"(%4, %6) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true}> : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token
    %12:2 = "stablehlo.recv"(%11) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>, is_host_transfer = true}> : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
    %13:2 = "stablehlo.infeed"(%12#1) <{infeed_config = "", layout = [[0], unit]}> : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
    %14 = "stablehlo.outfeed"(%13#0, %13#1) <{outfeed_config = "x"}> : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token
    "stablehlo.trace"(%4) {tag = "here"} : (tensor<4xf32>) -> ()
    %15:2 = "stablehlo.rng_bit_generator"(%arg2) <{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
    %16:2 = "stablehlo.rng_bit_generator"(%15#0) <{rng_algorithm = #stablehlo<rng_algorithm DEFAULT>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
    %17 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.constant"() <{value = dense<[4]> : tensor<1xi64>}> : () -> tensor<1xi64>
    %19 = "stablehlo.rng"(%17, %17, %18) <{rng_distribution = #stablehlo<rng_distribution NORMAL>}> : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
    %20 = "stablehlo.replica_id"() : () -> tensor<ui32>
    %21 = "stablehlo.partition_id"() : () -> tensor<ui32>
    %22 = "stablehlo.all_reduce"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %37 = "stablehlo.add"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%37) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %23 = "stablehlo.all_gather"(%4) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<8xf32>
    %24 = "stablehlo.collective_reduce"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %36 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%36) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %25 = "stablehlo.reduce_scatter"(%4) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, scatter_dimension = 0 : i64}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %35 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%35) : (tensor<f32>) -> ()
    }) : (tensor<4xf32>) -> tensor<2xf32>
    %26 = "stablehlo.all_to_all"(%4) <{concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
    %27 = "stablehlo.collective_permute"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %28 = "stablehlo.collective_broadcast"(%4) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %29 = "stablehlo.cross-replica-sum"(%4) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    %30 = "stablehlo.uniform_quantize"(%4) : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 3.400000e+01:16>>
    %31 = "stablehlo.uniform_dequantize"(%30) : (tensor<4x!quant.uniform<i8:f32, 3.400000e+01:16>>) -> tensor<4xf32>
    "check.expect_eq"(%4, %4) : (tensor<4xf32>, tensor<4xf32>) -> ()
    "check.expect_almost_eq"(%4, %4) {tolerance = 1.000000e-03 : f64} : (tensor<4xf32>, tensor<4xf32>) -> ()
    "check.expect_close"(%4, %4) {max_ulp_difference = 3 : i64} : (tensor<4xf32>, tensor<4xf32>) -> ()
    "check.expect_eq_const"(%4) {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>} : (tensor<4xf32>) -> ()
    "check.expect_almost_eq_const"(%4) {tolerance = 1.000000e-01 : f64, value = dense<1.000000e+00> : tensor<4xf32>} : (tensor<4xf32>) -> ()
    %32 = "stablehlo.custom_call"(%4) <{call_target_name = "Sharding"}> {mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<4xf32>) -> tensor<4xf32>
    %33 = "sdy.sharding_constraint"(%32) <{sharding = #sdy.sharding<@mesh, [{"x"}]>}> : (tensor<4xf32>) -> tensor<4xf32>
    %34:2 = "foo.unknown_with_region"(%4) ({
    ^bb0(%arg3: tensor<4xf32>):
      "foo.yield"(%arg3) : (tensor<4xf32>) -> ()
    }, {
    }) {prop = 3 : i32, unit} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) loc("unknown op"("x.py":3:4))
    "func.return"(%34#1) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
