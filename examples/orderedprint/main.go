// Command orderedprint runs JAX's serialized-side-effects example with
// halo's effects package: a program that prints "hello" and "world" is
// dispatched several times, alternating between two devices of the
// interpreter, without waiting; the prints come out in program order and
// in call order. A second, unordered program shows the barrier waiting for
// a computation that has effects but no outputs.
//
//	go run ./examples/orderedprint -n 4 -devices 2
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/halo-ml/halo/effects"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func main() {
	n := flag.Int("n", 4, "number of calls")
	devices := flag.Int("devices", 2, "simulated interpreter devices to alternate between")
	flag.Parse()
	if err := run(os.Stdout, *n, *devices); err != nil {
		fmt.Fprintln(os.Stderr, "orderedprint:", err)
		os.Exit(1)
	}
}

// run makes the calls and writes the prints to w.
func run(w io.Writer, n, devices int) error {
	if n < 0 || devices < 1 {
		return fmt.Errorf("need n >= 0 and devices >= 1, got n=%d devices=%d", n, devices)
	}
	c, err := pjrt.Open("interpreter", pjrt.DeviceCount(devices))
	if err != nil {
		return err
	}
	defer c.Close()

	// f(i) prints "hello i" then "world i" (ordered effect "print").
	b := stablehlo.NewBuilder("hello_world")
	fb := b.NewFunction("main", stablehlo.Scalar(xla.Int32))
	if err := effects.Fprint(fb, w, effects.PrintEffect, "hello %v", fb.Arg(0)); err != nil {
		return err
	}
	if err := effects.Fprint(fb, w, effects.PrintEffect, "world %v", fb.Arg(0)); err != nil {
		return err
	}
	fb.Return()
	m, err := b.Build()
	if err != nil {
		return err
	}
	exe, err := effects.Compile(c, m, nil)
	if err != nil {
		return err
	}
	defer exe.Close()

	// g prints "done" as an unordered effect and returns nothing.
	b = stablehlo.NewBuilder("done")
	gb := b.NewFunction("main")
	if err := effects.Fprint(gb, w, effects.Unordered, "done"); err != nil {
		return err
	}
	gb.Return()
	if m, err = b.Build(); err != nil {
		return err
	}
	done, err := effects.Compile(c, m, nil)
	if err != nil {
		return err
	}
	defer done.Close()

	s := effects.NewStream()
	devs := c.AddressableDevices()
	for i := 0; i < n; i++ {
		dev := devs[i%len(devs)]
		x, err := pjrt.ScalarBuffer(c, int32(i), pjrt.OnDevice(dev))
		if err != nil {
			return err
		}
		if _, err := s.ExecuteOn(dev, exe, x); err != nil { // returns at once
			return err
		}
		x.Close() // the runtime holds it until the computation has read it
	}
	// The ordered prints are done before "done" runs: Barrier first.
	if err := s.Barrier(context.Background()); err != nil {
		return err
	}
	if _, err := s.Execute(done); err != nil {
		return err
	}
	// Close waits like Barrier, then releases the stream's runtime tokens.
	return s.Close(context.Background())
}
