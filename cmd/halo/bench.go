package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// benchFile compiles a StableHLO file and times runs of its main function
// on pseudo-random inputs (the same at every run): the compile, the first
// run, then steady runs for budget (or n runs when n > 0), each from
// Execute until every output is ready. timeout > 0 stops it after that
// long, wherever it is.
func benchFile(w, errw io.Writer, plugin, path string, budget time.Duration, n int, timeout time.Duration) error {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	err := benchSteps(ctx, w, errw, plugin, path, budget, n)
	if err == nil {
		return nil
	}
	// Only an error the deadline caused names it: a deadline that passed
	// after the last step (while the results were printed) leaves the run
	// a success, and a missing file stays a missing file.
	timedOut := ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), context.DeadlineExceeded.Error()))
	inner, hasPath := strings.CutPrefix(err.Error(), path+": ")
	var pe *fs.PathError
	var fe *fileError
	if errors.As(err, &pe) && pe.Path == path || errors.As(err, &fe) {
		hasPath = true // "open FILE: no such file or directory", "FILE:3:54: ..."
	}
	switch {
	case timedOut:
		return fmt.Errorf("%s: stopped after -timeout %v: %s", path, timeout, inner)
	case hasPath:
		return err
	}
	return fmt.Errorf("%s: %w", path, err) // as halo run says
}

// benchSteps is benchFile's work, the waits bounded by ctx.
func benchSteps(ctx context.Context, w, errw io.Writer, plugin, path string, budget time.Duration, n int) error {
	mf, err := readModule("bench", path)
	if err != nil {
		return err
	}
	m := mf.m
	switch {
	case mf.parseErr != nil:
		return mf.parseErr
	case m == nil:
		return fmt.Errorf("%s: halo bench reads StableHLO text (to make the inputs), not MLIR bytecode", path)
	}
	f, err := entryFunc(path, m)
	if err != nil {
		return err
	}
	name := f.Name
	var total int64
	for i, t := range f.ArgTypes() {
		tt, ok := t.(stablehlo.TensorType)
		if !ok {
			return fmt.Errorf("%s: @%s argument %d: %v: halo bench makes tensor inputs only", path, name, i, t)
		}
		if tt.Size() < 0 || tt.Shape().Validate() != nil {
			continue // benchInput says why
		}
		// Compared before adding: a sum of shapes near 2^63 bytes wraps.
		if hb := tt.Shape().HostBytes(); hb > maxBenchInputs-total {
			return fmt.Errorf("%s: @%s's arguments take more than the %d MiB halo bench makes up (argument %d: %v)", path, name, maxBenchInputs>>20, i, t)
		} else {
			total += hb
		}
	}
	inputs := make([][]byte, len(f.ArgTypes()))
	shapes := make([]xla.Shape, len(inputs))
	for i, t := range f.ArgTypes() {
		if inputs[i], shapes[i], err = benchInput(t, uint32(i)); err != nil {
			return fmt.Errorf("%s: @%s argument %d: %w", path, name, i, err)
		}
	}
	replicas, partitions := moduleInt(m, "mhlo.num_replicas"), moduleInt(m, "mhlo.num_partitions")
	p, c, err := loadBackend(errw, "bench", plugin, replicas*partitions)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(w, "backend: %s\n", p)

	t0 := time.Now()
	exe, err := compileFile(c, mf, replicas, partitions)
	if err != nil {
		return err
	}
	defer exe.Close()
	compile := time.Since(t0)
	if err := ctx.Err(); err != nil {
		return err
	}

	devs := exe.AddressableDevices()
	args := make([][]*pjrt.Buffer, len(devs))
	for d, dev := range devs {
		for i := range inputs {
			b, err := c.BufferFromHost(inputs[i], shapes[i], pjrt.OnDevice(dev), pjrt.WaitForTransfer())
			if err != nil {
				return fmt.Errorf("argument %d: %w", i, err)
			}
			defer b.Close()
			args[d] = append(args[d], b)
		}
	}
	// The same inputs serve every run: none may be donated to an output.
	keep := make([]int, len(inputs))
	for i := range keep {
		keep[i] = i
	}
	once := func() (time.Duration, error) {
		t := time.Now()
		x, err := exe.Execute(args, pjrt.ExecuteOptions{NonDonatable: keep, CompletionEvents: true})
		if err != nil {
			return 0, err
		}
		// A run ends when every device has finished (outputs and side
		// effects); its outputs are then ready.
		for _, ev := range x.Completion {
			if e := ev.Await(ctx); e != nil && err == nil {
				err = e
			}
		}
		d := time.Since(t)
		for _, outs := range x.Outputs {
			for _, b := range outs {
				b.Close()
			}
		}
		return d, err
	}
	first, err := once()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "program: %s @%s, %d argument(s) of pseudo-random values, %d device(s)\n", path, name, len(inputs), len(devs))
	fmt.Fprintf(w, "compile %v, first run %v\n", round(compile), round(first))

	var times []time.Duration
	start := time.Now()
	for ctx.Err() == nil && ((n > 0 && len(times) < n) || (n <= 0 && (len(times) == 0 || time.Since(start) < budget) && len(times) < maxBenchRuns)) {
		d, err := once()
		if err != nil {
			return err
		}
		times = append(times, d)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	slices.Sort(times)
	fmt.Fprintf(w, "steady run: median %v, min %v, max %v over %d runs\n",
		round(times[len(times)/2]), round(times[0]), round(times[len(times)-1]), len(times))
	return nil
}

const (
	// maxBenchInputs bounds the host memory of the inputs halo bench makes.
	maxBenchInputs = 1 << 30
	// maxBenchRuns bounds the steady runs of one -time budget.
	maxBenchRuns = 1_000_000
)

// benchInput makes the host data of an argument of type t: floats in
// [-1, 1), signed integers in [-4, 4) and unsigned ones in [0, 8) (or
// the type's range when smaller), booleans alternating; seed varies them
// by argument.
func benchInput(t stablehlo.Type, seed uint32) ([]byte, xla.Shape, error) {
	tt, ok := t.(stablehlo.TensorType)
	if !ok {
		return nil, xla.Shape{}, fmt.Errorf("%v: halo bench makes tensor inputs only", t)
	}
	if slices.ContainsFunc(tt.Dims, func(d int64) bool { return d < 0 }) {
		return nil, xla.Shape{}, fmt.Errorf("%v: halo bench needs static shapes", t)
	}
	shape := tt.Shape()
	if err := shape.Validate(); err != nil {
		return nil, xla.Shape{}, err
	}
	dt := tt.DType
	width := dt.HostBytes()
	if width == 0 {
		return nil, xla.Shape{}, fmt.Errorf("%v: element type has no host form", t)
	}
	state := seed*2654435761 + 12345
	unit := func() float64 { // in [-1, 1)
		state = state*1664525 + 1013904223
		return float64(state>>8)/float64(1<<24)*2 - 1
	}
	data := make([]byte, shape.HostBytes())
	for i := 0; i*width < len(data); i++ {
		putInput(dt, data[i*width:(i+1)*width], i, unit)
	}
	return data, shape, nil
}

// putInput writes element i of an input of type dt into e (its host
// bytes), drawing from unit (values in [-1, 1)).
func putInput(dt xla.DType, e []byte, i int, unit func() float64) {
	var u uint64
	switch bits := uint(dt.Bits()); {
	case dt.IsBool():
		u = uint64(i % 2)
	case dt.IsUnsigned():
		u = uint64((unit() + 1) / 2 * float64(min(8, uint64(1)<<min(bits, 63))))
	case dt.IsInt():
		r := float64(min(4, uint64(1)<<(bits-1)))
		u = uint64(int64(math.Floor(unit() * r)))
	case dt == xla.Float32:
		u = uint64(math.Float32bits(float32(unit())))
	case dt == xla.Float64:
		u = math.Float64bits(unit())
	case dt.IsComplex():
		half := len(e) / 2
		putInput(dt.ComplexElem(), e[:half], i, unit)
		putInput(dt.ComplexElem(), e[half:], i, unit)
		return
	case xla.NarrowFloatOf(dt) != nil:
		v := unit()
		if nf := xla.NarrowFloatOf(dt); !nf.Signed() {
			v = math.Exp2(4 * v) // f8E8M0FNU holds powers of two only, no sign, no zero
		}
		u = uint64(xla.NarrowFloatOf(dt).Encode(float32(v)))
	}
	for k := range e {
		e[k] = byte(u >> (8 * k))
	}
}
