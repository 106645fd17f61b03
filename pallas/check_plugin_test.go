package pallas

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Interpret mode's bounds checks run through PJRT too: Register installs
// their typed-FFI handler with a plugin (here the interpreter's own PJRT
// backend, which runs it as a real plugin does, from the call frame), and
// a failed check fails the execution with the BoundsError.
func TestBoundsChecksThroughPJRT(t *testing.T) {
	require.Error(t, Register(nil))
	c, err := pjrt.Open("interpreter")
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, Register(c))
	require.NoError(t, Register(c), "a second Register is a no-op")
	err = checkBoundsOn(t, c)
	// The *BoundsError itself comes through pjrt on the built-in
	// interpreter, as the package documents.
	var be *BoundsError
	require.True(t, errors.As(err, &be), "errors.As finds the *BoundsError in %T: %v", err, err)
	assert.Equal(t, []int64{1}, be.GridPoint)
}

// TestBoundsChecksDeclaredRealPlugin runs checkBoundsOn through a real
// plugin (HALO_PLUGIN) without Register: Client.Compile registers the
// check's declared handler itself. Run it alone (-test.run), as a test
// that called Register before in the same process would have registered
// it already. Without HALO_PLUGIN it skips.
func TestBoundsChecksDeclaredRealPlugin(t *testing.T) {
	c := plugintest.Open(t, "run interpret mode's bounds checks without Register")
	checkBoundsOn(t, c)
}

// checkBoundsOn runs an interpret-mode kernel with the bounds checks on
// through c, in bounds (its result is checked), then one that reads past
// its block at grid point 1, and returns that one's error after checking
// that it names the kernel, the grid point, the ref and the index.
func checkBoundsOn(t *testing.T, c *pjrt.Client) error {
	t.Helper()
	bc := newBoundsCase(t)
	out, err := plugintest.Run(context.Background(), c, bc.good, bc.args, bc.shapes)
	require.NoError(t, err)
	bc.checkGood(t, out)
	_, err = plugintest.Run(context.Background(), c, bc.bad, bc.args, bc.shapes)
	bc.checkBad(t, err)
	return err
}

// boundsCase is a pair of interpret-mode kernels with the bounds checks
// on: good stays in bounds, bad reads a 3-element slice from 2 in its
// block of 4 at grid point 1.
type boundsCase struct {
	good, bad *stablehlo.Module
	args      []interpreter.Value
	shapes    []xla.Shape
}

func newBoundsCase(t *testing.T) *boundsCase {
	blk := []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}
	spec := CallSpec{Name: "oob", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2}, InSpecs: blk, OutSpecs: blk}
	build := func(kernel KernelFunc) *stablehlo.Module {
		b := stablehlo.NewBuilder("checks")
		fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 8))
		fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
		m, err := b.Build()
		require.NoError(t, err)
		return m
	}
	return &boundsCase{
		good: build(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Mul(2.0)) }),
		bad: build(func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load(DS(k.ProgramID(0).Mul(2), 3)).Sum(), Slice(0, 1))
			r[1].Store(0.0, Slice(1, 4))
		}),
		args:   []interpreter.Value{tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i) }), 8)},
		shapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
	}
}

// checkGood checks the in-bounds kernel's result.
func (bc *boundsCase) checkGood(t *testing.T, out []*interpreter.Tensor) {
	t.Helper()
	assert.Equal(t, f32s(8, func(i int) float32 { return float32(2 * i) }), out[0].Data)
}

// checkBad checks the out-of-bounds kernel's error.
func (bc *boundsCase) checkBad(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	for _, want := range []string{`kernel "oob"`, "grid point (1)", "load from input 0", "check_plugin_test.go:", "starting at (2) does not fit in (4)"} {
		assert.Contains(t, err.Error(), want)
	}
}

// Interpret-mode kernels loaded from Executable.Serialize's bytes in a
// fresh process (as from an executable cache) run their bounds checks
// without Register: DeserializeAndLoad registers the declared handlers
// first. This process compiles and serializes the two kernels and closes
// its client; a child process (this test binary, running
// TestBoundsChecksDeserializedChild, ended with the test's deadline)
// loads and runs them.
func TestBoundsChecksDeserializedRealPlugin(t *testing.T) {
	c := plugintest.Open(t, "load interpret-mode kernels with bounds checks from serialized executables")
	bc := newBoundsCase(t)
	dir := t.TempDir()
	for name, m := range map[string]*stablehlo.Module{"good": bc.good, "bad": bc.bad} {
		exe, err := plugintest.Compile(c, m)
		require.NoError(t, err)
		data, err := exe.Serialize()
		require.NoError(t, err)
		require.NoError(t, exe.Close())
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	require.NoError(t, c.Close()) // the child gets the whole device
	ctx := context.Background()
	if end, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, end.Add(-time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestBoundsChecksDeserializedChild$", "-test.v")
	cmd.Env = append(os.Environ(), "HALO_PALLAS_SERIALIZED="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child process:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestBoundsChecksDeserializedChild", "child process:\n%s", out)
}

// TestBoundsChecksDeserializedChild is the child process of
// TestBoundsChecksDeserializedRealPlugin: it loads the serialized kernels
// from HALO_PALLAS_SERIALIZED in a process that compiled nothing.
func TestBoundsChecksDeserializedChild(t *testing.T) {
	dir := os.Getenv("HALO_PALLAS_SERIALIZED")
	if dir == "" {
		t.Skip("run by TestBoundsChecksDeserializedRealPlugin in a fresh process (HALO_PALLAS_SERIALIZED unset)")
	}
	c := plugintest.Open(t, "load serialized interpret-mode kernels")
	bc := newBoundsCase(t)
	run := func(name string) ([]*interpreter.Tensor, error) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		exe, err := c.DeserializeAndLoad(data, nil)
		require.NoError(t, err)
		defer exe.Close()
		return plugintest.RunExecutable(context.Background(), c, exe, bc.args, bc.shapes)
	}
	out, err := run("good")
	require.NoError(t, err)
	bc.checkGood(t, out)
	_, err = run("bad")
	bc.checkBad(t, err)
}

// handleCheck reads the check state from the call frame (host memory
// here, as on CPU plugins) and the config from its attributes.
func TestCheckHandlerDecodesTheCallFrame(t *testing.T) {
	cfg := `{"kernel":"k","grid":[2,3],"sites":[{"what":"store to output 0","kind":"element index","dims":[4,4]}]}`
	frame := func(state []int32, attrs map[string]any) *pjrt.FFICallFrame {
		return &pjrt.FFICallFrame{Stage: pjrt.FFIStageExecute, Attrs: attrs,
			Args: []pjrt.FFIBuffer{{DType: xla.Int32, Dims: []int64{int64(len(state))}, Data: unsafe.Pointer(&state[0])}}}
	}
	attrs := map[string]any{checkConfigAttr: cfg}
	err := handleCheck(frame([]int32{1, 5, 3, 4}, attrs))
	var be *BoundsError
	require.True(t, errors.As(err, &be), "want a *BoundsError, got %v", err)
	assert.Equal(t, &BoundsError{Kernel: "k", GridPoint: []int64{1, 2}, Access: "store to output 0", Kind: "element index",
		Index: []int64{3, 4}, Bounds: []int64{4, 4}}, be)
	assert.NoError(t, handleCheck(frame([]int32{0, 0, 0, 0}, attrs)), "nothing failed")
	assert.NoError(t, handleCheck(&pjrt.FFICallFrame{Stage: pjrt.FFIStageInstantiate}), "only the execute stage checks")
	assert.ErrorContains(t, handleCheck(frame([]int32{1, 5, 3, 4}, nil)), "no string attribute halo.pallas.check")
	f := frame([]int32{1, 5}, attrs)
	f.Args[0].DType = xla.Float32
	assert.ErrorContains(t, handleCheck(f), "takes one i32 operand")
}
