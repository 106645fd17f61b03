package main

import (
	"fmt"
	"io"

	"github.com/halo-ml/halo/pjrt"
)

// demoProgram adds two f32 vectors and scales the sum: (x + y) * 2.
const demoProgram = `module @demo {
  func.func public @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %sum = stablehlo.add %x, %y : tensor<4xf32>
    %two = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
    %out = stablehlo.multiply %sum, %two : tensor<4xf32>
    return %out : tensor<4xf32>
  }
}
`

// demo runs demoProgram on the best backend found and prints each step.
func demo(w io.Writer, plugin string) error {
	p, err := pjrt.LoadPlugin(plugin)
	if err != nil {
		return fmt.Errorf("no backend to run on: %w", err)
	}
	fmt.Fprintf(w, "backend: %s\n", p)
	c, err := p.NewClient()
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(w, "devices: %d (%s)\n", len(c.AddressableDevices()), c.PlatformName())
	fmt.Fprintf(w, "program:\n%s", demoProgram)
	exe, err := c.Compile(pjrt.MLIRText(demoProgram), nil)
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
