package pallas

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
)

// TestTritonRaceCheckExactOnComputedPositions: random kernels whose
// stores and loads land where integer arithmetic on the program ids and
// loop indices puts them (rem, div, Whens on the ids and indices, masks
// that leave a box), on an output that starts as an input of distinct
// values; each program stores values that name it, and copies what each
// load saw, at each step, to its own row of a second output. The race
// check computes every such access for every program, so its verdict must
// be exact: it refuses a kernel exactly when two programs store an
// element, or one loads what another stores, which running the programs in
// row-major and in reverse order on the TTIR evaluator shows as different
// results.
func TestTritonRaceCheckExactOnComputedPositions(t *testing.T) {
	refused, accepted := 0, 0
	for seed := uint64(0); seed < 400; seed++ {
		c, desc := randomStoreKernel(seed)
		checkErr, outs, back := tevOrders(t, c)
		differ := !sameBits(outs[0], back[0]) || !sameBits(outs[1], back[1])
		if (checkErr != nil) != differ {
			t.Fatalf("seed %d (%s): check error %v, results differ between program orders: %v\nrow-major: %v\nreverse:   %v",
				seed, desc, checkErr, differ, outs[0].Data, back[0].Data)
		}
		if checkErr != nil {
			require.ErrorContains(t, checkErr, "race", "seed %d (%s)", seed, desc)
			refused++
		} else {
			accepted++
		}
	}
	// Both verdicts must be exercised for the test to mean anything.
	require.Greater(t, refused, 50)
	require.Greater(t, accepted, 50)
	t.Logf("%d kernels refused, %d accepted", refused, accepted)
}

// randomStoreKernel makes a kernel of one to four accesses (a third of
// them loads) of a whole-array f32 output aliased to its input, at
// positions computed from the program ids (and a loop index), under Whens
// and masks some of the time. desc says what was made.
func randomStoreKernel(seed uint64) (tritonCase, string) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	grid := []int64{2 + r.Int64N(4)}
	if r.IntN(3) == 0 {
		grid = append(grid, 1+r.Int64N(3))
	}
	n := 4 + r.Int64N(9) // output elements
	type store struct {
		size             int64
		coef             [3]int64 // of p0, p1, the loop index
		add, div         int64
		loop             int64 // iterations of a ForLoop around it (0: none)
		when             int   // 0 none, 1 p0 < k, 2 p0 % 2 == 0, 3 i == p0
		whenAt           int64
		wrapBeforeDivide bool
		masks            []maskTerm // and-ed together
		load             bool       // a load, copied into the program's row of the second output
	}
	var stores []store
	var desc []string
	for s, ns := 0, 1+r.IntN(4); s < ns; s++ {
		st := store{size: []int64{1, 2, 4}[r.IntN(3)], add: r.Int64N(4), div: 1 + r.Int64N(2)}
		for m := r.IntN(4) - 1; m > 0; m-- {
			st.masks = append(st.masks, maskTerm{dir: r.IntN(6), coef: r.Int64N(3), add: r.Int64N(3)})
		}
		for j := range st.coef {
			st.coef[j] = r.Int64N(4)
		}
		if r.IntN(2) == 0 {
			st.loop = 1 + r.Int64N(3)
		}
		st.when = r.IntN(4)
		if st.when == 3 && st.loop == 0 {
			st.when = 0
		}
		st.whenAt = r.Int64N(grid[0] + 1)
		st.wrapBeforeDivide = r.IntN(2) == 0
		if st.load = r.IntN(3) == 0; st.load {
			st.when = 0 // the sum leaves no When
		}
		stores = append(stores, st)
		desc = append(desc, fmt.Sprintf("%+v", st))
	}
	kernel := func(k *Kernel, refs []*Ref) {
		o, seen := refs[1], refs[2] // refs[0] is the input o starts as
		p0 := k.ProgramID(0)
		p1 := k.Const(xla.Int32, 0)
		if len(grid) > 1 {
			p1 = k.ProgramID(1)
		}
		// The program's row-major index names it in the values.
		prog := p0
		if len(grid) > 1 {
			prog = p0.Mul(int(grid[1])).Add(p1)
		}
		for s, st := range stores {
			put := func(i *Value) {
				pos := p0.Mul(int(st.coef[0])).Add(p1.Mul(int(st.coef[1]))).Add(i.Mul(int(st.coef[2]))).Add(int(st.add))
				room := int(n - st.size + 1)
				if st.wrapBeforeDivide {
					pos = pos.Rem(room).Div(int(st.div))
				} else {
					pos = pos.Div(int(st.div)).Rem(room)
				}
				var mask *Value
				for _, m := range st.masks {
					term := m.build(k, p0, st.size)
					if mask == nil {
						mask = term
					} else {
						mask = mask.And(term)
					}
				}
				if st.load {
					// Each load's values, at each step, in a slot of their own.
					var v *Value
					if mask == nil {
						v = o.Load(DS(pos, st.size))
					} else {
						v = Load(o, []any{DS(pos, st.size)}, mask, 0.0)
					}
					seen.Store(v.Reshape(1, st.size), DS(prog, 1), DS(i.Add(s*3).Mul(4), st.size))
					return
				}
				v := prog.Mul(64).Add(s * 16).Add(i).Astype(xla.Float32).BroadcastTo(st.size)
				body := func() { o.Store(v, DS(pos, st.size)) }
				if mask != nil {
					body = func() { Store(o, []any{DS(pos, st.size)}, v, mask) }
				}
				switch st.when {
				case 1:
					k.When(p0.Lt(int(st.whenAt)), body)
				case 2:
					k.When(p0.Rem(2).Eq(0), body)
				case 3:
					k.When(i.Eq(p0), body)
				default:
					body()
				}
			}
			if st.loop == 0 {
				put(k.Const(xla.Int32, 0))
				continue
			}
			k.ForLoop(0, int(st.loop), nil, func(i *Value, _ []*Value) []*Value {
				put(i)
				return nil
			})
		}
	}
	c := tritonCase{name: fmt.Sprintf("stores_%d", seed), kernel: kernel,
		spec: CallSpec{Name: fmt.Sprintf("stores_%d", seed), Grid: grid,
			OutShapes:          []xla.Shape{xla.MakeShape(xla.Float32, n), xla.MakeShape(xla.Float32, gridSteps(grid), 64)},
			InputOutputAliases: map[int]int{0: 0}},
		// o starts as these values, so that a load shows which store it saw.
		args: []*interpreter.Tensor{fTensor([]int64{n}, func(i int) float64 { return 1000 + float64(i) })}}
	return c, fmt.Sprintf("grid %v, f32[%d], accesses %s", grid, n, strings.Join(desc, "; "))
}

// maskTerm is iota(size) dir (p0*coef + add) % (size + 1), or for dir 5
// the scalar p0 < add spread over the block.
type maskTerm struct {
	dir       int
	coef, add int64
}

func (m maskTerm) build(k *Kernel, p0 *Value, size int64) *Value {
	if m.dir == 5 {
		return p0.Lt(int(m.add)).BroadcastTo(size)
	}
	c := p0.Mul(int(m.coef)).Add(int(m.add)).Rem(int(size + 1)).BroadcastTo(size)
	io := k.Iota(xla.Int32, 0, size)
	switch m.dir {
	case 0:
		return io.Lt(c)
	case 1:
		return io.Ge(c)
	case 2:
		return io.Eq(c)
	case 3:
		return c.Gt(io)
	}
	return c.Le(io)
}
