package stablehlo

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// TestSizesThatOverflow builds and parses types and ops whose element
// counts or inferred dimensions overflow int64: each is an error naming
// the problem (they once panicked in Print or inferred wrapped sizes).
func TestSizesThatOverflow(t *testing.T) {
	f32 := func(dims ...int64) TensorType { return Tensor(xla.Float32, dims...) }
	for _, c := range []struct {
		name  string
		build func(fb *FuncBuilder)
		want  string
	}{
		{"constant", func(fb *FuncBuilder) { fb.Return(Constant(fb, []float32{1}, 7, 7905747460161236407)) }, "tensor<7x7905747460161236407xf32> has more than 2^63 elements"},
		{"constant bytes", func(fb *FuncBuilder) { fb.Return(fb.ConstantBytes(f32(1<<62), nil)) }, "2^63"},
		{"reshape", func(fb *FuncBuilder) { fb.Return(fb.Reshape(fb.ScalarOf(xla.Float32, 1), 7, 7905747460161236407)) }, "2^63"},
		{"pad", func(fb *FuncBuilder) {
			x := fb.SplatOf(xla.Float32, 0, 10)
			fb.Return(fb.Pad(x, fb.ScalarOf(xla.Float32, 0), []int64{math.MaxInt64}, []int64{math.MaxInt64}, []int64{0}))
		}, "overflows int64"},
		{"pad interior", func(fb *FuncBuilder) {
			x := fb.SplatOf(xla.Float32, 0, 10)
			fb.Return(fb.Pad(x, fb.ScalarOf(xla.Float32, 0), []int64{0}, []int64{0}, []int64{math.MaxInt64 / 4}))
		}, "overflows int64"},
		{"concatenate", func(fb *FuncBuilder) {
			x := fb.Arg(0)
			fb.Return(fb.Concatenate(0, x, x))
		}, "overflows int64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder("m")
			fb := b.NewFunction("main", f32(math.MaxInt64-1))
			c.build(fb)
			_, err := b.Build()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// A dense literal of such a type stays as written (once a panic in
	// Print).
	src := `"foo.op"() {a = dense<"0x0000803F"> : tensor<7x7905747460161236407xf32>} : () -> ()`
	m, err := Parse([]byte(src))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Print(&buf, m, PrintOptions{}))
	assert.Contains(t, buf.String(), `dense<"0x0000803F"> : tensor<7x7905747460161236407xf32>`)
}

// TestHugeSplatAttributes verifies ops whose integer attributes are
// splats of huge types (once expanded until the process ran out of
// memory): errors naming the attribute.
func TestHugeSplatAttributes(t *testing.T) {
	m, err := Parse([]byte(`func.func @main(%a: tensor<4x4xf32>, %s: tensor<f32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.reduce_window"(%a, %s) <{window_dimensions = array<i64: 1, 1>, padding = dense<0> : tensor<1000000000000x2xi64>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}`))
	require.NoError(t, err)
	require.Error(t, m.Verify())
	_, err = ReplicaGroups(DenseElementsAttr{Type: Tensor(xla.Int64, 1000000000000, 2), Data: make([]byte, 8), Splat: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than an attribute of integers holds")
}

// TestNestedSymbolRefRoundTrip parses a nested symbol reference and
// prints it back unchanged (it once printed as the flat @"a::b").
func TestNestedSymbolRefRoundTrip(t *testing.T) {
	src := "\"foo.op\"() {a = @a::@b} : () -> ()\n"
	m, err := Parse([]byte(src))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Print(&buf, m, PrintOptions{}))
	assert.Contains(t, buf.String(), "a = @a::@b")
	assert.NotContains(t, buf.String(), `"a::b"`)
}

// TestOneBitConstantsRoundTrip prints and parses back i1 (xla.Int1) and
// ui1 constants, as lists and in hex (packed bits, as MLIR writes them;
// once one byte an element, which neither halo nor mlir-opt read back).
func TestOneBitConstantsRoundTrip(t *testing.T) {
	for _, dt := range []xla.DType{xla.Int1, xla.Uint1, xla.Bool} {
		for _, n := range []int64{3, 101} {
			set := byte(1)
			if dt == xla.Int1 {
				set = 0xFF
			}
			data := make([]byte, n)
			for i := range data {
				if i%3 == 0 {
					data[i] = set
				}
			}
			b := NewBuilder("m")
			fb := b.NewFunction("main")
			fb.Return(fb.ConstantBytes(Tensor(dt, n), data))
			m, err := b.Build()
			require.NoError(t, err)
			text := m.String()
			m2, err := Parse([]byte(text))
			require.NoError(t, err, "%v x%d:\n%s", dt, n, text)
			got := m2.Funcs[0].Body.Blocks[0].Ops[0].Attr("value").(DenseElementsAttr)
			// i1 reads back as the dtype MLIR spells i1 (Bool): the bits
			// are what must survive.
			for i := range data {
				assert.Equal(t, data[i] != 0, got.Data[i] != 0, "%v x%d element %d", dt, n, i)
			}
		}
	}
	// mlir-opt's spelling of ui1 values.
	_, err := Parse([]byte("\"foo.op\"() {a = dense<[false, true]> : tensor<2xui1>} : () -> ()\n"))
	require.NoError(t, err)
}

// TestNilPartsOfHandBuiltIR prints, verifies and walks IR holding a nil
// region, block or op: errors naming the part (Print once panicked).
func TestNilPartsOfHandBuiltIR(t *testing.T) {
	for _, c := range []struct {
		what    string
		breakIt func(m *Module)
	}{
		{"region", func(m *Module) { m.Funcs[0].Body.Blocks[0].Ops[0].Regions = []*Region{nil} }},
		{"region", func(m *Module) {
			op := m.Funcs[0].Body.Blocks[0].Ops[0]
			op.Name = "foo.op" // another dialect's op may have regions
			op.Regions = []*Region{nil}
		}},
		{"block", func(m *Module) {
			op := m.Funcs[0].Body.Blocks[0].Ops[0]
			op.Name = "foo.op"
			op.Regions = []*Region{{Blocks: []*Block{nil}}}
		}},
		{"block", func(m *Module) { m.Funcs[0].Body.Blocks[0].Ops[0].Regions = []*Region{{Blocks: []*Block{nil}}} }},
		{"op", func(m *Module) {
			b := m.Funcs[0].Body.Blocks[0]
			b.Ops = []*Op{b.Ops[0], nil, b.Ops[1]}
		}},
	} {
		t.Run(c.what, func(t *testing.T) {
			m, err := Parse([]byte("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.negate %a : tensor<f32>\n  return %0 : tensor<f32>\n}\n"))
			require.NoError(t, err)
			c.breakIt(m)
			var buf bytes.Buffer
			err = Print(&buf, m, PrintOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "nil "+c.what)
			assert.Error(t, m.Verify())
			m.Funcs[0].Walk(func(*Op) bool { return true })
		})
	}
}

// TestUnprintableAttributes gives the builder attributes the printer
// could not write as MLIR (once printed as <<NULL ATTRIBUTE>>, a wrapped
// integer or a duplicate key, with Print returning nil): build errors.
func TestUnprintableAttributes(t *testing.T) {
	for _, c := range []struct {
		name  string
		attrs []NamedAttr
		want  string
	}{
		{"nil value", []NamedAttr{{Name: "x"}}, "attribute x: nil value"},
		{"nil in an array", []NamedAttr{{Name: "x", Value: ArrayAttr{nil}}}, "attribute x: element 0: nil value"},
		{"nil in a dict", []NamedAttr{{Name: "x", Value: DictAttr{{Name: "y"}}}}, "attribute x: attribute y: nil value"},
		{"nil type", []NamedAttr{{Name: "x", Value: TypeAttr{}}}, "nil type"},
		{"no name", []NamedAttr{{Value: UnitAttr{}}}, "an attribute has no name"},
		{"twice", []NamedAttr{{Name: "x", Value: UnitAttr{}}, {Name: "x", Value: UnitAttr{}}}, "attribute x is given twice"},
		{"int out of range", []NamedAttr{{Name: "x", Value: IntAttr{Value: 300, Type: xla.Int8}}}, "300 does not fit i8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder("m")
			fb := b.NewFunction("main")
			fb.Op("foo.bar", nil, nil, c.attrs...)
			fb.Return()
			_, err := b.Build()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	b := NewBuilder("m")
	fb := b.NewFunction("main", Tensor(xla.Float32))
	fb.SetArgAttr(0, "x", DictAttr{{Name: "y"}})
	fb.Return(fb.Arg(0))
	_, err := b.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "argument 0: attribute x: attribute y: nil value")
}

// TestEntryName: @main when there is one, else the only public function,
// else "main".
func TestEntryName(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"func.func @f() {\n  return\n}\nfunc.func @main() {\n  return\n}\n", "main"},
		{"func.func private @g() {\n  return\n}\nfunc.func @f() {\n  return\n}\n", "f"},
		{"func.func @f() {\n  return\n}\nfunc.func @g() {\n  return\n}\n", "main"},
	} {
		m, err := Parse([]byte(c.src))
		require.NoError(t, err)
		assert.Equal(t, c.want, m.EntryName(), c.src)
	}
}
