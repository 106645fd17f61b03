package stablehlo

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// Fail keeps the first error, but an error that wraps it (a package
// explaining in its own terms an op of its that failed) takes its place.
func TestFailKeepsFirstErrorUnlessWrapped(t *testing.T) {
	build := func(second func(fb *FuncBuilder, first error)) error {
		b := NewBuilder("m")
		fb := b.NewFunction("main", Tensor(xla.Float32, 2))
		fb.Add(fb.Arg(0), fb.Zero(Tensor(xla.Float32, 3))) // shapes differ
		first := fb.Err()
		require.Error(t, first)
		second(fb, first)
		fb.Return(fb.Arg(0))
		_, err := b.Build()
		return err
	}
	unrelated := errors.New("unrelated")
	err := build(func(fb *FuncBuilder, _ error) { fb.Fail("pkg.op", unrelated) })
	assert.NotErrorIs(t, err, unrelated, "a later unrelated error does not replace the first")

	var explained error
	err = build(func(fb *FuncBuilder, first error) {
		explained = fmt.Errorf("kernel k, op abs at k.go:3: %w", first)
		fb.Fail("pkg.op", explained)
	})
	assert.ErrorIs(t, err, explained, "an error wrapping the first takes its place")
	assert.Contains(t, err.Error(), "kernel k, op abs at k.go:3")

	plain := build(func(*FuncBuilder, error) {})
	err = build(func(fb *FuncBuilder, first error) { fb.Fail("pkg.op", first) })
	assert.Equal(t, plain.Error(), err.Error(), "failing with the recorded error itself changes nothing")

	err = build(func(fb *FuncBuilder, _ error) { fb.Fail("pkg.op", nil) })
	require.Error(t, err)
}

// What Build accepts, Verify accepts and the parser reads back: an op
// built by name has its result types inferred where the op table knows
// them, a terminator cannot be built by name or mid-block, and a call's
// callee is checked at Build.
func TestOpByNameIsChecked(t *testing.T) {
	f32x2 := Tensor(xla.Float32, 2)
	for _, c := range []struct {
		name  string
		build func(fb *FuncBuilder)
		want  string
	}{
		{"result type", func(fb *FuncBuilder) {
			fb.Op("stablehlo.add", []*Value{fb.Arg(0), fb.Arg(0)}, []Type{Tensor(xla.Float32, 3)})
		}, "stablehlo.add(tensor<2xf32>, tensor<2xf32>) at builder_fail_test.go"},
		{"return by name", func(fb *FuncBuilder) {
			fb.Op("stablehlo.return", []*Value{fb.Arg(0)}, nil)
		}, "stablehlo.return ends a block: use Return"},
		{"func.return by name", func(fb *FuncBuilder) {
			fb.Op("func.return", []*Value{fb.Arg(0)}, nil)
		}, "func.return ends a block"},
		{"missing callee", func(fb *FuncBuilder) {
			fb.Op("func.call", []*Value{fb.Arg(0)}, []Type{f32x2}, NamedAttr{Name: "callee", Value: SymbolRefAttr("nope")})
		}, "callee @nope is not a function of the module"},
	} {
		b := NewBuilder("m")
		fb := b.NewFunction("main", f32x2)
		c.build(fb)
		fb.Return(fb.Arg(0))
		_, err := b.Build()
		require.ErrorContains(t, err, c.want, c.name)
	}

	// A call by name to a function of the module keeps its attributes.
	b0 := NewBuilder("m")
	g := b0.NewFunction("g", f32x2)
	g.Return(g.Arg(0))
	main := b0.NewFunction("main", f32x2)
	r := main.Op("func.call", []*Value{main.Arg(0)}, []Type{f32x2},
		NamedAttr{Name: "callee", Value: SymbolRefAttr("g")}, NamedAttr{Name: "mhlo.frontend_attributes", Value: DictAttr{}})
	main.Return(r...)
	m0, err := b0.Build()
	require.NoError(t, err)
	require.NoError(t, m0.Verify())
	assert.NotNil(t, r[0].Op().Attr("mhlo.frontend_attributes"))

	// A return inserted before an op would end its block mid-way.
	b := NewBuilder("m")
	fb := b.NewFunction("main", f32x2)
	fb.Return(fb.Negate(fb.Arg(0)))
	m, err := b.Build()
	require.NoError(t, err)
	ret := m.Func("main").Body.Blocks[0].Terminator()
	at := BuilderAt(ret)
	at.Return(ret.Operands[0])
	require.ErrorContains(t, at.Err(), "the builder inserts before func.return: a return must end its block")
	require.NoError(t, m.Verify())
}

// Verify refuses a terminator of any kind before the end of a block, as
// the parser does.
func TestVerifyRefusesTerminatorsMidBlock(t *testing.T) {
	b := NewBuilder("m")
	fb := b.NewFunction("main", Tensor(xla.Float32, 2))
	fb.Return(fb.Arg(0))
	m, err := b.Build()
	require.NoError(t, err)
	block := m.Func("main").Body.Blocks[0]
	stray := NewOp("stablehlo.return", []*Value{block.Args[0]}, nil)
	require.NoError(t, block.InsertBefore(block.Terminator(), stray))
	require.ErrorContains(t, m.Verify(), "stablehlo.return before the end of a block")
	_, err = Parse([]byte(m.String()))
	require.ErrorContains(t, err, "a terminator must be the last operation of its block")
}

// A slice's size is ceil((limit-start)/stride), also for strides near
// the int64 limit.
func TestSliceHugeStride(t *testing.T) {
	b := NewBuilder("m")
	fb := b.NewFunction("main", Tensor(xla.Float32, 10))
	s := fb.Slice(fb.Arg(0), []int64{2}, []int64{10}, []int64{math.MaxInt64})
	assert.Equal(t, "tensor<1xf32>", s.Type.String())
	assert.Equal(t, "tensor<0xf32>", fb.Slice(fb.Arg(0), []int64{4}, []int64{4}, []int64{3}).Type.String())
	assert.Equal(t, "tensor<3xf32>", fb.Slice(fb.Arg(0), []int64{1}, []int64{8}, []int64{3}).Type.String())
	fb.Return(s)
	_, err := b.Build()
	require.NoError(t, err)
}

// A function that never returned is reported where it was started.
func TestNoReturnPointsAtNewFunction(t *testing.T) {
	b := NewBuilder("m")
	b.NewFunction("main", Tensor(xla.Float32, 2)) // the line reported
	_, err := b.Build()
	var be *BuildError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "builder_fail_test.go", be.File)
	assert.NotZero(t, be.Line)
	assert.Contains(t, err.Error(), "function @main (started here) has no Return")
}

// An enum attribute's value must be one of its enum's, in built and in
// parsed ops.
func TestEnumValuesChecked(t *testing.T) {
	f32x2 := Tensor(xla.Float32, 2)
	b := NewBuilder("m")
	fb := b.NewFunction("main", f32x2)
	fb.Op("stablehlo.compare", []*Value{fb.Arg(0), fb.Arg(0)}, []Type{Tensor(xla.Bool, 2)},
		NamedAttr{Name: "comparison_direction", Value: EnumAttr{Dialect: "stablehlo", Enum: "comparison_direction", Value: "XX"}})
	fb.Return(fb.Arg(0))
	_, err := b.Build()
	require.ErrorContains(t, err, `attribute comparison_direction: "XX" is not a comparison_direction (one of EQ, NE, GE, GT, LE, LT)`)

	m, err := Parse([]byte(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction XX>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %1 = "stablehlo.dot_general"(%a, %a) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision LOWEST>]} : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
  return %a : tensor<2xf32>
}`))
	require.NoError(t, err)
	require.ErrorContains(t, m.Verify(), `"XX" is not a comparison_direction`)
	m.Func("main").Body.Blocks[0].Ops[0].Erase()
	require.ErrorContains(t, m.Verify(), `"LOWEST" is not a precision`)
}
