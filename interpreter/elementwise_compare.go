package interpreter

import (
	"fmt"
	"math"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// compare, select and clamp.
//
// compare follows the element type: integers compare as signed or unsigned
// by their type, booleans as false < true, floats as IEEE-754 quiet
// comparisons (any comparison with NaN is false except NE) unless
// compare_type is TOTALORDER, which orders floats by their bits as
// -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN (for every direction,
// EQ and NE included, as XLA does), or WEAKORDER, where -0 == +0 and every
// NaN equals every other NaN and is above +Inf. Complex numbers compare
// their (real, imag) pairs lexicographically. SIGNED on signed integers,
// UNSIGNED on unsigned ones and booleans and FLOAT on floats are the
// defaults; a compare_type that does not fit the element type is an error.

type ewCmpDir uint8

const (
	cmpEQ ewCmpDir = iota
	cmpNE
	cmpGE
	cmpGT
	cmpLE
	cmpLT
)

var ewCmpDirs = map[string]ewCmpDir{"EQ": cmpEQ, "NE": cmpNE, "GE": cmpGE, "GT": cmpGT, "LE": cmpLE, "LT": cmpLT}

func init() {
	registerKernel("stablehlo.compare", ewCompareKernel)
	registerKernel("stablehlo.select", ewSelectKernel)
	registerKernel("stablehlo.clamp", ewClampKernel)
}

// Float comparison orders.
const (
	ewOrderFloat = iota
	ewOrderTotal
	ewOrderWeak
)

// ewCompareAttrs reads comparison_direction and compare_type and checks the
// type fits dt.
func ewCompareAttrs(op *stablehlo.Op, dt xla.DType) (dir ewCmpDir, order int, err error) {
	a := op.Attr("comparison_direction")
	e, ok := a.(stablehlo.EnumAttr)
	if !ok {
		return 0, 0, fmt.Errorf("comparison_direction must be a comparison_direction enum, got %T", a)
	}
	if dir, ok = ewCmpDirs[e.Value]; !ok {
		return 0, 0, fmt.Errorf("unknown comparison_direction %q", e.Value)
	}
	ct := "NOTYPE"
	if a := op.Attr("compare_type"); a != nil {
		e, ok := a.(stablehlo.EnumAttr)
		if !ok {
			return 0, 0, fmt.Errorf("compare_type must be a comparison_type enum, got %T", a)
		}
		ct = e.Value
	}
	switch ct {
	case "NOTYPE":
	case "FLOAT":
		if !dt.IsFloat() && !dt.IsComplex() {
			return 0, 0, fmt.Errorf("compare_type FLOAT does not apply to %v", dt)
		}
	case "TOTALORDER", "WEAKORDER":
		if !dt.IsFloat() {
			return 0, 0, fmt.Errorf("compare_type %s does not apply to %v", ct, dt)
		}
		order = ewOrderTotal
		if ct == "WEAKORDER" {
			order = ewOrderWeak
		}
	case "SIGNED", "UNSIGNED":
		// The spec's pairing: SIGNED for signed integers, UNSIGNED for
		// unsigned ones and booleans (a compare_type that contradicts
		// the element type would otherwise be silently ignored).
		if !stablehlo.CompareType(ct).AppliesTo(dt) {
			return 0, 0, fmt.Errorf("compare_type %s does not apply to %v", ct, dt)
		}
	default:
		return 0, 0, fmt.Errorf("unknown compare_type %q", ct)
	}
	return dir, order, nil
}

func ewCompareKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("takes 2 operands, got %d", len(args))
	}
	a, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	b, err := ewTensor(args, 1)
	if err != nil {
		return nil, err
	}
	if a.Shape.DType != b.Shape.DType || !ewSameDims(a.Shape, b.Shape) {
		return nil, fmt.Errorf("operands have different types %s and %s", ewType(a.Shape), ewType(b.Shape))
	}
	dir, order, err := ewCompareAttrs(op, a.Shape.DType)
	if err != nil {
		return nil, err
	}
	out, err := ewResultOf(op, 0, xla.Bool, xla.Shape{DType: xla.Bool, Dims: a.Shape.Dims}, "")
	if err != nil {
		return nil, err
	}
	d := out.Data.([]bool)
	switch ad := a.Data.(type) {
	case []bool:
		bd := b.Data.([]bool)
		ewRun2x(int(dir), d, ad, bd, ewCmpBool)
	case []int8:
		ewCmpSplit(dir, d, ad, b.Data.([]int8))
	case []int16:
		ewCmpSplit(dir, d, ad, b.Data.([]int16))
	case []int32:
		ewCmpSplit(dir, d, ad, b.Data.([]int32))
	case []int64:
		ewCmpSplit(dir, d, ad, b.Data.([]int64))
	case []uint8:
		ewCmpSplit(dir, d, ad, b.Data.([]uint8))
	case []uint16:
		ewCmpSplit(dir, d, ad, b.Data.([]uint16))
	case []uint32:
		ewCmpSplit(dir, d, ad, b.Data.([]uint32))
	case []uint64:
		ewCmpSplit(dir, d, ad, b.Data.([]uint64))
	case []float32:
		bd := b.Data.([]float32)
		switch order {
		case ewOrderTotal:
			ewRun2x(int(dir), d, ad, bd, ewCmpTotal32)
		case ewOrderWeak:
			ewRun2x(int(dir), d, ad, bd, ewCmpWeak[float32])
		default:
			ewCmpSplit(dir, d, ad, bd)
		}
	case []float64:
		bd := b.Data.([]float64)
		switch order {
		case ewOrderTotal:
			ewRun2x(int(dir), d, ad, bd, ewCmpTotal64)
		case ewOrderWeak:
			ewRun2x(int(dir), d, ad, bd, ewCmpWeak[float64])
		default:
			ewCmpSplit(dir, d, ad, bd)
		}
	case []complex64:
		ewRun2x(int(dir), d, ad, b.Data.([]complex64), ewCmpComplex[complex64])
	case []complex128:
		ewRun2x(int(dir), d, ad, b.Data.([]complex128), ewCmpComplex[complex128])
	default:
		return nil, ewDTypeError(op, a.Shape.DType)
	}
	return []Value{out}, nil
}

func ewCmpSplit[T ewReal](dir ewCmpDir, d []bool, a, b []T) {
	ewRun2x(int(dir), d, a, b, ewCmp[T])
}

// ewCmp compares with Go's operators: IEEE quiet comparisons for floats.
func ewCmp[T ewReal](xdir int, d []bool, a, b []T) {
	dir := ewCmpDir(xdir)
	a, b = a[:len(d)], b[:len(d)]
	switch dir {
	case cmpEQ:
		for i := range d {
			d[i] = a[i] == b[i]
		}
	case cmpNE:
		for i := range d {
			d[i] = a[i] != b[i]
		}
	case cmpGE:
		for i := range d {
			d[i] = a[i] >= b[i]
		}
	case cmpGT:
		for i := range d {
			d[i] = a[i] > b[i]
		}
	case cmpLE:
		for i := range d {
			d[i] = a[i] <= b[i]
		}
	case cmpLT:
		for i := range d {
			d[i] = a[i] < b[i]
		}
	}
}

// ewCmpResult is the outcome of direction dir for a three-way comparison c
// (-1, 0, 1).
func ewCmpResult(dir ewCmpDir, c int) bool {
	switch dir {
	case cmpEQ:
		return c == 0
	case cmpNE:
		return c != 0
	case cmpGE:
		return c >= 0
	case cmpGT:
		return c > 0
	case cmpLE:
		return c <= 0
	}
	return c < 0
}

func ewCmpBool(xdir int, d, a, b []bool) {
	dir := ewCmpDir(xdir)
	for i := range d {
		c := 0
		switch {
		case a[i] && !b[i]:
			c = 1
		case !a[i] && b[i]:
			c = -1
		}
		d[i] = ewCmpResult(dir, c)
	}
}

// ewTotalKey32 maps float32 bits to integers in IEEE totalOrder.
func ewTotalKey32(v float32) int32 {
	b := int32(math.Float32bits(v))
	return b ^ int32(uint32(b>>31)>>1)
}

// ewTotalKey64 maps float64 bits to integers in IEEE totalOrder.
func ewTotalKey64(v float64) int64 {
	b := int64(math.Float64bits(v))
	return b ^ int64(uint64(b>>63)>>1)
}

func ewCmpTotal32(xdir int, d []bool, a, b []float32) {
	dir := ewCmpDir(xdir)
	for i := range d {
		ka, kb := ewTotalKey32(a[i]), ewTotalKey32(b[i])
		d[i] = ewCmpResult(dir, ewThreeWay(ka, kb))
	}
}

func ewCmpTotal64(xdir int, d []bool, a, b []float64) {
	dir := ewCmpDir(xdir)
	for i := range d {
		ka, kb := ewTotalKey64(a[i]), ewTotalKey64(b[i])
		d[i] = ewCmpResult(dir, ewThreeWay(ka, kb))
	}
}

// ewCmpWeak compares in the weak order: -Inf < ... < -0 == +0 < ... <
// +Inf < NaN, with all NaNs equal.
func ewCmpWeak[T ewFloat](xdir int, d []bool, a, b []T) {
	dir := ewCmpDir(xdir)
	for i := range d {
		x, y := a[i], b[i]
		c := 0
		switch xn, yn := x != x, y != y; {
		case xn && yn:
		case xn:
			c = 1
		case yn:
			c = -1
		case x < y:
			c = -1
		case x > y:
			c = 1
		}
		d[i] = ewCmpResult(dir, c)
	}
}

func ewThreeWay[T int32 | int64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ewCmpComplex compares (real, imag) lexicographically with quiet float
// comparisons of the parts.
func ewCmpComplex[T ewComplex](xdir int, d []bool, a, b []T) {
	dir := ewCmpDir(xdir)
	for i := range d {
		x, y := complex128(a[i]), complex128(b[i])
		xr, xi, yr, yi := real(x), imag(x), real(y), imag(y)
		var r bool
		switch dir {
		case cmpEQ:
			r = xr == yr && xi == yi
		case cmpNE:
			r = xr != yr || xi != yi
		case cmpGE:
			r = xr > yr || (xr == yr && xi >= yi)
		case cmpGT:
			r = xr > yr || (xr == yr && xi > yi)
		case cmpLE:
			r = xr < yr || (xr == yr && xi <= yi)
		case cmpLT:
			r = xr < yr || (xr == yr && xi < yi)
		}
		d[i] = r
	}
}

// ewSelectKernel is select(pred, on_true, on_false) with a scalar or
// elementwise predicate.
func ewSelectKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 3 {
		return nil, fmt.Errorf("takes 3 operands, got %d", len(args))
	}
	pred, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	t, err := ewTensor(args, 1)
	if err != nil {
		return nil, err
	}
	f, err := ewTensor(args, 2)
	if err != nil {
		return nil, err
	}
	if pred.Shape.DType != xla.Bool {
		return nil, fmt.Errorf("pred must have i1 elements, got %s", ewType(pred.Shape))
	}
	if t.Shape.DType != f.Shape.DType || !ewSameDims(t.Shape, f.Shape) {
		return nil, fmt.Errorf("on_true %s and on_false %s have different types", ewType(t.Shape), ewType(f.Shape))
	}
	scalar := len(pred.Shape.Dims) == 0
	if !scalar && !ewSameDims(pred.Shape, t.Shape) {
		return nil, fmt.Errorf("pred %s must be a scalar or have the shape of on_true %s", ewType(pred.Shape), ewType(t.Shape))
	}
	if _, err := ewResultOf(op, 0, t.Shape.DType, t.Shape, "on_true "); err != nil {
		return nil, err
	}
	p := pred.Data.([]bool)
	if scalar {
		if p[0] {
			return []Value{t.Clone()}, nil
		}
		return []Value{f.Clone()}, nil
	}
	out := NewTensor(t.Shape)
	switch d := out.Data.(type) {
	case []bool:
		ewSelect(d, p, t.Data.([]bool), f.Data.([]bool))
	case []int8:
		ewSelect(d, p, t.Data.([]int8), f.Data.([]int8))
	case []int16:
		ewSelect(d, p, t.Data.([]int16), f.Data.([]int16))
	case []int32:
		ewSelect(d, p, t.Data.([]int32), f.Data.([]int32))
	case []int64:
		ewSelect(d, p, t.Data.([]int64), f.Data.([]int64))
	case []uint8:
		ewSelect(d, p, t.Data.([]uint8), f.Data.([]uint8))
	case []uint16:
		ewSelect(d, p, t.Data.([]uint16), f.Data.([]uint16))
	case []uint32:
		ewSelect(d, p, t.Data.([]uint32), f.Data.([]uint32))
	case []uint64:
		ewSelect(d, p, t.Data.([]uint64), f.Data.([]uint64))
	case []float32:
		ewSelect(d, p, t.Data.([]float32), f.Data.([]float32))
	case []float64:
		ewSelect(d, p, t.Data.([]float64), f.Data.([]float64))
	case []complex64:
		ewSelect(d, p, t.Data.([]complex64), f.Data.([]complex64))
	case []complex128:
		ewSelect(d, p, t.Data.([]complex128), f.Data.([]complex128))
	default:
		return nil, ewDTypeError(op, t.Shape.DType)
	}
	return []Value{out}, nil
}

func ewSelect[T any](d []T, p []bool, a, b []T) {
	body := func(d []T, p []bool, a, b []T) {
		for i := range d {
			if p[i] {
				d[i] = a[i]
			} else {
				d[i] = b[i]
			}
		}
	}
	if len(d) < ewParallelMin {
		body(d, p, a, b)
		return
	}
	ewSplit(len(d), func(lo, hi int) { body(d[lo:hi], p[lo:hi], a[lo:hi], b[lo:hi]) })
}

// ewClampKernel is clamp(min, operand, max) = minimum(maximum(operand, min),
// max), with min and max scalars or of the operand's shape.
func ewClampKernel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 3 {
		return nil, fmt.Errorf("takes 3 operands, got %d", len(args))
	}
	lo, err := ewTensor(args, 0)
	if err != nil {
		return nil, err
	}
	v, err := ewTensor(args, 1)
	if err != nil {
		return nil, err
	}
	hi, err := ewTensor(args, 2)
	if err != nil {
		return nil, err
	}
	for _, b := range []*Tensor{lo, hi} {
		if b.Shape.DType != v.Shape.DType || (len(b.Shape.Dims) != 0 && !ewSameDims(b.Shape, v.Shape)) {
			return nil, fmt.Errorf("min and max must be scalars or have the operand's type %s, got %s", ewType(v.Shape), ewType(b.Shape))
		}
	}
	out, err := ewResultOf(op, 0, v.Shape.DType, v.Shape, "the operand's ")
	if err != nil {
		return nil, err
	}
	ls, hs := 1, 1 // strides into min and max: 0 for a scalar
	if len(lo.Shape.Dims) == 0 {
		ls = 0
	}
	if len(hi.Shape.Dims) == 0 {
		hs = 0
	}
	switch d := out.Data.(type) {
	case []bool:
		l, a, h := lo.Data.([]bool), v.Data.([]bool), hi.Data.([]bool)
		ewSplit(len(d), func(s, e int) {
			for i := s; i < e; i++ {
				d[i] = (a[i] || l[i*ls]) && h[i*hs]
			}
		})
	case []int8:
		ewClampOrdered(d, lo.Data.([]int8), v.Data.([]int8), hi.Data.([]int8), ls, hs)
	case []int16:
		ewClampOrdered(d, lo.Data.([]int16), v.Data.([]int16), hi.Data.([]int16), ls, hs)
	case []int32:
		ewClampOrdered(d, lo.Data.([]int32), v.Data.([]int32), hi.Data.([]int32), ls, hs)
	case []int64:
		ewClampOrdered(d, lo.Data.([]int64), v.Data.([]int64), hi.Data.([]int64), ls, hs)
	case []uint8:
		ewClampOrdered(d, lo.Data.([]uint8), v.Data.([]uint8), hi.Data.([]uint8), ls, hs)
	case []uint16:
		ewClampOrdered(d, lo.Data.([]uint16), v.Data.([]uint16), hi.Data.([]uint16), ls, hs)
	case []uint32:
		ewClampOrdered(d, lo.Data.([]uint32), v.Data.([]uint32), hi.Data.([]uint32), ls, hs)
	case []uint64:
		ewClampOrdered(d, lo.Data.([]uint64), v.Data.([]uint64), hi.Data.([]uint64), ls, hs)
	case []float32:
		ewClampFloat(d, lo.Data.([]float32), v.Data.([]float32), hi.Data.([]float32), ls, hs)
	case []float64:
		ewClampFloat(d, lo.Data.([]float64), v.Data.([]float64), hi.Data.([]float64), ls, hs)
	case []complex64:
		ewClampComplex(d, lo.Data.([]complex64), v.Data.([]complex64), hi.Data.([]complex64), ls, hs)
	case []complex128:
		ewClampComplex(d, lo.Data.([]complex128), v.Data.([]complex128), hi.Data.([]complex128), ls, hs)
	default:
		return nil, ewDTypeError(op, v.Shape.DType)
	}
	return []Value{out}, nil
}

func ewClampOrdered[T ewInt](d, l, a, h []T, ls, hs int) {
	ewSplit(len(d), func(s, e int) {
		for i := s; i < e; i++ {
			d[i] = min(max(a[i], l[i*ls]), h[i*hs])
		}
	})
}

func ewClampFloat[T ewFloat](d, l, a, h []T, ls, hs int) {
	ewSplit(len(d), func(s, e int) {
		for i := s; i < e; i++ {
			d[i] = ewFMin(ewFMax(a[i], l[i*ls]), h[i*hs])
		}
	})
}

func ewClampComplex[T ewComplex](d, l, a, h []T, ls, hs int) {
	ewSplit(len(d), func(s, e int) {
		for i := s; i < e; i++ {
			v := a[i]
			if ewCLess(v, l[i*ls]) {
				v = l[i*ls]
			}
			if ewCGreater(v, h[i*hs]) {
				v = h[i*hs]
			}
			d[i] = v
		}
	})
}
