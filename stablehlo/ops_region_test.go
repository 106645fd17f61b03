package stablehlo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// requireRegion checks a region's single block: argument types and the
// stablehlo.return at its end.
func requireRegion(t *testing.T, r *Region, args []Type, returns []Type) *Block {
	t.Helper()
	require.Len(t, r.Blocks, 1)
	blk := r.Blocks[0]
	assert.Equal(t, typeList(args), typeList(blockArgTypes(blk)))
	ret := blk.Terminator()
	require.NotNil(t, ret)
	assert.Equal(t, "stablehlo.return", ret.Name)
	assert.Equal(t, typeList(returns), typeList(valueTypes(ret.Operands)))
	assert.Same(t, blk, ret.Parent())
	assert.Same(t, r, blk.Parent())
	return blk
}

func buildOK(t *testing.T, b *Builder, f *FuncBuilder, results ...*Value) *Module {
	t.Helper()
	require.NoError(t, b.Err())
	f.Return(results...)
	m, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	return m
}

func TestReduce(t *testing.T) {
	b, f := newFunc(f32(2, 3, 4), i32(2, 3, 4))
	init := ConstantScalar(f, float32(0))
	r := f.Reduce([]*Value{f.Arg(0)}, []*Value{init}, []int64{1}, func(rb *FuncBuilder, a []*Value) []*Value {
		return []*Value{rb.Add(a[0], a[1])}
	})
	require.Len(t, r, 1)
	assert.Equal(t, "tensor<2x4xf32>", r[0].Type.String())
	op := r[0].Op()
	assert.Equal(t, I64Array(1), op.Attr("dimensions"))
	assert.Equal(t, []*Value{f.Arg(0), init}, op.Operands)
	blk := requireRegion(t, op.Regions[0], []Type{f32(), f32()}, []Type{f32()})
	assert.Equal(t, "stablehlo.add", blk.Ops[0].Name)
	assert.Same(t, op, op.Regions[0].Parent())

	// Variadic: argmax-style reduction over two inputs.
	r2 := f.Reduce([]*Value{f.Arg(0), f.Arg(1)}, []*Value{init, ConstantScalar(f, int32(0))}, []int64{0, 2},
		func(rb *FuncBuilder, a []*Value) []*Value {
			gt := rb.Compare(a[0], a[2], CompareGT, CompareAuto)
			return []*Value{rb.Select(gt, a[0], a[2]), rb.Select(gt, a[1], a[3])}
		})
	require.Len(t, r2, 2)
	assert.Equal(t, "tensor<3xf32>", r2[0].Type.String())
	assert.Equal(t, "tensor<3xi32>", r2[1].Type.String())
	requireRegion(t, r2[0].Op().Regions[0], []Type{f32(), i32(), f32(), i32()}, []Type{f32(), i32()})

	sum := f.ReduceSum(f.Arg(0))
	mx := f.ReduceMax(f.Arg(1), 0)
	mn := f.ReduceMin(f.Arg(0), 2)
	pr := f.ReduceProd(f.Arg(1), 1, 2)
	assert.Equal(t, "tensor<f32>", sum.Type.String())
	assert.Equal(t, "tensor<3x4xi32>", mx.Type.String())
	assert.Equal(t, "tensor<2x3xf32>", mn.Type.String())
	assert.Equal(t, "tensor<2xi32>", pr.Type.String())
	buildOK(t, b, f, r[0], r2[0], sum, mx, mn, pr)

	errCases := []struct {
		name string
		run  func(f *FuncBuilder)
		msg  string
	}{
		{"wrong body type", func(f *FuncBuilder) {
			f.Reduce([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, []int64{0}, func(rb *FuncBuilder, a []*Value) []*Value {
				return []*Value{rb.Compare(a[0], a[1], CompareLT, CompareAuto)}
			})
		}, "body must return (tensor<f32>), got (tensor<i1>)"},
		{"wrong body count", func(f *FuncBuilder) {
			f.Reduce([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, []int64{0}, func(rb *FuncBuilder, a []*Value) []*Value {
				return a
			})
		}, "body must return (tensor<f32>), got (tensor<f32>, tensor<f32>)"},
		{"init not scalar", func(f *FuncBuilder) {
			f.Reduce([]*Value{f.Arg(0)}, []*Value{Constant(f, []float32{0})}, []int64{0}, nil)
		}, "init value 0 must be a scalar"},
		{"dims", func(f *FuncBuilder) {
			f.Reduce([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, []int64{3}, nil)
		}, "dimension 3 out of range [0, 3)"},
		{"nil body", func(f *FuncBuilder) {
			f.Reduce([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, []int64{0}, nil)
		}, "body closure is nil"},
		{"nil returned", func(f *FuncBuilder) {
			f.Reduce([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, []int64{0}, func(rb *FuncBuilder, a []*Value) []*Value {
				return []*Value{nil}
			})
		}, "body returned a nil value (#0)"},
		{"inits count", func(f *FuncBuilder) {
			f.Reduce([]*Value{f.Arg(0)}, nil, []int64{0}, nil)
		}, "needs as many init values as inputs"},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFunc(f32(2, 3, 4))
			c.run(f)
			requireErr(t, b, "stablehlo.reduce", c.msg)
		})
	}
}

func TestReduceWindowAndSelectAndScatter(t *testing.T) {
	b, f := newFunc(i64(3, 2), f32(4, 6))
	r := f.ReduceWindow([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, int64(0))}, Window{
		Dimensions: []int64{2, 1}, Strides: []int64{4, 1}, BaseDilations: []int64{2, 1},
		WindowDilations: []int64{3, 1}, Padding: [][2]int64{{2, 1}, {0, 0}},
	}, func(rb *FuncBuilder, a []*Value) []*Value { return []*Value{rb.Add(a[0], a[1])} })
	assert.Equal(t, "tensor<2x2xi64>", r[0].Type.String())
	op := r[0].Op()
	assert.Equal(t, I64Array(2, 1), op.Attr("window_dimensions"))
	assert.Equal(t, I64Array(4, 1), op.Attr("window_strides"))
	assert.Equal(t, I64Array(2, 1), op.Attr("base_dilations"))
	assert.Equal(t, I64Array(3, 1), op.Attr("window_dilations"))
	assert.Equal(t, [][]int64{{2, 1}, {0, 0}}, denseMatrix(op.Attr("padding").(DenseElementsAttr)))
	requireRegion(t, op.Regions[0], []Type{i64(), i64()}, []Type{i64()})

	// Max pooling 2x2 stride 2, and its gradient with select_and_scatter.
	x := f.Arg(1)
	pool := f.ReduceWindow([]*Value{x}, []*Value{f.extremum(xla.Float32, false)}, Window{Dimensions: []int64{2, 2}, Strides: []int64{2, 2}},
		func(rb *FuncBuilder, a []*Value) []*Value { return []*Value{rb.Maximum(a[0], a[1])} })[0]
	assert.Equal(t, "tensor<2x3xf32>", pool.Type.String())
	grad := f.SelectAndScatter(x, pool, ConstantScalar(f, float32(0)), Window{Dimensions: []int64{2, 2}, Strides: []int64{2, 2}},
		func(rb *FuncBuilder, a, c *Value) *Value { return rb.Compare(a, c, CompareGE, CompareAuto) },
		func(rb *FuncBuilder, a, c *Value) *Value { return rb.Add(a, c) })
	assert.Equal(t, "tensor<4x6xf32>", grad.Type.String())
	sop := grad.Op()
	require.Len(t, sop.Regions, 2)
	requireRegion(t, sop.Regions[0], []Type{f32(), f32()}, []Type{Tensor(xla.Bool)})
	requireRegion(t, sop.Regions[1], []Type{f32(), f32()}, []Type{f32()})
	assert.Equal(t, I64Array(2, 2), sop.Attr("window_dimensions"))
	buildOK(t, b, f, r[0], pool, grad)

	b, f = newFunc(f32(4, 6))
	f.ReduceWindow([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, Window{Dimensions: []int64{2}}, nil)
	requireErr(t, b, "stablehlo.reduce_window", "need 2 entries")
	b, f = newFunc(f32(4, 6))
	f.ReduceWindow([]*Value{f.Arg(0)}, []*Value{ConstantScalar(f, float32(0))}, Window{Dimensions: []int64{2, 0}}, nil)
	requireErr(t, b, "stablehlo.reduce_window", "must be > 0")
	b, f = newFunc(f32(4, 6), f32(3, 3))
	f.SelectAndScatter(f.Arg(0), f.Arg(1), ConstantScalar(f, float32(0)), Window{Dimensions: []int64{2, 2}, Strides: []int64{2, 2}},
		func(rb *FuncBuilder, a, c *Value) *Value { return rb.Compare(a, c, CompareGE, CompareAuto) },
		func(rb *FuncBuilder, a, c *Value) *Value { return rb.Add(a, c) })
	requireErr(t, b, "stablehlo.select_and_scatter", "source must be tensor<2x3xf32>")
	b, f = newFunc(f32(4, 6), f32(2, 3))
	f.SelectAndScatter(f.Arg(0), f.Arg(1), ConstantScalar(f, float32(0)), Window{Dimensions: []int64{2, 2}, Strides: []int64{2, 2}},
		func(rb *FuncBuilder, a, c *Value) *Value { return rb.Add(a, c) },
		func(rb *FuncBuilder, a, c *Value) *Value { return rb.Add(a, c) })
	requireErr(t, b, "stablehlo.select_and_scatter", "select must return tensor<i1>, got tensor<f32>")
}

func TestSortAndMap(t *testing.T) {
	b, f := newFunc(i64(2, 3), f32(2, 3))
	r := f.Sort([]*Value{f.Arg(0), f.Arg(1)}, 0, true, func(rb *FuncBuilder, a []*Value) *Value {
		return rb.Compare(a[0], a[1], CompareGT, CompareAuto)
	})
	require.Len(t, r, 2)
	assert.Equal(t, "tensor<2x3xi64>", r[0].Type.String())
	assert.Equal(t, "tensor<2x3xf32>", r[1].Type.String())
	op := r[0].Op()
	assert.Equal(t, I64Attr(0), op.Attr("dimension"))
	assert.Equal(t, BoolAttr(true), op.Attr("is_stable"))
	requireRegion(t, op.Regions[0], []Type{i64(), i64(), f32(), f32()}, []Type{Tensor(xla.Bool)})

	m := f.Map([]*Value{f.Arg(1), f.Arg(1)}, []int64{0, 1}, func(rb *FuncBuilder, a []*Value) *Value {
		return rb.Multiply(a[0], a[1])
	})
	assert.Equal(t, "tensor<2x3xf32>", m.Type.String())
	assert.Equal(t, I64Array(0, 1), m.Op().Attr("dimensions"))
	requireRegion(t, m.Op().Regions[0], []Type{f32(), f32()}, []Type{f32()})
	toInt := f.Map([]*Value{f.Arg(1)}, []int64{0, 1}, func(rb *FuncBuilder, a []*Value) *Value { return rb.Convert(a[0], xla.Int32) })
	assert.Equal(t, "tensor<2x3xi32>", toInt.Type.String())
	buildOK(t, b, f, r[0], m, toInt)

	b, f = newFunc(i64(2, 3))
	f.Sort([]*Value{f.Arg(0)}, 2, false, func(rb *FuncBuilder, a []*Value) *Value { return nil })
	requireErr(t, b, "stablehlo.sort", "dimension 2 out of range [-2, 2)")
	b, f = newFunc(i64(2, 3))
	f.Sort([]*Value{f.Arg(0)}, -1, false, func(rb *FuncBuilder, a []*Value) *Value { return a[0] })
	requireErr(t, b, "stablehlo.sort", "comparator must return tensor<i1>, got tensor<i64>")
	b, f = newFunc(i64(2, 3), i64(3, 2))
	f.Sort([]*Value{f.Arg(0), f.Arg(1)}, 0, false, nil)
	requireErr(t, b, "stablehlo.sort", "inputs must share one shape")
	b, f = newFunc(i64(2, 3))
	f.Map([]*Value{f.Arg(0)}, []int64{1, 0}, nil)
	requireErr(t, b, "stablehlo.map", "dimensions must be [0, ..., rank-1]")
}

func TestWhileIfCase(t *testing.T) {
	b, f := newFunc(i64(), f32(4))
	one := ConstantScalar(f, int64(1))
	ten := ConstantScalar(f, int64(10))
	loop := f.While([]*Value{f.Arg(0), f.Arg(1)},
		func(rb *FuncBuilder, a []*Value) *Value { return rb.Compare(a[0], ten, CompareLT, CompareAuto) },
		func(rb *FuncBuilder, a []*Value) []*Value { return []*Value{rb.Add(a[0], one), rb.Sine(a[1])} })
	require.Len(t, loop, 2)
	assert.Equal(t, "tensor<i64>", loop[0].Type.String())
	wop := loop[0].Op()
	require.Len(t, wop.Regions, 2)
	cond := requireRegion(t, wop.Regions[0], []Type{i64(), f32(4)}, []Type{Tensor(xla.Bool)})
	assert.Same(t, ten, cond.Ops[0].Operands[1], "the cond region captures a value of the enclosing function")
	requireRegion(t, wop.Regions[1], []Type{i64(), f32(4)}, []Type{i64(), f32(4)})

	pred := f.Compare(loop[0], ten, CompareEQ, CompareAuto)
	ifr := f.If(pred,
		func(rb *FuncBuilder) []*Value { return []*Value{rb.Negate(loop[1]), one} },
		func(rb *FuncBuilder) []*Value { return []*Value{loop[1], ten} })
	require.Len(t, ifr, 2)
	assert.Equal(t, "tensor<4xf32>", ifr[0].Type.String())
	iop := ifr[0].Op()
	require.Len(t, iop.Regions, 2)
	requireRegion(t, iop.Regions[0], nil, []Type{f32(4), i64()})
	requireRegion(t, iop.Regions[1], nil, []Type{f32(4), i64()})

	idx := ConstantScalar(f, int32(1))
	cr := f.Case(idx,
		func(rb *FuncBuilder) []*Value { return []*Value{rb.Cosine(ifr[0])} },
		func(rb *FuncBuilder) []*Value { return []*Value{rb.Sine(ifr[0])} },
		func(rb *FuncBuilder) []*Value { return []*Value{ifr[0]} })
	require.Len(t, cr, 1)
	require.Len(t, cr[0].Op().Regions, 3)

	// Nested regions: an if inside a while body sees both enclosing scopes.
	nested := f.While([]*Value{f.Arg(0)},
		func(rb *FuncBuilder, a []*Value) *Value { return rb.Compare(a[0], ten, CompareLT, CompareAuto) },
		func(rb *FuncBuilder, a []*Value) []*Value {
			p := rb.Compare(a[0], one, CompareGT, CompareAuto)
			return rb.If(p,
				func(ib *FuncBuilder) []*Value { return []*Value{ib.Add(a[0], one)} },
				func(ib *FuncBuilder) []*Value { return []*Value{ib.Add(a[0], ten)} })
		})
	assert.Equal(t, "tensor<i64>", nested[0].Type.String())
	buildOK(t, b, f, cr[0], nested[0])

	errCases := []struct {
		name, op, msg string
		run           func(f *FuncBuilder)
	}{
		{"while body types", "stablehlo.while", "body must return (tensor<i64>), got (tensor<i32>)", func(f *FuncBuilder) {
			f.While([]*Value{f.Arg(0)},
				func(rb *FuncBuilder, a []*Value) *Value { return ConstantScalar(rb, true) },
				func(rb *FuncBuilder, a []*Value) []*Value { return []*Value{rb.Convert(a[0], xla.Int32)} })
		}},
		{"while cond type", "stablehlo.while", "cond must return tensor<i1>, got tensor<i64>", func(f *FuncBuilder) {
			f.While([]*Value{f.Arg(0)},
				func(rb *FuncBuilder, a []*Value) *Value { return a[0] },
				func(rb *FuncBuilder, a []*Value) []*Value { return a })
		}},
		{"if branch types", "stablehlo.if", "true_branch returns (tensor<i64>), false_branch returns (tensor<f32>)", func(f *FuncBuilder) {
			f.If(ConstantScalar(f, true),
				func(rb *FuncBuilder) []*Value { return []*Value{f.Arg(0)} },
				func(rb *FuncBuilder) []*Value { return []*Value{ConstantScalar(rb, float32(1))} })
		}},
		{"if pred type", "stablehlo.if", "pred must be tensor<i1>", func(f *FuncBuilder) {
			f.If(f.Arg(0), nil, nil)
		}},
		{"if nil branch", "stablehlo.if", "false_branch closure is nil", func(f *FuncBuilder) {
			f.If(ConstantScalar(f, true), func(rb *FuncBuilder) []*Value { return nil }, nil)
		}},
		{"case index type", "stablehlo.case", "index must be tensor<i32>", func(f *FuncBuilder) {
			f.Case(f.Arg(0), func(rb *FuncBuilder) []*Value { return nil })
		}},
		{"case no branches", "stablehlo.case", "needs at least one branch", func(f *FuncBuilder) {
			f.Case(ConstantScalar(f, int32(0)))
		}},
		{"case branch types", "stablehlo.case", "branch 0 returns (), branch 1 returns (tensor<i64>)", func(f *FuncBuilder) {
			f.Case(ConstantScalar(f, int32(0)),
				func(rb *FuncBuilder) []*Value { return nil },
				func(rb *FuncBuilder) []*Value { return []*Value{f.Arg(0)} })
		}},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			b, f := newFunc(i64())
			c.run(f)
			requireErr(t, b, c.op, c.msg)
		})
	}
}

func TestOptimizationBarrierAndComposite(t *testing.T) {
	b := NewBuilder("m")
	dec := b.NewFunction("my_op_impl", f32(2), f32(2)).Private()
	dec.Return(dec.Add(dec.Arg(0), dec.Arg(1)))
	f := b.NewFunction("main", f32(2), i32())
	ob := f.OptimizationBarrier(f.Arg(0), f.Arg(1))
	require.Len(t, ob, 2)
	assert.Equal(t, "tensor<i32>", ob[1].Type.String())
	c := f.Composite("my.op", dec, []*Value{ob[0], ob[0]}, DictAttr{{Name: "k", Value: StringAttr("v")}}, 1)
	require.Len(t, c, 1)
	op := c[0].Op()
	assert.Equal(t, StringAttr("my.op"), op.Attr("name"))
	assert.Equal(t, SymbolRefAttr("my_op_impl"), op.Attr("decomposition"))
	assert.Equal(t, IntAttr{Value: 1, Type: xla.Int32}, op.Attr("version"))
	assert.Equal(t, DictAttr{{Name: "k", Value: StringAttr("v")}}, op.Attr("composite_attributes"))
	c0 := f.Composite("my.op", dec, []*Value{ob[0], ob[0]}, nil, 0)
	assert.Nil(t, c0[0].Op().Attr("version"))
	buildOK(t, b, f, c[0])

	b = NewBuilder("m")
	dec = b.NewFunction("impl", f32(2))
	dec.Return(dec.Arg(0))
	f = b.NewFunction("main", i32(2))
	f.Composite("my.op", dec, []*Value{f.Arg(0)}, nil, 0)
	requireErr(t, b, "stablehlo.composite", "decomposition @impl takes (tensor<2xf32>)")
}

func TestPromotable(t *testing.T) {
	for _, c := range []struct {
		from, to xla.DType
		want     bool
	}{
		{xla.Float32, xla.Float32, true}, {xla.Float32, xla.Float64, true}, {xla.BFloat16, xla.Float32, true},
		{xla.Float64, xla.Float32, false}, {xla.Int8, xla.Int32, true}, {xla.Bool, xla.Int32, true},
		{xla.Uint8, xla.Int16, true}, {xla.Int32, xla.Int8, false}, {xla.Int32, xla.Float32, false},
		{xla.Float32, xla.Complex64, false}, {xla.Complex64, xla.Complex128, true},
	} {
		assert.Equal(t, c.want, Promotable(c.from, c.to), "%v -> %v", c.from, c.to)
	}
}

// A reduce or reduce_window whose body works in a promotion of the
// inputs' element type verifies, its results in the body's type.
func TestVerifyPromotedReductions(t *testing.T) {
	reduce := func(in, body, out string) string {
		return `func.func @main(%arg0: tensor<4x4x` + in + `>, %arg1 : tensor<` + in + `>) -> tensor<4x` + out + `> {
  %0 = "stablehlo.reduce"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<` + body + `>, %arg3: tensor<` + body + `>):
    %1 = "stablehlo.add"(%arg2, %arg3) : (tensor<` + body + `>, tensor<` + body + `>) -> tensor<` + body + `>
    "stablehlo.return"(%1) : (tensor<` + body + `>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4x4x` + in + `>, tensor<` + in + `>) -> tensor<4x` + out + `>
  return %0 : tensor<4x` + out + `>
}`
	}
	for _, c := range []struct{ text, err string }{
		{reduce("f32", "f64", "f64"), ""},
		{reduce("i8", "i32", "i32"), ""},
		{`func.func @main(%arg0: tensor<4x4xbf16>, %arg1 : tensor<bf16>) -> tensor<4x2xf32> {
  %0 = "stablehlo.reduce_window"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%1) : (tensor<f32>) -> ()
  }) {window_dimensions = array<i64: 1, 3>} : (tensor<4x4xbf16>, tensor<bf16>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}`, ""},
		{reduce("f32", "i32", "i32"), "not a promotion"},
		{reduce("f64", "f32", "f32"), "not a promotion"},
		{reduce("f32", "f64", "f32"), "result 0 is tensor<4xf32>, want tensor<4xf64>"},
	} {
		m, err := Parse([]byte(c.text))
		require.NoError(t, err)
		err = m.Verify()
		if c.err != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			continue
		}
		require.NoError(t, err)
		m2, err := Parse([]byte(m.String())) // the printed form parses back
		require.NoError(t, err)
		assert.Equal(t, m.String(), m2.String())
	}
}

// Composite's attributes are checked as every other entry point's (a nil
// value printed <<NULL ATTRIBUTE>>, which does not parse).
func TestCompositeChecksItsAttributes(t *testing.T) {
	for _, c := range []struct {
		attrs DictAttr
		want  string
	}{
		{DictAttr{{Name: "a", Value: nil}}, "composite_attributes"},
		{DictAttr{{Name: "", Value: I64Attr(1)}}, "has no name"},
	} {
		b := NewBuilder("m")
		d := b.NewFunction("d", Tensor(xla.Float32, 4)).Private()
		d.Return(d.Arg(0))
		fb := b.NewFunction("main", Tensor(xla.Float32, 4))
		fb.Return(fb.Composite("x.y", d, []*Value{fb.Arg(0)}, c.attrs, 0)...)
		_, err := b.Build()
		require.ErrorContains(t, err, c.want)
	}
}

// ReduceMax and ReduceMin work on the 8-, 6- and 4-bit floats, starting
// from ±inf where the format has it and its extreme finite value where it
// has none (they failed: "no initial value").
func TestReduceExtremaOfNarrowFloats(t *testing.T) {
	for _, c := range []struct {
		dt       xla.DType
		max, min float64
	}{
		{xla.Float8E5M2, math.Inf(-1), math.Inf(1)},
		{xla.Float8E4M3FN, -448, 448},
		{xla.Float4E2M1FN, -6, 6},
		{xla.Float8E8M0FNU, math.Pow(2, -127), math.Pow(2, 127)},
	} {
		b := NewBuilder("m")
		fb := b.NewFunction("main", Tensor(c.dt, 3))
		fb.Return(fb.ReduceMax(fb.Arg(0)), fb.ReduceMin(fb.Arg(0)))
		m, err := b.Build()
		require.NoError(t, err, "%s", c.dt)
		require.NoError(t, m.Verify())
		f := xla.NarrowFloatOf(c.dt)
		var inits []float64
		m.Funcs[0].Walk(func(op *Op) bool {
			if op.Name == "stablehlo.constant" {
				inits = append(inits, f.Decode64(uint32(op.Attr("value").(DenseElementsAttr).Data[0])))
			}
			return true
		})
		assert.Equal(t, []float64{c.max, c.min}, inits, "%s", c.dt)
	}
}
