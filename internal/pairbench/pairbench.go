// Package pairbench times two ways of computing the same thing side by
// side, alternating one run of each, so that a shared machine's drift
// (other jobs, frequency changes) slows both alike. It reports the median
// time of each and the median of the per-pair ratios.
package pairbench

import (
	"slices"
	"testing"
	"time"
)

// Run calls base then candidate once per benchmark iteration and reports,
// as metrics, base-ms and candidate-ms (medians) and base/candidate (the
// median over iterations of base's time divided by candidate's). The
// benchmark's own ns/op is the time of one pair. Each is called once
// before, untimed, so that one-time costs (memory touched for the first
// time, pools filled, a GPU module loaded) stay out. An error from either
// function fails the benchmark.
func Run(b *testing.B, baseName string, base func() error, candName string, candidate func() error) {
	b.Helper()
	if err := base(); err != nil {
		b.Fatalf("%s: %v", baseName, err)
	}
	if err := candidate(); err != nil {
		b.Fatalf("%s: %v", candName, err)
	}
	var tb, tc []float64
	for b.Loop() {
		t0 := time.Now()
		if err := base(); err != nil {
			b.Fatalf("%s: %v", baseName, err)
		}
		t1 := time.Now()
		if err := candidate(); err != nil {
			b.Fatalf("%s: %v", candName, err)
		}
		t2 := time.Now()
		tb = append(tb, t1.Sub(t0).Seconds())
		tc = append(tc, t2.Sub(t1).Seconds())
	}
	ratios := make([]float64, len(tb))
	for i := range tb {
		ratios[i] = tb[i] / tc[i]
	}
	b.ReportMetric(Median(tb)*1e3, baseName+"-ms")
	b.ReportMetric(Median(tc)*1e3, candName+"-ms")
	b.ReportMetric(Median(ratios), baseName+"/"+candName)
}

// RunQueued times base and candidate with their calls queued back to
// back, so that what each call costs besides the computation (starting
// it, waiting for its end) overlaps the computations before it: each of
// rounds rounds calls base(n), then candidate(n), each of which starts n
// calls without waiting for any, then waits for them all. It reports, as
// metrics, baseName-queued-ms and candName-queued-ms (medians over the
// rounds of the time per call) and baseName/candName-queued (the median
// of the per-round ratios). Call it after Run's loop (b.Loop): its time
// is not the benchmark's ns/op. An error from either function fails the
// benchmark.
func RunQueued(b *testing.B, rounds, n int, baseName string, base func(n int) error, candName string, candidate func(n int) error) {
	b.Helper()
	if rounds < 1 || n < 1 {
		b.Fatalf("pairbench: %d rounds of %d calls", rounds, n)
	}
	var tb, tc, ratios []float64
	for range rounds {
		t0 := time.Now()
		if err := base(n); err != nil {
			b.Fatalf("%s: %v", baseName, err)
		}
		t1 := time.Now()
		if err := candidate(n); err != nil {
			b.Fatalf("%s: %v", candName, err)
		}
		t2 := time.Now()
		db, dc := t1.Sub(t0).Seconds()/float64(n), t2.Sub(t1).Seconds()/float64(n)
		tb, tc, ratios = append(tb, db), append(tc, dc), append(ratios, db/dc)
	}
	b.ReportMetric(Median(tb)*1e3, baseName+"-queued-ms")
	b.ReportMetric(Median(tc)*1e3, candName+"-queued-ms")
	b.ReportMetric(Median(ratios), baseName+"/"+candName+"-queued")
}

// Median returns the median of xs (the mean of the middle two for an even
// count; 0 for none). xs is not changed.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
