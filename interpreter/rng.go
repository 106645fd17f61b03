package interpreter

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// rng_bit_generator and rng.
//
// rng_bit_generator produces exactly the bits XLA's CPU and GPU backends
// produce (xla/service/rng_bit_generator_expander.cc over
// xla/hlo/builder/lib/prng.cc); DEFAULT is PHILOX there, and here.
//
// THREE_FRY (state u64[2] = [key, counter]): Threefry-2x32 with 20 rounds
// (Salmon et al., SC11; Random123's threefry2x32_20), key words
// (key & 0xffffffff, key >> 32), counter words likewise.
//   - 64-bit outputs: element i (row-major) is Threefry(key, counter + i),
//     the two output words joined as x0 | x1<<32; new counter = counter + n.
//   - 32-bit and narrower outputs: the shape is split in halves along its
//     first even dimension (or its largest dimension when none is even; a
//     scalar counts as [1]): half-shape element h gets
//     Threefry(key, counter + h), x0 goes to the even position 2q and x1 to
//     the odd position 2q+1 of the split dimension (dropped past its end);
//     new counter = counter + elements of the half shape. Types narrower
//     than 32 bits keep the low bits of each 32-bit word.
//
// PHILOX (state u64[2] = [key, counter] or u64[3] = [key, counter_lo,
// counter_hi]): Philox-4x32 with 10 rounds (Random123's philox4x32_10), key
// words as above, the 128-bit counter (counter_lo, counter_hi; for u64[2]
// the key doubles as counter_hi) as four words, low first. Block j (j = 0,
// 1, ...) is Philox(counter + j) with a 128-bit add.
//   - 32-bit and narrower: outputs 4j..4j+3 are the four words of block j
//     (narrower types keep the low bits); ceil(n/4) blocks.
//   - 64-bit: outputs 2j and 2j+1 are w0 | w1<<32 and w2 | w3<<32;
//     ceil(n/2) blocks.
//   - new counter = counter + blocks; u64[2] states keep only the new low
//     word: [key, counter_lo + blocks].
// The output bits are stored bit for bit in the result type (floats are
// bit casts).

func init() {
	registerKernel("stablehlo.rng_bit_generator", rngBitGeneratorKernel)
	registerKernel("stablehlo.rng", rngKernel)
}

// rngThreefry2x32 is Threefry-2x32 with 20 rounds.
func rngThreefry2x32(key, ctr [2]uint32) [2]uint32 {
	rot := [8]uint32{13, 15, 26, 6, 17, 29, 16, 24}
	ks := [3]uint32{key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]}
	x0, x1 := ctr[0]+ks[0], ctr[1]+ks[1]
	for g := uint32(1); g <= 5; g++ {
		r := rot[0:4]
		if g%2 == 0 {
			r = rot[4:8]
		}
		for _, n := range r {
			x0 += x1
			x1 = x1<<n | x1>>(32-n)
			x1 ^= x0
		}
		x0 += ks[g%3]
		x1 += ks[(g+1)%3] + g
	}
	return [2]uint32{x0, x1}
}

// rngPhilox4x32 is Philox-4x32 with 10 rounds.
func rngPhilox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	for r := 0; r < 10; r++ {
		p0 := uint64(0xD2511F53) * uint64(ctr[0])
		p1 := uint64(0xCD9E8D57) * uint64(ctr[2])
		ctr = [4]uint32{uint32(p1>>32) ^ ctr[1] ^ key[0], uint32(p1), uint32(p0>>32) ^ ctr[3] ^ key[1], uint32(p0)}
		key[0] += 0x9E3779B9
		key[1] += 0xBB67AE85
	}
	return ctr
}

func rngSplit64(v uint64) [2]uint32 { return [2]uint32{uint32(v), uint32(v >> 32)} }

// rngAdd128 adds d to the 128-bit (lo, hi), as XLA does.
func rngAdd128(lo, hi, d uint64) (uint64, uint64) {
	nlo := lo + d
	if nlo < lo {
		hi++
	}
	return nlo, hi
}

// rngBits returns the 32-bit (in the low half of each uint64) or 64-bit
// (width 64) values for an output of dims, and the new state.
func rngBits(alg string, state []uint64, dims []int64, width int, stop *atomic.Bool) ([]uint64, []uint64, error) {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	out := makeChecked[uint64](n, xla.MakeShape(xla.Uint64, dims...))
	newState := append([]uint64(nil), state...)
	switch alg {
	case "THREE_FRY":
		if len(state) != 2 {
			return nil, nil, fmt.Errorf("THREE_FRY needs a state of 2 ui64, got %d", len(state))
		}
		key, ctr := rngSplit64(state[0]), state[1]
		if width == 64 {
			laParallelForStop(int(n), n*20, stop, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					x := rngThreefry2x32(key, rngSplit64(ctr+uint64(i)))
					out[i] = uint64(x[0]) | uint64(x[1])<<32
				}
			})
			newState[1] = ctr + uint64(n)
			break
		}
		// Split the shape in halves along one dimension.
		split, d := -1, int64(1)
		for i, x := range dims {
			if x%2 == 0 {
				split = i
				break
			}
		}
		if split < 0 {
			for i, x := range dims {
				if split < 0 || x > dims[split] {
					split = i
				}
			}
		}
		outer, inner := int64(1), int64(1)
		if split >= 0 {
			d = dims[split]
			for _, x := range dims[:split] {
				outer *= x
			}
			for _, x := range dims[split+1:] {
				inner *= x
			}
		}
		h := (d + 1) / 2
		halfN := outer * h * inner
		laParallelForStop(int(halfN), halfN*20, stop, func(lo, hi int) {
			for j := int64(lo); j < int64(hi); j++ {
				x := rngThreefry2x32(key, rngSplit64(ctr+uint64(j)))
				o, q, i := j/(h*inner), (j/inner)%h, j%inner
				out[(o*d+2*q)*inner+i] = uint64(x[0])
				if 2*q+1 < d {
					out[(o*d+2*q+1)*inner+i] = uint64(x[1])
				}
			}
		})
		newState[1] = ctr + uint64(halfN)
	case "PHILOX", "DEFAULT":
		var lo, hi uint64
		switch len(state) {
		case 2:
			lo, hi = state[1], state[0]
		case 3:
			lo, hi = state[1], state[2]
		default:
			return nil, nil, fmt.Errorf("PHILOX needs a state of 2 or 3 ui64, got %d", len(state))
		}
		key := rngSplit64(state[0])
		per := int64(4) // outputs per block
		if width == 64 {
			per = 2
		}
		blocks := (n + per - 1) / per
		laParallelForStop(int(blocks), blocks*10, stop, func(b0, b1 int) {
			for j := int64(b0); j < int64(b1); j++ {
				clo, chi := rngAdd128(lo, hi, uint64(j))
				c := [4]uint32{uint32(clo), uint32(clo >> 32), uint32(chi), uint32(chi >> 32)}
				w := rngPhilox4x32(c, key)
				if per == 2 {
					out[2*j] = uint64(w[0]) | uint64(w[1])<<32
					if 2*j+1 < n {
						out[2*j+1] = uint64(w[2]) | uint64(w[3])<<32
					}
					continue
				}
				for k := int64(0); k < 4 && 4*j+k < n; k++ {
					out[4*j+k] = uint64(w[k])
				}
			}
		})
		nlo, nhi := rngAdd128(lo, hi, uint64(blocks))
		newState[1] = nlo
		if len(state) == 3 {
			newState[2] = nhi
		}
	default:
		return nil, nil, fmt.Errorf("unknown rng_algorithm %q", alg)
	}
	return out, newState, nil
}

// rngStoreBits stores raw bits in a tensor of shape (bit casts for floats).
func rngStoreBits(shape xla.Shape, bits []uint64) (*Tensor, error) {
	dt := shape.DType
	t := NewTensor(shape)
	switch d := t.Data.(type) {
	case []int8:
		for i, b := range bits {
			d[i] = int8(WrapInt(dt, int64(b)))
		}
	case []int16:
		for i, b := range bits {
			d[i] = int16(b)
		}
	case []int32:
		for i, b := range bits {
			d[i] = int32(b)
		}
	case []int64:
		for i, b := range bits {
			d[i] = int64(b)
		}
	case []uint8:
		for i, b := range bits {
			d[i] = uint8(WrapUint(dt, b))
		}
	case []uint16:
		for i, b := range bits {
			d[i] = uint16(b)
		}
	case []uint32:
		for i, b := range bits {
			d[i] = uint32(b)
		}
	case []uint64:
		copy(d, bits)
	case []float32:
		if dt == xla.Float32 {
			for i, b := range bits {
				d[i] = math.Float32frombits(uint32(b))
			}
		} else {
			for i, b := range bits {
				d[i] = DecodeNarrow(dt, uint32(b))
			}
		}
	case []float64:
		for i, b := range bits {
			d[i] = math.Float64frombits(b)
		}
	default:
		return nil, fmt.Errorf("rng_bit_generator cannot produce %v (integer or floating-point types only)", dt)
	}
	return t, nil
}

func rngBitGeneratorKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := laTensorArgs(args, 1)
	if err != nil {
		return nil, err
	}
	alg, err := laEnum(op, "rng_algorithm")
	if err != nil {
		return nil, err
	}
	if len(op.Results) != 2 {
		return nil, fmt.Errorf("rng_bit_generator has %d results, want 2", len(op.Results))
	}
	st, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	ot, err := laResultType(op, 1)
	if err != nil {
		return nil, err
	}
	s := ts[0]
	if s.Shape.Rank() != 1 || (s.Shape.DType != xla.Uint64 && s.Shape.DType != xla.Int64) {
		return nil, fmt.Errorf("initial_state is %v, want a 1-dimensional tensor of ui64", stablehlo.TensorOf(s.Shape))
	}
	if !st.Shape().Equal(s.Shape) {
		return nil, fmt.Errorf("output_state type %v differs from initial_state %v", st, stablehlo.TensorOf(s.Shape))
	}
	dt := ot.DType
	if !(dt.IsInt() || dt.IsFloat()) {
		return nil, fmt.Errorf("rng_bit_generator cannot produce %v (integer or floating-point types only)", dt)
	}
	state, _, err := laSlice[int64](s)
	if err != nil {
		return nil, err
	}
	ustate := make([]uint64, len(state))
	for i, v := range state {
		ustate[i] = uint64(v)
	}
	width := dt.Bits()
	bitsWidth := 32
	if width > 32 {
		bitsWidth = 64
	}
	bits, newState, err := rngBits(alg, ustate, ot.Dims, bitsWidth, x.stopFlag())
	if err != nil {
		return nil, err
	}
	if width < 32 {
		mask := uint64(1)<<width - 1
		for i := range bits {
			bits[i] &= mask
		}
	}
	outT, err := rngStoreBits(ot.Shape(), bits)
	if err != nil {
		return nil, err
	}
	stT := NewTensor(s.Shape)
	switch d := stT.Data.(type) {
	case []uint64:
		copy(d, newState)
	case []int64:
		for i, v := range newState {
			d[i] = int64(v)
		}
	}
	return []Value{stT, outT}, nil
}

// rngCalls numbers the executions of stablehlo.rng in this process.
var rngCalls atomic.Uint64

// rngKernel evaluates stablehlo.rng. The spec leaves the generator to the
// implementation: each execution draws from Philox-4x32-10 keyed by a
// process-wide counter of rng executions, so a program run twice gets
// different numbers and a fresh process repeats the same sequence.
// UNIFORM integers are a + bits mod (b - a), UNIFORM floats a + (b - a)·u
// with u in [0, 1) (a when rounding reaches b); NORMAL (floats only) is
// a + b·z with z from the Box-Muller transform. a >= b (UNIFORM) fills
// the result with a.
func rngKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := laTensorArgs(args, 3)
	if err != nil {
		return nil, err
	}
	dist, err := laEnum(op, "rng_distribution")
	if err != nil {
		return nil, err
	}
	rt, err := laResultType(op, 0)
	if err != nil {
		return nil, err
	}
	a, b := ts[0], ts[1]
	if a.Len() != 1 || b.Len() != 1 {
		return nil, fmt.Errorf("a and b must be scalars, got %v and %v", a.Shape, b.Shape)
	}
	shape, err := laTensorInts(ts[2])
	if err != nil {
		return nil, fmt.Errorf("shape: %w", err)
	}
	if !xla.MakeShape(rt.DType, shape...).Equal(rt.Shape()) {
		return nil, fmt.Errorf("shape operand %v does not match result type %v", shape, rt)
	}
	dt := rt.DType
	n := int(rt.Shape().Size())
	seed := rngCalls.Add(1)
	draw := func(count int) []uint64 {
		bits, _, _ := rngBits("PHILOX", []uint64{seed * 0x9E3779B97F4A7C15, 0, 0}, []int64{int64(count)}, 64, x.stopFlag())
		return bits
	}
	res := NewTensor(rt.Shape())
	switch {
	case dt.IsFloat():
		av, _, err := laSlice[float64](a)
		if err != nil {
			return nil, err
		}
		bv, _, err := laSlice[float64](b)
		if err != nil {
			return nil, err
		}
		lo, hi := av[0], bv[0]
		vals := make([]float64, n)
		unit := func(u uint64) float64 { return float64(u>>11) * 0x1p-53 }
		switch dist {
		case "UNIFORM":
			for i, u := range draw(n) {
				vals[i] = lo + (hi-lo)*unit(u)
			}
		case "NORMAL":
			bits := draw(2 * n)
			for i := range vals {
				u1 := math.Max(unit(bits[2*i]), 0x1p-53)
				vals[i] = lo + hi*math.Sqrt(-2*math.Log(u1))*math.Cos(2*math.Pi*unit(bits[2*i+1]))
			}
		default:
			return nil, fmt.Errorf("unknown rng_distribution %q", dist)
		}
		t, err := laStore(rt.Shape(), vals)
		if err != nil {
			return nil, err
		}
		if dist == "UNIFORM" {
			// Rounding may reach b; the interval is [a, b).
			switch d := t.Data.(type) {
			case []float32:
				for i, v := range d {
					if float64(v) >= hi && lo < hi {
						d[i] = RoundNarrow64(dt, lo)
					}
				}
			case []float64:
				for i, v := range d {
					if v >= hi && lo < hi {
						d[i] = lo
					}
				}
			}
		}
		res = t
	case dt.IsInt() || dt.IsBool():
		if dist != "UNIFORM" {
			return nil, fmt.Errorf("rng_distribution %s needs a floating-point type, got %v", dist, dt)
		}
		av, _, err := laSlice[int64](a)
		if err != nil {
			return nil, err
		}
		bv, _, err := laSlice[int64](b)
		if err != nil {
			return nil, err
		}
		lo, hi := av[0], bv[0]
		vals := make([]int64, n)
		var span uint64
		if dt.IsUnsigned() {
			if uint64(hi) > uint64(lo) {
				span = uint64(hi) - uint64(lo)
			}
		} else if hi > lo {
			span = uint64(hi) - uint64(lo)
		}
		for i, u := range draw(n) {
			vals[i] = lo
			if span > 0 {
				vals[i] = lo + int64(u%span)
			}
		}
		t, err := laStore(rt.Shape(), vals)
		if err != nil {
			return nil, err
		}
		res = t
	default:
		return nil, fmt.Errorf("rng cannot produce %v", dt)
	}
	return []Value{res}, nil
}
