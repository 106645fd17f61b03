package stablehlo

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

func TestBuilderAccessors(t *testing.T) {
	b := NewBuilder("m")
	f := b.NewFunction("f", f32())
	assert.Same(t, f, b.Function("f"))
	assert.Nil(t, b.Function("g"))
	assert.Same(t, b.Module(), f.Func().Module())
	assert.Same(t, b, f.Builder())
	mesh := &Op{Name: "sdy.mesh", Attrs: []NamedAttr{{Name: "sym_name", Value: StringAttr("mesh")}}}
	b.AddGlobal(mesh)
	assert.Equal(t, []*Op{mesh}, b.Module().Globals)
	b.SetAttr("a", StringAttr("x"))
	b.SetAttr("a", StringAttr("y"))
	assert.Equal(t, StringAttr("y"), b.Module().Attr("a"))
	f.SetAttr("k", UnitAttr{})
	f.SetAttr("k", BoolAttr(true))
	assert.Equal(t, []NamedAttr{{Name: "k", Value: BoolAttr(true)}}, f.Func().Attrs)
	f.DeclareResults(f32())
	f.DeclareResults(f32()) // the same again is fine
	f.Return(f.Arg(0))
	_, err := b.Build()
	require.NoError(t, err)

	for _, bad := range []func(b *Builder){
		func(b *Builder) { b.SetNumReplicas(0) },
		func(b *Builder) { b.SetAttr("x", nil) },
		func(b *Builder) { b.AddGlobal(nil) },
		func(b *Builder) { b.NewFunction("f").DeclareResults(nil) },
		func(b *Builder) { f := b.NewFunction("f"); f.DeclareResults(f32()); f.DeclareResults(i32()) },
	} {
		b := NewBuilder("m")
		bad(b)
		require.Error(t, b.Err())
	}
}

func TestDTypeOfAndScalars(t *testing.T) {
	assert.Equal(t, xla.Bool, DTypeOf[bool]())
	assert.Equal(t, xla.Int8, DTypeOf[int8]())
	assert.Equal(t, xla.Int16, DTypeOf[int16]())
	assert.Equal(t, xla.Int32, DTypeOf[int32]())
	assert.Equal(t, xla.Int64, DTypeOf[int]())
	assert.Equal(t, xla.Uint8, DTypeOf[uint8]())
	assert.Equal(t, xla.Uint16, DTypeOf[uint16]())
	assert.Equal(t, xla.Uint32, DTypeOf[uint32]())
	assert.Equal(t, xla.Uint64, DTypeOf[uint]())
	assert.Equal(t, xla.Float32, DTypeOf[float32]())
	assert.Equal(t, xla.Float64, DTypeOf[float64]())
	assert.Equal(t, xla.Complex64, DTypeOf[complex64]())
	assert.Equal(t, xla.Complex128, DTypeOf[complex128]())
	assert.Equal(t, xla.BFloat16, DTypeOf[BF16]())
	assert.Equal(t, xla.Float16, DTypeOf[F16]())

	b, f := newFunc()
	for _, dt := range []xla.DType{xla.Bool, xla.Int8, xla.Int16, xla.Int32, xla.Int64, xla.Uint8, xla.Uint16, xla.Uint32, xla.Uint64,
		xla.Float16, xla.BFloat16, xla.Float32, xla.Float64, xla.Complex64, xla.Complex128} {
		v := f.ScalarOf(dt, 3)
		a := v.Op().Attr("value").(DenseElementsAttr)
		assert.Len(t, a.Data, dt.HostBytes(), dt.String())
		assert.Equal(t, Scalar(dt).String(), v.Type.String())
	}
	require.NoError(t, b.Err())
	assert.Equal(t, binary.LittleEndian.AppendUint32(nil, math.Float32bits(3)), f.ScalarOf(xla.Complex64, 3).Op().Attr("value").(DenseElementsAttr).Data[:4])
}

func TestReduceExtremaEveryType(t *testing.T) {
	for _, dt := range []xla.DType{xla.Bool, xla.Int2, xla.Int4, xla.Uint2, xla.Uint4, xla.Int8, xla.Int32, xla.Int64, xla.Uint16, xla.Uint64, xla.Float16, xla.BFloat16, xla.Float32, xla.Float64} {
		b, f := newFunc(Tensor(dt, 3))
		mx := f.ReduceMax(f.Arg(0))
		mn := f.ReduceMin(f.Arg(0))
		require.NoError(t, b.Err(), dt.String())
		maxInit := mx.Op().Operands[1].Op().Attr("value").(DenseElementsAttr)
		minInit := mn.Op().Operands[1].Op().Attr("value").(DenseElementsAttr)
		assert.Equal(t, Scalar(dt).String(), maxInit.Type.String())
		switch {
		case dt == xla.Int8:
			assert.Equal(t, []byte{0x80}, maxInit.Data) // -128
			assert.Equal(t, []byte{0x7f}, minInit.Data) // 127
		case dt == xla.Int4: // the bounds of 4 bits, sign-extended in the byte
			assert.Equal(t, []byte{0xf8}, maxInit.Data) // -8
			assert.Equal(t, []byte{0x07}, minInit.Data) // 7
		case dt == xla.Int2:
			assert.Equal(t, []byte{0xfe}, maxInit.Data) // -2
			assert.Equal(t, []byte{0x01}, minInit.Data) // 1
		case dt == xla.Uint4:
			assert.Equal(t, []byte{0}, maxInit.Data)
			assert.Equal(t, []byte{0x0f}, minInit.Data) // 15
		case dt == xla.Uint2:
			assert.Equal(t, []byte{0}, maxInit.Data)
			assert.Equal(t, []byte{0x03}, minInit.Data) // 3
		case dt == xla.Int64:
			assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}, maxInit.Data)
			assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, minInit.Data)
		case dt == xla.Uint16:
			assert.Equal(t, []byte{0, 0}, maxInit.Data)
			assert.Equal(t, []byte{0xff, 0xff}, minInit.Data)
		case dt == xla.Float32:
			assert.Equal(t, math.Inf(-1), float64(math.Float32frombits(binary.LittleEndian.Uint32(maxInit.Data))))
		case dt == xla.Bool:
			assert.Equal(t, []byte{0}, maxInit.Data)
			assert.Equal(t, []byte{1}, minInit.Data)
		}
	}
	b, f := newFunc(Tensor(xla.Complex64, 3))
	f.ReduceMax(f.Arg(0))
	requireErr(t, b, "stablehlo.reduce", "ReduceMax: no initial value for element type complex<f32>")
}

func TestCheckAttrKinds(t *testing.T) {
	x := &Value{Type: f32(2)}
	mk := func(name string, attrs ...NamedAttr) *Op { return NewOp(name, []*Value{x}, []Type{f32(2)}, attrs...) }
	bad := []*Op{
		mk("stablehlo.iota", NamedAttr{Name: "iota_dimension", Value: FloatAttr{}}),
		mk("stablehlo.reduce_precision", NamedAttr{Name: "exponent_bits", Value: I32Attr(1)}, NamedAttr{Name: "mantissa_bits", Value: StringAttr("x")}),
		mk("stablehlo.broadcast_in_dim", NamedAttr{Name: "broadcast_dimensions", Value: BoolArray(true)}),
		mk("stablehlo.compare", NamedAttr{Name: "comparison_direction", Value: Enum("precision", "EQ")}),
		NewOp("stablehlo.collective_broadcast", []*Value{x}, []Type{f32(2)}, NamedAttr{Name: "replica_groups", Value: DenseElementsAttr{Type: f32(1, 1)}}),
		mk("stablehlo.custom_call", NamedAttr{Name: "call_target_name", Value: StringAttr("t")}, NamedAttr{Name: "called_computations", Value: ArrayAttr{StringAttr("f")}}),
		mk("stablehlo.custom_call", NamedAttr{Name: "call_target_name", Value: StringAttr("t")}, NamedAttr{Name: "output_operand_aliases", Value: ArrayAttr{I64Attr(1)}}),
		mk("stablehlo.custom_call", NamedAttr{Name: "call_target_name", Value: StringAttr("t")}, NamedAttr{Name: "backend_config", Value: I64Attr(1)}),
		mk("stablehlo.dot", NamedAttr{Name: "precision_config", Value: ArrayAttr{StringAttr("DEFAULT")}}),
		mk("stablehlo.gather", NamedAttr{Name: "dimension_numbers", Value: ScatterDimensionNumbers{}}, NamedAttr{Name: "slice_sizes", Value: I64Array()}),
		mk("stablehlo.all_reduce", NamedAttr{Name: "replica_groups", Value: I64Matrix(nil, 0)}, NamedAttr{Name: "use_global_device_ids", Value: BoolAttr(true)}),
		mk("stablehlo.send", NamedAttr{Name: "channel_handle", Value: I64Attr(1)}),
	}
	for _, op := range bad {
		assert.Error(t, checkOpSpec(op), op.Name)
	}
	good := mk("stablehlo.custom_call", NamedAttr{Name: "call_target_name", Value: StringAttr("t")},
		NamedAttr{Name: "called_computations", Value: ArrayAttr{SymbolRefAttr("f")}},
		NamedAttr{Name: "operand_layouts", Value: ArrayAttr{LayoutAttr(0)}},
		NamedAttr{Name: "backend_config", Value: DictAttr{}})
	assert.NoError(t, checkOpSpec(good))
}

func TestQuantizedBinary(t *testing.T) {
	q := OpaqueType{Text: "tensor<2x!quant.uniform<i8:f32, 0.5>>"}
	b, f := newFunc(q, q)
	v := f.Add(f.Arg(0), f.Arg(1))
	require.NoError(t, b.Err())
	assert.Equal(t, q, v.Type)
	b, f = newFunc(q, TokenType{})
	f.Add(f.Arg(0), f.Arg(1))
	requireErr(t, b, "stablehlo.add", "operands must be tensors")
}

// TestOpaqueTypeText: an OpaqueType must hold the text of one type the
// parser reads back as that opaque type; empty, malformed or modelled
// texts printed modules that did not parse (or parsed as another type).
func TestOpaqueTypeText(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "empty text"},
		{"   ", "empty text"},
		{"tensor<2x!quant.uniform<i8:f32", "does not parse"},
		{"!my.type !my.other", "more than one type"},
		{"tensor<2xf32>", "a type halo models"},
		{"!stablehlo.token", "a type halo models"},
	} {
		b, _ := newFunc(OpaqueType{Text: c.text})
		requireErr(t, b, "func.func", c.want)
	}
	for _, ok := range []string{"tensor<2x!quant.uniform<i8:f32, 0.5>>", "!my.type", "!my.type<3, \"x\">"} {
		b, f := newFunc(OpaqueType{Text: ok})
		f.Return(f.Arg(0))
		m, err := b.Build()
		require.NoError(t, err, ok)
		m2, err := Parse([]byte(m.String()))
		require.NoError(t, err, ok)
		require.Equal(t, OpaqueType{Text: ok}, m2.Funcs[0].Body.Blocks[0].Args[0].Type, ok)
	}
}

// ScalarOf wraps an integer's truncation to its width, the same on every
// machine (Go leaves out-of-range float conversions to the hardware:
// 3e9 as i32 was -2147483648 on amd64, 2147483647 on arm64); NaN and
// infinities have no integer value.
func TestScalarOfWrapsIntegers(t *testing.T) {
	for _, c := range []struct {
		dt   xla.DType
		v    float64
		want int64 // as Int64s reads it, sign-extended
	}{
		{xla.Int8, 200, -56}, {xla.Int8, 300, 44}, {xla.Int8, -129.9, 127},
		{xla.Uint8, -1, 255}, {xla.Uint8, 256, 0},
		{xla.Int16, 40000, 40000 - 65536},
		{xla.Int32, 3e9, 3000000000 - 4294967296},
		{xla.Uint32, -1, 4294967295},
		{xla.Int64, 1e19, -8446744073709551616},
		{xla.Uint64, -2, -2},
		{xla.Int4, 9, -7}, {xla.Int4, 1e19, 0}, {xla.Uint4, -1, 15},
	} {
		b := NewBuilder("m")
		fb := b.NewFunction("main")
		v := fb.ScalarOf(c.dt, c.v)
		fb.Return(v)
		_, err := b.Build()
		require.NoError(t, err)
		got, err := v.Op().Attr("value").(DenseElementsAttr).Int64s()
		require.NoError(t, err)
		assert.Equal(t, c.want, got[0], "ScalarOf(%s, %g)", c.dt, c.v)
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		b := NewBuilder("m")
		fb := b.NewFunction("main")
		fb.Return(fb.SplatOf(xla.Int32, v, 2))
		_, err := b.Build()
		require.ErrorContains(t, err, "has no integer value")
	}
}
