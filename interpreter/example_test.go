package interpreter_test

import (
	"context"
	"fmt"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Compile a module once and run it: arguments and results are Tensors
// with typed flat storage.
func Example() {
	m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %x, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 3))
	copy(x.Data.([]float32), []float32{1, 2, 3})
	out, err := p.Run(context.Background(), interpreter.Device{}, []interpreter.Value{x})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0].(*interpreter.Tensor).Data)
	// Output: [2 4 6]
}

// TensorFrom makes an argument from a Go slice, ToSlice reads a result
// back as one, and a tensor prints its type and first elements.
func ExampleTensorFrom() {
	m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	x, err := interpreter.TensorFrom([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := p.Run(context.Background(), interpreter.Device{}, []interpreter.Value{x})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0])
	squares, err := interpreter.ToSlice[float32](out[0])
	fmt.Println(squares, err)
	_, err = interpreter.ToSlice[int32](out[0])
	fmt.Println(err)
	// Output:
	// tensor<2x3xf32> [1 4 9 16 25 36]
	// [1 4 9 16 25 36] <nil>
	// interpreter: ToSlice: tensor holds f32, not int32 (i32)
}

// A program for four replicas runs as four goroutines that meet at the
// all_reduce.
func ExampleProgram_RunSPMD() {
	m, err := stablehlo.Parse([]byte(`module @psum attributes {mhlo.num_replicas = 4 : i32} {
  func.func @main(%x: tensor<f32>) -> (tensor<f32>, tensor<ui32>) {
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<f32>) -> tensor<f32>
    %1 = stablehlo.replica_id : tensor<ui32>
    return %0, %1 : tensor<f32>, tensor<ui32>
  }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	args := make([][]interpreter.Value, 4)
	for d := range args {
		x := interpreter.NewTensor(xla.MakeShape(xla.Float32))
		x.Data.([]float32)[0] = float32(10 * (d + 1))
		args[d] = []interpreter.Value{x}
	}
	outs, err := p.RunSPMD(context.Background(), args, interpreter.SPMDOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range outs {
		fmt.Println("replica", o[1].(*interpreter.Tensor).Data, "sum", o[0].(*interpreter.Tensor).Data)
	}
	// Output:
	// replica [0] sum [30]
	// replica [1] sum [30]
	// replica [2] sum [70]
	// replica [3] sum [70]
}

// A custom_call target implemented in Go; token operands and results are
// handled by the interpreter.
func ExampleRegisterCustomCall() {
	interpreter.RegisterCustomCall("example.square", func(c *interpreter.CustomCall) ([]*interpreter.Tensor, error) {
		out := c.Operands[0].Clone()
		for i, v := range out.Data.([]int32) {
			out.Data.([]int32)[i] = v * v
		}
		return []*interpreter.Tensor{out}, nil
	})
	m, err := stablehlo.Parse([]byte(`func.func @main(%t: !stablehlo.token, %x: tensor<3xi32>) -> (!stablehlo.token, tensor<3xi32>) {
  %0:2 = stablehlo.custom_call @example.square(%t, %x) {has_side_effect = true} : (!stablehlo.token, tensor<3xi32>) -> (!stablehlo.token, tensor<3xi32>)
  return %0#0, %0#1 : !stablehlo.token, tensor<3xi32>
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, 3))
	copy(x.Data.([]int32), []int32{2, 3, 4})
	out, err := p.Run(context.Background(), interpreter.Device{}, []interpreter.Value{interpreter.Token{}, x})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[1].(*interpreter.Tensor).Data)
	// Output: [4 9 16]
}

// Check ops fail a run with the first mismatch.
func ExampleCheckError() {
	m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<2x2xi32>) {
  check.expect_eq_const %x, dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  return
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, 2, 2))
	copy(x.Data.([]int32), []int32{1, 2, 3, 5})
	_, err = p.Run(context.Background(), interpreter.Device{}, []interpreter.Value{x})
	fmt.Println(err)
	// Output: interpreter: @main: check.expect_eq_const (line 2): check.expect_eq_const failed: 1 of 4 elements differ; first at index [1, 1]: expected 4, got 5
}

// A Profile says which ops a run spent its time in (each op's own time;
// the calls are exact, the times depend on the machine).
func ExampleWithProfile() {
	m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = stablehlo.add %0, %x : tensor<256x256xf32>
  %2 = stablehlo.dot_general %1, %x, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %2 : tensor<256x256xf32>
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := interpreter.Compile(m, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 256, 256))
	var prof interpreter.Profile
	ctx := interpreter.WithProfile(context.Background(), &prof)
	if _, err := p.Run(ctx, interpreter.Device{}, []interpreter.Value{x}); err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range prof.Ops() {
		if o.Op == "stablehlo.dot_general" {
			fmt.Println(o.Op, o.Calls)
		}
	}
	// fmt.Print(prof) prints the table: time, share, calls, time per call.
	// Output: stablehlo.dot_general 2
}
