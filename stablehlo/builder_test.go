package stablehlo

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

func f32(dims ...int64) TensorType { return Tensor(xla.Float32, dims...) }
func i32(dims ...int64) TensorType { return Tensor(xla.Int32, dims...) }
func i64(dims ...int64) TensorType { return Tensor(xla.Int64, dims...) }

// line returns the line it is called from.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

func newFunc(args ...Type) (*Builder, *FuncBuilder) {
	b := NewBuilder("test")
	return b, b.NewFunction("main", args...)
}

// requireErr checks that b recorded an error for op whose message holds
// every string of contains, and returns it.
func requireErr(t *testing.T, b *Builder, op string, contains ...string) *BuildError {
	t.Helper()
	err := b.Err()
	require.Error(t, err)
	var be *BuildError
	require.True(t, errors.As(err, &be), "error %v is not a *BuildError", err)
	assert.Equal(t, op, be.Op, "error: %v", err)
	for _, c := range contains {
		assert.Contains(t, err.Error(), c)
	}
	return be
}

func TestBuildModule(t *testing.T) {
	b := NewBuilder("jit_f")
	b.SetNumPartitions(2)
	b.SetNumReplicas(1)
	b.SetAttr("jax.uses_shape_polymorphism", BoolAttr(false))

	helper := b.NewFunction("helper", f32(4)).Private()
	hx := helper.Arg(0)
	helper.Return(helper.Multiply(hx, hx))

	main := b.NewFunction("main", f32(4), f32(4))
	main.SetArgAttr(0, "mhlo.layout_mode", StringAttr("default"))
	main.SetArgSharding(1, "{replicated}")
	main.SetResultAttr(0, "jax.result_info", StringAttr("result"))
	main.SetResultSharding(0, "{devices=[2]<=[2]}")
	main.SetAttr("mhlo.frontend_attributes", DictAttr{{Name: "a", Value: StringAttr("b")}})
	sq := main.Call(helper, main.Arg(0))
	sum := main.WithLoc(Location{Name: "sum", File: "model.py", Line: 7}).Add(sq[0], main.Arg(1))
	main.SetSharding(sum, "{replicated}")
	main.SetFrontendAttributes(sum, DictAttr{{Name: "_xla_stream", Value: StringAttr("1")}})
	main.Return(sum)

	m, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, m.Verify())

	assert.Equal(t, "jit_f", m.Name)
	assert.Equal(t, IntAttr{Value: 2, Type: xla.Int32}, m.Attr("mhlo.num_partitions"))
	assert.Equal(t, IntAttr{Value: 1, Type: xla.Int32}, m.Attr("mhlo.num_replicas"))
	assert.Equal(t, BoolAttr(false), m.Attr("jax.uses_shape_polymorphism"))
	require.Len(t, m.Funcs, 2)
	h, f := m.Func("helper"), m.Func("main")
	assert.True(t, h.Private)
	assert.False(t, f.Private)
	assert.Same(t, m, f.Module())
	assert.Equal(t, []Type{f32(4)}, h.ResultTypes)
	assert.Equal(t, []Type{f32(4)}, f.ResultTypes)
	assert.Equal(t, StringAttr("default"), f.ArgAttrs[0].Get("mhlo.layout_mode"))
	assert.Nil(t, f.ArgAttrs[0].Get("mhlo.sharding"))
	assert.Equal(t, StringAttr("{replicated}"), f.ArgAttrs[1].Get("mhlo.sharding"))
	assert.Equal(t, StringAttr("result"), f.ResultAttrs[0].Get("jax.result_info"))
	assert.Equal(t, StringAttr("{devices=[2]<=[2]}"), f.ResultAttrs[0].Get("mhlo.sharding"))
	assert.Equal(t, "mhlo.frontend_attributes", f.Attrs[0].Name)

	ops := f.Body.Blocks[0].Ops
	require.Len(t, ops, 3)
	call := ops[0]
	assert.Equal(t, "func.call", call.Name)
	assert.Equal(t, SymbolRefAttr("helper"), call.Attr("callee"))
	add := ops[1]
	assert.Equal(t, "stablehlo.add", add.Name)
	assert.Same(t, call.Results[0], add.Operands[0])
	assert.Same(t, f.Args()[1], add.Operands[1])
	assert.Equal(t, Location{Name: "sum", File: "model.py", Line: 7}, add.Loc)
	assert.Equal(t, StringAttr("{replicated}"), add.Attr("mhlo.sharding"))
	assert.NotNil(t, add.Attr("mhlo.frontend_attributes"))
	assert.Equal(t, "func.return", ops[2].Name)
	assert.Same(t, add.Results[0], ops[2].Operands[0])
	assert.True(t, call.Loc.IsUnknown())
}

func TestAutoLocations(t *testing.T) {
	b, f := newFunc(f32(2))
	b.AutoLocations(true)
	v, l := f.Negate(f.Arg(0)), line()
	f.Return(v)
	assert.Equal(t, Location{File: "builder_test.go", Line: l}, v.Op().Loc)
}

// Printed without locations, a reduce whose body op has a location of its
// own takes the compact "applies" form, as its parsed copy does: printing
// is a fixed point of print and parse.
func TestAutoLocationsPrintFixedPoint(t *testing.T) {
	b := NewBuilder("jit_f")
	b.AutoLocations(true)
	f := b.NewFunction("main", f32(2, 4))
	f.Return(f.ReduceSum(f.Arg(0), 1))
	m, err := b.Build()
	require.NoError(t, err)
	s1 := m.String()
	assert.Contains(t, s1, "applies stablehlo.add")
	m2, err := Parse([]byte(s1))
	require.NoError(t, err)
	assert.Equal(t, s1, m2.String())
}

// Frames are the builder's by their file's directory: the closure of a
// builder method inlined into user code is named after the user's
// function but keeps the builder's file.
func TestIsBuilderFrameByDirectory(t *testing.T) {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	dir := fileDir(file)
	assert.True(t, isBuilderFrame("example.com/user.F.(*FuncBuilder).ReduceMax.func1", dir+"/ops_region.go"))
	assert.True(t, isBuilderFrame(pkgPrefix+"(*FuncBuilder).Add", dir+"/ops_elementwise.go"))
	assert.True(t, isBuilderFrame(pkgPrefix+"(*FuncBuilder).Add", ""))
	assert.False(t, isBuilderFrame("example.com/user.F", "/home/u/user/main.go"))
	assert.False(t, isBuilderFrame("example.com/user.F.func1", "/home/u/user/main.go"))
	assert.False(t, isBuilderFrame("example.com/user.F", dir+"/sub/main.go"))
}

func TestDeclareResultsAndForwardCall(t *testing.T) {
	b := NewBuilder("m")
	callee := b.NewFunction("callee", i32())
	callee.DeclareResults(i32())
	main := b.NewFunction("main", i32())
	r := main.Call(callee, main.Arg(0))
	main.Return(r...)
	callee.Return(callee.Add(callee.Arg(0), callee.Arg(0)))
	m, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, m.Verify())

	b, f := newFunc(i32())
	f.DeclareResults(f32())
	f.Return(f.Arg(0))
	requireErr(t, b, "func.return", "declared results (tensor<f32>)")
}

func TestCallSymbol(t *testing.T) {
	// @external is a declaration of the module (as a parsed module has it).
	m, err := Parse([]byte(`func.func private @external(tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>)`))
	require.NoError(t, err)
	b := Extend(m)
	f := b.NewFunction("main", f32(2))
	r := f.CallSymbol("external", []Type{f32(2), i32()}, f.Arg(0))
	require.Len(t, r, 2)
	f.Return(r[0])
	out, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, SymbolRefAttr("external"), r[0].Op().Attr("callee"))
	require.NoError(t, out.Verify())
	text := out.String()
	m2, err := Parse([]byte(text))
	require.NoError(t, err)
	assert.Equal(t, text, m2.String())

	// A callee added after the call, before Build, is found.
	b, f = newFunc(f32(2))
	r = f.CallSymbol("later", []Type{f32(2)}, f.Arg(0))
	f.Return(r...)
	g := b.NewFunction("later", f32(2))
	g.Return(g.Arg(0))
	_, err = b.Build()
	require.NoError(t, err)
}

// Build refuses a CallSymbol whose callee the module does not have (no
// MLIR verifier accepts the call), or whose signature differs.
func TestCallSymbolChecksCallee(t *testing.T) {
	b, f := newFunc(f32(2))
	r, l := f.CallSymbol("external", []Type{f32(2), i32()}, f.Arg(0)), line()
	f.Return(r[0])
	_, err := b.Build()
	be := requireErr(t, b, "func.call", "callee @external is not a function of the module")
	assert.Equal(t, err, b.Err())
	assert.Equal(t, "builder_test.go", be.File)
	assert.Equal(t, l, be.Line)

	b, f = newFunc(f32(2))
	g := b.NewFunction("g", i32())
	g.Return(g.Arg(0))
	f.Return(f.CallSymbol("g", []Type{f32(2)}, f.Arg(0))...)
	_, err = b.Build()
	require.Error(t, err)
	requireErr(t, b, "func.call", "callee @g takes (tensor<i32>), got (tensor<2xf32>)")

	b, f = newFunc(i32())
	g = b.NewFunction("g", i32())
	g.Return(g.Arg(0))
	f.Return(f.CallSymbol("g", []Type{f32(2)}, f.Arg(0))...)
	_, err = b.Build()
	require.Error(t, err)
	requireErr(t, b, "func.call", "callee @g returns (tensor<i32>), the call's result types are (tensor<2xf32>)")

	m, err := Parse([]byte(`func.func private @external(tensor<2xf32>) -> tensor<i32>`))
	require.NoError(t, err)
	b = Extend(m)
	f = b.NewFunction("main", f32(2))
	f.Return(f.CallSymbol("external", []Type{f32(2)}, f.Arg(0))...)
	_, err = b.Build()
	require.Error(t, err)
	requireErr(t, b, "func.call", "callee @external returns (tensor<i32>)")
}

func TestErrorMessageHasOpTypesAndCallerLine(t *testing.T) {
	b, f := newFunc(f32(2), f32(3))
	_, l := f.Add(f.Arg(0), f.Arg(1)), line()
	f.Return(f.Arg(0))
	_, err := b.Build()
	require.Error(t, err)
	want := fmt.Sprintf("stablehlo: stablehlo.add(tensor<2xf32>, tensor<3xf32>) at builder_test.go:%d: operands must have the same type", l)
	assert.Equal(t, want, err.Error())
	var be *BuildError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "builder_test.go", be.File)
	assert.Equal(t, l, be.Line)
	assert.Equal(t, []Type{f32(2), f32(3)}, be.Operands)
}

func TestStickyErrorKeepsFirst(t *testing.T) {
	b, f := newFunc(f32(2), i32(2))
	x, y := f.Arg(0), f.Arg(1)
	bad, l := f.Add(x, y), line()
	assert.NotNil(t, bad, "failed ops return a placeholder, never nil")
	f.Floor(y) // a second error: ignored
	n := len(f.Block().Ops)
	f.Negate(x) // skipped: no op added after an error
	assert.Len(t, f.Block().Ops, n)
	f.Return(x)
	_, err := b.Build()
	be := requireErr(t, b, "stablehlo.add", "tensor<2xf32>", "tensor<2xi32>")
	assert.Equal(t, l, be.Line)
	assert.Equal(t, err, b.Err())
	assert.Equal(t, err, f.Err())
}

func TestErrorInRegionClosureReportsClosureLine(t *testing.T) {
	b, f := newFunc(f32(4))
	var l int
	f.Reduce([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, []int64{0},
		func(rb *FuncBuilder, a []*Value) []*Value {
			var r *Value
			r, l = rb.Add(a[0], rb.Arg(5)), line()
			return []*Value{r}
		})
	be := requireErr(t, b, "arg", "argument 5 out of range")
	assert.Equal(t, l, be.Line)
}

func TestValueScopeErrors(t *testing.T) {
	t.Run("nil operand", func(t *testing.T) {
		b, f := newFunc(f32(2))
		f.Add(f.Arg(0), nil)
		requireErr(t, b, "stablehlo.add", "operand 1 is nil", "(tensor<2xf32>, nil)", "builder_test.go:")
	})
	t.Run("value of another function", func(t *testing.T) {
		b := NewBuilder("m")
		g := b.NewFunction("g", f32(2))
		f := b.NewFunction("f", f32(2))
		f.Add(f.Arg(0), g.Arg(0))
		requireErr(t, b, "stablehlo.add", "operand 1 is defined in another function (@g)")
	})
	t.Run("value of another builder", func(t *testing.T) {
		_, g := newFunc(f32(2))
		b, f := newFunc(f32(2))
		f.Add(f.Arg(0), g.Arg(0))
		requireErr(t, b, "stablehlo.add", "operand 1 is defined outside this function")
	})
	t.Run("value leaked from a region", func(t *testing.T) {
		b, f := newFunc(i32())
		var leaked *Value
		f.If(ConstantScalar(f, true), func(rb *FuncBuilder) []*Value {
			leaked = rb.Negate(f.Arg(0)) // capturing the enclosing value is fine
			return []*Value{leaked}
		}, func(rb *FuncBuilder) []*Value { return []*Value{f.Arg(0)} })
		require.NoError(t, b.Err())
		f.Add(leaked, f.Arg(0))
		requireErr(t, b, "stablehlo.add", "operand 0 is defined in a region that is not visible here")
	})
	t.Run("value of a sibling region", func(t *testing.T) {
		b, f := newFunc(i32())
		var fromThen *Value
		f.If(ConstantScalar(f, true), func(rb *FuncBuilder) []*Value {
			fromThen = rb.Negate(f.Arg(0))
			return []*Value{fromThen}
		}, func(rb *FuncBuilder) []*Value { return []*Value{fromThen} })
		requireErr(t, b, "stablehlo.if", "false_branch returned value #0 that is defined in a region that is not visible here")
	})
	t.Run("placeholder of a failed op", func(t *testing.T) {
		_, g := newFunc(f32(2))
		dead := g.Add(g.Arg(0), nil)
		b, f := newFunc(f32(2))
		f.Add(f.Arg(0), dead)
		requireErr(t, b, "stablehlo.add", "operand 1 is a placeholder returned by a failed op")
	})
	t.Run("region builder used after its closure", func(t *testing.T) {
		b, f := newFunc(f32(2))
		var saved *FuncBuilder
		f.Map([]*Value{f.Arg(0)}, []int64{0}, func(rb *FuncBuilder, a []*Value) *Value {
			saved = rb
			return a[0]
		})
		saved.Negate(f.Arg(0))
		requireErr(t, b, "stablehlo.negate", "region builder used after its closure returned")
	})
	t.Run("Return on a region builder", func(t *testing.T) {
		b, f := newFunc(f32(2))
		f.Map([]*Value{f.Arg(0)}, []int64{0}, func(rb *FuncBuilder, a []*Value) *Value {
			rb.Return(a[0])
			return a[0]
		})
		requireErr(t, b, "func.return", "region builder")
	})
}

func TestFunctionErrors(t *testing.T) {
	t.Run("duplicate name", func(t *testing.T) {
		b := NewBuilder("m")
		b.NewFunction("f")
		b.NewFunction("f")
		requireErr(t, b, "func.func", "@f already exists")
	})
	t.Run("empty name", func(t *testing.T) {
		b := NewBuilder("m")
		b.NewFunction("")
		requireErr(t, b, "func.func", "name is empty")
	})
	t.Run("nil argument type", func(t *testing.T) {
		b := NewBuilder("m")
		b.NewFunction("f", nil)
		requireErr(t, b, "func.func", "argument 0 has a nil type")
	})
	t.Run("invalid argument type", func(t *testing.T) {
		b := NewBuilder("m")
		b.NewFunction("f", Tensor(xla.Float32, -3))
		requireErr(t, b, "func.func", "negative dimension")
	})
	t.Run("no return", func(t *testing.T) {
		b := NewBuilder("m")
		b.NewFunction("f")
		_, err := b.Build()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "function @f (started here) has no Return")
	})
	t.Run("return twice", func(t *testing.T) {
		b, f := newFunc(f32())
		f.Return(f.Arg(0))
		f.Return(f.Arg(0))
		requireErr(t, b, "func.return", "already returned")
	})
	t.Run("op after return", func(t *testing.T) {
		b, f := newFunc(f32())
		f.Return(f.Arg(0))
		f.Negate(f.Arg(0))
		requireErr(t, b, "stablehlo.negate", "already returned")
	})
	t.Run("return inside a region closure", func(t *testing.T) {
		// The function's own Return, called from a While's cond closure,
		// adds func.return before the while: Build must fail rather than
		// print ops after the terminator.
		b, f := newFunc(f32())
		r := f.While([]*Value{f.Arg(0)},
			func(rb *FuncBuilder, a []*Value) *Value {
				f.Return(f.Arg(0))
				return ConstantScalar(rb, true)
			},
			func(rb *FuncBuilder, a []*Value) []*Value { return a })
		require.Len(t, r, 1)
		_, err := b.Build()
		require.Error(t, err)
		requireErr(t, b, "stablehlo.while", "stablehlo.while after func.return")

		// Nested: the while is in an If branch, the If comes after the return.
		b, f = newFunc(f32())
		f.If(ConstantScalar(f, true), func(rb *FuncBuilder) []*Value {
			return rb.While([]*Value{f.Arg(0)},
				func(wb *FuncBuilder, a []*Value) *Value {
					f.Return(f.Arg(0))
					return ConstantScalar(wb, true)
				},
				func(wb *FuncBuilder, a []*Value) []*Value { return a })
		}, func(rb *FuncBuilder) []*Value { return []*Value{f.Arg(0)} })
		_, err = b.Build()
		require.Error(t, err)
		requireErr(t, b, "stablehlo.if", "stablehlo.if after func.return")
	})
	t.Run("arg out of range", func(t *testing.T) {
		b, f := newFunc(f32())
		f.Arg(1)
		requireErr(t, b, "arg", "argument 1 out of range [0, 1)")
	})
	t.Run("arg attr out of range", func(t *testing.T) {
		b, f := newFunc(f32())
		f.SetArgAttr(3, "x", UnitAttr{})
		requireErr(t, b, "func.func", "argument 3 out of range")
	})
	t.Run("result attr beyond results", func(t *testing.T) {
		b, f := newFunc(f32())
		f.SetResultAttr(2, "x", UnitAttr{})
		f.Return(f.Arg(0))
		requireErr(t, b, "func.return", "result attribute set on result 2 of 1")
	})
	t.Run("nil attribute", func(t *testing.T) {
		b, f := newFunc(f32())
		f.SetAttr("x", nil)
		requireErr(t, b, "func.func", "attribute x is nil")
	})
	t.Run("attribute names", func(t *testing.T) {
		// Names the printed text could not carry (empty), or that the
		// module's and function's own syntax gives, are refused.
		b, f := newFunc(f32())
		f.SetAttr("", UnitAttr{})
		requireErr(t, b, "func.func", "an attribute has no name")
		for _, name := range []string{"sym_name", "sym_visibility", "function_type", "arg_attrs", "res_attrs"} {
			b, f := newFunc(f32())
			f.SetAttr(name, StringAttr("private"))
			requireErr(t, b, "func.func", "attribute "+name+" is ")
		}
		b, _ = newFunc(f32())
		b.SetAttr("", UnitAttr{})
		requireErr(t, b, "module", "an attribute has no name")
		b, _ = newFunc(f32())
		b.SetAttr("sym_name", StringAttr("other"))
		requireErr(t, b, "module", "attribute sym_name is the module's name")
		b, _ = newFunc(f32())
		b.SetAttr("x", DictAttr{{Name: "y", Value: nil}})
		requireErr(t, b, "module", "attribute x: attribute y: nil value")

		// Accepted names print text that parses back the same.
		b, f = newFunc(f32())
		b.SetAttr("mhlo.x", StringAttr("m"))
		b.SetAttr("sym_visibility", StringAttr("private"))
		f.SetAttr("my.attr", StringAttr("v"))
		f.Private()
		f.Return(f.Arg(0))
		m, err := b.Build()
		require.NoError(t, err)
		text := m.String()
		m2, err := Parse([]byte(text))
		require.NoError(t, err)
		assert.Equal(t, "test", m2.Name)
		assert.Equal(t, text, m2.String())
	})
	t.Run("op attr on a block argument", func(t *testing.T) {
		b, f := newFunc(f32())
		f.SetSharding(f.Arg(0), "{replicated}")
		requireErr(t, b, "SetOpAttr", "not an op result")
	})
	t.Run("op attr replacing the op's own", func(t *testing.T) {
		b, f := newFunc(Tensor(xla.Float32, 2, 3))
		tr := f.Transpose(f.Arg(0), 1, 0)
		f.SetOpAttr(tr, "permutation", I64Array(0, 1))
		requireErr(t, b, "SetOpAttr", `stablehlo.transpose already has attribute "permutation"`)
		// Dialect-prefixed ones are replaced.
		b, f = newFunc(Tensor(xla.Float32, 2, 3))
		tr = f.Transpose(f.Arg(0), 1, 0)
		f.SetSharding(tr, "{replicated}")
		f.SetSharding(tr, "{maximal device=0}")
		f.Return(tr)
		m, err := b.Build()
		require.NoError(t, err)
		assert.Contains(t, m.String(), `mhlo.sharding = "{maximal device=0}"`)
	})
	t.Run("bad module attributes", func(t *testing.T) {
		b := NewBuilder("m")
		b.SetNumPartitions(0)
		requireErr(t, b, "module", "mhlo.num_partitions must be >= 1")
	})
}

func TestCallErrors(t *testing.T) {
	cases := []struct {
		name string
		run  func(b *Builder, f, g *FuncBuilder)
		msg  string
	}{
		{"arity", func(b *Builder, f, g *FuncBuilder) { f.Call(g) }, "callee @g takes 1 arguments, got 0"},
		{"type", func(b *Builder, f, g *FuncBuilder) { f.Call(g, ConstantScalar(f, int32(1))) }, "argument 0 of @g must be tensor<f32>"},
		{"nil callee", func(b *Builder, f, g *FuncBuilder) { f.Call(nil) }, "callee is nil"},
		{"other module", func(b *Builder, f, g *FuncBuilder) {
			_, h := newFunc()
			h.Return()
			f.Call(h)
		}, "belongs to another module builder"},
		{"unknown results", func(b *Builder, f, g *FuncBuilder) {
			h := b.NewFunction("h")
			f.Call(h)
		}, "no known result types"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder("m")
			g := b.NewFunction("g", f32())
			g.Return(g.Arg(0))
			f := b.NewFunction("f")
			c.run(b, f, g)
			requireErr(t, b, "func.call", c.msg)
		})
	}
}

// Failed multi-result ops return placeholders, as many as the op would
// have results where that is known (at least one otherwise), so that
// indexing them does not panic before Build reports the error.
func TestFailedMultiResultOpsReturnPlaceholders(t *testing.T) {
	// two returns a branch closure that returns f's argument twice.
	two := func(f *FuncBuilder) func(rb *FuncBuilder) []*Value {
		return func(rb *FuncBuilder) []*Value { return []*Value{f.Arg(0), rb.Negate(f.Arg(0))} }
	}
	cases := []struct {
		name  string
		build func(b *Builder, f *FuncBuilder) []*Value
		n     int
		op    string
		msg   string
	}{
		{"if with a non-i1 pred", func(b *Builder, f *FuncBuilder) []*Value {
			return f.If(ConstantScalar(f, int32(1)), two(f), two(f))
		}, 2, "stablehlo.if", "pred must be tensor<i1>"},
		{"if after an earlier error", func(b *Builder, f *FuncBuilder) []*Value {
			f.Add(nil, nil)
			return f.If(deadValue(nil), two(f), two(f))
		}, 2, "stablehlo.add", "operand 0 is nil"},
		{"if with a nil then branch", func(b *Builder, f *FuncBuilder) []*Value {
			return f.If(ConstantScalar(f, true), nil, two(f))
		}, 2, "stablehlo.if", "true_branch closure is nil"},
		{"if whose branch fails", func(b *Builder, f *FuncBuilder) []*Value {
			return f.If(ConstantScalar(f, true), func(rb *FuncBuilder) []*Value {
				return []*Value{rb.Add(f.Arg(0), ConstantScalar(rb, int32(1))), f.Arg(0), f.Arg(0)}
			}, two(f))
		}, 3, "stablehlo.add", "same type"},
		{"case without branches", func(b *Builder, f *FuncBuilder) []*Value {
			return f.Case(ConstantScalar(f, int32(0)))
		}, 1, "stablehlo.case", "at least one branch"},
		{"case with a bad index", func(b *Builder, f *FuncBuilder) []*Value {
			return f.Case(ConstantScalar(f, float32(0)), two(f), two(f))
		}, 2, "stablehlo.case", "index must be tensor<i32>"},
		{"composite with a nil decomposition", func(b *Builder, f *FuncBuilder) []*Value {
			return f.Composite("my.op", nil, []*Value{f.Arg(0)}, nil, 0)
		}, 1, "stablehlo.composite", "decomposition must be a function"},
		{"composite after an earlier error", func(b *Builder, f *FuncBuilder) []*Value {
			d := b.NewFunction("d", f32())
			d.Return(d.Arg(0), d.Arg(0))
			f.Add(nil, nil)
			return f.Composite("my.op", d, []*Value{f.Arg(0)}, nil, 0)
		}, 2, "stablehlo.add", "operand 0 is nil"},
		{"call to a callee without results yet", func(b *Builder, f *FuncBuilder) []*Value {
			return f.Call(b.NewFunction("g", f32()), f.Arg(0))
		}, 1, "func.call", "no known result types"},
		{"call to a nil callee", func(b *Builder, f *FuncBuilder) []*Value {
			return f.Call(nil, f.Arg(0))
		}, 1, "func.call", "callee is nil"},
		{"call after an earlier error", func(b *Builder, f *FuncBuilder) []*Value {
			g := b.NewFunction("g", f32())
			g.Return(g.Arg(0), g.Arg(0))
			f.Add(nil, nil)
			return f.Call(g, f.Arg(0))
		}, 2, "stablehlo.add", "operand 0 is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFunc(f32())
			var r []*Value
			require.NotPanics(t, func() {
				r = c.build(b, f)
				f.Return(f.Negate(r[0]))
			})
			require.Len(t, r, c.n)
			for _, v := range r {
				require.NotNil(t, v)
			}
			_, err := b.Build()
			require.Error(t, err)
			requireErr(t, b, c.op, c.msg)
		})
	}
}

// TestNoPanics calls every FuncBuilder method with zero arguments (nil
// values, nil slices, nil closures), with placeholder values, and on a
// builder already in error: none may panic.
func TestNoPanics(t *testing.T) {
	typ := reflect.TypeFor[*FuncBuilder]()
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		for _, mode := range []string{"zero", "dead", "after-error"} {
			t.Run(m.Name+"/"+mode, func(t *testing.T) {
				b, f := newFunc(f32(2, 3))
				if mode == "after-error" {
					f.Add(nil, nil)
				}
				args := []reflect.Value{reflect.ValueOf(f)}
				for j := 1; j < m.Type.NumIn(); j++ {
					at := m.Type.In(j)
					v := reflect.New(at).Elem()
					if mode == "dead" {
						switch {
						case at == reflect.TypeFor[*Value]():
							v = reflect.ValueOf(deadValue(nil))
						case at == reflect.TypeFor[[]*Value]():
							v = reflect.ValueOf([]*Value{deadValue(nil)})
						case at.Kind() == reflect.Slice && at.Elem() == reflect.TypeFor[*Value]():
							v = reflect.ValueOf([]*Value{deadValue(nil)})
						}
					}
					if m.Type.IsVariadic() && j == m.Type.NumIn()-1 {
						args = append(args, v)
						continue
					}
					args = append(args, v)
				}
				require.NotPanics(t, func() {
					if m.Type.IsVariadic() {
						m.Func.CallSlice(args)
					} else {
						m.Func.Call(args)
					}
				})
				_ = b
			})
		}
	}
}

// Found in review, each a panic before: EmitInferred of a dot_general or
// a convolution (its probe op had no result values, which inference
// read); the error of a tuple type with a nil element (its String);
// bitcast_convert of an operand of invalid element type (a division by
// its 0 bits); Verify of a module holding a nil function; SetResultAttr
// of a huge result index before Return (it grew the attribute list to
// it: out of memory).
func TestReviewedBuilderPanics(t *testing.T) {
	b := NewBuilder("m")
	f := b.NewFunction("main", Tensor(xla.Float32, 2, 3), Tensor(xla.Float32, 3, 4),
		Tensor(xla.Float32, 1, 4, 4, 1), Tensor(xla.Float32, 2, 2, 1, 1))
	var d, c []*Value
	require.NotPanics(t, func() {
		d = f.EmitInferred("stablehlo.dot_general", []*Value{f.Arg(0), f.Arg(1)},
			NamedAttr{Name: "dot_dimension_numbers", Value: DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}})
		c = f.EmitInferred("stablehlo.convolution", []*Value{f.Arg(2), f.Arg(3)},
			NamedAttr{Name: "dimension_numbers", Value: ConvDimensionNumbers{
				InputBatchDim: 0, InputFeatureDim: 3, InputSpatialDims: []int64{1, 2},
				KernelInputFeatureDim: 2, KernelOutputFeature: 3, KernelSpatialDims: []int64{0, 1},
				OutputBatchDim: 0, OutputFeatureDim: 3, OutputSpatialDims: []int64{1, 2}}},
			NamedAttr{Name: "feature_group_count", Value: I64Attr(1)},
			NamedAttr{Name: "batch_group_count", Value: I64Attr(1)})
	})
	require.NoError(t, f.Err())
	assert.Equal(t, "tensor<2x4xf32>", d[0].Type.String())
	assert.Equal(t, "tensor<1x3x3x1xf32>", c[0].Type.String())

	g := NewBuilder("m").NewFunction("main", Tensor(xla.Float32, 2))
	g.Add(&Value{Type: TupleType{Elems: []Type{nil}}}, g.Arg(0))
	require.Error(t, g.Err())
	assert.NotPanics(t, func() { _ = g.Err().Error() })

	fb := BuilderAtEnd(NewBlock(TensorType{}))
	require.NotPanics(t, func() { fb.BitcastConvert(fb.Arg(0), xla.Float32) })
	assert.ErrorContains(t, fb.Err(), "operand of invalid element type")

	assert.ErrorContains(t, (&Module{Funcs: []*Func{nil}}).Verify(), "function 0 is nil")

	h := NewBuilder("m").NewFunction("main", Tensor(xla.Float32, 2))
	h.SetResultAttr(math.MaxInt, "jax.result_info", StringAttr("x"))
	assert.ErrorContains(t, h.Err(), "take attributes only after DeclareResults")
	h2 := NewBuilder("m").NewFunction("main", Tensor(xla.Float32, 2))
	h2.SetResultAttr(0, "jax.result_info", StringAttr("x"))
	h2.Return(h2.Arg(0))
	require.NoError(t, h2.Err())
}
