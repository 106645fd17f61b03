package pallas

import (
	"fmt"
	"github.com/halo-ml/halo/interpreter"
	"math/rand"
	"testing"

	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
)

// TestTritonRaceCheckSameValueStores: one store per kernel on a 2-D grid
// (whole output, or a row picked by one grid axis), its values and start
// depending on some program ids, Vmap'ed or not: the race check refuses
// it exactly when two programs write one element different values (an
// oracle computes that from the kernel's description), and no kernel it
// takes gives different results in the two program orders. Programs that
// agree on the axes a store's values and position depend on store the
// same (a Vmap'ed store of the batch's block, say).
func TestTritonRaceCheckSameValueStores(t *testing.T) {
	refused, accepted := 0, 0
	for seed := int64(0); seed < 600; seed++ {
		r := rand.New(rand.NewSource(seed))
		g0, g1 := int64(1+r.Intn(3)), int64(1+r.Intn(3))
		mapAxis := r.Intn(3) // 0: whole array, 1: block row by axis 0, 2: by axis 1
		valKind := r.Intn(4) // 0 const, 1 pid0, 2 pid1, 3 pid0+pid1
		posKind := r.Intn(4) // 0 static, 1 pid0, 2 pid1, 3 (pid0+pid1)%2
		vmapped := r.Intn(2) == 1
		rows := int64(3)
		var out *BlockSpec
		switch mapAxis {
		case 1:
			rows = g0
			out = &BlockSpec{BlockShape: []int64{Squeezed, 4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }}
		case 2:
			rows = g1
			out = &BlockSpec{BlockShape: []int64{Squeezed, 4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[1], 0} }}
		}
		kern := func(k *Kernel, refs []*Ref) {
			p0, p1 := k.ProgramID(0), k.ProgramID(1)
			var v *Value
			switch valKind {
			case 0:
				v = k.Const(xla.Float32, 5)
			case 1:
				v = p0.Astype(xla.Float32)
			case 2:
				v = p1.Astype(xla.Float32)
			default:
				v = p0.Add(p1.Mul(7)).Astype(xla.Float32)
			}
			v = v.Add(k.Arange(2).Astype(xla.Float32).Mul(0.5))
			var pos *Value
			switch posKind {
			case 0:
				pos = k.Const(xla.Int32, 1)
			case 1:
				pos = p0.Rem(3)
			case 2:
				pos = p1.Rem(3)
			default:
				pos = p0.Add(p1).Rem(2)
			}
			o := refs[len(refs)-1]
			if out == nil {
				o.Store(v, 0, DS(pos, 2))
			} else {
				o.Store(v, DS(pos, 2))
			}
		}
		spec := CallSpec{Name: "same", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, rows, 4)}, Grid: []int64{g0, g1}}
		if out != nil {
			spec.OutSpecs = []*BlockSpec{out}
		}
		c := tritonCase{name: "same", kernel: kern, spec: spec}
		if vmapped {
			vk, vs, err := Vmap(kern, spec, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			c = tritonCase{name: "same", kernel: vk, spec: vs}
		}
		checkErr, outs, back := tevOrders(t, c)
		differ := !sameBits(outs[0], back[0])
		desc := fmt.Sprintf("g=%dx%d map=%d val=%d pos=%d vmap=%v", g0, g1, mapAxis, valKind, posKind, vmapped)
		// The oracle: two programs writing one element different values.
		race := false
		written := map[[2]int64]float64{}
		for p0 := int64(0); p0 < g0; p0++ {
			for p1 := int64(0); p1 < g1; p1++ {
				base := []float64{5, float64(p0), float64(p1), float64(p0 + 7*p1)}[valKind]
				pos := []int64{1, p0 % 3, p1 % 3, (p0 + p1) % 2}[posKind]
				row := []int64{0, p0, p1}[mapAxis]
				for i := int64(0); i < 2; i++ {
					key := [2]int64{row, pos + i}
					v := base + 0.5*float64(i)
					if w, ok := written[key]; ok && w != v {
						race = true
					}
					written[key] = v
				}
			}
		}
		if (checkErr != nil) != race || checkErr == nil && differ {
			t.Fatalf("seed %d (%s): check %v, differ %v, race %v\n%v\n%v", seed, desc, checkErr, differ, race, outs[0].Data, back[0].Data)
		}
		if checkErr != nil {
			refused++
		} else {
			accepted++
		}
	}
	require.Greater(t, refused, 100)
	require.Greater(t, accepted, 100)
	t.Logf("refused %d accepted %d", refused, accepted)
}

// TestTritonRaceCheckThirdReview: races a review found the check took,
// each refused now and shown on the evaluator: a same-value store under
// an index map that reads data (programs that differ on the axes the map
// uses may still share a block), an index map computed through floats
// (floor(g/2)), a non-commuting update under When(pid0 == pid1) (a pin
// on a value of another unpinned axis leaves it to many programs), and
// one at a position carried through a While.
func TestTritonRaceCheckThirdReview(t *testing.T) {
	half := func(g []*Value, _ []*Ref) []any {
		return []any{g[0].Astype(xla.Float32).Mul(0.5).Floor().Astype(xla.Int32)}
	}
	cases := map[string]struct {
		c    tritonCase
		want string
	}{
		"data map": {tritonCase{name: "data_map", kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(k.ProgramID(0).Astype(xla.Float32).BroadcastTo(4))
		}, spec: CallSpec{Name: "data_map", Grid: []int64{2, 2}, NumScalarPrefetch: 1,
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, p []*Ref) []any {
				return []any{p[0].Load(DS(g[0], 1)).Reshape()}
			}}}}, args: []*interpreter.Tensor{iTensor([]int64{2}, 0, 0)}}, "race"},
		"float map": {tritonCase{name: "float_map", kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(r[1].Load().Mul(2).Add(k.ProgramID(0).Astype(xla.Float32).Add(1).BroadcastTo(2)))
		}, spec: CallSpec{Name: "float_map", Grid: []int64{4}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
			InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: half}}, OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: half}},
			InputOutputAliases: map[int]int{0: 0}}, args: []*interpreter.Tensor{fTensor([]int64{4}, func(int) float64 { return 0 })}},
			"computes block indices through floats"},
		"mutual pin": {tritonCase{name: "mutual_pin", kernel: func(k *Kernel, r []*Ref) {
			p0, p1 := k.ProgramID(0), k.ProgramID(1)
			k.When(p0.Eq(p1), func() {
				AtomicXchg(r[2], []any{r[0].Load(DS(p1, 1))}, p0.Add(1).BroadcastTo(1), nil)
			})
		}, spec: CallSpec{Name: "mutual_pin", Grid: []int64{2, 2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)},
			InputOutputAliases: map[int]int{1: 0}}, args: []*interpreter.Tensor{iTensor([]int64{2}, 0, 0), iTensor([]int64{4}, 0, 0, 0, 0)}},
			"is at a position computed from memory"},
		"carried position": {tritonCase{name: "carried", kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			at := k.While([]*Value{p}, func(c []*Value) *Value { return c[0].Ge(2) },
				func(c []*Value) []*Value { return []*Value{c[0].Sub(2)} })[0]
			old := AtomicAdd(r[1], []any{DS(at, 1)}, p.Add(1).BroadcastTo(1), nil)
			r[2].Store(old, DS(p, 1))
		}, spec: CallSpec{Name: "carried", Grid: []int64{4},
			OutShapes:          []xla.Shape{xla.MakeShape(xla.Int32, 2), xla.MakeShape(xla.Int32, 4)},
			InputOutputAliases: map[int]int{0: 0}}, args: []*interpreter.Tensor{iTensor([]int64{2}, 0, 0)}},
			"a loop's carried values"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkErr, outs, back := tevOrders(t, tc.c)
			require.ErrorContains(t, checkErr, tc.want)
			differ := false
			for i := range outs {
				differ = differ || !sameBits(outs[i], back[i])
			}
			require.True(t, differ, "the evaluator should show the race")
		})
	}
}

// TestTritonRaceCheckFourthReview: a fourth review's cases. Refused now:
// non-commuting updates at positions or masks the check cannot compute
// (through floats, through a reduction) in a shared block, and clashes
// past the first corner of a grid over 65,536 programs (the opposite
// corner is visited too). Taken: a same-value store of a value a loop
// computed (a softmax's logsumexp stored by every column program).
func TestTritonRaceCheckFourthReview(t *testing.T) {
	zeros := func(n int64) *interpreter.Tensor { return iTensor([]int64{n}, make([]int32, n)...) }
	update := func(name string, grid int64, f KernelFunc) tritonCase {
		return tritonCase{name: name, kernel: f, spec: CallSpec{Name: name, Grid: []int64{grid},
			OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}, InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{zeros(4)}}
	}
	refused := map[string]tritonCase{
		"float position": update("float_pos", 4, func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			at := p.Astype(xla.Float32).Mul(0.5).Floor().Astype(xla.Int32)
			AtomicXchg(r[1], []any{DS(at, 1)}, p.Add(1).BroadcastTo(1), nil)
		}),
		"float mask": update("float_mask", 3, func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			m := k.Arange(2).Astype(xla.Float32).Lt(p.Astype(xla.Float32).Mul(0.7).BroadcastTo(2))
			AtomicXchg(r[1], []any{Slice(0, 2)}, p.Add(1).BroadcastTo(2), m)
		}),
		"reduced position": update("reduced_pos", 4, func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			at := k.Arange(1 << 15).Lt(p).Astype(xla.Int32).Sum().Div(2) // past the bound for computing a scalar
			AtomicXchg(r[1], []any{DS(at, 1)}, p.Add(1).BroadcastTo(1), nil)
		}),
	}
	// A small reduction's position is computed: programs 0 and 1 both
	// reach element 0.
	small := update("reduced_pos", 4, func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		at := k.Arange(4).Lt(p).Astype(xla.Int32).Sum().Div(2)
		AtomicXchg(r[1], []any{DS(at, 1)}, p.Add(1).BroadcastTo(1), nil)
	})
	require.ErrorContains(t, lowerTritonErr(t, small), "grid points (0) and (1) both reach its element (0)")
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			checkErr, outs, back := tevOrders(t, c)
			require.ErrorContains(t, checkErr, "in a way the check cannot follow")
			require.False(t, sameBits(outs[0], back[0]), "the evaluator should show the race")
		})
	}

	const n, k = 70000, 40000
	bigMap := tritonCase{name: "big_map", kernel: func(kk *Kernel, r []*Ref) { r[0].Store(kk.ProgramID(0).BroadcastTo(1)) },
		spec: CallSpec{Name: "big_map", Grid: []int64{n}, OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, k+1)},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{1}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0].Min(k)} }}}}}
	require.ErrorContains(t, lowerTritonErr(t, bigMap), "to the same block (40000)")
	bigPos := tritonCase{name: "big_pos", kernel: func(kk *Kernel, r []*Ref) {
		p := kk.ProgramID(0)
		r[0].Store(p.BroadcastTo(1), DS(p.Min(n-10), 1))
	}, spec: CallSpec{Name: "big_pos", Grid: []int64{n}, OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, n-9)}}}
	require.ErrorContains(t, lowerTritonErr(t, bigPos), "both reach its element (69990)")

	// softmax with its logsumexp: every program along the column axis
	// stores the row's value, computed by a loop over the row.
	const R, C, bc = 4, 16, 4
	x := fTensor([]int64{R, C}, func(i int) float64 { return float64((i*7)%13) / 4 })
	lse := tritonCase{name: "softmax_lse", kernel: func(k *Kernel, r []*Ref) {
		xr, y, lse := r[0], r[1], r[2]
		j := k.ProgramID(1)
		out := k.ForLoop(0, C/bc, []*Value{k.Const(xla.Float32, -1e30), k.Const(xla.Float32, 0)}, func(i *Value, c []*Value) []*Value {
			blk := xr.Load(DS(i.Mul(bc), bc))
			mn := c[0].Max(blk.ReduceMax())
			return []*Value{mn, c[1].Mul(c[0].Sub(mn).Exp()).Add(blk.Sub(mn.BroadcastTo(bc)).Exp().Sum())}
		})
		m, s := out[0], out[1]
		y.Store(xr.Load(DS(j.Mul(bc), bc)).Sub(m.BroadcastTo(bc)).Exp().Div(s.BroadcastTo(bc)))
		lse.Store(m.Add(s.Log()).BroadcastTo(1))
	}, spec: CallSpec{Name: "softmax_lse", Grid: []int64{R, C / bc},
		InSpecs:   []*BlockSpec{{BlockShape: []int64{Squeezed, C}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }}},
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, R, C), xla.MakeShape(xla.Float32, R, 1)},
		OutSpecs: []*BlockSpec{
			{BlockShape: []int64{Squeezed, bc}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }},
			{BlockShape: []int64{Squeezed, 1}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }},
		}}, args: []*interpreter.Tensor{x}}
	assertTritonMatchesInterpret(t, lse)
}

// TestTritonRaceCheckRowReadBack: a program that stores its row p of a
// whole-array output block by block in a loop and then reads the row
// back is taken at any grid size (past 13,617 programs the computed check
// ran out of work and the rules by dependence refused the read); a read
// of another program's row is still refused.
func TestTritonRaceCheckRowReadBack(t *testing.T) {
	const n, bn = 32, 8
	mk := func(m int64, row func(p *Value) *Value) tritonCase {
		return tritonCase{name: "reread", kernel: func(k *Kernel, r []*Ref) {
			x, o, s := r[0], r[1], r[2]
			p := k.ProgramID(0)
			k.ForLoop(0, n/bn, nil, func(j *Value, _ []*Value) []*Value {
				o.Store(x.Load(p, DS(j.Mul(bn), bn)), p, DS(j.Mul(bn), bn))
				return nil
			})
			s.Store(o.Load(row(p), n-1), p)
		}, spec: CallSpec{Name: "reread", Grid: []int64{m},
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, m, n), xla.MakeShape(xla.Float32, m)}},
			args: []*interpreter.Tensor{fTensor([]int64{m, n}, func(i int) float64 { return float64(i % 97) })}}
	}
	own := func(p *Value) *Value { return p }
	for _, m := range []int64{8, 13618, 70000} {
		require.NoError(t, lowerTritonErr(t, mk(m, own)), "%d programs", m)
	}
	assertTritonMatchesInterpret(t, mk(8, own))
	next := func(p *Value) *Value { return p.Add(1).Rem(8) }
	checkErr, outs, back := tevOrders(t, mk(8, next))
	require.ErrorContains(t, checkErr, "race")
	require.False(t, sameBits(outs[1], back[1]), "the evaluator should show the race")
}

// TestTritonRaceCheckRowReadBackReview: the read-back rule holds only
// where every store of the output indexes the row with the program id
// itself: a second store at another program's row, or a row that two
// programs share, leaves the read refused.
func TestTritonRaceCheckRowReadBackReview(t *testing.T) {
	mk := func(m int64, row func(p *Value) *Value, col func(p *Value) any) tritonCase {
		return tritonCase{name: "own_row", kernel: func(k *Kernel, r []*Ref) {
			x, o, s := r[0], r[1], r[2]
			p := k.ProgramID(0)
			o.Store(x.Load(p, DS(0, 8)), p, DS(0, 8))
			o.Store(x.Load(p, DS(8, 8)), row(p), DS(col(p), 8))
			s.Store(o.Load(p, DS(8, 8)), p, DS(0, 8))
		}, spec: CallSpec{Name: "own_row", Grid: []int64{m},
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, m+1, 16), xla.MakeShape(xla.Float32, m, 8)}},
			args: []*interpreter.Tensor{fTensor([]int64{m + 1, 16}, func(i int) float64 { return float64(i%97 + 1) })}}
	}
	next := func(p *Value) *Value { return p.Add(1) }
	floatCol := func(p *Value) any { return p.Astype(xla.Float32).Mul(float32(0)).Add(float32(8)).Astype(xla.Int32) }
	checkErr, outs, back := tevOrders(t, mk(8, next, floatCol))
	require.ErrorContains(t, checkErr, "race")
	require.False(t, sameBits(outs[1], back[1]), "the evaluator should show the race")
	swap := func(p *Value) *Value {
		return p.Add(p.Eq(int32(35000)).Astype(xla.Int32)).Sub(p.Eq(int32(35001)).Astype(xla.Int32))
	}
	require.ErrorContains(t, lowerTritonErr(t, mk(70000, swap, func(*Value) any { return int64(8) })), "race")

	const m, a = 70000, 35000
	shared := tritonCase{name: "shared_row", kernel: func(k *Kernel, r []*Ref) {
		x, o, s := r[0], r[1], r[2]
		p := k.ProgramID(0)
		v := p.Sub(p.Eq(int32(a + 1)).Astype(xla.Int32))
		o.Store(k.Full(xla.Float32, 1, 8), v, DS(0, 8))
		o.Store(x.Load(p, DS(8, 8)), p, DS(8, 8))
		s.Store(o.Load(v, DS(8, 8)), p, DS(0, 8))
	}, spec: CallSpec{Name: "shared_row", Grid: []int64{m},
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, m, 16), xla.MakeShape(xla.Float32, m, 8)}},
		args: []*interpreter.Tensor{fTensor([]int64{m, 16}, func(i int) float64 { return float64(i%97 + 1) })}}
	require.ErrorContains(t, lowerTritonErr(t, shared), "race")
}
