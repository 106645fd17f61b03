package interpreter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// shpWhileSrc is the spec's while example with the bound and step passed in:
// i counts from %init_i while i < %ten, sum gets %one each time.
const shpWhileSrc = `func.func @main(%init_i: tensor<i64>, %init_sum: tensor<i64>, %one: tensor<i64>, %ten: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %r:2 = "stablehlo.while"(%init_i, %init_sum) ({
  ^bb0(%i: tensor<i64>, %s: tensor<i64>):
    %c = "shptest.cmp"(%i, %ten) {dir = "LT"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i64>, %s: tensor<i64>):
    %ns = "shptest.add"(%s, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %ni = "shptest.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%ni, %ns) : (tensor<i64>, tensor<i64>) -> ()
  }) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
  return %r#0, %r#1 : tensor<i64>, tensor<i64>
}`

func TestWhile(t *testing.T) {
	i64 := func(v float64) *Tensor { return shpT(xla.Int64, nil, v) }
	cases := []struct {
		name           string
		i, sum, bound  float64
		wantI, wantSum float64
	}{
		{"spec example", 1, 0, 10, 10, 9},
		{"zero iterations", 5, 3, 2, 5, 3},
		{"one iteration", 0, 0, 1, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := shpRun(t, shpWhileSrc, i64(c.i), i64(c.sum), i64(1), i64(c.bound))
			require.Len(t, out, 2)
			assert.Equal(t, []float64{c.wantI}, shpVals(out[0]))
			assert.Equal(t, []float64{c.wantSum}, shpVals(out[1]))
		})
	}
}

// An infinite loop stops when the context is cancelled.
func TestWhileStopsOnCancel(t *testing.T) {
	p := shpCompile(t, `func.func @main(%x: tensor<i1>) -> tensor<i1> {
  %r = "stablehlo.while"(%x) ({
  ^bb0(%c: tensor<i1>):
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<i1>):
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }) : (tensor<i1>) -> tensor<i1>
  return %r : tensor<i1>
}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Run(ctx, Device{}, []Value{shpT(xla.Bool, nil, 1)})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// Regions use values defined outside them, also through nested regions.
func TestNestedRegionsUseOuterValues(t *testing.T) {
	src := `func.func @main(%n: tensor<i32>, %k: tensor<i32>, %p: tensor<i1>, %zero: tensor<i32>) -> tensor<i32> {
  %r:2 = "stablehlo.while"(%zero, %zero) ({
  ^bb0(%i: tensor<i32>, %acc: tensor<i32>):
    %c = "shptest.cmp"(%i, %n) {dir = "LT"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %acc: tensor<i32>):
    %step = "stablehlo.if"(%p) ({
      "stablehlo.return"(%k) : (tensor<i32>) -> ()
    }, {
      %kk = "shptest.add"(%k, %k) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%kk) : (tensor<i32>) -> ()
    }) : (tensor<i1>) -> tensor<i32>
    %one = "shptest.cmp"(%k, %k) {dir = "EQ"} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %a2 = "shptest.add"(%acc, %step) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %inc = "stablehlo.convert"(%one) : (tensor<i1>) -> tensor<i32>
    %i2 = "shptest.add"(%i, %inc) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%i2, %a2) : (tensor<i32>, tensor<i32>) -> ()
  }) : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  return %r#1 : tensor<i32>
}`
	if kernelFor("stablehlo.convert") == nil {
		t.Skip("stablehlo.convert kernel not linked in yet")
	}
	i32 := func(v float64) *Tensor { return shpT(xla.Int32, nil, v) }
	out := shpRun(t, src, i32(4), i32(3), shpT(xla.Bool, nil, 1), i32(0))
	assert.Equal(t, []float64{12}, shpVals(out[0]))
	out = shpRun(t, src, i32(4), i32(3), shpT(xla.Bool, nil, 0), i32(0))
	assert.Equal(t, []float64{24}, shpVals(out[0]))
}

func TestIfAndCase(t *testing.T) {
	ifSrc := `func.func @main(%p: tensor<i1>, %a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {
  %r = "stablehlo.if"(%p) ({
    "stablehlo.return"(%a) : (tensor<i32>) -> ()
  }, {
    "stablehlo.return"(%b) : (tensor<i32>) -> ()
  }) : (tensor<i1>) -> tensor<i32>
  return %r : tensor<i32>
}`
	a, b := shpT(xla.Int32, nil, 10), shpT(xla.Int32, nil, 11)
	assert.Equal(t, []float64{10}, shpVals(shpRun(t, ifSrc, shpT(xla.Bool, nil, 1), a, b)[0]))
	assert.Equal(t, []float64{11}, shpVals(shpRun(t, ifSrc, shpT(xla.Bool, nil, 0), a, b)[0]))

	caseSrc := `func.func @main(%i: tensor<i32>, %x: tensor<2xi64>, %y: tensor<2xi64>, %z: tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>) {
  %r:2 = "stablehlo.case"(%i) ({
    "stablehlo.return"(%x, %x) : (tensor<2xi64>, tensor<2xi64>) -> ()
  }, {
    "stablehlo.return"(%y, %y) : (tensor<2xi64>, tensor<2xi64>) -> ()
  }, {
    "stablehlo.return"(%z, %x) : (tensor<2xi64>, tensor<2xi64>) -> ()
  }) : (tensor<i32>) -> (tensor<2xi64>, tensor<2xi64>)
  return %r#0, %r#1 : tensor<2xi64>, tensor<2xi64>
}`
	x := shpT(xla.Int64, shpDims(2), 0, 0)
	y := shpT(xla.Int64, shpDims(2), 1, 1)
	z := shpT(xla.Int64, shpDims(2), 2, 2)
	for _, c := range []struct {
		index     float64
		want0     float64
		wantFirst float64
	}{
		{0, 0, 0}, {1, 1, 1}, {2, 2, 0},
		{-1, 2, 0}, // out of range: the last branch
		{3, 2, 0},
		{1 << 30, 2, 0},
	} {
		out := shpRun(t, caseSrc, shpT(xla.Int32, nil, c.index), x, y, z)
		assert.Equal(t, []float64{c.want0, c.want0}, shpVals(out[0]), "index %v", c.index)
		assert.Equal(t, []float64{c.wantFirst, c.wantFirst}, shpVals(out[1]), "index %v", c.index)
	}
}

func TestCallCompositeTupleTokens(t *testing.T) {
	src := `func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, !stablehlo.token) {
  %0 = func.call @twice(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "stablehlo.composite"(%0, %b) {name = "my.add", decomposition = @plus, composite_attributes = {k = 1 : i64}, version = 1 : i32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %t = "stablehlo.tuple"(%a, %1) : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  %e = "stablehlo.get_tuple_element"(%t) {index = 1 : i32} : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %o:2 = "stablehlo.optimization_barrier"(%e, %b) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %tk0 = "stablehlo.create_token"() : () -> !stablehlo.token
  %tk1 = "stablehlo.after_all"(%tk0, %tk0) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
  %tk2 = "stablehlo.after_all"() : () -> !stablehlo.token
  %tk3 = "stablehlo.optimization_barrier"(%tk1) : (!stablehlo.token) -> !stablehlo.token
  return %1, %o#0, %o#1, %tk3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, !stablehlo.token
}
func.func private @twice(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "shptest.add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func private @plus(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "shptest.add"(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`
	out := shpRun(t, src, shpT(xla.Float32, shpDims(2), 1, 2), shpT(xla.Float32, shpDims(2), 10, 20))
	require.Len(t, out, 4)
	assert.Equal(t, []float64{12, 24}, shpVals(out[0]))
	assert.Equal(t, []float64{12, 24}, shpVals(out[1]))
	assert.Equal(t, []float64{10, 20}, shpVals(out[2]))
	assert.Equal(t, Token{}, out[3])
}

func TestMap(t *testing.T) {
	src := func(body string) string {
		return `func.func @main(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<i64>, %y: tensor<i64>):
    %m = "` + body + `"(%x, %y) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%m) : (tensor<i64>) -> ()
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}`
	}
	a, b := shpIota(xla.Int64, shpDims(2, 2), 0), shpIota(xla.Int64, shpDims(2, 2), 4)
	assert.Equal(t, []float64{0, 5, 12, 21}, shpVals(shpRun(t, src("shptest.mul"), a, b)[0]))
	// Changing the element type: compare in the region.
	cmp := `func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = "shptest.cmp"(%x, %y) {dir = "LT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%m) : (tensor<i1>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}`
	out := shpRun(t, cmp, shpT(xla.Float32, shpDims(3), 1, 5, 2), shpT(xla.Float32, shpDims(3), 2, 4, 2))
	assert.Equal(t, []float64{1, 0, 0}, shpVals(out[0]))
}

func TestControlErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown callee", `func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = "func.call"(%a) {callee = @nowhere} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}`, "@nowhere"},
		{"tuple index", `func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %t = "stablehlo.tuple"(%a) : (tensor<f32>) -> tuple<tensor<f32>>
  %0 = "stablehlo.get_tuple_element"(%t) {index = 3 : i32} : (tuple<tensor<f32>>) -> tensor<f32>
  return %0 : tensor<f32>
}`, "out of range"},
		{"recursion", `func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @main(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}`, "recursive call @main -> @main"},
		{"recursion through a loop body", `func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @f(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @f(%a: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.while(%x = %a) : tensor<f32>
  cond {
    %c = stablehlo.compare LT, %x, %x : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %y = func.call @main(%x) : (tensor<f32>) -> tensor<f32>
    stablehlo.return %y : tensor<f32>
  }
  return %r : tensor<f32>
}`, "recursive call @main -> @f -> @main"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, shpRunErr(t, c.src, shpT(xla.Float32, nil, 1)), c.want)
		})
	}
}

// TestCallCycleOutsideMain: Compile refuses the call cycles main can
// reach (the loop above never runs its body, yet is refused: XLA rejects
// any cycle), not those of functions main never calls.
func TestCallCycleOutsideMain(t *testing.T) {
	src := `func.func @main(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}
func.func private @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = func.call @f(%a) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}`
	out := shpRun(t, src, shpT(xla.Float32, nil, 3))
	assert.Equal(t, []float64{3}, shpVals(out[0]))
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	_, err = Compile(m, "f")
	require.ErrorContains(t, err, "recursive call @f -> @f")
}

// Programs built with the builder run too: a while loop that sums
// 0..n-1 and a reduction with the builder's add region.
func TestBuilderWhileAndReduce(t *testing.T) {
	for _, k := range []string{"stablehlo.constant", "stablehlo.compare", "stablehlo.add"} {
		if kernelFor(k) == nil || shpStubbed[k] {
			t.Skipf("%s kernel not linked in yet", k)
		}
	}
	b := stablehlo.NewBuilder("loop")
	f := b.NewFunction("main", stablehlo.Scalar(xla.Int32), stablehlo.Tensor(xla.Float32, 2, 3))
	zero := stablehlo.ConstantScalar[int32](f, 0)
	one := stablehlo.ConstantScalar[int32](f, 1)
	res := f.While([]*stablehlo.Value{zero, zero}, func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) *stablehlo.Value {
		return rb.Compare(args[0], f.Arg(0), stablehlo.CompareLT, stablehlo.CompareSigned)
	}, func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) []*stablehlo.Value {
		return []*stablehlo.Value{rb.Add(args[0], one), rb.Add(args[1], args[0])}
	})
	f.Return(res[1], f.ReduceSum(f.Arg(1), 1))
	m, err := b.Build()
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	out, err := p.Run(context.Background(), Device{}, []Value{shpT(xla.Int32, nil, 5), shpIota(xla.Float32, shpDims(2, 3), 1)})
	require.NoError(t, err)
	assert.Equal(t, []float64{10}, shpVals(out[0]))
	assert.Equal(t, []float64{6, 15}, shpVals(out[1]))
}
