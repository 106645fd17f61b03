package pallas

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// Cond (lax.cond with results): a data-dependent choice between two
// branches that store and return values, a Cond nested in a branch, one
// in a loop threading the carry, and one with stores only. condCases are
// part of tritonCases (interpret mode against the TTIR evaluator in both
// program orders, mlir-opt, the IR reference evaluator, a real GPU with
// HALO_PLUGIN); the tests here check them against Go.

// condSigns are the signs of the four row blocks of condInput: the
// branch a block's sum picks.
var condSigns = []float64{1, -1, 1, -1}

// condInput is (16, 8) f32: row block b (4 rows) holds condSigns[b]
// times values in [1/8, 5/8], so its sum has that sign.
func condInput() *interpreter.Tensor {
	return fTensor([]int64{16, 8}, func(i int) float64 { return condSigns[i/32] * float64(1+i%5) / 8 })
}

// condBranchesKernel stores, per (4, 8) row block v of x: out 0 the
// Cond's value (v*3 in program 0 and v*2 in the other programs whose
// block sums are positive, through a nested Cond; v-1 elsewhere), out 1
// what the branch stored (max(v, 0) or -v), out 2 the branch's i32
// scalar (1 or -1) broadcast.
func condBranchesKernel(k *Kernel, r []*Ref) {
	v := r[0].Load()
	res := k.Cond(v.Sum().Gt(0), func() []*Value {
		r[2].Store(v.Max(0))
		m := k.Cond(k.ProgramID(0).Eq(0),
			func() []*Value { return []*Value{v.Mul(3)} },
			func() []*Value { return []*Value{v.Mul(2)} })
		return []*Value{m[0], k.Const(xla.Int32, 1)}
	}, func() []*Value {
		r[2].Store(v.Neg())
		return []*Value{v.Sub(1), k.Const(xla.Int32, -1)}
	})
	r[1].Store(res[0])
	r[3].Store(res[1].BroadcastTo(4, 8))
}

// condLoopKernel stores, per row v of x (a (1, 8) block): out 0 the
// carry of 5 iterations that add v at even i and multiply by v at odd
// i; out 1 exp(v) in program 1 and v/2 in the others (a Cond with stores
// only, in both branches).
func condLoopKernel(k *Kernel, r []*Ref) {
	v := r[0].Load()
	acc := k.ForLoop(0, 5, []*Value{k.Zeros(xla.Float32, 1, 8)}, func(i *Value, c []*Value) []*Value {
		return k.Cond(i.Rem(2).Eq(0),
			func() []*Value { return []*Value{c[0].Add(v)} },
			func() []*Value { return []*Value{c[0].Mul(v)} })
	})
	r[1].Store(acc[0])
	k.Cond(k.ProgramID(0).Eq(1),
		func() []*Value { r[2].Store(v.Exp()); return nil },
		func() []*Value { r[2].Store(v.Mul(0.5)); return nil })
}

func condCases() []tritonCase {
	rows := func(bm int64) *BlockSpec {
		return &BlockSpec{BlockShape: []int64{bm, 8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}
	}
	f32 := func() xla.Shape { return xla.MakeShape(xla.Float32, 16, 8) }
	return []tritonCase{
		{
			name:   "cond_branches",
			kernel: condBranchesKernel,
			spec: CallSpec{
				Name:      "cond_branches",
				OutShapes: []xla.Shape{f32(), f32(), xla.MakeShape(xla.Int32, 16, 8)},
				Grid:      []int64{4},
				InSpecs:   []*BlockSpec{rows(4)},
				OutSpecs:  []*BlockSpec{rows(4), rows(4), rows(4)},
			},
			args: []*interpreter.Tensor{condInput()},
		},
		{
			name:   "cond_loop",
			kernel: condLoopKernel,
			spec: CallSpec{
				Name:      "cond_loop",
				OutShapes: []xla.Shape{f32(), f32()},
				Grid:      []int64{16},
				InSpecs:   []*BlockSpec{rows(1)},
				OutSpecs:  []*BlockSpec{rows(1), rows(1)},
			},
			args: []*interpreter.Tensor{condInput()},
		},
	}
}

// condWant is what condBranchesKernel and condLoopKernel store, computed
// in Go from condInput.
func condWant() (branches [3][]float64, loop [2][]float64) {
	x := condInput().Data.([]float32)
	for i, xf := range x {
		v := float64(xf)
		b := i / 32
		if condSigns[b] > 0 {
			f := 2.0
			if b == 0 {
				f = 3
			}
			branches[0] = append(branches[0], v*f)
			branches[1] = append(branches[1], math.Max(v, 0))
			branches[2] = append(branches[2], 1)
		} else {
			branches[0] = append(branches[0], v-1)
			branches[1] = append(branches[1], -v)
			branches[2] = append(branches[2], -1)
		}
		acc := 0.0
		for it := 0; it < 5; it++ {
			if it%2 == 0 {
				acc += v
			} else {
				acc *= v
			}
		}
		loop[0] = append(loop[0], acc)
		if i/8 == 1 {
			loop[1] = append(loop[1], math.Exp(v))
		} else {
			loop[1] = append(loop[1], v/2)
		}
	}
	return branches, loop
}

func TestCondMatchesGo(t *testing.T) {
	branches, loop := condWant()
	want := map[string][][]float64{"cond_branches": branches[:], "cond_loop": loop[:]}
	for _, c := range condCases() {
		t.Run(c.name, func(t *testing.T) {
			got, err := runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
			_, tevOut, tevBack := tevOrders(t, c)
			require.Len(t, got, len(want[c.name]))
			for i, w := range want[c.name] {
				for name, outs := range map[string][]*interpreter.Tensor{"interpret": got, "TTIR": tevOut, "TTIR reversed": tevBack} {
					fs, is := scanElems(outs[i])
					if fs == nil {
						for _, n := range is {
							fs = append(fs, float64(n))
						}
					}
					require.Len(t, fs, len(w))
					for j := range w {
						require.InDelta(t, w[j], fs[j], 1e-6*math.Max(1, math.Abs(w[j])), "%s: output %d element %d", name, i, j)
					}
				}
			}
		})
	}
}

// The TTIR of a Cond is one scf.if with results and an else region; a
// Cond with stores only has no results; a When keeps its else-less form.
func TestCondTTIR(t *testing.T) {
	for _, c := range condCases() {
		p, err := Trace(c.kernel, c.spec, argTypes(c.args))
		require.NoError(t, err)
		tk, err := LowerTriton(p, CompilerParams{})
		require.NoError(t, err)
		text := tk.IR
		switch c.name {
		case "cond_branches":
			assert.Contains(t, text, "= scf.if ")
			assert.Contains(t, text, "-> (tensor<4x8xf32>, i32) {")
			assert.Contains(t, text, "-> (tensor<4x8xf32>) {") // the nested one
			assert.Equal(t, 2, strings.Count(text, "} else {"), text)
		case "cond_loop":
			assert.Contains(t, text, "-> (tensor<1x8xf32>) {")
			assert.Equal(t, 2, strings.Count(text, "} else {"), text)
		}
	}
}

// A Go bool traces only the branch it picks: the other may even be one
// that would fail to trace.
func TestCondGoBool(t *testing.T) {
	spec := CallSpec{Name: "cond_const", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{1}}
	for _, b := range []bool{true, false} {
		kernel := func(k *Kernel, r []*Ref) {
			v := r[0].Load()
			bad := func() []*Value { return []*Value{v.Reshape(3)} } // 8 elements are no 3
			good := func() []*Value { return []*Value{v.Add(1)} }
			then, els := good, bad
			if !b {
				then, els = bad, good
			}
			r[1].Store(k.Cond(b, then, els)[0])
		}
		got, err := runCall(kernel, spec, fTensor([]int64{8}, func(i int) float64 { return float64(i) }))
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8}, got[0].Data)
	}
}

// A condition the lowering knows (a constant Value, or a comparison of
// constants) runs its branch inline, results and stores included.
func TestCondKnownCondition(t *testing.T) {
	spec := CallSpec{Name: "cond_known", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8)}, Grid: []int64{1}}
	x := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	for _, b := range []bool{true, false} {
		kernel := func(k *Kernel, r []*Ref) {
			v := r[0].Load()
			c := k.Const(xla.Int32, 3).Lt(4)
			if !b {
				c = c.Not()
			}
			res := k.Cond(c, func() []*Value {
				r[2].Store(v.Mul(2))
				return []*Value{v.Add(1)}
			}, func() []*Value {
				r[2].Store(v.Mul(3))
				return []*Value{v.Sub(1)}
			})
			r[1].Store(res[0])
		}
		got, err := runCall(kernel, spec, x)
		require.NoError(t, err)
		add, mul := float32(1), float32(2)
		if !b {
			add, mul = -1, 3
		}
		for i := range 8 {
			assert.Equal(t, float32(i)+add, got[0].Data.([]float32)[i])
			assert.Equal(t, float32(i)*mul, got[1].Data.([]float32)[i])
		}
		m := tritonCase{kernel: kernel, spec: spec, args: []*interpreter.Tensor{x}}.module(t, Interpret)
		assert.NotContains(t, m.String(), "stablehlo.if", "a known condition needs no if")
	}
}

func TestCondMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2}}
	one := func(v *Value) func() []*Value { return func() []*Value { return []*Value{v} } }
	cases := []struct {
		name   string
		kernel KernelFunc
		want   []string
	}{
		{"nil branch", func(k *Kernel, r []*Ref) { k.Cond(k.ProgramID(0).Eq(0), nil, func() []*Value { return nil }) },
			[]string{"cond at cond_test.go:", "a branch is nil"}},
		{"vector condition", func(k *Kernel, r []*Ref) {
			k.Cond(k.Zeros(xla.Bool, 2), func() []*Value { return nil }, func() []*Value { return nil })
		}, []string{"cond at cond_test.go:", "condition must be a bool scalar, got i1[2]"}},
		{"counts differ", func(k *Kernel, r []*Ref) {
			v := r[0].Load()
			k.Cond(k.ProgramID(0).Eq(0), one(v), func() []*Value { return nil })
		}, []string{"cond at cond_test.go:", "the branches return 1 and 0 values"}},
		{"types differ", func(k *Kernel, r []*Ref) {
			v := r[0].Load()
			k.Cond(k.ProgramID(0).Eq(0), one(v), one(v.Astype(xla.Int32)))
		}, []string{"cond at cond_test.go:", "value 0 is f32[8] in the true branch and i32[8] in the false one"}},
		{"shapes differ", func(k *Kernel, r []*Ref) {
			v := r[0].Load()
			k.Cond(k.ProgramID(0).Eq(0), one(v), one(v.Reshape(2, 4)))
		}, []string{"value 0 is f32[8] in the true branch and f32[2,4] in the false one"}},
		{"nil value", func(k *Kernel, r []*Ref) {
			k.Cond(k.ProgramID(0).Eq(0), one(nil), one(nil))
		}, []string{"cond at cond_test.go:", "operand 0 is nil"}},
		{"a branch's value used outside", func(k *Kernel, r []*Ref) {
			var inner *Value
			k.Cond(k.ProgramID(0).Eq(0), func() []*Value { inner = r[0].Load().Exp(); return nil }, func() []*Value { return nil })
			r[1].Store(inner)
		}, []string{"closed region"}},
		{"the other branch's value", func(k *Kernel, r []*Ref) {
			var inner *Value
			k.Cond(k.ProgramID(0).Eq(0),
				func() []*Value { inner = r[0].Load().Exp(); return []*Value{inner} },
				func() []*Value { return []*Value{inner} })
		}, []string{"cond at cond_test.go:", "closed region"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := noPanic(t, c.name, func() error {
				_, err := runCall(c.kernel, spec, fTensor([]int64{8}, func(i int) float64 { return float64(i) }))
				return err
			})
			requireMisuse(t, err, "", c.want...)
		})
	}
}

// The race check reads a store in a Cond's false branch as running where
// the condition does not hold: one program storing a shared block there
// passes, all programs but one race.
func TestCondRaceCheck(t *testing.T) {
	spec := CallSpec{
		Name:      "cond_race",
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
		Grid:      []int64{4},
		InSpecs:   []*BlockSpec{{BlockShape: []int64{8}}},
		OutSpecs:  []*BlockSpec{{BlockShape: []int64{8}}}, // every program sees the one block
	}
	kernel := func(cond func(pid *Value) *Value, storeInThen bool) KernelFunc {
		return func(k *Kernel, r []*Ref) {
			store := func() []*Value { r[1].Store(r[0].Load().Add(1)); return nil }
			skip := func() []*Value { return nil }
			if storeInThen {
				k.Cond(cond(k.ProgramID(0)), store, skip)
			} else {
				k.Cond(cond(k.ProgramID(0)), skip, store)
			}
		}
	}
	x := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	for _, c := range []struct {
		name   string
		kernel KernelFunc
		race   bool
	}{
		{"else of pid != 0", kernel(func(p *Value) *Value { return p.Ne(0) }, false), false},
		{"then of pid == 0", kernel(func(p *Value) *Value { return p.Eq(0) }, true), false},
		{"else of pid == 0", kernel(func(p *Value) *Value { return p.Eq(0) }, false), true},
		{"then of pid != 0", kernel(func(p *Value) *Value { return p.Ne(0) }, true), true},
		{"else of pid < 3", kernel(func(p *Value) *Value { return p.Lt(3) }, false), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Trace(c.kernel, spec, argTypes([]*interpreter.Tensor{x}))
			require.NoError(t, err)
			err = checkParallelPrograms(p)
			if c.race {
				requireMisuse(t, err, "cond_race", "race")
			} else {
				require.NoError(t, err)
				got, err := runCall(c.kernel, spec, x)
				require.NoError(t, err)
				assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 7, 8}, got[0].Data)
			}
		})
	}
}

// The race check computes a Cond's integer results as the select of its
// condition between the branches' values: index arrays and masks through
// a Cond are walked element by element like any other arithmetic.
func TestCondResultsComputed(t *testing.T) {
	spec := func(name string) CallSpec {
		return CallSpec{Name: name, Grid: []int64{2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}}
	}
	// Program 0 stores [0, 4), program 1 [2, 6) (offset 2) or [4, 8)
	// (offset 4), the Cond picking the window.
	windows := func(offset int, scalar bool) KernelFunc {
		return func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			var idx *Value
			if scalar {
				start := k.Cond(p.Eq(0), func() []*Value { return []*Value{k.Const(xla.Int32, 0)} },
					func() []*Value { return []*Value{p.Mul(offset)} })[0]
				idx = k.Arange(4).Add(start)
			} else {
				idx = k.Cond(p.Eq(0), func() []*Value { return []*Value{k.Arange(4)} },
					func() []*Value { return []*Value{k.Arange(4).Add(offset)} })[0]
			}
			Store(r[0], []any{idx}, p.Astype(xla.Float32).Add(1).BroadcastTo(4), nil)
		}
	}
	// Program 0 picks 0, the others 1: programs 1 and 2 meet at element
	// 1, whether the Cond's value is a mask's or a loop's bounds.
	pick := func(k *Kernel) *Value {
		return k.Cond(k.ProgramID(0).Eq(0),
			func() []*Value { return []*Value{k.Const(xla.Int32, 0)} },
			func() []*Value { return []*Value{k.Const(xla.Int32, 1)} })[0]
	}
	for name, kernel := range map[string]KernelFunc{
		"mask": func(k *Kernel, r []*Ref) {
			Store(r[0], nil, k.ProgramID(0).Astype(xla.Float32).BroadcastTo(8), k.Arange(8).Eq(pick(k)))
		},
		"loop bounds": func(k *Kernel, r []*Ref) {
			at := pick(k)
			k.ForLoop(at, at.Add(1), nil, func(i *Value, _ []*Value) []*Value {
				r[0].Store(k.ProgramID(0).Astype(xla.Float32).Reshape(1), DS(i, 1))
				return nil
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := spec("cond_pick")
			s.Grid = []int64{4}
			assertRefusedRace(t, tritonCase{name: "cond_pick", kernel: kernel, spec: s}, "grid points (1) and (2) both reach its element (1)")
		})
	}
	for _, scalar := range []bool{false, true} {
		name := map[bool]string{false: "array", true: "scalar"}[scalar]
		t.Run(name+" overlapping", func(t *testing.T) {
			assertRefusedRace(t, tritonCase{name: "cond_windows", kernel: windows(2, scalar), spec: spec("cond_windows")}, "both reach its element (2)")
		})
		t.Run(name+" apart", func(t *testing.T) {
			c := tritonCase{name: "cond_windows", kernel: windows(4, scalar), spec: spec("cond_windows")}
			assertTritonMatchesInterpret(t, c)
			got, err := runCall(c.kernel, c.spec)
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 1, 1, 1, 2, 2, 2, 2}, got[0].Data)
		})
	}
}
