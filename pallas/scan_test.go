package pallas

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Cumulative scans (Cumsum, Cumprod, Cummax, Cummin) of every kind along
// both axes of a 2-D block (and a middle axis of a 3-D one), checked
// against Go's sequential fold in interpret mode, as TTIR on the evaluator
// (programs in both orders) and on the IR contract's reference evaluator.
// scanCases are part of tritonCases, so they also pass through mlir-opt,
// the golden-free Triton tests and, with HALO_PLUGIN, a real GPU.

var scanKinds = []string{"sum", "prod", "max", "min"}

// scanOf is v's scan of kind along axis.
func scanOf(v *Value, kind string, axis int, order ...ScanOrder) *Value {
	switch kind {
	case "sum":
		return v.Cumsum(axis, order...)
	case "prod":
		return v.Cumprod(axis, order...)
	case "max":
		return v.Cummax(axis, order...)
	}
	return v.Cummin(axis, order...)
}

// scanOutput is one output of a scan case: the kind, the axis, and the
// block shape it scans (the (4, 8) block reshaped; nil: as it is).
type scanOutput struct {
	kind    string
	axis    int
	shape   []int64
	reverse bool // from the end of the axis (Reverse)
}

// scanOutputs are the outputs of a scan case: each kind along axis 0 and
// -1 of the block, and in reverse along -1 (sums and maxima also along
// 0); with reshaped, also a cumsum along the middle axis of the block as
// (2, 2, 8), a cummax of it as a vector and a reverse cumprod of it as
// (4, 2, 4) along the middle axis.
func scanOutputs(reshaped bool) []scanOutput {
	var outs []scanOutput
	for _, kind := range scanKinds {
		outs = append(outs, scanOutput{kind, 0, nil, false}, scanOutput{kind, -1, nil, false}, scanOutput{kind, -1, nil, true})
		if kind == "sum" || kind == "max" {
			outs = append(outs, scanOutput{kind, 0, nil, true})
		}
	}
	if reshaped {
		outs = append(outs, scanOutput{"sum", 1, []int64{2, 2, 8}, false}, scanOutput{"max", 0, []int64{32}, false},
			scanOutput{"prod", 1, []int64{4, 2, 4}, true})
	}
	return outs
}

// scanResultType is the dtype of a scan of kind of dt (bools count in i32).
func scanResultType(dt xla.DType, kind string) xla.DType {
	if dt.IsBool() && (kind == "sum" || kind == "prod") {
		return xla.Int32
	}
	return dt
}

// scanCase loads (4, 8) blocks of x, an (8, 16) array, over a (2, 2) grid
// and stores the scans of outs, each into an output of x's shape.
func scanCase(name string, x *interpreter.Tensor, outs []scanOutput) tritonCase {
	dt := x.Shape.DType
	block := func() *BlockSpec {
		return &BlockSpec{BlockShape: []int64{4, 8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}
	}
	spec := CallSpec{Name: name, Grid: []int64{2, 2}, InSpecs: []*BlockSpec{block()}}
	for _, o := range outs {
		spec.OutShapes = append(spec.OutShapes, xla.MakeShape(scanResultType(dt, o.kind), 8, 16))
		spec.OutSpecs = append(spec.OutSpecs, block())
	}
	return tritonCase{
		name: name,
		kernel: func(k *Kernel, refs []*Ref) {
			v := refs[0].Load()
			for i, o := range outs {
				w := v
				if o.shape != nil {
					w = v.Reshape(o.shape...)
				}
				order := Forward
				if o.reverse {
					order = Reverse
				}
				refs[1+i].Store(scanOf(w, o.kind, o.axis, order).Reshape(4, 8))
			}
		},
		spec: spec,
		args: []*interpreter.Tensor{x},
	}
}

// scanInput is a scan case's name, input and outputs.
type scanInput struct {
	name string
	x    *interpreter.Tensor
	outs []scanOutput
}

// scanInputs are the inputs of the scan kernels of tritonCases: i32, u32
// and i64 whose sums and products wrap (and whose maxima compare unsigned
// for u32), f32 and f64 of values whose sums and products are exact (any
// order gives the same bits), bf16 whose sums and products round once
// from f32 (a sum of 3s past 256 rounds differently step by step), f32
// infinities, NaNs and signed zeros, and bools.
func scanInputs() []scanInput {
	dims := []int64{8, 16}
	hash := func(i int) int64 { return int64(uint64(i+1) * 0x9E3779B97F4A7C15 >> 3) }
	exact := []float64{1, -1, 2, 0.5, 3, -0.25, 1.5, -2, 0, -3, 0.75, 1}
	bf := []float64{3, 96, 24, -3, 1.5, 48, 6, 96, 12, -1, 96, 3, 0.5}
	special := []float64{1, math.NaN(), math.Inf(1), math.Copysign(0, -1), 0, math.Inf(-1), -2, math.Copysign(0, -1), 3, math.Copysign(0, -1), 0.5}
	return []scanInput{
		{"scan_i32", intTensor(xla.Int32, dims, hash), scanOutputs(true)},
		{"scan_u32", intTensor(xla.Uint32, dims, hash), scanOutputs(false)},
		{"scan_i64", intTensor(xla.Int64, dims, func(i int) int64 { return hash(i) * 977 }), scanOutputs(false)},
		{"scan_f32", floatTensor(xla.Float32, dims, func(i int) float64 { return exact[(i*7)%len(exact)] }), scanOutputs(true)},
		{"scan_f64", floatTensor(xla.Float64, dims, func(i int) float64 { return exact[(i*5)%len(exact)] / 64 }), scanOutputs(false)},
		{"scan_bf16", floatTensor(xla.BFloat16, dims, func(i int) float64 { return bf[(i*3)%len(bf)] }), scanOutputs(false)},
		{"scan_f32_special", floatTensor(xla.Float32, dims, func(i int) float64 { return special[(i*5)%len(special)] }), scanOutputs(false)},
		{"scan_bool", boolTensor(dims, func(i int) bool { return i%3 == 0 || i%7 == 2 }), scanOutputs(true)},
	}
}

// scanCases are the scan kernels of tritonCases (scanInputs).
func scanCases() []tritonCase {
	var cases []tritonCase
	for _, s := range scanInputs() {
		cases = append(cases, scanCase(s.name, s.x, s.outs))
	}
	return cases
}

// boolTensor is a bool tensor of f(i).
func boolTensor(dims []int64, f func(i int) bool) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(xla.Bool, dims...))
	d := x.Data.([]bool)
	for i := range d {
		d[i] = f(i)
	}
	return x
}

// scanElems reads a tensor's elements as float64 (floats) or int64
// (integers, unsigned ones by value; bools 0 or 1).
func scanElems(x *interpreter.Tensor) (fs []float64, is []int64) {
	v := reflect.ValueOf(x.Data)
	for i := 0; i < v.Len(); i++ {
		e := v.Index(i)
		switch e.Kind() {
		case reflect.Float32, reflect.Float64:
			fs = append(fs, e.Float())
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			is = append(is, e.Int())
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			is = append(is, int64(e.Uint()))
		case reflect.Bool:
			is = append(is, b2i(e.Bool()))
		default:
			panic(fmt.Sprintf("scanElems: %v", e.Kind()))
		}
	}
	return fs, is
}

// goMax and goMin are max and min as the kernel language defines them:
// NaN propagates, -0 is below +0.
func goMax(a, b float64) float64 {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return math.NaN()
	case a == b:
		if math.Signbit(a) {
			return b
		}
		return a
	case a > b:
		return a
	}
	return b
}

func goMin(a, b float64) float64 { return -goMax(-a, -b) }

// wrapTo wraps v to dt's width (unsigned: its value).
func wrapTo(dt xla.DType, v int64) int64 {
	switch dt {
	case xla.Int32:
		return int64(int32(v))
	case xla.Uint32:
		return int64(uint32(v))
	case xla.Bool, xla.Uint8:
		return int64(uint8(v))
	}
	return v
}

// goScan is the scan of kind along axis of a block of shape, in order;
// floats are folded in float64 and each output rounded once to dt (for
// the test data, float64 folds exactly), integers wrap to dt.
func goScan(fs []float64, is []int64, shape []int64, axis int, kind string, dt xla.DType) ([]float64, []int64) {
	if axis < 0 {
		axis += len(shape)
	}
	stride := 1
	for _, d := range shape[axis+1:] {
		stride *= int(d)
	}
	n := len(fs) + len(is)
	rf, ri := make([]float64, len(fs)), make([]int64, len(is))
	acc := make([]float64, len(fs))
	for k := 0; k < n; k++ {
		first := k/stride%int(shape[axis]) == 0
		if fs != nil {
			v := fs[k]
			switch {
			case first && kind == "sum":
				v = 0 + v // sums start from +0
			case first:
			case kind == "sum":
				v = acc[k-stride] + v
			case kind == "prod":
				v = acc[k-stride] * v
			case kind == "max":
				v = goMax(acc[k-stride], v)
			default:
				v = goMin(acc[k-stride], v)
			}
			acc[k] = v
			rf[k] = float64(interpreter.RoundNarrow64(dt, v))
			if dt == xla.Float64 {
				rf[k] = v
			}
			continue
		}
		v := is[k]
		if !first {
			p := ri[k-stride]
			less := p < v
			if dt.IsUnsigned() {
				less = uint64(p) < uint64(v)
			}
			switch kind {
			case "sum":
				v = p + v
			case "prod":
				v = p * v
			case "max":
				if !less {
					v = p
				}
			default:
				if less {
					v = p
				}
			}
		}
		ri[k] = wrapTo(dt, v)
	}
	return rf, ri
}

// scanWant is the Go fold of output o of scanCase c on its input.
func scanWant(c tritonCase, o scanOutput) ([]float64, []int64) {
	x := c.args[0]
	dt := scanResultType(x.Shape.DType, o.kind)
	fs, is := scanElems(x)
	const rows, cols, br, bc = 8, 16, 4, 8
	wf, wi := make([]float64, len(fs)), make([]int64, len(is))
	shape := o.shape
	if shape == nil {
		shape = []int64{br, bc}
	}
	for r0 := 0; r0 < rows; r0 += br {
		for c0 := 0; c0 < cols; c0 += bc {
			var bf []float64
			var bi []int64
			for r := r0; r < r0+br; r++ {
				for cc := c0; cc < c0+bc; cc++ {
					if fs != nil {
						bf = append(bf, fs[r*cols+cc])
					} else {
						bi = append(bi, is[r*cols+cc])
					}
				}
			}
			if o.reverse { // the forward scan of the block flipped, flipped back
				bf, bi = flipAxis(bf, shape, o.axis), flipAxis(bi, shape, o.axis)
			}
			sf, si := goScan(bf, bi, shape, o.axis, o.kind, dt)
			if o.reverse {
				sf, si = flipAxis(sf, shape, o.axis), flipAxis(si, shape, o.axis)
			}
			for k := 0; k < br*bc; k++ {
				at := (r0+k/bc)*cols + c0 + k%bc
				if fs != nil {
					wf[at] = sf[k]
				} else {
					wi[at] = si[k]
				}
			}
		}
	}
	return wf, wi
}

// flipAxis is the row-major block x of shape with its elements along
// axis (negative counts from the end) in reverse order.
func flipAxis[T any](x []T, shape []int64, axis int) []T {
	if x == nil {
		return nil
	}
	if axis < 0 {
		axis += len(shape)
	}
	stride := 1
	for _, d := range shape[axis+1:] {
		stride *= int(d)
	}
	n := int(shape[axis])
	out := make([]T, len(x))
	for k := range x {
		i := k / stride % n
		out[k+(n-1-2*i)*stride] = x[k]
	}
	return out
}

// sameFloat is a == b to the bit but for NaN payloads.
func sameFloat(a, b float64) bool {
	return math.IsNaN(a) && math.IsNaN(b) || math.Float64bits(a) == math.Float64bits(b)
}

func TestScans(t *testing.T) {
	for _, s := range scanInputs() {
		c, outs := scanCase(s.name, s.x, s.outs), s.outs
		t.Run(c.name, func(t *testing.T) {
			checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
				for j, o := range outs {
					wf, wi := scanWant(c, o)
					gf, gi := scanElems(got[j])
					require.Equal(t, len(wf), len(gf), "%s: output %d (%s along %d)", backend, j, o.kind, o.axis)
					for k := range wf {
						require.True(t, sameFloat(wf[k], gf[k]), "%s: output %d (%s along %d of %v) element %d: got %v want %v\n got  %v\n want %v",
							backend, j, o.kind, o.axis, o.shape, k, gf[k], wf[k], gf, wf)
					}
					if len(wi)+len(gi) > 0 {
						require.Equal(t, wi, gi, "%s: output %d (%s along %d of %v)", backend, j, o.kind, o.axis, o.shape)
					}
				}
			})
		})
	}
}

// TestScanRoundsOnce: a bf16 cumsum rounds each element once from f32, as
// Sum: 3+96+96+96+3 is 294 (exact in bf16), where bf16 step by step gives
// 292+3, 296.
func TestScanRoundsOnce(t *testing.T) {
	x := floatTensor(xla.BFloat16, []int64{8}, func(i int) float64 { return []float64{3, 96, 96, 96, 3, 3, 3, 3}[i] })
	c := tritonCase{name: "scan_bf16_once", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Cumsum(0)) },
		spec: CallSpec{Name: "scan_bf16_once", OutShapes: []xla.Shape{xla.MakeShape(xla.BFloat16, 8)}}, args: []*interpreter.Tensor{x}}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		require.Equal(t, []float32{3, 99, 195, 292, 294, 296, 300, 304}, got[0].Data, backend)
	})
}

// TestScanSignedZeros: a cumsum of -0s is +0 (sums start from +0), a
// cumprod's zeros take the product's sign, a cummax of -0 then +0 is +0
// and a cummin -0, on every backend.
func TestScanSignedZeros(t *testing.T) {
	nz := math.Copysign(0, -1)
	x := floatTensor(xla.Float32, []int64{4}, func(i int) float64 { return []float64{nz, nz, 0, nz}[i] })
	f32 := xla.MakeShape(xla.Float32, 4)
	c := tritonCase{name: "scan_zeros", kernel: func(k *Kernel, r []*Ref) {
		v := r[0].Load()
		r[1].Store(v.Cumsum(0))
		r[2].Store(v.Cumprod(0))
		r[3].Store(v.Cummax(0))
		r[4].Store(v.Cummin(0))
	}, spec: CallSpec{Name: "scan_zeros", OutShapes: []xla.Shape{f32, f32, f32, f32}}, args: []*interpreter.Tensor{x}}
	want := [][]bool{{false, false, false, false}, {true, false, false, true}, {true, true, false, false}, {true, true, true, true}}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		for i, w := range want {
			for k, neg := range w {
				v := got[i].Data.([]float32)[k]
				require.True(t, v == 0 && math.Signbit(float64(v)) == neg, "%s: output %d element %d is %v", backend, i, k, v)
			}
		}
	})
}

// TestScanLowering checks the text of a scan on each backend: a
// reduce_window over the axis with low padding n-1 in interpret mode, and
// tt.scan with its combine region on Triton.
func TestScanLowering(t *testing.T) {
	c := scanCase("scan_text", intTensor(xla.Int32, []int64{8, 16}, func(i int) int64 { return int64(i) }), []scanOutput{{"max", -1, nil, false}})
	m := c.module(t, Interpret)
	require.Contains(t, m.String(), "stablehlo.reduce_window")
	require.Contains(t, m.String(), "padding = dense<[[0, 0], [7, 0]]>")
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	require.Regexp(t, `"tt.scan"\(%\w+\) <\{axis = 1 : i32, reverse = false\}> \(\{
\s+\^bb0\(%\w+: i32, %\w+: i32\):
\s+%\w+ = arith.maxsi %\w+, %\w+ : i32
\s+"tt.scan.return"\(%\w+\) : \(i32\) -> \(\)
\s+\}\) : \(tensor<4x8xi32>\) -> tensor<4x8xi32>`, k.IR)

	// In reverse: the forward window between two stablehlo.reverse ops;
	// tt.scan's reverse = true.
	c = scanCase("scan_text_reverse", intTensor(xla.Int32, []int64{8, 16}, func(i int) int64 { return int64(i) }), []scanOutput{{"sum", 0, nil, true}})
	text := c.module(t, Interpret).String()
	require.Contains(t, text, "padding = dense<[[3, 0], [0, 0]]>")
	require.Equal(t, 2, strings.Count(text, "stablehlo.reverse"), text)
	p, err = Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err = LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	require.Contains(t, k.IR, `"tt.scan"(`)
	require.Contains(t, k.IR, `<{axis = 0 : i32, reverse = true}>`)
}

// TestScanMisuse: a bad axis, a nil receiver and a complex operand are
// errors naming the op and the line.
func TestScanMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 2)}}
	f := func(k *Kernel) *Value { return k.Zeros(xla.Float32, 4, 2) }
	c64 := []stablehlo.TensorType{stablehlo.Tensor(xla.Complex64, 4, 2)}
	var nilValue *Value
	runMisuseCases(t, []misuseCase{
		{name: "cumsum over a missing axis", kernel: func(k *Kernel, r []*Ref) { r[0].Store(f(k).Cumsum(2)) }, spec: spec,
			want: []string{"cumsum at scan_test.go:", "bad axis 2 for rank 2"}},
		{name: "cummax over a negative axis past the rank", kernel: func(k *Kernel, r []*Ref) { r[0].Store(f(k).Cummax(-3)) }, spec: spec,
			want: []string{"cummax at scan_test.go:", "bad axis -3 for rank 2"}},
		{name: "cumprod of a scalar", kernel: func(k *Kernel, r []*Ref) { r[0].Store(f(k).Sum().Cumprod(0)) }, spec: spec,
			want: []string{"cumprod at scan_test.go:", "bad axis 0 for rank 0"}},
		{name: "cummin of a bool over a missing axis", kernel: func(k *Kernel, r []*Ref) { k.Zeros(xla.Bool, 4).Cummin(1) }, spec: spec,
			want: []string{"cummin at scan_test.go:", "bad axis 1 for rank 1"}},
		{name: "nil receiver of a scan", kernel: func(k *Kernel, r []*Ref) { nilValue.Cummax(0) }, spec: spec,
			want: []string{"cummax at scan_test.go:", "operand 0 is nil"}},
		{name: "two orders", kernel: func(k *Kernel, r []*Ref) { r[0].Store(f(k).Cumsum(0, Reverse, Forward)) }, spec: spec,
			want: []string{"cumsum at scan_test.go:", "want one order, pallas.Forward or pallas.Reverse, got [Reverse Forward]"}},
		{name: "an order out of range", kernel: func(k *Kernel, r []*Ref) { r[0].Store(f(k).Cummin(0, ScanOrder(7))) }, spec: spec,
			want: []string{"cummin at scan_test.go:", "want one order, pallas.Forward or pallas.Reverse, got [ScanOrder(7)]"}},
		{name: "cumsum of complex values", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Cumsum(0).Astype(xla.Float32)) },
			spec: spec, args: c64, want: []string{"cumsum at scan_test.go:", "not defined on complex<f32>"}},
	})
}

// TestScanRaceCheck: the Triton race check computes index arrays and masks
// through integer scans element by element (as through reductions), so
// programs whose accesses meet there are refused, and a scan's values are
// not one number (a splat's cumsum differs along the axis). Positions
// computed through float scans, as through float reductions, are judged
// by dependence.
func TestScanRaceCheck(t *testing.T) {
	f32 := func(n int64) []xla.Shape { return []xla.Shape{xla.MakeShape(xla.Float32, n)} }
	pf := func(k *Kernel, n int64) *Value { return k.ProgramID(0).Astype(xla.Float32).BroadcastTo(n) }
	refused := []struct {
		name   string
		kernel KernelFunc
		want   string
	}{
		// Windows of 4 at a stride of 1: [1..4] + p.
		{"index_cumsum_windows", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			Store(r[0], []any{k.Full(xla.Int32, 1, 4).Cumsum(0).Add(p)}, pf(k, 4), nil)
		}, "both reach its element"},
		// Program p stores where the running count is at most p+4.
		{"mask_cumsum_prefix", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			Store(r[0], nil, pf(k, 8), k.Full(xla.Int32, 1, 8).Cumsum(0).Le(p.Add(4)))
		}, "both reach its element"},
		// Windows of 4 from a reverse cumsum: [4..1] + p.
		{"index_reverse_cumsum_windows", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			Store(r[0], []any{k.Full(xla.Int32, 1, 4).Cumsum(0, Reverse).Add(p)}, pf(k, 4), nil)
		}, "both reach its element"},
		// Program p stores where the count from the end is at most p+4.
		{"mask_reverse_cumsum_suffix", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			Store(r[0], nil, pf(k, 8), k.Full(xla.Int32, 1, 8).Cumsum(0, Reverse).Le(p.Add(4)))
		}, "both reach its element"},
		// A running maximum of iota + p, the same positions moved.
		{"index_cummax_moved", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			Store(r[0], []any{k.Arange(4).Add(p).Cummax(0)}, pf(k, 4), nil)
		}, "both reach its element"},
		// The same values (1, 2, 3, 4) in every program, at positions the
		// program moves: not one number, so the positions matter.
		{"cumsum_values_moved", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[0].Store(k.Full(xla.Float32, 1.0, 4).Cumsum(0), k.Arange(4).Add(p).Rem(4))
		}, "both reach its element"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			assertRefusedRace(t, tritonCase{name: tc.name, kernel: tc.kernel, spec: CallSpec{Name: tc.name, Grid: []int64{2}, OutShapes: f32(8)}}, tc.want)
		})
	}
	accepted := []struct {
		name   string
		kernel KernelFunc
	}{
		// Index arrays and masks through scans that keep the programs'
		// elements apart, computed so.
		{"index_cumsum_apart", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			Store(r[0], []any{k.Full(xla.Int32, 1, 4).Cumsum(0).Sub(1).Add(p.Mul(4))}, pf(k, 4), nil)
		}},
		{"mask_cumsum_parity", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			Store(r[0], []any{Slice(0, 8)}, pf(k, 8), k.Full(xla.Int32, 1, 8).Cumsum(0).Rem(2).Eq(p))
		}},
		{"index_reverse_cummin_apart", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			// [0, 3, 1, 4] + 4p; its minimum from the end, [4p, 4p+1, 4p+1,
			// 4p+4], stored at the even lanes.
			x := k.Arange(4).Mul(3).Rem(5).Add(p.Mul(4)).Cummin(0, Reverse)
			Store(r[0], []any{x}, pf(k, 4), k.Arange(4).Rem(2).Eq(0))
		}},
		{"index_cumprod_apart", func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			pow2 := k.Full(xla.Int32, 2, 4).Cumprod(0) // [2, 4, 8, 16]
			Store(r[0], []any{pow2.Add(p)}, pf(k, 4), nil)
		}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			assertTritonMatchesInterpret(t, tritonCase{name: tc.name, kernel: tc.kernel, spec: CallSpec{Name: tc.name, Grid: []int64{2}, OutShapes: f32(32)}})
		})
	}
}

// TestScanEmpty: scans of values with no elements (along the empty axis
// or another) are empty in interpret mode, for every kind; a scan along
// an axis of one element is the element (a sum of -0 gives +0).
func TestScanEmpty(t *testing.T) {
	for _, kind := range scanKinds {
		for _, axis := range []int{0, 1} {
			got, err := runCall(func(k *Kernel, r []*Ref) { r[0].Store(scanOf(k.Zeros(xla.Int32, 0, 4), kind, axis).Sum(0)) },
				CallSpec{Name: "empty", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4)}})
			require.NoError(t, err, "%s along %d", kind, axis)
			require.Equal(t, []int32{0, 0, 0, 0}, got[0].Data, "%s along %d", kind, axis)
		}
	}
	nz := math.Copysign(0, -1)
	c := tritonCase{name: "scan_one", kernel: func(k *Kernel, r []*Ref) {
		v := r[0].Load().Reshape(4, 1)
		r[1].Store(v.Cumsum(1).Reshape(4))
		r[2].Store(v.Cummin(-1).Reshape(4))
	}, spec: CallSpec{Name: "scan_one", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 4)}},
		args: []*interpreter.Tensor{floatTensor(xla.Float32, []int64{4}, func(i int) float64 { return []float64{nz, 2, math.NaN(), -1}[i] })}}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		s, m := got[0].Data.([]float32), got[1].Data.([]float32)
		require.True(t, s[0] == 0 && !math.Signbit(float64(s[0])) && s[1] == 2 && s[2] != s[2] && s[3] == -1, "%s: cumsum %v", backend, s)
		require.True(t, m[0] == 0 && math.Signbit(float64(m[0])) && m[1] == 2 && m[2] != m[2] && m[3] == -1, "%s: cummin %v", backend, m)
	})
}
