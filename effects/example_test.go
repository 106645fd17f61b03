package effects_test

import (
	"context"
	"fmt"

	"github.com/halo-ml/halo/effects"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Two ordered prints in one computation, run three times on alternating
// devices without waiting: the prints come out in program and call order.
func Example() {
	c, err := pjrt.Open("interpreter", pjrt.DeviceCount(2))
	if err != nil {
		panic(err)
	}
	defer c.Close()

	b := stablehlo.NewBuilder("hello")
	fb := b.NewFunction("main", stablehlo.Scalar(xla.Int32))
	if err := effects.Print(fb, "hello %v", fb.Arg(0)); err != nil {
		panic(err)
	}
	if err := effects.Print(fb, "world %v", fb.Arg(0)); err != nil {
		panic(err)
	}
	fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)))
	m, err := b.Build()
	if err != nil {
		panic(err)
	}
	exe, err := effects.Compile(c, m, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("ordered effects:", exe.Ordered())

	var outs []*pjrt.Buffer
	for i := 0; i < 3; i++ {
		dev := c.AddressableDevices()[i%2]
		x, err := pjrt.ScalarBuffer(c, int32(i), pjrt.OnDevice(dev))
		if err != nil {
			panic(err)
		}
		res, err := effects.Default().ExecuteOn(dev, exe, x) // returns at once
		if err != nil {
			panic(err)
		}
		outs = append(outs, res[0])
	}
	if err := effects.Barrier(context.Background()); err != nil {
		panic(err)
	}
	last, err := pjrt.ToScalar[int32](context.Background(), outs[2])
	if err != nil {
		panic(err)
	}
	fmt.Println("last result:", last)
	// Output:
	// ordered effects: [print]
	// hello 0
	// world 0
	// hello 1
	// world 1
	// hello 2
	// world 2
	// last result: 4
}
