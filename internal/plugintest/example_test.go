package plugintest_test

import (
	"context"
	"fmt"

	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Run compiles a module on a client, runs it and reads the results back
// as tensors; tests use it with the HALO_PLUGIN plugin (Open), here with
// the built-in interpreter backend.
func ExampleRun() {
	c, err := pjrt.Open("interpreter")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	b := stablehlo.NewBuilder("double")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 3))
	fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)))
	m, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 3))
	copy(x.Data.([]float32), []float32{1, 2, 3})
	out, err := plugintest.Run(context.Background(), c, m, []interpreter.Value{x}, []xla.Shape{xla.MakeShape(xla.Float32, 3)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0].Data)
	// Output: [2 4 6]
}
