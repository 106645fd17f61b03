package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// reference computes op(A)·op(B) in float64 with plain loops, and the sum
// of |a||b| of each element, which bounds its rounding error.
func reference[T float32 | float64](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int) (want, mag []float64) {
	want, mag = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, g float64
			for p := 0; p < k; p++ {
				ai, bi := i*lda+p, p*ldb+j
				if transA {
					ai = p*lda + i
				}
				if transB {
					bi = j*ldb + p
				}
				av, bv := a[ai], b[bi]
				s += float64(av) * float64(bv)
				g += math.Abs(float64(av) * float64(bv))
			}
			want[i*n+j], mag[i*n+j] = s, g
		}
	}
	return want, mag
}

// withKernels runs f once with the assembly kernels and row copies (where
// this machine has them) and once with the portable ones.
func withKernels(t *testing.T, f func(t *testing.T)) {
	if asmKernels {
		t.Run("asm", f)
	} else {
		t.Log("assembly kernels not run: this processor lacks AVX2 and FMA, or this is not an amd64 build")
	}
	f32, f64, rows := kernelF32, kernelF64, copyRows
	kernelF32, kernelF64, copyRows = kernelGo[float32], kernelGo[float64], copyRowsGo
	defer func() { kernelF32, kernelF64, copyRows = f32, f64, rows }()
	t.Run("go", f)
}

func randomMatrix[T float32 | float64](r *rand.Rand, n int) []T {
	x := make([]T, n)
	for i := range x {
		x[i] = T(r.Float64()*2 - 1)
	}
	return x
}

func checkMul[T float32 | float64](t *testing.T, r *rand.Rand, transA, transB bool, m, n, k, pad, workers int) {
	t.Helper()
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	lda, ldb, ldc := ca+pad, cb+pad, n+pad
	a := randomMatrix[T](r, max(ra*lda, 1))
	b := randomMatrix[T](r, max(rb*ldb, 1))
	c := make([]T, max(m*ldc, 1))
	const sentinel = 12345
	for i := range c {
		c[i] = sentinel
	}
	Mul(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, workers)
	want, mag := reference(transA, transB, m, n, k, a, lda, b, ldb)
	var z T
	eps := 1e-6
	if any(z) == any(float64(0)) {
		eps = 1e-14
	}
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got := float64(c[i*ldc+j])
			if j >= n {
				if got != sentinel {
					t.Fatalf("%dx%dx%d tA=%v tB=%v: C[%d,%d] outside the product was written: %v", m, n, k, transA, transB, i, j, got)
				}
				continue
			}
			w := want[i*n+j]
			if math.Abs(got-w) > eps*(mag[i*n+j]+1e-30)*float64(k+1) {
				t.Fatalf("%dx%dx%d tA=%v tB=%v workers=%d: C[%d,%d] = %v, want %v", m, n, k, transA, transB, workers, i, j, got, w)
			}
		}
	}
}

func TestMulShapes(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		dims := []int{1, 2, 5, 6, 7, 12, 15, 16, 17, 33}
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, m := range dims {
				for _, n := range dims {
					for _, k := range []int{1, 3, 16, 31} {
						checkMul[float32](t, r, tr[0], tr[1], m, n, k, m%3, 1)
						checkMul[float64](t, r, tr[0], tr[1], m, n, k, n%2, 1)
					}
				}
			}
		}
	})
}

// Products large enough to cross the K block (256), the B panel (1024
// float32 or 512 float64 columns) and to be split across goroutines.
func TestMulBlocksAndWorkers(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, c := range []struct{ m, n, k, workers int }{
			{100, 70, 600, 4},
			{7, 1100, 300, 3},
			{130, 9, 513, 2},
			{64, 64, 1024, 2},
			{200, 520, 40, 5},
			{256, 256, 300, 2}, // 43 row tiles: the parts share one tile's slivers
		} {
			for _, tr := range [][2]bool{{false, false}, {true, true}} {
				checkMul[float32](t, r, tr[0], tr[1], c.m, c.n, c.k, 3, c.workers)
				checkMul[float64](t, r, tr[0], tr[1], c.m, c.n, c.k, 0, c.workers)
			}
		}
	})
}

func TestMulZeroK(t *testing.T) {
	c := []float32{1, 2, 3, 4, 5, 6}
	Mul(false, false, 2, 2, 0, nil, 1, nil, 2, c, 3, 1)
	want := []float32{0, 0, 3, 0, 0, 6}
	for i := range c {
		if c[i] != want[i] {
			t.Fatalf("k = 0: C = %v, want %v", c, want)
		}
	}
}

// TestPackZeroK: packing a 0×n B (transposed: stored n×0) is an empty
// operand that zeroes C, as Mul does (packB sliced past the empty slice).
func TestPackZeroK(t *testing.T) {
	for _, transB := range []bool{false, true} {
		pb := Pack[float32](transB, 0, 2, nil, 1, 1)
		c := []float32{7, 7, 7, 7}
		MulPacked(false, 2, nil, 1, pb, c, 2, 1)
		for i, v := range c {
			if v != 0 {
				t.Fatalf("transB %v: C[%d] = %v, want 0", transB, i, v)
			}
		}
		pb.Free()
	}
}

// A zero of A times an infinity of B is NaN: no zero is skipped.
func TestMulZeroTimesInfinityIsNaN(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		for _, size := range []int{1, 7, 40} {
			a := make([]float32, size*size) // all zeros
			b := make([]float32, size*size)
			b[size*size-1] = float32(math.Inf(1))
			c := make([]float32, size*size)
			Mul(false, false, size, size, size, a, size, b, size, c, size, 2)
			for i := 0; i < size; i++ {
				for j := 0; j < size; j++ {
					got := c[i*size+j]
					if j == size-1 && !math.IsNaN(float64(got)) {
						t.Fatalf("%d^3: C[%d,%d] = %v, want NaN (0 × Inf)", size, i, j, got)
					}
					if j != size-1 && got != 0 {
						t.Fatalf("%d^3: C[%d,%d] = %v, want 0", size, i, j, got)
					}
				}
			}
		}
	})
}

func TestMulRejectsShortSlices(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"short A", func() {
			Mul(false, false, 2, 2, 2, make([]float32, 3), 2, make([]float32, 4), 2, make([]float32, 4), 2, 1)
		}, "A is 2×2"},
		{"short C", func() {
			Mul(false, false, 2, 2, 2, make([]float64, 4), 2, make([]float64, 4), 2, make([]float64, 3), 2, 1)
		}, "C is 2×2"},
		{"small stride", func() {
			Mul(false, true, 2, 3, 2, make([]float32, 4), 2, make([]float32, 6), 1, make([]float32, 6), 3, 1)
		}, "B is 3×2 but its row stride is 1"},
		{"negative", func() { Mul[float32](false, false, -1, 2, 2, nil, 2, nil, 2, nil, 2, 1) }, "negative dimension"},
		// (9-1)*2^61 wraps to 0: the check passed and the assembly kernel
		// read 2^63 bytes past A (a fault no recover catches).
		{"stride that wraps", func() {
			Mul(true, false, 6, 16, 9, make([]float32, 6), 1<<61, make([]float32, 9*16), 16, make([]float32, 6*16), 16, 1)
		}, "more elements than an int counts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Fatalf("panic %v, want one naming %q", r, c.want)
				}
			}()
			c.f()
		})
	}
}

// TestMulStridedB: windows of wider matrices (B's rows far apart, packed
// before use) and strides just below and at the packing threshold.
func TestMulStridedB(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, c := range []struct{ m, n, k, pad, workers int }{
			{64, 48, 300, 4000, 2},
			{13, 33, 70, 1000, 1},
			{40, 256, 520, 0, 2},               // f32 rows of exactly 16 slivers
			{40, 16*packStride - 1, 30, 0, 2},  // one element short of it
			{7, 1100, 300, 2048 - 1100 + 5, 3}, // two panels and a narrow sliver
		} {
			checkMul[float32](t, r, false, false, c.m, c.n, c.k, c.pad, c.workers)
			checkMul[float64](t, r, false, false, c.m, c.n, c.k, c.pad, c.workers)
		}
	})
}

// TestMulPackedMatchesMul: a B packed once gives what Mul gives, for
// several products (both element types, transposed B, two panels and a
// narrow last sliver, a window of a wider matrix).
func TestMulPackedMatchesMul(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, c := range []struct {
			transB        bool
			m, n, k, ldbX int
		}{
			{false, 30, 1100, 70, 0},
			{true, 13, 40, 300, 5},
			{false, 64, 256, 512, 4096 - 256},
			{false, 1, 17, 1, 300},
		} {
			rb, cb := c.k, c.n
			if c.transB {
				rb, cb = c.n, c.k
			}
			ldb := cb + c.ldbX
			b32 := randomMatrix[float32](r, rb*ldb)
			b64 := randomMatrix[float64](r, rb*ldb)
			p32 := Pack(c.transB, c.k, c.n, b32, ldb, 2)
			p64 := Pack(c.transB, c.k, c.n, b64, ldb, 2)
			assert.Equal(t, (c.n+15)/16*16*c.k*4, p32.Bytes())
			for _, transA := range []bool{false, true} {
				a32 := randomMatrix[float32](r, c.m*c.k)
				a64 := randomMatrix[float64](r, c.m*c.k)
				lda := c.k
				if transA {
					lda = c.m
				}
				want32, got32 := make([]float32, c.m*c.n), make([]float32, c.m*c.n)
				Mul(transA, c.transB, c.m, c.n, c.k, a32, lda, b32, ldb, want32, c.n, 2)
				MulPacked(transA, c.m, a32, lda, p32, got32, c.n, 2)
				assert.Equal(t, want32, got32, "f32 %+v transA=%v", c, transA)
				want64, got64 := make([]float64, c.m*c.n), make([]float64, c.m*c.n)
				Mul(transA, c.transB, c.m, c.n, c.k, a64, lda, b64, ldb, want64, c.n, 1)
				MulPacked(transA, c.m, a64, lda, p64, got64, c.n, 3)
				assert.Equal(t, want64, got64, "f64 %+v transA=%v", c, transA)
			}
		}
	})
}

// A freed Packed's memory goes to the next Pack of the same size, which
// must overwrite all of it: the first B is all NaN, so any element left
// over would turn the second product's sums into NaN.
func TestPackIntoFreedMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, transB := range []bool{false, true} {
		const m, n, k, ldb = 12, 40, 33, 50 // n not a multiple of the sliver width
		poison := make([]float32, 50*50)
		for i := range poison {
			poison[i] = float32(math.NaN())
		}
		for range 3 {
			Pack(transB, k, n, poison, ldb, 2).Free()
			b := randomMatrix[float32](r, 50*50)
			a := randomMatrix[float32](r, m*k)
			pb := Pack(transB, k, n, b, ldb, 2)
			want, got := make([]float32, m*n), make([]float32, m*n)
			Mul(false, transB, m, n, k, a, k, b, ldb, want, n, 2)
			MulPacked(false, m, a, k, pb, got, n, 2)
			assert.Equal(t, want, got, "transB=%v", transB)
			pb.Free()
			pb.Free() // a second Free does nothing
			assert.PanicsWithValue(t, "gemm: MulPacked with a freed Packed operand", func() {
				MulPacked(false, m, a, k, pb, got, n, 2)
			})
		}
	}
}

// MulAdd and MulPackedAdd add the product to C; up to KBlock steps of K
// the sums are those of Mul into a temporary followed by an add, to the
// bit, at C's edges (rows and columns past whole kernel blocks) too.
func TestMulAddIsMulThenAdd(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, c := range []struct {
			transA, transB bool
			m, n, k, ldbX  int
		}{
			{false, false, 13, 37, 200, 0},
			{true, false, 20, 50, KBlock, 0},
			{false, true, 7, 130, 64, 3},
			{false, false, 25, 40, 128, 4096},
			{false, false, 6, 16, 1, 0},
			{false, false, 30, 33, 3 * KBlock, 0},
		} {
			ra, ca := c.m, c.k
			if c.transA {
				ra, ca = c.k, c.m
			}
			rb, cb := c.k, c.n
			if c.transB {
				rb, cb = c.n, c.k
			}
			ldb := cb + c.ldbX
			a := randomMatrix[float32](r, ra*ca)
			b := randomMatrix[float32](r, rb*ldb)
			c0 := randomMatrix[float32](r, c.m*c.n)
			prod := make([]float32, c.m*c.n)
			Mul(c.transA, c.transB, c.m, c.n, c.k, a, ca, b, ldb, prod, c.n, 2)
			want := make([]float32, c.m*c.n)
			for i := range want {
				want[i] = c0[i] + prod[i]
			}
			got := append([]float32(nil), c0...)
			MulAdd(c.transA, c.transB, c.m, c.n, c.k, a, ca, b, ldb, got, c.n, 2)
			packed := append([]float32(nil), c0...)
			pb := Pack(c.transB, c.k, c.n, b, ldb, 2)
			MulPackedAdd(c.transA, c.m, a, ca, pb, packed, c.n, 2)
			pb.Free()
			if c.k <= KBlock {
				assert.Equal(t, want, got, "%+v", c)
				assert.Equal(t, want, packed, "%+v packed", c)
				continue
			}
			// More steps than KBlock add partial sums to C one block at a
			// time: the same sum, rounded differently.
			for i := range want {
				assert.InDelta(t, want[i], got[i], 1e-4, "%+v element %d", c, i)
				assert.InDelta(t, want[i], packed[i], 1e-4, "%+v packed element %d", c, i)
			}
		}
		// No steps of K: C stays as it was.
		c0 := []float32{1, 2, 3, 4}
		MulAdd(false, false, 2, 2, 0, nil, 1, nil, 2, c0, 2, 1)
		assert.Equal(t, []float32{1, 2, 3, 4}, c0)
	})
}

// TestMulWithStop: a product whose stop flag is set ends without
// computing (C keeps what it held); unset, it computes as Mul.
func TestMulWithStop(t *testing.T) {
	const n = 64
	r := rand.New(rand.NewPCG(1, 2))
	a, b := randomMatrix[float32](r, n*n), randomMatrix[float32](r, n*n)
	want := make([]float32, n*n)
	Mul(false, false, n, n, n, a, n, b, n, want, n, 2)
	var stop atomic.Bool
	c := make([]float32, n*n)
	MulWith(false, false, n, n, n, a, n, b, n, c, n, Options{Workers: 2, Stop: &stop})
	assert.Equal(t, want, c)
	stop.Store(true)
	for i := range c {
		c[i] = -1
	}
	MulWith(false, false, n, n, n, a, n, b, n, c, n, Options{Workers: 2, Stop: &stop})
	for _, v := range c {
		assert.Equal(t, float32(-1), v)
	}
}

// TestMatrixVectorScratch: a product with B one column wide (read in
// place, its sliver narrower than nr) takes scratch of kcBlock rows, not
// nr copies of B (a vector of 2^24 floats took 1 GiB), with the numbers
// of the reference.
// A vector B that Mul would pack (stored transposed, or a column of a
// wide matrix) is copied k×1 rather than padded to a sliver of nr
// columns: scratch of B's size, not nr times it.
func TestPackedVectorScratch(t *testing.T) {
	const m, k, ld = 4, 1 << 16, 256
	r := rand.New(rand.NewPCG(5, 6))
	a := randomMatrix[float32](r, m*k)
	wide := randomMatrix[float32](r, (k-1)*ld+1) // column 0 of a k×ld matrix
	for _, c := range []struct {
		name   string
		transB bool
		b      []float32
		ldb    int
	}{
		{"transposed", true, wide[:k], k},
		{"column of a wide matrix", false, wide, ld},
	} {
		c2 := make([]float32, m)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		Mul(false, c.transB, m, 1, k, a, k, c.b, c.ldb, c2, 1, 2)
		runtime.ReadMemStats(&after)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2*4*k), "%s: scratch bytes", c.name)
		for i := 0; i < m; i++ {
			var want float64
			for p := 0; p < k; p++ {
				bv := c.b[p]
				if !c.transB {
					bv = c.b[p*c.ldb]
				}
				want += float64(a[i*k+p]) * float64(bv)
			}
			assert.InDelta(t, want, float64(c2[i]), 1e-3*math.Max(1, math.Abs(want)), c.name)
		}
	}
}

func TestMatrixVectorScratch(t *testing.T) {
	const m, k = 4, 1 << 20
	r := rand.New(rand.NewPCG(3, 4))
	a, b := randomMatrix[float32](r, m*k), randomMatrix[float32](r, k)
	c := make([]float32, m)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	Mul(false, false, m, 1, k, a, k, b, 1, c, 1, 2)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "scratch bytes")
	for i := 0; i < m; i++ {
		var want float64
		for p := 0; p < k; p++ {
			want += float64(a[i*k+p]) * float64(b[p])
		}
		assert.InDelta(t, want, float64(c[i]), 1e-3*math.Max(1, math.Abs(want)))
	}
}
