package interpreter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// shpReduceSrc builds a main function that reduces %a (type in) with init %i
// across dims, whose region applies body ("stablehlo.add" takes the fast
// path, "shptest.add" the general one).
func shpReduceSrc(in, et, out, dims, body string) string {
	arr := "array<i64: " + dims + ">"
	if dims == "" {
		arr = "array<i64>"
	}
	return fmt.Sprintf(`func.func @main(%%a: %s, %%i: tensor<%s>) -> %s {
  %%0 = "stablehlo.reduce"(%%a, %%i) ({
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %%s = "%s"(%%x, %%y) : (tensor<%s>, tensor<%s>) -> tensor<%s>
    "stablehlo.return"(%%s) : (tensor<%s>) -> ()
  }) {dimensions = %s} : (%s, tensor<%s>) -> %s
  return %%0 : %s
}`, in, et, out, et, et, body, et, et, et, et, arr, in, et, out, out)
}

func TestReduce(t *testing.T) {
	i32, f32 := xla.Int32, xla.Float32
	a23 := shpIota(i32, shpDims(2, 3), 1) // [[1,2,3],[4,5,6]]
	for _, body := range []string{"stablehlo.add", "shptest.add"} {
		shpRunCases(t, []shpTestCase{
			{
				name: "spec example " + body,
				src:  shpReduceSrc("tensor<1x6xi32>", "i32", "tensor<1xi32>", "1", body),
				args: []Value{shpIota(i32, shpDims(1, 6), 0), shpT(i32, nil, 0)},
				dims: shpDims(1), want: []float64{15},
			},
			{
				name: "rows " + body,
				src:  shpReduceSrc("tensor<2x3xi32>", "i32", "tensor<2xi32>", "1", body),
				args: []Value{a23, shpT(i32, nil, 10)},
				dims: shpDims(2), want: []float64{16, 25},
			},
			{
				name: "columns " + body,
				src:  shpReduceSrc("tensor<2x3xi32>", "i32", "tensor<3xi32>", "0", body),
				args: []Value{a23, shpT(i32, nil, 0)},
				dims: shpDims(3), want: []float64{5, 7, 9},
			},
			{
				name: "all " + body,
				src:  shpReduceSrc("tensor<2x3xi32>", "i32", "tensor<i32>", "0, 1", body),
				args: []Value{a23, shpT(i32, nil, 0)},
				dims: shpDims(), want: []float64{21},
			},
			{
				name: "no dimensions " + body,
				src:  shpReduceSrc("tensor<2xi32>", "i32", "tensor<2xi32>", "", body),
				args: []Value{shpT(i32, shpDims(2), 3, 4), shpT(i32, nil, 100)},
				dims: shpDims(2), want: []float64{103, 104},
			},
			{
				name: "empty reduced dimension gives the init value " + body,
				src:  shpReduceSrc("tensor<2x0xi32>", "i32", "tensor<2xi32>", "1", body),
				args: []Value{shpT(i32, shpDims(2, 0)), shpT(i32, nil, 7)},
				dims: shpDims(2), want: []float64{7, 7},
			},
			{
				name: "middle dimension of a 3-D tensor " + body,
				src:  shpReduceSrc("tensor<2x3x2xf32>", "f32", "tensor<2x2xf32>", "1", body),
				args: []Value{shpIota(f32, shpDims(2, 3, 2), 0), shpT(f32, nil, 0)},
				dims: shpDims(2, 2), want: []float64{6, 9, 24, 27},
			},
		})
	}
}

// The fast path must give what the region would: NaN propagation and signed
// zeros for max/min, wrap-around for narrow integers, rounding for bf16,
// OR/AND for booleans.
func TestReduceFastPathSemantics(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name, et, body string
		in             []float64
		init           float64
		want           float64
	}{
		{"max propagates NaN", "f32", "stablehlo.maximum", []float64{1, nan, 3}, math.Inf(-1), nan},
		{"min propagates NaN", "f64", "stablehlo.minimum", []float64{1, nan, 3}, math.Inf(1), nan},
		{"max of signed zeros is +0", "f32", "stablehlo.maximum", []float64{math.Copysign(0, -1), 0}, math.Inf(-1), 0},
		{"i4 sum wraps", "i4", "stablehlo.add", []float64{7, 7, 3}, 0, 1},   // 17 mod 16
		{"ui2 sum wraps", "ui2", "stablehlo.add", []float64{3, 3, 3}, 0, 1}, // 9 mod 4
		{"i8 product wraps", "i8", "stablehlo.multiply", []float64{16, 16}, 1, 0},
		{"bf16 sum rounds each step", "bf16", "stablehlo.add", []float64{256, 1, 1}, 0, 256},
		{"bool add is or", "i1", "stablehlo.add", []float64{0, 1, 0}, 0, 1},
		{"bool multiply is and", "i1", "stablehlo.multiply", []float64{1, 1, 0}, 1, 0},
		{"ui32 max", "ui32", "stablehlo.maximum", []float64{4000000000, 5}, 0, 4000000000},
		{"i64 xor", "i64", "stablehlo.xor", []float64{5, 3}, 0, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dt, err := xla.ParseDType(c.et)
			require.NoError(t, err)
			in := fmt.Sprintf("tensor<%dx%s>", len(c.in), c.et)
			src := shpReduceSrc(in, c.et, "tensor<"+c.et+">", "0", c.body)
			out := shpRun(t, src, shpT(dt, shpDims(int64(len(c.in))), c.in...), shpT(dt, nil, c.init))
			got := shpVals(out[0])[0]
			if math.IsNaN(c.want) {
				assert.True(t, math.IsNaN(got), "got %v", got)
				return
			}
			assert.Equal(t, c.want, got)
			assert.Equal(t, math.Signbit(c.want), math.Signbit(got), "sign")
		})
	}
}

// A variadic reduce with a general region: argmax (value, index) pairs,
// ties going to the smaller index.
func TestReduceVariadicArgmax(t *testing.T) {
	src := `func.func @main(%v: tensor<2x4xf32>, %ix: tensor<2x4xi32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0:2 = "stablehlo.reduce"(%v, %ix, %ninf, %zero) ({
  ^bb0(%av: tensor<f32>, %ai: tensor<i32>, %bv: tensor<f32>, %bi: tensor<i32>):
    %gt = "shptest.cmp"(%av, %bv) {dir = "GT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %eq = "shptest.cmp"(%av, %bv) {dir = "EQ"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %lt = "shptest.cmp"(%ai, %bi) {dir = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %tie = "shptest.and"(%eq, %lt) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %keep = "shptest.or"(%gt, %tie) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %rv = "shptest.select"(%keep, %av, %bv) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %ri = "shptest.select"(%keep, %ai, %bi) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%rv, %ri) : (tensor<f32>, tensor<i32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi32>
}`
	if kernelFor("stablehlo.constant") == nil {
		t.Skip("stablehlo.constant kernel not linked in yet")
	}
	v := shpT(xla.Float32, shpDims(2, 4), 3, 9, 9, 1, -5, -2, -7, -2)
	ix := shpT(xla.Int32, shpDims(2, 4), 0, 1, 2, 3, 0, 1, 2, 3)
	out := shpRun(t, src, v, ix)
	assert.Equal(t, []float64{9, -2}, shpVals(out[0]))
	assert.Equal(t, []float64{1, 1}, shpVals(out[1]))
}

// Variadic sums take the fast path for every input.
func TestReduceVariadicFast(t *testing.T) {
	src := `func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xi64>, %i: tensor<f32>, %j: tensor<i64>) -> (tensor<2xf32>, tensor<2xi64>) {
  %0:2 = "stablehlo.reduce"(%a, %b, %i, %j) ({
  ^bb0(%x: tensor<f32>, %y: tensor<i64>, %p: tensor<f32>, %q: tensor<i64>):
    %s = "stablehlo.add"(%x, %p) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %m = "stablehlo.maximum"(%q, %y) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%s, %m) : (tensor<f32>, tensor<i64>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<2x2xf32>, tensor<2x2xi64>, tensor<f32>, tensor<i64>) -> (tensor<2xf32>, tensor<2xi64>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi64>
}`
	out := shpRun(t, src, shpIota(xla.Float32, shpDims(2, 2), 1), shpT(xla.Int64, shpDims(2, 2), 5, -1, 2, 8),
		shpT(xla.Float32, nil, 0.5), shpT(xla.Int64, nil, 0))
	assert.Equal(t, []float64{4.5, 6.5}, shpVals(out[0]))
	assert.Equal(t, []float64{5, 8}, shpVals(out[1]))
}

func TestRegionBinopRecognition(t *testing.T) {
	f32 := []xla.DType{xla.Float32}
	mk := func(body string) *stablehlo.Region {
		src := fmt.Sprintf(`func.func @main(%%a: tensor<2xf32>, %%i: tensor<f32>) -> tensor<f32> {
  %%0 = "stablehlo.reduce"(%%a, %%i) ({
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
%s
  }) {dimensions = array<i64: 0>} : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
  return %%0 : tensor<f32>
}`, body)
		m, err := stablehlo.Parse([]byte(src))
		require.NoError(t, err)
		return m.Funcs[0].Body.Blocks[0].Ops[0].Regions[0]
	}
	cases := []struct {
		name, body string
		want       []shpBinop
	}{
		{"add", `%s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%s) : (tensor<f32>) -> ()`, []shpBinop{shpBinAdd}},
		{"swapped max", `%s = "stablehlo.maximum"(%y, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%s) : (tensor<f32>) -> ()`, []shpBinop{shpBinMax}},
		{"replace", `"stablehlo.return"(%y) : (tensor<f32>) -> ()`, []shpBinop{shpBinReplace}},
		{"keep is not recognised", `"stablehlo.return"(%x) : (tensor<f32>) -> ()`, nil},
		{"x+x is not recognised", `%s = "stablehlo.add"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%s) : (tensor<f32>) -> ()`, nil},
		{"subtract is not recognised", `%s = "stablehlo.subtract"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%s) : (tensor<f32>) -> ()`, nil},
		{"extra op is not recognised", `%s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
%t = "stablehlo.add"(%s, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%s) : (tensor<f32>) -> ()`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, shpRegionBinops(mk(c.body), f32))
		})
	}
}

func TestReduceWindow(t *testing.T) {
	i32 := xla.Int32
	src := func(body, attrs string) string {
		return fmt.Sprintf(`func.func @main(%%a: tensor<3x2xi32>, %%i: tensor<i32>) -> tensor<2x2xi32> {
  %%0 = "stablehlo.reduce_window"(%%a, %%i) ({
  ^bb0(%%x: tensor<i32>, %%y: tensor<i32>):
    %%s = "%s"(%%x, %%y) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%%s) : (tensor<i32>) -> ()
  }) {%s} : (tensor<3x2xi32>, tensor<i32>) -> tensor<2x2xi32>
  return %%0 : tensor<2x2xi32>
}`, body, attrs)
	}
	spec := `window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 4, 1>, base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 3, 1>, padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>`
	plain := `window_dimensions = array<i64: 2, 1>`
	for _, body := range []string{"stablehlo.add", "shptest.add"} {
		shpRunCases(t, []shpTestCase{
			{
				name: "spec example " + body, src: src(body, spec),
				args: []Value{shpIota(i32, shpDims(3, 2), 1), shpT(i32, nil, 0)},
				dims: shpDims(2, 2), want: []float64{0, 0, 3, 4},
			},
			{
				// Padding positions hold the init value and are reduced too.
				name: "padding reduces the init value " + body, src: src(body, spec),
				args: []Value{shpIota(i32, shpDims(3, 2), 1), shpT(i32, nil, 1)},
				dims: shpDims(2, 2), want: []float64{3, 3, 5, 6},
			},
			{
				name: "defaults " + body, src: src(body, plain),
				args: []Value{shpIota(i32, shpDims(3, 2), 1), shpT(i32, nil, 0)},
				dims: shpDims(2, 2), want: []float64{4, 6, 8, 10},
			},
		})
	}
}

func TestReduceWindowMaxPool(t *testing.T) {
	// 2x2 max pool with stride 2 over a 4x4 f32 image, SAME-style padding.
	src := `func.func @main(%a: tensor<4x4xf32>, %i: tensor<f32>) -> tensor<3x3xf32> {
  %0 = "stablehlo.reduce_window"(%a, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "stablehlo.maximum"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, padding = dense<1> : tensor<2x2xi64>} : (tensor<4x4xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}`
	out := shpRun(t, src, shpIota(xla.Float32, shpDims(4, 4), 0), shpT(xla.Float32, nil, math.Inf(-1)))
	assert.Equal(t, []float64{0, 2, 3, 8, 10, 11, 12, 14, 15}, shpVals(out[0]))
}

func TestSelectAndScatter(t *testing.T) {
	src := func(sel, scat string) string {
		return fmt.Sprintf(`func.func @main(%%op: tensor<4x2xi32>, %%src: tensor<2x2xi32>, %%i: tensor<i32>) -> tensor<4x2xi32> {
  %%0 = "stablehlo.select_and_scatter"(%%op, %%src, %%i) ({
  ^bb0(%%x: tensor<i32>, %%y: tensor<i32>):
    %%c = %s
    "stablehlo.return"(%%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%%x: tensor<i32>, %%y: tensor<i32>):
    %%s = "%s"(%%x, %%y) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%%s) : (tensor<i32>) -> ()
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<4x2xi32>, tensor<2x2xi32>, tensor<i32>) -> tensor<4x2xi32>
  return %%0 : tensor<4x2xi32>
}`, sel, scat)
	}
	fastSel := `"stablehlo.compare"(%x, %y) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<i32>, tensor<i32>) -> tensor<i1>`
	slowSel := `"shptest.cmp"(%x, %y) {dir = "GE"} : (tensor<i32>, tensor<i32>) -> tensor<i1>`
	operand := shpT(xla.Int32, shpDims(4, 2), 1, 5, 2, 5, 3, 6, 4, 4)
	source := shpT(xla.Int32, shpDims(2, 2), 5, 6, 7, 8)
	for _, c := range [][2]string{{fastSel, "stablehlo.add"}, {slowSel, "stablehlo.add"}, {fastSel, "shptest.add"}, {slowSel, "shptest.add"}} {
		name := strings.Fields(c[0])[0] + " " + c[1]
		t.Run(name, func(t *testing.T) {
			// A region the fast path does not recognise runs every region
			// per element, which needs the elementwise kernels.
			if (c[0] == slowSel || c[1] == "shptest.add") && (shpStubbed["stablehlo.compare"] || shpStubbed["stablehlo.add"]) &&
				!(c[0] == slowSel && c[1] == "shptest.add") {
				t.Skip("elementwise kernels are not linked in")
			}
			out := shpRun(t, src(c[0], c[1]), operand, source, shpT(xla.Int32, nil, 0))
			assert.Equal(t, []float64{0, 0, 0, 0, 5, 14, 7, 0}, shpVals(out[0]))
		})
	}
}

func TestReduceErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"dimension out of range", shpReduceSrc("tensor<2xi32>", "i32", "tensor<i32>", "1", "stablehlo.add"), "out of range"},
		{"duplicate dimension", shpReduceSrc("tensor<2x2xi32>", "i32", "tensor<i32>", "0, 0", "stablehlo.add"), "twice"},
		{"wrong result type", shpReduceSrc("tensor<2x3xi32>", "i32", "tensor<2xi32>", "0", "stablehlo.add"), "declared"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []Value{shpIota(xla.Int32, shpDims(2, 3), 0), shpT(xla.Int32, nil, 0)}
			if strings.Contains(c.src, "tensor<2xi32>, %i") {
				args[0] = shpIota(xla.Int32, shpDims(2), 0)
			}
			if strings.Contains(c.src, "%a: tensor<2x2xi32>") {
				args[0] = shpIota(xla.Int32, shpDims(2, 2), 0)
			}
			assert.Contains(t, shpRunErr(t, c.src, args...), c.want)
		})
	}
}

// TestWindowsWithoutTables: reduce_window and select_and_scatter read the
// same input indices whether the window geometry is a table or computed
// as needed (a table over shpWinTabLimit entries, which once took
// gigabytes): the known answers hold with no tables, and random windows
// (padding, strides, dilations) give the same results both ways, on the
// typed paths and the region ones.
func TestWindowsWithoutTables(t *testing.T) {
	defer func(l int64) { shpWinTabLimit = l }(shpWinTabLimit)
	for _, lim := range []int64{0, 3} {
		shpWinTabLimit = lim
		t.Run(fmt.Sprint("reduce_window ", lim), TestReduceWindow)
		t.Run(fmt.Sprint("max pool ", lim), TestReduceWindowMaxPool)
		t.Run(fmt.Sprint("select_and_scatter ", lim), TestSelectAndScatter)
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for iter := 0; iter < 60; iter++ {
		in := []int64{int64(1 + rng.IntN(5)), int64(1 + rng.IntN(6))}
		win := []int64{int64(1 + rng.IntN(3)), int64(1 + rng.IntN(4))}
		stride := []int64{int64(1 + rng.IntN(2)), int64(1 + rng.IntN(3))}
		pad := []int64{int64(rng.IntN(3)), int64(rng.IntN(3)), int64(rng.IntN(4) - 1), int64(rng.IntN(3))}
		scatter := iter%3 == 2
		baseDil, winDil := []int64{1, 1}, []int64{1, 1}
		if !scatter {
			baseDil = []int64{int64(1 + rng.IntN(2)), int64(1 + rng.IntN(3))}
			winDil = []int64{int64(1 + rng.IntN(2)), int64(1 + rng.IntN(2))}
		}
		geo, err := shpNewWindow(in, win, stride, baseDil, winDil, []int64{pad[0], pad[2]}, []int64{pad[1], pad[3]}, nil)
		require.NoError(t, err)
		if geo.outDims[0] == 0 || geo.outDims[1] == 0 {
			continue
		}
		body := []string{"stablehlo.add", "shptest.add"}[iter%2]
		if shpStubbed[body] {
			body = "shptest.add"
		}
		attrs := fmt.Sprintf("window_dimensions = array<i64: %d, %d>, window_strides = array<i64: %d, %d>, padding = dense<[[%d, %d], [%d, %d]]> : tensor<2x2xi64>",
			win[0], win[1], stride[0], stride[1], pad[0], pad[1], pad[2], pad[3])
		inT, outT := fmt.Sprintf("tensor<%dx%dxf32>", in[0], in[1]), fmt.Sprintf("tensor<%dx%dxf32>", geo.outDims[0], geo.outDims[1])
		var src string
		args := []Value{laTensor(xla.Float32, in, laRandInts(rng, int(in[0]*in[1]), 5, false))}
		if scatter {
			sel := `"shptest.cmp"(%x, %y) {dir = "GE"} : (tensor<f32>, tensor<f32>) -> tensor<i1>`
			if !shpStubbed["stablehlo.compare"] && rng.IntN(2) == 0 {
				sel = `"stablehlo.compare"(%x, %y) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<f32>, tensor<f32>) -> tensor<i1>`
			}
			src = fmt.Sprintf(`func.func @main(%%op: %[1]s, %%src: %[2]s, %%i: tensor<f32>) -> %[1]s {
  %%0 = "stablehlo.select_and_scatter"(%%op, %%src, %%i) ({
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%c = %[3]s
    "stablehlo.return"(%%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%s = "%[4]s"(%%x, %%y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%%s) : (tensor<f32>) -> ()
  }) {%[5]s} : (%[1]s, %[2]s, tensor<f32>) -> %[1]s
  return %%0 : %[1]s
}`, inT, outT, sel, body, attrs)
			args = append(args, laTensor(xla.Float32, geo.outDims, laRandInts(rng, int(geo.outDims[0]*geo.outDims[1]), 5, false)))
		} else {
			attrs += fmt.Sprintf(", base_dilations = array<i64: %d, %d>, window_dilations = array<i64: %d, %d>", baseDil[0], baseDil[1], winDil[0], winDil[1])
			src = fmt.Sprintf(`func.func @main(%%a: %[1]s, %%i: tensor<f32>) -> %[2]s {
  %%0 = "stablehlo.reduce_window"(%%a, %%i) ({
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%s = "%[3]s"(%%x, %%y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%%s) : (tensor<f32>) -> ()
  }) {%[4]s} : (%[1]s, tensor<f32>) -> %[2]s
  return %%0 : %[2]s
}`, inT, outT, body, attrs)
		}
		args = append(args, shpT(xla.Float32, nil, 0.5))
		var want []float64
		if scatter {
			want = refSelectAndScatter(shpVals(args[0]), in, shpVals(args[1]), geo.outDims, 0.5, win, stride, pad)
		} else {
			want = refReduceWindow(shpVals(args[0]), in, 0.5, win, stride, baseDil, winDil, pad)
		}
		for _, lim := range []int64{1 << 20, 0} {
			shpWinTabLimit = lim
			require.Equal(t, want, shpVals(shpRun(t, src, args...)[0]), "limit %d\n%s", lim, src)
		}
	}
}

// refWindowSource lays out the padded, base-dilated input of a rank-2
// window op per dimension: the input index at each position, or -1.
func refWindowSource(in, baseDil, pad []int64) [2][]int64 {
	var src [2][]int64
	for d := 0; d < 2; d++ {
		var v []int64
		for i := int64(0); i < pad[2*d]; i++ {
			v = append(v, -1)
		}
		for i := int64(0); i < in[d]; i++ {
			if i > 0 {
				for j := int64(1); j < baseDil[d]; j++ {
					v = append(v, -1)
				}
			}
			v = append(v, i)
		}
		for i := int64(0); i < pad[2*d+1]; i++ {
			v = append(v, -1)
		}
		if pad[2*d] < 0 {
			v = v[min(int64(len(v)), -pad[2*d]):]
		}
		if pad[2*d+1] < 0 {
			v = v[:max(0, int64(len(v))+pad[2*d+1])]
		}
		src[d] = v
	}
	return src
}

// refReduceWindow sums the windows of a rank-2 input (padding reads init).
func refReduceWindow(a []float64, in []int64, init float64, win, stride, baseDil, winDil, pad []int64) []float64 {
	src := refWindowSource(in, baseDil, pad)
	var n [2]int64
	for d := 0; d < 2; d++ {
		span := (win[d]-1)*winDil[d] + 1
		if int64(len(src[d])) >= span {
			n[d] = (int64(len(src[d]))-span)/stride[d] + 1
		}
	}
	var out []float64
	for o0 := int64(0); o0 < n[0]; o0++ {
		for o1 := int64(0); o1 < n[1]; o1++ {
			acc := init
			for k0 := int64(0); k0 < win[0]; k0++ {
				for k1 := int64(0); k1 < win[1]; k1++ {
					i := src[0][o0*stride[0]+k0*winDil[0]]
					j := src[1][o1*stride[1]+k1*winDil[1]]
					if i < 0 || j < 0 {
						acc += init
					} else {
						acc += a[i*in[1]+j]
					}
				}
			}
			out = append(out, acc)
		}
	}
	return out
}

// refSelectAndScatter adds each source value at the first greatest
// operand element of its window (padding is never selected).
func refSelectAndScatter(a []float64, in []int64, source []float64, outDims []int64, init float64, win, stride, pad []int64) []float64 {
	src := refWindowSource(in, []int64{1, 1}, pad)
	out := make([]float64, len(a))
	for i := range out {
		out[i] = init
	}
	for o0 := int64(0); o0 < outDims[0]; o0++ {
		for o1 := int64(0); o1 < outDims[1]; o1++ {
			best := int64(-1)
			for k0 := int64(0); k0 < win[0]; k0++ {
				for k1 := int64(0); k1 < win[1]; k1++ {
					i, j := src[0][o0*stride[0]+k0], src[1][o1*stride[1]+k1]
					if i >= 0 && j >= 0 && (best < 0 || a[i*in[1]+j] > a[best]) {
						best = i*in[1] + j
					}
				}
			}
			if best >= 0 {
				out[best] += source[o0*outDims[1]+o1]
			}
		}
	}
	return out
}

// TestWindowGeometryLimits: a cumulative sum over 2^16 elements as TPU
// programs write it (a window of n, n-1 elements of low padding: 2^32
// window positions) is accepted; geometries whose sizes overflow are
// refused with what is too large.
func TestWindowGeometryLimits(t *testing.T) {
	one, zero := []int64{1}, []int64{0}
	const n = 1 << 16
	w, err := shpNewWindow([]int64{n}, []int64{n}, one, one, one, []int64{n - 1}, zero, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{n}, w.outDims)
	assert.Equal(t, int64(n-1), w.index(0, n-1, n-1), "last window, last element")
	assert.Equal(t, int64(-1), w.index(0, 0, n-2), "padding")
	_, err = shpNewWindow([]int64{1 << 40}, []int64{2}, one, []int64{1 << 31}, one, zero, zero, nil)
	require.ErrorContains(t, err, "base dilation 2147483648 of 1099511627776 elements is too large")
	_, err = shpNewWindow([]int64{1 << 33}, []int64{1 << 31}, one, one, one, []int64{1 << 31}, []int64{1 << 31}, nil)
	require.ErrorContains(t, err, "windows of 2147483648 elements are too many")
}

// A multi-result body that returns one argument in another's place (a
// swap) gives every result from the values the body received: scatter's
// general path, the scalar reduce and reduce_window wrote the first
// destination, then read it back as the second result.
func TestSwappingBodies(t *testing.T) {
	swap := `({
    ^bb0(%x: tensor<i32>, %y: tensor<i32>, %p: tensor<i32>, %q: tensor<i32>):
      "stablehlo.return"(%y, %x) : (tensor<i32>, tensor<i32>) -> ()
    })`
	i32 := func(vs ...int32) *Tensor {
		t := NewTensor(xla.MakeShape(xla.Int32, int64(len(vs))))
		copy(t.Data.([]int32), vs)
		return t
	}
	idx := NewTensor(xla.MakeShape(xla.Int32, 1, 1))
	idx.Data.([]int32)[0] = 1
	out := shpRun(t, `func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>, %i: tensor<1x1xi32>, %u: tensor<1xi32>, %v: tensor<1xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %r:2 = "stablehlo.scatter"(%a, %b, %i, %u, %v) `+swap+` {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<3xi32>, tensor<3xi32>, tensor<1x1xi32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<3xi32>, tensor<3xi32>)
  return %r#0, %r#1 : tensor<3xi32>, tensor<3xi32>
}`, i32(1, 2, 3), i32(10, 20, 30), idx, i32(100), i32(200))
	assert.Equal(t, []int32{1, 20, 3}, out[0].(*Tensor).Data)
	assert.Equal(t, []int32{10, 2, 30}, out[1].(*Tensor).Data)

	// Reducing 3 elements with a swap from inits (1, 2): the accumulators
	// trade places at each step, ending as a pair of the inits' values.
	out = shpRun(t, `func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<i32>, tensor<i32>) {
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %r:2 = "stablehlo.reduce"(%a, %b, %c1, %c2) `+swap+` {dimensions = array<i64: 0>} : (tensor<3xi32>, tensor<3xi32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  return %r#0, %r#1 : tensor<i32>, tensor<i32>
}`, i32(5, 6, 7), i32(8, 9, 10))
	got := []int32{out[0].(*Tensor).Data.([]int32)[0], out[1].(*Tensor).Data.([]int32)[0]}
	assert.ElementsMatch(t, []int32{1, 2}, got, "a swap only permutes the inits")

	out = shpRun(t, `func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> (tensor<1xi32>, tensor<1xi32>) {
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %r:2 = "stablehlo.reduce_window"(%a, %b, %c1, %c2) `+swap+` {window_dimensions = array<i64: 3>} : (tensor<3xi32>, tensor<3xi32>, tensor<i32>, tensor<i32>) -> (tensor<1xi32>, tensor<1xi32>)
  return %r#0, %r#1 : tensor<1xi32>, tensor<1xi32>
}`, i32(5, 6, 7), i32(8, 9, 10))
	got = []int32{out[0].(*Tensor).Data.([]int32)[0], out[1].(*Tensor).Data.([]int32)[0]}
	assert.ElementsMatch(t, []int32{1, 2}, got, "a swap only permutes the inits")
}

// TestCumulativeWindowBuildsNoTable: a cumulative window (a 1024-long
// cumsum: n x n = 2^20 entries, within the table limit) runs in one pass
// and builds no index table, which cost more than the pass at every run;
// a window walk of the same size still gets its table.
func TestCumulativeWindowBuildsNoTable(t *testing.T) {
	one, zero := []int64{1}, []int64{0}
	const n = 1024
	w, err := shpNewWindow([]int64{n}, []int64{n}, one, one, one, []int64{n - 1}, zero, nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, w.cumulativeDim(), 0)
	assert.Nil(t, w.tab[0], "no table for the one-pass form")
	assert.Equal(t, int64(n-1), w.index(0, n-1, n-1), "index computes what the table held")
	assert.Equal(t, int64(-1), w.index(0, 0, n-2), "padding")
	w, err = shpNewWindow([]int64{n}, []int64{n}, one, one, one, []int64{n / 2}, []int64{n/2 - 1}, nil)
	require.NoError(t, err)
	require.Less(t, w.cumulativeDim(), 0)
	assert.NotNil(t, w.tab[0], "a centred window of the same size keeps its table")
}
