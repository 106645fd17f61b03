package main

import (
	"fmt"
	"io"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// demoModule builds f(x, y) = (x + y) * 2 on f32[4] with the builder.
func demoModule() (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("demo")
	f := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4), stablehlo.Tensor(xla.Float32, 4))
	sum := f.Add(f.Arg(0), f.Arg(1))
	f.Return(f.Multiply(sum, stablehlo.Splat(f, float32(2), 4)))
	return b.Build()
}

// demo builds a program, prints it, and runs it on the best backend found.
func demo(w io.Writer, plugin string) error {
	m, err := demoModule()
	if err != nil {
		return err
	}
	text := m.String()
	fmt.Fprintf(w, "program (built with the stablehlo builder):\n%s\n", text)
	p, err := pjrt.LoadPlugin(plugin)
	if err != nil {
		if plugin != "" {
			return err
		}
		fmt.Fprintf(w, "not run: %v\n", err)
		fmt.Fprintln(w, "install a PJRT plugin (for example the jax CPU or CUDA wheels) or set PJRT_PLUGIN_LIBRARY_PATH; the built-in interpreter is not part of this build yet")
		return nil
	}
	fmt.Fprintf(w, "backend: %s\n", p)
	c, err := p.NewClient()
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(w, "devices: %d (%s)\n", len(c.AddressableDevices()), c.PlatformName())
	exe, err := c.Compile(pjrt.MLIRText(text), nil)
	if err != nil {
		return err
	}
	defer exe.Close()
	x, err := pjrt.BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
	if err != nil {
		return err
	}
	y, err := pjrt.BufferFrom(c, []float32{10, 20, 30, 40}, []int64{4})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "x = [1 2 3 4], y = [10 20 30 40]")
	outs, err := exe.Run(x, y)
	if err != nil {
		return err
	}
	return printOutputs(w, outs)
}
