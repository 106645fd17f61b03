package pallas

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// histogramCase counts the values of x (in [0, bins)) into an output
// aliased to a zeros operand, n/blk programs each adding 1 at the bins of
// its block's values (an index array with repeats).
func histogramCase(x []int32, bins, blk int64) tritonCase {
	n := int64(len(x))
	xs := interpreter.NewTensor(xla.MakeShape(xla.Int32, n))
	copy(xs.Data.([]int32), x)
	zeros := interpreter.NewTensor(xla.MakeShape(xla.Int32, bins))
	return tritonCase{name: "histogram", kernel: func(k *Kernel, r []*Ref) {
		AtomicAdd(r[2], []any{r[0].Load()}, 1, nil)
	}, spec: CallSpec{Name: "histogram", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, bins)}, Grid: []int64{n / blk},
		InSpecs:            []*BlockSpec{{BlockShape: []int64{blk}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}, nil},
		InputOutputAliases: map[int]int{1: 0}},
		args: []*interpreter.Tensor{xs, zeros}}
}

// TestAtomicHistogram: every update of programs that share output
// elements lands, repeated indices within one update included, in
// interpret mode and as Triton (programs in both orders), and the race
// check takes it: add commutes and the old values are unused.
func TestAtomicHistogram(t *testing.T) {
	x := make([]int32, 64)
	want := make([]int32, 5)
	for i := range x {
		x[i] = int32((i*i + 3*i) % 5)
		want[x[i]]++
	}
	c := histogramCase(x, 5, 16)
	got, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	require.Equal(t, want, got[0].Data)
	tt := runTritonEval(t, c)
	require.Equal(t, want, tt[0].Data)

	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	require.Contains(t, k.IR, `"tt.atomic_rmw"(`)
	require.Contains(t, k.IR, `<{atomic_rmw_op = 4 : i32, scope = 1 : i32, sem = 4 : i32}>`)
	if opt := mliropt.Path(); opt != "" {
		_, err = mliropt.Run(opt, k.IR)
		require.NoError(t, err, "--- input ---\n%s", k.IR)
	}
	// The reference evaluator of the IR contract agrees.
	ref, err := zzEval(p, c.args)
	require.NoError(t, err)
	require.Equal(t, want, ref[0].Data)
}

// splitKCase is a product split along K over a grid axis, each program
// adding its partial product into the output block with AtomicAdd
// (integer-valued floats: exact in any order).
func splitKCase(m, n, kk, bk int64) tritonCase {
	x := fTensor([]int64{m, kk}, func(i int) float64 { return float64(i%7 - 3) })
	y := fTensor([]int64{kk, n}, func(i int) float64 { return float64(i%5 - 2) })
	zeros := interpreter.NewTensor(xla.MakeShape(xla.Float32, m, n))
	return tritonCase{name: "atomic_splitk", kernel: func(k *Kernel, r []*Ref) {
		AtomicAdd(r[3], nil, Dot(r[0].Load(), r[1].Load(), xla.Float32), nil)
	}, spec: CallSpec{Name: "splitk", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, m, n)}, Grid: []int64{kk / bk},
		InSpecs: []*BlockSpec{
			{BlockShape: []int64{m, bk}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{0, g[0]} }},
			{BlockShape: []int64{bk, n}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }},
			nil},
		InputOutputAliases: map[int]int{2: 0}},
		args: []*interpreter.Tensor{x, y, zeros}}
}

// atomicCases are the atomic kernels every Triton test runs (on the
// evaluator, in the IR reference evaluator, on a GPU plugin).
func atomicCases() []tritonCase {
	x := make([]int32, 64)
	for i := range x {
		x[i] = int32((i*i + 3*i) % 5)
	}
	h := histogramCase(x, 5, 16)
	h.name = "atomic_histogram"
	return []tritonCase{h, splitKCase(16, 16, 64, 16), casClaimCase()}
}

// TestAtomicSplitK: the split-K product against Go's.
func TestAtomicSplitK(t *testing.T) {
	const m, n, kk = 16, 16, 64
	c := splitKCase(m, n, kk, 16)
	x, y := c.args[0], c.args[1]
	want := make([]float32, m*n)
	xv, yv := x.Data.([]float32), y.Data.([]float32)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			for l := 0; l < kk; l++ {
				want[i*n+j] += xv[i*kk+l] * yv[l*n+j]
			}
		}
	}
	got, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	require.Equal(t, want, got[0].Data)
	require.Equal(t, want, runTritonEval(t, c)[0].Data)
}

// TestAtomicKinds: each kind's memory result and old values, masks (a
// masked-off element is not updated and reads 0), unsigned max/min, on a
// single program, in interpret mode, as Triton and in the IR contract's
// evaluator.
func TestAtomicKinds(t *testing.T) {
	type kind struct {
		name string
		f    func(*Ref, []any, any, *Value) *Value
		dt   xla.DType
		op   func(a, b int64) int64
	}
	u32 := func(v int64) int64 { return int64(uint32(v)) }
	kinds := []kind{
		{"add", AtomicAdd, xla.Int64, func(a, b int64) int64 { return a + b }},
		{"max", AtomicMax, xla.Int32, func(a, b int64) int64 { return max(a, b) }},
		{"min", AtomicMin, xla.Int32, func(a, b int64) int64 { return min(a, b) }},
		{"umax", AtomicMax, xla.Uint32, func(a, b int64) int64 { return max(u32(a), u32(b)) }},
		{"umin", AtomicMin, xla.Uint32, func(a, b int64) int64 { return min(u32(a), u32(b)) }},
		{"and", AtomicAnd, xla.Int32, func(a, b int64) int64 { return a & b }},
		{"or", AtomicOr, xla.Uint64, func(a, b int64) int64 { return a | b }},
		{"xor", AtomicXor, xla.Int64, func(a, b int64) int64 { return a ^ b }},
		{"xchg", AtomicXchg, xla.Int32, func(a, b int64) int64 { return b }},
	}
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			mem := []int64{5, -3, 12, 0, 7, -9, 100, 1}
			val := []int64{2, 4, -12, 9, 7, -1, 3, 6}
			a := intTensor(kd.dt, []int64{8}, func(i int) int64 { return mem[i] })
			v := intTensor(kd.dt, []int64{8}, func(i int) int64 { return val[i] })
			c := tritonCase{name: "atomic_" + kd.name, kernel: func(k *Kernel, r []*Ref) {
				keep := k.Iota(xla.Int32, 0, 8).Ne(5)
				r[2].Store(kd.f(r[3], []any{All}, r[1].Load(), keep))
			}, spec: CallSpec{Name: "atomic", OutShapes: []xla.Shape{xla.MakeShape(kd.dt, 8), xla.MakeShape(kd.dt, 8)},
				InputOutputAliases: map[int]int{0: 1}},
				args: []*interpreter.Tensor{a, v}}
			var wantMem, wantOld []int64
			for i := range mem {
				m, o := kd.op(mem[i], val[i]), mem[i]
				if i == 5 {
					m, o = mem[i], 0
				}
				wantMem = append(wantMem, m)
				wantOld = append(wantOld, o)
			}
			check := func(name string, outs []*interpreter.Tensor) {
				require.Equal(t, intTensor(kd.dt, []int64{8}, func(i int) int64 { return wantOld[i] }).Data, outs[0].Data, "%s: old values", name)
				require.Equal(t, intTensor(kd.dt, []int64{8}, func(i int) int64 { return wantMem[i] }).Data, outs[1].Data, "%s: memory", name)
			}
			checkEveryBackend(t, c, check)
		})
	}
}

// TestAtomicEdgeBlock: an update of an edge block reaches only the
// array's elements; the padding's old values read as interpret mode's
// pad value on both backends, masked-off ones as 0.
func TestAtomicEdgeBlock(t *testing.T) {
	ones := tensor(t, xla.Float32, f32s(6, func(i int) float32 { return float32(i) }), 6)
	block := &BlockSpec{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	c := tritonCase{name: "atomic_edge", kernel: func(k *Kernel, r []*Ref) {
		odd := k.Iota(xla.Int32, 0, 4).Rem(2).Eq(1)
		r[2].Store(AtomicAdd(r[1], nil, 10, nil).Add(AtomicAdd(r[1], nil, 100, odd)))
	}, spec: CallSpec{Name: "atomic_edge", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 6), xla.MakeShape(xla.Float32, 6)},
		Grid: []int64{2}, InSpecs: []*BlockSpec{block}, OutSpecs: []*BlockSpec{block, block}, InputOutputAliases: map[int]int{0: 0}},
		args: []*interpreter.Tensor{ones}}
	got, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	require.Equal(t, []float32{10, 111, 12, 113, 14, 115}, got[0].Data)
	// old values: x + (x+10 where odd, else 0)
	require.Equal(t, []float32{0, 12, 2, 16, 4, 20}, got[1].Data)
	require.Equal(t, got[0].Data, runTritonEval(t, c)[0].Data)
	require.Equal(t, got[1].Data, runTritonEval(t, c)[1].Data)
}

// TestAtomicErrors: refs that cannot be updated, element types a kind
// does not take (on every backend), and updates in a While condition are
// trace errors naming the problem.
func TestAtomicErrors(t *testing.T) {
	f32 := xla.MakeShape(xla.Float32, 4)
	cases := []struct {
		name   string
		kernel KernelFunc
		in     []*interpreter.Tensor
		out    xla.Shape
		want   string
	}{
		{"input", func(k *Kernel, r []*Ref) { AtomicAdd(r[0], nil, float32(1), nil) }, []*interpreter.Tensor{interpreter.NewTensor(f32)}, f32, "input ref (read-only)"},
		{"f16 max", func(k *Kernel, r []*Ref) { AtomicMax(r[0], nil, k.Full(xla.Float16, 1, 4), nil) }, nil, xla.MakeShape(xla.Float16, 4), "atomic max takes 32- and 64-bit integers, f32 and f64"},
		{"i8 add", func(k *Kernel, r []*Ref) { AtomicAdd(r[0], nil, int8(1), nil) }, nil, xla.MakeShape(xla.Int8, 4), "atomic add takes 32- and 64-bit integers, f16"},
		{"bool or", func(k *Kernel, r []*Ref) { AtomicOr(r[0], nil, true, nil) }, nil, xla.MakeShape(xla.Bool, 4), "atomic or takes 32- and 64-bit integers"},
		{"f16 xchg", func(k *Kernel, r []*Ref) { AtomicXchg(r[0], nil, k.Full(xla.Float16, 1, 4), nil) }, nil, xla.MakeShape(xla.Float16, 4), "atomic xchg takes"},
		{"value dtype", func(k *Kernel, r []*Ref) { AtomicAdd(r[0], nil, k.Full(xla.Int32, 1, 4), nil) }, nil, f32, "convert with Astype"},
		{"while condition", func(k *Kernel, r []*Ref) {
			k.While([]*Value{k.Const(xla.Int32, 0)}, func(c []*Value) *Value {
				return AtomicAdd(r[0], []any{0}, float32(1), nil).Lt(float32(3))
			}, func(c []*Value) []*Value { return c })
		}, nil, f32, "inside the condition of a While"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Trace(tc.kernel, CallSpec{Name: "bad", OutShapes: []xla.Shape{tc.out}}, argTypes(tc.in))
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "atomic_test.go:")
		})
	}
}

// TestAtomicRaceCheck: on a GPU the check takes atomic updates that
// commute with each other, and checks any other as a load and a store.
func TestAtomicRaceCheck(t *testing.T) {
	zeros := interpreter.NewTensor(xla.MakeShape(xla.Int32, 4))
	run := func(grid int64, kernel KernelFunc) tritonCase {
		return tritonCase{name: "atomic_race", kernel: kernel,
			spec: CallSpec{Name: "atomic_race", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}, Grid: []int64{grid},
				InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{zeros}}
	}
	accepted := map[string]KernelFunc{
		// Programs exchanging their own elements only.
		"xchg of own elements": func(k *Kernel, r []*Ref) {
			AtomicXchg(r[1], []any{k.ProgramID(0)}, k.ProgramID(0).Add(7), nil)
		},
		// Old values used where every program has its own element.
		"old values of own elements": func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			old := AtomicAdd(r[1], []any{p}, 5, nil)
			AtomicAdd(r[1], []any{p}, old, nil)
		},
	}
	for name, kernel := range accepted {
		t.Run(name, func(t *testing.T) {
			c := run(4, kernel)
			want, err := runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
			require.Equal(t, want[0].Data, runTritonEval(t, c)[0].Data)
		})
	}
	refused := []struct {
		name   string
		kernel KernelFunc
		want   string
	}{
		{"xchg of one element", func(k *Kernel, r []*Ref) {
			AtomicXchg(r[1], []any{0}, k.ProgramID(0), nil)
		}, "race"},
		{"old values of a shared element", func(k *Kernel, r []*Ref) {
			old := AtomicAdd(r[1], []any{0}, 1, nil)
			r[1].Store(old, k.ProgramID(0))
		}, "race"},
		{"add and max", func(k *Kernel, r []*Ref) {
			AtomicAdd(r[1], []any{0}, 1, nil)
			AtomicMax(r[1], []any{0}, k.ProgramID(0), nil)
		}, "race"},
		{"add and a load", func(k *Kernel, r []*Ref) {
			AtomicAdd(r[1], []any{0}, 1, nil)
			r[1].Store(r[1].Load(0).Add(1), 1)
		}, "race"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			c := run(4, tc.kernel)
			err := lowerTritonErr(t, c)
			require.Error(t, err)
			require.True(t, strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "parallel"), "%v", err)
			// On a single program nothing races.
			require.NoError(t, lowerTritonErr(t, run(1, tc.kernel)))
		})
	}
}

// TestAtomicOutside: an unmasked update past the array is a bounds error
// in interpret mode and refused by the Triton lowering (a GPU would
// update other memory); masked, it is fine on both.
func TestAtomicOutside(t *testing.T) {
	zeros := interpreter.NewTensor(xla.MakeShape(xla.Int32, 4))
	c := func(masked bool) tritonCase {
		return tritonCase{name: "atomic_outside", kernel: func(k *Kernel, r []*Ref) {
			var keep *Value
			if masked {
				keep = k.Iota(xla.Int32, 0, 2).Add(k.ProgramID(0)).Lt(4)
			}
			AtomicAdd(r[1], []any{DS(k.ProgramID(0), 2)}, 1, keep)
		}, spec: CallSpec{Name: "atomic_outside", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}, Grid: []int64{4},
			InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{zeros}}
	}
	_, err := runCall(c(false).kernel, c(false).spec, c(false).args...)
	var be *BoundsError
	require.ErrorAs(t, err, &be)
	require.Contains(t, be.Error(), "atomic add on output 0")
	require.Equal(t, []int64{3}, be.GridPoint)
	require.ErrorContains(t, lowerTritonErr(t, c(false)), "the atomic add at atomic_test.go")
	require.ErrorContains(t, lowerTritonErr(t, c(false)), "outside the array")

	got, err := runCall(c(true).kernel, c(true).spec, c(true).args...)
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 2, 2}, got[0].Data)
	require.Equal(t, got[0].Data, runTritonEval(t, c(true))[0].Data)
}

// TestAtomicVmap: a batch of histograms through Vmap, each counted into
// its own output row, on both backends.
func TestAtomicVmap(t *testing.T) {
	x := make([]int32, 2*32)
	want := make([]int32, 2*5)
	for i := range x {
		x[i] = int32((i*7 + i/32) % 5)
		want[(i/32)*5+int(x[i])]++
	}
	c := histogramCase(x[:32], 5, 8)
	vk, vspec, err := Vmap(c.kernel, c.spec, 2, []bool{true, true})
	require.NoError(t, err)
	xs := interpreter.NewTensor(xla.MakeShape(xla.Int32, 2, 32))
	copy(xs.Data.([]int32), x)
	vc := tritonCase{name: "histogram_vmap", kernel: vk, spec: vspec,
		args: []*interpreter.Tensor{xs, interpreter.NewTensor(xla.MakeShape(xla.Int32, 2, 5))}}
	got, err := runCall(vc.kernel, vc.spec, vc.args...)
	require.NoError(t, err)
	require.Equal(t, want, got[0].Data)
	require.Equal(t, want, runTritonEval(t, vc)[0].Data)
}

// TestAtomicBarriers: two updates of one buffer in a program may put an
// element on different threads: updates that do not commute (another
// kind, xchg, old values read) wait at a gpu.barrier between them;
// updates of one kind whose old values go unread do not wait.
func TestAtomicBarriers(t *testing.T) {
	mk := func(second func(k *Kernel, r []*Ref, rev *Value) *Value) tritonCase {
		return tritonCase{name: "two_updates", kernel: func(k *Kernel, r []*Ref) {
			io := k.Iota(xla.Int32, 0, 256)
			AtomicAdd(r[2], []any{io}, 1, nil) // lane i adds to element i
			if v := second(k, r, k.Const(xla.Int32, 255).Sub(io)); v != nil {
				r[3].Store(v)
			}
		}, spec: CallSpec{Name: "two_updates", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 256), xla.MakeShape(xla.Int32, 256)},
			InputOutputAliases: map[int]int{0: 0, 1: 1}},
			args: []*interpreter.Tensor{interpreter.NewTensor(xla.MakeShape(xla.Int32, 256)), interpreter.NewTensor(xla.MakeShape(xla.Int32, 256))}}
	}
	for name, c := range map[string]struct {
		second  func(k *Kernel, r []*Ref, rev *Value) *Value
		barrier bool
	}{
		"old values read": {func(k *Kernel, r []*Ref, rev *Value) *Value { return AtomicAdd(r[2], []any{rev}, 0, nil) }, true},
		"xchg":            {func(k *Kernel, r []*Ref, rev *Value) *Value { AtomicXchg(r[2], []any{rev}, 5, nil); return nil }, true},
		"max after add":   {func(k *Kernel, r []*Ref, rev *Value) *Value { AtomicMax(r[2], []any{rev}, 3, nil); return nil }, true},
		"load":            {func(k *Kernel, r []*Ref, rev *Value) *Value { return r[2].Load(rev) }, true},
		"two adds":        {func(k *Kernel, r []*Ref, rev *Value) *Value { AtomicAdd(r[2], []any{rev}, 2, nil); return nil }, false},
		// The old values feed only arithmetic that reaches nothing.
		"dead old values": {func(k *Kernel, r []*Ref, rev *Value) *Value {
			_ = AtomicAdd(r[2], []any{rev}, 2, nil).Add(1)
			return nil
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			tc := mk(c.second)
			p, err := Trace(tc.kernel, tc.spec, argTypes(tc.args))
			require.NoError(t, err)
			k, err := LowerTriton(p, CompilerParams{})
			require.NoError(t, err)
			require.Equal(t, c.barrier, strings.Contains(k.IR, "gpu.barrier"), "%s", k.IR)
			assertTritonMatchesInterpret(t, tc)
		})
	}
}

// TestAtomicRaceCheckPositionsFromMemory: an update that does not commute
// with the output's others, at a position computed from loaded data, may
// meet another program's at any element: refused. Commuting updates at
// such positions (a histogram) are taken, and a dead use of old values
// does not make updates non-commuting.
func TestAtomicRaceCheckPositionsFromMemory(t *testing.T) {
	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	copy(x.Data.([]int32), []int32{0, 1, 2, 3, 3, 2, 1, 0}) // both programs' blocks name bins 0..3
	mk := func(f KernelFunc) tritonCase {
		return tritonCase{name: "scatter", kernel: f, spec: CallSpec{Name: "scatter",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}, Grid: []int64{2},
			InSpecs:            []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}, nil},
			InputOutputAliases: map[int]int{1: 0}},
			args: []*interpreter.Tensor{x, interpreter.NewTensor(xla.MakeShape(xla.Int32, 4))}}
	}
	for name, f := range map[string]KernelFunc{
		"xchg": func(k *Kernel, r []*Ref) { AtomicXchg(r[2], []any{r[0].Load()}, k.ProgramID(0).Add(1), nil) },
		"old values read": func(k *Kernel, r []*Ref) {
			old := AtomicAdd(r[2], []any{r[0].Load()}, k.ProgramID(0).Add(1), nil)
			AtomicAdd(r[2], []any{r[0].Load()}, old, nil)
		},
		"max then add": func(k *Kernel, r []*Ref) {
			AtomicMax(r[2], []any{r[0].Load()}, k.ProgramID(0).Add(5), nil)
			AtomicAdd(r[2], []any{r[0].Load()}, k.ProgramID(0).Add(1), nil)
		},
		"loop counter bound by data": func(k *Kernel, r []*Ref) {
			k.ForLoop(0, r[0].Load(0), nil, func(i *Value, _ []*Value) []*Value {
				AtomicXchg(r[2], []any{i.Rem(4)}, k.ProgramID(0), nil)
				return nil
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			checkErr, outs, back := tevOrders(t, mk(f))
			require.ErrorContains(t, checkErr, "is at a position computed from memory")
			if name != "loop counter bound by data" {
				require.False(t, sameBits(outs[0], back[0]), "the evaluator should show the race")
			}
		})
	}
	dead := mk(func(k *Kernel, r []*Ref) { _ = AtomicAdd(r[2], []any{r[0].Load()}, 1, nil).Mul(3) })
	assertTritonMatchesInterpret(t, dead)
}

// TestAtomicRaceCheckSecondReview: kernels a second review found judged
// wrongly. Refused (races on the evaluator): an xchg at a loop's trip
// count set by loaded data, and one in a block an index map picks from
// prefetched data. Taken (race-free): an xchg at data positions inside
// the program's own block, one left to a single program by a When, and
// adds whose old values feed only a dead loop carry. An update outside
// the array gets the bounds error without the race check's hint.
func TestAtomicRaceCheckSecondReview(t *testing.T) {
	perProgram := func(x []int32, f KernelFunc) tritonCase {
		xs := interpreter.NewTensor(xla.MakeShape(xla.Int32, 2))
		copy(xs.Data.([]int32), x)
		return tritonCase{name: "one_each", kernel: f, spec: CallSpec{Name: "one_each",
			OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}, Grid: []int64{2},
			InSpecs:            []*BlockSpec{{BlockShape: []int64{1}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}, nil},
			InputOutputAliases: map[int]int{1: 0}},
			args: []*interpreter.Tensor{xs, interpreter.NewTensor(xla.MakeShape(xla.Int32, 4))}}
	}
	pf := interpreter.NewTensor(xla.MakeShape(xla.Int32, 2))
	copy(pf.Data.([]int32), []int32{1, 1})
	refused := map[string]tritonCase{
		"while trip count": perProgram([]int32{1, 1}, func(k *Kernel, r []*Ref) {
			xv := r[0].Load(0)
			n := k.While([]*Value{k.Const(xla.Int32, 0)}, func(c []*Value) *Value { return c[0].Lt(xv) },
				func(c []*Value) []*Value { return []*Value{c[0].Add(1)} })[0]
			AtomicXchg(r[2], []any{n}, k.ProgramID(0).Add(1), nil)
		}),
		"for trip count": perProgram([]int32{1, 1}, func(k *Kernel, r []*Ref) {
			n := k.ForLoop(0, r[0].Load(0), []*Value{k.Const(xla.Int32, 0)}, func(i *Value, c []*Value) []*Value {
				return []*Value{c[0].Add(1)}
			})[0]
			AtomicXchg(r[2], []any{n}, k.ProgramID(0).Add(1), nil)
		}),
		"prefetched block": {name: "prefetched", kernel: func(k *Kernel, r []*Ref) {
			AtomicXchg(r[2], []any{0}, k.ProgramID(0).Add(1), nil)
		}, spec: CallSpec{Name: "prefetched", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}, Grid: []int64{2}, NumScalarPrefetch: 1,
			InSpecs:            []*BlockSpec{nil},
			OutSpecs:           []*BlockSpec{{BlockShape: []int64{1}, IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0])} }}},
			InputOutputAliases: map[int]int{1: 0}},
			args: []*interpreter.Tensor{pf, interpreter.NewTensor(xla.MakeShape(xla.Int32, 4))}},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			checkErr, outs, back := tevOrders(t, c)
			require.ErrorContains(t, checkErr, "is at a position computed from memory")
			require.False(t, sameBits(outs[0], back[0]), "the evaluator should show the race")
		})
	}

	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	copy(x.Data.([]int32), []int32{3, 2, 1, 0, 1, 0, 3, 2})
	blk := &BlockSpec{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
	ownBlock := tritonCase{name: "own_block", kernel: func(k *Kernel, r []*Ref) {
		idx := r[0].Load().Max(0).Min(3)
		r[3].Store(AtomicXchg(r[2], []any{idx}, k.Iota(xla.Int32, 0, 4).Add(k.ProgramID(0).Mul(10)), nil))
	}, spec: CallSpec{Name: "own_block", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8), xla.MakeShape(xla.Int32, 8)}, Grid: []int64{2},
		InSpecs: []*BlockSpec{blk, blk}, OutSpecs: []*BlockSpec{blk, blk}, InputOutputAliases: map[int]int{1: 0}},
		args: []*interpreter.Tensor{x, interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))}}
	taken := map[string]tritonCase{
		"own block": ownBlock,
		"one program": perProgram([]int32{1, 1}, func(k *Kernel, r []*Ref) {
			xv := r[0].Load(0)
			k.When(k.ProgramID(0).Eq(0), func() { AtomicXchg(r[2], []any{xv}, 7, nil) })
		}),
		"dead carry": perProgram([]int32{0, 0}, func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2, []*Value{k.Const(xla.Int32, 0)}, func(i *Value, c []*Value) []*Value {
				return []*Value{c[0].Add(AtomicAdd(r[2], []any{0}, 1, nil))}
			})
		}),
	}
	for name, c := range taken {
		t.Run(name, func(t *testing.T) { assertTritonMatchesInterpret(t, c) })
	}

	outside := tritonCase{name: "outside", kernel: func(k *Kernel, r []*Ref) {
		AtomicXchg(r[1], []any{k.Iota(xla.Int32, 0, 4).Add(k.ProgramID(0).Mul(4))}, 1, nil)
	}, spec: CallSpec{Name: "outside", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 6)}, Grid: []int64{2}, InputOutputAliases: map[int]int{0: 0}},
		args: []*interpreter.Tensor{interpreter.NewTensor(xla.MakeShape(xla.Int32, 6))}}
	err := lowerTritonErr(t, outside)
	require.ErrorContains(t, err, "outside the array")
	require.NotContains(t, err.Error(), "The check takes atomic updates")
}

// TestAtomicFloatMaxMin: f32 and f64 atomic max and min on both backends
// (the Triton kernel updates the floats' bits with integer updates, a
// signed max or unsigned min by the value's sign) against Go, -0 below
// +0, masks kept, the old values returned.
func TestAtomicFloatMaxMin(t *testing.T) {
	mem := []float64{1.5, -2, 0, math.Copysign(0, -1), -7, 3, 100, -0.25}
	val := []float64{-1, -3, math.Copysign(0, -1), 0, -6.5, 3.5, -100, 2}
	for _, dt := range []xla.DType{xla.Float32, xla.Float64} {
		for _, kind := range []string{"max", "min"} {
			t.Run(dt.String()+"_"+kind, func(t *testing.T) {
				f := map[string]func(*Ref, []any, any, *Value) *Value{"max": AtomicMax, "min": AtomicMin}[kind]
				a := fTensor([]int64{8}, func(i int) float64 { return mem[i] })
				v := fTensor([]int64{8}, func(i int) float64 { return val[i] })
				if dt == xla.Float64 {
					a, v = f64Tensor(mem), f64Tensor(val)
				}
				c := tritonCase{name: "atomic_f" + kind, kernel: func(k *Kernel, r []*Ref) {
					keep := k.Iota(xla.Int32, 0, 8).Ne(5)
					r[2].Store(f(r[3], []any{All}, r[1].Load(), keep))
				}, spec: CallSpec{Name: "atomic_f" + kind, OutShapes: []xla.Shape{xla.MakeShape(dt, 8), xla.MakeShape(dt, 8)},
					InputOutputAliases: map[int]int{0: 1}},
					args: []*interpreter.Tensor{a, v}}
				var wantMem, wantOld []float64
				for i := range mem {
					m, o := mem[i], mem[i]
					if i == 5 {
						o = 0
					} else if kind == "max" {
						m = maxSigned(mem[i], val[i])
					} else {
						m = -maxSigned(-mem[i], -val[i])
					}
					wantMem, wantOld = append(wantMem, m), append(wantOld, o)
				}
				check := func(name string, outs []*interpreter.Tensor) {
					got := [2][]float64{floats(outs[0]), floats(outs[1])}
					for i := range wantMem {
						require.Equal(t, math.Float64bits(wantOld[i]), math.Float64bits(got[0][i]), "%s old[%d]: %v want %v", name, i, got[0][i], wantOld[i])
						require.Equal(t, math.Float64bits(wantMem[i]), math.Float64bits(got[1][i]), "%s mem[%d]: %v want %v", name, i, got[1][i], wantMem[i])
					}
				}
				checkEveryBackend(t, c, check)
			})
		}
	}
}

// maxSigned is max ordering -0 below +0.
func maxSigned(a, b float64) float64 {
	if a == b {
		if math.Signbit(a) {
			return b
		}
		return a
	}
	return math.Max(a, b)
}

// floats is a float tensor's data as float64s.
func floats(x *interpreter.Tensor) []float64 {
	switch d := x.Data.(type) {
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	case []float64:
		return d
	}
	return nil
}

func f64Tensor(v []float64) *interpreter.Tensor {
	t := interpreter.NewTensor(xla.MakeShape(xla.Float64, int64(len(v))))
	copy(t.Data.([]float64), v)
	return t
}

// checkEveryBackend passes check the outputs of c in interpret mode, as
// TTIR on the evaluator (programs in both orders) and on the IR contract's
// reference evaluator, each with its name.
func checkEveryBackend(t *testing.T, c tritonCase, check func(name string, outs []*interpreter.Tensor)) {
	t.Helper()
	got, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	check("interpret", got)
	check("triton", runTritonEval(t, c))
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	ref, err := zzEval(p, c.args)
	require.NoError(t, err)
	check("reference", ref)
}

// TestAtomicRepeatsInOneUpdate: lanes of one update that reach the same
// element see it as if they updated it one after another, in row-major
// order (one order a GPU program's threads may take): AtomicAdd(count,
// [e], 1) gives each lane of an e its ticket 0, 1, 2 ... (interpret mode
// gave every lane the element's value before the update, 0, which no GPU
// order gives: found porting a MoE kernel). Every kind, a mask that skips
// lanes, on each backend, against Go applying the lanes in order.
func TestAtomicRepeatsInOneUpdate(t *testing.T) {
	e := []int64{0, 0, 1, 0, 2, 1, 3, 0, 2, 2, 1, 0, 3, 3, 0, 1}
	v := []int64{5, -3, 12, 7, 1, 9, -8, 4, 6, 2, 11, -1, 3, 10, 13, 0}
	skip := 6 // lane 6 masked off
	type kind struct {
		name string
		f    func(*Ref, []any, any, *Value) *Value
		op   func(a, b int64) int64
	}
	for _, kd := range []kind{
		{"add", AtomicAdd, func(a, b int64) int64 { return a + b }},
		{"max", AtomicMax, func(a, b int64) int64 { return max(a, b) }},
		{"min", AtomicMin, func(a, b int64) int64 { return min(a, b) }},
		{"and", AtomicAnd, func(a, b int64) int64 { return a & b }},
		{"or", AtomicOr, func(a, b int64) int64 { return a | b }},
		{"xor", AtomicXor, func(a, b int64) int64 { return a ^ b }},
		{"xchg", AtomicXchg, func(a, b int64) int64 { return b }},
	} {
		t.Run(kd.name, func(t *testing.T) {
			start := []int64{100, -50, 7, 0}
			mem := slices.Clone(start)
			wantOld := make([]int64, len(e))
			for i := range e {
				if i == skip {
					continue // masked off: 0, and no update
				}
				wantOld[i] = mem[e[i]]
				mem[e[i]] = kd.op(mem[e[i]], v[i])
			}
			c := tritonCase{name: "repeats_" + kd.name, kernel: func(k *Kernel, r []*Ref) {
				keep := k.Iota(xla.Int32, 0, 16).Ne(skip)
				r[4].Store(kd.f(r[3], []any{r[0].Load()}, r[1].Load(), keep))
			}, spec: CallSpec{Name: "repeats_" + kd.name, OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32, 16)},
				InputOutputAliases: map[int]int{2: 0}},
				args: []*interpreter.Tensor{
					intTensor(xla.Int32, []int64{16}, func(i int) int64 { return e[i] }),
					intTensor(xla.Int32, []int64{16}, func(i int) int64 { return v[i] }),
					intTensor(xla.Int32, []int64{4}, func(i int) int64 { return start[i] }),
				}}
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				assert.Equal(t, mem, ints(t, outs[0]), "%s: memory", backend)
				assert.Equal(t, wantOld, ints(t, outs[1]), "%s: old values, lane by lane", backend)
			})
		})
	}
	// Floats: sums of repeats (integer-valued, exact in any order) and the
	// last exchanged value, -0 and NaN kept.
	f := []float64{1, 2, math.Copysign(0, -1), 4, math.NaN(), 8, 16, 32}
	ef := []int64{1, 1, 0, 1, 0, 2, 2, 1}
	for _, kind := range []string{"add", "xchg"} {
		c := tritonCase{name: "repeats_f32_" + kind, kernel: func(k *Kernel, r []*Ref) {
			upd := map[string]func(*Ref, []any, any, *Value) *Value{"add": AtomicAdd, "xchg": AtomicXchg}[kind]
			r[4].Store(upd(r[3], []any{r[0].Load()}, r[1].Load(), nil))
		}, spec: CallSpec{Name: "repeats_f32_" + kind, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 3), xla.MakeShape(xla.Float32, 8)},
			InputOutputAliases: map[int]int{2: 0}},
			args: []*interpreter.Tensor{
				intTensor(xla.Int32, []int64{8}, func(i int) int64 { return ef[i] }),
				floatTensor(xla.Float32, []int64{8}, func(i int) float64 { return f[i] }),
				floatTensor(xla.Float32, []int64{3}, func(i int) float64 { return []float64{10, 20, 30}[i] }),
			}}
		mem := []float64{10, 20, 30}
		wantOld := make([]float64, 8)
		for i, x := range f {
			wantOld[i] = mem[ef[i]]
			if kind == "add" {
				mem[ef[i]] += x
			} else {
				mem[ef[i]] = x
			}
		}
		checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
			got := floats(outs[1])
			for i := range wantOld {
				if math.IsNaN(wantOld[i]) {
					assert.True(t, math.IsNaN(got[i]), "%s %s: lane %d", backend, kind, i)
					continue
				}
				assert.Equal(t, math.Float64bits(wantOld[i]), math.Float64bits(got[i]), "%s %s: lane %d: %v, want %v", backend, kind, i, got[i], wantOld[i])
			}
		})
	}
}

// TestAtomicRepeatsTooManyLanes: an update through an index array whose
// old values are used has at most maxSequencedLanes lanes in interpret
// mode (it compares every pair); a larger one is an error saying so, and
// the same update with its old values unused runs.
func TestAtomicRepeatsTooManyLanes(t *testing.T) {
	const n = 2 * maxSequencedLanes
	idx := intTensor(xla.Int32, []int64{n}, func(i int) int64 { return int64(i % 3) })
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32, n)}, InputOutputAliases: map[int]int{1: 0}}
	zeros := intTensor(xla.Int32, []int64{4}, func(int) int64 { return 0 })
	_, err := runCall(func(k *Kernel, r []*Ref) { r[3].Store(AtomicAdd(r[2], []any{r[0].Load()}, 1, nil)) }, spec, idx, zeros)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "atomic at atomic_test.go:")
	assert.Contains(t, err.Error(), "over at most 4096 lanes, and this one has 8192: split it into smaller updates")
	out, err := runCall(func(k *Kernel, r []*Ref) { AtomicAdd(r[2], []any{r[0].Load()}, 1, nil) }, spec, idx, zeros)
	require.NoError(t, err)
	assert.Equal(t, []int32{2731, 2731, 2730, 0}, out[0].Data)
}

// TestAtomicRepeatsFloatMaxMinAndPadding: float max and min take the
// lanes of values with the sign bit clear first, then the others (the
// Triton kernel's two atomics), so every backend gives a repeat's lanes
// the same old values (interpret mode took them row-major: found in
// review); and lanes in an edge block's padding read the pad value, not
// what earlier lanes there left.
func TestAtomicRepeatsFloatMaxMinAndPadding(t *testing.T) {
	v := []float64{-2, 1, -5, 3, math.Copysign(0, -1), -1, 4, 0.5}
	e := []int64{0, 0, 1, 0, 1, 0, 1, 1}
	for _, kind := range []string{"max", "min"} {
		upd := map[string]func(*Ref, []any, any, *Value) *Value{"max": AtomicMax, "min": AtomicMin}[kind]
		c := tritonCase{name: "repeats_f32_" + kind, kernel: func(k *Kernel, r []*Ref) {
			r[4].Store(upd(r[3], []any{r[0].Load()}, r[1].Load(), nil))
		}, spec: CallSpec{Name: "repeats_f32_" + kind, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2), xla.MakeShape(xla.Float32, 8)},
			InputOutputAliases: map[int]int{2: 0}},
			args: []*interpreter.Tensor{
				intTensor(xla.Int32, []int64{8}, func(i int) int64 { return e[i] }),
				floatTensor(xla.Float32, []int64{8}, func(i int) float64 { return v[i] }),
				floatTensor(xla.Float32, []int64{2}, func(int) float64 { return 0.25 }),
			}}
		mem := []float64{0.25, 0.25}
		old := make([]float64, 8)
		for _, neg := range []bool{false, true} { // sign bit clear first
			for i, x := range v {
				if math.Signbit(x) != neg {
					continue
				}
				old[i] = mem[e[i]]
				if kind == "max" {
					mem[e[i]] = maxSigned(mem[e[i]], x)
				} else {
					mem[e[i]] = -maxSigned(-mem[e[i]], -x)
				}
			}
		}
		checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
			assert.Equal(t, mem, floats(outs[0]), "%s %s: memory", backend, kind)
			assert.Equal(t, old, floats(outs[1]), "%s %s: old values", backend, kind)
		})
	}

	// Program 1's block of a 6-element output covers elements 4, 5 and
	// padding: its lanes at block index 2 and 3 are padding.
	idx := []int64{2, 2, 3, 0, 3, 2, 1, 0}
	c := tritonCase{name: "repeats_padding", kernel: func(k *Kernel, r []*Ref) {
		r[3].Store(AtomicAdd(r[2], []any{r[0].Load()}, k.Iota(xla.Int32, 0, 8).Add(1), nil))
	}, spec: CallSpec{Name: "repeats_padding", Grid: []int64{2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 6), xla.MakeShape(xla.Int32, 2, 8)},
		InSpecs:            []*BlockSpec{nil, {BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
		OutSpecs:           []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}, {BlockShape: []int64{Squeezed, 8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
		InputOutputAliases: map[int]int{1: 0}},
		args: []*interpreter.Tensor{intTensor(xla.Int32, []int64{8}, func(i int) int64 { return idx[i] }), intTensor(xla.Int32, []int64{6}, func(int) int64 { return 0 })}}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		got := ints(t, outs[1])[8:] // program 1's old values
		for lane, at := range idx {
			if at >= 2 { // padding
				assert.Equal(t, int64(math.MinInt32), got[lane], "%s: lane %d in the padding", backend, lane)
			}
		}
		// Program 0 adds lanes+1 at 0..3, program 1 at 4 and 5 (its others
		// fall in the padding).
		assert.Equal(t, []int64{4 + 8, 7, 1 + 2 + 6, 3 + 5, 4 + 8, 7}, ints(t, outs[0]), "%s: memory", backend)
	})
}

// TestAtomicRepeatsFloatAddRounds: the lanes of a float add that reach
// one element round after each lane, as a GPU's updates do: 2^27 + 3 is
// 2^27 in f32, so every lane sees 2^27 (interpret mode added the earlier
// lanes' sum at once and gave the last lane 2^27+16, a value the element
// never held: found in review); in bf16, 256 + 1 is 256.
func TestAtomicRepeatsFloatAddRounds(t *testing.T) {
	for _, c := range []struct {
		dt         xla.DType
		start, add float64
	}{{xla.Float32, 1 << 27, 3}, {xla.BFloat16, 256, 1}} {
		k := tritonCase{name: "repeats_rounding", kernel: func(k *Kernel, r []*Ref) {
			r[3].Store(AtomicAdd(r[2], []any{k.Zeros(xla.Int32, 4)}, r[0].Load(), nil))
		}, spec: CallSpec{Name: "repeats_rounding", OutShapes: []xla.Shape{xla.MakeShape(c.dt, 1), xla.MakeShape(c.dt, 4)}, InputOutputAliases: map[int]int{1: 0}},
			args: []*interpreter.Tensor{
				floatTensor(c.dt, []int64{4}, func(int) float64 { return c.add }),
				floatTensor(c.dt, []int64{1}, func(int) float64 { return c.start }),
			}}
		checkEveryBackend(t, k, func(backend string, outs []*interpreter.Tensor) {
			assert.Equal(t, []float64{c.start, c.start, c.start, c.start}, floats(outs[1]), "%s %v: old values", backend, c.dt)
			assert.Equal(t, []float64{c.start}, floats(outs[0]), "%s %v: memory", backend, c.dt)
		})
	}
}

// TestOrderDependentAtomics: tickets handed out across programs (a MoE
// kernel's slot per token: AtomicAdd(count, [expert], 1), the old values
// stored) depend on the programs' order: the race check refuses them,
// unless CompilerParams.OrderDependentAtomics says any order is right;
// then the kernel builds for Triton, EvalTriton runs it, and in every
// order each expert's tokens get the slots 0, 1, 2 ... once each
// (interpret mode: in grid order, the TTIR evaluator: as it runs them).
func TestOrderDependentAtomics(t *testing.T) {
	experts := []int64{2, 0, 1, 2, 2, 0, 3, 1, 0, 2, 2, 1, 3, 0, 2, 1}
	kernel := func(k *Kernel, r []*Ref) {
		r[3].Store(AtomicAdd(r[2], []any{r[0].Load()}, 1, nil))
	}
	block := blockMap(func(g []*Value) []any { return []any{g[0]} })
	spec := CallSpec{Name: "slots", Grid: []int64{4},
		OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32, 16)},
		InSpecs:   []*BlockSpec{{BlockShape: []int64{4}, IndexMap: block}, nil},
		OutSpecs:  []*BlockSpec{nil, {BlockShape: []int64{4}, IndexMap: block}}, InputOutputAliases: map[int]int{1: 0}}
	args := []*interpreter.Tensor{intTensor(xla.Int32, []int64{16}, func(i int) int64 { return experts[i] }),
		intTensor(xla.Int32, []int64{4}, func(int) int64 { return 0 })}
	_, err := EvalTriton(kernel, spec, args...)
	require.Error(t, err, "refused without the flag")
	assert.Contains(t, err.Error(), "output 0")

	spec.CompilerParams.OrderDependentAtomics = true
	slotsOK := func(backend string, counts, slots []int64) {
		seen := map[[2]int64]bool{}
		for i, e := range experts {
			assert.False(t, seen[[2]int64{e, slots[i]}], "%s: expert %d's slot %d given twice", backend, e, slots[i])
			seen[[2]int64{e, slots[i]}] = true
			assert.Less(t, slots[i], counts[e], "%s: token %d", backend, i)
		}
		assert.Equal(t, []int64{4, 4, 6, 2}, counts, backend)
	}
	got, err := EvalTriton(kernel, spec, args...)
	require.NoError(t, err)
	slotsOK("triton", ints(t, got[0]), ints(t, got[1]))
	out, err := runCall(kernel, spec, args...)
	require.NoError(t, err)
	slotsOK("interpret", ints(t, out[0]), ints(t, out[1]))
	// In grid order, token by token.
	assert.Equal(t, []int64{0, 0, 0, 1, 2, 1, 0, 1, 2, 3, 4, 2, 1, 3, 5, 3}, ints(t, out[1]))
	_, _, back := tevOrders(t, tritonCase{name: "slots", kernel: kernel, spec: spec, args: args})
	slotsOK("triton reversed", ints(t, back[0]), ints(t, back[1]))
}
