module @control {
  func.func private @callee(%arg0: tensor<f32>, %arg1: tensor<i32>) -> tensor<f32> {
    return %arg0 : tensor<f32>
  }
  func.func @main(%arg0: tensor<f32>, %arg1: tensor<i32>, %arg2: tensor<i1>) -> (tensor<f32>, tensor<i32>) {
    %0:2 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %arg0) : tensor<i32>, tensor<f32>
     cond {
      %c = stablehlo.constant dense<10> : tensor<i32>
      %6 = stablehlo.compare  LT, %iterArg, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %c = stablehlo.constant dense<1> : tensor<i32>
      %6 = func.call @callee(%iterArg_0, %iterArg) : (tensor<f32>, tensor<i32>) -> tensor<f32>
      %7 = stablehlo.add %iterArg, %c : tensor<i32>
      stablehlo.return %7, %6 : tensor<i32>, tensor<f32>
    }
    %1 = stablehlo.while(%iterArg = %arg1) : tensor<i32> attributes {mhlo.frontend_attributes = {x = "y"}}
     cond {
      %6 = stablehlo.compare  NE, %iterArg, %iterArg : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %6 : tensor<i1>
    } do {
      %6 = stablehlo.while(%iterArg_0 = %iterArg) : tensor<i32>
       cond {
        %7 = stablehlo.compare  NE, %iterArg_0, %iterArg : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %7 : tensor<i1>
      } do {
        stablehlo.return %iterArg_0 : tensor<i32>
      }
      stablehlo.return %6 : tensor<i32>
    }
    stablehlo.while()
     cond {
      %c = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      stablehlo.return
    }
    %2:2 = "stablehlo.if"(%arg2) ({
      stablehlo.return %arg0, %arg1 : tensor<f32>, tensor<i32>
    }, {
      %6 = stablehlo.negate %arg0 : tensor<f32>
      stablehlo.return %6, %arg1 : tensor<f32>, tensor<i32>
    }) : (tensor<i1>) -> (tensor<f32>, tensor<i32>)
    %3 = "stablehlo.case"(%arg1) ({
      stablehlo.return %arg0 : tensor<f32>
    }, {
      stablehlo.return %arg0 : tensor<f32>
    }, {
      stablehlo.return %arg0 : tensor<f32>
    }) : (tensor<i32>) -> tensor<f32>
    %4:2 = stablehlo.optimization_barrier %2#0, %2#1 : tensor<f32>, tensor<i32>
    stablehlo.optimization_barrier()
    %5 = stablehlo.composite "my.op" %arg0, %arg1 {composite_attributes = {k = 1 : i64}, decomposition = @callee, version = 1 : i32} : (tensor<f32>, tensor<i32>) -> tensor<f32>
    return %4#0, %0#0 : tensor<f32>, tensor<i32>
  }
}
