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
		{name: "a value from outside returned", kernel: func(k *Kernel, r []*Ref) {
			s := z(k).Sum()
			AssociativeScan(0, Forward, func(a, b []*Value) []*Value { return []*Value{s} }, z(k))
		}, spec: spec, want: []string{"associative_scan at assoc_scan_test.go:", "combine returns a value from outside it (f32[]) for value 0"}},
		{name: "nil returned", kernel: func(k *Kernel, r []*Ref) {
			AssociativeScan(0, Forward, func(a, b []*Value) []*Value { return []*Value{nil} }, z(k))
		}, spec: spec, want: []string{"combine returns nil for value 0"}},
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

// The race check computes integer AssociativeScans (their combine run on
// the tape's ops, line by line in order) in positions and masks, as it
// does Cumsum: programs whose elements meet only through the scan are
// refused, apart ones pass, and a position past the array is refused at
// build time.
func TestAssociativeScanRaceCheck(t *testing.T) {
	spec := CallSpec{Name: "ascan_race", Grid: []int64{2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}}
	add := func(a, b []*Value) []*Value { return []*Value{a[0].Add(b[0])} }
	or := func(a, b []*Value) []*Value { return []*Value{a[0].Or(b[0])} }
	val := func(k *Kernel, n int64) *Value { return k.ProgramID(0).Astype(xla.Float32).Add(1).BroadcastTo(n) }
	// Running sums of [s·p+1, 1, 1, 1]: [s·p+1 .. s·p+4].
	positions := func(s int) KernelFunc {
		return func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			first := k.Arange(4).Eq(0).Astype(xla.Int32).Mul(p.Mul(s))
			idx := AssociativeScan(0, Forward, add, k.Full(xla.Int32, 1, 4).Add(first))[0]
			Store(r[0], []any{idx}, val(k, 4), nil)
		}
	}
	assertRefusedRace(t, tritonCase{name: "ascan_race", kernel: positions(1), spec: spec}, "both reach its element (2)")
	c := tritonCase{name: "ascan_race", kernel: positions(8), spec: spec}
	assertTritonMatchesInterpret(t, c)
	got, err := runCall(c.kernel, c.spec)
	require.NoError(t, err)
	d := got[0].Data.([]float32)
	assert.Equal(t, []float32{1, 1, 1, 1, 2, 2, 2, 2}, []float32{d[1], d[2], d[3], d[4], d[9], d[10], d[11], d[12]})

	// A mask: the running or of iota == p, from the end (p's element and
	// those before it): program 1's covers program 0's.
	mask := func(k *Kernel, r []*Ref) {
		m := AssociativeScan(0, Reverse, or, k.Arange(16).Eq(k.ProgramID(0)))[0]
		Store(r[0], nil, val(k, 16), m)
	}
	assertRefusedRace(t, tritonCase{name: "ascan_race", kernel: mask, spec: spec}, "both reach its element (0)")

	// Running sums of 4s: 4, 8, 12, 16, the last past the 16 elements.
	outside := func(k *Kernel, r []*Ref) {
		idx := AssociativeScan(0, Forward, add, k.Full(xla.Int32, 4, 4))[0]
		Store(r[0], []any{idx}, val(k, 4), k.ProgramID(0).Eq(0).BroadcastTo(4))
	}
	p, err := Trace(outside, spec, nil)
	require.NoError(t, err)
	requireMisuse(t, checkParallelPrograms(p), "ascan_race", "outside the array")
}

// A combine's constants are made inside its tt.scan region, not taken
// from the kernel's (the region then uses its arguments and its own
// values alone), also when the kernel made the same constant before.
func TestAssociativeScanRegionOwnsItsConstants(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) {
		v := r[0].Load().Add(1) // the kernel's own 1 : i32
		inc := func(a, b []*Value) []*Value { return []*Value{a[0].Add(b[0]).Add(1)} }
		r[1].Store(AssociativeScan(0, Forward, inc, v)[0])
	}
	spec := CallSpec{Name: "ascan_const", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8)}}
	x := tensor(t, xla.Int32, []int32{0, 1, 2, 3, 4, 5, 6, 7}, 8)
	p, err := Trace(kernel, spec, argTypes([]*interpreter.Tensor{x}))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	// The TTIR evaluator refuses a combine region that uses an outer value.
	checkEveryBackend(t, tritonCase{name: "ascan_const", kernel: kernel, spec: spec, args: []*interpreter.Tensor{x}}, func(backend string, got []*interpreter.Tensor) {
		// v = x+1; fold_i = Σ v + i (one 1 per combine).
		want := []int32{1, 4, 8, 13, 19, 26, 34, 43}
		require.Equal(t, want, got[0].Data, backend)
	})
	region := k.IR[strings.Index(k.IR, `"tt.scan"(`):strings.Index(k.IR, `"tt.scan.return"`)]
	require.Contains(t, region, "arith.constant 1 : i32", k.IR)
}

// A combine that is not associative (a·2 + b) folds differently in a
// tree, as a GPU folds, than in order: the TTIR evaluator folds integer
// scans both ways and says so, where interpret mode (in order) cannot
// tell.
func TestAssociativeScanNotAssociative(t *testing.T) {
	c := tritonCase{
		name: "not_associative",
		kernel: func(k *Kernel, r []*Ref) {
			twice := func(a, b []*Value) []*Value { return []*Value{a[0].Mul(2).Add(b[0])} }
			r[1].Store(AssociativeScan(0, Forward, twice, r[0].Load())[0])
		},
		spec: CallSpec{Name: "not_associative", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8)}},
		args: []*interpreter.Tensor{tensor(t, xla.Int32, []int32{1, 1, 1, 1, 1, 1, 1, 1}, 8)},
	}
	_, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	_, err = EvalTriton(c.kernel, c.spec, c.args...)
	require.ErrorContains(t, err, "not associative on these values, and a GPU folds in a tree")
}
