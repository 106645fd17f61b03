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
		stride           int64      // > 0: through the index array (iota*stride + pos) % n, not DS(pos, size)
	}
	var stores []store
	var desc []string
	for s, ns := 0, 1+r.IntN(4); s < ns; s++ {
		st := store{size: []int64{1, 2, 4}[r.IntN(3)], add: r.Int64N(4), div: 1 + r.Int64N(2)}
		for m := r.IntN(4) - 1; m > 0; m-- {
			st.masks = append(st.masks, maskTerm{dir: r.IntN(9), coef: r.Int64N(3), add: r.Int64N(3)})
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
		if r.IntN(3) == 0 {
			// A stride prime to n keeps one store's indices distinct
			// (repeats in one store are the kernel's to avoid).
			if st.stride = []int64{1, 3, 5, 7}[r.IntN(4)]; gcd(st.stride, n) != 1 {
				st.stride = 1
			}
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
				var at any = DS(pos, st.size)
				if st.stride > 0 {
					at = k.Arange(st.size).Mul(int(st.stride)).Add(pos.BroadcastTo(st.size)).Rem(int(n))
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
						v = o.Load(at)
					} else {
						v = Load(o, []any{at}, mask, 0.0)
					}
					seen.Store(v.Reshape(1, st.size), DS(prog, 1), DS(i.Add(s*3).Mul(4), st.size))
					return
				}
				v := prog.Mul(64).Add(s * 16).Add(i).Astype(xla.Float32).BroadcastTo(st.size)
				body := func() { o.Store(v, at) }
				if mask != nil {
					body = func() { Store(o, []any{at}, v, mask) }
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

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// maskTerm is iota(size) dir (p0*coef + add) % (size + 1) (dir 0 to 4,
// a box), the scalar p0 < add spread over the block (dir 5), or one that
// leaves no box: (iota + p0*coef + add) % 3 == 0 (dir 6), iota & (p0*coef +
// add) == 0 (dir 7), or a 16-bit iota plus (p0*coef + add) * 10923 (which
// wraps past 32767) below 2 (dir 8).
type maskTerm struct {
	dir       int
	coef, add int64
}

func (m maskTerm) build(k *Kernel, p0 *Value, size int64) *Value {
	io := k.Iota(xla.Int32, 0, size)
	pc := p0.Mul(int(m.coef)).Add(int(m.add))
	switch m.dir {
	case 5:
		return p0.Lt(int(m.add)).BroadcastTo(size)
	case 6:
		return io.Add(pc.BroadcastTo(size)).Rem(k.Full(xla.Int32, 3, size)).Eq(k.Full(xla.Int32, 0, size))
	case 7:
		return io.And(pc.BroadcastTo(size)).Eq(k.Full(xla.Int32, 0, size))
	case 8:
		c := pc.Mul(10923).Astype(xla.Int16).BroadcastTo(size)
		return k.Iota(xla.Int16, 0, size).Add(c).Lt(k.Full(xla.Int16, 2, size))
	}
	c := pc.Rem(int(size + 1)).BroadcastTo(size)
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

// assertRefusedRace: the race check refuses c with an error that says
// want, and running c's programs on the TTIR evaluator in row-major and in
// reverse order shows the race (output 0 differs).
func assertRefusedRace(t *testing.T, c tritonCase, want string) {
	t.Helper()
	checkErr, outs, back := tevOrders(t, c)
	require.ErrorContains(t, checkErr, want)
	require.False(t, sameBits(outs[0], back[0]), "the evaluator should show the race")
}

// lowerTritonErr traces c for the Triton backend (tracing must succeed:
// it is backend-neutral) and returns LowerTriton's error.
func lowerTritonErr(t *testing.T, c tritonCase) error {
	t.Helper()
	_, err := lowerTritonCase(t, c)
	return err
}

// lowerTritonCase is c traced for the Triton backend and lowered.
func lowerTritonCase(t *testing.T, c tritonCase) (*TritonKernel, error) {
	t.Helper()
	spec := c.spec
	spec.Backend = Triton
	p, err := Trace(c.kernel, spec, argTypes(c.args))
	require.NoError(t, err, "tracing is backend-neutral")
	return LowerTriton(p, CompilerParams{})
}

// Kernels a review of the computed check found it judged wrongly (fixed
// since): each refused kernel's TTIR gives different results in the two
// program orders on the evaluator, or reaches outside its array.
func TestTritonRaceCheckReviewCases(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	idv := func(k *Kernel, n int64) *Value { return k.ProgramID(0).Astype(xla.Float32).BroadcastTo(n) }
	c := func(k *Kernel, v int) *Value { return k.Const(xla.Int32, v) } // a dynamic start
	refused := []struct {
		c    tritonCase
		want string
	}{
		{
			// x / 0 is -1 in both lowerings: starts 0, 2, 1, 2.
			c: tritonCase{name: "start_divides_by_zero", kernel: func(k *Kernel, r []*Ref) {
				p := k.ProgramID(0)
				r[0].Store(idv(k, 1), DS(p.Rem(2).Add(1).Add(p.Mul(0).Div(p)), 1))
			}, spec: CallSpec{Name: "start_div0", Grid: []int64{4}, OutShapes: f32(4)}},
			want: "grid points (1) and (3) both reach its element (2)",
		},
		{
			// The same in an index map: blocks 0, 2, 1, 2.
			c: tritonCase{name: "map_divides_by_zero", kernel: func(k *Kernel, r []*Ref) {
				r[0].Store(idv(k, 2))
			}, spec: CallSpec{Name: "map_div0", Grid: []int64{4}, OutShapes: f32(6),
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any {
					return []any{g[0].Rem(2).Add(1).Add(g[0].Mul(0).Div(g[0]))}
				})}}}},
			want: "to the same block (2)",
		},
		{
			// A 16-bit mask whose iota + 32765 wraps: not read as a box
			// (it was read as [0, 2)) but computed element by element.
			c: tritonCase{name: "mask_i16_wraps", kernel: func(k *Kernel, r []*Ref) {
				p := k.ProgramID(0)
				io := k.Iota(xla.Int16, 0, 8)
				k.When(p.Eq(0), func() {
					m := io.Add(k.Const(xla.Int16, 32765).BroadcastTo(8)).Lt(k.Const(xla.Int16, 32767).BroadcastTo(8))
					Store(r[0], []any{All}, k.Full(xla.Float32, 10.0, 8), m)
				})
				k.When(p.Eq(1), func() {
					Store(r[0], []any{All}, k.Full(xla.Float32, 20.0, 8), io.Ge(k.Const(xla.Int16, 4).BroadcastTo(8)))
				})
			}, spec: CallSpec{Name: "mask_i16", Grid: []int64{2}, OutShapes: f32(8)}},
			want: "run in different programs along grid axis 0",
		},
	}
	for _, tc := range refused {
		t.Run(tc.c.name, func(t *testing.T) { assertRefusedRace(t, tc.c, tc.want) })
	}
	// A loop whose first store uses up the check's work: what it computed
	// of the second, racy store still counts.
	t.Run("work_spent", func(t *testing.T) {
		n := int64(maxOverlapWork/16 + 1)
		p, err := Trace(func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			k.ForLoop(0, int(n), nil, func(i *Value, _ []*Value) []*Value {
				r[0].Store(idv(k, 1), DS(p.Mul(int(n)).Add(i), 1))
				return nil
			})
			k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value {
				r[0].Store(idv(k, 1), DS(p.Div(2).Mul(2).Add(i).Add(int(16*n)), 1))
				return nil
			})
		}, CallSpec{Name: "work_spent", Grid: []int64{16}, OutShapes: f32(16*n + 16)}, nil)
		require.NoError(t, err)
		require.ErrorContains(t, checkParallelPrograms(p), "grid points (0) and (1) both reach its element")
	})
	// Accesses outside the array: interpret mode reports them; on a GPU,
	// addressed flat, they reach other rows or other memory.
	outside := []struct {
		name   string
		kernel KernelFunc
		spec   CallSpec
		want   string
	}{
		{"past_the_row", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[0].Store(idv(k, 4).Reshape(1, 4), DS(p, 1), DS(c(k, 4).Sub(p.Mul(4)), 4))
		}, CallSpec{Name: "past_row", Grid: []int64{2}, OutShapes: f32(2, 4)},
			"reaches its elements 4 to 7 of dim 1 at grid point (0), outside the array"},
		{"before_the_row", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[0].Store(idv(k, 4).Reshape(1, 4), DS(p, 1), DS(p.Mul(-4), 4))
		}, CallSpec{Name: "before_row", Grid: []int64{2}, OutShapes: f32(2, 4)},
			"reaches its elements -4 to -1 of dim 1 at grid point (1)"},
		{"block_index_far_out", func(k *Kernel, r []*Ref) { r[0].Store(idv(k, 4)) },
			CallSpec{Name: "far_block", Grid: []int64{2}, OutShapes: f32(8),
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Mul(1 << 30)} })}}},
			"at grid point (1), outside the array"},
		{"squeezed_past_the_row", func(k *Kernel, r []*Ref) { r[0].Store(k.ProgramID(0).Astype(xla.Float32)) },
			CallSpec{Name: "squeezed_past", Grid: []int64{2}, OutShapes: f32(2, 4),
				OutSpecs: []*BlockSpec{{BlockShape: []int64{Squeezed, Squeezed}, IndexMap: blockMap(func(g []*Value) []any {
					return []any{g[0], g[0].Mul(-4).Add(4)}
				})}}},
			"reaches its element 4 of dim 1 at grid point (0)"},
		{"pinned_past_the_row", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			k.When(p.Eq(0), func() { r[0].Store(k.Full(xla.Float32, 10.0, 1, 4), DS(c(k, 0), 1), DS(c(k, 4), 4)) })
			k.When(p.Eq(1), func() { r[0].Store(k.Full(xla.Float32, 20.0, 1, 4), DS(c(k, 1), 1), All) })
		}, CallSpec{Name: "pinned_past", Grid: []int64{2}, OutShapes: f32(2, 4)},
			"output 0"},
	}
	for _, tc := range outside {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, lowerTritonErr(t, tritonCase{kernel: tc.kernel, spec: tc.spec}), tc.want)
		})
	}
	// Race-free kernels it refused: a loop no odd program runs, a When
	// that divides by zero, a When on a loop index around a fixed store.
	x8 := []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })}
	accepted := []tritonCase{
		{name: "loop_odd_programs_skip", kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			k.ForLoop(0, c(k, 1).Sub(p.Rem(2)), nil, func(i *Value, _ []*Value) []*Value {
				r[1].Store(r[0].Load(DS(p, 1)), DS(p.Div(2), 1))
				return nil
			})
		}, spec: CallSpec{Name: "loop_odd_skip", Grid: []int64{8}, OutShapes: f32(4)}, args: x8},
		{name: "when_divides_by_zero", kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			k.When(c(k, 1).Div(p.Rem(2)).Eq(1), func() { r[1].Store(r[0].Load(DS(p, 1)), DS(p.Div(2), 1)) })
		}, spec: CallSpec{Name: "when_div0", Grid: []int64{8}, OutShapes: f32(4)}, args: x8},
		{name: "when_on_loop_index_fixed_store", kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			k.ForLoop(0, 1, nil, func(i *Value, _ []*Value) []*Value {
				k.When(i.Eq(p), func() { r[1].Store(r[0].Load(DS(p, 1)), Slice(0, 1)) })
				return nil
			})
			r[1].Store(r[0].Load(DS(p, 1)), DS(p.Add(1), 1))
		}, spec: CallSpec{Name: "when_loop_fixed", Grid: []int64{4}, OutShapes: f32(8)}, args: x8},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			assertTritonMatchesInterpret(t, tc)
		})
	}
}

// TestTritonRaceCheckElementwiseMasks: masks that leave no box (a
// remainder, a 2-D triangle or parity, a 16-bit iota that wraps) are
// computed element by element for each program. A mask that depends on
// the program id is no proof that programs store different elements (it
// was taken as one), and Whens that pin stores to different programs do
// not race when their masks keep them apart.
func TestTritonRaceCheckElementwiseMasks(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	idv := func(k *Kernel, n ...int64) *Value { return k.ProgramID(0).Astype(xla.Float32).BroadcastTo(n...) }
	full := func(k *Kernel, v int, n ...int64) *Value { return k.Full(xla.Int32, v, n...) }
	refused := []struct {
		c    tritonCase
		want string
	}{
		{
			// Programs p and p+4 store the elements where (i + p) % 4 == 0.
			c: tritonCase{name: "remainder", kernel: func(k *Kernel, r []*Ref) {
				p := k.ProgramID(0)
				m := k.Iota(xla.Int32, 0, 8).Add(p.BroadcastTo(8)).Rem(full(k, 4, 8)).Eq(full(k, 0, 8))
				Store(r[0], []any{All}, idv(k, 8), m)
			}, spec: CallSpec{Name: "rem_mask", Grid: []int64{8}, OutShapes: f32(8)}},
			want: "grid points (0) and (4) both reach its element (0)",
		},
		{
			// The parity of row - col, against p's: programs 0 and 2 meet.
			c: tritonCase{name: "parity_2d", kernel: func(k *Kernel, r []*Ref) {
				p := k.ProgramID(0)
				row, col := k.Iota(xla.Int32, 0, 4, 4), k.Iota(xla.Int32, 1, 4, 4)
				m := row.Sub(col).Add(full(k, 8, 4, 4)).Rem(full(k, 2, 4, 4)).Eq(p.Rem(2).BroadcastTo(4, 4))
				Store(r[0], []any{All, All}, idv(k, 4, 4), m)
			}, spec: CallSpec{Name: "parity_2d", Grid: []int64{4}, OutShapes: f32(4, 4)}},
			want: "grid points (0) and (2) both reach its element (0, 0)",
		},
		{
			// A 16-bit iota plus 32765 + p wraps below 2 past 32767: program
			// 0 stores 0, 1 and 3 to 7, program 1 stores 0 and 2 to 7.
			c: tritonCase{name: "i16_wraps", kernel: func(k *Kernel, r []*Ref) {
				p := k.ProgramID(0)
				c := p.Add(32765).Astype(xla.Int16).BroadcastTo(8)
				m := k.Iota(xla.Int16, 0, 8).Add(c).Lt(k.Full(xla.Int16, 32767, 8))
				Store(r[0], []any{All}, idv(k, 8), m)
			}, spec: CallSpec{Name: "i16_wraps", Grid: []int64{2}, OutShapes: f32(8)}},
			want: "grid points (0) and (1) both reach its element (0)",
		},
	}
	for _, tc := range refused {
		t.Run(tc.c.name, func(t *testing.T) { assertRefusedRace(t, tc.c, tc.want) })
	}
	x16 := []*interpreter.Tensor{fTensor([]int64{4, 4}, func(i int) float64 { return float64(i) })}
	accepted := []tritonCase{
		{
			// Each program stores the elements of its parity of row + col.
			name: "checkerboard", kernel: func(k *Kernel, r []*Ref) {
				p := k.ProgramID(0)
				row, col := k.Iota(xla.Int32, 0, 4, 4), k.Iota(xla.Int32, 1, 4, 4)
				m := row.Add(col).Rem(full(k, 2, 4, 4)).Eq(p.BroadcastTo(4, 4))
				Store(r[1], []any{All, All}, r[0].Load().Add(idv(k, 4, 4)), m)
			}, spec: CallSpec{Name: "checkerboard", Grid: []int64{2}, OutShapes: f32(4, 4)}, args: x16,
		},
		{
			// Whens pin the two triangles to programs 0 and 1 (the
			// checks by dependence refuse pinned stores to one array).
			name: "pinned_triangles", kernel: func(k *Kernel, r []*Ref) {
				p := k.ProgramID(0)
				row, col := k.Iota(xla.Int32, 0, 4, 4), k.Iota(xla.Int32, 1, 4, 4)
				k.When(p.Eq(0), func() { Store(r[1], []any{All, All}, r[0].Load(), row.Ge(col)) })
				k.When(p.Eq(1), func() { Store(r[1], []any{All, All}, r[0].Load().Neg(), row.Lt(col)) })
			}, spec: CallSpec{Name: "pinned_triangles", Grid: []int64{2}, OutShapes: f32(4, 4)}, args: x16,
		},
		{
			// Rows of 2x4 blocks, each program its block's lower triangle.
			name: "block_triangles", kernel: func(k *Kernel, r []*Ref) {
				row, col := k.Iota(xla.Int32, 0, 2, 4), k.Iota(xla.Int32, 1, 2, 4)
				Store(r[1], []any{All, All}, r[0].Load().Mul(2.0), row.Add(full(k, 2, 2, 4)).Ge(col))
			}, spec: CallSpec{Name: "block_triangles", Grid: []int64{2}, OutShapes: f32(4, 4),
				InSpecs:  []*BlockSpec{{BlockShape: []int64{2, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}}}, args: x16,
		},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			assertTritonMatchesInterpret(t, tc)
		})
	}
}

// Kernels a second review found it judged wrongly (fixed since).
func TestTritonRaceCheckSecondReviewCases(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	idv := func(k *Kernel, n ...int64) *Value { return k.ProgramID(0).Astype(xla.Float32).BroadcastTo(n...) }
	c := func(k *Kernel, v int) *Value { return k.Const(xla.Int32, v) }
	check := func(t *testing.T, kernel KernelFunc, spec CallSpec, args ...*interpreter.Tensor) error {
		t.Helper()
		p, err := Trace(kernel, spec, argTypes(args))
		require.NoError(t, err)
		return checkParallelPrograms(p)
	}
	// A store of the same values in every program is still checked for
	// reaching outside the array.
	require.ErrorContains(t, check(t, func(k *Kernel, r []*Ref) {
		r[0].Store(k.Full(xla.Float32, 7.0, 1, 4), DS(k.ProgramID(0), 1), All)
	}, CallSpec{Name: "same_outside", Grid: []int64{4}, OutShapes: f32(2, 4)}),
		"reaches its element 2 of dim 0 at grid point (2), outside the array")
	// An output dear to compute leaves a later one its share of the work.
	require.ErrorContains(t, check(t, func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		k.ForLoop(0, 128, nil, func(i *Value, _ []*Value) []*Value {
			k.When(i.Eq(200), func() { r[0].Store(idv(k, 1), DS(p, 1)) })
			return nil
		})
		r[0].Store(idv(k, 1), DS(p, 1))
		r[1].Store(idv(k, 1), DS(p.Rem(2), 1))
	}, CallSpec{Name: "shares", Grid: []int64{4096}, OutShapes: append(f32(4096), f32(2)...)}),
		"output 1 (f32[2] block of f32[2]): grid points (0) and (2) both reach its element (0)")
	// An array with a dim of size 0: nothing to reach (it panicked).
	require.NoError(t, check(t, func(k *Kernel, r []*Ref) {
		r[0].Store(idv(k, 1, 0), DS(k.ProgramID(0), 1), All)
	}, CallSpec{Name: "empty_dim", Grid: []int64{4}, OutShapes: f32(4, 0)}))
	// A loop whose bounds read data, around one whose index the store's
	// position needs: the inner loop is walked, the outer taken to run once.
	require.ErrorContains(t, check(t, func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		k.ForLoop(0, r[0].Load(DS(p, 1)).Reshape(), nil, func(_ *Value, _ []*Value) []*Value {
			k.ForLoop(0, c(k, 2).Sub(p.Min(1)), nil, func(j *Value, _ []*Value) []*Value {
				r[1].Store(idv(k, 1), DS(j, 1))
				return nil
			})
			return nil
		})
	}, CallSpec{Name: "outer_data_loop", Grid: []int64{2}, OutShapes: f32(2)}, iTensor([]int64{2}, 1)),
		"both reach its element (0)")
	// Rank 5: the cells are made along the dims with most of them.
	const n = 1 << 16
	require.ErrorContains(t, check(t, func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		pos := Where(p.Lt(n-100), p, p.Rem(2).Add(n-100))
		Store(r[0], []any{All, All, All, All, DS(pos, 1)}, idv(k, 2, 2, 2, 2, 1), nil)
	}, CallSpec{Name: "rank5", Grid: []int64{n}, OutShapes: f32(2, 2, 2, 2, n+2)}),
		"both reach its element")
	// A store under a When on a loop index that no program's id meets
	// runs nowhere: not outside the array (it was refused as outside).
	x8 := []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })}
	assertTritonMatchesInterpret(t, tritonCase{name: "never_runs", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		k.ForLoop(0, k.NumPrograms(0).Sub(2), nil, func(i *Value, _ []*Value) []*Value {
			k.When(i.Eq(p), func() { r[1].Store(r[0].Load(DS(p, 1)).BroadcastTo(1, 4).Reshape(1, 4), DS(p, 1), All) })
			return nil
		})
	}, spec: CallSpec{Name: "never_runs", Grid: []int64{4}, OutShapes: f32(2, 4)}, args: x8})
}

// BenchmarkTritonRaceCheck times the build-time race check
// (checkParallelPrograms) against the whole Triton lowering of the same
// kernel (LowerTriton, which runs it): kernels whose accesses it computes
// for every program, on the largest grid it visits whole, and one whose
// loop walk runs into its work bound.
func BenchmarkTritonRaceCheck(b *testing.B) {
	const n = 1 << 16
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	row := blockMap(func(g []*Value) []any { return []any{g[0], 0} })
	cases := []struct {
		name   string
		kernel KernelFunc
		spec   CallSpec
	}{
		{"own_rows_65536", func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load().Mul(2.0))
		}, CallSpec{Name: "own_rows", Grid: []int64{n}, OutShapes: f32(n, 16),
			InSpecs:  []*BlockSpec{{BlockShape: []int64{1, 16}, IndexMap: row}},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{1, 16}, IndexMap: row}}}},
		{"8_stores_65536", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			for j := 0; j < 8; j++ {
				r[1].Store(r[0].Load(DS(p, 1), Slice(int64(2*j), int64(2*j+2))), DS(p, 1), Slice(int64(2*j), int64(2*j+2)))
			}
		}, CallSpec{Name: "eight_stores", Grid: []int64{n}, OutShapes: f32(n, 16)}},
		{"loop_past_the_bound", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			k.ForLoop(0, 4096, nil, func(i *Value, _ []*Value) []*Value {
				r[1].Store(r[0].Load(DS(p, 1), DS(i.Rem(16), 1)), DS(p, 1), DS(i.Rem(16), 1))
				return nil
			})
		}, CallSpec{Name: "long_loop", Grid: []int64{4096}, OutShapes: f32(4096, 16)}},
		{"triangle_mask_4096", func(k *Kernel, r []*Ref) {
			row, col := k.Iota(xla.Int32, 0, 16, 16), k.Iota(xla.Int32, 1, 16, 16)
			Store(r[1], []any{All, All}, r[0].Load(), row.Ge(col))
		}, CallSpec{Name: "triangles", Grid: []int64{4096}, OutShapes: f32(4096*16, 16),
			InSpecs:  []*BlockSpec{{BlockShape: []int64{16, 16}, IndexMap: row}},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{16, 16}, IndexMap: row}}}},
		{"index_array_16_65536", func(k *Kernel, r []*Ref) {
			ids := k.Arange(16).Add(k.ProgramID(0).Mul(16).BroadcastTo(16))
			r[1].Store(r[0].Load(ids), ids)
		}, CallSpec{Name: "index_arrays", Grid: []int64{n}, OutShapes: f32(n * 16)}},
		{"triangle_mask_128x128_65536", func(k *Kernel, r []*Ref) {
			row, col := k.Iota(xla.Int32, 0, 128, 128), k.Iota(xla.Int32, 1, 128, 128)
			Store(r[1], []any{All, All}, Load(r[0], []any{All, All}, row.Ge(col), 0.0), row.Ge(col))
		}, CallSpec{Name: "big_triangles", Grid: []int64{256, 256}, OutShapes: f32(256*128, 256*128),
			InSpecs:  []*BlockSpec{{BlockShape: []int64{128, 128}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{128, 128}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}}}},
	}
	for _, c := range cases {
		spec := c.spec
		spec.Backend = Triton
		in := interpreter.NewTensor(spec.OutShapes[0])
		p, err := Trace(c.kernel, spec, argTypes([]*interpreter.Tensor{in}))
		require.NoError(b, err)
		b.Run(c.name+"/check", func(b *testing.B) {
			for range b.N {
				if err := checkParallelPrograms(p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/lower", func(b *testing.B) {
			for range b.N {
				if _, err := LowerTriton(p, CompilerParams{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTritonRefusesLoadsOutsideInputs: a load of an input or of a
// scalar-prefetch array whose elements are computable at build time and
// reach outside the array is an error of the Triton lowering (a GPU would
// read other memory), as interpret mode reports it out of bounds when the
// kernel runs; loads that stay inside, masked ones included, lower.
func TestTritonRefusesLoadsOutsideInputs(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	x8 := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	refused := []struct {
		name string
		c    tritonCase
		want string
	}{
		{"start_past_the_end", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[1].Store(r[0].Load(DS(p.Mul(4).Add(4), 4)), DS(p.Mul(4), 4))
		}, spec: CallSpec{Name: "past_end", Grid: []int64{2}, OutShapes: f32(8)}, args: []*interpreter.Tensor{x8}},
			"input 0 (f32[8] block of f32[8]): the load at triton_overlap_test.go:"},
		{"block_past_the_array", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load())
		}, spec: CallSpec{Name: "block_past", Grid: []int64{2}, OutShapes: f32(8),
			InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Mul(2)} })}},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			args: []*interpreter.Tensor{x8}},
			"is at block index 2 of dim 0 at grid point (1), outside the array's 2 blocks"},
		{"prefetch_past_the_end", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[2].Store(r[1].Load(DS(p, 1)).Add(r[0].Load(DS(p.Add(2), 1)).Astype(xla.Float32)), DS(p, 1))
		}, spec: CallSpec{Name: "prefetch_past", Grid: []int64{4}, OutShapes: f32(4), NumScalarPrefetch: 1},
			args: []*interpreter.Tensor{iTensor([]int64{4}, 1, 2, 3, 4), x8}},
			"reaches its element 4 of dim 0 at grid point (2), outside the array"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, lowerTritonErr(t, tc.c), tc.want)
			// Interpret mode reports the same load when it runs.
			_, err := runCall(tc.c.kernel, tc.c.spec, tc.c.args...)
			var be *BoundsError
			require.ErrorAs(t, err, &be)
		})
	}
	// Inside: a window masked to the array's end, and a loop over blocks.
	assertTritonMatchesInterpret(t, tritonCase{name: "masked_window", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		io := k.Iota(xla.Int32, 0, 8)
		v := Load(r[0], []any{DS(p.Mul(4), 8)}, io.Lt(k.Full(xla.Int32, 8, 8).Sub(p.Mul(4).BroadcastTo(8))), 0.0)
		r[1].Store(v.Sum().Reshape(1), DS(p, 1))
	}, spec: CallSpec{Name: "masked_window", Grid: []int64{2}, OutShapes: f32(2)}, args: []*interpreter.Tensor{x8}})
	assertTritonMatchesInterpret(t, tritonCase{name: "loop_blocks", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		acc := k.ForLoop(0, 4, []*Value{k.Full(xla.Float32, 0.0, 2)}, func(i *Value, c []*Value) []*Value {
			return []*Value{c[0].Add(r[0].Load(DS(i.Mul(2), 2)))}
		})
		r[1].Store(acc[0].Add(p.Astype(xla.Float32).BroadcastTo(2)), DS(p.Mul(2), 2))
	}, spec: CallSpec{Name: "loop_blocks", Grid: []int64{2}, OutShapes: f32(4)}, args: []*interpreter.Tensor{x8}})
}

// Kernels a review of the element-by-element masks and of the input
// loads' bounds found judged wrongly (fixed since).
func TestTritonRaceCheckMaskReviewCases(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	x8 := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	// A mask that reshapes a value the same everywhere: it panicked (one
	// value read as many), and with a last dim of 1 it hid a race.
	assertTritonMatchesInterpret(t, tritonCase{name: "reshaped_uniform_mask", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		Store(r[1], []any{All}, r[0].Load().Add(p.Astype(xla.Float32).BroadcastTo(8)), p.Lt(1).BroadcastTo(1, 8).Reshape(8))
	}, spec: CallSpec{Name: "reshaped_uniform", Grid: []int64{2}, OutShapes: f32(8)}, args: []*interpreter.Tensor{x8}})
	assertRefusedRace(t, tritonCase{name: "reshaped_uniform_race", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		m := p.Lt(100).BroadcastTo(2, 4).Reshape(8, 1)
		Store(r[0], []any{DS(p, 8), All}, p.Astype(xla.Float32).BroadcastTo(8, 1), m)
	}, spec: CallSpec{Name: "reshaped_uniform_race", Grid: []int64{4}, OutShapes: f32(16, 1)}},
		"both reach its element")
	// A mask of no elements computed from a larger value: no panic.
	p, err := Trace(func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		m := k.Iota(xla.Int32, 1, 1, 1<<21).BroadcastTo(0, 1<<21).Add(p.BroadcastTo(0, 1<<21)).
			Rem(k.Full(xla.Int32, 3, 0, 1<<21)).Eq(k.Full(xla.Int32, 0, 0, 1<<21))
		Store(r[0], []any{DS(p, 0), All}, k.Full(xla.Float32, 1.0, 0, 1<<21), m)
	}, CallSpec{Name: "empty_mask", Grid: []int64{4}, OutShapes: f32(4, 1<<21)}, nil)
	require.NoError(t, err)
	require.NotPanics(t, func() { _ = checkParallelPrograms(p) })

	// A load outside the array under a When or loop that reads data runs
	// only where the data says: a ragged grid, not an error.
	counts := iTensor([]int64{4}, 1, 1, 0, 0)
	assertTritonMatchesInterpret(t, tritonCase{name: "ragged_when", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		r[2].Store(k.Full(xla.Float32, 0.0, 2), DS(p.Mul(2), 2))
		k.When(r[0].Load(p).Ne(0), func() { r[2].Store(r[1].Load(DS(p.Mul(4), 2)), DS(p.Mul(2), 2)) })
	}, spec: CallSpec{Name: "ragged_when", Grid: []int64{4}, OutShapes: f32(8), NumScalarPrefetch: 1},
		args: []*interpreter.Tensor{counts, x8}})
	assertTritonMatchesInterpret(t, tritonCase{name: "ragged_loop", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		r[2].Store(k.Full(xla.Float32, 0.0, 2), DS(p.Mul(2), 2))
		k.ForLoop(0, r[0].Load(p), nil, func(i *Value, _ []*Value) []*Value {
			r[2].Store(r[1].Load(DS(p.Mul(4).Add(i), 2)), DS(p.Mul(2), 2))
			return nil
		})
	}, spec: CallSpec{Name: "ragged_loop", Grid: []int64{4}, OutShapes: f32(8), NumScalarPrefetch: 1},
		args: []*interpreter.Tensor{iTensor([]int64{4}, 2, 2, 0, 0), x8}})

	refused := []struct {
		name string
		c    tritonCase
		want string
	}{
		// Loads of an input aliased to an output whose store is not
		// computable (its mask reads data) were not placed.
		{"aliased_input", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			v := r[0].Load(DS(k.Const(xla.Int32, 4), 8))
			Store(r[1], []any{All}, v, r[0].Load().Gt(0.0))
		}, spec: CallSpec{Name: "aliased_input", Grid: []int64{1}, OutShapes: f32(8), InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{x8}},
			"input 0 (f32[8] block of f32[8]): the load at triton_overlap_test.go:"},
		// A scalar-prefetch array aliased to an output was taken as placed.
		{"aliased_prefetch", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[3].Store(r[0].Load(DS(p.Add(1), 1)).Astype(xla.Float32).Add(r[1].Load(DS(p, 1))), DS(p, 1))
		}, spec: CallSpec{Name: "aliased_prefetch", Grid: []int64{4}, NumScalarPrefetch: 1,
			OutShapes:          []xla.Shape{xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Float32, 4)},
			InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{iTensor([]int64{4}, 1, 2, 3, 4), x8}},
			"reaches its element 4 of dim 0 at grid point (3), outside the array"},
		// A start inside the array but past the block: interpret mode
		// slices the block; a GPU would read the next block.
		{"past_the_block", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load(DS(k.Const(xla.Int32, 2), 4)))
		}, spec: CallSpec{Name: "past_block", Grid: []int64{3}, OutShapes: f32(12),
			InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			args: []*interpreter.Tensor{fTensor([]int64{12}, func(i int) float64 { return float64(i) })}},
			"input 0 (f32[4] block of f32[12]): the load at triton_overlap_test.go:"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			err := lowerTritonErr(t, tc.c)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "interpret mode reports it out of bounds")
			_, err = runCall(tc.c.kernel, tc.c.spec, tc.c.args...)
			var be *BoundsError
			require.ErrorAs(t, err, &be, "interpret mode reports it")
		})
	}
	require.ErrorContains(t, lowerTritonErr(t, refused[2].c), "reaches elements 2 to 5 of dim 0 of its block (of 4) at grid point (0), outside the block")
}

// Kernels a second review of the bounds found judged wrongly (fixed since).
func TestTritonOutsideSecondReviewCases(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	x8 := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	// A load in a While's body runs only where the data lets it.
	assertTritonMatchesInterpret(t, tritonCase{name: "ragged_while", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		r[2].Store(k.Full(xla.Float32, 0.0, 2), DS(p.Mul(2), 2))
		k.While([]*Value{k.Const(xla.Int32, 0)}, func(c []*Value) *Value { return c[0].Lt(r[0].Load(p)) },
			func(c []*Value) []*Value {
				r[2].Store(r[1].Load(DS(p.Mul(4), 2)), DS(p.Mul(2), 2))
				return []*Value{c[0].Add(1)}
			})
	}, spec: CallSpec{Name: "ragged_while", Grid: []int64{4}, OutShapes: f32(8), NumScalarPrefetch: 1},
		args: []*interpreter.Tensor{iTensor([]int64{4}, 1, 1, 0, 0), x8}})

	const n = 1 << 17
	refused := []struct {
		name string
		c    tritonCase
		want string
	}{
		// A load of an output whose store is not computable (its mask
		// reads data).
		{"output_load", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			v := r[1].Load(DS(k.Const(xla.Int32, 4), 8))
			Store(r[1], []any{All}, v, r[0].Load().Gt(100.0))
		}, spec: CallSpec{Name: "output_load", Grid: []int64{1}, OutShapes: f32(8), InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{x8}},
			"output 0 (f32[8] block of f32[8]): the load at triton_overlap_test.go:"},
		// An index map's load of a prefetch array.
		{"index_map_load", tritonCase{kernel: func(k *Kernel, r []*Ref) { r[2].Store(r[1].Load()) },
			spec: CallSpec{Name: "map_load", Grid: []int64{4}, OutShapes: f32(8), NumScalarPrefetch: 1,
				InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, pf []*Ref) []any {
					return []any{pf[0].Load(DS(g[0].Add(1), 1)).Reshape().Rem(4)}
				}}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			args: []*interpreter.Tensor{iTensor([]int64{4}, 0, 1, 2, 3), x8}},
			"prefetch 0 (i32[4]): the load at triton_overlap_test.go:"},
		// One past the end at the last program of a grid larger than the
		// corner the race check visits.
		{"far_corner", tritonCase{kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[1].Store(r[0].Load(DS(p.Add(1), 1)), DS(p, 1))
		}, spec: CallSpec{Name: "far_corner", Grid: []int64{n}, OutShapes: f32(n)},
			args: []*interpreter.Tensor{fTensor([]int64{n}, func(i int) float64 { return float64(i) })}},
			fmt.Sprintf("reaches its element %d of dim 0 at grid point (%d), outside the array", n, n-1)},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, lowerTritonErr(t, tc.c), tc.want)
			_, err := runCall(tc.c.kernel, tc.c.spec, tc.c.args...)
			var be *BoundsError
			require.ErrorAs(t, err, &be, "interpret mode reports it")
		})
	}
}

// TestTritonRaceCheckIndexArrays: index arrays computed from iotas and
// the program ids are computed element by element like dynamic starts
// (they were judged by dependence, which took p-dependent indices as
// apart), for races and for reaching outside the array.
func TestTritonRaceCheckIndexArrays(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	x8 := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	// Programs 0 and 2 (1 and 3) store the same elements.
	assertRefusedRace(t, tritonCase{name: "elements", kernel: func(k *Kernel, r []*Ref) {
		ar := k.Arange(2).Add(k.ProgramID(0).Mul(2))
		r[1].Store(r[0].Load(ar), ar.Rem(4))
	}, spec: CallSpec{Name: "arr_elems", Grid: []int64{4}, OutShapes: f32(8)}, args: []*interpreter.Tensor{x8}},
		"grid points (0) and (2) both reach its element (0)")
	// Rows picked by an array, each row a run.
	assertRefusedRace(t, tritonCase{name: "rows", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		rows := k.Arange(2).Add(p.BroadcastTo(2)).Rem(2)
		r[0].Store(p.Astype(xla.Float32).BroadcastTo(2, 4), rows, All)
	}, spec: CallSpec{Name: "arr_rows", Grid: []int64{2}, OutShapes: f32(2, 4)}},
		"grid points (0) and (1) both reach its element")
	// Each program its own rows, in a permuted order, under a mask: fine.
	assertTritonMatchesInterpret(t, tritonCase{name: "own_rows", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		rows := k.Arange(2).Mul(-1).Add(p.Mul(2).Add(1).BroadcastTo(2)) // 2p+1, 2p
		m := k.Iota(xla.Int32, 1, 2, 4).Lt(k.Full(xla.Int32, 3, 2, 4))
		Store(r[1], []any{rows, All}, r[0].Load(rows, All).Mul(2.0), m)
	}, spec: CallSpec{Name: "arr_own_rows", Grid: []int64{2}, OutShapes: f32(4, 4)},
		args: []*interpreter.Tensor{fTensor([]int64{4, 4}, func(i int) float64 { return float64(i) })}})
	// A gather past the array's end.
	c := tritonCase{name: "gather_outside", kernel: func(k *Kernel, r []*Ref) {
		ids := k.Arange(4).Mul(k.ProgramID(0).Add(10))
		r[1].Store(r[0].Load(ids), DS(k.ProgramID(0).Mul(4), 4))
	}, spec: CallSpec{Name: "gather_outside", Grid: []int64{2}, OutShapes: f32(8)},
		args: []*interpreter.Tensor{fTensor([]int64{32}, func(i int) float64 { return float64(i) })}}
	require.ErrorContains(t, lowerTritonErr(t, c), "input 0 (f32[32] block of f32[32]): the load at triton_overlap_test.go:")
	require.ErrorContains(t, lowerTritonErr(t, c), "reaches its element 33 of dim 0 at grid point (1), outside the array")
	_, err := runCall(c.kernel, c.spec, c.args...)
	var be *BoundsError
	require.ErrorAs(t, err, &be, "interpret mode reports it")
}

// Kernels a review of the index arrays found judged wrongly (fixed since).
func TestTritonRaceCheckThirdReviewCases(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	refused := []struct {
		name   string
		kernel KernelFunc
		spec   CallSpec
		want   string
	}{
		// The same values in every program, but each program puts them
		// at other elements: o[(i + p) % 4] = i. (Taken as harmless.)
		{"same_values_moved", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[0].Store(k.Arange(4).Astype(xla.Float32), k.Arange(4).Add(p.BroadcastTo(4)).Rem(4))
		}, CallSpec{Name: "same_moved", Grid: []int64{2}, OutShapes: f32(4)}, "both reach its element"},
		{"same_values_shifted", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[0].Store(k.Arange(4).Astype(xla.Float32), DS(p, 4))
		}, CallSpec{Name: "same_shifted", Grid: []int64{2}, OutShapes: f32(8)}, "both reach its element"},
		// Index arrays through a transpose and a reduction (not computed:
		// judged by dependence, which took them as apart).
		{"array_transposed", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			a := k.Arange(2).Add(p.BroadcastTo(2)).Rem(2).Reshape(2, 1).Transpose(1, 0).Reshape(2)
			r[0].Store(p.Astype(xla.Float32).BroadcastTo(2), a)
		}, CallSpec{Name: "arr_transposed", Grid: []int64{2}, OutShapes: f32(4)}, "both reach its element"},
		// An index array that repeats an element: the mask, which
		// depends on the program, picks which lane's value lands there.
		{"repeated_index_masked", func(k *Kernel, r []*Ref) {
			p, i := k.ProgramID(0), k.Arange(2)
			Store(r[0], []any{k.Full(xla.Int32, 0, 2)}, i.Astype(xla.Float32), i.Eq(p.BroadcastTo(2)))
		}, CallSpec{Name: "repeated_index", Grid: []int64{2}, OutShapes: f32(4)}, "both reach its element (0)"},
		{"array_reduced", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			s := k.Arange(2).Add(p.BroadcastTo(2)).Rem(2).ReduceMax(0)
			r[0].Store(p.Astype(xla.Float32).BroadcastTo(2), k.Arange(2).Add(s.BroadcastTo(2)))
		}, CallSpec{Name: "arr_reduced", Grid: []int64{2}, OutShapes: f32(4)}, "both reach its element"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			assertRefusedRace(t, tritonCase{name: tc.name, kernel: tc.kernel, spec: tc.spec}, tc.want)
		})
	}
	// One number everywhere, at overlapping places: harmless, also when
	// computed from splats; and values at fixed positions under masks
	// that depend on the program (they choose who writes, not what).
	x8 := fTensor([]int64{8}, func(i int) float64 { return float64(i) })
	for name, fill := range map[string]func(k *Kernel) *Value{
		"zeros":           func(k *Kernel) *Value { return k.Full(xla.Float32, 0.0, 4) },
		"converted_splat": func(k *Kernel) *Value { return k.Full(xla.Int32, 3, 4).Astype(xla.Float32) },
		"splat_plus_one":  func(k *Kernel) *Value { return k.Full(xla.Float32, 0.0, 4).Add(1.0) },
	} {
		assertTritonMatchesInterpret(t, tritonCase{name: name, kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(fill(k), DS(k.ProgramID(0), 4))
		}, spec: CallSpec{Name: name, Grid: []int64{2}, OutShapes: f32(8), InputOutputAliases: map[int]int{0: 0}},
			args: []*interpreter.Tensor{x8}})
	}
	assertTritonMatchesInterpret(t, tritonCase{name: "masked_by_program", kernel: func(k *Kernel, r []*Ref) {
		p, i := k.ProgramID(0), k.Arange(4)
		Store(r[1], []any{Slice(0, 4)}, i.Astype(xla.Float32), i.Le(p.BroadcastTo(4)))
	}, spec: CallSpec{Name: "masked_by_program", Grid: []int64{4}, OutShapes: f32(8), InputOutputAliases: map[int]int{0: 0}},
		args: []*interpreter.Tensor{x8}})
}

// Outside accesses an adversarial review found unreported (fixed since):
// an element in one dim's padding hid a later dim's index past its block
// or array, and a whole-dim block's index past the array went unseen when
// a start brought the elements back inside.
func TestTritonOutsideFourthReviewCases(t *testing.T) {
	f32 := func(d ...int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, d...)} }
	c := func(k *Kernel, v int) *Value { return k.Const(xla.Int32, v) }
	one := func(k *Kernel, n ...int64) *Value { return k.Full(xla.Float32, 1.0, n...) }
	cases := []struct {
		name   string
		kernel KernelFunc
		spec   CallSpec
		want   string
	}{
		{"padding_then_past_the_block", func(k *Kernel, r []*Ref) { r[0].Store(one(k, 1, 1), DS(c(k, 3), 1), DS(c(k, 1), 1)) },
			CallSpec{Name: "pad_block", Grid: []int64{1}, OutShapes: f32(6, 2),
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4, 1}, IndexMap: blockMap(func(g []*Value) []any { return []any{1, 0} })}}},
			"reaches element 1 of dim 1 of its block (of 1)"},
		{"padding_then_past_the_array", func(k *Kernel, r []*Ref) { r[0].Store(one(k, 1, 1), DS(c(k, 3), 1), DS(c(k, 2), 1)) },
			CallSpec{Name: "pad_array", Grid: []int64{1}, OutShapes: f32(6, 2),
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4, 2}, IndexMap: blockMap(func(g []*Value) []any { return []any{1, 0} })}}},
			"reaches its element 2 of dim 1"},
		{"padding_then_squeezed_past", func(k *Kernel, r []*Ref) { r[0].Store(one(k, 1), DS(c(k, 3), 1)) },
			CallSpec{Name: "pad_squeezed", Grid: []int64{1}, OutShapes: f32(6, 3),
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4, Squeezed}, IndexMap: blockMap(func(g []*Value) []any { return []any{1, g[0].Add(3)} })}}},
			"reaches its element 3 of dim 1"},
		{"whole_dim_block_index_past", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			k.When(p.Eq(1), func() { r[0].Store(one(k, 4), DS(p.Mul(-4), 4)) })
		}, CallSpec{Name: "whole_dim_past", Grid: []int64{2}, OutShapes: f32(4),
			OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			"is at block index 1 of dim 0 at grid point (1), outside the array's 1 blocks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tritonCase{name: tc.name, kernel: tc.kernel, spec: tc.spec}
			require.ErrorContains(t, lowerTritonErr(t, c), tc.want)
			_, err := runCall(tc.kernel, tc.spec)
			var be *BoundsError
			require.ErrorAs(t, err, &be, "interpret mode reports it")
		})
	}
}
