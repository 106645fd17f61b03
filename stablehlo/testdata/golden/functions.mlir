module {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<i32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) -> (tensor<4xf32> {jax.result_info = "[0]"}, tensor<i32>) attributes {my.attr} {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32> loc("jit(f)/add"("f.py":10:3))
    %1 = stablehlo.multiply %0, %0 : tensor<4xf32> loc(callsite("a"("f.py":1:2) at "g.py":3:4))
    %2:2 = call @two(%1, %arg1) : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>) loc("weird \22file\22.py":0:7)
    return %2#0, %2#1 : tensor<4xf32>, tensor<i32>
  } loc("main")
  func.func private @two(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
    return %arg0, %arg1 : tensor<4xf32>, tensor<i32>
  }
  func.func private @external(tensor<4xf32>, !stablehlo.token) -> tensor<4xf32>
  func.func @empty() {
    return
  }
} loc("m.py":1:1)
