package pallas

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func i64Tensor(vals ...int64) *interpreter.Tensor {
	return &interpreter.Tensor{Shape: xla.MakeShape(xla.Int64, int64(len(vals))), Data: vals}
}

// TestWideIndicesDoNotWrap checks that 64-bit (and unsigned 32-bit) index
// values past i32's range are out of bounds, not wrapped to a small index
// that looks valid: 1<<32 + 1 once read element 1.
func TestWideIndicesDoNotWrap(t *testing.T) {
	x := tensor(t, xla.Float32, []float32{10, 11, 12, 13}, 4)
	out := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	const big = 1<<32 + 1
	for _, c := range []struct {
		name   string
		idx    *interpreter.Tensor
		kernel KernelFunc
		spec   func(*CallSpec)
		want   string
	}{
		{"point index", i64Tensor(big), func(k *Kernel, r []*Ref) { r[2].Store(r[0].Load(r[1].Load(0)).BroadcastTo(4)) }, nil,
			"element index (2147483647) outside [0, 4)"},
		{"negative point index", i64Tensor(-big), func(k *Kernel, r []*Ref) { r[2].Store(r[0].Load(r[1].Load(0)).BroadcastTo(4)) }, nil,
			"element index (-2147483648) outside [0, 4)"},
		{"slice start", i64Tensor(big), func(k *Kernel, r []*Ref) {
			r[2].Store(r[0].Load(DS(r[1].Load(0), 2)).Sum().BroadcastTo(4))
		}, nil, "starting at (2147483647) does not fit in (4)"},
		{"index array", i64Tensor(big, 0, 1, 2), func(k *Kernel, r []*Ref) { r[2].Store(r[0].Load(r[1].Load())) }, nil,
			"element index (2147483647) outside [0, 4)"},
		{"block index from prefetch", i64Tensor(big), func(k *Kernel, r []*Ref) { r[2].Store(r[1].Load().BroadcastTo(4)) },
			func(s *CallSpec) {
				s.NumScalarPrefetch = 1
				s.InSpecs = []*BlockSpec{{BlockShape: []int64{1}, IndexMap: func(_ []*Value, pf []*Ref) []any { return []any{pf[0].Load(0)} }}}
			}, "block index (2147483647) outside [0, 4)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := CallSpec{Name: "wide", OutShapes: out, Grid: []int64{1}}
			if c.spec != nil {
				c.spec(&spec)
			}
			args := []*interpreter.Tensor{x, c.idx}
			if spec.NumScalarPrefetch == 1 {
				args = []*interpreter.Tensor{c.idx, x}
			}
			_, err := runCall(c.kernel, spec, args...)
			var be *BoundsError
			require.True(t, errors.As(err, &be), "want a *BoundsError, got %T: %v", err, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// In range, a 64-bit index reads what it names.
	got, err := runCall(func(k *Kernel, r []*Ref) { r[2].Store(r[0].Load(r[1].Load())) },
		CallSpec{Name: "wide", OutShapes: out, Grid: []int64{1}}, x, i64Tensor(3, 0, 1, 2))
	require.NoError(t, err)
	assert.Equal(t, []float32{13, 10, 11, 12}, got[0].Data)
}

// TestWideIndicesOnTriton runs an i64 index array (in range) through the
// Triton lowering on the TTIR evaluator: the saturation before the
// narrowing lowers and leaves valid indices alone.
func TestWideIndicesOnTriton(t *testing.T) {
	x := tensor(t, xla.Float32, []float32{10, 11, 12, 13}, 4)
	spec := CallSpec{Name: "wide", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1}, Backend: Triton}
	got := runTritonEval(t, tritonCase{name: "wide", kernel: func(k *Kernel, r []*Ref) { r[2].Store(r[0].Load(r[1].Load())) },
		spec: spec, args: []*interpreter.Tensor{x, i64Tensor(3, 0, 1, 2)}})
	assert.Equal(t, []float32{13, 10, 11, 12}, got[0].Data)
}

// TestLargeUnsignedConstants uses Go uint64 constants above MaxInt64 with
// u64 values (once an "overflows int64" error), on the interpreter and on
// the TTIR evaluator.
func TestLargeUnsignedConstants(t *testing.T) {
	x := &interpreter.Tensor{Shape: xla.MakeShape(xla.Uint64, 2), Data: []uint64{1, 1 << 63}}
	kernel := func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Add(uint64(1<<63 + 5))) }
	spec := CallSpec{Name: "u64", OutShapes: []xla.Shape{xla.MakeShape(xla.Uint64, 2)}, Grid: []int64{1}}
	want := []uint64{1<<63 + 6, 5}
	got, err := runCall(kernel, spec, x)
	require.NoError(t, err)
	assert.Equal(t, want, got[0].Data)
	spec.Backend = Triton
	tt := runTritonEval(t, tritonCase{name: "u64", kernel: kernel, spec: spec, args: []*interpreter.Tensor{x}})
	assert.Equal(t, want, tt[0].Data)
	// Too large for the dtype is still an error.
	_, err = runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Add(uint64(1 << 63))) },
		CallSpec{Name: "u32", OutShapes: []xla.Shape{xla.MakeShape(xla.Uint32, 2)}, Grid: []int64{1}},
		&interpreter.Tensor{Shape: xla.MakeShape(xla.Uint32, 2), Data: []uint32{1, 2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "constant 9223372036854775808 overflows ui32")
}

// TestConstantsRoundOnce: a Go constant for a float block is rounded once
// to its dtype, in interpret mode and on the TTIR evaluator (a float64
// went to f16 and bf16 through float32, an integer above 2^53 to any
// float through float64: each one step off), and integral floats in a
// 64-bit integer type's range are taken (1e19 as a u64 and -2^63 as an
// i64 were "not an integer").
func TestConstantsRoundOnce(t *testing.T) {
	for _, c := range []struct {
		name string
		dt   xla.DType
		v    any
		want any
	}{
		{"f16 of a float64", xla.Float16, 1 + 0x1p-11 + 0x1p-40, []float32{1 + 0x1p-10}},
		{"bf16 of an integer", xla.BFloat16, 1<<24 + 1<<16 + 1, []float32{1<<24 + 1<<17}},
		{"f32 of an int64", xla.Float32, int64(1<<60 + 1<<36 + 1), []float32{1<<60 + 1<<37}},
		{"f32 of a uint64", xla.Float32, uint64(1<<63 + 1<<39 + 1), []float32{1<<63 + 1<<40}},
		{"u64 of 1e19", xla.Uint64, 1e19, []uint64{1e19}},
		{"i64 of -2^63", xla.Int64, -0x1p63, []int64{math.MinInt64}},
	} {
		kernel := func(k *Kernel, r []*Ref) { r[0].Store(k.Full(c.dt, c.v, 1)) }
		spec := CallSpec{Name: "const", OutShapes: []xla.Shape{xla.MakeShape(c.dt, 1)}, Grid: []int64{1}}
		got, err := runCall(kernel, spec)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got[0].Data, "%s, interpret mode", c.name)
		spec.Backend = Triton
		tt := runTritonEval(t, tritonCase{name: "const", kernel: kernel, spec: spec})
		assert.Equal(t, c.want, tt[0].Data, "%s, Triton", c.name)
	}
	_, err := runCall(func(k *Kernel, r []*Ref) { r[0].Store(k.Full(xla.Int64, 0x1p63, 1)) },
		CallSpec{Name: "big", OutShapes: []xla.Shape{xla.MakeShape(xla.Int64, 1)}, Grid: []int64{1}})
	assert.ErrorContains(t, err, "constant 9.223372036854776e+18 overflows i64")
}

// An i8 Dot into an i64 or float result over K >= 2^17 is summed wider
// than tt.dot's i32 accumulator on Triton (2^17 products of -128·-128
// overflowed it to -2^31), as interpret mode sums in the result type.
func TestInt8DotLongK(t *testing.T) {
	const k = 1 << 17
	a := &interpreter.Tensor{Shape: xla.MakeShape(xla.Int8, 1, k), Data: make([]int8, k)}
	b := &interpreter.Tensor{Shape: xla.MakeShape(xla.Int8, k, 1), Data: make([]int8, k)}
	for i := range k {
		a.Data.([]int8)[i], b.Data.([]int8)[i] = -128, -128
	}
	for _, out := range []xla.DType{xla.Int64, xla.Float64} {
		kernel := func(kk *Kernel, r []*Ref) { r[2].Store(Dot(r[0].Load(), r[1].Load(), out)) }
		spec := CallSpec{Name: "i8dot", OutShapes: []xla.Shape{xla.MakeShape(out, 1, 1)}, Grid: []int64{1}}
		want, err := runCall(kernel, spec, a, b)
		require.NoError(t, err)
		spec.Backend = Triton
		got := runTritonEval(t, tritonCase{name: "i8dot", kernel: kernel, spec: spec, args: []*interpreter.Tensor{a, b}})
		assert.Equal(t, want[0].Data, got[0].Data, "%v", out)
		if out == xla.Int64 {
			assert.Equal(t, []int64{1 << 31}, got[0].Data)
		}
	}
}

// bf16 widens to f64 through f32 in the TTIR (exact), the only bf16
// widening Triton's front end emits; older NVIDIA lowerings asserted on a
// direct bf16 -> f64 arith.extf. Same numbers as interpret mode.
func TestTritonBF16ToF64ThroughF32(t *testing.T) {
	x := &interpreter.Tensor{Shape: xla.MakeShape(xla.BFloat16, 16), Data: make([]float32, 16)}
	for i := range 16 {
		x.Data.([]float32)[i] = float32(i) - 7.5
	}
	kernel := func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Astype(xla.Float64)) }
	spec := CallSpec{Name: "widen", OutShapes: []xla.Shape{xla.MakeShape(xla.Float64, 16)}, Grid: []int64{1}, Backend: Triton}
	c := tritonCase{name: "widen", kernel: kernel, spec: spec, args: []*interpreter.Tensor{x}}
	var ir string
	c.module(t, Triton).Walk(func(op *stablehlo.Op) bool {
		if op.Name == "stablehlo.custom_call" {
			ir = string(op.Attr("mhlo.backend_config").(stablehlo.DictAttr).Get("ir").(stablehlo.StringAttr))
		}
		return true
	})
	assert.Contains(t, ir, "tensor<16xbf16> to tensor<16xf32>")
	assert.NotContains(t, ir, "xbf16> to tensor<16xf64>")
	want, err := runCall(kernel, CallSpec{Name: "widen", OutShapes: spec.OutShapes, Grid: spec.Grid}, x)
	require.NoError(t, err)
	assert.Equal(t, want[0].Data, runTritonEval(t, c)[0].Data)
}
