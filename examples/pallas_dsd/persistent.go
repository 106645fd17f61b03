package main

import (
	"container/heap"
	"fmt"

	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Schedule is the work of the persistent DSD kernel's programs, planned
// on the host from the sparsity pattern alone (once per pattern, like
// seed 001's prefetch maps): which output blocks each program computes,
// and in what order, as flat lists of K steps. A step multiplies one K
// part of one sparse block by the matching rows of the dense operand
// into one output block; an output block's steps are consecutive, and
// the kernel stores the block after its last one.
//
// Output blocks are numbered i + j*R (i the row block, R the row blocks,
// j the column block), the order of the one-block-a-program grid, so the
// blocks in work at one time share a few column strips of the dense
// operand in L2. Each block in turn goes to the program that would be
// free first, counting a block's steps plus two for its store (ties to
// the lowest program): a list schedule, what a GPU's block scheduler
// does for a grid, done ahead so the kernel needs no atomics.
type Schedule struct {
	// ProgSteps: program p's steps are ProgSteps[p] .. ProgSteps[p+1]-1.
	ProgSteps []int32
	// StepA is each step's sparse block b and K part h as b*parts + h.
	StepA []int32
	// StepY is each step's first row of the dense operand.
	StepY []int32
	// StepOut is each step's output block id, or -1-id at the block's
	// last step (the kernel then stores it).
	StepOut []int32
	// ProgEmpty: program p zeroes output blocks Empty[ProgEmpty[p]] ..
	// Empty[ProgEmpty[p+1]-1], those of block rows without blocks.
	ProgEmpty []int32
	Empty     []int32
}

// storeSteps is what the schedule counts for storing an output block, in
// steps.
const storeSteps = 2

// Schedule plans t.Programs programs over the product with an n-column
// dense operand, for tiling t (completed and checked as BuildDSDTiled
// does; 0 programs is an error here). Arrays that would be empty hold one
// unused 0, as the kernel's arguments cannot be empty.
func (s *BlockCOO) Schedule(n int64, t DSDTiling) (*Schedule, error) {
	t, err := s.tiling(n, t)
	if err != nil {
		return nil, err
	}
	if t.Programs < 1 {
		return nil, fmt.Errorf("dsd: a schedule needs at least one program, not %d", t.Programs)
	}
	ptr := s.RowPtr()
	parts := s.BK / t.BK
	rows, cols := s.M/t.BM, n/t.BN
	sub := s.BM / t.BM // output row blocks per block row
	progs := make(freeAt, t.Programs)
	for p := range progs {
		progs[p].p = p
	}
	mine := make([][]int32, len(progs))
	for j := int64(0); j < cols; j++ {
		for i := int64(0); i < rows; i++ {
			r := i / sub
			next := &progs[0] // the first free, lowest on ties
			mine[next.p] = append(mine[next.p], int32(i+j*rows))
			next.free += int64(ptr[r+1]-ptr[r])*parts + storeSteps
			heap.Fix(&progs, 0)
		}
	}
	sc := &Schedule{ProgSteps: []int32{0}, ProgEmpty: []int32{0}}
	for _, items := range mine {
		for _, id := range items {
			r := (int64(id) % rows) / sub
			if ptr[r] == ptr[r+1] {
				sc.Empty = append(sc.Empty, id)
				continue
			}
			for b := ptr[r]; b < ptr[r+1]; b++ {
				for h := int64(0); h < parts; h++ {
					sc.StepA = append(sc.StepA, int32(int64(b)*parts+h))
					sc.StepY = append(sc.StepY, int32(int64(s.ColIdx[b])*s.BK+h*t.BK))
					sc.StepOut = append(sc.StepOut, id)
				}
			}
			sc.StepOut[len(sc.StepOut)-1] = -1 - id
		}
		sc.ProgSteps = append(sc.ProgSteps, int32(len(sc.StepA)))
		sc.ProgEmpty = append(sc.ProgEmpty, int32(len(sc.Empty)))
	}
	for _, a := range []*[]int32{&sc.StepA, &sc.StepY, &sc.StepOut, &sc.Empty} {
		if len(*a) == 0 {
			*a = []int32{0}
		}
	}
	return sc, nil
}

// freeAt is a heap of programs by when they would be free, then by
// number.
type freeAt []struct {
	free int64
	p    int
}

func (h freeAt) Len() int { return len(h) }
func (h freeAt) Less(a, b int) bool {
	return h[a].free < h[b].free || h[a].free == h[b].free && h[a].p < h[b].p
}
func (h freeAt) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *freeAt) Push(any)     { panic("dsd: the programs are fixed") }
func (h *freeAt) Pop() any     { panic("dsd: the programs are fixed") }

// arrays are the schedule's arrays in the kernel's prefetch order.
func (sc *Schedule) arrays() [][]int32 {
	return [][]int32{sc.ProgSteps, sc.StepA, sc.StepY, sc.StepOut, sc.ProgEmpty, sc.Empty}
}

// dsdPersistentKernel is the DSD as a persistent kernel: t.Programs
// programs, each running its part of a Schedule in one loop over K steps
// (whatever output block they belong to), storing an output block after
// its last step and starting the next from zeros. Meant to keep a GPU's
// load pipeline full from one output block to the next, where a program
// per output block fills and drains it for the dozen or so steps of each
// (a block row holds 6.4 non-zero blocks at 10% of 64). On an H100
// (8192^3 bf16 at 10%) it was slower than one program an output block:
// 0.316 ms queued at best (264 programs) against 0.257; JAX Pallas's
// twin 0.322 (docs/gpu-validation.md). Refs: the six schedule arrays
// (prefetch), the blocks and y, the whole output.
func dsdPersistentKernel(sbm, bk int64, t DSDTiling, rows int64) pallas.KernelFunc {
	bm, bn, step := t.BM, t.BN, t.BK
	parts := bk / step
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		progSteps, stepA, stepY, stepOut, progEmpty, empty := refs[0], refs[1], refs[2], refs[3], refs[4], refs[5]
		blocks, y, o := refs[6], refs[7], refs[8]
		p := k.ProgramID(0)
		at := func(id *pallas.Value) (i *pallas.Value, outRows, outCols any) {
			i, j := id.Rem(rows), id.Div(rows)
			return i, pallas.DS(i.Mul(bm), bm), pallas.DS(j.Mul(bn), bn)
		}
		k.ForLoop(progEmpty.Load(p), progEmpty.Load(p.Add(1)), nil, func(e *pallas.Value, _ []*pallas.Value) []*pallas.Value {
			_, r, c := at(empty.Load(e))
			o.Store(0.0, r, c)
			return nil
		})
		zeros := k.Zeros(xla.Float32, bm, bn)
		k.ForLoop(progSteps.Load(p), progSteps.Load(p.Add(1)), []*pallas.Value{zeros},
			func(st *pallas.Value, c []*pallas.Value) []*pallas.Value {
				a, out := stepA.Load(st), stepOut.Load(st)
				last := out.Lt(0)
				i, outRows, outCols := at(pallas.Where(last, out.Neg().Sub(1), out))
				_, xRows := sparseRow(i, sbm, bm)
				x := blocks.Load(a.Div(parts), xRows, pallas.DS(a.Rem(parts).Mul(step), step))
				yb := y.Load(pallas.DS(stepY.Load(st), step), outCols)
				acc := c[0].Add(pallas.Dot(x, yb, xla.Float32))
				k.When(last, func() { o.Store(acc.Astype(o.DType()), outRows, outCols) })
				return []*pallas.Value{pallas.Where(last, zeros, acc)}
			})
	}
}

// buildDSDPersistent is BuildDSDTiled for t.Programs > 0 (t checked and
// completed there): main(the six Schedule arrays, blocks, y).
func buildDSDPersistent(s *BlockCOO, n int64, t DSDTiling, dt xla.DType, backend pallas.Backend, params pallas.CompilerParams) (*stablehlo.Module, error) {
	sc, err := s.Schedule(n, t)
	if err != nil {
		return nil, err
	}
	var args []stablehlo.Type
	for _, a := range sc.arrays() {
		args = append(args, stablehlo.Tensor(xla.Int32, int64(len(a))))
	}
	b := stablehlo.NewBuilder("dsd_persistent")
	fb := b.NewFunction("main", append(args, stablehlo.Tensor(dt, s.storedBlocks(), s.BM, s.BK), stablehlo.Tensor(dt, s.K, n))...)
	spec := pallas.CallSpec{
		Name:              "dsd_persistent",
		OutShapes:         []xla.Shape{xla.MakeShape(dt, s.M, n)},
		Grid:              []int64{t.Programs},
		NumScalarPrefetch: len(args),
		Backend:           backend,
		CompilerParams:    params,
	}
	fb.Return(pallas.Call(fb, dsdPersistentKernel(s.BM, s.BK, t, s.M/t.BM), spec, fb.Args()...)...)
	return b.Build()
}
