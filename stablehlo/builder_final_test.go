package stablehlo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// requireRoundTrip prints m (with locations) and parses it back.
func requireRoundTrip(t *testing.T, m *Module) *Module {
	t.Helper()
	text := mlirPrintString(t, m, PrintOptions{Locations: true})
	m2, err := Parse([]byte(text))
	require.NoError(t, err, text)
	return m2
}

// An OpaqueAttr is printed as it is: its text must be one attribute value
// the parser reads back, or the op that takes it fails, naming the
// attribute (before, the module built and its text did not parse).
func TestOpaqueAttrMustParse(t *testing.T) {
	f32x2 := Tensor(xla.Float32, 2)
	for _, c := range []struct{ text, want string }{
		{"", "empty text"},
		{`#foo<"x`, "does not parse"},
		{"#foo<1>>", "not one complete attribute value"},
		{"#foo<1", "does not parse"},
		{"#a.b<1>\n}", "not one complete attribute value"},
		{"dense<1> : tensor<i32> // c", "not one complete attribute value"},
		{"1, 2", "not one attribute value"},
		{"1] // x", "not one attribute value"},
		{"1], [2", "not one attribute value"},
		{"#undefined_alias", "undefined attribute alias"},
		{"\"a\nb\"", "does not parse"},
		{"#foo<\x00>", "NUL byte"},
	} {
		// By name, nested in an array.
		b, f := newFunc(f32x2)
		f.Op("foo.bar", []*Value{f.Arg(0)}, []Type{f32x2}, NamedAttr{Name: "x", Value: ArrayAttr{OpaqueAttr(c.text)}})
		requireErr(t, b, "foo.bar", "attribute x: element 0: opaque attribute", c.want)
		// As an op attribute set afterwards, and a module attribute.
		b, f = newFunc(f32x2)
		f.SetOpAttr(f.Negate(f.Arg(0)), "foo.y", OpaqueAttr(c.text))
		requireErr(t, b, "SetOpAttr", "attribute foo.y: opaque attribute", c.want)
		b, _ = newFunc(f32x2)
		b.SetAttr("foo.z", OpaqueAttr(c.text))
		requireErr(t, b, "module", "attribute foo.z: opaque attribute", c.want)
		// As dot_general's algorithm, which is not a named attribute.
		b, f = newFunc(Tensor(xla.Float32, 2, 2))
		f.DotGeneralWith(f.Arg(0), f.Arg(0), DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}, DotConfig{Algorithm: OpaqueAttr(c.text)})
		requireErr(t, b, "stablehlo.dot_general", "attribute algorithm: opaque attribute", c.want)
	}
	for _, ok := range []string{
		`#sdy.sharding<@mesh, [{"x"}]>`,
		"dense<[1, 0]> : tensor<2xindex>",
		"#stablehlo.dot_algorithm<lhs_precision_type = tf32>",
		"#foo<\"a)b\">",
		"  #foo.bar  ",
		"[1, // a comment inside\n 2]",
	} {
		b, f := newFunc(f32x2)
		f.Op("foo.bar", []*Value{f.Arg(0)}, []Type{f32x2}, NamedAttr{Name: "x", Value: OpaqueAttr(ok)})
		f.Return(f.Arg(0))
		m, err := b.Build()
		require.NoError(t, err, ok)
		requireRoundTrip(t, m)
	}
}

// Build returns the builder's own module and the builder no longer
// changes it: building on afterwards is an error and leaves the module
// as it was (before, a new function or attribute went into the module
// the caller held).
func TestBuildIsFinal(t *testing.T) {
	f32x2 := Tensor(xla.Float32, 2)
	for _, c := range []struct {
		name string
		op   string
		use  func(b *Builder, f *FuncBuilder, v *Value)
	}{
		{"NewFunction", "func.func", func(b *Builder, _ *FuncBuilder, _ *Value) { b.NewFunction("g") }},
		{"SetAttr", "module", func(b *Builder, _ *FuncBuilder, _ *Value) { b.SetAttr("foo.a", I64Attr(1)) }},
		{"SetNumPartitions", "module", func(b *Builder, _ *FuncBuilder, _ *Value) { b.SetNumPartitions(2) }},
		{"SetNumReplicas", "module", func(b *Builder, _ *FuncBuilder, _ *Value) { b.SetNumReplicas(2) }},
		{"AddGlobal", "module", func(b *Builder, _ *FuncBuilder, _ *Value) {
			b.AddGlobal(NewOp("sdy.mesh", nil, nil, NamedAttr{Name: "sym_name", Value: StringAttr("mesh")}))
		}},
		{"func SetAttr", "func.func", func(_ *Builder, f *FuncBuilder, _ *Value) { f.SetAttr("foo.a", I64Attr(1)) }},
		{"SetArgAttr", "func.func", func(_ *Builder, f *FuncBuilder, _ *Value) { f.SetArgSharding(0, "{replicated}") }},
		{"SetResultAttr", "func.func", func(_ *Builder, f *FuncBuilder, _ *Value) { f.SetResultSharding(0, "{replicated}") }},
		{"Private", "func.func", func(_ *Builder, f *FuncBuilder, _ *Value) { f.Private() }},
		{"SetOpAttr", "SetOpAttr", func(_ *Builder, f *FuncBuilder, v *Value) { f.SetSharding(v, "{replicated}") }},
		{"op", "stablehlo.negate", func(_ *Builder, f *FuncBuilder, _ *Value) { f.Negate(f.Arg(0)) }},
		{"Return", "func.return", func(_ *Builder, f *FuncBuilder, _ *Value) { f.Return(f.Arg(0)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFunc(f32x2)
			v := f.Negate(f.Arg(0))
			f.Return(v)
			m, err := b.Build()
			require.NoError(t, err)
			before := mlirPrintString(t, m, PrintOptions{})
			again, err := b.Build()
			require.NoError(t, err, "a second Build with nothing built since")
			require.Same(t, m, again)

			c.use(b, f, v)
			requireErr(t, b, c.op, "the module was already built")
			assert.Equal(t, before, mlirPrintString(t, m, PrintOptions{}), "the built module changed")
			_, err = b.Build()
			require.ErrorContains(t, err, "the module was already built")

			// Extend adds to the built module, as the error says.
			b2 := Extend(m)
			g := b2.NewFunction("g", f32x2)
			g.Return(g.Arg(0))
			m2, err := b2.Build()
			require.NoError(t, err)
			require.Same(t, m, m2)
			assert.NotNil(t, m.Func("g"))
		})
	}
}

// Location names and files are any text: they print as escaped strings
// and read back the same (this held before too).
func TestLocationNamesRoundTrip(t *testing.T) {
	for _, l := range []Location{
		{Name: "a\"b\\c\nd\x00é"},
		{File: "dir \"x\"\\f\n.go", Line: 3, Col: 4},
		{Name: ")(\"#loc1", File: "#loc2\t)", Line: 1, Col: 2},
	} {
		b, f := newFunc(Tensor(xla.Float32, 2))
		f.Return(f.WithLoc(l).Negate(f.Arg(0)))
		m, err := b.Build()
		require.NoError(t, err)
		m2 := requireRoundTrip(t, m)
		assert.Equal(t, l, m2.Funcs[0].Body.Blocks[0].Ops[0].Loc)
	}
}

// A location's Text prints as it is: WithLoc refuses text the parser does
// not read back as one location (before, the module printed with
// locations did not parse).
func TestWithLocRefusesBadText(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`"x") foo(`, "closes the location early"},
		{`"x"))`, "closes the location early"},
		{`"x"(`, "does not parse"},
		{"\"a\nb\"", "does not parse"},
		{`"a`, "does not parse"},
		{"#loc1", "undefined location alias #loc1"},
		{`fused["a", #loc3]`, "undefined location alias #loc3"},
		{"unknown\x00", "NUL byte"},
	} {
		b, f := newFunc(Tensor(xla.Float32, 2))
		f.WithLoc(Location{Text: c.text}).Negate(f.Arg(0))
		requireErr(t, b, "WithLoc", "location text", c.want)
	}
	for _, ok := range []string{
		`callsite("f"("a.py":1:2) at "g"("b.py":3:4))`,
		`fused["a", "b.py":1:2]`,
		`"x # not an alias)"("y.py":1:2)`,
		"\"n\"(\n\"f.py\":1:2)",
	} {
		b, f := newFunc(Tensor(xla.Float32, 2))
		f.Return(f.WithLoc(Location{Text: ok}).Negate(f.Arg(0)))
		m, err := b.Build()
		require.NoError(t, err, ok)
		m2 := requireRoundTrip(t, m)
		assert.False(t, m2.Funcs[0].Body.Blocks[0].Ops[0].Loc.IsUnknown(), ok)
	}
}

// A boolean or sub-byte element's byte must be in host form; the printer
// wrote only some of its bits, so another byte came back from the text
// as another value (2 as true, i4 0x1f as -1, f4 0xff as 0x0f).
func TestConstantBytesHostForm(t *testing.T) {
	for _, c := range []struct {
		dt   xla.DType
		data []byte
		want string
	}{
		{xla.Bool, []byte{0, 1, 2}, "element 2 of tensor<3xi1> is byte 0x02: host bytes of i1 are 0 or 1"},
		{xla.Uint1, []byte{0xff}, "element 0 of tensor<1xui1> is byte 0xff"},
		{xla.Int1, []byte{0xff, 1}, "element 1 of tensor<2xi1> is byte 0x01: host bytes of i1 are 0 or 0xff"},
		{xla.Int4, []byte{0xf8, 0x07, 0x1f}, "element 2 of tensor<3xi4> is byte 0x1f: host bytes of i4 hold the 4-bit value sign-extended"},
		{xla.Int4, []byte{0x08}, "element 0 of tensor<1xi4> is byte 0x08"},
		{xla.Int2, []byte{0xfe, 0x02}, "element 1 of tensor<2xi2> is byte 0x02"},
		{xla.Uint4, []byte{0x0f, 0x10}, "element 1 of tensor<2xui4> is byte 0x10: host bytes of ui4 hold the 4-bit value, the high bits 0"},
		{xla.Float4E2M1FN, []byte{0x0f, 0xff}, "element 1 of tensor<2xf4E2M1FN> is byte 0xff: host bytes of f4E2M1FN hold the 4-bit code, the high bits 0"},
		{xla.Float6E3M2FN, []byte{0x40}, "element 0 of tensor<1xf6E3M2FN> is byte 0x40"},
	} {
		b, f := newFunc()
		f.ConstantBytes(Tensor(c.dt, int64(len(c.data))), c.data)
		requireErr(t, b, "stablehlo.constant", c.want)
		// A splat is checked too.
		b, f = newFunc()
		f.ConstantAttr(DenseElementsAttr{Type: Tensor(c.dt, 4), Data: c.data[len(c.data)-1:], Splat: true})
		requireErr(t, b, "stablehlo.constant", "element 0 of", "is byte")
	}
	// Every host-form byte builds and reads back the same (xla.Int1 is
	// left out: MLIR spells it i1, which reads back as xla.Bool).
	for _, dt := range []xla.DType{xla.Bool, xla.Uint1, xla.Int2, xla.Uint2, xla.Int4, xla.Uint4, xla.Float4E2M1FN, xla.Float6E2M3FN, xla.Float6E3M2FN, xla.Float8E4M3FN, xla.Int8} {
		var data []byte
		for c := 0; c < 256; c++ {
			if normalizeElements([]byte{byte(c)}, Tensor(dt, 1))[0] == byte(c) {
				data = append(data, byte(c))
			}
		}
		b, f := newFunc()
		f.Return(f.ConstantBytes(Tensor(dt, int64(len(data))), data))
		m, err := b.Build()
		require.NoError(t, err, "%v", dt)
		m2 := requireRoundTrip(t, m)
		assert.Equal(t, data, m2.Funcs[0].Body.Blocks[0].Ops[0].Attr("value").(DenseElementsAttr).Data, "%v", dt)
	}
}

// Build refuses a function that calls itself, directly or through others
// (StableHLO cannot recurse: XLA rejects call cycles, and the interpreter
// reported one only when it ran it); before, such modules built.
func TestBuildRefusesRecursion(t *testing.T) {
	s := Scalar(xla.Float32)
	declare := func(b *Builder, name string) *FuncBuilder {
		f := b.NewFunction(name, s)
		f.DeclareResults(s)
		return f
	}
	for _, c := range []struct {
		name  string
		build func(b *Builder)
		want  string // "" when the module has no cycle
	}{
		{"self", func(b *Builder) {
			a := declare(b, "a")
			a.Return(a.Call(a, a.Arg(0))[0])
		}, "recursive call @a -> @a"},
		{"through others", func(b *Builder) {
			main := declare(b, "main")
			a, bb, c := declare(b, "a"), declare(b, "b"), declare(b, "c")
			main.Return(main.Call(a, main.Arg(0))[0])
			a.Return(a.Call(bb, a.Arg(0))[0])
			bb.Return(bb.Call(c, bb.Arg(0))[0])
			c.Return(c.Call(a, c.Arg(0))[0])
		}, "recursive call @a -> @b -> @c -> @a"},
		{"by symbol", func(b *Builder) {
			a := declare(b, "a")
			bb := declare(b, "b")
			a.Return(a.CallSymbol("b", []Type{s}, a.Arg(0))[0])
			bb.Return(bb.Call(a, bb.Arg(0))[0])
		}, "recursive call @a -> @b -> @a"},
		{"in a region", func(b *Builder) {
			a := declare(b, "a")
			pred := a.Compare(a.Arg(0), a.Arg(0), CompareEQ, CompareAuto)
			r := a.If(pred, func(rb *FuncBuilder) []*Value { return rb.Call(a, a.Arg(0)) },
				func(rb *FuncBuilder) []*Value { return []*Value{a.Arg(0)} })
			a.Return(r[0])
		}, "recursive call @a -> @a"},
		{"composite", func(b *Builder) {
			a := declare(b, "a")
			a.Return(a.Composite("my.op", a, []*Value{a.Arg(0)}, nil, 0)[0])
		}, "recursive call @a -> @a"},
		{"no cycle", func(b *Builder) {
			main, a, bb, d := declare(b, "main"), declare(b, "a"), declare(b, "b"), declare(b, "d")
			d.Return(d.Negate(d.Arg(0)))
			a.Return(a.Call(d, a.Call(d, a.Arg(0))[0])[0])
			bb.Return(bb.Call(d, bb.Arg(0))[0])
			main.Return(main.Add(main.Call(a, main.Arg(0))[0], main.Call(bb, main.Arg(0))[0]))
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder("m")
			c.build(b)
			require.NoError(t, b.Err())
			_, err := b.Build()
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			be := requireErr(t, b, "func.call", c.want, "was started here")
			assert.True(t, strings.HasSuffix(be.File, "_test.go"), be.File)
		})
	}
}

// A cycle through a function of a module given to Extend is found too;
// the error then has no place to point at.
func TestBuildRefusesRecursionThroughExtendedModule(t *testing.T) {
	m, err := Parse([]byte(`func.func @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @g(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}`))
	require.NoError(t, err)
	b := Extend(m)
	g := b.NewFunction("g", Scalar(xla.Float32))
	g.Return(g.CallSymbol("f", []Type{Scalar(xla.Float32)}, g.Arg(0))[0])
	_, err = b.Build()
	requireErr(t, b, "func.call", "recursive call @f -> @g -> @f")
	require.Error(t, err)
}
