package pallas

import (
	"context"
	"slices"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
)

// loopBarriers counts the gpu.barrier ops of r outside loop bodies and
// inside them.
func loopBarriers(r *ttRegion, inLoop bool) (outside, inside int) {
	for _, op := range r.ops {
		if op.name == "gpu.barrier" {
			if inLoop {
				inside++
			} else {
				outside++
			}
		}
		loop := inLoop || op.name == "scf.for" || op.name == "scf.while"
		for _, sub := range op.regions {
			o, i := loopBarriers(sub, loop)
			outside, inside = outside+o, inside+i
		}
	}
	return outside, inside
}

// stripBarriers removes every gpu.barrier of r.
func stripBarriers(r *ttRegion) {
	r.ops = slices.DeleteFunc(r.ops, func(op *ttOp) bool { return op.name == "gpu.barrier" })
	for _, op := range r.ops {
		for _, sub := range op.regions {
			stripBarriers(sub)
		}
	}
}

// evalWithoutBarriers lowers c, drops its barriers and runs it on the
// TTIR evaluator, returning the evaluator's error.
func evalWithoutBarriers(t *testing.T, c tritonCase) error {
	t.Helper()
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	f, grid, err := lowerTritonFunc(p)
	require.NoError(t, err)
	stripBarriers(f.body)
	var bufs []*tevBuf
	for i, a := range c.args {
		e, _ := ttMemElem(p.Refs[i].DType)
		bufs = append(bufs, toBuf(t, a, e))
	}
	for _, s := range c.spec.OutShapes {
		e, _ := ttMemElem(s.DType)
		bufs = append(bufs, toBuf(t, interpreter.NewTensor(s), e))
	}
	return tevRunOrder(context.Background(), f, grid, bufs, false, nil)
}

// lowerCaseFunc traces test case c and lowers it to its TTIR function.
func lowerCaseFunc(t *testing.T, c tritonCase) *ttFunc {
	t.Helper()
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	f, _, err := lowerTritonFunc(p)
	require.NoError(t, err)
	return f
}

func caseNamed(t *testing.T, name string) tritonCase {
	for _, c := range tritonCases() {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no Triton test case %q", name)
	return tritonCase{}
}

// storeLoop is a kernel that stores x's window at start(i) to the whole
// output in each of three iterations, after a store of zeros before the
// loop.
func storeLoop(start func(i *Value) *Value, size int64) tritonCase {
	return tritonCase{
		name: "store_loop",
		kernel: func(k *Kernel, refs []*Ref) {
			x, o := refs[0], refs[1]
			o.Store(0.0)
			k.ForLoop(0, 3, nil, func(i *Value, _ []*Value) []*Value {
				o.Store(x.Load(DS(start(i), size)), DS(start(i), size))
				return nil
			})
		},
		spec: CallSpec{Name: "store_loop", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 32)}},
		args: []*interpreter.Tensor{fTensor([]int64{32}, func(i int) float64 { return float64(i) + 1 })},
	}
}

// TestTritonBarrierPlacement checks where the Triton lowering waits at
// gpu.barrier: not inside a loop whose only accesses of a buffer are one
// store of aligned blocks (the same op stores each element from the same
// thread), once before a loop instead of in every iteration for what came
// before it, and inside loops whose stores may overlap at other
// positions. The evaluator, which tracks which store op and position
// wrote each element, agrees: dropping the barriers that remain makes it
// report the race.
func TestTritonBarrierPlacement(t *testing.T) {
	lower := func(c tritonCase) *ttFunc { return lowerCaseFunc(t, c) }
	check := func(t *testing.T, c tritonCase) {
		t.Helper()
		want, err := runCall(c.kernel, c.spec, c.args...)
		require.NoError(t, err)
		got := runTritonEval(t, c)
		for i := range want {
			assertClose(t, want[i], got[i])
		}
	}
	t.Run("tiles_loop", func(t *testing.T) {
		c := caseNamed(t, "tiles_loop")
		out, in := loopBarriers(lower(c).body, false)
		require.Equal(t, [2]int{0, 0}, [2]int{out, in}, "barriers outside and inside loops")
		check(t, c)
	})
	t.Run("dsd_tiles", func(t *testing.T) {
		// Stores of zeros (for rows without blocks) before the loop: a
		// barrier before it (not needed here: those rows run no
		// iteration; the lowering cannot tell), none in it.
		c := caseNamed(t, "dsd_tiles")
		_, in := loopBarriers(lower(c).body, false)
		require.Zero(t, in, "barriers inside the loop")
		check(t, c)
	})
	t.Run("aligned", func(t *testing.T) {
		c := storeLoop(func(i *Value) *Value { return i.Mul(8) }, 8)
		out, in := loopBarriers(lower(c).body, false)
		require.Equal(t, [2]int{1, 0}, [2]int{out, in}, "barriers outside and inside loops")
		check(t, c)
		// The barrier before the loop orders the loop's stores after the
		// whole-array store (another op, another layout).
		require.ErrorContains(t, evalWithoutBarriers(t, c), "another thread stored")
	})
	for _, u := range []struct {
		name  string
		start func(i *Value) *Value
	}{
		{"overlapping", func(i *Value) *Value { return i }},
		{"half_aligned", func(i *Value) *Value { return i.Mul(4) }}, // a multiple of 4, blocks of 8
		{"offset", func(i *Value) *Value { return i.Mul(8).Add(2) }},
	} {
		t.Run(u.name, func(t *testing.T) {
			c := storeLoop(u.start, 8)
			_, in := loopBarriers(lower(c).body, false)
			require.Equal(t, 1, in, "barriers inside the loop")
			check(t, c)
			err := evalWithoutBarriers(t, c)
			require.ErrorContains(t, err, "another thread stored")
		})
	}
	t.Run("two_ops_same_block", func(t *testing.T) {
		// Equal aligned blocks from two store ops: their layouts may
		// differ, so the second waits.
		c := tritonCase{
			name: "two_stores",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o := refs[0], refs[1]
				o.Store(x.Load(DS(0, 8)).Mul(2), DS(0, 8))
				o.Store(x.Load(DS(8, 8)), DS(0, 8))
			},
			spec: CallSpec{Name: "two_stores", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}},
			args: []*interpreter.Tensor{fTensor([]int64{16}, func(i int) float64 { return float64(i) })},
		}
		out, _ := loopBarriers(lower(c).body, false)
		require.Equal(t, 1, out)
		check(t, c)
		require.ErrorContains(t, evalWithoutBarriers(t, c), "another thread stored")
	})
}
