package pallas

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The lanes of casLanesCase: the element each swaps, the value it expects
// and the value it puts (lane 9 is masked off). Chains on element 0: lane
// 0 swaps 0 for 10, lane 1 expects 0 and fails, lane 3 swaps the 10 lane 0
// left for 11, lane 7 the 11 for 12; lane 15 expects 0 there and fails.
var (
	casElem = []int64{0, 0, 1, 0, 2, 1, 3, 0, 2, 2, 1, 5, 6, 7, 6, 0}
	casCmp  = []float64{0, 0, 1, 10, 5, 20, 3, 11, 2, 21, 20, 5, 0, 7, 6, 0}
	casVal  = []float64{10, 99, 20, 11, 98, 21, 30, 12, 22, 97, 23, 50, 60, 70, 61, 96}
)

const casSkip = 9

// casLanesCase swaps lanes of one update (an index array with repeats,
// and a mask) into an 8-element buffer of dt aliased to output 0; output
// 1 gets each lane's old value. For floats, element 6 holds -0 and element
// 7 NaN.
func casLanesCase(dt xla.DType) (tritonCase, []float64) {
	mem := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	cmp := append([]float64(nil), casCmp...)
	if dt.IsFloat() {
		mem[6], mem[7] = math.Copysign(0, -1), math.NaN()
		cmp[13] = math.NaN() // the same bits: swaps
		cmp[14] = math.Copysign(0, -1)
	}
	tensor := func(v []float64) *interpreter.Tensor {
		if dt.IsFloat() {
			return floatTensor(dt, []int64{int64(len(v))}, func(i int) float64 { return v[i] })
		}
		return intTensor(dt, []int64{int64(len(v))}, func(i int) int64 { return int64(v[i]) })
	}
	c := tritonCase{name: "atomic_cas", kernel: func(k *Kernel, r []*Ref) {
		keep := k.Iota(xla.Int32, 0, 16).Ne(casSkip)
		r[5].Store(AtomicCas(r[4], []any{r[1].Load()}, r[2].Load(), r[3].Load(), keep))
	}, spec: CallSpec{Name: "atomic_cas", OutShapes: []xla.Shape{xla.MakeShape(dt, 8), xla.MakeShape(dt, 16)},
		InputOutputAliases: map[int]int{0: 0}},
		args: []*interpreter.Tensor{tensor(mem), intTensor(xla.Int32, []int64{16}, func(i int) int64 { return casElem[i] }),
			tensor(cmp), tensor(casVal)}}
	return c, cmp
}

// casClaimCase is a compare-and-swap whose lanes reach distinct elements
// (a permutation), half of them expecting what is there, one masked off,
// the old values stored: the same on every backend and on a GPU, where
// lanes that share an element would swap in an order of its own.
func casClaimCase() tritonCase {
	perm := func(i int) int64 { return int64(i*5) % 16 }
	return tritonCase{name: "atomic_cas", kernel: func(k *Kernel, r []*Ref) {
		at := r[0].Load()
		cmp := Where(at.Rem(2).Eq(0), at.Mul(3), -1)
		r[3].Store(AtomicCas(r[2], []any{at}, cmp, at.Add(100), k.Iota(xla.Int32, 0, 16).Ne(7)))
	}, spec: CallSpec{Name: "atomic_cas", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 16), xla.MakeShape(xla.Int32, 16)},
		InputOutputAliases: map[int]int{1: 0}},
		args: []*interpreter.Tensor{intTensor(xla.Int32, []int64{16}, perm),
			intTensor(xla.Int32, []int64{16}, func(i int) int64 { return int64(3 * i) })}}
}

// TestAtomicCasDistinct: casClaimCase against Go: even elements swap to
// their index + 100, odd ones and the masked lane's stay; old values are
// the elements' (zero for the masked lane).
func TestAtomicCasDistinct(t *testing.T) {
	c := casClaimCase()
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		mem, old := ints(t, outs[0]), ints(t, outs[1])
		for i := 0; i < 16; i++ {
			e := int64(i*5) % 16
			want, wantOld := 3*e, 3*e
			if i == 7 {
				wantOld = 0
			} else if e%2 == 0 {
				want = e + 100
			}
			assert.Equal(t, want, mem[e], "%s: element %d", backend, e)
			assert.Equal(t, wantOld, old[i], "%s: lane %d", backend, i)
		}
	})
}

// TestAtomicCasLanes: the lanes of one compare-and-swap that reach one
// element swap one after another in row-major order, each seeing what the
// lanes before it left; a masked-off lane neither swaps nor reads (its old
// value is 0); floats compare their bits (+0 does not match -0, NaN
// matches itself). Every 32- and 64-bit integer and float dtype, on each
// backend, against Go applying the lanes in order.
func TestAtomicCasLanes(t *testing.T) {
	for _, dt := range []xla.DType{xla.Int32, xla.Uint32, xla.Int64, xla.Uint64, xla.Float32, xla.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			c, _ := casLanesCase(dt)
			mem, cmp := floatsOrInts(t, c.args[0]), floatsOrInts(t, c.args[2])
			old := make([]float64, 16)
			for i, e := range casElem {
				if i == casSkip {
					continue
				}
				old[i] = mem[e]
				if math.Float64bits(mem[e]) == math.Float64bits(cmp[i]) {
					mem[e] = casVal[i]
				}
			}
			require.Equal(t, 12.0, mem[0], "the chain on element 0")
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				assertSameFloats(t, mem, floatsOrInts(t, outs[0]), "%s: memory", backend)
				assertSameFloats(t, old, floatsOrInts(t, outs[1]), "%s: old values", backend)
			})
		})
	}
}

// floatsOrInts is a tensor's elements as float64 (integers converted).
func floatsOrInts(t *testing.T, x *interpreter.Tensor) []float64 {
	if x.Shape.DType.IsFloat() {
		return slices.Clone(floats(x)) // (f64: not the tensor's own slice)
	}
	var out []float64
	for _, v := range ints(t, x) {
		out = append(out, float64(v))
	}
	return out
}

// assertSameFloats compares bits (so -0 and NaN count).
func assertSameFloats(t *testing.T, want, got []float64, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "element %d: want %v, got %v; %s", i, want[i], got[i], fmt.Sprintf(msg, args...))
	}
}

// TestAtomicCasTTIR: tt.atomic_cas at GPU scope with acquire-release
// semantics; the op has no mask, so the masked lanes swap cmp for cmp at
// the array's first element (a select of pointers), and their old values
// are selected to zero after. mlir-opt parses it.
func TestAtomicCasTTIR(t *testing.T) {
	c, _ := casLanesCase(xla.Int32)
	k, err := lowerTritonCase(t, c)
	require.NoError(t, err)
	require.Regexp(t, `"tt.atomic_cas"\(%\w+, %\w+, %\w+\) <\{scope = 1 : i32, sem = 4 : i32\}> : \(tensor<16x!tt.ptr<i32>>, tensor<16xi32>, tensor<16xi32>\) -> tensor<16xi32>`, k.IR)
	require.Regexp(t, `arith.select %\w+, %\w+, %\w+ : tensor<16xi1>, tensor<16x!tt.ptr<i32>>`, k.IR)
	if opt := mliropt.Path(); opt != "" {
		_, err = mliropt.Run(opt, k.IR)
		require.NoError(t, err, "--- input ---\n%s", k.IR)
	}
}

// TestAtomicCasClaims: programs claim the slots of a hash table (key mod
// 8) with AtomicCas(table, [h], -1, key), as a GPU hash-table insert does.
// Which key wins a slot depends on the programs' order: the race check
// refuses it unless CompilerParams.OrderDependentAtomics says any order is
// right; then in every order (interpret mode's grid order, the TTIR
// evaluator's two) each slot some key hashes to holds one of them, that
// key alone saw -1, the others saw it, and the other slots stay -1.
func TestAtomicCasClaims(t *testing.T) {
	keys := []int64{3, 11, 4, 19, 12, 7, 27, 5, 20, 15, 35, 6, 13, 28, 21, 36}
	kernel := func(k *Kernel, r []*Ref) {
		key := r[0].Load()
		r[3].Store(AtomicCas(r[2], []any{key.Rem(8)}, -1, key, nil))
	}
	block := blockMap(func(g []*Value) []any { return []any{g[0]} })
	spec := CallSpec{Name: "claims", Grid: []int64{4},
		OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8), xla.MakeShape(xla.Int32, 16)},
		InSpecs:   []*BlockSpec{{BlockShape: []int64{4}, IndexMap: block}, nil},
		OutSpecs:  []*BlockSpec{nil, {BlockShape: []int64{4}, IndexMap: block}}, InputOutputAliases: map[int]int{1: 0}}
	args := []*interpreter.Tensor{intTensor(xla.Int32, []int64{16}, func(i int) int64 { return keys[i] }),
		intTensor(xla.Int32, []int64{8}, func(int) int64 { return -1 })}
	_, err := EvalTriton(kernel, spec, args...)
	require.Error(t, err, "refused without the flag")
	assert.Contains(t, err.Error(), "output 0")
	assert.Contains(t, err.Error(), "atomic_cas")

	spec.CompilerParams.OrderDependentAtomics = true
	claimed := func(backend string, table, old []int64) {
		for h := int64(0); h < 8; h++ {
			var hashed []int64
			winners := 0
			for i, key := range keys {
				if key%8 != h {
					continue
				}
				hashed = append(hashed, key)
				if old[i] == -1 {
					winners++
					assert.Equal(t, key, table[h], "%s: key %d saw slot %d empty but does not hold it", backend, key, h)
				} else {
					assert.Equal(t, table[h], old[i], "%s: key %d lost slot %d to another", backend, key, h)
				}
			}
			if len(hashed) == 0 {
				assert.Equal(t, int64(-1), table[h], "%s: slot %d", backend, h)
				continue
			}
			assert.Contains(t, hashed, table[h], "%s: slot %d", backend, h)
			assert.Equal(t, 1, winners, "%s: slot %d", backend, h)
		}
	}
	out, err := runCall(kernel, spec, args...)
	require.NoError(t, err)
	claimed("interpret", ints(t, out[0]), ints(t, out[1]))
	// In grid order, the first key of each slot wins.
	assert.Equal(t, []int64{-1, -1, -1, 3, 4, 5, 6, 7}, ints(t, out[0]))
	got, err := EvalTriton(kernel, spec, args...)
	require.NoError(t, err)
	claimed("triton", ints(t, got[0]), ints(t, got[1]))
	_, _, back := tevOrders(t, tritonCase{name: "claims", kernel: kernel, spec: spec, args: args})
	claimed("triton reversed", ints(t, back[0]), ints(t, back[1]))
	assert.NotEqual(t, ints(t, got[0]), ints(t, back[0]), "the winners depend on the order")
}

// TestAtomicCasEdgeBlock: a block that overhangs the array's end swaps
// only the elements inside it (on Triton its padding lanes are masked off
// and swap nothing at the first element), a scalar ref swaps its one
// element, and lanes a user's mask drops keep their old value zero.
func TestAtomicCasEdgeBlock(t *testing.T) {
	mem := intTensor(xla.Int32, []int64{12}, func(i int) int64 { return int64(i) })
	c := tritonCase{name: "cas_edge", kernel: func(k *Kernel, r []*Ref) {
		base := k.ProgramID(0).Mul(8)
		lane := k.Iota(xla.Int32, 0, 8).Add(base)
		// Even elements expect their value (and swap), odd ones expect -5.
		cmp := Where(lane.Rem(2).Eq(0), lane, -5)
		r[4].Store(AtomicCas(r[3], nil, cmp, lane.Add(100), nil))
		r[5].Store(AtomicCas(r[2], nil, 0, k.ProgramID(0).Add(1), nil).BroadcastTo(1))
	}, spec: CallSpec{Name: "cas_edge", Grid: []int64{2},
		OutShapes: []xla.Shape{xla.MakeShape(xla.Int32), xla.MakeShape(xla.Int32, 12), xla.MakeShape(xla.Int32, 12), xla.MakeShape(xla.Int32, 2)},
		InSpecs:   []*BlockSpec{nil, nil},
		OutSpecs: []*BlockSpec{nil,
			{BlockShape: []int64{8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
			{BlockShape: []int64{8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
			{BlockShape: []int64{1}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
		InputOutputAliases: map[int]int{0: 0, 1: 1}, CompilerParams: CompilerParams{OrderDependentAtomics: true}},
		args: []*interpreter.Tensor{intTensor(xla.Int32, nil, func(int) int64 { return 0 }), mem}}
	check := func(backend string, outs []*interpreter.Tensor) {
		after, old, first := ints(t, outs[1]), ints(t, outs[2]), ints(t, outs[3])
		for i := int64(0); i < 12; i++ {
			want := i
			if i%2 == 0 {
				want = i + 100
			}
			assert.Equal(t, want, after[i], "%s: element %d", backend, i)
			assert.Equal(t, i, old[i], "%s: old value of element %d", backend, i)
		}
		// One program found the scalar 0 and put its id + 1; the other saw that.
		s := ints(t, outs[0])[0]
		require.Contains(t, []int64{1, 2}, s, backend)
		w := s - 1
		assert.Equal(t, int64(0), first[w], "%s: program %d won", backend, w)
		assert.Equal(t, s, first[1-w], "%s: program %d lost", backend, 1-w)
	}
	out, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	check("interpret", out)
	got, err := EvalTriton(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	check("triton", got)
	_, _, back := tevOrders(t, c)
	check("triton reversed", back)
}

// TestAtomicCasErrors: the dtypes it takes, cmp's dtype and shape, an
// input ref, each an error naming the op and its line.
func TestAtomicCasErrors(t *testing.T) {
	cases := []struct {
		name   string
		kernel func(k *Kernel, r []*Ref)
		out    xla.DType
		want   string
	}{
		{"f16", func(k *Kernel, r []*Ref) { AtomicCas(r[0], nil, 0.0, 1.0, nil) }, xla.Float16,
			"atomic cas takes 32- and 64-bit integers, f32 and f64"},
		{"i8", func(k *Kernel, r []*Ref) { AtomicCas(r[0], nil, 0, 1, nil) }, xla.Int8,
			"atomic cas takes 32- and 64-bit integers, f32 and f64"},
		{"cmp dtype", func(k *Kernel, r []*Ref) { AtomicCas(r[0], nil, k.Zeros(xla.Float32, 4), 1, nil) }, xla.Int32,
			"cmp is f32[4], the ref holds i32 (convert with Astype)"},
		{"cmp shape", func(k *Kernel, r []*Ref) { AtomicCas(r[0], nil, k.Zeros(xla.Int32, 3), 1, nil) }, xla.Int32,
			"cmp of shape [3] does not broadcast to the indexed shape [4]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCall(c.kernel, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(c.out, 4)}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "atomic_cas at atomic_cas_test.go:")
		})
	}
	_, err := runCall(func(k *Kernel, r []*Ref) {
		r[1].Store(AtomicCas(r[0], nil, 0, 1, nil))
	}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}}, intTensor(xla.Int32, []int64{4}, func(int) int64 { return 0 }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is an input ref (read-only)")
}

// TestAtomicCasVmap: a batch of two compare-and-swaps (each element its
// own positions and memory) gives each element what the call alone gives,
// in interpret mode and as Triton.
func TestAtomicCasVmap(t *testing.T) {
	c := casClaimCase()
	vk, vspec, err := Vmap(c.kernel, c.spec, 2, []bool{true, true})
	require.NoError(t, err)
	pos := [][]int64{ints(t, c.args[0]), nil}
	for i := 0; i < 16; i++ {
		pos[1] = append(pos[1], int64(15-i))
	}
	mem := [][]int64{ints(t, c.args[1]), nil}
	for i := 0; i < 16; i++ {
		mem[1] = append(mem[1], int64(i%3*2))
	}
	var wantMem, wantOld []int64
	for b := 0; b < 2; b++ {
		out, err := runCall(c.kernel, c.spec, intTensor(xla.Int32, []int64{16}, func(i int) int64 { return pos[b][i] }),
			intTensor(xla.Int32, []int64{16}, func(i int) int64 { return mem[b][i] }))
		require.NoError(t, err)
		wantMem, wantOld = append(wantMem, ints(t, out[0])...), append(wantOld, ints(t, out[1])...)
	}
	require.NotEqual(t, wantMem[:16], wantMem[16:])
	vc := tritonCase{name: "cas_vmap", kernel: vk, spec: vspec, args: []*interpreter.Tensor{
		intTensor(xla.Int32, []int64{2, 16}, func(i int) int64 { return pos[i/16][i%16] }),
		intTensor(xla.Int32, []int64{2, 16}, func(i int) int64 { return mem[i/16][i%16] })}}
	got, err := runCall(vc.kernel, vc.spec, vc.args...)
	require.NoError(t, err)
	assert.Equal(t, wantMem, ints(t, got[0]), "interpret: memory")
	assert.Equal(t, wantOld, ints(t, got[1]), "interpret: old values")
	tt := runTritonEval(t, vc)
	assert.Equal(t, wantMem, ints(t, tt[0]), "triton: memory")
	assert.Equal(t, wantOld, ints(t, tt[1]), "triton: old values")
}

// TestAtomicCasEmptyArray: a cas on an array of no elements (every lane
// masked off, as it must be there) swaps nothing and reads zeros on every
// backend; the Triton kernel has no tt.atomic_cas, whose masked lanes
// would otherwise point at an element that does not exist (found in
// review).
func TestAtomicCasEmptyArray(t *testing.T) {
	c := tritonCase{name: "cas_empty", kernel: func(k *Kernel, r []*Ref) {
		r[2].Store(AtomicCas(r[1], []any{k.Arange(4)}, 0, 1, k.Zeros(xla.Bool, 4)))
	}, spec: CallSpec{Name: "cas_empty", Grid: []int64{1}, OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 0), xla.MakeShape(xla.Int32, 4)},
		InputOutputAliases: map[int]int{0: 0}},
		args: []*interpreter.Tensor{intTensor(xla.Int32, []int64{0}, nil)}}
	out, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 0, 0}, ints(t, out[1]), "interpret")
	got, err := EvalTriton(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 0, 0}, ints(t, got[1]), "triton")
	k, err := lowerTritonCase(t, c)
	require.NoError(t, err)
	assert.NotContains(t, k.IR, "tt.atomic_cas")
}
