package stablehlo

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// loopModule builds: main(x, n) = while i < n { x = sin(x) + x (via if) } ; helper called.
func loopModule(t *testing.T) (*Module, *Func) {
	t.Helper()
	b := NewBuilder("m")
	h := b.NewFunction("helper", f32(4)).Private()
	h.Return(h.Cosine(h.Arg(0)))
	f := b.NewFunction("main", f32(4), i64())
	x, n := f.Arg(0), f.Arg(1)
	one := ConstantScalar(f, int64(1))
	loop := f.While([]*Value{ConstantScalar(f, int64(0)), x},
		func(rb *FuncBuilder, a []*Value) *Value { return rb.Compare(a[0], n, CompareLT, CompareAuto) },
		func(rb *FuncBuilder, a []*Value) []*Value {
			s := rb.Sine(a[1])
			return []*Value{rb.Add(a[0], one), rb.Add(s, x)}
		})
	c := f.Call(h, loop[1])
	f.Return(f.Multiply(c[0], x))
	m, err := b.Build()
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	return m, m.Func("main")
}

// firstOp is f's first op called name, in walk order.
func firstOp(f *Func, name string) *Op {
	var found *Op
	f.Walk(func(op *Op) bool {
		if found == nil && op.Name == name {
			found = op
		}
		return found == nil
	})
	return found
}

func opNames(ops []*Op) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.Name
	}
	return out
}

func TestWalk(t *testing.T) {
	m, f := loopModule(t)
	var all []*Op
	m.Walk(func(op *Op) bool { all = append(all, op); return true })
	assert.Equal(t, []string{
		"stablehlo.cosine", "func.return", // helper
		"stablehlo.constant", "stablehlo.constant", "stablehlo.while",
		"stablehlo.compare", "stablehlo.return", // cond
		"stablehlo.sine", "stablehlo.add", "stablehlo.add", "stablehlo.return", // body
		"func.call", "stablehlo.multiply", "func.return",
	}, opNames(all))

	var top []*Op
	f.Walk(func(op *Op) bool { top = append(top, op); return op.Name != "stablehlo.while" })
	assert.Equal(t, []string{"stablehlo.constant", "stablehlo.constant", "stablehlo.while", "func.call", "stablehlo.multiply", "func.return"}, opNames(top))
}

func TestUsersAndReplace(t *testing.T) {
	_, f := loopModule(t)
	x := f.Args()[0]
	uses := Users(x)
	require.Len(t, uses, 3)
	assert.Equal(t, "stablehlo.while", uses[0].Op.Name)
	assert.Equal(t, 1, uses[0].Index)
	assert.Equal(t, "stablehlo.add", uses[1].Op.Name, "a use inside the while body is found")
	assert.Equal(t, 1, uses[1].Index)
	assert.Equal(t, "stablehlo.multiply", uses[2].Op.Name)
	assert.True(t, HasUsers(x))
	um := UseMap(f.Body)
	assert.Equal(t, uses, um[x])

	// Replace x by a new constant inserted at the start of the body.
	body := f.Body.Blocks[0]
	fb := BuilderAt(body.Ops[0])
	c := Splat(fb, float32(2), 4)
	require.NoError(t, fb.Err())
	assert.Same(t, c.Op(), body.Ops[0])
	assert.Equal(t, 3, ReplaceAllUsesWith(x, c))
	assert.False(t, HasUsers(x))
	assert.Len(t, Users(c), 3)
	require.NoError(t, f.Verify())

	// ReplaceUsesIf: only the use in the multiply goes back to x.
	n := ReplaceUsesIf(c, x, func(u Use) bool { return u.Op.Name == "stablehlo.multiply" })
	assert.Equal(t, 1, n)
	assert.Len(t, Users(x), 1)
	require.NoError(t, f.Verify())
}

func TestBuilderAtInsertsBeforeOp(t *testing.T) {
	_, f := loopModule(t)
	body := f.Body.Blocks[0]
	ret := body.Terminator()
	mul := ret.Operands[0]
	fb := BuilderAt(ret)
	neg := fb.Negate(mul)
	require.NoError(t, fb.Err())
	ret.Operands[0] = neg
	assert.Same(t, neg.Op(), body.Ops[len(body.Ops)-2])
	require.NoError(t, f.Verify())

	// Inside a region: values of the enclosing function are visible.
	whileOp := firstOp(f, "stablehlo.while")
	bodyBlock := whileOp.Regions[1].Blocks[0]
	rb := BuilderAt(bodyBlock.Terminator())
	v := rb.Add(bodyBlock.Args[1], f.Args()[0])
	require.NoError(t, rb.Err())
	assert.Equal(t, "tensor<4xf32>", v.Type.String())
	require.NoError(t, f.Verify())

	// A value of another function is not visible.
	rb.Add(bodyBlock.Args[1], deadValue(f32(4)))
	require.Error(t, rb.Err())
	bad := BuilderAt(nil)
	require.Error(t, bad.Err())
	assert.NotPanics(t, func() { bad.Negate(f.Args()[0]) })
}

// TestBuilderAtRefusesLaterValues: a builder inserting before an op may
// not use that op's results or those of later ops, in its block or in
// the blocks around it; earlier values and its own new ones it may.
func TestBuilderAtRefusesLaterValues(t *testing.T) {
	_, f := loopModule(t)
	body := f.Body.Blocks[0]
	ret := body.Terminator()
	last := ret.Operands[0].Op()
	require.NotNil(t, last)
	fb := BuilderAt(last)
	fb.Negate(last.Results[0])
	require.ErrorContains(t, fb.Err(), "comes after the point where ops are inserted")
	require.NoError(t, f.Verify(), "the refused op is not inserted")

	fb = BuilderAt(last)
	n := fb.Negate(last.Operands[0])
	fb.Negate(n)
	require.NoError(t, fb.Err(), "earlier values and the builder's own")

	// In a while body: the while's results (after it, in the function's
	// block) are not visible; the function's arguments are.
	whileOp := firstOp(f, "stablehlo.while")
	bodyBlock := whileOp.Regions[1].Blocks[0]
	rb := BuilderAt(bodyBlock.Terminator())
	rb.Add(bodyBlock.Args[1], f.Args()[0])
	require.NoError(t, rb.Err())
	rb.Add(bodyBlock.Args[1], whileOp.Results[1])
	require.ErrorContains(t, rb.Err(), "stablehlo.while, which comes after")
	require.NoError(t, f.Verify())
}

func TestBuilderAtEnd(t *testing.T) {
	// Build a function body from scratch on a detached block.
	blk := NewBlock(f32(3))
	fb := BuilderAtEnd(blk)
	fb.Return(fb.Exponential(fb.Arg(0)))
	require.NoError(t, fb.Err())
	fn := &Func{Name: "g", Body: NewRegion(blk), ResultTypes: []Type{f32(3)}}
	require.NoError(t, fn.Verify())
	assert.Equal(t, []string{"stablehlo.exponential", "func.return"}, opNames(blk.Ops))
}

func TestExtendParsedModule(t *testing.T) {
	m, _ := loopModule(t)
	b := Extend(m)
	g := b.NewFunction("extra", f32(4), i64())
	r := g.CallSymbol("main", []Type{f32(4)}, g.Arg(0), g.Arg(1))
	g.Return(g.Tanh(r[0]))
	out, err := b.Build()
	require.NoError(t, err)
	assert.Same(t, m, out)
	assert.Len(t, m.Funcs, 3)
	require.NoError(t, m.Verify())
	Extend(m).NewFunction("main")
	b2 := Extend(m)
	b2.NewFunction("helper")
	requireErr(t, b2, "func.func", "@helper already exists")

	// Functions the module gains or loses outside the builder count.
	b3 := Extend(m)
	b3.NewFunction("g2").Return()
	m.AddFunc(&Func{Name: "added"})
	b3.NewFunction("added")
	requireErr(t, b3, "func.func", "@added already exists")
	b4 := Extend(m)
	b4.NewFunction("g3").Return()
	m.Funcs = []*Func{m.Funcs[0]}
	b4.NewFunction("g2").Return()
	require.NoError(t, b4.Err(), "g2 left the module")
	b4.NewFunction(m.Funcs[0].Name)
	requireErr(t, b4, "func.func", "already exists")
}

func TestCloneFunc(t *testing.T) {
	m, f := loopModule(t)
	c := CloneFunc(f, "main_clone")
	assert.Equal(t, "main_clone", c.Name)
	assert.Nil(t, c.Module())
	m.AddFunc(c)
	require.NoError(t, m.Verify())

	// Same structure, no shared ops or values.
	var orig, cloned []*Op
	f.Walk(func(op *Op) bool { orig = append(orig, op); return true })
	c.Walk(func(op *Op) bool { cloned = append(cloned, op); return true })
	require.Equal(t, opNames(orig), opNames(cloned))
	origVals := map[*Value]bool{}
	for _, a := range f.Args() {
		origVals[a] = true
	}
	for _, op := range orig {
		for _, r := range op.Results {
			origVals[r] = true
		}
		for _, r := range op.Regions {
			for _, b := range r.Blocks {
				for _, a := range b.Args {
					origVals[a] = true
				}
			}
		}
	}
	for i, op := range cloned {
		assert.NotSame(t, orig[i], op)
		for _, o := range op.Operands {
			assert.False(t, origVals[o], "%s uses a value of the original", op.Name)
		}
		assert.Equal(t, orig[i].Attrs, op.Attrs)
	}
	// The captured function argument inside the while regions maps to the clone's argument.
	var addInBody *Op
	c.Walk(func(op *Op) bool {
		if op.Name == "stablehlo.add" && op.Operands[1] == c.Args()[0] {
			addInBody = op
		}
		return true
	})
	require.NotNil(t, addInBody)

	// Editing the clone leaves the original alone.
	cloned[0].Name = "stablehlo.iota"
	assert.Equal(t, "stablehlo.constant", orig[0].Name)
	require.NoError(t, f.Verify())
}

func TestEraseAndInsertAfter(t *testing.T) {
	b, f := newFunc(f32(2))
	x := f.Arg(0)
	a := f.Negate(x)
	unused := f.Sine(x)
	f.Return(a)
	_, err := b.Build()
	require.NoError(t, err)
	assert.Error(t, a.Op().Erase(), "a is used by the return")
	require.NoError(t, unused.Op().Erase())
	blk := f.Block()
	assert.Equal(t, []string{"stablehlo.negate", "func.return"}, opNames(blk.Ops))
	assert.Nil(t, unused.Op().Parent())

	extra := NewOp("stablehlo.abs", []*Value{a}, []Type{f32(2)})
	require.NoError(t, blk.InsertAfter(a.Op(), extra))
	assert.Equal(t, []string{"stablehlo.negate", "stablehlo.abs", "func.return"}, opNames(blk.Ops))
	assert.Same(t, blk, extra.Parent())
	assert.Error(t, blk.InsertAfter(unused.Op(), extra))
	require.NoError(t, f.Func().Verify())
}

func TestVerifyCatchesBrokenIR(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(f *Func)
		msg    string
	}{
		{"use before definition", func(f *Func) {
			ops := f.Body.Blocks[0].Ops
			ops[0], ops[1] = ops[1], ops[0]
		}, "is not defined before this use"},
		{"value of another function", func(f *Func) {
			f.Body.Blocks[0].Ops[0].Operands[0] = &Value{Type: f32(2)}
		}, "not visible here"},
		{"missing terminator", func(f *Func) {
			blk := f.Body.Blocks[0]
			blk.Ops = blk.Ops[:len(blk.Ops)-1]
		}, "block must end with func.return"},
		{"wrong result type", func(f *Func) {
			f.ResultTypes = []Type{i32(2)}
		}, "returns (tensor<2xf32>), declared (tensor<2xi32>)"},
		{"missing attribute", func(f *Func) {
			f.Body.Blocks[0].Ops[1].Attrs = nil // the compare
		}, "missing attribute comparison_direction"},
		{"wrong attribute kind", func(f *Func) {
			f.Body.Blocks[0].Ops[1].Attrs[0].Value = StringAttr("LT")
		}, "attribute comparison_direction must be EnumAttr"},
		{"region terminator", func(f *Func) {
			sel := f.Body.Blocks[0].Ops[2]
			rb := sel.Regions[0].Blocks[0]
			rb.Ops[len(rb.Ops)-1].Name = "func.return"
		}, "in a region of stablehlo.map"},
		{"result type differs from inference", func(f *Func) {
			f.Body.Blocks[0].Ops[0].Results[0].Type = f32(3)
		}, "stablehlo.add(tensor<2xf32>, tensor<2xf32>): result 0 is tensor<3xf32>, want tensor<2xf32>"},
		{"operand types differ", func(f *Func) {
			f.Body.Blocks[0].Ops[1].Operands[1] = &Value{Type: i32(2)}
		}, "operand 1 (tensor<2xi32>) is not defined"},
		{"operand count", func(f *Func) {
			op := f.Body.Blocks[0].Ops[0]
			op.Operands = op.Operands[:1]
		}, "has 1 operands, want 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, fb := newFunc(f32(2))
			x := fb.Arg(0)
			s := fb.Add(x, x)
			p := fb.Compare(s, x, CompareLT, CompareAuto)
			m := fb.Map([]*Value{s}, []int64{0}, func(rb *FuncBuilder, a []*Value) *Value { return rb.Negate(a[0]) })
			fb.Return(fb.Select(p, m, x))
			mod, err := b.Build()
			require.NoError(t, err)
			require.NoError(t, mod.Verify())
			c.break_(mod.Funcs[0])
			err = mod.Verify()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}

	// Calls: missing callee, wrong types.
	m, _ := loopModule(t)
	m.Func("helper").Name = "renamed"
	err := m.Verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no function @helper")
	m, _ = loopModule(t)
	m.Func("helper").ResultTypes = []Type{i32()}
	err = m.Verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "returns (tensor<4xf32>), declared (tensor<i32>)")
	m, _ = loopModule(t)
	m.AddFunc(&Func{Name: "main"})
	assert.ErrorContains(t, m.Verify(), "duplicate function @main")
}

func TestInferResultTypes(t *testing.T) {
	x := &Value{Type: f32(2, 3)}
	w := &Value{Type: f32(3, 4)}
	cases := []struct {
		op    *Op
		want  []Type
		known bool
		err   string
	}{
		{NewOp("stablehlo.add", []*Value{x, x}, nil), []Type{f32(2, 3)}, true, ""},
		{NewOp("stablehlo.add", []*Value{x, w}, nil), nil, true, "same type"},
		{NewOp("stablehlo.floor", []*Value{{Type: i32(2)}}, nil), nil, true, "is not float"},
		{NewOp("stablehlo.dot_general", []*Value{x, w}, []Type{f32()}, NamedAttr{Name: "dot_dimension_numbers",
			Value: DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}}), []Type{f32(2, 4)}, true, ""},
		{NewOp("stablehlo.transpose", []*Value{x}, nil, NamedAttr{Name: "permutation", Value: I64Array(1, 0)}), []Type{f32(3, 2)}, true, ""},
		{NewOp("stablehlo.compare", []*Value{x, x}, nil), []Type{Tensor(xla.Bool, 2, 3)}, true, ""},
		{NewOp("stablehlo.custom_call", []*Value{x}, []Type{f32()}), nil, false, ""},
		{NewOp("chlo.erf", []*Value{x}, []Type{f32()}), []Type{f32(2, 3)}, true, ""},
		{NewOp("mhlo.erf", []*Value{x}, []Type{f32()}), nil, false, ""},
	}
	for _, c := range cases {
		types, known, err := InferResultTypes(c.op)
		assert.Equal(t, c.known, known, c.op.Name)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, typeList(c.want), typeList(types), c.op.Name)
	}
}

func TestCheckResultTypesOfOpsGivenTheirShape(t *testing.T) {
	x := &Value{Type: f32(1, 3)}
	bd := func(dims ...int64) NamedAttr {
		return NamedAttr{Name: "broadcast_dimensions", Value: I64Array(dims...)}
	}
	iotaDim := func(d int64) NamedAttr {
		return NamedAttr{Name: "iota_dimension", Value: IntAttr{Value: d, Type: xla.Int64}}
	}
	cases := []struct {
		op    *Op
		known bool
		err   string
	}{
		{NewOp("stablehlo.broadcast_in_dim", []*Value{x}, []Type{f32(2, 5, 3)}, bd(0, 2)), true, ""},
		{NewOp("stablehlo.broadcast_in_dim", []*Value{x}, []Type{f32(2, 5, 4)}, bd(0, 2)), true, "cannot broadcast"},
		{NewOp("stablehlo.broadcast_in_dim", []*Value{x}, []Type{i32(2, 5, 3)}, bd(0, 2)), true, "element types differ"},
		{NewOp("stablehlo.broadcast_in_dim", []*Value{x}, []Type{f32(2, 5, 3)}, bd(0)), true, "broadcast_dimensions has 1 entries"},
		{NewOp("stablehlo.broadcast_in_dim", []*Value{x}, []Type{f32(2, 5, 3)}), true, "broadcast_dimensions must be"},
		{NewOp("stablehlo.reshape", []*Value{x}, []Type{f32(3)}), true, ""},
		{NewOp("stablehlo.reshape", []*Value{x}, []Type{f32(4)}), true, "cannot reshape 3 elements"},
		{NewOp("stablehlo.convert", []*Value{x}, []Type{i32(1, 3)}), true, ""},
		{NewOp("stablehlo.convert", []*Value{x}, []Type{i32(3)}), true, "shapes differ"},
		{NewOp("stablehlo.iota", nil, []Type{i32(4, 2)}, iotaDim(1)), true, ""},
		{NewOp("stablehlo.iota", nil, []Type{i32(4, 2)}, iotaDim(2)), true, "iota_dimension"},
		{NewOp("stablehlo.reshape", []*Value{{Type: f32(DynamicDim)}}, []Type{f32(3)}), false, ""},
		{NewOp("stablehlo.iota", nil, []Type{Tensor(xla.Bool, 3)}, iotaDim(0)), true, "not numeric"},
		// Types kept as text (quantized, bounded) are not checked: Verify
		// must not reject them.
		{NewOp("stablehlo.reshape", []*Value{{Type: OpaqueType{Text: "tensor<2x3x!quant.uniform<i8:f32, 0.1>>"}}}, []Type{OpaqueType{Text: "tensor<6x!quant.uniform<i8:f32, 0.1>>"}}), false, ""},
	}
	for _, c := range cases {
		known, err := CheckResultTypes(c.op)
		assert.Equal(t, c.known, known, "%s %v", c.op.Name, c.op.Results[0].Type)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, "%s %v", c.op.Name, c.op.Results[0].Type)
			continue
		}
		assert.NoError(t, err, "%s %v", c.op.Name, c.op.Results[0].Type)
	}
}

func TestOpTable(t *testing.T) {
	for name, s := range opSpecs {
		assert.Equal(t, name, s.name)
		for _, a := range s.attrs {
			assert.NotEmpty(t, a.name)
			if a.kind == attrInt {
				assert.True(t, a.dtype == xla.Int32 || a.dtype == xla.Int64, "%s.%s", name, a.name)
			}
			if a.kind == attrEnum {
				assert.NotEmpty(t, enumValues[a.enum], "%s.%s enum %s", name, a.name, a.enum)
			}
			assert.NotEqual(t, "", a.kind.String())
		}
	}
	require.NotNil(t, opSpecs["stablehlo.gather"].attr("slice_sizes"))
	assert.Equal(t, attrI64Array, opSpecs["stablehlo.gather"].attr("slice_sizes").kind)
	assert.Nil(t, opSpecs["stablehlo.add"].attr("x"))
	assert.Len(t, opSpecs["stablehlo.dynamic_conv"].attrs, len(opSpecs["stablehlo.convolution"].attrs)-1)
}

func TestVerifyAcceptsShapeOpsOfTypesKeptAsText(t *testing.T) {
	src := `func.func @main(%x: tensor<2x3x!quant.uniform<i8:f32, 0.1>>, %y: tensor<?xf32, #stablehlo.bounds<8>>) -> (tensor<6x!quant.uniform<i8:f32, 0.1>>, tensor<1x?xf32, #stablehlo.bounds<?, 8>>) {
  %0 = stablehlo.reshape %x : (tensor<2x3x!quant.uniform<i8:f32, 0.1>>) -> tensor<6x!quant.uniform<i8:f32, 0.1>>
  %1 = stablehlo.reshape %y : (tensor<?xf32, #stablehlo.bounds<8>>) -> tensor<1x?xf32, #stablehlo.bounds<?, 8>>
  return %0, %1 : tensor<6x!quant.uniform<i8:f32, 0.1>>, tensor<1x?xf32, #stablehlo.bounds<?, 8>>
}`
	m, err := Parse([]byte(src))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
}

// TestCallCycle finds the cycles a root reaches, through func.call in
// nested regions and composite decompositions, and none elsewhere.
func TestCallCycle(t *testing.T) {
	m, err := Parse([]byte(`func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @g(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}
func.func private @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.composite "x.h" %a {decomposition = @h} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @h(%a: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<true> : tensor<i1>
  %0 = "stablehlo.if"(%c) ({
    %1 = func.call @f(%a) : (tensor<f32>) -> tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }, {
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  return %0 : tensor<f32>
}`))
	require.NoError(t, err)
	assert.Nil(t, m.CallCycle("main"))
	assert.Nil(t, m.CallCycle("g"))
	assert.Equal(t, []string{"f", "h", "f"}, m.CallCycle(""))
	assert.Equal(t, []string{"h", "f", "h"}, m.CallCycle("h"))
	assert.Nil(t, m.CallCycle("nowhere"))
}

// TestVerifyCompareType: Verify refuses a compare_type that does not
// apply to the operands' element type (FLOAT on integers, TOTALORDER on
// integers), as the builder does; SIGNED and UNSIGNED on either kind of
// integer compare by the operands' own signedness and pass.
func TestVerifyCompareType(t *testing.T) {
	for _, c := range []struct{ et, ct, want string }{
		{"i32", "FLOAT", "compare type FLOAT does not apply to element type i32"},
		{"ui8", "TOTALORDER", "compare type TOTALORDER does not apply"},
		{"f32", "FLOAT", ""},
		{"f32", "TOTALORDER", ""},
		{"i32", "SIGNED", ""},
		{"ui32", "UNSIGNED", ""},
		{"i1", "UNSIGNED", ""},
		// The spec's pairing (compare's C3): SIGNED only for signed
		// integers, UNSIGNED for unsigned integers and booleans.
		{"ui32", "SIGNED", "compare type SIGNED does not apply to element type ui32"},
		{"i32", "UNSIGNED", "compare type UNSIGNED does not apply to element type i32"},
		{"i1", "SIGNED", "compare type SIGNED does not apply to element type i1"},
	} {
		m, err := Parse([]byte(fmt.Sprintf(`func.func @main(%%a: tensor<3x%[1]s>) -> tensor<3xi1> {
  %%0 = stablehlo.compare LT, %%a, %%a, %[2]s : (tensor<3x%[1]s>, tensor<3x%[1]s>) -> tensor<3xi1>
  return %%0 : tensor<3xi1>
}`, c.et, c.ct)))
		require.NoError(t, err)
		err = m.Verify()
		if c.want == "" {
			assert.NoError(t, err, "%s %s", c.et, c.ct)
		} else {
			assert.ErrorContains(t, err, c.want, "%s %s", c.et, c.ct)
		}
	}
}
