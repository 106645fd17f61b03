// Command pallas_quant_matmul is a matrix product with 4-bit weights, the
// kind of kernel that serves quantized language models ("w4a16"): the
// weights are stored packed, eight 4-bit values to an int32 along K, with
// a scale per group of Group rows of K and per output column. Each program
// computes a (BM, BN) block of x @ w: it loads a (BK/8, BN) block of
// packed words, unpacks it with shifts and masks (Shr, And, Stack),
// dequantizes it with its groups' scales to bf16, and multiplies it in
// with Dot, accumulating in f32. The weights take an eighth of the memory
// of f32 (a quarter of bf16), which is what makes such a product fast when
// it is bound by reading them. The same kernel runs in interpret mode
// (here, on the built-in interpreter) and as a Triton kernel on a GPU.
package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Shape is a product x[M, K] @ w[K, N] with w quantized in groups of
// Group rows, computed in (BM, BN) blocks over K steps of BK (a multiple
// of 8 and of Group, or a divisor of Group).
type Shape struct {
	M, N, K, Group int64
	BM, BN, BK     int64
}

// check reports a shape the kernel does not take. (On Triton the blocks'
// dims, BK/8 and the scale rows a step reads must be powers of two too:
// the lowering says so.)
func (s Shape) check() error {
	switch {
	case min(s.M, s.N, s.K, s.Group, s.BM, s.BN, s.BK) <= 0:
		return fmt.Errorf("shape %+v: every size must be positive", s)
	case s.M%s.BM != 0 || s.N%s.BN != 0 || s.K%s.BK != 0:
		return fmt.Errorf("blocks %dx%d, K steps of %d do not divide %dx%d, K %d", s.BM, s.BN, s.BK, s.M, s.N, s.K)
	case s.BK%8 != 0:
		return fmt.Errorf("K steps of %d: a multiple of 8 (the values of a word) is needed", s.BK)
	case s.Group <= 0 || s.K%s.Group != 0 || (s.BK%s.Group != 0 && s.Group%s.BK != 0):
		return fmt.Errorf("groups of %d for K %d and K steps of %d: a group divides K and divides, or is a multiple of, a step", s.Group, s.K, s.BK)
	}
	return nil
}

// unpack spreads packed words q[R, N] to their 4-bit values [8R, N]: row
// 8r+j holds bits 4j..4j+3 of row r, an unsigned value in [0, 16).
func unpack(q *pallas.Value) *pallas.Value {
	parts := make([]*pallas.Value, 8)
	for j := range parts {
		parts[j] = q.Shr(4 * j).And(15)
	}
	sh := q.Shape()
	return pallas.Stack(1, parts...).Reshape(8*sh[0], sh[1]) // [R, 8, N] -> [8R, N]
}

// quantKernel's refs: x (BM, K) bf16 rows of this program, packed (K/8,
// BN) int32 and scales (K/Group, BN) f32 of its columns, out (BM, BN) f32.
func quantKernel(s Shape) pallas.KernelFunc {
	return func(k *pallas.Kernel, refs []*pallas.Ref) {
		x, packed, scales, out := refs[0], refs[1], refs[2], refs[3]
		groups := max(s.BK/s.Group, 1) // scale rows a step uses
		acc := k.ForLoop(0, s.K/s.BK, []*pallas.Value{k.Zeros(xla.Float32, s.BM, s.BN)},
			func(i *pallas.Value, c []*pallas.Value) []*pallas.Value {
				xs := x.Load(pallas.All, pallas.DS(i.Mul(s.BK), s.BK))
				w := unpack(packed.Load(pallas.DS(i.Mul(s.BK/8), s.BK/8), pallas.All)).Sub(8).Astype(xla.Float32)
				row := i.Mul(s.BK).Div(s.Group) // the first group of the step
				sc := scales.Load(pallas.DS(row, groups), pallas.All)
				rows := s.BK / groups // of w under one scale row
				w = w.Reshape(groups, rows, s.BN).Mul(sc.ExpandDims(1)).Reshape(s.BK, s.BN)
				return []*pallas.Value{c[0].Add(pallas.Dot(xs, w.Astype(xla.BFloat16), xla.Float32))}
			})
		out.Store(acc[0])
	}
}

// quantSpec is the call: a program per (BM, BN) block of the output.
func quantSpec(s Shape, backend pallas.Backend) pallas.CallSpec {
	rows := &pallas.BlockSpec{BlockShape: []int64{s.BM, s.K},
		IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], 0} }}
	cols := func(r int64) *pallas.BlockSpec {
		return &pallas.BlockSpec{BlockShape: []int64{r, s.BN},
			IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{0, g[1]} }}
	}
	return pallas.CallSpec{
		Name:      "quant_matmul",
		Backend:   backend,
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, s.M, s.N)},
		Grid:      []int64{s.M / s.BM, s.N / s.BN},
		InSpecs:   []*pallas.BlockSpec{rows, cols(s.K / 8), cols(s.K / s.Group)},
		OutSpecs: []*pallas.BlockSpec{{BlockShape: []int64{s.BM, s.BN},
			IndexMap: func(g []*pallas.Value, _ []*pallas.Ref) []any { return []any{g[0], g[1]} }}},
		CompilerParams: pallas.CompilerParams{NumWarps: 4, NumStages: 3},
	}
}

// buildQuant emits main(x bf16[M, K], packed i32[K/8, N], scales
// f32[K/Group, N]) -> f32[M, N]: the call of quantSpec.
func buildQuant(s Shape, backend pallas.Backend) (*stablehlo.Module, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	bld := stablehlo.NewBuilder("pallas_quant_matmul")
	fb := bld.NewFunction("main", stablehlo.Tensor(xla.BFloat16, s.M, s.K), stablehlo.Tensor(xla.Int32, s.K/8, s.N),
		stablehlo.Tensor(xla.Float32, s.K/s.Group, s.N))
	fb.Return(pallas.Call(fb, quantKernel(s), quantSpec(s, backend), fb.Args()...)...)
	return bld.Build()
}

// Quantized is w[K, N] in 4 bits: Packed (K/8, N), eight values of a
// column to a word (value j of a word in bits 4j..4j+3, row 8r+j of w),
// each the nearest of -8..7 times its group's scale plus 8, and Scales
// (K/Group, N), max |w| of each group and column over 7.
type Quantized struct {
	Packed []int32
	Scales []float32
}

// quantize is w[K, N] in groups of s.Group rows.
func quantize(s Shape, w []float32) Quantized {
	K, N, G := int(s.K), int(s.N), int(s.Group)
	q := Quantized{Packed: make([]int32, K/8*N), Scales: make([]float32, K/G*N)}
	for g := 0; g < K/G; g++ {
		for n := 0; n < N; n++ {
			var m float64
			for r := g * G; r < (g+1)*G; r++ {
				m = math.Max(m, math.Abs(float64(w[r*N+n])))
			}
			scale := float32(m / 7)
			if scale == 0 {
				scale = 1
			}
			q.Scales[g*N+n] = scale
			for r := g * G; r < (g+1)*G; r++ {
				v := int32(math.Max(-8, math.Min(7, math.RoundToEven(float64(w[r*N+n]/scale))))) + 8
				q.Packed[r/8*N+n] |= v << (4 * (r % 8))
			}
		}
	}
	return q
}

// dequantize is the bf16 weights the kernel multiplies by: (value - 8) ·
// scale in f32, rounded to bf16.
func dequantize(s Shape, q Quantized) []float64 {
	K, N := int(s.K), int(s.N)
	w := make([]float64, K*N)
	for r := 0; r < K; r++ {
		for n := 0; n < N; n++ {
			v := (q.Packed[r/8*N+n] >> (4 * (r % 8))) & 15
			f := float32(v-8) * q.Scales[r/int(s.Group)*N+n]
			w[r*N+n] = float64(interpreter.RoundNarrow64(xla.BFloat16, float64(f)))
		}
	}
	return w
}

// inputs returns x (bf16, uniform in [-1, 1)) and w (f32, normal with
// standard deviation 0.05) of s.
func inputs(seed uint64, s Shape) (x *interpreter.Tensor, w []float32) {
	r := rand.New(rand.NewPCG(seed, 11))
	x = interpreter.NewTensor(xla.MakeShape(xla.BFloat16, s.M, s.K))
	xs := x.Data.([]float32) // bf16 values, held as f32
	for i := range xs {
		xs[i] = interpreter.RoundNarrow64(xla.BFloat16, 2*r.Float64()-1)
	}
	w = make([]float32, s.K*s.N)
	for i := range w {
		w[i] = float32(0.05 * r.NormFloat64())
	}
	return x, w
}

// args are the call's operands: x, the packed weights and the scales.
func args(s Shape, x *interpreter.Tensor, q Quantized) []*interpreter.Tensor {
	packed := interpreter.NewTensor(xla.MakeShape(xla.Int32, s.K/8, s.N))
	copy(packed.Data.([]int32), q.Packed)
	scales := interpreter.NewTensor(xla.MakeShape(xla.Float32, s.K/s.Group, s.N))
	copy(scales.Data.([]float32), q.Scales)
	return []*interpreter.Tensor{x, packed, scales}
}

// goProduct is x @ w in float64, x read from its bf16 tensor.
func goProduct(s Shape, x *interpreter.Tensor, w []float64) []float64 {
	xs := x.Data.([]float32)
	M, N, K := int(s.M), int(s.N), int(s.K)
	out := make([]float64, M*N)
	for m := 0; m < M; m++ {
		for kk := 0; kk < K; kk++ {
			a := float64(xs[m*K+kk])
			for n := 0; n < N; n++ {
				out[m*N+n] += a * w[kk*N+n]
			}
		}
	}
	return out
}

// run compiles mod on the built-in interpreter and runs it on args.
func run(mod *stablehlo.Module, args ...*interpreter.Tensor) (*interpreter.Tensor, error) {
	vals := make([]interpreter.Value, len(args))
	for i, a := range args {
		vals[i] = a
	}
	out, err := interpreter.RunModule(context.Background(), mod, "main", vals...)
	if err != nil {
		return nil, err
	}
	return out[0].(*interpreter.Tensor), nil
}

func main() {
	s := Shape{M: 32, N: 64, K: 256, Group: 64, BM: 16, BN: 32, BK: 64}
	mod, err := buildQuant(s, pallas.Interpret)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	x, w := inputs(1, s)
	q := quantize(s, w)
	got, err := run(mod, args(s, x, q)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exact := goProduct(s, x, dequantize(s, q))
	wf := make([]float64, len(w))
	for i, v := range w {
		wf[i] = float64(v)
	}
	full := goProduct(s, x, wf)
	var worst, qerr, norm float64
	for i, g := range got.Data.([]float32) {
		worst = math.Max(worst, math.Abs(float64(g)-exact[i]))
		qerr += (float64(g) - full[i]) * (float64(g) - full[i])
		norm += full[i] * full[i]
	}
	y := got.Data.([]float32)
	fmt.Printf("4-bit weights, %dx%d @ %dx%d in groups of %d: out[0, :3] = [%.4f %.4f %.4f]\n",
		s.M, s.K, s.K, s.N, s.Group, y[0], y[1], y[2])
	fmt.Printf("weights in %d bytes (f32: %d)\n", 4*len(q.Packed)+4*len(q.Scales), 4*len(w))
	fmt.Printf("the dequantized product's within 1e-4: %v\n", worst < 1e-4)
	fmt.Printf("relative error against the f32 weights (quantization): %.3f\n", math.Sqrt(qerr/norm))
}
