module @constants {
  func.func @main() {
    %cst = stablehlo.constant dense<[[0.000000e+00, 1.000000e+00], [2.500000e+00, -3.000000e+00]]> : tensor<2x2xf32>
    %cst_0 = stablehlo.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000]> : tensor<3xf32>
    %cst_1 = stablehlo.constant dense<[1.000000e-01, 0x7FC00001]> : tensor<2xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<7xf32>
    %cst_3 = stablehlo.constant dense<0.99999988> : tensor<f32>
    %cst_4 = stablehlo.constant dense<0x4B800000> : tensor<f32>
    %cst_5 = stablehlo.constant dense<[1.000000e-01, -1.000000e+300]> : tensor<2xf64>
    %cst_6 = stablehlo.constant dense<[9.997550e-02, 0x7C00, 5.960460e-08]> : tensor<3xf16>
    %cst_7 = stablehlo.constant dense<[1.000000e+00, 0x7FC0]> : tensor<2xbf16>
    %cst_8 = stablehlo.constant dense<[1.525880e-05, 5.000000e-01, 0x7E, -0.000000e+00]> : tensor<4xf8E5M2>
    %cst_9 = stablehlo.constant dense<[1.953130e-03, 1.000000e+00, 4.480000e+02, -0.000000e+00]> : tensor<4xf8E4M3FN>
    %cst_10 = stablehlo.constant dense<[1.220700e-04, 6.250000e-02, 2.800000e+01, 0x80]> : tensor<4xf8E4M3B11FNUZ>
    %cst_11 = stablehlo.constant dense<[7.629390e-06, 2.500000e-01, 4.915200e+04, 0x80]> : tensor<4xf8E5M2FNUZ>
    %cst_12 = stablehlo.constant dense<[9.765620e-04, 5.000000e-01, 2.240000e+02, 0x80]> : tensor<4xf8E4M3FNUZ>
    %cst_13 = stablehlo.constant dense<[1.953130e-03, 1.000000e+00, 0x7E, -0.000000e+00]> : tensor<4xf8E4M3>
    %cst_14 = stablehlo.constant dense<[1.562500e-02, 1.500000e+00, 0x7E, -0.000000e+00]> : tensor<4xf8E3M4>
    %cst_15 = stablehlo.constant dense<[1.175490e-38, 4.235160e-22, 5.000000e-01, 2.000000e+00]> : tensor<4xf8E8M0FNU>
    %cst_16 = stablehlo.constant dense<[5.000000e-01, 6.000000e+00, -6.000000e+00]> : tensor<3xf4E2M1FN>
    %cst_17 = stablehlo.constant dense<[6.250000e-01, -7.500000e+00]> : tensor<2xf6E2M3FN>
    %cst_18 = stablehlo.constant dense<[3.125000e-01, -2.800000e+01]> : tensor<2xf6E3M2FN>
    %c = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
    %c_19 = stablehlo.constant dense<true> : tensor<5xi1>
    %c_20 = stablehlo.constant dense<[-2, -1, 0, 1]> : tensor<4xi2>
    %c_21 = stablehlo.constant dense<[-8, 7, -1]> : tensor<3xi4>
    %c_22 = stablehlo.constant dense<[3, 1]> : tensor<2xui2>
    %c_23 = stablehlo.constant dense<[15, 9]> : tensor<2xui4>
    %c_24 = stablehlo.constant dense<[-128, 127]> : tensor<2xi8>
    %c_25 = stablehlo.constant dense<[-32768]> : tensor<1xi16>
    %c_26 = stablehlo.constant dense<[[-1], [1]]> : tensor<2x1xi32>
    %c_27 = stablehlo.constant dense<[-9223372036854775808, 42]> : tensor<2xi64>
    %c_28 = stablehlo.constant dense<[255]> : tensor<1xui8>
    %c_29 = stablehlo.constant dense<[65535]> : tensor<1xui16>
    %c_30 = stablehlo.constant dense<[4294967295]> : tensor<1xui32>
    %c_31 = stablehlo.constant dense<[18446744073709551615]> : tensor<1xui64>
    %cst_32 = stablehlo.constant dense<[(1.000000e+00,2.000000e+00), (0x7FC00000,-5.000000e-01)]> : tensor<2xcomplex<f32>>
    %cst_33 = stablehlo.constant dense<[(1.500000e+00,-2.000000e+00)]> : tensor<1xcomplex<f64>>
    %cst_34 = stablehlo.constant dense<> : tensor<0xf32>
    %cst_35 = stablehlo.constant dense<> : tensor<2x0x3xf32>
    %cst_36 = stablehlo.constant dense<"0x000000000000803E0000003F0000403F0000803F0000A03F0000C03F0000E03F0000004000001040000020400000304000004040000050400000604000007040000080400000884000009040000098400000A0400000A8400000B0400000B8400000C0400000C8400000D0400000D8400000E0400000E8400000F0400000F84000000041000004410000084100000C4100001041000014410000184100001C4100002041000024410000284100002C4100003041000034410000384100003C4100004041000044410000484100004C4100005041000054410000584100005C4100006041000064410000684100006C4100007041000074410000784100007C41000080410000824100008441000086410000884100008A4100008C4100008E41000090410000924100009441000096410000984100009A4100009C4100009E410000A0410000A2410000A4410000A6410000A8410000AA410000AC410000AE410000B0410000B2410000B4410000B6410000B8410000BA410000BC410000BE410000C0410000C2410000C4410000C6410000C8410000CA410000CC410000CE410000D0410000D2410000D4410000D6410000D8410000DA410000DC410000DE410000E0410000E2410000E4410000E6410000E8410000EA410000EC410000EE41"> : tensor<4x30xf32>
    %c_37 = stablehlo.constant dense<[false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false]> : tensor<130xi1>
    %c_38 = stablehlo.constant dense<"0x08090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C"> : tensor<101xi4>
    return
  }
}
