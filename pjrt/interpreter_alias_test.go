package pjrt

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// Alias buffers on the interpreter: consumers wait for the fulfilment
// without blocking Execute; token shapes are accepted so a token can be
// handed on before the execution that makes it has finished.
func TestInterpreterAliasBuffers(t *testing.T) {
	c := openInterpreter(t, DeviceCount(2))
	double, err := c.Compile(MLIRText(`func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}`), nil)
	require.NoError(t, err)
	makeToken, err := c.Compile(MLIRText(`func.func @main() -> !stablehlo.token {
  %t = stablehlo.after_all : !stablehlo.token
  return %t : !stablehlo.token
}`), nil)
	require.NoError(t, err)
	useToken, err := c.Compile(MLIRText(`func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %t, %0 : !stablehlo.token, tensor<2xf32>
}`), nil)
	require.NoError(t, err)
	x, err := BufferFrom(c, []float32{1, 2}, []int64{2}, CopyDuringCall())
	require.NoError(t, err)
	dev1 := c.AddressableDevices()[1]

	t.Run("array fulfilled later", func(t *testing.T) {
		a, f, err := c.CreateAliasBuffer(xla.MakeShape(xla.Float32, 2), OnDevice(dev1))
		require.NoError(t, err)
		d, err := a.Device()
		require.NoError(t, err)
		assert.Equal(t, 1, d.ID())
		outs, err := double.Execute([][]*Buffer{{a}}, ExecuteOptions{Device: dev1})
		require.NoError(t, err, "Execute returns while its argument is pending")
		ev, err := outs.Outputs[0][0].Ready()
		require.NoError(t, err)
		select {
		case <-ev.Done():
			t.Fatal("the output is ready before its argument was fulfilled")
		default:
		}
		require.NoError(t, f.Fulfill(x))
		got, err := ToSlice[float32](ctxT(t), outs.Outputs[0][0])
		require.NoError(t, err)
		assert.Equal(t, []float32{2, 4}, got)
		assert.ErrorIs(t, f.Fulfill(x), FailedPrecondition, "fulfilled twice")
	})
	t.Run("failed", func(t *testing.T) {
		a, f, err := c.CreateAliasBuffer(xla.MakeShape(xla.Float32, 2))
		require.NoError(t, err)
		outs, err := double.Run(a)
		require.NoError(t, err)
		require.NoError(t, f.Fail(&Error{Code: Aborted, Msg: "no data"}))
		err = outs[0].Await(ctxT(t))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no data")
	})
	t.Run("wrong shape", func(t *testing.T) {
		_, f, err := c.CreateAliasBuffer(xla.MakeShape(xla.Float32, 3))
		require.NoError(t, err)
		err = f.Fulfill(x)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "tensor<2xf32>")
		require.NoError(t, f.Close())
	})
	t.Run("token", func(t *testing.T) {
		tok, err := makeToken.Run()
		require.NoError(t, err)
		a, f, err := c.CreateAliasBuffer(xla.Shape{DType: xla.Invalid})
		require.NoError(t, err)
		outs, err := useToken.Run(a, x)
		require.NoError(t, err)
		gate, err := outs[1].Ready()
		require.NoError(t, err)
		select {
		case <-gate.Done():
			t.Fatal("the execution ran before its token was fulfilled")
		default:
		}
		require.NoError(t, f.Fulfill(tok[0]))
		got, err := ToSlice[float32](ctxT(t), outs[1])
		require.NoError(t, err)
		assert.Equal(t, []float32{2, 4}, got)
		require.NoError(t, outs[0].Await(ctxT(t)))
		// A token copied to another device stays a token.
		moved, err := outs[0].CopyToDevice(dev1)
		require.NoError(t, err)
		x1, err := x.CopyToDevice(dev1)
		require.NoError(t, err)
		res, err := useToken.Execute([][]*Buffer{{moved, x1}}, ExecuteOptions{Device: dev1})
		require.NoError(t, err)
		require.NoError(t, res.Outputs[0][1].Await(ctxT(t)))
	})
	t.Run("other client", func(t *testing.T) {
		other := openInterpreter(t)
		y, err := BufferFrom(other, []float32{1, 2}, []int64{2}, CopyDuringCall())
		require.NoError(t, err)
		_, f, err := c.CreateAliasBuffer(xla.MakeShape(xla.Float32, 2))
		require.NoError(t, err)
		err = f.Fulfill(y)
		require.Error(t, err)
		assert.True(t, errors.Is(err, InvalidArgument), "%v", err)
		require.NoError(t, f.Close())
	})
}
