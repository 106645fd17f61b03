package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// The demo's model: a two-layer MLP on a batch of inputs, and a reduction
// (the column sums of its output).
const (
	demoBatch  = 8
	demoIn     = 16
	demoHidden = 32
	demoOut    = 4
)

// demoModule builds
//
//	logits = relu(x·w1 + b1)·w2 + b2      (8x16 → 8x32 → 8x4)
//	sums   = reduce_sum(logits, dim 0)    (4)
//
// with the stablehlo builder.
func demoModule() (*stablehlo.Module, error) {
	b := stablehlo.NewBuilder("demo_mlp")
	f := b.NewFunction("main",
		stablehlo.Tensor(xla.Float32, demoBatch, demoIn),
		stablehlo.Tensor(xla.Float32, demoIn, demoHidden),
		stablehlo.Tensor(xla.Float32, demoHidden),
		stablehlo.Tensor(xla.Float32, demoHidden, demoOut),
		stablehlo.Tensor(xla.Float32, demoOut))
	x, w1, b1, w2, b2 := f.Arg(0), f.Arg(1), f.Arg(2), f.Arg(3), f.Arg(4)
	h := f.Add(f.Matmul(x, w1), f.BroadcastInDim(b1, []int64{demoBatch, demoHidden}, []int64{1}))
	h = f.Maximum(h, f.SplatOf(xla.Float32, 0, demoBatch, demoHidden))
	logits := f.Add(f.Matmul(h, w2), f.BroadcastInDim(b2, []int64{demoBatch, demoOut}, []int64{1}))
	f.Return(logits, f.ReduceSum(logits, 0))
	return b.Build()
}

// demoInputs makes deterministic inputs in [-1, 1).
func demoInputs() [][]float32 {
	seed := uint32(12345)
	next := func() float32 {
		seed = seed*1664525 + 1013904223
		return float32(seed>>8)/float32(1<<24)*2 - 1
	}
	sizes := []int{demoBatch * demoIn, demoIn * demoHidden, demoHidden, demoHidden * demoOut, demoOut}
	out := make([][]float32, len(sizes))
	for i, n := range sizes {
		out[i] = make([]float32, n)
		for k := range out[i] {
			out[i][k] = next()
		}
	}
	return out
}

// demoReference computes the model in plain Go (float32, like the program).
func demoReference(in [][]float32) (logits, sums []float32) {
	x, w1, b1, w2, b2 := in[0], in[1], in[2], in[3], in[4]
	h := make([]float32, demoBatch*demoHidden)
	for i := 0; i < demoBatch; i++ {
		for j := 0; j < demoHidden; j++ {
			var s float32
			for k := 0; k < demoIn; k++ {
				s += x[i*demoIn+k] * w1[k*demoHidden+j]
			}
			h[i*demoHidden+j] = max(s+b1[j], 0)
		}
	}
	logits = make([]float32, demoBatch*demoOut)
	sums = make([]float32, demoOut)
	for i := 0; i < demoBatch; i++ {
		for j := 0; j < demoOut; j++ {
			var s float32
			for k := 0; k < demoHidden; k++ {
				s += h[i*demoHidden+k] * w2[k*demoOut+j]
			}
			logits[i*demoOut+j] = s + b2[j]
			sums[j] += logits[i*demoOut+j]
		}
	}
	return logits, sums
}

// demo builds the model, runs it on the backend plugin names or, for "",
// on the best backend found that runs it (telling errw why it passed over
// any other), and checks it against the plain-Go computation.
func demo(w, errw io.Writer, plugin string) error {
	t0 := time.Now()
	m, err := demoModule()
	if err != nil {
		return err
	}
	text := m.String()
	buildTime := time.Since(t0)
	if plugin != "" {
		// The named backend first: a bad name is the whole answer.
		p, c, err := loadBackend(errw, "demo", plugin, 1)
		if err != nil {
			return err
		}
		defer c.Close()
		fmt.Fprintf(w, "program (built with the stablehlo builder in %v):\n%s\n", round(buildTime), text)
		return demoOn(w, p, c, text, buildTime)
	}
	fmt.Fprintf(w, "program (built with the stablehlo builder in %v):\n%s\n", round(buildTime), text)
	candidates := pjrt.Candidates()
	for i, info := range candidates {
		p, c, err := loadBackend(errw, "demo", info.NameOrPath(), 1)
		if err == nil {
			err = demoOn(w, p, c, text, buildTime)
			c.Close()
			if err == nil {
				return nil
			}
		}
		if i == len(candidates)-1 {
			return err
		}
		fmt.Fprintf(errw, "halo demo: passing over %s: %v\n", describeCandidate(info), err)
	}
	return errors.New("no backend found (not even the built-in interpreter)")
}

// demoOn runs the demo's program on client c of plugin p.
func demoOn(w io.Writer, p *pjrt.Plugin, c *pjrt.Client, text string, buildTime time.Duration) error {
	fmt.Fprintf(w, "backend: %s\n", p)
	devs := c.AddressableDevices()
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.String()
	}
	fmt.Fprintf(w, "platform: %s (%s), %d device(s): %s\n", c.PlatformName(), c.PlatformVersion(), len(devs), strings.Join(names, ", "))

	t0 := time.Now()
	exe, err := c.Compile(pjrt.MLIRText(text), nil)
	if err != nil {
		return err
	}
	defer exe.Close()
	compileTime := time.Since(t0)

	in := demoInputs()
	dims := [][]int64{{demoBatch, demoIn}, {demoIn, demoHidden}, {demoHidden}, {demoHidden, demoOut}, {demoOut}}
	args := make([]*pjrt.Buffer, len(in))
	for i := range in {
		if args[i], err = pjrt.BufferFrom(c, in[i], dims[i]); err != nil {
			return err
		}
		defer args[i].Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t0 = time.Now()
	outs, err := exe.Run(args...)
	if err != nil {
		return err
	}
	for _, b := range outs {
		defer b.Close()
	}
	if len(outs) != 2 {
		return fmt.Errorf("the program has 2 outputs, the backend returned %d", len(outs))
	}
	logits, err := pjrt.ToSlice[float32](ctx, outs[0])
	if err != nil {
		return fmt.Errorf("logits: %w", err)
	}
	sums, err := pjrt.ToSlice[float32](ctx, outs[1])
	if err != nil {
		return fmt.Errorf("sums: %w", err)
	}
	firstRun := time.Since(t0)
	if len(logits) != demoBatch*demoOut || len(sums) != demoOut {
		return fmt.Errorf("the backend returned %d logits and %d sums, want %d and %d", len(logits), len(sums), demoBatch*demoOut, demoOut)
	}

	// Steady state: run again and time each execution end to end.
	const runs = 50
	times := make([]time.Duration, runs)
	for i := range times {
		t := time.Now()
		o, err := exe.Run(args...)
		if err != nil {
			return err
		}
		err = o[len(o)-1].Await(ctx)
		times[i] = time.Since(t)
		for _, b := range o {
			b.Close()
		}
		if err != nil {
			return err
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })

	fmt.Fprintf(w, "inputs: x %dx%d, w1 %dx%d, b1 %d, w2 %dx%d, b2 %d (deterministic values in [-1, 1))\n",
		demoBatch, demoIn, demoIn, demoHidden, demoHidden, demoHidden, demoOut, demoOut)
	fmt.Fprintf(w, "logits[0] = %s\n", formatFloats(logits[:demoOut]))
	fmt.Fprintf(w, "column sums = %s\n", formatFloats(sums))

	wantLogits, wantSums := demoReference(in)
	errL, errS := maxRelErr(logits, wantLogits), maxRelErr(sums, wantSums)
	fmt.Fprintf(w, "check against plain Go: max relative error %.2g (logits), %.2g (sums)\n", errL, errS)
	fmt.Fprintf(w, "timings: build %v, compile %v, first run %v, steady run %v (median of %d, min %v)\n",
		round(buildTime), round(compileTime), round(firstRun), round(times[runs/2]), runs, round(times[0]))
	if !(errL <= 1e-4 && errS <= 1e-4) {
		return fmt.Errorf("results differ from the plain-Go computation (max relative error %g, %g)", errL, errS)
	}
	fmt.Fprintln(w, "OK")
	return nil
}

// maxRelErr is the largest difference between got and want relative to
// want (absolute below 1); +Inf when the lengths differ or a value is NaN
// where the other is not.
func maxRelErr(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var worst float64
	for i := range got {
		g, x := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsNaN(x) {
			if math.IsNaN(g) != math.IsNaN(x) {
				return math.Inf(1)
			}
			continue
		}
		d := math.Abs(g - x)
		if math.IsInf(g, 0) && g == x {
			d = 0
		}
		worst = max(worst, d/max(1, math.Abs(x)))
	}
	return worst
}

func formatFloats(v []float32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.4f", x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(100 * time.Nanosecond)
	}
}
