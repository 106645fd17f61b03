package pallas

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/halo-ml/halo/effects"
	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/plugintest"
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
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	assert.Contains(t, k.IR, `"tt.print"() <{hex = false, isSigned = array<i32>, prefix = " x"}> : () -> ()`)

	// What a Triton print cannot place is an error at the print's line.
	for _, c := range []struct{ format, want string }{
		{"x=%v!", `the text "!" after the last verb of "x=%v!" has nowhere to go`},
		// A % in the text would be a directive of the GPU's printf (review).
		{"100%% of %v", "text cannot hold %"},
		{"a %5% b %v", "text cannot hold %"},
		{"%[1]v", "argument indexes"},
	} {
		p, err := Trace(func(k *Kernel, r []*Ref) {
			k.DebugPrint(c.format, r[0].Load())
		}, CallSpec{OutShapes: one}, nil)
		require.NoError(t, err, c.format)
		_, err = LowerTriton(p, CompilerParams{})
		require.Error(t, err, c.format)
		assert.Contains(t, err.Error(), "triton: debug_print")
		assert.Contains(t, err.Error(), "debug_print_test.go:")
		assert.Contains(t, err.Error(), c.want)
	}
}

// printingCase is a Triton kernel that prints floats, a program id, u8
// and i8 values and, in its last program, a line of no values.
func printingCase(t *testing.T) tritonCase {
	spec := CallSpec{
		Name:      "printing",
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
		Grid:      []int64{2},
		InSpecs:   []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
		OutSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
	}
	kernel := func(k *Kernel, r []*Ref) {
		x := r[0].Load()
		i := k.ProgramID(0)
		k.DebugPrint(`x "%.2f" at %v, big:%d small %v`+"\n", x, i, x.Astype(xla.Uint8).Add(uint8(254)), i.Sub(2).Astype(xla.Int8))
		k.When(i.Eq(1), func() { k.DebugPrint("last") })
		r[1].Store(x.Mul(2))
	}
	return tritonCase{name: "printing", kernel: kernel, spec: spec, args: []*interpreter.Tensor{tensor(t, xla.Float32, []float32{1.5, -2, 3.25, 4}, 4)}}
}

// printedLines is what printingCase prints on a GPU, each line once, in
// the evaluator's order.
const printedLines = `pid (0, 0, 0) idx (0) x " 1.500000
pid (0, 0, 0) idx (1) x " -2.000000
pid (0, 0, 0) idx () " at 0
pid (0, 0, 0) idx (0) , big: 255
pid (0, 0, 0) idx (1) , big: 254
pid (0, 0, 0) idx () small -2
pid (1, 0, 0) idx (0) x " 3.250000
pid (1, 0, 0) idx (1) x " 4.000000
pid (1, 0, 0) idx () " at 1
pid (1, 0, 0) idx (0) , big: 1
pid (1, 0, 0) idx (1) , big: 2
pid (1, 0, 0) idx () small -1
pid (1, 0, 0) last
`

// TestDebugPrintTriton: a print in a Triton kernel is one tt.print per
// value, led by the format's text before the value's verb; the evaluator
// prints its lines as a GPU does, an element a line, in the first of its
// two runs only. mlir-opt parses the kernel.
func TestDebugPrintTriton(t *testing.T) {
	c := printingCase(t)
	tk, err := lowerTritonCase(t, c)
	require.NoError(t, err)
	for _, want := range []string{
		`<{hex = false, isSigned = array<i32: 0>, prefix = " x \22 "}> : (tensor<2xf32>) -> ()`,
		`<{hex = false, isSigned = array<i32: 1>, prefix = " \22 at "}> : (i32) -> ()`,
		`<{hex = false, isSigned = array<i32: 0>, prefix = " , big: "}> : (tensor<2xi8>) -> ()`,
		`<{hex = false, isSigned = array<i32: 1>, prefix = " small "}> : (i8) -> ()`,
		`<{hex = false, isSigned = array<i32>, prefix = " last"}> : () -> ()`,
	} {
		assert.Contains(t, tk.IR, want)
	}
	if opt := mliropt.Path(); opt != "" {
		_, err = mliropt.Run(opt, tk.IR)
		require.NoError(t, err, "--- input ---\n%s", tk.IR)
	}

	var out bytes.Buffer
	c.spec.CompilerParams.DebugOutput = &out
	outs, err := EvalTriton(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	assert.Equal(t, []float32{3, -4, 6.5, 8}, outs[0].Data)
	assert.Equal(t, printedLines, out.String())

	// Special floats print as C's printf writes them.
	assert.Equal(t, "nan inf -inf -0.000000 1.500000", strings.Join([]string{printfF(math.NaN()), printfF(math.Inf(1)), printfF(math.Inf(-1)), printfF(math.Copysign(0, -1)), printfF(1.5)}, " "))

	// The custom call of a printing kernel has a side effect: XLA keeps it
	// even when its results go unused.
	assert.Contains(t, c.module(t, Triton).String(), "has_side_effect = true")
}

// TestDebugPrintRealPlugin runs printingCase as a Triton kernel through a
// real XLA GPU plugin (HALO_PLUGIN), with the process's standard output,
// where the GPU's printf writes, read through a pipe: each thread prints
// the elements it holds, in any order, so the distinct lines are compared
// with the evaluator's. CUDA writes a kernel's prints out at the next
// launch, synchronization or context teardown, not at every wait: a
// second, silent kernel and closing the client come before the pipe is
// read. Without HALO_PLUGIN it skips.
func TestDebugPrintRealPlugin(t *testing.T) {
	c := plugintest.Open(t, "see a Triton kernel print on a GPU")
	tc := printingCase(t)
	want, err := EvalTriton(tc.kernel, tc.spec, tc.args...)
	require.NoError(t, err)
	silent := tritonCases()[0]
	silentWant, err := runCall(silent.kernel, silent.spec, silent.args...)
	require.NoError(t, err)
	var got []*interpreter.Tensor
	printed := captureStdout(t, func() {
		got = runOnPlugin(t, c, tc, Triton, want)
		runOnPlugin(t, c, silent, Triton, silentWant)
		require.NoError(t, c.Close())
	})
	assert.Equal(t, want[0].Data, got[0].Data)
	lines := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(printed, "\n"), "\n") {
		lines[l] = true
	}
	var distinct []string
	for l := range lines {
		distinct = append(distinct, l)
	}
	wantLines := strings.Split(strings.TrimSuffix(printedLines, "\n"), "\n")
	sort.Strings(distinct)
	sort.Strings(wantLines)
	assert.Equal(t, wantLines, distinct, "printed:\n%s", printed)
}
