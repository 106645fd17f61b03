package pallas

import (
	"math"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// Triton test kernels on the dtypes other than f32, i32 and bool: unsigned
// and narrow integers, f64, f16 and bf16 (part of tritonCases, so they run
// on the reference evaluator against interpret mode, through mlir-opt and
// on a real GPU with HALO_PLUGIN). Triton's GPU code converts ints to
// f16 and bf16 through f32, rounding twice; the lowering makes bf16's
// conversion of wider ints round once (wide_ints_to_bf16), and f16
// overflows long before f32 rounds.

// typedTensor is a tensor of dt holding vals, a slice of dt's storage type
// (interpreter.StorageOf: f16 and bf16 as float32, rounded here).
func typedTensor[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](dt xla.DType, dims []int64, vals []T) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(dt, dims...))
	d := x.Data.([]T)
	if len(vals) != len(d) {
		panic("typedTensor: wrong number of values")
	}
	copy(d, vals)
	if f, ok := x.Data.([]float32); ok {
		interpreter.RoundNarrowSlice(dt, f)
	}
	return x
}

// floatTensor is a float tensor of dt (f16, bf16, f32, f64) of f(i),
// rounded once to dt.
func floatTensor(dt xla.DType, dims []int64, f func(i int) float64) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(dt, dims...))
	switch d := x.Data.(type) {
	case []float32:
		for i := range d {
			d[i] = interpreter.RoundNarrow64(dt, f(i))
		}
	case []float64:
		for i := range d {
			d[i] = f(i)
		}
	default:
		panic("floatTensor: not a float dtype")
	}
	return x
}

// intTensor is an integer tensor of dt of f(i), wrapped to dt's width.
func intTensor(dt xla.DType, dims []int64, f func(i int) int64) *interpreter.Tensor {
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = f(i)
	}
	switch interpreter.StorageOf(dt) {
	case interpreter.StorageI8:
		return typedTensor(dt, dims, mapSlice(vals, func(v int64) int8 { return int8(v) }))
	case interpreter.StorageI16:
		return typedTensor(dt, dims, mapSlice(vals, func(v int64) int16 { return int16(v) }))
	case interpreter.StorageI32:
		return typedTensor(dt, dims, mapSlice(vals, func(v int64) int32 { return int32(v) }))
	case interpreter.StorageI64:
		return typedTensor(dt, dims, vals)
	case interpreter.StorageU8:
		return typedTensor(dt, dims, mapSlice(vals, func(v int64) uint8 { return uint8(v) }))
	case interpreter.StorageU16:
		return typedTensor(dt, dims, mapSlice(vals, func(v int64) uint16 { return uint16(v) }))
	case interpreter.StorageU32:
		return typedTensor(dt, dims, mapSlice(vals, func(v int64) uint32 { return uint32(v) }))
	case interpreter.StorageU64:
		return typedTensor(dt, dims, mapSlice(vals, func(v int64) uint64 { return uint64(v) }))
	}
	panic("intTensor: not an integer dtype")
}

func mapSlice[A, B any](s []A, f func(A) B) []B {
	out := make([]B, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

func shapes(dt xla.DType, dims ...[]int64) []xla.Shape {
	out := make([]xla.Shape, len(dims))
	for i, d := range dims {
		out[i] = xla.MakeShape(dt, d...)
	}
	return out
}

func v16(dt xla.DType) xla.Shape { return xla.MakeShape(dt, 16) }

// vec4Block is a block of 4 of a vector, block i for program i.
func vec4Block() *BlockSpec {
	return &BlockSpec{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}
}

// storeRows stores vals[i] into row i of ref.
func storeRows(ref *Ref, vals ...*Value) {
	for i, v := range vals {
		ref.Store(v, i, All)
	}
}

func tritonDTypeCases() []tritonCase {
	const (
		u31 = 1 << 31
		u32 = 1 << 32
	)
	return []tritonCase{
		{
			// divui, remui, maxui, minui, unsigned compares and wrapping
			// on u32, u8 and u16 (values past the signed range).
			name: "unsigned_ops",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b, c, d := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load()
				refs[4].Store(a.Div(b).Add(a.Rem(b).Mul(1000)))
				refs[5].Store(a.Max(b).Sub(a.Min(b)).Add(a.Div(3)))
				refs[6].Store(a.Lt(b).Xor(a.Ge(u31)).Or(b.Eq(a)))
				refs[7].Store(c.Add(200).Div(c.Max(1)).Add(c.Rem(7)).Add(c.Min(d.Astype(xla.Uint8))).Add(c.Neg()))
				refs[8].Store(d.Mul(d).Rem(1000).Add(d.Div(c.Astype(xla.Uint16).Max(1))).Xor(d.Not()))
				refs[9].Store(c.Gt(127).And(d.Le(40000)).Or(d.Ge(c.Astype(xla.Uint16).Mul(300))))
				// Unsigned reductions (maxui/minui combiners, wrapping sums).
				refs[10].Store(a.ReduceMax().Sub(a.ReduceMin()))
				refs[11].Store(c.Sum().Astype(xla.Uint16).Add(d.ReduceMax()).Add(c.ReduceMin().Astype(xla.Uint16)))
			},
			spec: CallSpec{
				Name: "unsigned_ops",
				OutShapes: []xla.Shape{v16(xla.Uint32), v16(xla.Uint32), v16(xla.Bool), v16(xla.Uint8),
					v16(xla.Uint16), v16(xla.Bool), xla.MakeShape(xla.Uint32), xla.MakeShape(xla.Uint16)},
			},
			args: []*interpreter.Tensor{
				typedTensor(xla.Uint32, []int64{16}, []uint32{0, 1, 7, 100, u31 - 1, u31, u31 + 5, 3000000000,
					u32 - 1, 12345, 65536, 99, 5, 4000000000, 17, 3 << 30}),
				typedTensor(xla.Uint32, []int64{16}, []uint32{1, 3, 7, 7, 2, 3, u31, 10, u32 - 1, u31 + 1,
					255, 100, 6, 3, u32 - 2, 5}),
				typedTensor(xla.Uint8, []int64{16}, []uint8{0, 1, 7, 100, 127, 128, 129, 200, 255, 250, 50, 99, 5, 180, 17, 64}),
				typedTensor(xla.Uint16, []int64{16}, []uint16{0, 1, 300, 40000, 65535, 32768, 32767, 1000, 255, 256,
					50000, 12345, 7, 9, 60000, 2}),
			},
		},
		{
			// uitofp, fptoui (saturating), extui and trunci, u64 included:
			// a u64 past 2^63 rounds to f32 once (2^63+2^39+1 is 2^63+2^40,
			// through f64 it would be 2^63).
			name: "unsigned_casts",
			kernel: func(k *Kernel, refs []*Ref) {
				a, c, e, x := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load()
				refs[4].Store(a.Astype(xla.Float32).Add(c.Astype(xla.Float32)))
				refs[5].Store(e.Astype(xla.Float32))
				refs[6].Store(e.Astype(xla.Float64).Add(a.Astype(xla.Float64)))
				refs[7].Store(x.Astype(xla.Uint32))
				refs[8].Store(x.Astype(xla.Uint16))
				refs[9].Store(c.Astype(xla.Uint64).Add(a.Astype(xla.Uint64)).Add(e.Rem(1000)).Max(e.Div(1000)))
				refs[10].Store(a.Astype(xla.Uint8).Add(e.Astype(xla.Uint8)))
				refs[11].Store(e.Gt(a.Astype(xla.Uint64)).Xor(e.Lt(1000)))
				refs[12].Store(x.Astype(xla.Uint64))
				refs[13].Store(c.Astype(xla.Int32).Sub(a.Astype(xla.Uint16).Astype(xla.Int32)))
				// Exact integers back: a rounding difference is not lost in
				// the float tolerance.
				refs[14].Store(e.Astype(xla.Float32).Astype(xla.Uint64))
			},
			spec: CallSpec{
				Name: "unsigned_casts",
				OutShapes: []xla.Shape{v16(xla.Float32), v16(xla.Float32), v16(xla.Float64), v16(xla.Uint32),
					v16(xla.Uint16), v16(xla.Uint64), v16(xla.Uint8), v16(xla.Bool), v16(xla.Uint64), v16(xla.Int32),
					v16(xla.Uint64)},
			},
			args: []*interpreter.Tensor{
				typedTensor(xla.Uint32, []int64{16}, []uint32{0, 1, 7, 100, u31 - 1, u31, u31 + 5, 3000000000,
					u32 - 1, 12345, 65536, 99, 5, 4000000000, 16777217, 3 << 30}),
				typedTensor(xla.Uint8, []int64{16}, []uint8{0, 1, 7, 100, 127, 128, 129, 200, 255, 250, 50, 99, 5, 180, 17, 64}),
				typedTensor(xla.Uint64, []int64{16}, []uint64{0, 1, 1000, u32, 1<<53 + 1, 1 << 63, 1<<63 + 1<<39 + 1,
					math.MaxUint64, 12345678901234, 999, 1 << 62, 5, 1<<63 - 1, 3000000000000000000,
					10000000000000000000, 1 << 40}),
				typedTensor(xla.Float32, []int64{16}, []float32{-5, float32(math.NaN()), 5e9, 4294967040, 3.7, float32(math.Inf(1)),
					float32(math.Inf(-1)), 65535.9, 65536, 70000, 1e19, 9.3e18, 2e19, 0.5, 255.5, 4294967296}),
			},
		},
		{
			// i8, i16 and i64: wrapping arithmetic, signed division and
			// remainder, extsi/trunci, sitofp (i64 past 2^53 rounds once:
			// 2^62+2^38+1 is 2^62+2^39 in f32, through f64 it would be 2^62),
			// saturating fptosi, an i16 iota.
			name: "small_ints",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b, h, g, w, v, x := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load(),
					refs[4].Load(), refs[5].Load(), refs[6].Load()
				refs[7].Store(a.Add(b).Mul(3).Add(a.Div(b)).Sub(a.Rem(b)))
				refs[8].Store(a.Max(b).Sub(a.Min(b)).Add(a.Neg()).Add(a.Abs()).Xor(b.Not()))
				refs[9].Store(h.Mul(g).Add(a.Astype(xla.Int16)).Add(h.Div(g)).Add(h.Rem(g).Mul(7)))
				refs[10].Store(h.Astype(xla.Int8))
				refs[11].Store(w.Mul(v).Add(w.Div(v)).Sub(w.Rem(v)).Add(h.Astype(xla.Int64)).Add(w.Max(v).Sub(w.Min(v))))
				refs[12].Store(w.Astype(xla.Int32))
				refs[13].Store(a.Astype(xla.Float32).Add(h.Astype(xla.Float32)).Add(w.Astype(xla.Float32)))
				refs[14].Store(w.Astype(xla.Float64))
				refs[15].Store(x.Astype(xla.Int16))
				refs[16].Store(x.Astype(xla.Int64))
				refs[17].Store(a.Lt(b).And(h.Ge(0)).Or(w.Gt(v)))
				refs[18].Store(k.Iota(xla.Int16, 0, 16).Mul(h).Add(w.Abs().Astype(xla.Int16)))
				// Exact integers back: a rounding difference is not lost in
				// the float tolerance.
				refs[19].Store(w.Astype(xla.Float64).Astype(xla.Int64))
				refs[20].Store(w.Astype(xla.Float32).Astype(xla.Int64))
			},
			spec: CallSpec{
				Name: "small_ints",
				OutShapes: []xla.Shape{v16(xla.Int8), v16(xla.Int8), v16(xla.Int16), v16(xla.Int8), v16(xla.Int64),
					v16(xla.Int32), v16(xla.Float32), v16(xla.Float64), v16(xla.Int16), v16(xla.Int64), v16(xla.Bool),
					v16(xla.Int16), v16(xla.Int64), v16(xla.Int64)},
			},
			args: []*interpreter.Tensor{
				typedTensor(xla.Int8, []int64{16}, []int8{0, 1, -1, 127, -128, 100, -100, 50, 7, -7, 13, -13, 64, -65, 3, 99}),
				typedTensor(xla.Int8, []int64{16}, []int8{1, -1, 3, 2, 7, 100, 100, -3, 2, 2, -5, 5, 64, 3, -128, 9}),
				typedTensor(xla.Int16, []int64{16}, []int16{0, 1, -1, 32767, -32768, 1000, -1000, 300, 12345, -12345,
					255, 256, -129, 128, 4000, -4000}),
				typedTensor(xla.Int16, []int64{16}, []int16{1, -1, 7, 2, 3, 33, -33, 300, -100, 100, 2, 3, 5, -7, 9, 11}),
				typedTensor(xla.Int64, []int64{16}, []int64{0, 1, -1, 1e12, -1e12, 1<<62 + 1<<9 + 1, -(1<<62 + 3),
					1<<40 + 7, 123456789012345, -987654321, 1 << 31, -1<<31 - 1, 1<<33 + 5, 1<<62 + 1<<38 + 1, 1<<53 + 1, -(1 << 53) - 3}),
				typedTensor(xla.Int64, []int64{16}, []int64{1, -1, 7, 1000003, 3, -2, 5, 1 << 20, -77, 13, 3, 2,
					1 << 32, -5, 11, 17}),
				typedTensor(xla.Float32, []int64{16}, []float32{3e9, float32(math.Inf(1)), float32(math.Inf(-1)),
					float32(math.NaN()), -3e9, 1.5, -2.7, 40000, -40000, 32767.9, -32768.5, 1e19, -1e19, 9.3e18, 65535, -0.5}),
			},
		},
		{
			// Integer division and remainder by zero and MIN / -1 give
			// interpret mode's (XLA's) results, not arith's undefined
			// behaviour (which would also void the guard of the last
			// output); constant divisors need no guard.
			name: "int_div_by_zero",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b, c, d, w, v := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load(), refs[4].Load(), refs[5].Load()
				refs[6].Store(a.Div(b))
				refs[7].Store(a.Rem(b))
				refs[8].Store(c.Div(d).Add(c.Rem(d).Mul(16)))
				refs[9].Store(w.Div(v).Add(w.Rem(v)))
				refs[10].Store(a.Div(-1).Add(a.Rem(-1)).Add(a.Div(4)).Add(c.Div(255).Astype(xla.Int32)).
					Add(a.Div(0)).Add(a.Rem(0).Mul(3)).Add(c.Div(0).Add(c.Rem(0)).Astype(xla.Int32)))
				refs[11].Store(Where(b.Eq(0), 7, a.Div(b)))
			},
			spec: CallSpec{
				Name: "int_div_by_zero",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8), xla.MakeShape(xla.Int32, 8), xla.MakeShape(xla.Uint8, 8),
					xla.MakeShape(xla.Int64, 8), xla.MakeShape(xla.Int32, 8), xla.MakeShape(xla.Int32, 8)},
			},
			args: []*interpreter.Tensor{
				typedTensor(xla.Int32, []int64{8}, []int32{7, -7, 0, math.MinInt32, math.MinInt32, math.MaxInt32, 100, -100}),
				typedTensor(xla.Int32, []int64{8}, []int32{0, 0, 0, -1, 0, -1, 7, -7}),
				typedTensor(xla.Uint8, []int64{8}, []uint8{7, 255, 0, 200, 1, 128, 100, 3}),
				typedTensor(xla.Uint8, []int64{8}, []uint8{0, 0, 0, 255, 3, 0, 7, 200}),
				typedTensor(xla.Int64, []int64{8}, []int64{7, math.MinInt64, math.MinInt64, math.MaxInt64, -1, 0, 1 << 40, -5}),
				typedTensor(xla.Int64, []int64{8}, []int64{0, -1, 0, 0, -1, 0, 3, 2}),
			},
		},
		{
			// Blocks of 4 over 10 elements of u8 and bf16 refs: the padding
			// of the last block reads as interpret mode's pad value (0
			// unsigned, NaN as a bf16 constant), a masked load's masked-off
			// elements as its other value.
			name: "narrow_padded",
			kernel: func(k *Kernel, refs []*Ref) {
				x, y := refs[0].Load(), refs[1].Load()
				refs[2].Store(x.Add(x.Sum()))
				refs[3].Store(y.Add(y.Sum()).Add(y.ReduceMax()))
				on := k.Iota(xla.Int32, 0, 4).Lt(3)
				m := Load(refs[0], []any{Slice(0, 4)}, on, 9)
				n := Load(refs[1], []any{Slice(0, 4)}, on, -0.5)
				refs[4].Store(m)
				refs[5].Store(Where(n.Ne(n), 1.5, n))
			},
			spec: CallSpec{
				Name: "narrow_padded",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Uint8, 10), xla.MakeShape(xla.BFloat16, 10),
					xla.MakeShape(xla.Uint8, 10), xla.MakeShape(xla.BFloat16, 10)},
				Grid:     []int64{3},
				InSpecs:  []*BlockSpec{vec4Block(), vec4Block()},
				OutSpecs: []*BlockSpec{vec4Block(), vec4Block(), vec4Block(), vec4Block()},
			},
			args: []*interpreter.Tensor{
				intTensor(xla.Uint8, []int64{10}, func(i int) int64 { return int64(250 - 20*i) }),
				floatTensor(xla.BFloat16, []int64{10}, func(i int) float64 { return 1 + float64(i)/3 }),
			},
		},
		{
			// An i8 dot accumulating in i32, and in i8 (wrapping).
			name: "i8_dot",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b := refs[0].Load(), refs[1].Load()
				refs[2].Store(Dot(a, b, xla.Int32))
				refs[3].Store(Dot(a, b, xla.Invalid))
			},
			spec: CallSpec{
				Name:      "i8_dot",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 16, 16), xla.MakeShape(xla.Int8, 16, 16)},
			},
			args: []*interpreter.Tensor{
				intTensor(xla.Int8, []int64{16, 32}, func(i int) int64 { return int64(i*37%255) - 127 }),
				intTensor(xla.Int8, []int64{32, 16}, func(i int) int64 { return int64(i*53%251) - 125 }),
			},
		},
		{
			// f64 elementwise math (libdevice's f64 functions), casts to
			// and from f32, saturating f64 -> i64.
			name: "f64_math",
			kernel: func(k *Kernel, refs []*Ref) {
				x, y := refs[0].Load(), refs[1].Load()
				storeRows(refs[2],
					x.Add(y).Mul(x).Div(y),
					x.Exp(),
					x.Log().Add(x.Sqrt()).Add(x.Rsqrt()),
					x.Tanh().Add(y.Sin()).Add(y.Cos()),
					x.Pow(1.5).Add(x.Sigmoid()),
					x.Max(y).Sub(x.Min(y)).Add(y.Floor()).Add(y.Ceil()).Add(y.Abs()).Add(y.Neg()),
					x.Rem(y).Add(y.Erf()),
					Where(x.Lt(y), x, y.Mul(2)))
				refs[3].Store(x.Mul(y).Astype(xla.Float32))
				refs[4].Store(x.Astype(xla.Float32).Astype(xla.Float64))
				refs[5].Store(y.Mul(3e18).Astype(xla.Int64))
				refs[6].Store(x.Ne(y).And(x.Ge(1)))
			},
			spec: CallSpec{
				Name: "f64_math",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float64, 8, 16), v16(xla.Float32), v16(xla.Float64),
					v16(xla.Int64), v16(xla.Bool)},
			},
			args: []*interpreter.Tensor{
				floatTensor(xla.Float64, []int64{16}, func(i int) float64 { return 0.3 + 0.7*float64(i) }),
				floatTensor(xla.Float64, []int64{16}, func(i int) float64 { return 5 * math.Sin(float64(i)+0.5) }),
			},
		},
		{
			// An f64 dot (f64 accumulator), plain and with b transposed.
			name: "f64_dot",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b := refs[0].Load(), refs[1].Load()
				refs[2].Store(Dot(a, b, xla.Float64))
				refs[3].Store(DotTransposed(a, b, false, true, xla.Invalid))
			},
			spec: CallSpec{
				Name:      "f64_dot",
				OutShapes: shapes(xla.Float64, []int64{16, 16}, []int64{16, 16}),
			},
			args: []*interpreter.Tensor{
				floatTensor(xla.Float64, []int64{16, 16}, func(i int) float64 { return math.Sin(float64(i)) }),
				floatTensor(xla.Float64, []int64{16, 16}, func(i int) float64 { return math.Cos(float64(3 * i)) }),
			},
		},
		{
			// bf16 and f16 elementwise math, rounded after every op
			// ((p+q)-q is not p), constants (0.1 as bf16), overflow to
			// Inf, libdevice through f32, and the conversions between
			// them, f32 (ties to even) and i32.
			name: "half_math",
			kernel: func(k *Kernel, refs []*Ref) {
				p, q, r, s, x, n := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load(), refs[4].Load(), refs[5].Load()
				storeRows(refs[6],
					p.Add(q).Sub(q),
					p.Mul(q).Add(p.Mul(0.1)).Div(4),
					p.Max(q).Sub(p.Min(q)).Add(p.Abs()).Add(q.Floor()).Add(q.Ceil().Neg()),
					p.Exp().Add(q.Tanh()).Add(p.Abs().Sqrt()))
				storeRows(refs[7],
					r.Add(s).Sub(s),
					r.Mul(s).Mul(4000),
					r.Rem(s).Add(r.Sigmoid()).Add(s.Pow(2)),
					Where(r.Lt(s), r, s.Neg()))
				refs[8].Store(p.Astype(xla.Float16))
				refs[9].Store(r.Astype(xla.BFloat16))
				refs[10].Store(p.Astype(xla.Float32).Add(r.Astype(xla.Float32)))
				refs[11].Store(x.Astype(xla.BFloat16))
				refs[12].Store(x.Astype(xla.Float16))
				refs[13].Store(p.Mul(1000).Astype(xla.Int32).Add(r.Mul(100).Astype(xla.Int32)))
				refs[14].Store(n.Astype(xla.BFloat16))
				refs[15].Store(n.Astype(xla.Float16))
				refs[16].Store(p.Gt(q).Xor(r.Le(s)))
			},
			spec: CallSpec{
				Name: "half_math",
				OutShapes: []xla.Shape{xla.MakeShape(xla.BFloat16, 4, 16), xla.MakeShape(xla.Float16, 4, 16),
					v16(xla.Float16), v16(xla.BFloat16), v16(xla.Float32), v16(xla.BFloat16), v16(xla.Float16),
					v16(xla.Int32), v16(xla.BFloat16), v16(xla.Float16), v16(xla.Bool)},
			},
			args: []*interpreter.Tensor{
				floatTensor(xla.BFloat16, []int64{16}, func(i int) float64 { return 3 * math.Sin(1.3*float64(i)+0.2) }),
				floatTensor(xla.BFloat16, []int64{16}, func(i int) float64 { return 1 + 0.37*float64(i) }),
				floatTensor(xla.Float16, []int64{16}, func(i int) float64 { return 2.5 * math.Cos(0.7*float64(i)) }),
				floatTensor(xla.Float16, []int64{16}, func(i int) float64 { return 0.5 + 0.61*float64(i) }),
				typedTensor(xla.Float32, []int64{16}, []float32{1 + 1.0/256, 1 + 3.0/256, 1 + 1.0/2048, 1 + 3.0/2048,
					65519, 65520, 1e-7, -3e-8, 3.4e38, -1.5, float32(math.NaN()), float32(math.Inf(-1)), 0.1, 1e5, 2049, -2051}),
				typedTensor(xla.Int32, []int64{16}, []int32{257, 259, -257, 65519, 65520, 2049, 2051, -3, 0, 16777215,
					1 << 20, -(1 << 20) - 1, 100000, 255, 256, 1<<24 - 3}),
			},
		},
		{
			// Dots of bf16 (and f16) operands accumulating in f32, with the
			// result in f32 or rounded once to the operands' type.
			name: "half_dot",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b, c, d := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load()
				refs[4].Store(Dot(a, b, xla.Float32))
				refs[5].Store(Dot(a, b, xla.Invalid))
				refs[6].Store(DotTransposed(a, b, true, false, xla.Float32))
				refs[7].Store(Dot(c, d, xla.Invalid))
			},
			spec: CallSpec{
				Name: "half_dot",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16, 16), xla.MakeShape(xla.BFloat16, 16, 16),
					xla.MakeShape(xla.Float32, 16, 16), xla.MakeShape(xla.Float16, 16, 16)},
			},
			// Multiples of 1/16 (exact in every accumulation order), whose
			// sums need more bits than bf16 keeps.
			args: []*interpreter.Tensor{
				floatTensor(xla.BFloat16, []int64{16, 16}, func(i int) float64 { return float64(i*37%97-48) / 16 }),
				floatTensor(xla.BFloat16, []int64{16, 16}, func(i int) float64 { return float64(i*53%89-44) / 8 }),
				floatTensor(xla.Float16, []int64{16, 16}, func(i int) float64 { return float64(i*29%83-41) / 16 }),
				floatTensor(xla.Float16, []int64{16, 16}, func(i int) float64 { return float64(i*31%79-39) / 4 }),
			},
		},
		{
			// Float operands with an f64 result accumulate in f64, as in
			// interpret mode (not in f32, then widened).
			name: "dot_to_f64",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b, c, d := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load()
				refs[5].Store(Dot(a, b, xla.Float64))
				refs[6].Store(DotTransposed(c, c, true, false, xla.Float64))
				// Widened by the kernel, then transposed, with an f64
				// operand as loaded.
				refs[7].Store(DotTransposed(a.Astype(xla.Float64), d, true, false, xla.Float64))
				// Widened, then reshaped, broadcast or picked by a select
				// before the dot: products and sums all the same.
				flat := refs[4].Load().Astype(xla.Float64).Reshape(16, 16)
				refs[8].Store(Dot(flat, d, xla.Float64))
				row := refs[4].Load(Slice(0, 16)).Astype(xla.Float64).Reshape(1, 16).BroadcastTo(16, 16)
				refs[9].Store(Dot(d, row, xla.Float64))
				picked := Where(d.Gt(0), a.Astype(xla.Float64), d)
				refs[10].Store(Dot(picked, d, xla.Float64))
			},
			spec: CallSpec{
				Name:      "dot_to_f64",
				OutShapes: shapes(xla.Float64, []int64{16, 16}, []int64{16, 16}, []int64{16, 16}, []int64{16, 16}, []int64{16, 16}, []int64{16, 16}),
			},
			args: []*interpreter.Tensor{
				floatTensor(xla.Float32, []int64{16, 16}, func(i int) float64 { return math.Sin(float64(i)) }),
				floatTensor(xla.Float32, []int64{16, 16}, func(i int) float64 { return math.Cos(float64(i)) }),
				floatTensor(xla.BFloat16, []int64{16, 16}, func(i int) float64 { return math.Sin(float64(3 * i)) }),
				floatTensor(xla.Float64, []int64{16, 16}, func(i int) float64 { return math.Cos(float64(5*i) + 0.25) }),
				floatTensor(xla.Float32, []int64{256}, func(i int) float64 { return math.Sin(float64(7*i) + 0.5) }),
			},
		},
		{
			// Dots below the tensor cores' sizes (an f64 8x4 by 4x8, f16
			// and bf16 with k = 8, i8 with k = 16) become products and
			// sums: the same numbers, no tt.dot Triton cannot compile.
			name: "small_dots",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b, c, d, e, f := refs[0].Load(), refs[1].Load(), refs[2].Load(), refs[3].Load(), refs[4].Load(), refs[5].Load()
				refs[6].Store(Dot(a, b, xla.Float64))
				refs[7].Store(Dot(c, d, xla.Float32))
				refs[8].Store(Dot(c, d, xla.Invalid))
				refs[9].Store(Dot(e, f, xla.Int32))
				refs[10].Store(DotTransposed(c, c, true, false, xla.Float64))
			},
			spec: CallSpec{
				Name: "small_dots",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float64, 8, 8), xla.MakeShape(xla.Float32, 16, 16),
					xla.MakeShape(xla.BFloat16, 16, 16), xla.MakeShape(xla.Int32, 16, 16), xla.MakeShape(xla.Float64, 8, 8)},
			},
			args: []*interpreter.Tensor{
				floatTensor(xla.Float64, []int64{8, 4}, func(i int) float64 { return math.Sin(float64(i)) }),
				floatTensor(xla.Float64, []int64{4, 8}, func(i int) float64 { return math.Cos(float64(3 * i)) }),
				floatTensor(xla.BFloat16, []int64{16, 8}, func(i int) float64 { return float64(i*37%97-48) / 16 }),
				floatTensor(xla.BFloat16, []int64{8, 16}, func(i int) float64 { return float64(i*53%89-44) / 8 }),
				intTensor(xla.Int8, []int64{16, 16}, func(i int) int64 { return int64(i*37%255) - 127 }),
				intTensor(xla.Int8, []int64{16, 16}, func(i int) int64 { return int64(i*53%251) - 125 }),
			},
		},
		{
			// Integer dots tt.dot does not take (of the integers it takes
			// i8 only): products and sums in an i32 or i64 accumulator,
			// unsigned operands zero-extended, wrapping as interpret
			// mode's sums in the result type do (ui8 255*255 sums, i16
			// products past i16, u32 into u64, i16 into i8).
			name: "integer_dots",
			kernel: func(k *Kernel, refs []*Ref) {
				u8, i16, u32 := refs[0].Load(), refs[1].Load(), refs[2].Load()
				refs[3].Store(Dot(u8, u8, xla.Int32))
				refs[4].Store(Dot(i16, i16, xla.Int32))
				refs[5].Store(Dot(u32, u32, xla.Uint64))
				refs[6].Store(Dot(i16, i16, xla.Int8))
			},
			spec: CallSpec{
				Name: "integer_dots",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 16, 16), xla.MakeShape(xla.Int32, 8, 8),
					xla.MakeShape(xla.Uint64, 4, 4), xla.MakeShape(xla.Int8, 8, 8)},
			},
			args: []*interpreter.Tensor{
				intTensor(xla.Uint8, []int64{16, 16}, func(i int) int64 { return int64(255 - i*37%31) }),
				intTensor(xla.Int16, []int64{8, 8}, func(i int) int64 { return int64(i*2749%32768) - 16384 }),
				intTensor(xla.Uint32, []int64{4, 4}, func(i int) int64 { return int64(4294967295 - i*977) }),
			},
		},
		{
			// M and N under 16 with K of 16, bf16: a tt.dot. Triton's
			// Python front end asks for 16 in every dim; whether its TTIR
			// passes take less is to confirm on a GPU (its own case, so
			// that a failure names it).
			name: "small_mn_dot",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[2].Store(Dot(refs[0].Load(), refs[1].Load(), xla.Float32))
			},
			spec: CallSpec{Name: "small_mn_dot", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8, 8)}},
			args: []*interpreter.Tensor{
				floatTensor(xla.BFloat16, []int64{8, 16}, func(i int) float64 { return float64(i*29%83-41) / 16 }),
				floatTensor(xla.BFloat16, []int64{16, 8}, func(i int) float64 { return float64(i*31%79-39) / 8 }),
			},
		},
		{
			// Division of every float width: IEEE in f32 and f64, 16-bit
			// floats through f32 (Triton's NVIDIA lowering divides 32 and
			// 64 bits only), quotients that an approximate division
			// rounds differently.
			name: "float_division",
			kernel: func(k *Kernel, refs []*Ref) {
				for i := range 4 {
					x, y := refs[2*i].Load(), refs[2*i+1].Load()
					refs[8+i].Store(x.Div(y).Add(x.Rem(y)))
				}
			},
			spec: CallSpec{
				Name:      "float_division",
				OutShapes: []xla.Shape{v16(xla.Float32), v16(xla.Float64), v16(xla.Float16), v16(xla.BFloat16)},
			},
			args: []*interpreter.Tensor{
				floatTensor(xla.Float32, []int64{16}, func(i int) float64 { return 1 + float64(i)*0.37 }),
				floatTensor(xla.Float32, []int64{16}, func(i int) float64 { return 3 - float64(i)*0.11 }),
				floatTensor(xla.Float64, []int64{16}, func(i int) float64 { return 1e10 + float64(i)*0.37 }),
				floatTensor(xla.Float64, []int64{16}, func(i int) float64 { return 7 - float64(i)*0.13 }),
				floatTensor(xla.Float16, []int64{16}, func(i int) float64 { return 1 + float64(i)*0.37 }),
				floatTensor(xla.Float16, []int64{16}, func(i int) float64 { return 3 - float64(i)*0.11 }),
				floatTensor(xla.BFloat16, []int64{16}, func(i int) float64 { return 1 + float64(i)*0.37 }),
				floatTensor(xla.BFloat16, []int64{16}, func(i int) float64 { return 3 - float64(i)*0.11 }),
			},
		},
		{
			// Sums of bf16 and f16 accumulate in f32 and round once (512
			// values near 1 would stop growing at 256 in bf16); max and
			// min stay in the narrow type.
			name: "half_sums",
			kernel: func(k *Kernel, refs []*Ref) {
				x, y := refs[0].Load(), refs[1].Load()
				refs[2].Store(x.Sum(1))
				refs[3].Store(y.Sum(1))
				refs[4].Store(x.Sum())
				refs[5].Store(x.ReduceMax(0))
				refs[6].Store(y.ReduceMin(1))
			},
			spec: CallSpec{
				Name: "half_sums",
				OutShapes: []xla.Shape{xla.MakeShape(xla.BFloat16, 2), xla.MakeShape(xla.Float16, 2), xla.MakeShape(xla.BFloat16),
					xla.MakeShape(xla.BFloat16, 512), xla.MakeShape(xla.Float16, 2)},
			},
			args: []*interpreter.Tensor{
				floatTensor(xla.BFloat16, []int64{2, 512}, func(i int) float64 { return 1 + float64(i%4)/8 - float64(i/512)/2 }),
				floatTensor(xla.Float16, []int64{2, 512}, func(i int) float64 { return 0.1*float64(i%10) - float64(i/512) }),
			},
		},
		{
			// Integers past 2^24 to bf16, rounded once (Triton converts
			// through f32: the lowering rounds that to odd).
			name: "wide_ints_to_bf16",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[2].Store(refs[0].Load().Astype(xla.BFloat16))
				refs[3].Store(refs[1].Load().Astype(xla.BFloat16))
			},
			spec: CallSpec{Name: "wide_ints_to_bf16", OutShapes: []xla.Shape{xla.MakeShape(xla.BFloat16, 8), xla.MakeShape(xla.BFloat16, 8)}},
			args: []*interpreter.Tensor{
				typedTensor(xla.Int32, []int64{8}, []int32{1<<24 + 1<<16 + 1, -(1<<24 + 1<<16 + 1), 1<<24 + 1<<16, 1<<31 - 1, -1 << 31, 123456789, 7, -3}),
				typedTensor(xla.Uint64, []int64{8}, []uint64{1<<63 + 1<<55 + 1, 1<<64 - 1, 1<<40 + 1<<32 + 1, 1<<32 + 1, 0, 5, 1<<24 + 1<<16 + 1, 1 << 63}),
			},
		},
		{
			// Go constants for float blocks rounded once to their type
			// (TestConstantsRoundOnce's values, as TTIR literals).
			name: "constants_round_once",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[0].Store(k.Full(xla.Float16, 1+0x1p-11+0x1p-40, 2))
				refs[1].Store(k.Full(xla.BFloat16, 1<<24+1<<16+1, 2))
				refs[2].Store(k.Full(xla.Float32, int64(1<<60+1<<36+1), 2))
				refs[3].Store(k.Full(xla.Uint64, 1e19, 2))
			},
			spec: CallSpec{Name: "constants_round_once", OutShapes: []xla.Shape{xla.MakeShape(xla.Float16, 2),
				xla.MakeShape(xla.BFloat16, 2), xla.MakeShape(xla.Float32, 2), xla.MakeShape(xla.Uint64, 2)}},
		},
		{
			// An i8 dot into i64 and f64 over K = 2^17, past what tt.dot's
			// i32 accumulator holds (TestInt8DotLongK): products and sums.
			name: "i8_dot_long_k",
			kernel: func(k *Kernel, refs []*Ref) {
				a, b := refs[0].Load(), refs[1].Load()
				refs[2].Store(Dot(a, b, xla.Int64))
				refs[3].Store(Dot(a, b, xla.Float64))
			},
			spec: CallSpec{Name: "i8_dot_long_k", OutShapes: []xla.Shape{xla.MakeShape(xla.Int64, 1, 1), xla.MakeShape(xla.Float64, 1, 1)}},
			args: []*interpreter.Tensor{
				intTensor(xla.Int8, []int64{1, 1 << 17}, func(i int) int64 { return -128 + int64(i%3) }),
				intTensor(xla.Int8, []int64{1 << 17, 1}, func(i int) int64 { return -128 + int64(i%5) }),
			},
		},
		{
			// bf16 widened to f64 (through f32 in the TTIR).
			name:   "bf16_to_f64",
			kernel: func(k *Kernel, refs []*Ref) { refs[1].Store(refs[0].Load().Astype(xla.Float64)) },
			spec:   CallSpec{Name: "bf16_to_f64", OutShapes: []xla.Shape{xla.MakeShape(xla.Float64, 16)}},
			args: []*interpreter.Tensor{
				floatTensor(xla.BFloat16, []int64{16}, func(i int) float64 { return float64(i) - 7.5 + float64(i)/256 }),
			},
		},
	}
}
