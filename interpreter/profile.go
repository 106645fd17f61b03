package interpreter

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Profile accumulates, per kind of op, how often runs executed it and the
// time they spent in it: each op's own time, without the ops of its
// regions (a while loop's own time is its bookkeeping; its body's ops are
// counted under their own names). Runs given a context from WithProfile
// add to it; a Profile may be shared by concurrent runs (each device of a
// multi-device run adds its own time: those times overlap, and the op
// that runs the devices counts their whole run as its own).
type Profile struct {
	mu  sync.Mutex
	ops map[string]*OpTime
}

// OpTime is one kind of op in a Profile.
type OpTime struct {
	Op    string        // "stablehlo.dot_general"
	Calls int64         // executions
	Time  time.Duration // their own time in all
}

type profileKey struct{}

// WithProfile returns a context that makes the runs it is given
// (Program.Run) add the time of their ops to p. Without it a run reads no
// clock.
func WithProfile(ctx context.Context, p *Profile) context.Context {
	return context.WithValue(ctx, profileKey{}, p)
}

func profileOf(ctx context.Context) *Profile {
	if ctx == nil {
		return nil
	}
	p, _ := ctx.Value(profileKey{}).(*Profile)
	return p
}

func (p *Profile) add(op string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ops == nil {
		p.ops = map[string]*OpTime{}
	}
	t := p.ops[op]
	if t == nil {
		t = &OpTime{Op: op}
		p.ops[op] = t
	}
	t.Calls++
	t.Time += d
}

// Ops returns the kinds of op seen, the most time first.
func (p *Profile) Ops() []OpTime {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]OpTime, 0, len(p.ops))
	for _, t := range p.ops {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Time != out[j].Time {
			return out[i].Time > out[j].Time
		}
		return out[i].Op < out[j].Op
	})
	return out
}

// Total is the time of all ops.
func (p *Profile) Total() time.Duration {
	var d time.Duration
	for _, t := range p.Ops() {
		d += t.Time
	}
	return d
}

// Reset forgets what was accumulated.
func (p *Profile) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ops = nil
}

// String is a table of the ops, the most time first: time, share of the
// total, calls, time per call.
func (p *Profile) String() string {
	ops := p.Ops()
	var total time.Duration
	for _, t := range ops {
		total += t.Time
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-36s %12s %6s %10s %12s\n", "op", "time", "share", "calls", "per call")
	for _, t := range ops {
		share := 0.0
		if total > 0 {
			share = 100 * float64(t.Time) / float64(total)
		}
		fmt.Fprintf(&b, "%-36s %12v %5.1f%% %10d %12v\n", t.Op, t.Time.Round(time.Microsecond), share, t.Calls,
			(t.Time / time.Duration(max(t.Calls, 1))).Round(time.Nanosecond))
	}
	fmt.Fprintf(&b, "%-36s %12v\n", "total", total.Round(time.Microsecond))
	return b.String()
}
