module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}, %arg1: tensor<i64> {mhlo.layout_mode = "default"}) -> (tensor<4xf32> {jax.result_info = "", mhlo.layout_mode = "default"}, tensor<8x4xbf16> {jax.result_info = "[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i64>
    %c_0 = stablehlo.constant dense<1> : tensor<i64>
    %cst_1 = stablehlo.constant dense<[1.000000e+00, 0x7FC00000, 0xFF800000, 9.99999974E-6]> : tensor<4xf32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32> loc("jit(f)/jit(main)/reduce_sum"("/tmp/f.py":12:10))
    %1:2 = stablehlo.while(%iterArg = %c, %iterArg_2 = %0) : tensor<i64>, tensor<4xf32>
     cond {
      %5 = stablehlo.compare  LT, %iterArg, %arg1,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1> loc("jit(f)/jit(main)/while/cond/lt"("/tmp/f.py":12:10))
      stablehlo.return %5 : tensor<i1>
    } do {
      %5 = stablehlo.add %iterArg_2, %cst_1 : tensor<4xf32> loc("jit(f)/jit(main)/while/body/add"("/tmp/f.py":12:10))
      %6 = stablehlo.add %iterArg, %c_0 : tensor<i64> loc("jit(f)/jit(main)/while/body/add"("/tmp/f.py":12:10))
      stablehlo.return %6, %5 : tensor<i64>, tensor<4xf32>
    } loc("jit(f)/jit(main)/while"("/tmp/f.py":12:10))
    %2 = stablehlo.convert %arg0 : (tensor<4x8xf32>) -> tensor<4x8xbf16> loc("jit(f)/jit(main)/convert_element_type"("/tmp/f.py":12:10))
    %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<4x8xbf16>) -> tensor<8x4xbf16> loc("jit(f)/jit(main)/convert_element_type"("/tmp/f.py":12:10))
    %4 = call @helper(%3) : (tensor<8x4xbf16>) -> tensor<8x4xbf16> loc("jit(f)/jit(main)/pjit"("/tmp/f.py":12:10))
    return %1#1, %4 : tensor<4xf32>, tensor<8x4xbf16>
  }
  func.func private @helper(%arg0: tensor<8x4xbf16>) -> tensor<8x4xbf16> {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<bf16>
    %c = stablehlo.constant dense<0> : tensor<1xi64>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<8x4xbf16> loc(fused["jit(f)/jit(main)/pjit"("/tmp/f.py":12:10), "other"])
    %1 = stablehlo.multiply %arg0, %0 : tensor<8x4xbf16> loc(fused["jit(f)/jit(main)/pjit"("/tmp/f.py":12:10), "other"])
    %2 = stablehlo.dot_general %1, %1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<8x8xf32> loc(fused["jit(f)/jit(main)/pjit"("/tmp/f.py":12:10), "other"])
    %3 = "stablehlo.gather"(%1, %c) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], start_index_map = [0]>, indices_are_sorted = true, slice_sizes = array<i64: 8, 4>}> : (tensor<8x4xbf16>, tensor<1xi64>) -> tensor<8x4xbf16> loc(fused["jit(f)/jit(main)/pjit"("/tmp/f.py":12:10), "other"])
    return %3 : tensor<8x4xbf16>
  }
}
