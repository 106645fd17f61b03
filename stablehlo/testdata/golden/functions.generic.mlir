"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}], function_type = (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>), res_attrs = [{jax.result_info = "[0]"}, {}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<4xf32>, %arg3: tensor<i32>):
    %0 = "stablehlo.add"(%arg2, %arg2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("jit(f)/add"("f.py":10:3))
    %1 = "stablehlo.multiply"(%0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(callsite("a"("f.py":1:2) at "g.py":3:4))
    %2:2 = "func.call"(%1, %arg3) <{callee = @two}> : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>) loc("weird \22file\22.py":0:7)
    "func.return"(%2#0, %2#1) : (tensor<4xf32>, tensor<i32>) -> ()
  }) {my.attr} : () -> () loc("main")
  "func.func"() <{function_type = (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>), sym_name = "two", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<i32>):
    "func.return"(%arg0, %arg1) : (tensor<4xf32>, tensor<i32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>, !stablehlo.token) -> tensor<4xf32>, sym_name = "external", sym_visibility = "private"}> ({
  }) : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "empty"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> () loc("m.py":1:1)
