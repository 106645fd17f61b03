// Package plugintest runs StableHLO modules through a real PJRT plugin from
// tests: the plugin HALO_PLUGIN names (a file, or cpu, cuda, tpu). Without
// HALO_PLUGIN the tests that need one skip, saying so.
package plugintest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

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

// Run compiles mod on c, runs it with args (tensors) and returns its
// outputs, read back as tensors of the shapes in outs.
func Run(ctx context.Context, c *pjrt.Client, mod *stablehlo.Module, args []interpreter.Value, outs []xla.Shape) ([]*interpreter.Tensor, error) {
	var text bytes.Buffer
	if err := stablehlo.Print(&text, mod, stablehlo.PrintOptions{}); err != nil {
		return nil, err
	}
	exe, err := c.Compile(pjrt.MLIRText(text.String()), nil)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	defer exe.Close()
	bufs := make([]*pjrt.Buffer, len(args))
	for i, a := range args {
		t, ok := a.(*interpreter.Tensor)
		if !ok {
			return nil, fmt.Errorf("argument %d is %T, not a tensor", i, a)
		}
		if bufs[i], err = Upload(c, t); err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		defer bufs[i].Close()
	}
	res, err := exe.Run(bufs...)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	if len(res) != len(outs) {
		return nil, fmt.Errorf("%d results, want %d", len(res), len(outs))
	}
	got := make([]*interpreter.Tensor, len(res))
	for i, b := range res {
		defer b.Close()
		got[i] = interpreter.NewTensor(outs[i])
		switch got[i].Data.(type) {
		case []float32:
			got[i].Data, err = pjrt.ToSlice[float32](ctx, b)
		case []int32:
			got[i].Data, err = pjrt.ToSlice[int32](ctx, b)
		case []bool:
			got[i].Data, err = pjrt.ToSlice[bool](ctx, b)
		default:
			err = fmt.Errorf("result %d: unsupported type %v", i, outs[i])
		}
		if err != nil {
			return nil, err
		}
	}
	return got, nil
}

// Upload copies a f32, i32 or bool tensor to the client's first device.
func Upload(c *pjrt.Client, x *interpreter.Tensor) (*pjrt.Buffer, error) {
	switch d := x.Data.(type) {
	case []float32:
		return pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	case []int32:
		return pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	case []bool:
		return pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	}
	return nil, fmt.Errorf("unsupported tensor %v", x.Shape)
}
