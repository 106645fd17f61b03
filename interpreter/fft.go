package interpreter

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// fft (StableHLO spec, fft): FFT and IFFT transform complex operands over
// the last len(fft_length) dimensions (IFFT scaled by 1/n per dimension);
// RFFT transforms a real operand, keeping n/2+1 elements of the last
// dimension; IRFFT inverts it, reading n/2+1 elements of the last dimension
// as the non-redundant half of a Hermitian-symmetric sequence (the
// imaginary parts of its first and, for even n, middle element do not
// contribute) and returning the real part.
//
// Everything is computed in complex128 (complex64 results are rounded
// once at the end). Lengths that are powers of two use an iterative radix-2
// transform; other lengths a direct DFT when short, Bluestein's algorithm
// (a power-of-two convolution) otherwise. Twiddle factors come from
// math.Sincos of exact angles, not from recurrences.

func init() {
	registerKernel("stablehlo.fft", fftKernel)
}

func fftKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := laTensorArgs(args, 1)
	if err != nil {
		return nil, err
	}
	typ, err := laEnum(op, "fft_type")
	if err != nil {
		return nil, err
	}
	lengths, err := laI64Array(op, "fft_length", nil)
	if err != nil {
		return nil, err
	}
	rt, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	t, err := fftOp(ts[0], typ, lengths, rt.Shape(), x.stopFlag())
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

func fftOp(in *Tensor, typ string, lengths []int64, result xla.Shape, stop *atomic.Bool) (*Tensor, error) {
	l := len(lengths)
	if l < 1 || l > 3 {
		return nil, fmt.Errorf("fft_length has %d values, want 1 to 3", l)
	}
	r := in.Shape.Rank()
	if r < l {
		return nil, fmt.Errorf("operand %v has rank < %d", in.Shape, l)
	}
	if result.Rank() != r {
		return nil, fmt.Errorf("result %v and operand %v have different ranks", result, in.Shape)
	}
	for _, n := range lengths {
		if n < 0 {
			return nil, fmt.Errorf("negative fft_length %v", lengths)
		}
	}
	inDT, outDT := in.Shape.DType, result.DType
	// The dimensions the operand and the result must have.
	wantIn := append([]int64(nil), in.Shape.Dims[:r-l]...)
	wantIn = append(wantIn, lengths...)
	wantOut := append([]int64(nil), wantIn...)
	half := lengths[l-1]/2 + 1
	if lengths[l-1] == 0 {
		half = 0
	}
	switch typ {
	case "FFT", "IFFT":
		if !inDT.IsComplex() || !outDT.IsComplex() {
			return nil, fmt.Errorf("%s needs complex operand and result, got %v and %v", typ, inDT, outDT)
		}
	case "RFFT":
		if !inDT.IsFloat() || !outDT.IsComplex() {
			return nil, fmt.Errorf("RFFT needs a real operand and a complex result, got %v and %v", inDT, outDT)
		}
		wantOut[r-1] = half
	case "IRFFT":
		if !inDT.IsComplex() || !outDT.IsFloat() {
			return nil, fmt.Errorf("IRFFT needs a complex operand and a real result, got %v and %v", inDT, outDT)
		}
		wantIn[r-1] = half
	default:
		return nil, fmt.Errorf("unknown fft_type %q", typ)
	}
	if !xla.MakeShape(inDT, wantIn...).Equal(in.Shape) {
		return nil, fmt.Errorf("%s with fft_length %v needs an operand of dimensions %v, got %v", typ, lengths, wantIn, in.Shape)
	}
	if !xla.MakeShape(outDT, wantOut...).Equal(result) {
		return nil, fmt.Errorf("%s with fft_length %v gives dimensions %v, result type is %v", typ, lengths, wantOut, result)
	}
	data, shared, err := laSlice[complex128](in)
	if err != nil {
		return nil, err
	}
	if shared {
		data = append([]complex128(nil), data...)
	}
	dims := append([]int64(nil), in.Shape.Dims...)
	switch typ {
	case "FFT":
		for a := r - 1; a >= r-l; a-- {
			fftAxis(data, dims, a, false, stop)
		}
	case "IFFT":
		for a := r - l; a < r; a++ {
			fftAxis(data, dims, a, true, stop)
		}
	case "RFFT":
		fftAxis(data, dims, r-1, false, stop)
		data = fftResizeLast(data, dims, half)
		dims[r-1] = half
		for a := r - 2; a >= r-l; a-- {
			fftAxis(data, dims, a, false, stop)
		}
	case "IRFFT":
		for a := r - l; a < r-1; a++ {
			fftAxis(data, dims, a, true, stop)
		}
		n := lengths[l-1]
		// Hermitian extension of the last dimension to length n.
		ext := fftResizeLast(data, dims, n)
		m := dims[r-1]
		rows := len(ext) / max(int(n), 1)
		if n > 0 {
			for row := 0; row < rows; row++ {
				line := ext[row*int(n) : (row+1)*int(n)]
				for k := m; k < n; k++ {
					line[k] = fftConj(line[n-k])
				}
			}
		}
		dims[r-1] = n
		fftAxis(ext, dims, r-1, true, stop)
		re := make([]float64, len(ext))
		for i, v := range ext {
			re[i] = real(v)
		}
		return laStore(result, re)
	}
	return laStore(result, data)
}

func fftConj(v complex128) complex128 { return complex(real(v), -imag(v)) }

// fftResizeLast copies data (row-major with dims) into rows of length n of
// the last dimension, truncating or padding with zeros.
func fftResizeLast(data []complex128, dims []int64, n int64) []complex128 {
	r := len(dims)
	m := dims[r-1]
	rows := int64(1)
	for _, d := range dims[:r-1] {
		rows *= d
	}
	out := makeChecked[complex128](rows*n, xla.MakeShape(xla.Complex128, append(slices.Clone(dims[:r-1]), n)...))
	k := min(m, n)
	for row := int64(0); row < rows; row++ {
		copy(out[row*n:row*n+k], data[row*m:row*m+k])
	}
	return out
}

// fftAxis transforms every line of data along axis in place (inverse:
// with 1/n scaling).
func fftAxis(data []complex128, dims []int64, axis int, inverse bool, stop *atomic.Bool) {
	n := int(dims[axis])
	if n <= 1 || len(data) == 0 {
		return
	}
	inner := 1
	for _, d := range dims[axis+1:] {
		inner *= int(d)
	}
	lines := len(data) / n
	p := fftPlanFor(n)
	cost := int64(len(data)) * int64(bits.Len(uint(n))+1)
	if !p.pow2 && n <= fftDirectMax {
		cost = int64(len(data)) * int64(n)
	}
	laParallelFor(lines, cost*8, func(lo, hi int) {
		buf := make([]complex128, n)
		scratch := p.scratch()
		poll := stopCounter{stop: stop}
		for line := lo; line < hi; line++ {
			if poll.add(cost / int64(lines)) {
				return
			}
			o, i := line/inner, line%inner
			base := o*n*inner + i
			for j := range buf {
				buf[j] = data[base+j*inner]
			}
			p.transform(buf, scratch, inverse)
			for j, v := range buf {
				data[base+j*inner] = v
			}
		}
	})
}

// fftDirectMax is the longest non-power-of-two length done by a direct DFT.
const fftDirectMax = 64

// fftPlan holds the tables of a 1-D transform of length n.
type fftPlan struct {
	n    int
	pow2 bool
	tw   []complex128 // e^{-2πik/n}, k < n
	// stageTw[h+k] is the twiddle of butterfly k in the radix-2 stage that
	// combines halves of length h (h a power of two, k < h).
	stageTw []complex128
	// Bluestein: chirp w_k = e^{-πik²/n}, the transformed filter, and the
	// power-of-two plan of the convolution.
	chirp []complex128
	filt  []complex128
	sub   *fftPlan
}

// fftPlans caches plans by length (they are read-only once built); at most
// fftPlanCacheMax of them, the rest are built per use.
var (
	fftPlans     sync.Map // int -> *fftPlan
	fftPlanCount atomic.Int64
)

const (
	fftPlanCacheMax = 256
	fftPlanMaxLen   = 1 << 22
)

func fftPlanFor(n int) *fftPlan {
	if p, ok := fftPlans.Load(n); ok {
		return p.(*fftPlan)
	}
	p := newFFTPlan(n)
	if n <= fftPlanMaxLen && fftPlanCount.Add(1) <= fftPlanCacheMax {
		fftPlans.Store(n, p)
	}
	return p
}

func newFFTPlan(n int) *fftPlan {
	p := &fftPlan{n: n, pow2: n&(n-1) == 0}
	if p.pow2 || n <= fftDirectMax {
		p.tw = make([]complex128, n)
		for k := range p.tw {
			s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
			p.tw[k] = complex(c, s)
		}
		if p.pow2 {
			p.stageTw = make([]complex128, n)
			for half := 1; half < n; half <<= 1 {
				for k := 0; k < half; k++ {
					p.stageTw[half+k] = p.tw[k*(n/(2*half))]
				}
			}
		}
		return p
	}
	m := 1
	for m < 2*n-1 {
		m <<= 1
	}
	p.sub = fftPlanFor(m)
	p.chirp = make([]complex128, n)
	for k := range p.chirp {
		// k² mod 2n keeps the angle small and exact.
		q := (int64(k) * int64(k)) % int64(2*n)
		s, c := math.Sincos(-math.Pi * float64(q) / float64(n))
		p.chirp[k] = complex(c, s)
	}
	p.filt = make([]complex128, m)
	p.filt[0] = fftConj(p.chirp[0])
	for k := 1; k < n; k++ {
		p.filt[k] = fftConj(p.chirp[k])
		p.filt[m-k] = fftConj(p.chirp[k])
	}
	p.sub.forward(p.filt, nil)
	return p
}

// scratch returns the work space transform needs.
func (p *fftPlan) scratch() []complex128 {
	switch {
	case p.pow2:
		return nil
	case p.sub == nil:
		return make([]complex128, p.n)
	default:
		return make([]complex128, len(p.filt))
	}
}

// transform computes the DFT of x in place (inverse: e^{+2πi...}/n).
func (p *fftPlan) transform(x, scratch []complex128, inverse bool) {
	if inverse {
		for i, v := range x {
			x[i] = fftConj(v)
		}
	}
	p.forward(x, scratch)
	if inverse {
		s := 1 / float64(p.n)
		for i, v := range x {
			x[i] = complex(real(v)*s, -imag(v)*s)
		}
	}
}

func (p *fftPlan) forward(x, scratch []complex128) {
	n := p.n
	switch {
	case p.pow2:
		// Bit-reversal permutation, then butterflies.
		shift := 64 - bits.Len(uint(n-1))
		if n > 1 {
			for i := 0; i < n; i++ {
				j := int(bits.Reverse64(uint64(i)) >> shift)
				if i < j {
					x[i], x[j] = x[j], x[i]
				}
			}
		}
		for half := 1; half < n; half <<= 1 {
			// This stage's twiddles e^{-πik/half}, k < half, lie at
			// stageTw[half : 2*half].
			tw := p.stageTw[half : 2*half]
			for start := 0; start < n; start += 2 * half {
				lo, hi := x[start:start+half], x[start+half:start+2*half]
				for k, w := range tw {
					a, b := lo[k], hi[k]*w
					lo[k], hi[k] = a+b, a-b
				}
			}
		}
	case p.sub == nil:
		// Direct DFT.
		out := scratch[:n]
		for k := 0; k < n; k++ {
			var s complex128
			idx := 0
			for j := 0; j < n; j++ {
				s += x[j] * p.tw[idx]
				idx += k
				if idx >= n {
					idx -= n
				}
			}
			out[k] = s
		}
		copy(x, out)
	default:
		// Bluestein: X_k = w_k · (a ⊛ b)_k with a_j = x_j·w_j, b_j = conj(w_j).
		m := len(p.filt)
		a := scratch[:m]
		clear(a)
		for j := 0; j < n; j++ {
			a[j] = x[j] * p.chirp[j]
		}
		p.sub.forward(a, nil)
		for i := range a {
			a[i] *= p.filt[i]
		}
		// Inverse transform of length m through conjugation.
		for i, v := range a {
			a[i] = fftConj(v)
		}
		p.sub.forward(a, nil)
		s := 1 / float64(m)
		for k := 0; k < n; k++ {
			x[k] = fftConj(a[k]) * complex(s, 0) * p.chirp[k]
		}
	}
}
