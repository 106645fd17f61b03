package chlo

import (
	"fmt"
	"math"
	"slices"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

type (
	// Value is a stablehlo.Value.
	Value = stablehlo.Value
	// FuncBuilder is a stablehlo.FuncBuilder.
	FuncBuilder = stablehlo.FuncBuilder
)

func init() {
	stablehlo.RegisterBuilderPackage("github.com/halo-ml/halo/chlo")
}

func one(fb *FuncBuilder, name string, operands []*Value, attrs ...stablehlo.NamedAttr) *Value {
	return fb.EmitInferred(name, operands, attrs...)[0]
}

func unary(fb *FuncBuilder, name string, x *Value) *Value {
	return one(fb, "chlo."+name, []*Value{x})
}

// Acos adds chlo.acos (float or complex).
func Acos(fb *FuncBuilder, x *Value) *Value { return unary(fb, "acos", x) }

// Acosh adds chlo.acosh (float or complex).
func Acosh(fb *FuncBuilder, x *Value) *Value { return unary(fb, "acosh", x) }

// Asin adds chlo.asin (float or complex).
func Asin(fb *FuncBuilder, x *Value) *Value { return unary(fb, "asin", x) }

// Asinh adds chlo.asinh (float or complex).
func Asinh(fb *FuncBuilder, x *Value) *Value { return unary(fb, "asinh", x) }

// Atan adds chlo.atan (float or complex).
func Atan(fb *FuncBuilder, x *Value) *Value { return unary(fb, "atan", x) }

// Atanh adds chlo.atanh (float or complex).
func Atanh(fb *FuncBuilder, x *Value) *Value { return unary(fb, "atanh", x) }

// BesselI1e adds chlo.bessel_i1e: the exponentially scaled modified Bessel
// function of the first kind of order one, e^-|x| I1(x).
func BesselI1e(fb *FuncBuilder, x *Value) *Value { return unary(fb, "bessel_i1e", x) }

// Conj adds chlo.conj: the complex conjugate (the identity on floats).
func Conj(fb *FuncBuilder, x *Value) *Value { return unary(fb, "conj", x) }

// Cosh adds chlo.cosh (float or complex).
func Cosh(fb *FuncBuilder, x *Value) *Value { return unary(fb, "cosh", x) }

// Sinh adds chlo.sinh (float or complex).
func Sinh(fb *FuncBuilder, x *Value) *Value { return unary(fb, "sinh", x) }

// Tan adds chlo.tan (float or complex).
func Tan(fb *FuncBuilder, x *Value) *Value { return unary(fb, "tan", x) }

// Square adds chlo.square: x*x (integers, floats, complex numbers).
func Square(fb *FuncBuilder, x *Value) *Value { return unary(fb, "square", x) }

// Digamma adds chlo.digamma: ψ(x) = Γ'(x)/Γ(x) (floats).
func Digamma(fb *FuncBuilder, x *Value) *Value { return unary(fb, "digamma", x) }

// Erf adds chlo.erf, the error function (floats).
func Erf(fb *FuncBuilder, x *Value) *Value { return unary(fb, "erf", x) }

// Erfc adds chlo.erfc, the complementary error function 1 - erf(x) (floats).
func Erfc(fb *FuncBuilder, x *Value) *Value { return unary(fb, "erfc", x) }

// ErfInv adds chlo.erf_inv, the inverse error function (floats).
func ErfInv(fb *FuncBuilder, x *Value) *Value { return unary(fb, "erf_inv", x) }

// Lgamma adds chlo.lgamma: log|Γ(x)| (floats).
func Lgamma(fb *FuncBuilder, x *Value) *Value { return unary(fb, "lgamma", x) }

// IsInf adds chlo.is_inf: an i1 tensor, true where x is ±Inf (floats).
func IsInf(fb *FuncBuilder, x *Value) *Value { return unary(fb, "is_inf", x) }

// IsNegInf adds chlo.is_neg_inf: true where x is -Inf.
func IsNegInf(fb *FuncBuilder, x *Value) *Value { return unary(fb, "is_neg_inf", x) }

// IsPosInf adds chlo.is_pos_inf: true where x is +Inf.
func IsPosInf(fb *FuncBuilder, x *Value) *Value { return unary(fb, "is_pos_inf", x) }

// NextAfter adds chlo.next_after: the next float after x in the direction
// of y (operands of one float type).
func NextAfter(fb *FuncBuilder, x, y *Value) *Value {
	return one(fb, "chlo.next_after", []*Value{x, y})
}

// Polygamma adds chlo.polygamma: ψ⁽ⁿ⁾(x), the n-th derivative of digamma
// (n a float tensor holding non-negative integers).
func Polygamma(fb *FuncBuilder, n, x *Value) *Value {
	return one(fb, "chlo.polygamma", []*Value{n, x})
}

// Zeta adds chlo.zeta, the Hurwitz zeta function ζ(x, q) = Σ (q+k)^-x.
func Zeta(fb *FuncBuilder, x, q *Value) *Value {
	return one(fb, "chlo.zeta", []*Value{x, q})
}

// Igamma adds chlo.igamma, the regularized lower incomplete gamma function
// P(a, x). (halo's spelling; upstream CHLO has no such op.)
func Igamma(fb *FuncBuilder, a, x *Value) *Value {
	return one(fb, "chlo.igamma", []*Value{a, x})
}

// Igammac adds chlo.igammac, the regularized upper incomplete gamma
// function Q(a, x) = 1 - P(a, x). (halo's spelling; upstream CHLO has no
// such op.)
func Igammac(fb *FuncBuilder, a, x *Value) *Value {
	return one(fb, "chlo.igammac", []*Value{a, x})
}

func broadcast(fb *FuncBuilder, name string, x, y *Value, dims []int64, extra ...stablehlo.NamedAttr) *Value {
	var attrs []stablehlo.NamedAttr
	if len(dims) > 0 {
		attrs = append(attrs, stablehlo.NamedAttr{Name: "broadcast_dimensions", Value: stablehlo.I64Array(dims...)})
	}
	return one(fb, "chlo.broadcast_"+name, []*Value{x, y}, append(attrs, extra...)...)
}

// BroadcastAdd adds chlo.broadcast_add: x + y with numpy broadcasting, or
// with the lower-rank operand's dimensions mapped to broadcastDims.
func BroadcastAdd(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "add", x, y, broadcastDims)
}

// BroadcastSubtract adds chlo.broadcast_subtract (see BroadcastAdd).
func BroadcastSubtract(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "subtract", x, y, broadcastDims)
}

// BroadcastMultiply adds chlo.broadcast_multiply (see BroadcastAdd).
func BroadcastMultiply(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "multiply", x, y, broadcastDims)
}

// BroadcastDivide adds chlo.broadcast_divide (see BroadcastAdd).
func BroadcastDivide(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "divide", x, y, broadcastDims)
}

// BroadcastRemainder adds chlo.broadcast_remainder (see BroadcastAdd).
func BroadcastRemainder(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "remainder", x, y, broadcastDims)
}

// BroadcastPower adds chlo.broadcast_power (see BroadcastAdd).
func BroadcastPower(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "power", x, y, broadcastDims)
}

// BroadcastMaximum adds chlo.broadcast_maximum (see BroadcastAdd).
func BroadcastMaximum(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "maximum", x, y, broadcastDims)
}

// BroadcastMinimum adds chlo.broadcast_minimum (see BroadcastAdd).
func BroadcastMinimum(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "minimum", x, y, broadcastDims)
}

// BroadcastAtan2 adds chlo.broadcast_atan2 (see BroadcastAdd).
func BroadcastAtan2(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "atan2", x, y, broadcastDims)
}

// BroadcastAnd adds chlo.broadcast_and (see BroadcastAdd).
func BroadcastAnd(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "and", x, y, broadcastDims)
}

// BroadcastOr adds chlo.broadcast_or (see BroadcastAdd).
func BroadcastOr(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "or", x, y, broadcastDims)
}

// BroadcastXor adds chlo.broadcast_xor (see BroadcastAdd).
func BroadcastXor(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "xor", x, y, broadcastDims)
}

// BroadcastShiftLeft adds chlo.broadcast_shift_left (see BroadcastAdd).
func BroadcastShiftLeft(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "shift_left", x, y, broadcastDims)
}

// BroadcastShiftRightArithmetic adds chlo.broadcast_shift_right_arithmetic.
func BroadcastShiftRightArithmetic(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "shift_right_arithmetic", x, y, broadcastDims)
}

// BroadcastShiftRightLogical adds chlo.broadcast_shift_right_logical.
func BroadcastShiftRightLogical(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "shift_right_logical", x, y, broadcastDims)
}

// BroadcastNextAfter adds chlo.broadcast_next_after (see BroadcastAdd).
func BroadcastNextAfter(fb *FuncBuilder, x, y *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "next_after", x, y, broadcastDims)
}

// BroadcastPolygamma adds chlo.broadcast_polygamma (see BroadcastAdd).
func BroadcastPolygamma(fb *FuncBuilder, n, x *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "polygamma", n, x, broadcastDims)
}

// BroadcastZeta adds chlo.broadcast_zeta (see BroadcastAdd).
func BroadcastZeta(fb *FuncBuilder, x, q *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "zeta", x, q, broadcastDims)
}

// BroadcastComplex adds chlo.broadcast_complex: complex(re, im) of f32 or
// f64 operands (see BroadcastAdd).
func BroadcastComplex(fb *FuncBuilder, re, im *Value, broadcastDims ...int64) *Value {
	return broadcast(fb, "complex", re, im, broadcastDims)
}

// BroadcastCompare adds chlo.broadcast_compare: an i1 tensor. ct may be
// stablehlo.CompareAuto, which leaves compare_type out.
func BroadcastCompare(fb *FuncBuilder, x, y *Value, dir stablehlo.ComparisonDirection, ct stablehlo.CompareType, broadcastDims ...int64) *Value {
	switch {
	case !slices.Contains([]stablehlo.ComparisonDirection{stablehlo.CompareEQ, stablehlo.CompareNE, stablehlo.CompareGE,
		stablehlo.CompareGT, stablehlo.CompareLE, stablehlo.CompareLT}, dir):
		fb.Fail("chlo.broadcast_compare", fmt.Errorf("invalid comparison direction %q", dir))
	case !slices.Contains([]stablehlo.CompareType{stablehlo.CompareAuto, stablehlo.CompareNoType, stablehlo.CompareFloat,
		stablehlo.CompareTotalOrder, stablehlo.CompareSigned, stablehlo.CompareUnsigned}, ct):
		fb.Fail("chlo.broadcast_compare", fmt.Errorf("invalid compare type %q", ct))
	case x != nil:
		if xt, ok := x.TensorType(); ok && !ct.AppliesTo(xt.DType) {
			fb.Fail("chlo.broadcast_compare", fmt.Errorf("compare type %s does not apply to element type %s", ct, xt.DType))
		}
	}
	extra := []stablehlo.NamedAttr{{Name: "comparison_direction",
		Value: stablehlo.EnumAttr{Dialect: "chlo", Enum: "comparison_direction", Value: string(dir)}}}
	if ct != stablehlo.CompareAuto {
		extra = append(extra, stablehlo.NamedAttr{Name: "compare_type",
			Value: stablehlo.EnumAttr{Dialect: "chlo", Enum: "comparison_type", Value: string(ct)}})
	}
	return broadcast(fb, "compare", x, y, broadcastDims, extra...)
}

// BroadcastSelect adds chlo.broadcast_select: pred ? onTrue : onFalse with
// numpy broadcasting of all three.
func BroadcastSelect(fb *FuncBuilder, pred, onTrue, onFalse *Value) *Value {
	return one(fb, "chlo.broadcast_select", []*Value{pred, onTrue, onFalse})
}

// TopK adds chlo.top_k: the k largest entries along the last dimension,
// largest first (ties: lower index first), and their indices (i32).
func TopK(fb *FuncBuilder, x *Value, k int64) (values, indices *Value) {
	r := fb.EmitInferred("chlo.top_k", []*Value{x}, stablehlo.NamedAttr{Name: "k", Value: stablehlo.IntAttr{Value: k, Type: xla.Int64}})
	return r[0], r[1]
}

// Constant adds chlo.constant with value a.
func Constant(fb *FuncBuilder, a stablehlo.DenseElementsAttr) *Value {
	return one(fb, "chlo.constant", nil, stablehlo.NamedAttr{Name: "value", Value: a})
}

// ConstantLike adds chlo.constant_like: a tensor shaped like x, of x's
// element type, every element v (a bool tensor holds v != 0, a complex
// one v + 0i).
func ConstantLike(fb *FuncBuilder, x *Value, v float64) *Value {
	var a stablehlo.Attribute
	if x != nil {
		if t, ok := x.TensorType(); ok {
			switch {
			case t.DType == xla.Bool:
				a = stablehlo.BoolAttr(v != 0)
			case t.DType.IsFloat():
				a = stablehlo.FloatAttr{Value: v, Type: t.DType}
			case t.DType.IsInt():
				iv, err := intConstant(v, t.DType)
				if err != nil {
					fb.Fail("chlo.constant_like", err)
				}
				a = stablehlo.IntAttr{Value: iv, Type: t.DType}
			case t.DType == xla.Complex64 || t.DType == xla.Complex128:
				// Upstream's constant_like takes a scalar of the element
				// type, which for complex numbers is not a dense attribute:
				// v + 0i is built from two real constant_likes instead.
				re := fb.Real(x)
				return fb.Complex(ConstantLike(fb, re, v), ConstantLike(fb, re, 0))
			}
		}
	}
	if a == nil {
		a = stablehlo.FloatAttr{Value: v, Type: xla.Float32}
		if x != nil {
			if _, ok := x.TensorType(); ok {
				fb.Fail("chlo.constant_like", fmt.Errorf("element type of %s has no constant_like value", x.Type))
			} else if x.Type != nil {
				fb.Fail("chlo.constant_like", fmt.Errorf("operand of type %s is not a tensor", x.Type))
			}
		}
	}
	return ConstantLikeAttr(fb, x, a)
}

// intConstant is v as an integer of type dt (its bits in an int64 for
// ui64), or an error naming v when dt cannot hold it exactly.
func intConstant(v float64, dt xla.DType) (int64, error) {
	bits := dt.Bits()
	lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) // [lo, hi)
	if dt.IsUnsigned() {
		lo, hi = 0, math.Ldexp(1, bits)
	}
	if v != math.Trunc(v) || v < lo || v >= hi {
		return 0, fmt.Errorf("value %v is not a %v integer", v, dt)
	}
	if v >= math.Ldexp(1, 63) {
		return int64(uint64(v)), nil
	}
	return int64(v), nil
}

// ConstantLikeAttr adds chlo.constant_like with an explicit value
// attribute (FloatAttr, IntAttr or BoolAttr), whose type is the result's
// element type.
func ConstantLikeAttr(fb *FuncBuilder, x *Value, value stablehlo.Attribute) *Value {
	return one(fb, "chlo.constant_like", []*Value{x}, stablehlo.NamedAttr{Name: "value", Value: value})
}

// RaggedDotConfig holds chlo.ragged_dot's optional settings.
type RaggedDotConfig struct {
	// Precision is precision_config: none, or two (lhs, rhs).
	Precision []stablehlo.Precision
	// ResultDType is the result element type (JAX's
	// preferred_element_type); Invalid means lhs's.
	ResultDType xla.DType
}

// RaggedDot adds chlo.ragged_dot: a dot_general in which the lhs ragged
// dimension (dims.LhsRaggedDims) is cut into consecutive groups of
// groupSizes entries. Its mode follows from that dimension's role (see
// stablehlo.RaggedDotMode): a free lhs dimension selects, per group, a
// slice of the rhs group dimension (mixture-of-experts layers); a
// contracting dimension gives one result per group ([g, ...]); a batching
// dimension is an ordinary batched dot, zero past the groups. groupSizes
// is an integer tensor of shape [g] or [prefix..., g] (see
// stablehlo.RaggedDotPlan). The result type is inferred; shape errors
// name the rule broken. Group sizes must be non-negative and sum to at
// most the ragged dimension: the interpreter refuses others when it runs
// the op, while its decomposition (Expand), which has no way to fail at
// run time, computes with them as they are.
func RaggedDot(fb *FuncBuilder, lhs, rhs, groupSizes *Value, dims stablehlo.RaggedDotDimensionNumbers, precision ...stablehlo.Precision) *Value {
	return RaggedDotWith(fb, lhs, rhs, groupSizes, dims, RaggedDotConfig{Precision: precision})
}

// RaggedDotWith is RaggedDot with all settings.
func RaggedDotWith(fb *FuncBuilder, lhs, rhs, groupSizes *Value, dims stablehlo.RaggedDotDimensionNumbers, cfg RaggedDotConfig) *Value {
	const name = "chlo.ragged_dot"
	dims = stablehlo.RaggedDotDimensionNumbers{
		LhsBatchingDims: slices.Clone(dims.LhsBatchingDims), RhsBatchingDims: slices.Clone(dims.RhsBatchingDims),
		LhsContractingDims: slices.Clone(dims.LhsContractingDims), RhsContractingDims: slices.Clone(dims.RhsContractingDims),
		LhsRaggedDims: slices.Clone(dims.LhsRaggedDims), RhsGroupDims: slices.Clone(dims.RhsGroupDims),
	}
	attrs := []stablehlo.NamedAttr{{Name: "ragged_dot_dimension_numbers", Value: dims}}
	if len(cfg.Precision) > 0 {
		attrs = append(attrs, stablehlo.NamedAttr{Name: "precision_config", Value: stablehlo.ChloPrecisionConfig(cfg.Precision...)})
	}
	operands := []*Value{lhs, rhs, groupSizes}
	if cfg.ResultDType == xla.Invalid {
		return one(fb, name, operands, attrs...)
	}
	var ts [3]stablehlo.TensorType
	for i, v := range operands {
		t, ok := stablehlo.TensorType{}, false
		if v != nil {
			t, ok = v.TensorType()
		}
		if !ok {
			// Let the inferring path report the bad operand.
			return one(fb, name, operands, attrs...)
		}
		ts[i] = t
	}
	rt, err := stablehlo.InferRaggedDot(ts[0], ts[1], ts[2], dims, cfg.ResultDType)
	if err != nil {
		fb.Fail(name, fmt.Errorf("%s(%s, %s, %s): %w", name, ts[0], ts[1], ts[2], err))
		return fb.Op(name, nil, []stablehlo.Type{stablehlo.Tensor(cfg.ResultDType)})[0]
	}
	return fb.Op(name, operands, []stablehlo.Type{rt}, attrs...)[0]
}
