package interpreter

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// Known-answer vectors of Random123 (kat_vectors: threefry2x32 with 20
// rounds, philox4x32 with 10 rounds): counter, key, expected output.
func TestThreefry2x32KnownAnswers(t *testing.T) {
	cases := []struct{ ctr, key, want [2]uint32 }{
		{[2]uint32{0, 0}, [2]uint32{0, 0}, [2]uint32{0x6b200159, 0x99ba4efe}},
		{[2]uint32{0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [2]uint32{0x1cb996fc, 0xbb002be7}},
		{[2]uint32{0x243f6a88, 0x85a308d3}, [2]uint32{0x13198a2e, 0x03707344}, [2]uint32{0xc4923a9c, 0x483df7a0}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, rngThreefry2x32(c.key, c.ctr), "ctr %08x key %08x", c.ctr, c.key)
	}
}

func TestPhilox4x32KnownAnswers(t *testing.T) {
	cases := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, rngPhilox4x32(c.ctr, c.key), "ctr %08x key %08x", c.ctr, c.key)
	}
}

func rngSrc(alg string, stateN int, out string) string {
	st := fmt.Sprintf("tensor<%dxui64>", stateN)
	return fmt.Sprintf(`func.func @main(%%s: %s) -> (%s, %s) {
  %%0:2 = stablehlo.rng_bit_generator %%s, algorithm = %s : (%s) -> (%s, %s)
  return %%0#0, %%0#1 : %s, %s
}`, st, st, out, alg, st, st, out, st, out)
}

func runRng(t *testing.T, alg string, state []uint64, out string) (newState []uint64, data any) {
	t.Helper()
	s := NewTensor(xla.MakeShape(xla.Uint64, int64(len(state))))
	copy(s.Data.([]uint64), state)
	res, err := laRun(t, rngSrc(alg, len(state), out), s)
	require.NoError(t, err)
	return res[0].Data.([]uint64), res[1].Data
}

// rngF32Bits compares floats bit for bit (NaNs included).
func rngF32Bits(v []float32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out
}

func tf(key, ctr uint64) [2]uint32 { return rngThreefry2x32(rngSplit64(key), rngSplit64(ctr)) }

func px(key, lo, hi uint64) [4]uint32 {
	return rngPhilox4x32([4]uint32{uint32(lo), uint32(lo >> 32), uint32(hi), uint32(hi >> 32)}, rngSplit64(key))
}

func TestRngBitGeneratorThreeFry(t *testing.T) {
	// The spec's example.
	st, data := runRng(t, "THREE_FRY", []uint64{1, 2}, "tensor<2x2xui64>")
	assert.Equal(t, []uint64{1, 6}, st)
	assert.Equal(t, []uint64{9236835810183407956, 16087790271692313299, 18212823393184779219, 2658481902456610144}, data)

	// 32-bit outputs: [3, 2] splits its even dimension 1; rows are the two
	// words of counters 0, 1, 2. XLA's CPU backend gives (with key 0)
	// 1797259609 2579123966 for the first row: Threefry(0, 0).
	st, data = runRng(t, "THREE_FRY", []uint64{0, 0}, "tensor<3x2xui32>")
	assert.Equal(t, []uint64{0, 3}, st)
	var want []uint32
	for c := uint64(0); c < 3; c++ {
		w := tf(0, c)
		want = append(want, w[0], w[1])
	}
	assert.Equal(t, want, data)
	assert.Equal(t, []uint32{1797259609, 2579123966}, want[:2])
	// The whole output as XLA's CPU backend printed it (5 significant
	// digits, r-xla/anvil's nvl_rng_bit_generator example).
	for i, v := range []float64{1.7973e9, 2.5791e9, 1.3515e9, 3.2358e9, 1.6886e9, 4.2293e9} {
		assert.InDelta(t, v, float64(want[i]), 5e4, "element %d", i)
	}

	// f32 outputs are the same bits.
	_, data = runRng(t, "THREE_FRY", []uint64{0, 0}, "tensor<3x2xf32>")
	for i, v := range data.([]float32) {
		assert.Equal(t, want[i], math.Float32bits(v))
	}

	// No even dimension: split the largest one ([5, 3]: dimension 0 into
	// 3 halves); x0 lands on even rows, x1 on odd rows, the last x1 is
	// dropped.
	key, ctr := uint64(0x123456789abcdef0), uint64(77)
	st, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<5x3xui32>")
	assert.Equal(t, []uint64{key, ctr + 9}, st)
	got := data.([]uint32)
	for q := 0; q < 3; q++ {
		for i := 0; i < 3; i++ {
			w := tf(key, ctr+uint64(q*3+i))
			assert.Equal(t, w[0], got[(2*q)*3+i], "row %d col %d", 2*q, i)
			if 2*q+1 < 5 {
				assert.Equal(t, w[1], got[(2*q+1)*3+i], "row %d col %d", 2*q+1, i)
			}
		}
	}

	// The first even dimension is split, not the largest: [3, 4, 6] splits
	// dimension 1 (4 → 2 halves).
	st, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<3x4x6xui32>")
	assert.Equal(t, []uint64{key, ctr + 36}, st)
	got = data.([]uint32)
	for o := 0; o < 3; o++ {
		for q := 0; q < 2; q++ {
			for i := 0; i < 6; i++ {
				w := tf(key, ctr+uint64((o*2+q)*6+i))
				assert.Equal(t, w[0], got[(o*4+2*q)*6+i])
				assert.Equal(t, w[1], got[(o*4+2*q+1)*6+i])
			}
		}
	}

	// A scalar is split as [1]: x0 of the first counter, counter + 1.
	st, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<ui32>")
	assert.Equal(t, []uint64{key, ctr + 1}, st)
	assert.Equal(t, []uint32{tf(key, ctr)[0]}, data)

	// Narrower types keep the low bits of the 32-bit words.
	_, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<4xui8>")
	w0, w1 := tf(key, ctr), tf(key, ctr+1)
	assert.Equal(t, []uint8{uint8(w0[0]), uint8(w0[1]), uint8(w1[0]), uint8(w1[1])}, data)
	_, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<2xi16>")
	assert.Equal(t, []int16{int16(w0[0]), int16(w0[1])}, data)
	_, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<2xi4>")
	assert.Equal(t, []int8{int8(WrapInt(xla.Int4, int64(w0[0]&15))), int8(WrapInt(xla.Int4, int64(w0[1]&15)))}, data)
	_, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<2xbf16>")
	assert.Equal(t, rngF32Bits([]float32{DecodeNarrow(xla.BFloat16, w0[0]&0xffff), DecodeNarrow(xla.BFloat16, w0[1]&0xffff)}), rngF32Bits(data.([]float32)))

	// 64-bit: one counter per element, in row-major order.
	st, data = runRng(t, "THREE_FRY", []uint64{key, ctr}, "tensor<3xf64>")
	assert.Equal(t, []uint64{key, ctr + 3}, st)
	for i, v := range data.([]float64) {
		w := tf(key, ctr+uint64(i))
		assert.Equal(t, uint64(w[0])|uint64(w[1])<<32, math.Float64bits(v))
	}
}

func TestRngBitGeneratorPhilox(t *testing.T) {
	key, ctr := uint64(0xfeedface12345678), uint64(1000)
	// u64[2] state: [key, counter]; the key is the counter's high word.
	// 32-bit outputs: four per block.
	for _, alg := range []string{"PHILOX", "DEFAULT"} {
		st, data := runRng(t, alg, []uint64{key, ctr}, "tensor<2x3xui32>")
		assert.Equal(t, []uint64{key, ctr + 2}, st, alg)
		b0, b1 := px(key, ctr, key), px(key, ctr+1, key)
		assert.Equal(t, []uint32{b0[0], b0[1], b0[2], b0[3], b1[0], b1[1]}, data, alg)
	}
	// u64[3] state: [key, counter_lo, counter_hi], with a carry into the
	// high word.
	lo, hi := ^uint64(0), uint64(5)
	st, data := runRng(t, "PHILOX", []uint64{key, lo, hi}, "tensor<5xui32>")
	assert.Equal(t, []uint64{key, 1, 6}, st)
	b0, b1 := px(key, lo, hi), px(key, 0, 6)
	assert.Equal(t, []uint32{b0[0], b0[1], b0[2], b0[3], b1[0]}, data)
	// A u64[2] state drops the carry: only the low word is kept.
	st, _ = runRng(t, "PHILOX", []uint64{key, lo}, "tensor<4xui32>")
	assert.Equal(t, []uint64{key, 0}, st)
	// 64-bit outputs: two per block.
	st, data = runRng(t, "PHILOX", []uint64{key, ctr, 0}, "tensor<3xui64>")
	assert.Equal(t, []uint64{key, ctr + 2, 0}, st)
	b0, b1 = px(key, ctr, 0), px(key, ctr+1, 0)
	assert.Equal(t, []uint64{uint64(b0[0]) | uint64(b0[1])<<32, uint64(b0[2]) | uint64(b0[3])<<32, uint64(b1[0]) | uint64(b1[1])<<32}, data)
	// Narrow types keep the low bits.
	_, data = runRng(t, "PHILOX", []uint64{key, ctr, 0}, "tensor<2xi8>")
	b0 = px(key, ctr, 0)
	assert.Equal(t, []int8{int8(b0[0]), int8(b0[1])}, data)
	_, data = runRng(t, "PHILOX", []uint64{key, ctr, 0}, "tensor<2xf16>")
	assert.Equal(t, rngF32Bits([]float32{DecodeNarrow(xla.Float16, b0[0]&0xffff), DecodeNarrow(xla.Float16, b0[1]&0xffff)}), rngF32Bits(data.([]float32)))
	// Empty output: nothing drawn, state unchanged.
	st, _ = runRng(t, "PHILOX", []uint64{key, ctr, 0}, "tensor<0x3xf32>")
	assert.Equal(t, []uint64{key, ctr, 0}, st)
}

func TestRngBitGeneratorLarge(t *testing.T) {
	// Parallel generation gives the same bits as element-by-element.
	key := uint64(42)
	_, data := runRng(t, "PHILOX", []uint64{key, 0}, "tensor<100000xui32>")
	got := data.([]uint32)
	for _, i := range []int{0, 1, 4097, 99999} {
		assert.Equal(t, px(key, uint64(i/4), key)[i%4], got[i])
	}
	_, data = runRng(t, "THREE_FRY", []uint64{key, 0}, "tensor<100000xui64>")
	for _, i := range []int{0, 77777, 99999} {
		w := tf(key, uint64(i))
		assert.Equal(t, uint64(w[0])|uint64(w[1])<<32, data.([]uint64)[i])
	}
}

func TestRngBitGeneratorErrors(t *testing.T) {
	cases := []struct {
		alg    string
		n      int
		out    string
		wantIn string
	}{
		{"THREE_FRY", 3, "tensor<2xui32>", "THREE_FRY needs a state of 2"},
		{"PHILOX", 4, "tensor<2xui32>", "PHILOX needs a state of 2 or 3"},
		{"PHILOX", 2, "tensor<2xi1>", "integer or floating-point"},
		{"PHILOX", 2, "tensor<2xcomplex<f32>>", "integer or floating-point"},
	}
	for _, c := range cases {
		s := NewTensor(xla.MakeShape(xla.Uint64, int64(c.n)))
		_, err := laRun(t, rngSrc(c.alg, c.n, c.out), s)
		require.Error(t, err, c)
		assert.Contains(t, err.Error(), c.wantIn)
		assert.Contains(t, err.Error(), "stablehlo.rng_bit_generator")
	}
}

func TestRng(t *testing.T) {
	run := func(dist, ty, et string, a, b *Tensor, n int64) (*Tensor, error) {
		src := fmt.Sprintf(`func.func @main(%%a: tensor<%s>, %%b: tensor<%s>, %%s: tensor<1xi64>) -> %s {
  %%0 = stablehlo.rng %%a, %%b, %%s, distribution = %s : (tensor<%s>, tensor<%s>, tensor<1xi64>) -> %s
  return %%0 : %s
}`, et, et, ty, dist, et, et, ty, ty)
		out, err := laRun(t, src, a, b, laTensor(xla.Int64, []int64{1}, []complex128{complex(float64(n), 0)}))
		if err != nil {
			return nil, err
		}
		return out[0], nil
	}
	scalar := func(dt xla.DType, v float64) *Tensor { return laTensor(dt, nil, []complex128{complex(v, 0)}) }
	// Uniform integers stay in [a, b) and cover it.
	out, err := run("UNIFORM", "tensor<1000xi32>", "i32", scalar(xla.Int32, -3), scalar(xla.Int32, 4), 1000)
	require.NoError(t, err)
	seen := map[int32]bool{}
	for _, v := range out.Data.([]int32) {
		require.True(t, v >= -3 && v < 4, v)
		seen[v] = true
	}
	assert.Len(t, seen, 7)
	// Uniform floats in [a, b).
	out, err = run("UNIFORM", "tensor<1000xf32>", "f32", scalar(xla.Float32, 1), scalar(xla.Float32, 2), 1000)
	require.NoError(t, err)
	for _, v := range out.Data.([]float32) {
		require.True(t, v >= 1 && v < 2, v)
	}
	out, err = run("UNIFORM", "tensor<1000xbf16>", "bf16", scalar(xla.BFloat16, 0), scalar(xla.BFloat16, 1), 1000)
	require.NoError(t, err)
	for _, v := range out.Data.([]float32) {
		require.True(t, v >= 0 && v < 1, v)
		require.Equal(t, RoundNarrow(xla.BFloat16, v), v)
	}
	// Normal: mean a, standard deviation b.
	out, err = run("NORMAL", "tensor<20000xf64>", "f64", scalar(xla.Float64, 5), scalar(xla.Float64, 2), 20000)
	require.NoError(t, err)
	var sum, sq float64
	for _, v := range out.Data.([]float64) {
		sum += v
		sq += v * v
	}
	mean := sum / 20000
	std := math.Sqrt(sq/20000 - mean*mean)
	assert.InDelta(t, 5, mean, 0.1)
	assert.InDelta(t, 2, std, 0.1)
	// Two executions differ.
	a1, err := run("UNIFORM", "tensor<8xui32>", "ui32", scalar(xla.Uint32, 0), scalar(xla.Uint32, 1<<30), 8)
	require.NoError(t, err)
	a2, err := run("UNIFORM", "tensor<8xui32>", "ui32", scalar(xla.Uint32, 0), scalar(xla.Uint32, 1<<30), 8)
	require.NoError(t, err)
	assert.NotEqual(t, a1.Data, a2.Data)
	// NORMAL needs floats; the shape operand must match the result.
	_, err = run("NORMAL", "tensor<4xi32>", "i32", scalar(xla.Int32, 0), scalar(xla.Int32, 1), 4)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "floating-point")
	_, err = run("UNIFORM", "tensor<4xi32>", "i32", scalar(xla.Int32, 0), scalar(xla.Int32, 1), 5)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not match")
}
