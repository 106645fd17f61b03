// Command pallas_masked_matmul is seed 001's dense @ dense matmul with a
// block-sparse output mask: sparsifyMask turns an (M, N) mask into a block
// mask, the distinct non-zero mask blocks, and prefetch maps that point
// every grid cell at the next non-zero block, so the index maps of skipped
// cells name a block that is needed next instead of fetching new ones. The
// kernel skips the matmul of all-zero output blocks (When on a prefetched
// scalar) and multiplies the result by the mask block. The example uses a
// lower-triangular mask.
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// SparseMask is sparsifyMask's result; the maps are (M/bm, N/bn) row-major.
type SparseMask struct {
	GM, GN int64 // the block grid: M/bm rows, N/bn columns
	// BlockMask is 0 where the mask block is all zeros, 2 where it is all
	// ones (nothing to multiply), else 1.
	BlockMask []int32
	// PrefetchMask, PrefetchI and PrefetchJ name, for every block, the
	// distinct mask block (an index into Data) and the block row and
	// column of the next non-zero block in row-major order (the block
	// itself when it is non-zero).
	PrefetchMask, PrefetchI, PrefetchJ []int32
	Data                               []float32 // the distinct non-zero blocks, (NumData, bm, bn)
	NumData                            int64     // how many distinct non-zero blocks
}

// sparsifyMask walks the blocks backwards so each cell learns the next
// non-zero block (row-major order), as seed 001's sparsify_mask does.
func sparsifyMask(mask []float32, m, n, bm, bn int64) *SparseMask {
	gm, gn := m/bm, n/bn
	s := &SparseMask{GM: gm, GN: gn, BlockMask: make([]int32, gm*gn), PrefetchMask: make([]int32, gm*gn),
		PrefetchI: make([]int32, gm*gn), PrefetchJ: make([]int32, gm*gn)}
	kinds := map[string]int32{} // distinct block (its bits) -> data index
	bits := make([]byte, 4*bm*bn)
	nextType, nextI, nextJ := int32(0), int32(gm-1), int32(gn-1)
	for i := gm - 1; i >= 0; i-- {
		for j := gn - 1; j >= 0; j-- {
			blk := make([]float32, bm*bn)
			nonzero, ones := false, true
			for a := int64(0); a < bm; a++ {
				for b := int64(0); b < bn; b++ {
					v := mask[(i*bm+a)*n+j*bn+b]
					blk[a*bn+b] = v
					binary.LittleEndian.PutUint32(bits[4*(a*bn+b):], math.Float32bits(v))
					nonzero = nonzero || v != 0
					ones = ones && v == 1
				}
			}
			c := i*gn + j
			if nonzero {
				t, seen := kinds[string(bits)]
				if !seen {
					t = int32(len(kinds))
					kinds[string(bits)] = t
					s.Data = append(s.Data, blk...)
				}
				nextType, nextI, nextJ = t, int32(i), int32(j)
				s.BlockMask[c] = 1
				if ones {
					s.BlockMask[c] = 2
				}
			}
			s.PrefetchMask[c], s.PrefetchI[c], s.PrefetchJ[c] = nextType, nextI, nextJ
		}
	}
	s.NumData = int64(len(kinds))
	return s
}

func maskedMatmulKernel(k *pallas.Kernel, refs []*pallas.Ref) {
	blockMask := refs[0]
	x, y, maskRef, o, acc := refs[4], refs[5], refs[6], refs[7], refs[8]
	i, j, kk := k.ProgramID(0), k.ProgramID(1), k.ProgramID(2)
	shouldCompute := blockMask.Load(i, j).Ne(0)
	k.When(kk.Eq(0), func() {
		o.Store(0.0)
		acc.Store(0.0)
	})
	k.When(shouldCompute, func() {
		acc.Store(acc.Load().Add(pallas.Dot(x.Load(), y.Load(), xla.Float32)))
	})
	// A skipped block keeps the zeros stored at its first step (seed 001
	// multiplies them by its mask block too, which a TPU does for free and
	// the interpreter does not).
	k.When(kk.Eq(k.NumPrograms(2).Sub(1)).And(shouldCompute), func() {
		o.Store(maskRef.Load(0).Mul(acc.Load()).Astype(o.DType()))
	})
}

// BuildMaskedMatmul emits main(block_mask, prefetch_mask, prefetch_i,
// prefetch_j i32[gm,gn], x f32[m,k], y f32[k,n], mask_data f32[nd,bm,bn])
// = mask * (x @ y).
func BuildMaskedMatmul(s *SparseMask, m, kdim, n, bm, bn, bk int64, checks bool) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("masked_matmul")
	pm := stablehlo.Tensor(xla.Int32, s.GM, s.GN)
	fb := b.NewFunction("main", pm, pm, pm, pm, stablehlo.Tensor(xla.Float32, m, kdim), stablehlo.Tensor(xla.Float32, kdim, n),
		stablehlo.Tensor(xla.Float32, s.NumData, bm, bn))
	kFetch := func(g []*pallas.Value, pf []*pallas.Ref) *pallas.Value {
		// Zero the k index of skipped blocks so they fetch nothing new.
		return pf[0].Load(g[0], g[1]).Ne(0).Astype(xla.Int32).Mul(g[2])
	}
	xMap := func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{pf[2].Load(g[0], g[1]), kFetch(g, pf)} }
	yMap := func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{kFetch(g, pf), pf[3].Load(g[0], g[1])} }
	maskMap := func(g []*pallas.Value, pf []*pallas.Ref) []any { return []any{pf[1].Load(g[0], g[1]), 0, 0} }
	oMap := func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], g[1]} }
	spec := pallas.CallSpec{
		Name:              "sparse_mask_matmul",
		OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, m, n)},
		Grid:              []int64{m / bm, n / bn, kdim / bk},
		NumScalarPrefetch: 4,
		InSpecs: []*pallas.BlockSpec{
			{BlockShape: []int64{bm, bk}, IndexMap: xMap},
			{BlockShape: []int64{bk, bn}, IndexMap: yMap},
			{BlockShape: []int64{1, bm, bn}, IndexMap: maskMap},
		},
		OutSpecs:       []*pallas.BlockSpec{{BlockShape: []int64{bm, bn}, IndexMap: oMap}},
		ScratchShapes:  []xla.Shape{xla.MakeShape(xla.Float32, bm, bn)},
		CompilerParams: pallas.CompilerParams{NoBoundsChecks: !checks},
	}
	fb.Return(pallas.Call(fb, maskedMatmulKernel, spec, fb.Args()...)...)
	return b.Build()
}

// maskedBlockKernel is the masked matmul in the form a GPU runs, where
// grid steps run in parallel and keep nothing from one to the next: one
// program per output block (i, j) skips everything when the block mask is
// zero (it stores zeros), else loops over K in steps of bk, accumulating
// in a loop-carried value, and multiplies by its distinct mask block
// unless the block mask says it is all ones (most blocks of a triangle:
// neither the mask block's load nor the multiply).
// Loads are explicit, so a skipped block reads nothing: the prefetch maps
// that steer a pipeline to the next non-zero block are not needed. Refs:
// block_mask, mask_index (prefetch), the x block row (bm, K), the y block
// column (K, bn), the distinct mask blocks (whole array), the output block.
func maskedBlockKernel(t Tiling, kdim, gm, gn int64) pallas.KernelFunc {
	bm, bn, bk := t.BM, t.BN, t.BK
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		blockMask, maskIndex, x, y, maskData, o := refs[0], refs[1], refs[2], refs[3], refs[4], refs[5]
		i, j := t.block(k.ProgramID(0), k.ProgramID(1), gm, gn)
		flag := blockMask.Load(i, j)
		k.When(flag.Ne(0), func() {
			acc := k.ForLoop(0, kdim/bk, []*pallas.Value{k.Zeros(xla.Float32, bm, bn)},
				func(kk *pallas.Value, c []*pallas.Value) []*pallas.Value {
					xb := x.Load(pallas.All, pallas.DS(kk.Mul(bk), bk))
					yb := y.Load(pallas.DS(kk.Mul(bk), bk), pallas.All)
					return []*pallas.Value{c[0].Add(pallas.Dot(xb, yb, xla.Float32))}
				})
			k.When(flag.Eq(2), func() { o.Store(acc[0].Astype(o.DType())) })
			k.When(flag.Eq(1), func() {
				m := maskData.Load(maskIndex.Load(i, j), pallas.All, pallas.All).Astype(xla.Float32)
				o.Store(m.Mul(acc[0]).Astype(o.DType()))
			})
		})
		k.When(flag.Eq(0), func() { o.Store(0.0) })
	}
}

// Tiling is how BuildMaskedMatmulBlocks splits the product: output blocks
// of BM x BN, K in steps of BK, and the order of the programs.
type Tiling struct {
	BM, BN int64 // the output block: BM rows, BN columns
	BK     int64 // the K step of the block products
	// Group, when not 0, orders the programs (launched first grid index
	// fastest) in groups of Group block rows walked column by column,
	// so that programs running together share operand blocks in the
	// GPU's L2 cache; it must divide the number of block rows. 0 keeps
	// program (i, j) on output block (i, j).
	Group int64
}

// block maps grid indices (g0, g1) of a gm x gn grid to the output block
// (i, j) they compute.
func (t Tiling) block(g0, g1 *pallas.Value, gm, gn int64) (i, j *pallas.Value) {
	if t.Group == 0 {
		return g0, g1
	}
	l := g0.Add(g1.Mul(gm)) // launch order
	per := t.Group * gn     // programs per group of block rows
	r := l.Rem(per)         // place in the group
	i = l.Div(per).Mul(t.Group).Add(r.Rem(t.Group))
	return i, r.Div(t.Group)
}

// BuildMaskedMatmulBlocks emits main(block_mask, mask_index i32[gm,gn], x
// dt[m,k], y dt[k,n], mask_data dt[nd,bm,bn]) -> dt[m,n] = mask * (x @ y)
// with maskedBlockKernel on the given backend (pallas.Interpret or
// pallas.Triton), tiled as t; products accumulate in f32 whatever dt (f32,
// or bf16 as on a GPU); mask_index is SparseMask.PrefetchMask, which
// names the distinct mask block of every non-zero block. params are the
// call's compiler parameters (interpret mode's bounds checks, Triton's
// warps and stages).
func BuildMaskedMatmulBlocks(s *SparseMask, m, kdim, n int64, t Tiling, dt xla.DType, backend pallas.Backend, params pallas.CompilerParams) (*stablehlo.Module, error) {
	bm, bn := t.BM, t.BN
	gm, gn := m/bm, n/bn
	if t.Group < 0 || (t.Group > 0 && gm%t.Group != 0) {
		return nil, fmt.Errorf("masked matmul: group %d must divide the %d block rows", t.Group, gm)
	}
	b := stablehlo.NewBuilder("masked_matmul_blocks")
	pm := stablehlo.Tensor(xla.Int32, s.GM, s.GN)
	fb := b.NewFunction("main", pm, pm, stablehlo.Tensor(dt, m, kdim), stablehlo.Tensor(dt, kdim, n),
		stablehlo.Tensor(dt, s.NumData, bm, bn))
	spec := pallas.CallSpec{
		Name:              "masked_matmul_blocks",
		OutShapes:         []xla.Shape{xla.MakeShape(dt, m, n)},
		Grid:              []int64{gm, gn},
		NumScalarPrefetch: 2,
		InSpecs: []*pallas.BlockSpec{
			{BlockShape: []int64{bm, kdim}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any {
				i, _ := t.block(g[0], g[1], gm, gn)
				return []any{i, 0}
			}},
			{BlockShape: []int64{kdim, bn}, IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any {
				_, j := t.block(g[0], g[1], gm, gn)
				return []any{0, j}
			}},
			nil, // the distinct mask blocks, whole
		},
		OutSpecs: []*pallas.BlockSpec{{BlockShape: []int64{bm, bn},
			IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any {
				i, j := t.block(g[0], g[1], gm, gn)
				return []any{i, j}
			}}},
		Backend:        backend,
		CompilerParams: params,
	}
	fb.Return(pallas.Call(fb, maskedBlockKernel(t, kdim, gm, gn), spec, fb.Args()...)...)
	return b.Build()
}

// MaskedBlocksArgs are BuildMaskedMatmulBlocks's arguments, the floats
// rounded to dt.
func MaskedBlocksArgs(s *SparseMask, x, y []float32, m, k, n, bm, bn int64, dt xla.DType) []interpreter.Value {
	return []interpreter.Value{i32Tensor(s.BlockMask, s.GM, s.GN), i32Tensor(s.PrefetchMask, s.GM, s.GN),
		floatTensor(dt, x, m, k), floatTensor(dt, y, k, n), floatTensor(dt, s.Data, s.NumData, bm, bn)}
}

// BuildDense emits main(x dt[m,k], y dt[k,n]) = x @ y: the plain dense
// product, the baseline of the kernel's speed on a GPU.
func BuildDense(m, k, n int64, dt xla.DType) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("dense")
	fb := b.NewFunction("main", stablehlo.Tensor(dt, m, k), stablehlo.Tensor(dt, k, n))
	fb.Return(fb.Dot(fb.Arg(0), fb.Arg(1)))
	return b.Build()
}

// BuildDenseMasked emits main(mask, x, y) = mask * (x @ y).
func BuildDenseMasked(m, k, n int64) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("dense_masked")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, m, n), stablehlo.Tensor(xla.Float32, m, k), stablehlo.Tensor(xla.Float32, k, n))
	fb.Return(fb.Multiply(fb.Arg(0), fb.Dot(fb.Arg(1), fb.Arg(2))))
	return b.Build()
}

func f32Tensor(data []float32, dims ...int64) *interpreter.Tensor {
	return floatTensor(xla.Float32, data, dims...)
}

// floatTensor is a tensor of float type dt holding data rounded to dt;
// the callers' shapes match their data by construction.
func floatTensor(dt xla.DType, data []float32, dims ...int64) *interpreter.Tensor {
	t, err := interpreter.NewFloatTensor(dt, data, dims...)
	if err != nil {
		panic(err)
	}
	return t
}

func i32Tensor(data []int32, dims ...int64) *interpreter.Tensor {
	t := interpreter.NewTensor(xla.MakeShape(xla.Int32, dims...))
	copy(t.Data.([]int32), data)
	return t
}

// MaskedArgs are BuildMaskedMatmul's arguments.
func MaskedArgs(s *SparseMask, x, y []float32, m, k, n, bm, bn int64) []interpreter.Value {
	return []interpreter.Value{i32Tensor(s.BlockMask, s.GM, s.GN), i32Tensor(s.PrefetchMask, s.GM, s.GN),
		i32Tensor(s.PrefetchI, s.GM, s.GN), i32Tensor(s.PrefetchJ, s.GM, s.GN),
		f32Tensor(x, m, k), f32Tensor(y, k, n), f32Tensor(s.Data, s.NumData, bm, bn)}
}

// LowerTriangle is the (m, n) lower-triangular 0/1 mask.
func LowerTriangle(m, n int64) []float32 {
	mask := make([]float32, m*n)
	for i := int64(0); i < m; i++ {
		for j := int64(0); j <= i && j < n; j++ {
			mask[i*n+j] = 1
		}
	}
	return mask
}

// RunMaskedMatmul computes mask * (x @ y) with the kernel on the interpreter.
func RunMaskedMatmul(mask, x, y []float32, m, k, n, bm, bn, bk int64) ([]float32, error) {
	s := sparsifyMask(mask, m, n, bm, bn)
	mod, err := BuildMaskedMatmul(s, m, k, n, bm, bn, bk, true)
	if err != nil {
		return nil, err
	}
	return runF32(mod, MaskedArgs(s, x, y, m, k, n, bm, bn))
}

// RunMaskedMatmulBlocks computes mask * (x @ y) with the per-block (GPU)
// form of the kernel, in interpret mode on the interpreter.
func RunMaskedMatmulBlocks(mask, x, y []float32, m, k, n, bm, bn, bk int64) ([]float32, error) {
	s := sparsifyMask(mask, m, n, bm, bn)
	mod, err := BuildMaskedMatmulBlocks(s, m, k, n, Tiling{BM: bm, BN: bn, BK: bk}, xla.Float32, pallas.Interpret, pallas.CompilerParams{})
	if err != nil {
		return nil, err
	}
	return runF32(mod, MaskedBlocksArgs(s, x, y, m, k, n, bm, bn, xla.Float32))
}

// runF32 compiles mod, runs it on the interpreter and returns its f32
// result.
func runF32(mod *stablehlo.Module, args []interpreter.Value) ([]float32, error) {
	out, err := interpreter.RunModule(context.Background(), mod, "main", args...)
	if err != nil {
		return nil, err
	}
	return out[0].(*interpreter.Tensor).Data.([]float32), nil
}

func main() {
	const m, k, n, bm, bn, bk = 128, 128, 128, 32, 32, 64
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, m*k)
	y := make([]float32, k*n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range y {
		y[i] = float32(r.NormFloat64())
	}
	mask := LowerTriangle(m, n)
	for _, form := range []struct {
		name string
		run  func(mask, x, y []float32, m, k, n, bm, bn, bk int64) ([]float32, error)
	}{{"grid over K with prefetch maps (TPU form)", RunMaskedMatmul}, {"one program per output block (GPU form)", RunMaskedMatmulBlocks}} {
		got, err := form.run(mask, x, y, m, k, n, bm, bn, bk)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var sum float64
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var ref float32
				for l := 0; l < k; l++ {
					ref += x[i*k+l] * y[l*n+j]
				}
				d := float64(mask[i*n+j]*ref - got[i*n+j])
				if d < 0 {
					d = -d
				}
				sum += d
			}
		}
		// The tolerance leaves room for the summation order of the
		// machine's GEMM kernel (f32 sums of k products).
		if mean := sum / float64(m*n); mean > 1e-5 {
			fmt.Fprintf(os.Stderr, "%s: mean |result - ref| = %g, more than 1e-5\n", form.name, mean)
			os.Exit(1)
		}
		fmt.Printf("%s: matches mask * (x @ y) (mean |result - ref| below 1e-5)\n", form.name)
	}
}
