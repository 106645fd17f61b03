"builtin.module"() <{sym_name = "constants"}> ({
  "func.func"() <{function_type = () -> (), sym_name = "main"}> ({
    %0 = "stablehlo.constant"() <{value = dense<[[0.000000e+00, 1.000000e+00], [2.500000e+00, -3.000000e+00]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
    %1 = "stablehlo.constant"() <{value = dense<[0x7FC00000, 0x7F800000, 0xFF800000]> : tensor<3xf32>}> : () -> tensor<3xf32>
    %2 = "stablehlo.constant"() <{value = dense<[1.000000e-01, 0x7FC00001]> : tensor<2xf32>}> : () -> tensor<2xf32>
    %3 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<7xf32>}> : () -> tensor<7xf32>
    %4 = "stablehlo.constant"() <{value = dense<0.99999988> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.constant"() <{value = dense<0x4B800000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.constant"() <{value = dense<[1.000000e-01, -1.000000e+300]> : tensor<2xf64>}> : () -> tensor<2xf64>
    %7 = "stablehlo.constant"() <{value = dense<[9.997550e-02, 0x7C00, 5.960460e-08]> : tensor<3xf16>}> : () -> tensor<3xf16>
    %8 = "stablehlo.constant"() <{value = dense<[1.000000e+00, 0x7FC0]> : tensor<2xbf16>}> : () -> tensor<2xbf16>
    %9 = "stablehlo.constant"() <{value = dense<[1.525880e-05, 5.000000e-01, 0x7E, -0.000000e+00]> : tensor<4xf8E5M2>}> : () -> tensor<4xf8E5M2>
    %10 = "stablehlo.constant"() <{value = dense<[1.953130e-03, 1.000000e+00, 4.480000e+02, -0.000000e+00]> : tensor<4xf8E4M3FN>}> : () -> tensor<4xf8E4M3FN>
    %11 = "stablehlo.constant"() <{value = dense<[1.220700e-04, 6.250000e-02, 2.800000e+01, 0x80]> : tensor<4xf8E4M3B11FNUZ>}> : () -> tensor<4xf8E4M3B11FNUZ>
    %12 = "stablehlo.constant"() <{value = dense<[7.629390e-06, 2.500000e-01, 4.915200e+04, 0x80]> : tensor<4xf8E5M2FNUZ>}> : () -> tensor<4xf8E5M2FNUZ>
    %13 = "stablehlo.constant"() <{value = dense<[9.765620e-04, 5.000000e-01, 2.240000e+02, 0x80]> : tensor<4xf8E4M3FNUZ>}> : () -> tensor<4xf8E4M3FNUZ>
    %14 = "stablehlo.constant"() <{value = dense<[1.953130e-03, 1.000000e+00, 0x7E, -0.000000e+00]> : tensor<4xf8E4M3>}> : () -> tensor<4xf8E4M3>
    %15 = "stablehlo.constant"() <{value = dense<[1.562500e-02, 1.500000e+00, 0x7E, -0.000000e+00]> : tensor<4xf8E3M4>}> : () -> tensor<4xf8E3M4>
    %16 = "stablehlo.constant"() <{value = dense<[1.175490e-38, 4.235160e-22, 5.000000e-01, 2.000000e+00]> : tensor<4xf8E8M0FNU>}> : () -> tensor<4xf8E8M0FNU>
    %17 = "stablehlo.constant"() <{value = dense<[5.000000e-01, 6.000000e+00, -6.000000e+00]> : tensor<3xf4E2M1FN>}> : () -> tensor<3xf4E2M1FN>
    %18 = "stablehlo.constant"() <{value = dense<[6.250000e-01, -7.500000e+00]> : tensor<2xf6E2M3FN>}> : () -> tensor<2xf6E2M3FN>
    %19 = "stablehlo.constant"() <{value = dense<[3.125000e-01, -2.800000e+01]> : tensor<2xf6E3M2FN>}> : () -> tensor<2xf6E3M2FN>
    %20 = "stablehlo.constant"() <{value = dense<[true, false, true]> : tensor<3xi1>}> : () -> tensor<3xi1>
    %21 = "stablehlo.constant"() <{value = dense<true> : tensor<5xi1>}> : () -> tensor<5xi1>
    %22 = "stablehlo.constant"() <{value = dense<[-2, -1, 0, 1]> : tensor<4xi2>}> : () -> tensor<4xi2>
    %23 = "stablehlo.constant"() <{value = dense<[-8, 7, -1]> : tensor<3xi4>}> : () -> tensor<3xi4>
    %24 = "stablehlo.constant"() <{value = dense<[3, 1]> : tensor<2xui2>}> : () -> tensor<2xui2>
    %25 = "stablehlo.constant"() <{value = dense<[15, 9]> : tensor<2xui4>}> : () -> tensor<2xui4>
    %26 = "stablehlo.constant"() <{value = dense<[-128, 127]> : tensor<2xi8>}> : () -> tensor<2xi8>
    %27 = "stablehlo.constant"() <{value = dense<[-32768]> : tensor<1xi16>}> : () -> tensor<1xi16>
    %28 = "stablehlo.constant"() <{value = dense<[[-1], [1]]> : tensor<2x1xi32>}> : () -> tensor<2x1xi32>
    %29 = "stablehlo.constant"() <{value = dense<[-9223372036854775808, 42]> : tensor<2xi64>}> : () -> tensor<2xi64>
    %30 = "stablehlo.constant"() <{value = dense<[255]> : tensor<1xui8>}> : () -> tensor<1xui8>
    %31 = "stablehlo.constant"() <{value = dense<[65535]> : tensor<1xui16>}> : () -> tensor<1xui16>
    %32 = "stablehlo.constant"() <{value = dense<[4294967295]> : tensor<1xui32>}> : () -> tensor<1xui32>
    %33 = "stablehlo.constant"() <{value = dense<[18446744073709551615]> : tensor<1xui64>}> : () -> tensor<1xui64>
    %34 = "stablehlo.constant"() <{value = dense<[(1.000000e+00,2.000000e+00), (0x7FC00000,-5.000000e-01)]> : tensor<2xcomplex<f32>>}> : () -> tensor<2xcomplex<f32>>
    %35 = "stablehlo.constant"() <{value = dense<[(1.500000e+00,-2.000000e+00)]> : tensor<1xcomplex<f64>>}> : () -> tensor<1xcomplex<f64>>
    %36 = "stablehlo.constant"() <{value = dense<> : tensor<0xf32>}> : () -> tensor<0xf32>
    %37 = "stablehlo.constant"() <{value = dense<> : tensor<2x0x3xf32>}> : () -> tensor<2x0x3xf32>
    %38 = "stablehlo.constant"() <{value = dense<"0x000000000000803E0000003F0000403F0000803F0000A03F0000C03F0000E03F0000004000001040000020400000304000004040000050400000604000007040000080400000884000009040000098400000A0400000A8400000B0400000B8400000C0400000C8400000D0400000D8400000E0400000E8400000F0400000F84000000041000004410000084100000C4100001041000014410000184100001C4100002041000024410000284100002C4100003041000034410000384100003C4100004041000044410000484100004C4100005041000054410000584100005C4100006041000064410000684100006C4100007041000074410000784100007C41000080410000824100008441000086410000884100008A4100008C4100008E41000090410000924100009441000096410000984100009A4100009C4100009E410000A0410000A2410000A4410000A6410000A8410000AA410000AC410000AE410000B0410000B2410000B4410000B6410000B8410000BA410000BC410000BE410000C0410000C2410000C4410000C6410000C8410000CA410000CC410000CE410000D0410000D2410000D4410000D6410000D8410000DA410000DC410000DE410000E0410000E2410000E4410000E6410000E8410000EA410000EC410000EE41"> : tensor<4x30xf32>}> : () -> tensor<4x30xf32>
    %39 = "stablehlo.constant"() <{value = dense<[false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false, true, false, false]> : tensor<130xi1>}> : () -> tensor<130xi1>
    %40 = "stablehlo.constant"() <{value = dense<"0x08090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C0D0E0F000102030405060708090A0B0C"> : tensor<101xi4>}> : () -> tensor<101xi4>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
