module @pallas_double {
  func.func @main() -> tensor<8xf32> {
    %0 = stablehlo.iota dim = 0 : tensor<8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<8xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<3xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %cst_2 = stablehlo.constant dense<0x7FC00000> : tensor<2xf32>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %2:5 = stablehlo.while(%iterArg = %c, %iterArg_4 = %cst, %iterArg_5 = %c_0, %iterArg_6 = %cst_2, %iterArg_7 = %c_1) : tensor<i32>, tensor<8xf32>, tensor<3xi32>, tensor<2xf32>, tensor<i32>
     cond {
      %c_8 = stablehlo.constant dense<4> : tensor<i32>
      %3 = stablehlo.compare  LT, %iterArg, %c_8,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %4 = stablehlo.slice %iterArg_5 [0:1] : (tensor<3xi32>) -> tensor<1xi32>
      %5 = stablehlo.reshape %4 : (tensor<1xi32>) -> tensor<i32>
      %c_9 = stablehlo.constant dense<0> : tensor<i32>
      %6 = stablehlo.compare  EQ, %5, %c_9,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %3, %6 : tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %c_8 = stablehlo.constant dense<2> : tensor<i32>
      %3 = stablehlo.multiply %iterArg, %c_8 : tensor<i32>
      %c_9 = stablehlo.constant dense<0> : tensor<i32>
      %4 = stablehlo.compare  GE, %iterArg, %c_9,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_10 = stablehlo.constant dense<4> : tensor<i32>
      %5 = stablehlo.compare  LT, %iterArg, %c_10,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %6 = stablehlo.and %4, %5 : tensor<i1>
      %7 = stablehlo.not %6 : tensor<i1>
      %c_11 = stablehlo.constant dense<1> : tensor<1xi32>
      %8 = stablehlo.reshape %iterArg : (tensor<i32>) -> tensor<1xi32>
      %9 = stablehlo.reshape %iterArg : (tensor<i32>) -> tensor<1xi32>
      %10 = stablehlo.concatenate %c_11, %8, %9, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
      %11 = stablehlo.slice %iterArg_5 [0:1] : (tensor<3xi32>) -> tensor<1xi32>
      %12 = stablehlo.reshape %11 : (tensor<1xi32>) -> tensor<i32>
      %c_12 = stablehlo.constant dense<0> : tensor<i32>
      %13 = stablehlo.compare  EQ, %12, %c_12,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %14 = stablehlo.and %7, %13 : tensor<i1>
      %15 = stablehlo.select %14, %10, %iterArg_5 : tensor<i1>, tensor<3xi32>
      %c_13 = stablehlo.constant dense<0> : tensor<i32>
      %16 = stablehlo.compare  GE, %iterArg, %c_13,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_14 = stablehlo.constant dense<4> : tensor<i32>
      %17 = stablehlo.compare  LT, %iterArg, %c_14,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %18 = stablehlo.and %16, %17 : tensor<i1>
      %19 = stablehlo.not %18 : tensor<i1>
      %c_15 = stablehlo.constant dense<2> : tensor<1xi32>
      %20 = stablehlo.reshape %iterArg : (tensor<i32>) -> tensor<1xi32>
      %21 = stablehlo.reshape %iterArg : (tensor<i32>) -> tensor<1xi32>
      %22 = stablehlo.concatenate %c_15, %20, %21, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
      %23 = stablehlo.slice %15 [0:1] : (tensor<3xi32>) -> tensor<1xi32>
      %24 = stablehlo.reshape %23 : (tensor<1xi32>) -> tensor<i32>
      %c_16 = stablehlo.constant dense<0> : tensor<i32>
      %25 = stablehlo.compare  EQ, %24, %c_16,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %26 = stablehlo.and %19, %25 : tensor<i1>
      %27 = stablehlo.select %26, %22, %15 : tensor<i1>, tensor<3xi32>
      %28 = stablehlo.compare  NE, %3, %iterArg_7,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %29:2 = "stablehlo.if"(%28) ({
        %35 = stablehlo.dynamic_update_slice %iterArg_4, %iterArg_6, %iterArg_7 : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
        stablehlo.return %35, %cst_2 : tensor<8xf32>, tensor<2xf32>
      }, {
        stablehlo.return %iterArg_4, %iterArg_6 : tensor<8xf32>, tensor<2xf32>
      }) : (tensor<i1>) -> (tensor<8xf32>, tensor<2xf32>)
      %c_17 = stablehlo.constant dense<0> : tensor<i32>
      %30 = stablehlo.dynamic_slice %0, %3, sizes = [2] : (tensor<8xf32>, tensor<i32>) -> tensor<2xf32>
      %31 = stablehlo.multiply %30, %1 : tensor<2xf32>
      %c_18 = stablehlo.constant dense<0> : tensor<i32>
      %c_19 = stablehlo.constant dense<3> : tensor<i32>
      %32 = stablehlo.compare  EQ, %iterArg, %c_19,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %33 = "stablehlo.if"(%32) ({
        %35 = stablehlo.dynamic_update_slice %29#0, %31, %3 : (tensor<8xf32>, tensor<2xf32>, tensor<i32>) -> tensor<8xf32>
        stablehlo.return %35 : tensor<8xf32>
      }, {
        stablehlo.return %29#0 : tensor<8xf32>
      }) : (tensor<i1>) -> tensor<8xf32>
      %c_20 = stablehlo.constant dense<1> : tensor<i32>
      %34 = stablehlo.add %iterArg, %c_20 : tensor<i32>
      stablehlo.return %34, %33, %27, %31, %3 : tensor<i32>, tensor<8xf32>, tensor<3xi32>, tensor<2xf32>, tensor<i32>
    }
    stablehlo.custom_call @halo.pallas.check(%2#2) {api_version = 4 : i32, backend_config = {halo.callback_id = 7276581504720217706 : i64, halo.pallas.check = "{\22kernel\22:\22double\22,\22grid\22:[4],\22sites\22:[{\22what\22:\22index map of input 0 (f32[2] block of f32[8]) at zz_gen_test.go:16\22,\22kind\22:\22block index\22,\22dims\22:[4]},{\22what\22:\22index map of output 0 (f32[2] block of f32[8]) at zz_gen_test.go:16\22,\22kind\22:\22block index\22,\22dims\22:[4]}]}"}, has_side_effect = true} : (tensor<3xi32>) -> ()
    return %2#1 : tensor<8xf32>
  }
}
