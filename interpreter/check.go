package interpreter

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Conformance checks: the check dialect of StableHLO's interpreter tests
// (check.expect_eq, check.expect_eq_const, check.expect_almost_eq[_const],
// check.expect_close) and the check custom calls of its generated test
// data (@check.expect_eq, @check.expect_almost_eq, @check.expect_close,
// @check.eq). The comparisons follow the StableHLO reference
// interpreter's, so that tests written against it pass and fail alike:
//
//   - Equality: integers and booleans compare equal; floats compare with
//     IEEE equality (so -0 equals +0), except that NaN also matches NaN;
//     complex numbers compare part by part.
//   - Almost-equality within a tolerance: equal values match, NaN matches
//     only NaN, an infinity matches only itself, values of different signs
//     never match (a zero matches the other sign's zero only), and
//     otherwise the absolute difference must be at most the tolerance.
//     Integers and booleans compare exactly.
//   - Closeness in ULPs: the number of representable values of the element
//     type between the two (bit-identical values, NaN and NaN, and -0 and
//     +0 are 0 apart; a non-finite value is infinitely far from any other
//     value) must lie in [min_ulp_difference, max_ulp_difference].
//   - @check.eq returns tensor<i1>: integers and booleans compare exactly,
//     floats and complex numbers almost-equal within 1e-4; a mismatch
//     fails the run, as in the reference interpreter.
//
// A failed check is a *CheckError naming the first mismatch.

// Default tolerances.
const (
	// DefaultCheckTolerance is the tolerance of check.expect_almost_eq and
	// check.expect_almost_eq_const without a tolerance attribute.
	DefaultCheckTolerance = 1e-4
	// CustomCallCheckTolerance is the tolerance of @check.expect_almost_eq.
	CustomCallCheckTolerance = 1e-3
	// DefaultMaxULPDifference is the largest ULP distance check.expect_close
	// and @check.expect_close accept by default.
	DefaultMaxULPDifference = 3
)

// CheckError is a failed check: which check, where the first mismatch is
// and what was expected there, or why the operands cannot be compared.
type CheckError struct {
	// Check is the op ("check.expect_eq") or custom call target
	// ("@check.expect_almost_eq"), or "compare" for CompareExact,
	// CompareAlmost and CompareULP called directly.
	Check string
	// Index is the multi-dimensional index of the first mismatch.
	Index []int64
	// Expected and Got are the values at Index, printed.
	Expected, Got string
	// Mismatches is the number of elements that differ, of Elements.
	Mismatches, Elements int
	// Reason is set when the operands cannot be compared element-wise
	// (different types), and for ULP checks says the distance.
	Reason string
}

// Error describes the failure: "check.expect_eq failed: 2 of 4 elements
// differ; first at index [1]: expected 2, got 3".
func (e *CheckError) Error() string {
	if e.Index == nil {
		return fmt.Sprintf("%s failed: %s", e.Check, e.Reason)
	}
	idx := make([]string, len(e.Index))
	for i, v := range e.Index {
		idx[i] = strconv.FormatInt(v, 10)
	}
	s := fmt.Sprintf("%s failed: %d of %d elements differ; first at index [%s]: expected %s, got %s",
		e.Check, e.Mismatches, e.Elements, strings.Join(idx, ", "), e.Expected, e.Got)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

// ---- comparison ----

type checkMode int

const (
	checkExact checkMode = iota
	checkAlmost
	checkULP
)

type checkSpec struct {
	name           string
	mode           checkMode
	tol            float64
	minULP, maxULP uint64
}

// CompareExact compares got with want exactly (see the package's check
// rules) and returns the first mismatch, or nil.
func CompareExact(got, want *Tensor) *CheckError {
	return compareTensors(checkSpec{name: "compare", mode: checkExact}, got, want)
}

// CompareAlmost compares got with want within an absolute tolerance.
func CompareAlmost(got, want *Tensor, tolerance float64) *CheckError {
	return compareTensors(checkSpec{name: "compare", mode: checkAlmost, tol: tolerance}, got, want)
}

// CompareULP compares floats of got and want by their ULP distance, which
// must lie in [minULP, maxULP].
func CompareULP(got, want *Tensor, minULP, maxULP uint64) *CheckError {
	return compareTensors(checkSpec{name: "compare", mode: checkULP, minULP: minULP, maxULP: maxULP}, got, want)
}

func compareTensors(spec checkSpec, got, want *Tensor) *CheckError {
	if got == nil || want == nil {
		return &CheckError{Check: spec.name, Reason: "missing operand"}
	}
	if !got.Shape.Equal(want.Shape) {
		return &CheckError{Check: spec.name, Reason: fmt.Sprintf("got a %v, expected a %v",
			stablehlo.TensorOf(got.Shape), stablehlo.TensorOf(want.Shape))}
	}
	dt := got.Shape.DType
	n := got.Len()
	first, count := -1, 0
	var dist uint64
	note := func(i int, ok bool, d uint64) {
		if !ok {
			if first < 0 {
				first, dist = i, d
			}
			count++
		}
	}
	switch g := got.Data.(type) {
	case []bool:
		w := want.Data.([]bool)
		for i := range g {
			note(i, g[i] == w[i], 0)
		}
	case []int8:
		cmpInts(g, want.Data.([]int8), note)
	case []int16:
		cmpInts(g, want.Data.([]int16), note)
	case []int32:
		cmpInts(g, want.Data.([]int32), note)
	case []int64:
		cmpInts(g, want.Data.([]int64), note)
	case []uint8:
		cmpInts(g, want.Data.([]uint8), note)
	case []uint16:
		cmpInts(g, want.Data.([]uint16), note)
	case []uint32:
		cmpInts(g, want.Data.([]uint32), note)
	case []uint64:
		cmpInts(g, want.Data.([]uint64), note)
	case []float32:
		w := want.Data.([]float32)
		for i := range g {
			ok, d := spec.floatOK(dt, float64(g[i]), float64(w[i]))
			note(i, ok, d)
		}
	case []float64:
		w := want.Data.([]float64)
		for i := range g {
			ok, d := spec.floatOK(dt, g[i], w[i])
			note(i, ok, d)
		}
	case []complex64:
		w := want.Data.([]complex64)
		for i := range g {
			ok1, d1 := spec.floatOK(xla.Float32, float64(real(g[i])), float64(real(w[i])))
			ok2, d2 := spec.floatOK(xla.Float32, float64(imag(g[i])), float64(imag(w[i])))
			note(i, ok1 && ok2, max(d1, d2))
		}
	case []complex128:
		w := want.Data.([]complex128)
		for i := range g {
			ok1, d1 := spec.floatOK(xla.Float64, real(g[i]), real(w[i]))
			ok2, d2 := spec.floatOK(xla.Float64, imag(g[i]), imag(w[i]))
			note(i, ok1 && ok2, max(d1, d2))
		}
	default:
		return &CheckError{Check: spec.name, Reason: fmt.Sprintf("element type %v cannot be compared", dt)}
	}
	if count == 0 {
		return nil
	}
	e := &CheckError{
		Check: spec.name, Mismatches: count, Elements: n,
		Index: unravel(first, got.Shape.Dims), Expected: FormatElement(want, first), Got: FormatElement(got, first),
	}
	switch spec.mode {
	case checkULP:
		if dt.IsFloat() || dt.IsComplex() {
			if dist == math.MaxUint64 {
				e.Reason = "NaN against a number"
			} else {
				e.Reason = fmt.Sprintf("%d ULP apart, want %d to %d", dist, spec.minULP, spec.maxULP)
			}
		}
	case checkAlmost:
		if dt.IsFloat() || dt.IsComplex() {
			e.Reason = fmt.Sprintf("tolerance %g", spec.tol)
		}
	}
	return e
}

func cmpInts[T ewInt](g, w []T, note func(int, bool, uint64)) {
	w = w[:len(g)]
	for i := range g {
		note(i, g[i] == w[i], 0)
	}
}

// floatOK compares one float (of element type dt) under the check's mode;
// d is the ULP distance for ULP checks.
func (s checkSpec) floatOK(dt xla.DType, got, want float64) (ok bool, d uint64) {
	switch s.mode {
	case checkExact:
		return got == want || (got != got && want != want), 0
	case checkAlmost:
		return almostEqual(got, want, s.tol), 0
	default:
		d = ULPDistance(dt, got, want)
		return d >= s.minULP && d <= s.maxULP, d
	}
}

// almostEqual is the reference interpreter's approximate equality.
func almostEqual(a, b, tol float64) bool {
	if a == b {
		return true
	}
	if a != a || b != b {
		return a != a && b != b
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return false
	}
	if math.Signbit(a) != math.Signbit(b) {
		return false
	}
	return math.Abs(a-b) <= tol
}

// ULPDistance is the number of representable values of float type dt
// between a and b (both representable in dt): 0 for equal values (and
// for -0 and +0, and for two NaNs), MaxUint64 when either is not finite
// and they differ.
func ULPDistance(dt xla.DType, a, b float64) uint64 {
	an, bn := a != a, b != b
	if an || bn {
		if an && bn {
			return 0
		}
		return math.MaxUint64
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		if a == b {
			return 0
		}
		return math.MaxUint64
	}
	var ka, kb int64
	switch dt {
	case xla.Float64:
		ka, kb = orderedKey(math.Float64bits(a), 64), orderedKey(math.Float64bits(b), 64)
	case xla.Float32:
		ka, kb = orderedKey(uint64(math.Float32bits(float32(a))), 32), orderedKey(uint64(math.Float32bits(float32(b))), 32)
	case xla.Float8E8M0FNU: // unsigned: no sign bit
		ka, kb = int64(EncodeNarrow(dt, float32(a))), int64(EncodeNarrow(dt, float32(b)))
	default:
		if !IsNarrowFloat(dt) {
			return 0
		}
		bits := dt.Bits()
		ka = orderedKey(uint64(EncodeNarrow(dt, float32(a))), bits)
		kb = orderedKey(uint64(EncodeNarrow(dt, float32(b))), bits)
	}
	if ka > kb {
		ka, kb = kb, ka
	}
	if ka < 0 && kb >= 0 {
		return uint64(-ka) + uint64(kb)
	}
	return uint64(kb - ka)
}

// orderedKey maps the bits of a sign-magnitude float of the given width to
// an integer that orders like the value (-0 and +0 both map to 0).
func orderedKey(bits uint64, width int) int64 {
	sign := bits >> (width - 1) & 1
	mag := bits &^ (1 << (width - 1))
	if width == 64 {
		mag = bits & (1<<63 - 1)
	}
	if sign != 0 {
		return -int64(mag)
	}
	return int64(mag)
}

func unravel(i int, dims []int64) []int64 {
	idx := make([]int64, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		if dims[k] > 0 {
			idx[k] = int64(i) % dims[k]
			i /= int(dims[k])
		}
	}
	return idx
}

// FormatElement prints element i of t as the halo CLI prints the
// elements of a result: booleans as true and false, integers in decimal
// (the sub-byte ones too: -1 for an i4 of bits 1111), floats (the narrow
// kinds included) in the shortest form that reads back as the same value
// of the element type, complex numbers as Go prints them, (1-2i). It is
// "?" when t has no element i: t is nil or malformed (Validate's error), or
// i is out of range. FormatHostElement prints an element from its host
// bytes the same way.
func FormatElement(t *Tensor, i int) string {
	if t.Validate() != nil || i < 0 || i >= t.Len() {
		return "?"
	}
	switch d := t.Data.(type) {
	case []bool:
		return strconv.FormatBool(d[i])
	case []int8:
		return strconv.FormatInt(int64(d[i]), 10)
	case []int16:
		return strconv.FormatInt(int64(d[i]), 10)
	case []int32:
		return strconv.FormatInt(int64(d[i]), 10)
	case []int64:
		return strconv.FormatInt(d[i], 10)
	case []uint8:
		return strconv.FormatUint(uint64(d[i]), 10)
	case []uint16:
		return strconv.FormatUint(uint64(d[i]), 10)
	case []uint32:
		return strconv.FormatUint(uint64(d[i]), 10)
	case []uint64:
		return strconv.FormatUint(d[i], 10)
	case []float32:
		return strconv.FormatFloat(float64(d[i]), 'g', -1, 32)
	case []float64:
		return strconv.FormatFloat(d[i], 'g', -1, 64)
	case []complex64:
		return strconv.FormatComplex(complex128(d[i]), 'g', -1, 64)
	case []complex128:
		return strconv.FormatComplex(d[i], 'g', -1, 128)
	}
	return "?"
}

// FormatHostElement prints one element of element type dt from its host
// bytes e (little-endian, one byte for a boolean or sub-byte element: see
// TensorFromHost) as FormatElement prints it: what halo run shows for an
// element of a result. It is "?" when e is not one element of dt.
func FormatHostElement(dt xla.DType, e []byte) string {
	t, err := TensorFromHost(xla.MakeShape(dt), e)
	if err != nil {
		return "?"
	}
	return FormatElement(t, 0)
}

// TensorFromAttr decodes a dense elements attribute (a splat is expanded).
// A splat's expansion is checked as NewTensor checks a tensor: one that
// cannot be allocated is an *AllocError.
func TensorFromAttr(a stablehlo.DenseElementsAttr) (t *Tensor, err error) {
	defer catchAlloc(&err)
	return constantTensor(nil, a)
}

// ---- the check dialect ----

func init() {
	registerKernel("check.expect_eq", checkPairKernel(checkExact))
	registerKernel("check.expect_almost_eq", checkPairKernel(checkAlmost))
	registerKernel("check.expect_close", checkPairKernel(checkULP))
	registerKernel("check.expect_eq_const", checkConstKernel(checkExact))
	registerKernel("check.expect_almost_eq_const", checkConstKernel(checkAlmost))
	// The first check dialect: check.eq / check.almost_eq against a constant.
	registerKernel("check.eq", checkConstKernel(checkExact))
	registerKernel("check.almost_eq", checkConstKernel(checkAlmost))

	RegisterCustomCall("check.expect_eq", checkCustomCall("@check.expect_eq", checkSpec{mode: checkExact}, false))
	RegisterCustomCall("check.expect_almost_eq", checkCustomCall("@check.expect_almost_eq", checkSpec{mode: checkAlmost, tol: CustomCallCheckTolerance}, false))
	RegisterCustomCall("check.expect_close", checkCustomCall("@check.expect_close", checkSpec{mode: checkULP, maxULP: DefaultMaxULPDifference}, false))
	RegisterCustomCall("check.eq", checkCustomCall("@check.eq", checkSpec{mode: checkAlmost, tol: DefaultCheckTolerance}, true))
}

// checkSpecOf reads a check op's tolerance or ULP bounds.
func checkSpecOf(op *stablehlo.Op, mode checkMode) (checkSpec, error) {
	s := checkSpec{name: op.Name, mode: mode, tol: DefaultCheckTolerance, maxULP: DefaultMaxULPDifference}
	switch mode {
	case checkAlmost:
		switch a := op.Attr("tolerance").(type) {
		case nil:
		case stablehlo.FloatAttr:
			s.tol = a.Value
		case stablehlo.IntAttr:
			s.tol = float64(a.Value)
		default:
			return s, fmt.Errorf("tolerance is %T, want a float", a)
		}
		if s.tol < 0 || s.tol != s.tol {
			return s, fmt.Errorf("tolerance %v must be a non-negative number", s.tol)
		}
	case checkULP:
		for _, b := range []struct {
			name string
			dst  *uint64
		}{{"min_ulp_difference", &s.minULP}, {"max_ulp_difference", &s.maxULP}} {
			switch a := op.Attr(b.name).(type) {
			case nil:
			case stablehlo.IntAttr:
				if a.Value < 0 {
					return s, fmt.Errorf("%s %d must not be negative", b.name, a.Value)
				}
				*b.dst = uint64(a.Value)
			default:
				return s, fmt.Errorf("%s is %T, want an integer", b.name, a)
			}
		}
		if s.minULP > s.maxULP {
			return s, fmt.Errorf("min_ulp_difference %d is above max_ulp_difference %d", s.minULP, s.maxULP)
		}
	}
	return s, nil
}

func checkPairKernel(mode checkMode) Kernel {
	return func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		ts, err := tensorArgs(args)
		if err != nil {
			return nil, err
		}
		if len(ts) != 2 {
			return nil, fmt.Errorf("want two operands, have %d", len(ts))
		}
		spec, err := checkSpecOf(op, mode)
		if err != nil {
			return nil, err
		}
		if e := compareTensors(spec, ts[0], ts[1]); e != nil {
			return nil, e
		}
		return []Value{}, nil
	}
}

func checkConstKernel(mode checkMode) Kernel {
	return func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		ts, err := tensorArgs(args)
		if err != nil {
			return nil, err
		}
		if len(ts) != 1 {
			return nil, fmt.Errorf("want one operand, have %d", len(ts))
		}
		a, ok := op.Attr("value").(stablehlo.DenseElementsAttr)
		if !ok {
			return nil, fmt.Errorf("value is %T, want a dense elements attribute", op.Attr("value"))
		}
		spec, err := checkSpecOf(op, mode)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(a.Type.Dims, func(d int64) bool { return d < 0 }) && !ts[0].Shape.Equal(a.Type.Shape()) {
			// A mismatch, told without decoding the value (a splat
			// of a large type would be expanded first).
			return nil, &CheckError{Check: spec.name, Reason: fmt.Sprintf("got a %v, expected a %v", stablehlo.TensorOf(ts[0].Shape), a.Type)}
		}
		want, err := TensorFromAttr(a)
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		if e := compareTensors(spec, ts[0], want); e != nil {
			return nil, e
		}
		return []Value{}, nil
	}
}

// checkCustomCall implements a check custom call comparing operand 0 (the
// computed value) with operand 1 (the expected one); a mismatch fails the
// run. A predicate call (@check.eq) also returns tensor<i1> true.
func checkCustomCall(name string, spec checkSpec, predicate bool) CustomCallFunc {
	spec.name = name
	return func(c *CustomCall) ([]*Tensor, error) {
		if len(c.Operands) != 2 {
			return nil, fmt.Errorf("want two operands (actual, expected), have %d", len(c.Operands))
		}
		if predicate {
			if len(c.Results) != 1 || c.Results[0].DType != xla.Bool || c.Results[0].Size() != 1 {
				return nil, fmt.Errorf("%s returns one tensor<i1>", name)
			}
		} else if len(c.Results) != 0 {
			return nil, fmt.Errorf("%s has no results, the op declares %d", name, len(c.Results))
		}
		if e := compareTensors(spec, c.Operands[0], c.Operands[1]); e != nil {
			return nil, e
		}
		if !predicate {
			return nil, nil
		}
		out := NewTensor(c.Results[0].Shape())
		out.Data.([]bool)[0] = true
		return []*Tensor{out}, nil
	}
}
