package interpreter

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/pool"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// 16384 float32s: 64 KiB, at spareMinBytes.
const spareN = 16384

func runSpareProgram(t *testing.T, text string, args ...Value) []Value {
	t.Helper()
	m, err := stablehlo.Parse([]byte(strings2(text, "N ", "16384")))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	out, err := p.Run(context.Background(), Device{}, args)
	require.NoError(t, err)
	return out
}

func ramp(scale float32) *Tensor {
	v := make([]float32, spareN)
	for i := range v {
		v[i] = scale * float32(i%97)
	}
	return f32Tensor(v, spareN)
}

// stepLoop is a loop of 200 steps; each slices a 64 KiB block of %x
// (alternating halves) and squares it, then runs STEP, which makes
// %next, the carried %acc of the next step.
const stepLoop = `func.func @main(%x: tensor<32768xf32>) -> tensor<N xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<N xf32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %z) : tensor<i32>, tensor<N xf32>
    cond {
      %n = stablehlo.constant dense<200> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %two = stablehlo.constant dense<2> : tensor<i32>
      %blk = stablehlo.constant dense<16384> : tensor<i32>
      %h = stablehlo.remainder %i, %two : tensor<i32>
      %off = stablehlo.multiply %h, %blk : tensor<i32>
      %s = stablehlo.dynamic_slice %x, %off, sizes = [16384] : (tensor<32768xf32>, tensor<i32>) -> tensor<N xf32>
      %sq = stablehlo.multiply %s, %s : tensor<N xf32>
      STEP
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %next : tensor<i32>, tensor<N xf32>
    }
  return %r#1 : tensor<N xf32>
}`

// runStepLoop runs stepLoop with step, checks element j of the result
// against want(a, b) (a and b element j of the halves of %x) and returns
// the bytes the run allocated.
func runStepLoop(t *testing.T, step string, want func(a, b float32) float32) uint64 {
	t.Helper()
	x := make([]float32, 2*spareN)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	src := strings2(strings2(stepLoop, "STEP", step), "N ", "16384")
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	arg := f32Tensor(x, 2*spareN)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := p.Run(context.Background(), Device{}, []Value{arg})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	got := out[0].(*Tensor).Data.([]float32)
	for j := 0; j < spareN; j++ {
		require.Equal(t, want(x[j], x[spareN+j]), got[j], "element %d", j)
	}
	return after.TotalAlloc - before.TotalAlloc
}

func TestSpareBuffersAreReusedAcrossLoopSteps(t *testing.T) {
	// Each step adds the square to the carried sum: two new 64 KiB
	// results per step, 25 MiB in all without reuse. The dying sum and
	// block of one step are the next step's buffers.
	bytes := runStepLoop(t, "%next = stablehlo.add %acc, %sq : tensor<N xf32>",
		func(a, b float32) float32 { return 100 * (a*a + b*b) })
	assert.Less(t, bytes, uint64(3<<20), "dead step values are reused")
}

func TestCarriedValuesTheBodyDoesNotReadAreReused(t *testing.T) {
	// The pallas accumulator of a block that spans all of K: each step
	// overwrites the carried %acc without reading it. The value it
	// carried in dies as the step starts, and its buffer serves the step's
	// new one (25 MiB of new 64 KiB buffers without).
	bytes := runStepLoop(t, "%next = stablehlo.negate %sq : tensor<N xf32>",
		func(_, b float32) float32 { return -b * b }) // step 199 slices the second half
	assert.Less(t, bytes, uint64(3<<20), "the unread carried values are reused")
}

func TestSpareBuffersNeverReuseLiveStorage(t *testing.T) {
	// Each program lets a 64 KiB value of the run's own die while
	// something else still refers to its storage, then makes a value of
	// the same size (which would take the storage if it were reused) and
	// reads the first storage again.
	t.Run("shared by a reshape", func(t *testing.T) {
		out := runSpareProgram(t, `func.func @main(%x: tensor<N xf32>) -> (tensor<N xf32>, tensor<N xf32>, tensor<N xf32>) {
  %a = stablehlo.add %x, %x : tensor<N xf32>
  %r = stablehlo.reshape %a : (tensor<N xf32>) -> tensor<1x16384xf32>
  %b = stablehlo.negate %a : tensor<N xf32>
  %c = stablehlo.constant dense<7.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<N xf32>
  %r2 = stablehlo.reshape %r : (tensor<1x16384xf32>) -> tensor<N xf32>
  return %r2, %b, %z : tensor<N xf32>, tensor<N xf32>, tensor<N xf32>
}`, ramp(1))
		assert.Equal(t, ramp(2).Data, out[0].(*Tensor).Data)
		assert.Equal(t, ramp(-2).Data, out[1].(*Tensor).Data)
	})
	t.Run("held by the caller of a function", func(t *testing.T) {
		out := runSpareProgram(t, `func.func @main(%x: tensor<N xf32>) -> (tensor<N xf32>, tensor<N xf32>) {
  %a = stablehlo.add %x, %x : tensor<N xf32>
  %q = func.call @f(%a) : (tensor<N xf32>) -> tensor<N xf32>
  %s = stablehlo.add %a, %a : tensor<N xf32>
  return %q, %s : tensor<N xf32>, tensor<N xf32>
}
func.func private @f(%p: tensor<N xf32>) -> tensor<N xf32> {
  %n = stablehlo.negate %p : tensor<N xf32>
  %c = stablehlo.constant dense<7.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<N xf32>
  %q = stablehlo.add %n, %z : tensor<N xf32>
  return %q : tensor<N xf32>
}`, ramp(1))
		assert.Equal(t, ramp(4).Data, out[1].(*Tensor).Data)
	})
	t.Run("held by a while loop across its condition", func(t *testing.T) {
		// The condition's last use of %b is not the loop's: the body reads
		// it next.
		out := runSpareProgram(t, `func.func @main(%x: tensor<N xf32>) -> tensor<N xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %b = %x) : tensor<i32>, tensor<N xf32>
    cond {
      %m = stablehlo.multiply %b, %b : tensor<N xf32>
      %c = stablehlo.constant dense<7.0> : tensor<f32>
      %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<N xf32>
      %y = stablehlo.add %m, %z : tensor<N xf32>
      %zero = stablehlo.constant dense<0.0> : tensor<f32>
      %s = stablehlo.reduce(%y init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<N xf32>, tensor<f32>) -> tensor<f32>
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %pos = stablehlo.compare GT, %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %go = stablehlo.and %lt, %pos : tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %b2 = stablehlo.add %b, %b : tensor<N xf32>
      stablehlo.return %i1, %b2 : tensor<i32>, tensor<N xf32>
    }
  return %r#1 : tensor<N xf32>
}`, ramp(1))
		assert.Equal(t, ramp(8).Data, out[0].(*Tensor).Data)
	})
	t.Run("carried twice, read once", func(t *testing.T) {
		// The body returns one value for %u, which it does not read, and
		// for %b, which it reads after making a value of the same size:
		// %u's storage is %b's and stays in use.
		out := runSpareProgram(t, `func.func @main(%x: tensor<N xf32>) -> tensor<N xf32> {
  %a = stablehlo.add %x, %x : tensor<N xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %u = %a, %b = %a) : tensor<i32>, tensor<N xf32>, tensor<N xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %c = stablehlo.constant dense<7.0> : tensor<f32>
      %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<N xf32>
      %z2 = stablehlo.add %z, %z : tensor<N xf32>
      %b2 = stablehlo.add %b, %z2 : tensor<N xf32>
      stablehlo.return %i1, %b2, %b2 : tensor<i32>, tensor<N xf32>, tensor<N xf32>
    }
  return %r#2 : tensor<N xf32>
}`, ramp(1))
		want := ramp(2).Data.([]float32)
		for i := range want {
			want[i] += 3 * 14
		}
		assert.Equal(t, want, out[0].(*Tensor).Data)
	})
	t.Run("kept by a kernel registered from outside", func(t *testing.T) {
		var kept *Tensor
		require.NoError(t, RegisterKernel("halo_test.keep", func(_ *Exec, _ *stablehlo.Op, args []Value) ([]Value, error) {
			kept = args[0].(*Tensor)
			return []Value{args[0]}, nil
		}))
		out := runSpareProgram(t, keepProgram(`%k = "halo_test.keep"(%a) : (tensor<N xf32>) -> tensor<N xf32>`, "%k"), ramp(1))
		require.NotNil(t, kept)
		assert.Equal(t, ramp(2).Data, kept.Data, "the kernel's operand is never reused")
		assert.Len(t, out, 1)
	})
	t.Run("kept by a custom call", func(t *testing.T) {
		var kept *Tensor
		RegisterCustomCall("halo_test.keep", func(c *CustomCall) ([]*Tensor, error) {
			kept = c.Operands[0]
			return nil, nil
		})
		defer RegisterCustomCall("halo_test.keep", nil)
		out := runSpareProgram(t, keepProgram(`stablehlo.custom_call @halo_test.keep(%a) {has_side_effect = true} : (tensor<N xf32>) -> ()`, "%a"), ramp(1))
		require.NotNil(t, kept)
		assert.Equal(t, ramp(2).Data, kept.Data, "the custom call's operand is never reused")
		want := ramp(-2).Data.([]float32)
		for i := range want {
			want[i] += 7
		}
		assert.Equal(t, want, out[0].(*Tensor).Data)
	})
}

// keepProgram is a program that hands the run's own 64 KiB value %a to an
// op that may keep it (keep, one line), then lets the value (named kept
// after that line) die and makes a value of the same size.
func keepProgram(keep, kept string) string {
	return `func.func @main(%x: tensor<N xf32>) -> tensor<N xf32> {
  %a = stablehlo.add %x, %x : tensor<N xf32>
  ` + keep + `
  %n = stablehlo.negate ` + kept + ` : tensor<N xf32>
  %c = stablehlo.constant dense<7.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<N xf32>
  %q = stablehlo.add %n, %z : tensor<N xf32>
  return %q : tensor<N xf32>
}`
}

func TestLoopStepOperandsShareOneAllocation(t *testing.T) {
	// A body of eight scalar ops: their operand lists come from one
	// allocation per step, not one per op. Each op still allocates its
	// result (a tensor) and the kernel's result list.
	const src = `func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %c0) : tensor<i32>, tensor<i32>
    cond {
      %n = stablehlo.constant dense<100> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %a = stablehlo.add %acc, %x : tensor<i32>
      %b = stablehlo.multiply %a, %x : tensor<i32>
      %c = stablehlo.subtract %b, %a : tensor<i32>
      %d = stablehlo.maximum %c, %i : tensor<i32>
      %e = stablehlo.minimum %d, %b : tensor<i32>
      %f = stablehlo.remainder %e, %x : tensor<i32>
      %g = stablehlo.add %f, %i : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %g : tensor<i32>, tensor<i32>
    }
  return %r#1 : tensor<i32>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	arg := []Value{NewTensor(xla.MakeShape(xla.Int32))}
	arg[0].(*Tensor).Data.([]int32)[0] = 3
	var want int32
	for i := int32(0); i < 100; i++ {
		a := want + 3
		b := a * 3
		want = min(max(b-a, i), b)%3 + i
	}
	out, err := p.Run(context.Background(), Device{}, arg)
	require.NoError(t, err)
	require.Equal(t, want, out[0].(*Tensor).Data.([]int32)[0])
	allocs := testing.AllocsPerRun(5, func() {
		_, err := p.Run(context.Background(), Device{}, arg)
		require.NoError(t, err)
	})
	// 100 steps of 8 ops and a 1-op condition. About 29 allocations per
	// step (the results, their lists, the loop's bookkeeping); 38 with a
	// list of operands allocated for each op.
	assert.Less(t, allocs, float64(100*33), "allocations per run")
}

func TestSparesOfARunServeTheNext(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop a quarter of what it is given: what the pools hold cannot be counted on")
	}
	// Three 4 MiB temporaries and a scalar result: a run allocates two
	// (the third reuses one that dies), or takes them from the buffers
	// the run before left.
	const src = `func.func @main(%x: tensor<1048576xf32>) -> tensor<f32> {
  %a = stablehlo.multiply %x, %x : tensor<1048576xf32>
  %b = stablehlo.add %a, %x : tensor<1048576xf32>
  %c = stablehlo.multiply %b, %a : tensor<1048576xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%c init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1048576xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}`
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	x := NewTensor(xla.MakeShape(xla.Float32, 1<<20))
	for i := range x.Data.([]float32) {
		x.Data.([]float32)[i] = float32(i%5) - 2
	}
	// No collection between the runs: it would empty the pools.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	allocated := func() (uint64, float32) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := p.Run(context.Background(), Device{}, []Value{x})
		require.NoError(t, err)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, out[0].(*Tensor).Data.([]float32)[0]
	}
	_, r1 := allocated()
	// Four more runs: 32 MiB of temporaries without the pools. A pool
	// may miss now and then (a buffer put while the goroutine ran on one
	// processor is not found from another, under load), so up to three
	// misses of 4 MiB pass.
	var later uint64
	for i := 0; i < 4; i++ {
		n, r := allocated()
		assert.Equal(t, r1, r)
		later += n
	}
	assert.Less(t, later, uint64(12<<20), "later runs take their temporaries from the spares of the runs before")
}

// TestSparePoolsKeepBoundedLengths runs programs whose temporaries have
// more distinct lengths than the pools keep: the pools for the oldest go.
func TestSparePoolsKeepBoundedLengths(t *testing.T) {
	for i := range pool.DefaultMax + 64 {
		n := spareMinBytes/4 + i
		src := fmt.Sprintf(`func.func @main(%%x: tensor<%[1]dxf32>) -> tensor<f32> {
  %%a = stablehlo.multiply %%x, %%x : tensor<%[1]dxf32>
  %%b = stablehlo.add %%a, %%x : tensor<%[1]dxf32>
  %%c = stablehlo.multiply %%b, %%a : tensor<%[1]dxf32>
  %%z = stablehlo.constant dense<0.0> : tensor<f32>
  %%s = stablehlo.reduce(%%c init: %%z) applies stablehlo.add across dimensions = [0] : (tensor<%[1]dxf32>, tensor<f32>) -> tensor<f32>
  return %%s : tensor<f32>
}`, n)
		m, err := stablehlo.Parse([]byte(src))
		require.NoError(t, err)
		p, err := Compile(m, "")
		require.NoError(t, err)
		_, err = p.Run(context.Background(), Device{}, []Value{NewTensor(xla.MakeShape(xla.Float32, int64(n)))})
		require.NoError(t, err)
		require.LessOrEqual(t, sparePools.Len(), pool.DefaultMax, "after %d lengths", i+1)
	}
	require.Greater(t, sparePools.Len(), pool.DefaultMax/4, "the runs' spares went to the pools")
}

// An allocation refused while the run holds spares is tried again after
// the run drops them (the garbage collector checkBytes runs can then take
// them back); one refused without spares stays refused.
func TestRefusedAllocationDropsTheSpares(t *testing.T) {
	defer func(min int64, f func() (int64, bool)) { checkAllocMin, availableMemory = min, f }(checkAllocMin, availableMemory)
	checkAllocMin = 1 << 10
	x := &Exec{}
	x.sp.spares = map[spareKey][]any{{typ: reflect.TypeFor[[]float32](), n: spareN}: {make([]float32, spareN)}}
	// Memory is short while the run holds spares.
	availableMemory = func() (int64, bool) {
		if len(x.sp.spares) > 0 {
			return 1 << 10, true
		}
		return 1 << 40, true
	}
	s := xla.MakeShape(xla.Float32, 4096) // 16 KiB: checked, and not a spare's size
	got := x.newTensor(s)
	assert.Equal(t, int64(4096), got.Shape.Size())
	assert.Empty(t, x.sp.spares, "the spares were dropped")

	availableMemory = func() (int64, bool) { return 1 << 10, true }
	err := func() (err error) {
		defer catchAlloc(&err)
		x.newZeroTensor(s)
		return nil
	}()
	var ae *AllocError
	assert.ErrorAs(t, err, &ae, "no spares to drop: still refused")
}
