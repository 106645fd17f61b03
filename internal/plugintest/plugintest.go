// Package plugintest runs StableHLO modules through a real PJRT plugin from
// tests: the plugin HALO_PLUGIN names (a file, or cpu, cuda, tpu). Without
// HALO_PLUGIN the tests that need one skip, saying so. Benchmarks time a
// kernel against a dense program on the plugin with Compare (arguments
// kept on the device, results checked first, runs alternating); bf16 and
// f16 tensors travel as the interpreter keeps them, float32 values of the
// narrow type.
package plugintest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/halo-ml/halo/internal/pairbench"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Open returns a client of the HALO_PLUGIN plugin, closed when t ends, or
// skips t when HALO_PLUGIN is not set. why says what the test runs there.
// HALO_PLUGIN_OPTIONS, when set, are the client's create options
// (PluginOptions).
func Open(t testing.TB, why string) *pjrt.Client {
	t.Helper()
	name := os.Getenv("HALO_PLUGIN")
	if name == "" {
		t.Skipf("set HALO_PLUGIN to a PJRT plugin (a path, or cuda) to %s", why)
	}
	opts, err := PluginOptions(os.Getenv("HALO_PLUGIN_OPTIONS"))
	if err != nil {
		t.Fatalf("HALO_PLUGIN_OPTIONS: %v", err)
	}
	c, err := pjrt.Open(name, opts...)
	if err != nil {
		t.Fatalf("HALO_PLUGIN=%s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// PluginOptions parses create options written name=value, separated by
// commas (allocator=platform,preallocate=false): true and false are
// bools, integers int64, other numbers float32, the rest strings.
func PluginOptions(text string) ([]pjrt.Option, error) {
	var opts []pjrt.Option
	for _, f := range strings.Split(text, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not name=value", f)
		}
		var v any = value
		if b, err := strconv.ParseBool(value); err == nil && (value == "true" || value == "false") {
			v = b
		} else if i, err := strconv.ParseInt(value, 10, 64); err == nil {
			v = i
		} else if x, err := strconv.ParseFloat(value, 32); err == nil {
			v = float32(x)
		}
		opts = append(opts, pjrt.WithOption(name, v))
	}
	return opts, nil
}

// Compile prints mod and compiles it on c with the plugin's defaults (what
// benchmarks time, as JAX compiles).
func Compile(c *pjrt.Client, mod *stablehlo.Module) (*pjrt.Executable, error) {
	return compile(c, mod, nil)
}

// exact are the compile options Run uses: XLA may not drop a rounding
// the program asks for (xla_allow_excess_precision, on by default, let
// XLA's GPU backend fold an f64 -> f32 -> f64 round trip away).
var exact = func() *xla.CompileOptions {
	o := xla.DefaultCompileOptions()
	o.EnvOptionOverrides = map[string]any{"xla_allow_excess_precision": false}
	return &o
}()

func compile(c *pjrt.Client, mod *stablehlo.Module, opts *xla.CompileOptions) (*pjrt.Executable, error) {
	exe, err := c.Compile(pjrt.StableHLO(mod), opts)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return exe, nil
}

// Run compiles mod on c, without excess precision (every rounding the
// program asks for happens, as on the interpreter), runs it with args
// (tensors) and returns its outputs, read back as tensors of the shapes
// in outs.
func Run(ctx context.Context, c *pjrt.Client, mod *stablehlo.Module, args []interpreter.Value, outs []xla.Shape) ([]*interpreter.Tensor, error) {
	exe, err := compile(c, mod, exact)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	return RunExecutable(ctx, c, exe, args, outs)
}

// RunExecutable is Run with a compiled (or loaded) program; exe stays
// open.
func RunExecutable(ctx context.Context, c *pjrt.Client, exe *pjrt.Executable, args []interpreter.Value, outs []xla.Shape) ([]*interpreter.Tensor, error) {
	bufs, err := UploadAll(c, args)
	if err != nil {
		return nil, err
	}
	defer CloseAll(bufs)
	res, err := exe.Run(bufs...)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer CloseAll(res)
	if len(res) != len(outs) {
		return nil, fmt.Errorf("%d results, want %d", len(res), len(outs))
	}
	got := make([]*interpreter.Tensor, len(res))
	for i, b := range res {
		if got[i], err = Download(ctx, b, outs[i]); err != nil {
			return nil, fmt.Errorf("result %d: %w", i, err)
		}
	}
	return got, nil
}

// Download reads a buffer back as a tensor of shape s, any element type
// the interpreter holds (16-bit and narrower floats widened to float32,
// as the interpreter keeps them).
func Download(ctx context.Context, b *pjrt.Buffer, s xla.Shape) (*interpreter.Tensor, error) {
	if got := b.Shape(); !got.Equal(s) {
		return nil, fmt.Errorf("buffer holds %v, want %v", got, s)
	}
	host, err := b.Bytes(ctx)
	if err != nil {
		return nil, err
	}
	return interpreter.TensorFromHost(s, host)
}

// Upload copies a tensor of any element type to the client's first
// device.
func Upload(c *pjrt.Client, x *interpreter.Tensor) (*pjrt.Buffer, error) {
	return c.BufferFromHost(x.Host(), x.Shape, pjrt.CopyDuringCall())
}

// UploadAll uploads tensors (Upload); on an error it closes those it
// made.
func UploadAll(c *pjrt.Client, args []interpreter.Value) ([]*pjrt.Buffer, error) {
	bufs := make([]*pjrt.Buffer, 0, len(args))
	for i, a := range args {
		t, ok := a.(*interpreter.Tensor)
		if !ok {
			CloseAll(bufs)
			return nil, fmt.Errorf("argument %d is %T, not a tensor", i, a)
		}
		b, err := Upload(c, t)
		if err != nil {
			CloseAll(bufs)
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		bufs = append(bufs, b)
	}
	return bufs, nil
}

// CloseAll closes buffers.
func CloseAll(bufs []*pjrt.Buffer) {
	for _, b := range bufs {
		b.Close()
	}
}

// Timed returns a function that runs exe with args on the device, waits
// for its results and drops them: one timed call for a benchmark (the
// arguments stay on the device between calls).
func Timed(ctx context.Context, exe *pjrt.Executable, args []*pjrt.Buffer) func() error {
	return func() error {
		res, err := exe.Run(args...)
		if err != nil {
			return err
		}
		defer CloseAll(res)
		for _, r := range res {
			if err := r.Await(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// Queued returns a function that starts n runs of exe on args without
// waiting for any, then waits for all their results and releases them.
func Queued(ctx context.Context, exe *pjrt.Executable, args []*pjrt.Buffer) func(n int) error {
	return func(n int) error {
		var all []*pjrt.Buffer
		defer func() { CloseAll(all) }()
		for range n {
			res, err := exe.Run(args...)
			if err != nil {
				return err
			}
			all = append(all, res...)
		}
		for _, r := range all {
			if err := r.Await(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}

// EnvInt returns the positive integer in environment variable name, or
// def when it is not set. A value that is not a positive integer fails t.
func EnvInt(t testing.TB, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// Close reports the first element where got and want differ by more than
// tol × max(1, |want|), as an error naming it; nil when none does.
func Close(got, want []float32, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > tol*max(1, math.Abs(w)) {
			return fmt.Errorf("element %d: %v, want %v (tolerance %g)", i, g, w, tol)
		}
	}
	return nil
}

// Compare times kernel against dense on the plugin, side by side
// (pairbench): both compiled, their arguments uploaded once, each result
// read back and checked against the other with check first. out is the
// shape of both results.
func Compare(b *testing.B, c *pjrt.Client, dense *stablehlo.Module, denseArgs []interpreter.Value,
	kernel *stablehlo.Module, kernelArgs []interpreter.Value, out xla.Shape, check func(dense, kernel []float32) error) {
	b.Helper()
	d := prepare(b, c, dense, denseArgs, out)
	k := prepare(b, c, kernel, kernelArgs, out)
	if err := check(d.result, k.result); err != nil {
		b.Fatalf("the kernel's result differs from the dense one: %v", err)
	}
	timePair(b, d, k)
}

// Variant is one kernel of a Sweep: its name (a sub-benchmark's) and
// how to build it and its arguments.
type Variant struct {
	Name  string
	Build func() (*stablehlo.Module, []interpreter.Value, error)
}

// ErrDoesNotFit is what a Variant's Build returns (wrapped) for a config
// the benchmark's size cannot take (blocks that do not divide it): Sweep
// skips that sub-benchmark, saying why.
var ErrDoesNotFit = errors.New("the config does not fit this size")

// Sweep is Compare for several variants of a kernel against one dense
// program, compiled and uploaded once: each variant is a sub-benchmark
// (built, checked, then timed side by side with the dense program); one
// that fails to build or compile fails its sub-benchmark only, one whose
// Build returns ErrDoesNotFit skips it.
func Sweep(b *testing.B, c *pjrt.Client, dense *stablehlo.Module, denseArgs []interpreter.Value,
	out xla.Shape, check func(dense, kernel []float32) error, variants ...Variant) {
	b.Helper()
	d := prepare(b, c, dense, denseArgs, out)
	for _, v := range variants {
		b.Run(v.Name, func(b *testing.B) {
			mod, args, err := v.Build()
			if errors.Is(err, ErrDoesNotFit) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			k := prepare(b, c, mod, args, out)
			if err := check(d.result, k.result); err != nil {
				b.Fatalf("the kernel's result differs from the dense one: %v", err)
			}
			timePair(b, d, k)
		})
	}
}

// Queued timing: rounds of calls queued back to back (pairbench.RunQueued).
const queuedRounds, queuedCalls = 10, 20

// timePair times the dense program d against the kernel k: one call and
// the wait for it, alternating (pairbench.Run: what a caller waiting for
// each result sees), then, unless HALO_BENCH_QUEUED is 0, calls queued
// back to back (pairbench.RunQueued: the programs' own time, the cost of
// starting and waiting for a call hidden behind the calls before it;
// 400 more calls, long on the interpreter at large sizes).
func timePair(b *testing.B, d, k prepared) {
	b.Helper()
	pairbench.Run(b, "dense", d.run, "kernel", k.run)
	switch v := os.Getenv("HALO_BENCH_QUEUED"); v {
	case "0":
	case "", "1":
		pairbench.RunQueued(b, queuedRounds, queuedCalls, "dense", d.queue, "kernel", k.queue)
	default:
		b.Fatalf("HALO_BENCH_QUEUED=%q: want 0 (off) or 1 (on, the default)", v)
	}
}

// prepared is a compiled program with its arguments on the device, its
// result read back once, a timed run (Timed) and queued runs (Queued).
type prepared struct {
	result []float32
	run    func() error
	queue  func(n int) error
}

// prepare compiles mod, uploads args (both released when b ends), runs
// it once and reads its result back.
func prepare(b *testing.B, c *pjrt.Client, mod *stablehlo.Module, args []interpreter.Value, out xla.Shape) prepared {
	b.Helper()
	ctx := context.Background()
	exe, err := Compile(c, mod)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { exe.Close() })
	bufs, err := UploadAll(c, args)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { CloseAll(bufs) })
	res, err := exe.Run(bufs...)
	if err != nil {
		b.Fatal(err)
	}
	t, err := Download(ctx, res[0], out)
	CloseAll(res)
	if err != nil {
		b.Fatal(err)
	}
	result := asFloats(t)
	if result == nil && t.Len() > 0 {
		b.Fatalf("results of %v cannot be compared (f32, bf16, f16 or i32 only)", out)
	}
	return prepared{result: result, run: Timed(ctx, exe, bufs), queue: Queued(ctx, exe, bufs)}
}

// Config is one setting of a Triton kernel's tunables for a benchmark
// sweep: block sizes (0: the benchmark's default) and launch settings.
type Config struct {
	BM, BN, BK    int64
	Warps, Stages int
	// Group is a grouped program order's group size (0: none).
	Group int64
	// Tiles is the number of output blocks a program computes (0: one).
	Tiles int64
	// Order is 1 for programs in order of decreasing work (0: grid order).
	Order int64
	// Programs is the number of programs of a persistent kernel, each
	// working through a list of output blocks (0: one program a block).
	Programs int64
}

// String names the config as a sub-benchmark: bm128_bn128_bk64_w4_s3,
// without the parts left at 0.
func (c Config) String() string {
	var parts []string
	for _, f := range []struct {
		name string
		v    int64
	}{{"bm", c.BM}, {"bn", c.BN}, {"bk", c.BK}, {"w", int64(c.Warps)}, {"s", int64(c.Stages)}, {"g", c.Group}, {"t", c.Tiles}, {"o", c.Order}, {"p", c.Programs}} {
		if f.v != 0 {
			parts = append(parts, fmt.Sprintf("%s%d", f.name, f.v))
		}
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, "_")
}

// Configs reads a sweep from environment variable name, else def: configs
// separated by spaces, each comma-separated key=value settings of bm, bn,
// bk, warps, stages, group, tiles, order and programs
// ("bn=256,warps=8,stages=3 bn=128 bn=128,programs=264").
// A malformed one fails t.
func Configs(t testing.TB, name, def string) []Config {
	t.Helper()
	text := os.Getenv(name)
	if text == "" {
		text = def
	}
	var cs []Config
	for _, field := range strings.Fields(text) {
		var c Config
		for _, kv := range strings.Split(field, ",") {
			k, v, ok := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 32)
			if !ok || err != nil || n <= 0 {
				t.Fatalf("%s: %q: want key=positive integer", name, kv)
			}
			switch k {
			case "bm":
				c.BM = n
			case "bn":
				c.BN = n
			case "bk":
				c.BK = n
			case "warps":
				c.Warps = int(n)
			case "stages":
				c.Stages = int(n)
			case "group":
				c.Group = n
			case "tiles":
				c.Tiles = n
			case "order":
				if n != 1 {
					t.Fatalf("%s: %q: order=1 is the only order", name, kv)
				}
				c.Order = n
			case "programs":
				c.Programs = n
			default:
				t.Fatalf("%s: unknown setting %q (bm, bn, bk, warps, stages, group, tiles, order, programs)", name, k)
			}
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		t.Fatalf("%s: no configs", name)
	}
	return cs
}

// asFloats returns a float or i32 tensor's elements as float32.
func asFloats(t *interpreter.Tensor) []float32 {
	switch d := t.Data.(type) {
	case []float32:
		return d
	case []int32:
		f := make([]float32, len(d))
		for i, v := range d {
			f[i] = float32(v)
		}
		return f
	}
	return nil
}
