module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<2xf32>) {
      %4 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %5 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %5 : tensor<f32>
      }) : (tensor<2xf32>) -> tensor<2xf32>
      sdy.return %4 : tensor<2xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}]> : tensor<8xf32>
    %2 = sdy.reshard %1 <@mesh, [{"x"}]> : tensor<8xf32>
    %3 = sdy.manual_computation(%2) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={} (%arg1: tensor<8xf32>) {
      sdy.return %arg1 : tensor<8xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    return %3 : tensor<8xf32>
  }
}
