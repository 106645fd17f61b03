package interpreter

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// ewtRunConst runs a program returning one op with no operands.
func ewtRunConst(t *testing.T, op, attrs, typ string) *Tensor {
	t.Helper()
	text := fmt.Sprintf("func.func @main() -> %s {\n  %%0 = \"%s\"() {%s} : () -> %s\n  return %%0 : %s\n}\n", typ, op, attrs, typ, typ)
	m, err := stablehlo.Parse([]byte(text))
	require.NoError(t, err, text)
	p, err := Compile(m, "")
	require.NoError(t, err)
	out, err := p.Run(context.Background(), Device{}, nil)
	require.NoError(t, err)
	return out[0].(*Tensor)
}

func TestConstant(t *testing.T) {
	tests := []struct {
		value, typ string
		want       []any
	}{
		{"dense<[[1, 2], [3, 4]]>", "tensor<2x2xi32>", []any{1, 2, 3, 4}},
		{"dense<1.5>", "tensor<3xf32>", []any{1.5, 1.5, 1.5}},
		{"dense<[true, false]>", "tensor<2xi1>", []any{true, false}},
		{"dense<true>", "tensor<2x2xi1>", []any{true, true, true, true}},
		{"dense<[(1.0, 2.0), (-3.0, 0.5)]>", "tensor<2xcomplex<f32>>", []any{1 + 2i, -3 + 0.5i}},
		{"dense<(1.0, -1.0)>", "tensor<2xcomplex<f64>>", []any{1 - 1i, 1 - 1i}},
		{"dense<0x7FC0>", "tensor<bf16>", []any{ewtNaN}},
		{"dense<[448.0, -0.0]>", "tensor<2xf8E4M3FN>", []any{448.0, ewtNegZ}},
		{"dense<[-8, 7]>", "tensor<2xi4>", []any{-8, 7}},
		{"dense<[15, 1]>", "tensor<2xui4>", []any{15, 1}},
		{"dense<-2>", "tensor<3xi2>", []any{-2, -2, -2}},
		{"dense<0x7FF8000000000000>", "tensor<f64>", []any{ewtNaN}},
		{"dense<[0xFF800000, 0x80000000]>", "tensor<2xf32>", []any{-ewtInf, ewtNegZ}},
		{"dense<18446744073709551615>", "tensor<ui64>", []any{uint64(math.MaxUint64)}},
		{"dense<-9223372036854775808>", "tensor<i64>", []any{int64(math.MinInt64)}},
		{"dense<65504.0>", "tensor<f16>", []any{65504.0}},
		{"dense<[0.5, 6.0]>", "tensor<2xf4E2M1FN>", []any{0.5, 6.0}},
		{"dense<[1.0, 0.125]>", "tensor<2xf8E8M0FNU>", []any{1.0, 0.125}},
		{"dense<>", "tensor<0xf32>", []any{}},
		{"dense<2>", "tensor<0x3xi8>", []any{}},
	}
	for _, tt := range tests {
		t.Run(tt.value+" "+tt.typ, func(t *testing.T) {
			out := ewtRunConst(t, "stablehlo.constant", "value = "+tt.value+" : "+tt.typ, tt.typ)
			ewtCheck(t, out, 0, tt.want, tt.value)
		})
	}
	// Every run makes a new tensor.
	m, err := stablehlo.Parse([]byte("func.func @main() -> tensor<2xi32> {\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n  return %0 : tensor<2xi32>\n}\n"))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	a, err := p.Run(context.Background(), Device{}, nil)
	require.NoError(t, err)
	a[0].(*Tensor).Data.([]int32)[0] = 9
	b, err := p.Run(context.Background(), Device{}, nil)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2}, b[0].(*Tensor).Data)
}

// TestLargeSplatConstants covers splats decoded at run time: an all-zero
// value comes from the allocation alone, any other (negative zero
// included) is written into every element, and each run gets its own.
func TestLargeSplatConstants(t *testing.T) {
	const n = 1 << 16
	for _, tt := range []struct {
		value string
		want  float32
	}{{"0.0", 0}, {"-0.0", float32(math.Copysign(0, -1))}, {"0x7FC00000", float32(math.NaN())}, {"2.5", 2.5}} {
		t.Run(tt.value, func(t *testing.T) {
			text := fmt.Sprintf("func.func @main() -> tensor<%dxf32> {\n  %%0 = stablehlo.constant dense<%s> : tensor<%dxf32>\n  return %%0 : tensor<%dxf32>\n}\n", n, tt.value, n, n)
			m, err := stablehlo.Parse([]byte(text))
			require.NoError(t, err)
			p, err := Compile(m, "")
			require.NoError(t, err)
			for run := 0; run < 2; run++ {
				out, err := p.Run(context.Background(), Device{}, nil)
				require.NoError(t, err)
				d := out[0].(*Tensor).Data.([]float32)
				require.Len(t, d, n)
				for i, v := range d {
					if math.Float32bits(v) != math.Float32bits(tt.want) {
						t.Fatalf("run %d: element %d is %v (bits %#x), want bits %#x", run, i, v, math.Float32bits(v), math.Float32bits(tt.want))
					}
				}
				for i := range d {
					d[i] = 7 // the next run must not see this
				}
			}
		})
	}
}

func TestConstantErrors(t *testing.T) {
	i32 := stablehlo.Tensor(xla.Int32, 2)
	dense := stablehlo.DenseElementsAttr{Type: i32, Data: make([]byte, 8)}
	tests := []struct {
		name   string
		attrs  []stablehlo.NamedAttr
		result stablehlo.Type
		args   []Value
		want   string
	}{
		{"no value", nil, i32, nil, "no value attribute"},
		{"elided resource", []stablehlo.NamedAttr{{Name: "value", Value: stablehlo.OpaqueAttr("dense_resource<blob>")}}, i32, nil, "dense_resource<blob>: the module holds no data for this resource"},
		{"opaque value", []stablehlo.NamedAttr{{Name: "value", Value: stablehlo.OpaqueAttr("sparse<[[0]], [1]>")}}, i32, nil, "is not dense elements the interpreter reads"},
		{"other value", []stablehlo.NamedAttr{{Name: "value", Value: stablehlo.StringAttr("x")}}, i32, nil, "value must be a dense elements attribute, got stablehlo.StringAttr"},
		{"type mismatch", []stablehlo.NamedAttr{{Name: "value", Value: dense}}, stablehlo.Tensor(xla.Int32, 3), nil, "value has type tensor<2xi32>"},
		{"short data", []stablehlo.NamedAttr{{Name: "value", Value: stablehlo.DenseElementsAttr{Type: i32, Data: make([]byte, 3)}}}, i32, nil, "has 3 bytes"},
		{"short splat", []stablehlo.NamedAttr{{Name: "value", Value: stablehlo.DenseElementsAttr{Type: i32, Data: make([]byte, 3), Splat: true}}}, i32, nil, "splat value"},
		{"operands", []stablehlo.NamedAttr{{Name: "value", Value: dense}}, i32, []Value{ewtTensor(xla.Int32, 1)}, "takes no operands"},
	}
	for _, tt := range tests {
		_, err := ewtKernel("stablehlo.constant", tt.attrs, tt.result, tt.args...)
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), tt.want, tt.name)
	}
}

func TestSmallConstantsDecodedOnce(t *testing.T) {
	// Small constants are decoded at compile time and shared by every run;
	// a result sharing their storage (the constant itself or a reshape of
	// it) leaves Run as a copy, so writing into it changes no later run.
	src := `func.func @main() -> (tensor<4xi32>, tensor<2x2xi32>, tensor<i32>) {
  %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %r = stablehlo.reshape %c : (tensor<4xi32>) -> tensor<2x2xi32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<100> : tensor<i32>
  %w:2 = stablehlo.while(%i = %z, %acc = %z) : tensor<i32>, tensor<i32>
   cond {
    %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %k = stablehlo.constant dense<3> : tensor<i32>
    %a = stablehlo.add %acc, %k : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %j, %a : tensor<i32>, tensor<i32>
  }
  return %c, %r, %w#1 : tensor<4xi32>, tensor<2x2xi32>, tensor<i32>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	run := func() []Value {
		out, err := p.Run(context.Background(), Device{}, nil)
		require.NoError(t, err)
		return out
	}
	first := run()
	first[0].(*Tensor).Data.([]int32)[0] = -7
	first[1].(*Tensor).Data.([]int32)[3] = -7
	second := run()
	assert.Equal(t, []int32{1, 2, 3, 4}, second[0].(*Tensor).Data)
	assert.Equal(t, []int32{1, 2, 3, 4}, second[1].(*Tensor).Data)
	assert.Equal(t, []int32{300}, second[2].(*Tensor).Data)
	// The loop body's constant allocates nothing per iteration: the
	// program costs what the same loop costs with the 3 defined outside
	// it (decoding it each time would add allocations every iteration).
	hoisted := strings.Replace(strings.Replace(src, "    %k = stablehlo.constant dense<3> : tensor<i32>\n", "", 1),
		"  %z = stablehlo", "  %k = stablehlo.constant dense<3> : tensor<i32>\n  %z = stablehlo", 1)
	require.NotEqual(t, src, hoisted)
	m2, err := stablehlo.Parse([]byte(hoisted))
	require.NoError(t, err)
	p2, err := Compile(m2, "")
	require.NoError(t, err)
	inBody := testing.AllocsPerRun(5, func() { run() })
	outside := testing.AllocsPerRun(5, func() {
		_, err := p2.Run(context.Background(), Device{}, nil)
		require.NoError(t, err)
	})
	assert.Less(t, inBody-outside, 50.0, "allocations of 100 iterations: %v with the constant in the body, %v outside", inBody, outside)
}

// TestZeroSplatInADirtySpare: a large zero constant made after a
// temporary of its size died takes that buffer, and must clear all of it
// (in parts, on several cores).
func TestZeroSplatInADirtySpare(t *testing.T) {
	const n = 1<<17 + 3
	text := fmt.Sprintf(`func.func @main(%%x: tensor<%[1]dxf32>) -> (tensor<%[1]dxf32>, tensor<f32>) {
  %%a = stablehlo.exponential %%x : tensor<%[1]dxf32>
  %%z0 = stablehlo.constant dense<0.0> : tensor<f32>
  %%s = stablehlo.reduce(%%a init: %%z0) applies stablehlo.add across dimensions = [0] : (tensor<%[1]dxf32>, tensor<f32>) -> tensor<f32>
  %%z = stablehlo.constant dense<0.0> : tensor<%[1]dxf32>
  return %%z, %%s : tensor<%[1]dxf32>, tensor<f32>
}`, n)
	m, err := stablehlo.Parse([]byte(text))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	x := NewTensor(xla.MakeShape(xla.Float32, n))
	out, err := p.Run(context.Background(), Device{}, []Value{x})
	require.NoError(t, err)
	require.Equal(t, float32(n), out[1].(*Tensor).Data.([]float32)[0], "exp(0) summed")
	for i, v := range out[0].(*Tensor).Data.([]float32) {
		if v != 0 {
			t.Fatalf("element %d of the zeros is %v", i, v)
		}
	}
}
