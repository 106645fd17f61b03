// Package plugintest runs StableHLO modules through a real PJRT plugin from
// tests: the plugin HALO_PLUGIN names (a file, or cpu, cuda, tpu). Without
// HALO_PLUGIN the tests that need one skip, saying so. Benchmarks time a
// kernel against a dense program on the plugin with Compare (arguments
// kept on the device, results checked first, runs alternating); bf16 and
// f16 tensors travel as the interpreter keeps them, float32 values of the
// narrow type.
package plugintest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/halo-ml/halo/internal/pairbench"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Open returns a client of the HALO_PLUGIN plugin, closed when t ends, or
// skips t when HALO_PLUGIN is not set. why says what the test runs there.
func Open(t testing.TB, why string) *pjrt.Client {
	t.Helper()
	name := os.Getenv("HALO_PLUGIN")
	if name == "" {
		t.Skipf("set HALO_PLUGIN to a PJRT plugin (a path, or cuda) to %s", why)
	}
	c, err := pjrt.Open(name)
	if err != nil {
		t.Fatalf("HALO_PLUGIN=%s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Compile prints mod and compiles it on c.
func Compile(c *pjrt.Client, mod *stablehlo.Module) (*pjrt.Executable, error) {
	var text bytes.Buffer
	if err := stablehlo.Print(&text, mod, stablehlo.PrintOptions{}); err != nil {
		return nil, err
	}
	exe, err := c.Compile(pjrt.MLIRText(text.String()), nil)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return exe, nil
}

// Run compiles mod on c, runs it with args (tensors) and returns its
// outputs, read back as tensors of the shapes in outs.
func Run(ctx context.Context, c *pjrt.Client, mod *stablehlo.Module, args []interpreter.Value, outs []xla.Shape) ([]*interpreter.Tensor, error) {
	exe, err := Compile(c, mod)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	bufs, err := UploadAll(c, args)
	if err != nil {
		return nil, err
	}
	defer CloseAll(bufs)
	res, err := exe.Run(bufs...)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer CloseAll(res)
	if len(res) != len(outs) {
		return nil, fmt.Errorf("%d results, want %d", len(res), len(outs))
	}
	got := make([]*interpreter.Tensor, len(res))
	for i, b := range res {
		if got[i], err = Download(ctx, b, outs[i]); err != nil {
			return nil, fmt.Errorf("result %d: %w", i, err)
		}
	}
	return got, nil
}

// Download reads a buffer back as a tensor of shape s: f32, i32, bool,
// or bf16 and f16 (widened to float32, as the interpreter keeps them).
func Download(ctx context.Context, b *pjrt.Buffer, s xla.Shape) (*interpreter.Tensor, error) {
	t := interpreter.NewTensor(s)
	var err error
	switch s.DType {
	case xla.Float32:
		t.Data, err = pjrt.ToSlice[float32](ctx, b)
	case xla.Int32:
		t.Data, err = pjrt.ToSlice[int32](ctx, b)
	case xla.Bool:
		t.Data, err = pjrt.ToSlice[bool](ctx, b)
	case xla.BFloat16:
		err = widen[xla.BF16](ctx, b, t.Data.([]float32))
	case xla.Float16:
		err = widen[xla.F16](ctx, b, t.Data.([]float32))
	default:
		err = fmt.Errorf("unsupported type %v", s)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// half is a 16-bit float host type.
type half interface {
	xla.BF16 | xla.F16
	Float32() float32
}

// widen reads a buffer of 16-bit floats H into d, widened to float32.
func widen[H half](ctx context.Context, b *pjrt.Buffer, d []float32) error {
	h, err := pjrt.ToSlice[H](ctx, b)
	if err != nil {
		return err
	}
	for i, v := range h {
		d[i] = v.Float32()
	}
	return nil
}

// narrowed uploads d converted to 16-bit floats H.
func narrowed[H half](c *pjrt.Client, d []float32, dims []int64, conv func(float32) H) (*pjrt.Buffer, error) {
	h := make([]H, len(d))
	for i, v := range d {
		h[i] = conv(v)
	}
	return pjrt.BufferFrom(c, h, dims, pjrt.CopyDuringCall())
}

// Upload copies a f32, i32, bool, bf16 or f16 tensor to the client's
// first device.
func Upload(c *pjrt.Client, x *interpreter.Tensor) (*pjrt.Buffer, error) {
	switch d := x.Data.(type) {
	case []float32:
		switch x.Shape.DType {
		case xla.Float32:
			return pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
		case xla.BFloat16:
			return narrowed(c, d, x.Shape.Dims, xla.BF16FromFloat32)
		case xla.Float16:
			return narrowed(c, d, x.Shape.Dims, xla.F16FromFloat32)
		}
	case []int32:
		return pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	case []bool:
		return pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	}
	return nil, fmt.Errorf("unsupported tensor %v", x.Shape)
}

// UploadAll uploads tensors (Upload); on an error it closes those it
// made.
func UploadAll(c *pjrt.Client, args []interpreter.Value) ([]*pjrt.Buffer, error) {
	bufs := make([]*pjrt.Buffer, 0, len(args))
	for i, a := range args {
		t, ok := a.(*interpreter.Tensor)
		if !ok {
			CloseAll(bufs)
			return nil, fmt.Errorf("argument %d is %T, not a tensor", i, a)
		}
		b, err := Upload(c, t)
		if err != nil {
			CloseAll(bufs)
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		bufs = append(bufs, b)
	}
	return bufs, nil
}

// CloseAll closes buffers.
func CloseAll(bufs []*pjrt.Buffer) {
	for _, b := range bufs {
		b.Close()
	}
}

// Timed returns a function that runs exe with args on the device, waits
// for its results and drops them: one timed call for a benchmark (the
// arguments stay on the device between calls).
func Timed(ctx context.Context, exe *pjrt.Executable, args []*pjrt.Buffer) func() error {
	return func() error {
		res, err := exe.Run(args...)
		if err != nil {
			return err
		}
		defer CloseAll(res)
		for _, r := range res {
			if err := r.Await(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// EnvInt returns the positive integer in environment variable name, or
// def when it is not set. A value that is not a positive integer fails t.
func EnvInt(t testing.TB, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// Close reports the first element where got and want differ by more than
// tol × max(1, |want|), as an error naming it; nil when none does.
func Close(got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > tol*max(1, math.Abs(w)) {
			return fmt.Errorf("element %d: %v, want %v (tolerance %g)", i, g, w, tol)
		}
	}
	return nil
}

// Compare compiles a dense program and a kernel program on c (each with
// one result of shape out: float, or i32 compared as float32), uploads their arguments, runs each once
// and has check compare the results, then times the two side by side
// (pairbench.Run: dense-ms, kernel-ms, dense/kernel), each timed call
// running the program on its arguments already on the device and waiting
// for the result.
func Compare(b *testing.B, c *pjrt.Client, dense *stablehlo.Module, denseArgs []interpreter.Value,
	kernel *stablehlo.Module, kernelArgs []interpreter.Value, out xla.Shape, check func(dense, kernel []float32) error) {
	b.Helper()
	ctx := context.Background()
	var runs [2]func() error
	var results [2]*interpreter.Tensor
	for i, p := range []struct {
		mod  *stablehlo.Module
		args []interpreter.Value
	}{{dense, denseArgs}, {kernel, kernelArgs}} {
		exe, err := Compile(c, p.mod)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { exe.Close() })
		bufs, err := UploadAll(c, p.args)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { CloseAll(bufs) })
		res, err := exe.Run(bufs...)
		if err != nil {
			b.Fatal(err)
		}
		results[i], err = Download(ctx, res[0], out)
		CloseAll(res)
		if err != nil {
			b.Fatal(err)
		}
		runs[i] = Timed(ctx, exe, bufs)
	}
	if err := check(asFloats(results[0]), asFloats(results[1])); err != nil {
		b.Fatalf("the kernel's result differs from the dense one: %v", err)
	}
	pairbench.Run(b, "dense", runs[0], "kernel", runs[1])
}

// asFloats returns a float or i32 tensor's elements as float32.
func asFloats(t *interpreter.Tensor) []float32 {
	switch d := t.Data.(type) {
	case []float32:
		return d
	case []int32:
		f := make([]float32, len(d))
		for i, v := range d {
			f[i] = float32(v)
		}
		return f
	}
	return nil
}
