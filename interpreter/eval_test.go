package interpreter

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestCompileRejectsUnknownOps(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mydialect.frob"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`))
	require.NoError(t, err)
	_, err = Compile(m, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mydialect.frob is not supported")
	assert.Contains(t, err.Error(), "@main")
}

func TestIdentityFunctionRuns(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<2xf32>, %b: tensor<i32>) -> (tensor<i32>, tensor<2xf32>) {
  return %b, %a : tensor<i32>, tensor<2xf32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	a := NewTensor(xla.MakeShape(xla.Float32, 2))
	a.Data.([]float32)[1] = 5
	b := NewTensor(xla.MakeShape(xla.Int32))
	out, err := p.Run(context.Background(), Device{}, []Value{a, b})
	require.NoError(t, err)
	assert.Same(t, b, out[0])
	assert.Same(t, a, out[1])
	_, err = p.Run(context.Background(), Device{}, []Value{b, a})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "argument 0")
}

func TestHostRoundTripEveryDType(t *testing.T) {
	for _, dt := range xla.AllDTypes() {
		if StorageOf(dt) == StorageInvalid {
			continue
		}
		shape := xla.MakeShape(dt, 3)
		data := NewTensor(shape).Host()
		tt, err := TensorFromHost(shape, data)
		require.NoError(t, err, dt)
		assert.Equal(t, data, tt.Host(), dt)
	}
}

func TestWrap(t *testing.T) {
	assert.Equal(t, int64(-8), WrapInt(xla.Int4, 8))
	assert.Equal(t, int64(7), WrapInt(xla.Int4, -9))
	assert.Equal(t, int64(-2), WrapInt(xla.Int2, 2))
	assert.Equal(t, uint64(0), WrapUint(xla.Uint4, 16))
	assert.Equal(t, uint64(3), WrapUint(xla.Uint2, 7))
}

func TestNarrowFloats(t *testing.T) {
	// f16: 1.0 is 0x3c00, 65504 is the max, 65520 rounds to inf.
	assert.Equal(t, uint32(0x3c00), EncodeNarrow(xla.Float16, 1))
	assert.Equal(t, float32(65504), DecodeNarrow(xla.Float16, 0x7bff))
	assert.Equal(t, uint32(0x7c00), EncodeNarrow(xla.Float16, 65520))
	// bf16 rounds to nearest even.
	assert.Equal(t, uint32(0x3f80), EncodeNarrow(xla.BFloat16, 1.00390625))
	// f8e4m3fn: max 448, no infinity: overflow is NaN (0x7f).
	assert.Equal(t, float32(448), DecodeNarrow(xla.Float8E4M3FN, 0x7e))
	assert.Equal(t, uint32(0x7f), EncodeNarrow(xla.Float8E4M3FN, 1000))
}

// Values are dropped after their last use, including uses inside regions,
// and values of an enclosing block are never dropped inside a loop body.
func TestPlanFreesValuesAtLastUse(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<f32>, %n: tensor<i32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %a : tensor<f32>
  %1 = stablehlo.multiply %0, %0 : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %2:2 = stablehlo.while(%i = %c, %x = %a) : tensor<i32>, tensor<f32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      %y = stablehlo.add %x, %1 : tensor<f32>
      stablehlo.return %j, %y : tensor<i32>, tensor<f32>
    }
  return %2#1 : tensor<f32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	fp := p.funcs["main"]
	body := fp.blocks[m.Funcs[0].Body.Blocks[0]]
	slot := func(op, res int) int { return body[op].out[res] }
	args := m.Funcs[0].Body.Blocks[0].Args
	assert.Contains(t, body[1].free, slot(0, 0), "%0 dies at the multiply")
	assert.Contains(t, body[3].free, slot(1, 0), "%1 is used inside the loop: it dies with the while op")
	assert.Contains(t, body[3].free, fp.slots[args[1]], "%n is used in the loop condition")
	for _, pl := range fp.blocks[m.Funcs[0].Body.Blocks[0].Ops[3].Regions[1].Blocks[0]] {
		assert.NotContains(t, pl.free, slot(1, 0), "outer values are not dropped inside the body")
	}
	a := NewTensor(xla.MakeShape(xla.Float32))
	a.Data.([]float32)[0] = 1
	n := NewTensor(xla.MakeShape(xla.Int32))
	n.Data.([]int32)[0] = 3
	out, err := p.Run(context.Background(), Device{}, []Value{a, n})
	require.NoError(t, err)
	assert.Equal(t, []float32{13}, out[0].(*Tensor).Data) // 1 + 3*(2*2)
}

// Elementwise results are written into a dying operand only when nothing
// else can refer to its storage.
func TestPlanReusesDeadElementwiseOperands(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %0 = stablehlo.exponential %a : tensor<4xf32>
  %1 = stablehlo.add %0, %0 : tensor<4xf32>
  %2 = stablehlo.negate %1 : tensor<4xf32>
  %3 = stablehlo.add %a, %a : tensor<4xf32>
  %4 = stablehlo.reshape %3 : (tensor<4xf32>) -> tensor<2x2xf32>
  %5 = stablehlo.multiply %3, %2 : tensor<4xf32>
  return %2, %4, %5 : tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	plans := p.funcs["main"].blocks[m.Funcs[0].Body.Blocks[0]]
	assert.Equal(t, []int{0, 1}, plans[1].reuse, "add may overwrite %0 (made by exponential, read only by add)")
	assert.Equal(t, []int{0}, plans[2].reuse, "negate may overwrite %1")
	assert.Empty(t, plans[0].reuse, "the function argument is the caller's")
	assert.Empty(t, plans[5].reuse, "%3 is also read by reshape (which shares storage); %2 is returned")

	a := NewTensor(xla.MakeShape(xla.Float32, 4))
	copy(a.Data.([]float32), []float32{0, 1, 2, 3})
	before := append([]float32(nil), a.Data.([]float32)...)
	out, err := p.Run(context.Background(), Device{}, []Value{a})
	require.NoError(t, err)
	assert.Equal(t, before, a.Data.([]float32), "arguments are never overwritten")
	neg := out[0].(*Tensor).Data.([]float32)
	resh := out[1].(*Tensor).Data.([]float32)
	prod := out[2].(*Tensor).Data.([]float32)
	for i, x := range before {
		e := -2 * float32(math.Exp(float64(x)))
		assert.InDelta(t, e, neg[i], 1e-4)
		assert.Equal(t, 2*x, resh[i], "the reshaped value is untouched by the multiply")
		assert.InDelta(t, 2*x*e, prod[i], 1e-3)
	}
}

// A dot's result is new storage: an elementwise op where it dies may write
// into it (an accumulator update acc + a @ b allocates nothing more).
func TestPlanReusesDeadDotResults(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%acc: tensor<2x2xf32>, %a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %1 = stablehlo.add %acc, %0 : tensor<2x2xf32>
  %2 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %3 = stablehlo.add %acc, %2 : tensor<2x2xf32>
  return %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	plans := p.funcs["main"].blocks[m.Funcs[0].Body.Blocks[0]]
	assert.Equal(t, []int{1}, plans[1].reuse, "add may overwrite the dot's result (not %acc, the caller's)")
	assert.Empty(t, plans[3].reuse, "%2 is returned too")
	acc := shpT(xla.Float32, []int64{2, 2}, 1, 1, 1, 1)
	a := shpT(xla.Float32, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	b := shpT(xla.Float32, []int64{3, 2}, 1, 0, 0, 1, 1, 1)
	out, err := p.Run(context.Background(), Device{}, []Value{acc, a, b})
	require.NoError(t, err)
	assert.Equal(t, []float32{5, 6, 11, 12}, out[0].(*Tensor).Data)
	assert.Equal(t, []float32{4, 5, 10, 11}, out[1].(*Tensor).Data)
	assert.Equal(t, []float32{1, 1, 1, 1}, acc.Data)
}
