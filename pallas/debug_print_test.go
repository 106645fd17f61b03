package pallas

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/halo-ml/halo/effects"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compileWithEffects builds the call into a module of the args' types and
// compiles it with effects.Compile on the interpreter plugin.
func compileWithEffects(t *testing.T, kernel KernelFunc, spec CallSpec, args ...*interpreter.Tensor) (*pjrt.Client, *effects.Executable) {
	t.Helper()
	c, err := pjrt.Open("interpreter")
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	b := stablehlo.NewBuilder("print")
	types := make([]stablehlo.Type, len(args))
	for i, a := range args {
		types[i] = stablehlo.TensorOf(a.Shape)
	}
	fb := b.NewFunction("main", types...)
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	exe, err := effects.Compile(c, m, nil)
	require.NoError(t, err)
	return c, exe
}

// f32Buffers puts f32 tensors on c.
func f32Buffers(t *testing.T, c *pjrt.Client, args ...*interpreter.Tensor) []*pjrt.Buffer {
	t.Helper()
	bufs := make([]*pjrt.Buffer, len(args))
	for i, a := range args {
		var err error
		bufs[i], err = pjrt.BufferFrom(c, a.Data.([]float32), a.Shape.Dims)
		require.NoError(t, err)
	}
	return bufs
}

// runWithEffects compiles the call (compileWithEffects), runs it once on
// the default stream and waits for its callbacks.
func runWithEffects(t *testing.T, kernel KernelFunc, spec CallSpec, args ...*interpreter.Tensor) ([]*pjrt.Buffer, error) {
	t.Helper()
	c, exe := compileWithEffects(t, kernel, spec, args...)
	outs, err := effects.Default().Execute(exe, f32Buffers(t, c, args...)...)
	require.NoError(t, err)
	return outs, effects.Barrier(context.Background())
}

// TestDebugPrintAcrossCalls: the lines of successive calls come in call
// order, each call's in grid order (the prints are ordered effects: as
// unordered callbacks, calls dispatched back to back printed at once,
// mixed, and lost lines: found in review); two streams printing to one
// writer at once write whole lines without a data race (run with -race).
func TestDebugPrintAcrossCalls(t *testing.T) {
	var out bytes.Buffer
	kernel := func(k *Kernel, r []*Ref) {
		x := r[0].Load()
		k.DebugPrint("call %v step %v", x, k.ProgramID(0))
		r[1].Store(x)
	}
	block := []*BlockSpec{{BlockShape: []int64{1}, IndexMap: blockMap(func(g []*Value) []any { return []any{0} })}}
	spec := CallSpec{Name: "calls", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 1)}, Grid: []int64{4},
		InSpecs: block, OutSpecs: block, CompilerParams: CompilerParams{DebugOutput: &out}}
	arg := func(i int) *interpreter.Tensor { return fTensor([]int64{1}, func(int) float64 { return float64(i) }) }
	c, exe := compileWithEffects(t, kernel, spec, arg(0))
	var want strings.Builder
	for i := 0; i < 20; i++ {
		_, err := effects.Default().Execute(exe, f32Buffers(t, c, arg(i))...)
		require.NoError(t, err)
		for p := 0; p < 4; p++ {
			fmt.Fprintf(&want, "call [%d] step %d\n", i, p)
		}
	}
	require.NoError(t, effects.Barrier(context.Background()))
	assert.Equal(t, want.String(), out.String())

	out.Reset()
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := effects.NewStream()
			for i := 0; i < 10; i++ {
				_, err := s.Execute(exe, f32Buffers(t, c, arg(g))...)
				assert.NoError(t, err)
			}
			assert.NoError(t, s.Barrier(context.Background()))
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 80, "2 streams x 10 calls x 4 steps")
	for _, l := range lines {
		assert.Regexp(t, `^call \[[01]\] step [0-3]$`, l)
	}
}

// TestDebugPrint: a print in the kernel runs at every grid step, in grid
// order, formatting program ids and blocks with fmt's verbs; one inside a
// When prints only where the condition holds (a When that only prints is
// not dropped as having no effect); one in a ForLoop prints each
// iteration.
func TestDebugPrint(t *testing.T) {
	var out bytes.Buffer
	kernel := func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		x := r[0].Load()
		k.DebugPrint("step %v: x = %v", p, x)
		k.When(p.Eq(2), func() { k.DebugPrint("last block sum %.1f", x.Sum()) })
		k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value {
			k.DebugPrint("  i=%d", i)
			return nil
		})
		r[1].Store(x.Mul(2))
	}
	x := fTensor([]int64{6}, func(i int) float64 { return float64(i) })
	spec := CallSpec{Name: "printer", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 6)}, Grid: []int64{3},
		InSpecs:        []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
		OutSpecs:       []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
		CompilerParams: CompilerParams{DebugOutput: &out}}
	outs, err := runWithEffects(t, kernel, spec, x)
	require.NoError(t, err)
	got, err := pjrt.ToSlice[float32](context.Background(), outs[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 2, 4, 6, 8, 10}, got, "the kernel still computes")
	assert.Equal(t, `step 0: x = [0 1]
  i=0
  i=1
step 1: x = [2 3]
  i=0
  i=1
step 2: x = [4 5]
last block sum 9.0
  i=0
  i=1
`, out.String())

	// The values it prints are checked against the format when the call
	// is built, naming the kernel's line.
	_, err = runCall(func(k *Kernel, r []*Ref) { k.DebugPrint("%d", r[0].Load()) }, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "debug_print at debug_print_test.go:")
	assert.Contains(t, err.Error(), "%d")
}

// TestDebugPrintMisuse: where a print cannot go, and the Triton lowering's
// refusal.
func TestDebugPrintMisuse(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	for _, c := range []struct {
		name string
		spec CallSpec
		k    KernelFunc
		want string
	}{
		{"in an index map", CallSpec{OutShapes: one, Grid: []int64{1}, OutSpecs: []*BlockSpec{{BlockShape: []int64{4},
			IndexMap: func(g []*Value, _ []*Ref) []any { g[0].k.DebugPrint("%v", g[0]); return []any{g[0]} }}}},
			func(k *Kernel, r []*Ref) { r[0].Store(0.0) }, "an index map cannot print"},
		{"in a While condition", CallSpec{OutShapes: one}, func(k *Kernel, r []*Ref) {
			k.While([]*Value{k.Const(xla.Int32, 0)}, func(c []*Value) *Value { k.DebugPrint("%v", c[0]); return c[0].Lt(2) },
				func(c []*Value) []*Value { return []*Value{c[0].Add(1)} })
		}, "a While condition cannot print"},
		{"a nil value", CallSpec{OutShapes: one}, func(k *Kernel, r []*Ref) { k.DebugPrint("%v", nil) }, "operand 0 is nil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCall(c.k, c.spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "debug_print at debug_print_test.go:")
			assert.Contains(t, err.Error(), c.want)
		})
	}
	p, err := Trace(func(k *Kernel, r []*Ref) { k.DebugPrint("x"); r[0].Store(0.0) }, CallSpec{OutShapes: one}, nil)
	require.NoError(t, err)
	assert.True(t, strings.Contains(p.String(), `debug_print {"x"}`), p.String())
	_, err = LowerTriton(p, CompilerParams{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "debug_print at debug_print_test.go:")
	assert.Contains(t, err.Error(), "prints in interpret mode only")
}
