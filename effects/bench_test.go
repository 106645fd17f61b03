package effects

import (
	"testing"
	"time"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// BenchmarkDispatch measures one small computation (x + x on a f32[16])
// dispatched without waiting on the interpreter, in batches of 64 calls
// followed by a wait for the batch. "dispatch" counts only the caller's
// time in the calls: every call of a batch takes an argument that is
// given only after the batch (an alias buffer), so no computation runs
// while the caller dispatches, and the timer stops while the batch runs.
// "throughput" takes a ready argument and counts the waits too, so for
// ordered effects it includes running the chain one computation after
// the other. Variants:
//
//   - none: the computation alone, pjrt.Executable.Execute;
//   - none-stream: the same through Stream.Execute (no effects);
//   - unordered: plus one no-op unordered callback, through a Stream;
//   - ordered: plus one no-op ordered callback, through a Stream (runtime
//     token passed, alias buffer, relay).
//
// ordered - unordered is the cost of the runtime token chain; ordered -
// none the whole cost of having an ordered effect.
func BenchmarkDispatch(b *testing.B) {
	c := openInterpreter(b, 1)
	noop := HostFunc{Name: "noop", Fn: func([]Array) ([]Array, error) { return nil, nil }}
	prog := func(kind *Effect) *stablehlo.Module {
		return build(b, func(fb *stablehlo.FuncBuilder) {
			if kind != nil {
				if _, err := Callback(fb, noop, *kind, fb.Arg(0)); err != nil {
					b.Fatal(err)
				}
			}
			fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)))
		}, stablehlo.Tensor(xla.Float32, 16))
	}
	x, err := pjrt.BufferFrom(c, make([]float32, 16), []int64{16}, pjrt.CopyDuringCall())
	if err != nil {
		b.Fatal(err)
	}
	ordered, unordered := Ordered("bench"), Unordered
	for _, tc := range []struct {
		name   string
		kind   *Effect
		stream bool
	}{
		{"none", nil, false},
		{"none-stream", nil, true},
		{"unordered", &unordered, true},
		{"ordered", &ordered, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			exe := compile(b, c, prog(tc.kind))
			s := NewStream()
			run := func(arg *pjrt.Buffer) (*pjrt.Buffer, error) {
				if !tc.stream {
					outs, err := exe.PJRT().Run(arg)
					if err != nil {
						return nil, err
					}
					return outs[0], nil
				}
				outs, err := s.Execute(exe, arg)
				if err != nil {
					return nil, err
				}
				return outs[0], nil
			}
			for _, mode := range []string{"dispatch", "throughput"} {
				b.Run(mode, func(b *testing.B) {
					b.ReportAllocs()
					arg, gate := x, (*pjrt.AliasFulfillment)(nil)
					newGate := func() {
						if mode == "dispatch" {
							arg, gate, err = c.CreateAliasBuffer(xla.MakeShape(xla.Float32, 16))
							if err != nil {
								b.Fatal(err)
							}
						}
					}
					b.StopTimer()
					newGate()
					b.StartTimer()
					for i := 0; i < b.N; i++ {
						out, err := run(arg)
						if err != nil {
							b.Fatal(err)
						}
						if i%64 == 63 || i == b.N-1 {
							if mode == "dispatch" {
								b.StopTimer()
								if err := gate.Fulfill(x); err != nil {
									b.Fatal(err)
								}
							}
							if err := out.Await(ctxT(b)); err != nil {
								b.Fatal(err)
							}
							if err := s.Barrier(ctxT(b)); err != nil {
								b.Fatal(err)
							}
							if mode == "dispatch" {
								newGate()
								b.StartTimer()
							}
						}
					}
					if gate != nil {
						gate.Close()
					}
				})
			}
		})
	}
}

// BenchmarkDispatchOverhead measures the dispatch cost of one ordered
// effect side by side with the same computation without effects (x + x
// on a f32[16], both through Stream.Execute), alternating batches of 64
// calls of each so that a machine whose load drifts slows both alike.
// As in BenchmarkDispatch's "dispatch" mode, every call takes an argument
// given only after its batch, and only the caller's time in the calls is
// counted. It reports ns per call of each ("none-ns/call",
// "ordered-ns/call") and their difference as ns/op.
func BenchmarkDispatchOverhead(b *testing.B) {
	c := openInterpreter(b, 1)
	noop := HostFunc{Name: "noop", Fn: func([]Array) ([]Array, error) { return nil, nil }}
	prog := func(ordered bool) *Executable {
		return compile(b, c, build(b, func(fb *stablehlo.FuncBuilder) {
			if ordered {
				if _, err := Callback(fb, noop, Ordered("bench"), fb.Arg(0)); err != nil {
					b.Fatal(err)
				}
			}
			fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)))
		}, stablehlo.Tensor(xla.Float32, 16)))
	}
	exes := [2]*Executable{prog(false), prog(true)}
	x, err := pjrt.BufferFrom(c, make([]float32, 16), []int64{16}, pjrt.CopyDuringCall())
	if err != nil {
		b.Fatal(err)
	}
	s := NewStream()
	const batch = 64
	var spent [2]time.Duration
	calls := 0
	b.ResetTimer()
	b.StopTimer() // timed by hand: only the calls count
	for calls < b.N {
		n := min(batch, b.N-calls)
		for k, exe := range exes {
			arg, gate, err := c.CreateAliasBuffer(xla.MakeShape(xla.Float32, 16))
			if err != nil {
				b.Fatal(err)
			}
			outs := make([]*pjrt.Buffer, n)
			start := time.Now()
			for i := range outs {
				res, err := s.Execute(exe, arg)
				if err != nil {
					b.Fatal(err)
				}
				outs[i] = res[0]
			}
			spent[k] += time.Since(start)
			if err := gate.Fulfill(x); err != nil {
				b.Fatal(err)
			}
			arg.Close()
			for _, o := range outs {
				if err := o.Await(ctxT(b)); err != nil {
					b.Fatal(err)
				}
				o.Close()
			}
			if err := s.Barrier(ctxT(b)); err != nil {
				b.Fatal(err)
			}
		}
		calls += n
	}
	none := float64(spent[0].Nanoseconds()) / float64(b.N)
	ordered := float64(spent[1].Nanoseconds()) / float64(b.N)
	b.ReportMetric(none, "none-ns/call")
	b.ReportMetric(ordered, "ordered-ns/call")
	b.ReportMetric(ordered-none, "ns/op")
}
