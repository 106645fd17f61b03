package pallas

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// AssociativeScan (lax.associative_scan): a running sum, a linear
// recurrence h_t = a_t·h_{t-1} + b_t (a selective-scan state, a scan of
// pairs), a reverse running maximum, an integer xor, and a running argmax
// (a pair of value and index). assocScanCase is part of tritonCases
// (interpret mode against the TTIR evaluator in both program orders,
// mlir-opt, the IR reference evaluator, a real GPU with HALO_PLUGIN);
// TestAssociativeScan checks it against Go folding in order. The data
// are exact in f32 (any bracketing gives the same bits).

func assocScanKernel(k *Kernel, r []*Ref) {
	v := r[0].Load()                                                       // (4, 16)
	decay := k.Iota(xla.Int32, 1, 4, 16).Rem(3).Astype(xla.Float32).Sub(1) // -1, 0, 1, ...
	add := func(a, b []*Value) []*Value { return []*Value{a[0].Add(b[0])} }
	r[1].Store(AssociativeScan(1, Forward, add, v)[0])
	rec := func(a, b []*Value) []*Value { return []*Value{a[0].Mul(b[0]), b[0].Mul(a[1]).Add(b[1])} }
	r[2].Store(AssociativeScan(-1, Forward, rec, decay, v)[1])
	mx := func(a, b []*Value) []*Value { return []*Value{a[0].Max(b[0])} }
	r[3].Store(AssociativeScan(0, Reverse, mx, v)[0])
	xor := func(a, b []*Value) []*Value { return []*Value{a[0].Xor(b[0])} }
	r[4].Store(AssociativeScan(1, Forward, xor, v.Mul(8).Astype(xla.Int32))[0])
	argmax := func(a, b []*Value) []*Value {
		better := b[0].Gt(a[0])
		return []*Value{Where(better, b[0], a[0]), Where(better, b[1], a[1])}
	}
	r[5].Store(AssociativeScan(1, Forward, argmax, v, k.Iota(xla.Int32, 1, 4, 16))[1])
}

func assocScanCase() tritonCase {
	rows := &BlockSpec{BlockShape: []int64{4, 16}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}
	f32, i32 := xla.MakeShape(xla.Float32, 8, 16), xla.MakeShape(xla.Int32, 8, 16)
	return tritonCase{
		name:   "assoc_scan",
		kernel: assocScanKernel,
		spec: CallSpec{
			Name:      "assoc_scan",
			OutShapes: []xla.Shape{f32, f32, f32, i32, i32},
			Grid:      []int64{2},
			InSpecs:   []*BlockSpec{rows},
			OutSpecs:  []*BlockSpec{rows, rows, rows, rows, rows},
		},
		args: []*interpreter.Tensor{fTensor([]int64{8, 16}, func(i int) float64 { return float64(i*5%17-8) / 4 })},
	}
}

func TestAssociativeScan(t *testing.T) {
	c := assocScanCase()
	x := c.args[0].Data.([]float32)
	want := [5][]float64{}
	for o := range want {
		want[o] = make([]float64, 8*16)
	}
	for row := 0; row < 8; row++ {
		v := func(j int) float64 { return float64(x[row*16+j]) }
		var sum, h, best float64
		var xor int32
		bestAt := 0
		for j := 0; j < 16; j++ {
			a := float64(j%3 - 1)
			if j == 0 {
				sum, h, xor, best, bestAt = v(0), v(0), int32(8*v(0)), v(0), 0
			} else {
				sum += v(j)
				h = a*h + v(j)
				xor ^= int32(8 * v(j))
				if v(j) > best {
					best, bestAt = v(j), j
				}
			}
			at := row*16 + j
			want[0][at], want[1][at], want[3][at], want[4][at] = sum, h, float64(xor), float64(bestAt)
		}
	}
	for g := 0; g < 2; g++ { // the reverse maximum along the block's rows
		for j := 0; j < 16; j++ {
			m := float64(x[(4*g+3)*16+j])
			for i := 3; i >= 0; i-- {
				m = max(m, float64(x[(4*g+i)*16+j]))
				want[2][(4*g+i)*16+j] = m
			}
		}
	}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		for o := range want {
			fs, is := scanElems(got[o])
			for j, w := range want[o] {
				if fs != nil {
					require.Equal(t, w, fs[j], "%s: output %d element %d", backend, o, j)
				} else {
					require.Equal(t, int64(w), is[j], "%s: output %d element %d", backend, o, j)
				}
			}
		}
	})
}

// On Triton each scan is one tt.scan whose region is the combine
// function: the recurrence scans two values at once.
func TestAssociativeScanTTIR(t *testing.T) {
	c := assocScanCase()
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	assert.Equal(t, 5, strings.Count(k.IR, `"tt.scan"(`), k.IR)
	assert.Regexp(t, `%\w+:2 = "tt.scan"\(%\w+, %\w+\) <\{axis = 1 : i32, reverse = false\}> \(\{
\s+\^bb0\(%\w+: f32, %\w+: f32, %\w+: f32, %\w+: f32\):`, k.IR)
	assert.Contains(t, k.IR, `<{axis = 0 : i32, reverse = true}>`)
}

func TestAssociativeScanMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)}}
	z := func(k *Kernel) *Value { return k.Zeros(xla.Float32, 4, 4) }
	add := func(a, b []*Value) []*Value { return []*Value{a[0].Add(b[0])} }
	runMisuseCases(t, []misuseCase{
		{name: "a load in combine", kernel: func(k *Kernel, r []*Ref) {
			AssociativeScan(0, Forward, func(a, b []*Value) []*Value { return []*Value{a[0].Add(r[0].Load(0, 0))} }, z(k))
		}, spec: spec, want: []string{"associative_scan at assoc_scan_test.go:", "combine may only compute on its scalars, not load"}},
		{name: "a value from outside", kernel: func(k *Kernel, r []*Ref) {
			s := z(k).Sum()
			AssociativeScan(0, Forward, func(a, b []*Value) []*Value { return []*Value{a[0].Add(b[0]).Mul(s)} }, z(k))
		}, spec: spec, want: []string{"combine uses a value from outside it (f32[]"}},
		{name: "a block in combine", kernel: func(k *Kernel, r []*Ref) {
			AssociativeScan(0, Forward, func(a, b []*Value) []*Value { return []*Value{a[0].Add(k.Zeros(xla.Float32, 2).Sum())} }, z(k))
		}, spec: spec, want: []string{"combine makes f32[2]"}},
		{name: "too few results", kernel: func(k *Kernel, r []*Ref) {
			AssociativeScan(0, Forward, add, z(k), z(k))
		}, spec: spec, want: []string{"combine returns 1 values for 2 scanned"}},
		{name: "a result of another type", kernel: func(k *Kernel, r []*Ref) {
			AssociativeScan(0, Forward, func(a, b []*Value) []*Value { return []*Value{a[0].Astype(xla.Int32)} }, z(k))
		}, spec: spec, want: []string{"combine returns i32[] for value 0, a scalar of f32"}},
		{name: "shapes differ", kernel: func(k *Kernel, r []*Ref) {
			AssociativeScan(0, Forward, add, z(k), k.Zeros(xla.Float32, 4))
		}, spec: spec, want: []string{"operand 1 is f32[4], operand 0 f32[4,4]"}},
		{name: "bad axis", kernel: func(k *Kernel, r []*Ref) { AssociativeScan(2, Forward, add, z(k)) }, spec: spec,
			want: []string{"associative_scan at assoc_scan_test.go:", "bad axis 2 for rank 2"}},
		{name: "bad order", kernel: func(k *Kernel, r []*Ref) { AssociativeScan(0, ScanOrder(3), add, z(k)) }, spec: spec,
			want: []string{"want the order pallas.Forward or pallas.Reverse, got ScanOrder(3)"}},
		{name: "nil combine", kernel: func(k *Kernel, r []*Ref) { AssociativeScan(0, Forward, nil, z(k)) }, spec: spec,
			want: []string{"combine is nil"}},
		{name: "no values", kernel: func(k *Kernel, r []*Ref) { AssociativeScan(0, Forward, add) }, spec: spec,
			want: []string{"associative_scan", "no values to scan"}},
		{name: "a panicking combine", kernel: func(k *Kernel, r []*Ref) {
			AssociativeScan(0, Forward, func(a, b []*Value) []*Value { return []*Value{a[0], b[0]}[:3] }, z(k))
		}, spec: spec, want: []string{"panicked"}},
	})
}
