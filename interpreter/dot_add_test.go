package interpreter

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// dotAddLoop is a block-sparse kernel's accumulation: eight steps each
// multiply a 128×K block of %x by %w (K×256) and add the product to the
// carried 128×256 accumulator (128 KiB), which nothing reads after.
const dotAddLoop = `func.func @main(%x: tensor<1024xKxf32>, %w: tensor<Kx256xf32>) -> tensor<128x256xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.5> : tensor<128x256xf32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %z) : tensor<i32>, tensor<128x256xf32>
    cond {
      %n = stablehlo.constant dense<8> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %rows = stablehlo.constant dense<128> : tensor<i32>
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %off = stablehlo.multiply %i, %rows : tensor<i32>
      %blk = stablehlo.dynamic_slice %x, %off, %zero, sizes = [128, K] : (tensor<1024xKxf32>, tensor<i32>, tensor<i32>) -> tensor<128xKxf32>
      %d = stablehlo.dot_general %blk, %w, contracting_dims = [1] x [0] : (tensor<128xKxf32>, tensor<Kx256xf32>) -> tensor<128x256xf32>
      %s = stablehlo.add ADD
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %s : tensor<i32>, tensor<128x256xf32>
    }
  return %r#1 : tensor<128x256xf32>
}`

// runDotAdd compiles src (K the contracting size) with and without the
// run's storage optimisations, runs both on the same random operands and
// returns the results and the number of dots that added into their
// accumulator.
func runDotAdd(t *testing.T, src string, k int) (got, want []float32, sums int) {
	t.Helper()
	src = strings.ReplaceAll(src, "K", strconv.Itoa(k))
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	xv, wv := make([]float32, 1024*k), make([]float32, k*256)
	for i := range xv {
		xv[i] = r.Float32()*2 - 1
	}
	for i := range wv {
		wv[i] = r.Float32()*2 - 1
	}
	args := []Value{f32Tensor(xv, 1024, int64(k)), f32Tensor(wv, int64(k), 256)}
	p, err := Compile(m, "")
	require.NoError(t, err)
	x := &Exec{Ctx: context.Background(), Program: p}
	out, err := x.Call(p.Main, args)
	require.NoError(t, err)
	// A second run starts from the same numbers: the first wrote into
	// nothing the program or its arguments keep.
	again, err := p.Run(context.Background(), Device{}, args)
	require.NoError(t, err)
	require.Equal(t, out[0].(*Tensor).Data, again[0].(*Tensor).Data)
	plain, err := compileProgram(m, "", false)
	require.NoError(t, err)
	ref, err := plain.Run(context.Background(), Device{}, args)
	require.NoError(t, err)
	return out[0].(*Tensor).Data.([]float32), ref[0].(*Tensor).Data.([]float32), x.sums
}

func TestDotAddsIntoTheDyingAccumulator(t *testing.T) {
	for _, add := range []string{"%acc, %d", "%d, %acc"} {
		src := strings.Replace(dotAddLoop, "ADD", add+" : tensor<128x256xf32>", 1)
		got, want, sums := runDotAdd(t, src, 128)
		// Every step adds into the accumulator: the first into the
		// constant it starts as, which a run makes for itself (a large
		// splat) and hands to the loop.
		assert.Equal(t, 8, sums, "add %s", add)
		assert.Equal(t, want, got, "add %s: the numbers of a dot and an add", add)
	}
}

func TestDotAddsIntoTheAccumulatorOfTheBranchTaken(t *testing.T) {
	// pallas's accumulator reset: steps 0, 3 and 6 start over from the
	// product, the five others add it to the accumulator.
	const branch = `%three = stablehlo.constant dense<3> : tensor<i32>
      %ph = stablehlo.remainder %i, %three : tensor<i32>
      %reset = stablehlo.compare EQ, %ph, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %blk = stablehlo.dynamic_slice %x, %off, %zero, sizes = [128, K] : (tensor<1024xKxf32>, tensor<i32>, tensor<i32>) -> tensor<128xKxf32>
      %d = stablehlo.dot_general %blk, %w, contracting_dims = [1] x [0] : (tensor<128xKxf32>, tensor<Kx256xf32>) -> tensor<128x256xf32>
      %s = "stablehlo.if"(%reset) ({
        stablehlo.return %d : tensor<128x256xf32>
      }, {
        %c = stablehlo.constant dense<1> : tensor<i32>
        %sum = stablehlo.add %acc, %d : tensor<128x256xf32>
        stablehlo.return %sum : tensor<128x256xf32>
      }) : (tensor<i1>) -> tensor<128x256xf32>`
	lines := strings.Split(dotAddLoop, "\n")
	var kept []string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "%blk = "), strings.Contains(l, "%d = "):
		case strings.Contains(l, "%s = stablehlo.add ADD"):
			kept = append(kept, "      "+branch)
		default:
			kept = append(kept, l)
		}
	}
	got, want, sums := runDotAdd(t, strings.Join(kept, "\n"), 128)
	assert.Equal(t, 5, sums)
	assert.Equal(t, want, got)
}

func TestDotAddsNotIntoLiveOrForeignValues(t *testing.T) {
	t.Run("K over one block of gemm", func(t *testing.T) {
		src := strings.Replace(dotAddLoop, "ADD", "%acc, %d : tensor<128x256xf32>", 1)
		got, want, sums := runDotAdd(t, src, 384)
		assert.Zero(t, sums, "partial sums would be rounded differently")
		assert.Equal(t, want, got)
	})
	t.Run("accumulator read after the add", func(t *testing.T) {
		src := strings.Replace(dotAddLoop, "ADD", `%acc, %d : tensor<128x256xf32>
      %s2 = stablehlo.multiply %acc, %s : tensor<128x256xf32>`, 1)
		src = strings.Replace(src, "stablehlo.return %i1, %s :", "stablehlo.return %i1, %s2 :", 1)
		got, want, sums := runDotAdd(t, src, 128)
		assert.Zero(t, sums)
		assert.Equal(t, want, got)
	})
	t.Run("accumulator shared with a live reshape", func(t *testing.T) {
		// %v shares the accumulator's storage and is read after the add.
		src := strings.Replace(dotAddLoop, "%d = stablehlo.dot_general", `%v = stablehlo.reshape %acc : (tensor<128x256xf32>) -> tensor<256x128xf32>
      %d = stablehlo.dot_general`, 1)
		src = strings.Replace(src, "ADD", `%acc, %d : tensor<128x256xf32>
      %v2 = stablehlo.reshape %v : (tensor<256x128xf32>) -> tensor<128x256xf32>
      %s2 = stablehlo.subtract %s, %v2 : tensor<128x256xf32>`, 1)
		src = strings.Replace(src, "stablehlo.return %i1, %s :", "stablehlo.return %i1, %s2 :", 1)
		got, want, sums := runDotAdd(t, src, 128)
		assert.Zero(t, sums)
		assert.Equal(t, want, got)
	})
	t.Run("narrow floats and no steps of K", func(t *testing.T) {
		// bf16 and f16 round after each op: adding the product before
		// rounding it would round once instead of twice. With K = 0 the
		// add of +0 turns the accumulator's -0 (the negated +0 of %c)
		// into +0.
		for _, c := range []struct {
			dt  xla.DType
			typ string
			k   int
		}{{xla.BFloat16, "bf16", 128}, {xla.Float16, "f16", 128}, {xla.Float32, "f32", 0}} {
			src := strings.NewReplacer("T", c.typ, "K", strconv.Itoa(c.k)).Replace(`func.func @main(%a: tensor<128xKxT>, %b: tensor<Kx256xT>, %c: tensor<128x256xT>) -> tensor<128x256xT> {
  %acc = stablehlo.negate %c : tensor<128x256xT>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<128xKxT>, tensor<Kx256xT>) -> tensor<128x256xT>
  %s = stablehlo.add %acc, %d : tensor<128x256xT>
  return %s : tensor<128x256xT>
}`)
			m, err := stablehlo.Parse([]byte(src))
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(5, 6))
			random := func(n int) []float32 {
				v := make([]float32, n)
				for i := range v {
					v[i] = r.Float32()*2 - 1
				}
				return v
			}
			acc := random(128 * 256)
			if c.k == 0 {
				acc = make([]float32, 128*256) // +0
			}
			args := []Value{roundedTensor(c.dt, random(128*c.k), 128, int64(c.k)), roundedTensor(c.dt, random(c.k*256), int64(c.k), 256),
				roundedTensor(c.dt, acc, 128, 256)}
			p, err := Compile(m, "")
			require.NoError(t, err)
			x := &Exec{Ctx: context.Background(), Program: p}
			out, err := x.Call(p.Main, args)
			require.NoError(t, err)
			plain, err := compileProgram(m, "", false)
			require.NoError(t, err)
			ref, err := plain.Run(context.Background(), Device{}, args)
			require.NoError(t, err)
			assert.Zero(t, x.sums, c.typ)
			assert.Equal(t, float32Bits(ref[0].(*Tensor)), float32Bits(out[0].(*Tensor)), "%s K=%d", c.typ, c.k)
		}
	})
	t.Run("accumulator an argument", func(t *testing.T) {
		src := `func.func @main(%a: tensor<128x128xf32>, %b: tensor<128x256xf32>, %acc: tensor<128x256xf32>) -> tensor<128x256xf32> {
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
  %s = stablehlo.add %acc, %d : tensor<128x256xf32>
  return %s : tensor<128x256xf32>
}`
		m, err := stablehlo.Parse([]byte(src))
		require.NoError(t, err)
		p, err := Compile(m, "")
		require.NoError(t, err)
		acc := NewTensor(xla.MakeShape(xla.Float32, 128, 256))
		for i := range acc.Data.([]float32) {
			acc.Data.([]float32)[i] = 1
		}
		a, b := NewTensor(xla.MakeShape(xla.Float32, 128, 128)), NewTensor(xla.MakeShape(xla.Float32, 128, 256))
		for i := range a.Data.([]float32) {
			a.Data.([]float32)[i] = 1
		}
		for i := range b.Data.([]float32) {
			b.Data.([]float32)[i] = 2
		}
		x := &Exec{Ctx: context.Background(), Program: p}
		out, err := x.Call(p.Main, []Value{a, b, acc})
		require.NoError(t, err)
		assert.Zero(t, x.sums)
		assert.Equal(t, float32(257), out[0].(*Tensor).Data.([]float32)[0])
		assert.Equal(t, float32(1), acc.Data.([]float32)[0], "a run never writes into its arguments")
	})
}

// float32Bits is a float tensor's elements as their bits (so -0 and +0
// differ).
func float32Bits(t *Tensor) []uint32 {
	d := t.Data.([]float32)
	out := make([]uint32, len(d))
	for i, v := range d {
		out[i] = math.Float32bits(v)
	}
	return out
}

func TestExecReusedForAnotherCallWritesNoEarlierResult(t *testing.T) {
	// The result of one Call of an Exec, given to the next as its
	// argument, is the caller's: the next run must not write into it.
	m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<16384xf32>) -> tensor<16384xf32> {
  %e = stablehlo.exponential %x : tensor<16384xf32>
  return %e : tensor<16384xf32>
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	x := &Exec{Ctx: context.Background(), Program: p}
	first, err := x.Call(p.Main, []Value{NewTensor(xla.MakeShape(xla.Float32, 16384))})
	require.NoError(t, err)
	_, err = x.Call(p.Main, first)
	require.NoError(t, err)
	assert.Equal(t, float32(1), first[0].(*Tensor).Data.([]float32)[0], "exp(0), not exp(exp(0))")
}

// roundedTensor is a tensor of float type dt (stored as float32) holding
// vals rounded to dt.
func roundedTensor(dt xla.DType, vals []float32, dims ...int64) *Tensor {
	t := NewTensor(xla.MakeShape(dt, dims...))
	d := t.Data.([]float32)
	for i, v := range vals {
		d[i] = RoundNarrow(dt, v)
	}
	return t
}

func TestInPlaceOpsOverwriteCarriedValuesTheyAloneRead(t *testing.T) {
	// The add in the if branch reads the carried accumulator and the
	// step's square, neither read after it and both the run's own alone:
	// at each step from the second (the first takes the else branch)
	// both are offered to the add, which writes into one of them.
	step := `%c = stablehlo.compare GT, %i, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %next = "stablehlo.if"(%c) ({
        %t = stablehlo.add %acc, %sq : tensor<N xf32>
        stablehlo.return %t : tensor<N xf32>
      }, {
        stablehlo.return %sq : tensor<N xf32>
      }) : (tensor<i1>) -> tensor<N xf32>`
	src := strings.Replace(strings2(strings2(stepLoop, "STEP", step), "N ", "16384"),
		"%one = stablehlo.constant dense<1>", "%zero = stablehlo.constant dense<0> : tensor<i32>\n      %one = stablehlo.constant dense<1>", 1)
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	x := make([]float32, 2*16384)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	args := []Value{f32Tensor(x, 2*16384)}
	p, err := Compile(m, "")
	require.NoError(t, err)
	e := &Exec{Ctx: context.Background(), Program: p}
	out, err := e.Call(p.Main, args)
	require.NoError(t, err)
	plain, err := compileProgram(m, "", false)
	require.NoError(t, err)
	ref, err := plain.Run(context.Background(), Device{}, args)
	require.NoError(t, err)
	assert.Equal(t, ref[0].(*Tensor).Data, out[0].(*Tensor).Data)
	assert.Equal(t, 2*199, e.overwrites, "two operands offered at each of steps 1..199")
}
