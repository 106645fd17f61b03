package pjrt_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Errors from plugins are *pjrt.Error values whose code works with
// errors.Is, also through wrapping.
func ExampleError() {
	err := fmt.Errorf("loading the model: %w",
		&pjrt.Error{Code: pjrt.NotFound, Op: "PJRT_Executable_DeserializeAndLoad", Msg: "no cached executable"})
	fmt.Println(errors.Is(err, pjrt.NotFound), errors.Is(err, pjrt.Internal))
	var pe *pjrt.Error
	if errors.As(err, &pe) {
		fmt.Println(pe.Code.String(), pe.Op)
	}
	fmt.Println(err)
	// Output:
	// true false
	// NOT_FOUND PJRT_Executable_DeserializeAndLoad
	// loading the model: pjrt: PJRT_Executable_DeserializeAndLoad: NOT_FOUND: no cached executable
}

// A custom call reaches a Go FFI handler through the halo.callback_id
// attribute, computed from the target name.
func ExampleFFICallbackID() {
	fmt.Printf(`stablehlo.custom_call @my_print(%%x) {api_version = 4 : i32, has_side_effect = true, backend_config = {%s = %d : i64}}`+"\n",
		pjrt.FFICallbackAttr, pjrt.FFICallbackID("my_print"))
	// Output:
	// stablehlo.custom_call @my_print(%x) {api_version = 4 : i32, has_side_effect = true, backend_config = {halo.callback_id = 4724599941195708051 : i64}}
}

// Open the best backend, register a Go handler for a host callback, and
// run a program (not run here: it needs a plugin).
func ExamplePlugin_RegisterFFIHandler() {
	c, err := pjrt.Open("interpreter") // on a GPU plugin alike, with platform "CUDA"
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	err = c.Plugin().RegisterFFIHandler("example_print", "Host", func(f *pjrt.FFICallFrame) error {
		fmt.Println("device data:", f.Args[0].Bytes())
		return nil
	}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	exe, err := c.Compile(pjrt.MLIRText(`module {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    stablehlo.custom_call @example_print(%x) {api_version = 4 : i32, has_side_effect = true} : (tensor<3xf32>) -> ()
    %0 = stablehlo.add %x, %x : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer exe.Close()
	x, _ := pjrt.BufferFrom(c, []float32{1, 2, 3}, []int64{3})
	outs, err := exe.Run(x)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := pjrt.ToSlice[float32](context.Background(), outs[0])
	fmt.Println(v, err)
	// Output:
	// device data: [0 0 128 63 0 0 0 64 0 0 64 64]
	// [2 4 6] <nil>
}

// The README's tour: build a program, compile it, transfer, run, read back.
// It runs on the built-in interpreter, so it works on any machine.
func Example() {
	b := stablehlo.NewBuilder("add")
	f := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4), stablehlo.Tensor(xla.Float32, 4))
	f.Return(f.Add(f.Arg(0), f.Arg(1)))
	mod, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := pjrt.Open("interpreter")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	exe, err := client.Compile(pjrt.MLIRText(mod.String()), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := pjrt.BufferFrom(client, []float32{1, 2, 3, 4}, []int64{4})
	if err != nil {
		fmt.Println(err)
		return
	}
	outs, err := exe.Run(x, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, err := pjrt.ToSlice[float32](context.Background(), outs[0])
	fmt.Println(sum, err)
	// Output: [2 4 6 8] <nil>
}

// A module built with package stablehlo compiles as it is: StableHLO
// prints it for the plugin.
func ExampleStableHLO() {
	b := stablehlo.NewBuilder("square")
	f := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 3))
	f.Return(f.Multiply(f.Arg(0), f.Arg(0)))
	mod, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := pjrt.Open("interpreter")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	exe, err := c.Compile(pjrt.StableHLO(mod), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer exe.Close()
	x, err := pjrt.BufferFrom(c, []float32{1, 2, 3}, []int64{3})
	if err != nil {
		fmt.Println(err)
		return
	}
	outs, err := exe.Run(x)
	if err != nil {
		fmt.Println(err)
		return
	}
	squares, err := pjrt.ToSlice[float32](context.Background(), outs[0])
	fmt.Println(squares, err)
	// Output: [1 4 9] <nil>
}
