// Package bench builds the same StableHLO programs with halo's builder and
// with github.com/gomlx/go-xla/pkg/stablehlo, so `go test -bench .` times
// them side by side in one run. It is its own module so that go-xla never
// becomes a dependency of halo.
package bench

import (
	gx "github.com/gomlx/go-xla/pkg/stablehlo"
	"github.com/gomlx/go-xla/pkg/types/dtypes"
	"github.com/gomlx/go-xla/pkg/types/shapes"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// GomlxElementwise builds n elementwise ops on tensor<128xf32>
// (v = (v + x) * y, repeated) and returns the function (call b.Build to print).
func GomlxElementwise(n int) (*gx.Builder, error) {
	b := gx.New("elementwise")
	fn := b.Main()
	t := shapes.Make(dtypes.Float32, 128)
	x, err := fn.Input(t)
	if err != nil {
		return nil, err
	}
	y, err := fn.Input(t)
	if err != nil {
		return nil, err
	}
	v := x
	for i := range n {
		if i%2 == 0 {
			v, err = gx.Add(v, x)
		} else {
			v, err = gx.Multiply(v, y)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, fn.Return(v)
}

// GomlxMLP builds layers of h = max(dot_general(h, w) + bias, 0) on a
// [32, 256] batch with shared [256, 256] weights and [32, 256] bias; 0 is a
// broadcast scalar constant (go-xla always writes precision_config DEFAULT).
func GomlxMLP(layers int) (*gx.Builder, error) {
	b := gx.New("mlp")
	fn := b.Main()
	h, err := fn.Input(shapes.Make(dtypes.Float32, 32, 256))
	if err != nil {
		return nil, err
	}
	w, err := fn.Input(shapes.Make(dtypes.Float32, 256, 256))
	if err != nil {
		return nil, err
	}
	bias, err := fn.Input(shapes.Make(dtypes.Float32, 32, 256))
	if err != nil {
		return nil, err
	}
	zero0, err := fn.ConstantFromScalar(float32(0))
	if err != nil {
		return nil, err
	}
	zero, err := gx.BroadcastInDim(zero0, shapes.Make(dtypes.Float32, 32, 256), nil)
	if err != nil {
		return nil, err
	}
	for range layers {
		d, err := gx.DotGeneral(h, []int{1}, nil, w, []int{0}, nil).Done()
		if err != nil {
			return nil, err
		}
		a, err := gx.Add(d, bias)
		if err != nil {
			return nil, err
		}
		if h, err = gx.Maximum(a, zero); err != nil {
			return nil, err
		}
	}
	return b, fn.Return(h)
}

// HaloElementwise builds the elementwise program with halo.
func HaloElementwise(n int) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("elementwise")
	t := stablehlo.Tensor(xla.Float32, 128)
	f := b.NewFunction("main", t, t)
	x, y := f.Arg(0), f.Arg(1)
	v := x
	for i := range n {
		if i%2 == 0 {
			v = f.Add(v, x)
		} else {
			v = f.Multiply(v, y)
		}
	}
	f.Return(v)
	return b.Build()
}

// HaloMLP builds the MLP program with halo.
func HaloMLP(layers int) (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("mlp")
	f32 := func(dims ...int64) stablehlo.TensorType { return stablehlo.Tensor(xla.Float32, dims...) }
	f := b.NewFunction("main", f32(32, 256), f32(256, 256), f32(32, 256))
	h, w, bias := f.Arg(0), f.Arg(1), f.Arg(2)
	zero := f.BroadcastInDim(stablehlo.ConstantScalar(f, float32(0)), []int64{32, 256}, nil)
	dn := stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}
	for range layers {
		d := f.DotGeneral(h, w, dn, stablehlo.PrecisionDefault, stablehlo.PrecisionDefault)
		h = f.Maximum(f.Add(d, bias), zero)
	}
	f.Return(h)
	return b.Build()
}
