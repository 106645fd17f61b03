"builtin.module"() <{sym_name = "control"}> ({
  "func.func"() <{function_type = (tensor<f32>, tensor<i32>) -> tensor<f32>, sym_name = "callee", sym_visibility = "private"}> ({
  ^bb0(%arg11: tensor<f32>, %arg12: tensor<i32>):
    "func.return"(%arg11) : (tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>, tensor<i32>, tensor<i1>) -> (tensor<f32>, tensor<i32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<f32>, %arg1: tensor<i32>, %arg2: tensor<i1>):
    %0:2 = "stablehlo.while"(%arg1, %arg0) ({
    ^bb0(%arg9: tensor<i32>, %arg10: tensor<f32>):
      %14 = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
      %15 = "stablehlo.compare"(%arg9, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg7: tensor<i32>, %arg8: tensor<f32>):
      %11 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %12 = "func.call"(%arg8, %arg7) <{callee = @callee}> : (tensor<f32>, tensor<i32>) -> tensor<f32>
      %13 = "stablehlo.add"(%arg7, %11) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%13, %12) : (tensor<i32>, tensor<f32>) -> ()
    }) : (tensor<i32>, tensor<f32>) -> (tensor<i32>, tensor<f32>)
    %1 = "stablehlo.while"(%arg1) ({
    ^bb0(%arg6: tensor<i32>):
      %10 = "stablehlo.compare"(%arg6, %arg6) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%10) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg3: tensor<i32>):
      %8 = "stablehlo.while"(%arg3) ({
      ^bb0(%arg5: tensor<i32>):
        %9 = "stablehlo.compare"(%arg5, %arg3) <{comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
        "stablehlo.return"(%9) : (tensor<i1>) -> ()
      }, {
      ^bb0(%arg4: tensor<i32>):
        "stablehlo.return"(%arg4) : (tensor<i32>) -> ()
      }) : (tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%8) : (tensor<i32>) -> ()
    }) {mhlo.frontend_attributes = {x = "y"}} : (tensor<i32>) -> tensor<i32>
    "stablehlo.while"() ({
      %7 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
      "stablehlo.return"(%7) : (tensor<i1>) -> ()
    }, {
      "stablehlo.return"() : () -> ()
    }) : () -> ()
    %2:2 = "stablehlo.if"(%arg2) ({
      "stablehlo.return"(%arg0, %arg1) : (tensor<f32>, tensor<i32>) -> ()
    }, {
      %6 = "stablehlo.negate"(%arg0) : (tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%6, %arg1) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<i1>) -> (tensor<f32>, tensor<i32>)
    %3 = "stablehlo.case"(%arg1) ({
      "stablehlo.return"(%arg0) : (tensor<f32>) -> ()
    }, {
      "stablehlo.return"(%arg0) : (tensor<f32>) -> ()
    }, {
      "stablehlo.return"(%arg0) : (tensor<f32>) -> ()
    }) : (tensor<i32>) -> tensor<f32>
    %4:2 = "stablehlo.optimization_barrier"(%2#0, %2#1) : (tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
    "stablehlo.optimization_barrier"() : () -> ()
    %5 = "stablehlo.composite"(%arg0, %arg1) <{composite_attributes = {k = 1 : i64}, decomposition = @callee, name = "my.op", version = 1 : i32}> : (tensor<f32>, tensor<i32>) -> tensor<f32>
    "func.return"(%4#0, %0#0) : (tensor<f32>, tensor<i32>) -> ()
  }) : () -> ()
}) : () -> ()
