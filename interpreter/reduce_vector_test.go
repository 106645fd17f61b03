package interpreter

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func shpNeedElementwise(t *testing.T) {
	t.Helper()
	for _, k := range []string{"stablehlo.constant", "stablehlo.compare", "stablehlo.select", "stablehlo.add",
		"stablehlo.multiply", "stablehlo.or", "stablehlo.and"} {
		if kernelFor(k) == nil || shpStubbed[k] {
			t.Skipf("%s kernel not linked in", k)
		}
	}
}

// jnp.argmax's reducer (NaN wins, ties go to the lower index), run on
// vectors of all rows, against a plain Go argmax.
func TestReduceArgmaxVectorized(t *testing.T) {
	shpNeedElementwise(t)
	src := `func.func @main(%v: tensor<5x7xf32>, %ix: tensor<5x7xi32>) -> (tensor<5xf32>, tensor<5xi32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%v init: %ninf), (%ix init: %zero) across dimensions = [1] : (tensor<5x7xf32>, tensor<5x7xi32>, tensor<f32>, tensor<i32>) -> (tensor<5xf32>, tensor<5xi32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
      %4 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %5 = stablehlo.compare  NE, %a, %a,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.or %4, %5 : tensor<i1>
      %7 = stablehlo.compare  EQ, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = stablehlo.compare  LT, %ai, %bi,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %9 = stablehlo.and %7, %8 : tensor<i1>
      %10 = stablehlo.or %6, %9 : tensor<i1>
      %11 = stablehlo.select %6, %a, %b : tensor<i1>, tensor<f32>
      %12 = stablehlo.select %10, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %11, %12 : tensor<f32>, tensor<i32>
    }
  return %0#0, %0#1 : tensor<5xf32>, tensor<5xi32>
}`
	nan := math.NaN()
	vals := []float64{
		1, 3, 3, 2, 0, -1, 3,
		nan, 1, nan, 2, 3, 4, 5,
		-1, -2, -3, -4, -5, -6, -7,
		0, 0, 0, 0, 0, 0, 0,
		2, 4, 6, 8, 6, 4, nan,
	}
	out := shpRun(t, src, shpT(xla.Float32, shpDims(5, 7), vals...), shpT(xla.Int32, shpDims(5, 7),
		0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6))
	assert.Equal(t, []float64{1, 0, 0, 0, 6}, shpVals(out[1]))
	got := shpVals(out[0])
	assert.Equal(t, 3.0, got[0])
	assert.True(t, math.IsNaN(got[1]))
	assert.Equal(t, []float64{-1, 0}, got[2:4])
	assert.True(t, math.IsNaN(got[4]))
}

// Regions that read values of the enclosing function and hold constants
// vectorise too (both broadcast across the lanes).
func TestVectorizedRegionCapturesAndConstants(t *testing.T) {
	shpNeedElementwise(t)
	src := `func.func @main(%a: tensor<3x4xf32>, %scale: tensor<f32>) -> tensor<3xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %zero) across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
     reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %two = stablehlo.constant dense<2.0> : tensor<f32>
      %m = stablehlo.multiply %y, %scale : tensor<f32>
      %n = stablehlo.multiply %m, %two : tensor<f32>
      %s = stablehlo.add %x, %n : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %0 : tensor<3xf32>
}`
	out := shpRun(t, src, shpIota(xla.Float32, shpDims(3, 4), 0), shpT(xla.Float32, nil, 0.5))
	assert.Equal(t, []float64{6, 22, 38}, shpVals(out[0]))

	mapSrc := `func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<f32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %p = stablehlo.multiply %x, %y : tensor<f32>
    %q = stablehlo.add %p, %c : tensor<f32>
    "stablehlo.return"(%q) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`
	out = shpRun(t, mapSrc, shpIota(xla.Float32, shpDims(2, 3), 0), shpIota(xla.Float32, shpDims(2, 3), 1), shpT(xla.Float32, nil, 10))
	assert.Equal(t, []float64{10, 12, 16, 22, 30, 40}, shpVals(out[0]))
}

func TestVectorizeRecognition(t *testing.T) {
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
	assert.NotNil(t, shpBuildVec(mk(`%s = "stablehlo.subtract"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%s) : (tensor<f32>) -> ()`), 4, nil))
	assert.Nil(t, shpBuildVec(mk(`%s = "shptest.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%s) : (tensor<f32>) -> ()`), 4, nil), "unknown ops run per element")
	assert.Nil(t, shpBuildVec(mk(`%s = "stablehlo.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<2xf32>
%t = "stablehlo.slice"(%s) {start_indices = array<i64: 0>, limit_indices = array<i64: 1>, strides = array<i64: 1>} : (tensor<2xf32>) -> tensor<1xf32>
%u = "stablehlo.reshape"(%t) : (tensor<1xf32>) -> tensor<f32>
"stablehlo.return"(%u) : (tensor<f32>) -> ()`), 4, nil), "non-scalar values run per element")
}

// select_and_scatter's selection through the vectorised region matches the
// typed comparison, for every direction and several types.
func TestSelectVectorMatchesTyped(t *testing.T) {
	shpNeedElementwise(t)
	r := rand.New(rand.NewSource(4))
	for _, dt := range []xla.DType{xla.Float32, xla.BFloat16, xla.Int8, xla.Uint32, xla.Float64} {
		for _, dir := range []string{"GE", "GT", "LE", "LT"} {
			et := dt.String()
			t.Run(et+"/"+dir, func(t *testing.T) {
				src := func(slow bool) string {
					extra, ret := "", "%c"
					if slow {
						extra = "\n    %d = \"stablehlo.optimization_barrier\"(%c) : (tensor<i1>) -> tensor<i1>"
						ret = "%d"
					}
					return fmt.Sprintf(`func.func @main(%%op: tensor<5x6x%s>, %%src: tensor<3x3x%s>, %%i: tensor<%s>) -> tensor<5x6x%s> {
  %%0 = "stablehlo.select_and_scatter"(%%op, %%src, %%i) ({
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %%c = "stablehlo.compare"(%%x, %%y) {comparison_direction = #stablehlo<comparison_direction %s>} : (tensor<%s>, tensor<%s>) -> tensor<i1>%s
    "stablehlo.return"(%s) : (tensor<i1>) -> ()
  }, {
  ^bb0(%%x: tensor<%s>, %%y: tensor<%s>):
    %%s = "stablehlo.add"(%%x, %%y) : (tensor<%s>, tensor<%s>) -> tensor<%s>
    "stablehlo.return"(%%s) : (tensor<%s>) -> ()
  }) {window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 2, 2>, padding = dense<[[1, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<5x6x%s>, tensor<3x3x%s>, tensor<%s>) -> tensor<5x6x%s>
  return %%0 : tensor<5x6x%s>
}`, et, et, et, et, et, et, dir, et, et, extra, ret, et, et, et, et, et, et, et, et, et, et, et)
				}
				operand := shpSpecialInput(r, dt, 5, 6)
				source := shpT(dt, shpDims(3, 3), 1, 2, 3, 1, 2, 3, 1, 2, 3)
				init := shpT(dt, nil, 0)
				a := shpRun(t, src(false), operand, source, init)
				b := shpRun(t, src(true), operand, source, init)
				shpSameBits(t, a[0].(*Tensor), b[0].(*Tensor), "select_and_scatter")
			})
		}
	}
}

// One compiled program runs on many goroutines at once (as the simulated
// devices of an SPMD program do): the vectorised-region cache and the
// kernels share no per-run state.
func TestConcurrentRuns(t *testing.T) {
	shpNeedElementwise(t)
	src := `func.func @main(%v: tensor<16x9xf32>, %ix: tensor<16x9xi32>) -> (tensor<16xi32>, tensor<16x9xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%v init: %ninf), (%ix init: %zero) across dimensions = [1] : (tensor<16x9xf32>, tensor<16x9xi32>, tensor<f32>, tensor<i32>) -> (tensor<16xf32>, tensor<16xi32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
      %4 = stablehlo.compare  GT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %11 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<f32>
      %12 = stablehlo.select %4, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %11, %12 : tensor<f32>, tensor<i32>
    }
  %s = "stablehlo.sort"(%v) <{dimension = 1 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %n = stablehlo.negate %a : tensor<f32>
    %m = stablehlo.negate %b : tensor<f32>
    %c = stablehlo.compare  GT, %n, %m,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<16x9xf32>) -> tensor<16x9xf32>
  return %0#1, %s : tensor<16xi32>, tensor<16x9xf32>
}`
	p := shpCompile(t, src)
	r := rand.New(rand.NewSource(6))
	vals := make([]float64, 16*9)
	for i := range vals {
		vals[i] = float64(r.Intn(50))
	}
	v := shpT(xla.Float32, shpDims(16, 9), vals...)
	ix := shpIota(xla.Int32, shpDims(16, 9), 0)
	want, err := p.Run(context.Background(), Device{}, []Value{v, ix})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := 0; i < 20; i++ {
				got, err := p.Run(context.Background(), Device{}, []Value{v, ix})
				if err != nil {
					errs <- err
					return
				}
				if fmt.Sprint(shpVals(got[0]), shpVals(got[1])) != fmt.Sprint(shpVals(want[0]), shpVals(want[1])) {
					errs <- fmt.Errorf("run %d differs", i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestVectorizedRegionsGoWithTheirProgram: the regions compiled for
// vectors of lanes are kept with their program, so a process that
// compiles and drops programs (a server, the PJRT backend) keeps none of
// them; a cache for the whole process kept every module whose sort,
// reduce or map region it had seen.
func TestVectorizedRegionsGoWithTheirProgram(t *testing.T) {
	const src = `func.func @main(%a: tensor<100xf32>) -> tensor<100xf32> {
  %r = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %f = stablehlo.constant dense<false> : tensor<i1>
    %o = stablehlo.or %c, %f : tensor<i1>
    stablehlo.return %o : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<100xf32>) -> tensor<100xf32>
  return %r : tensor<100xf32>
}`
	run := func() (weak.Pointer[stablehlo.Region], int) {
		m, err := stablehlo.Parse([]byte(src))
		require.NoError(t, err)
		var region *stablehlo.Region
		m.Walk(func(op *stablehlo.Op) bool {
			if op.Name == "stablehlo.sort" {
				region = op.Regions[0]
			}
			return true
		})
		p, err := Compile(m, "")
		require.NoError(t, err)
		x := NewTensor(xla.MakeShape(xla.Float32, 100))
		for i := range 100 {
			x.Data.([]float32)[i] = float32((i * 37) % 100)
		}
		out, err := p.Run(context.Background(), Device{}, []Value{x})
		require.NoError(t, err)
		for i, v := range out[0].(*Tensor).Data.([]float32) {
			require.Equal(t, float32(i), v)
		}
		cached := 0
		p.vecRegions.Range(func(_, _ any) bool { cached++; return true })
		return weak.Make(region), cached
	}
	region, cached := run()
	require.Positive(t, cached, "the sort's comparator should have gone the vectorised way")
	for range 5 {
		runtime.GC()
	}
	require.Nil(t, region.Value(), "a dropped program's region is still reachable")
}
