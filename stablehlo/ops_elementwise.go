package stablehlo

import (
	"strings"

	"github.com/halo-ml/halo/xla"
)

// dtypeClass is a set of element type kinds an op accepts.
type dtypeClass uint8

const (
	clsBool dtypeClass = 1 << iota
	clsSigned
	clsUnsigned
	clsFloat
	clsComplex

	clsInt       = clsSigned | clsUnsigned
	clsIntOrBool = clsInt | clsBool
	clsFloatCplx = clsFloat | clsComplex
	clsNumeric   = clsInt | clsFloat | clsComplex
	clsSignedNum = clsSigned | clsFloat | clsComplex
	clsAll       = clsNumeric | clsBool
)

var dtypeClasses = func() (t [256]dtypeClass) {
	for _, d := range xla.AllDTypes() {
		switch {
		case d.IsBool():
			t[d] = clsBool
		case d.IsUnsigned():
			t[d] = clsUnsigned
		case d.IsInt():
			t[d] = clsSigned
		case d.IsFloat():
			t[d] = clsFloat
		case d.IsComplex():
			t[d] = clsComplex
		}
	}
	return t
}()

func (c dtypeClass) String() string {
	var parts []string
	for _, p := range []struct {
		c dtypeClass
		s string
	}{{clsBool, "boolean"}, {clsSigned, "signed integer"}, {clsUnsigned, "unsigned integer"}, {clsFloat, "float"}, {clsComplex, "complex"}} {
		if c&p.c != 0 {
			parts = append(parts, p.s)
		}
	}
	return strings.Join(parts, " or ")
}

// node1 and node2 hold an op with one result and one or two operands in a
// single allocation: elementwise ops are most of a program.
type node1 struct {
	op       Op
	res      Value
	results  [1]*Value
	operands [1]*Value
}

type node2 struct {
	op       Op
	res      Value
	results  [1]*Value
	operands [2]*Value
}

// slab hands out nodes from chunks, so that building a large program
// costs one allocation per chunk rather than one per op. Chunks grow from
// 8 to 1024 nodes, so small programs waste little.
type slab[T any] struct {
	free []T
	next int
}

func (s *slab[T]) get() *T {
	if len(s.free) == 0 {
		s.next = min(max(2*s.next, 8), 1024)
		s.free = make([]T, s.next)
	}
	n := &s.free[0]
	s.free = s.free[1:]
	return n
}

func (fb *FuncBuilder) emitUnary(name string, t Type, x *Value) *Value {
	n := fb.s.b.node1s.get()
	n.operands[0] = x
	n.res = Value{Type: t, op: &n.op}
	n.results[0] = &n.res
	n.op.Name = name
	n.op.Operands = n.operands[:]
	n.op.Results = n.results[:]
	fb.emit(&n.op)
	return &n.res
}

func (fb *FuncBuilder) emitBinary(name string, t Type, x, y *Value, attrs ...NamedAttr) *Value {
	n := fb.s.b.node2s.get()
	n.op.Attrs = attrs
	n.operands[0], n.operands[1] = x, y
	n.res = Value{Type: t, op: &n.op}
	n.results[0] = &n.res
	n.op.Name = name
	n.op.Operands = n.operands[:]
	n.op.Results = n.results[:]
	fb.emit(&n.op)
	return &n.res
}

// emitN adds op name with the given operands, result types and attributes.
func (fb *FuncBuilder) emitN(name string, operands []*Value, types []Type, attrs ...NamedAttr) *Op {
	op := NewOp(name, operands, types, attrs...)
	fb.emit(op)
	return op
}

// emit1 is emitN for a single result.
func (fb *FuncBuilder) emit1(name string, operands []*Value, t Type, attrs ...NamedAttr) *Value {
	return fb.emitN(name, operands, []Type{t}, attrs...).Results[0]
}

// unary builds an elementwise op whose result has the operand's type.
func (fb *FuncBuilder) unary(name string, x *Value, cls dtypeClass) *Value {
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.Type.(TensorType)
	if !ok {
		if _, opaque := x.Type.(OpaqueType); opaque { // quantized tensors
			return fb.emitUnary(name, x.Type, x)
		}
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	if dtypeClasses[t.DType]&cls == 0 {
		fb.fail(name, []*Value{x}, "element type %s is not %s", t.DType, cls)
		return deadValue(x.Type)
	}
	return fb.emitUnary(name, x.Type, x)
}

// binary builds an elementwise op on two operands of the same type.
func (fb *FuncBuilder) binary(name string, x, y *Value, cls dtypeClass) *Value {
	if !fb.check2(name, x, y) {
		return deadValue(nil)
	}
	xt, ok1 := x.Type.(TensorType)
	yt, ok2 := y.Type.(TensorType)
	if !ok1 || !ok2 {
		_, o1 := x.Type.(OpaqueType)
		_, o2 := y.Type.(OpaqueType)
		if (o1 || ok1) && (o2 || ok2) && (o1 || o2) { // quantized tensors: no dtype rule
			return fb.emitBinary(name, x.Type, x, y)
		}
		fb.fail(name, []*Value{x, y}, "operands must be tensors")
		return deadValue(nil)
	}
	if xt.DType != yt.DType || !sameDims(xt.Dims, yt.Dims) {
		fb.fail(name, []*Value{x, y}, "operands must have the same type")
		return deadValue(x.Type)
	}
	if dtypeClasses[xt.DType]&cls == 0 {
		fb.fail(name, []*Value{x, y}, "element type %s is not %s", xt.DType, cls)
		return deadValue(x.Type)
	}
	return fb.emitBinary(name, x.Type, x, y)
}

func sameDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && a[i] != DynamicDim && b[i] != DynamicDim {
			return false
		}
	}
	return true
}

// Abs adds stablehlo.abs; for complex operands the result is real.
func (fb *FuncBuilder) Abs(x *Value) *Value {
	const name = "stablehlo.abs"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	if t, ok := x.Type.(TensorType); ok {
		rt, err := inferAbs(t)
		if err != nil {
			fb.fail(name, []*Value{x}, "%v", err)
			return deadValue(x.Type)
		}
		return fb.emitUnary(name, rt, x)
	}
	return fb.unary(name, x, clsSignedNum) // quantized tensors
}

// Cbrt adds stablehlo.cbrt.
func (fb *FuncBuilder) Cbrt(x *Value) *Value { return fb.unary("stablehlo.cbrt", x, clsFloatCplx) }

// Ceil adds stablehlo.ceil.
func (fb *FuncBuilder) Ceil(x *Value) *Value { return fb.unary("stablehlo.ceil", x, clsFloat) }

// Cosine adds stablehlo.cosine.
func (fb *FuncBuilder) Cosine(x *Value) *Value { return fb.unary("stablehlo.cosine", x, clsFloatCplx) }

// CountLeadingZeros adds stablehlo.count_leading_zeros.
func (fb *FuncBuilder) CountLeadingZeros(x *Value) *Value {
	return fb.unary("stablehlo.count_leading_zeros", x, clsInt)
}

// Exponential adds stablehlo.exponential.
func (fb *FuncBuilder) Exponential(x *Value) *Value {
	return fb.unary("stablehlo.exponential", x, clsFloatCplx)
}

// ExponentialMinusOne adds stablehlo.exponential_minus_one.
func (fb *FuncBuilder) ExponentialMinusOne(x *Value) *Value {
	return fb.unary("stablehlo.exponential_minus_one", x, clsFloatCplx)
}

// Floor adds stablehlo.floor.
func (fb *FuncBuilder) Floor(x *Value) *Value { return fb.unary("stablehlo.floor", x, clsFloat) }

// Log adds stablehlo.log.
func (fb *FuncBuilder) Log(x *Value) *Value { return fb.unary("stablehlo.log", x, clsFloatCplx) }

// LogPlusOne adds stablehlo.log_plus_one.
func (fb *FuncBuilder) LogPlusOne(x *Value) *Value {
	return fb.unary("stablehlo.log_plus_one", x, clsFloatCplx)
}

// Logistic adds stablehlo.logistic.
func (fb *FuncBuilder) Logistic(x *Value) *Value {
	return fb.unary("stablehlo.logistic", x, clsFloatCplx)
}

// Negate adds stablehlo.negate.
func (fb *FuncBuilder) Negate(x *Value) *Value { return fb.unary("stablehlo.negate", x, clsNumeric) }

// Not adds stablehlo.not.
func (fb *FuncBuilder) Not(x *Value) *Value { return fb.unary("stablehlo.not", x, clsIntOrBool) }

// Popcnt adds stablehlo.popcnt.
func (fb *FuncBuilder) Popcnt(x *Value) *Value { return fb.unary("stablehlo.popcnt", x, clsInt) }

// RoundNearestAfz adds stablehlo.round_nearest_afz (ties away from zero).
func (fb *FuncBuilder) RoundNearestAfz(x *Value) *Value {
	return fb.unary("stablehlo.round_nearest_afz", x, clsFloat)
}

// RoundNearestEven adds stablehlo.round_nearest_even (ties to even).
func (fb *FuncBuilder) RoundNearestEven(x *Value) *Value {
	return fb.unary("stablehlo.round_nearest_even", x, clsFloat)
}

// Rsqrt adds stablehlo.rsqrt.
func (fb *FuncBuilder) Rsqrt(x *Value) *Value { return fb.unary("stablehlo.rsqrt", x, clsFloatCplx) }

// Sign adds stablehlo.sign.
func (fb *FuncBuilder) Sign(x *Value) *Value { return fb.unary("stablehlo.sign", x, clsSignedNum) }

// Sine adds stablehlo.sine.
func (fb *FuncBuilder) Sine(x *Value) *Value { return fb.unary("stablehlo.sine", x, clsFloatCplx) }

// Sqrt adds stablehlo.sqrt.
func (fb *FuncBuilder) Sqrt(x *Value) *Value { return fb.unary("stablehlo.sqrt", x, clsFloatCplx) }

// Square adds stablehlo.square (x*x; for complex x the real part of a
// number with |re| == |im| is exactly zero, so it does not overflow to NaN).
func (fb *FuncBuilder) Square(x *Value) *Value { return fb.unary("stablehlo.square", x, clsFloatCplx) }

// Tan adds stablehlo.tan.
func (fb *FuncBuilder) Tan(x *Value) *Value { return fb.unary("stablehlo.tan", x, clsFloatCplx) }

// Tanh adds stablehlo.tanh.
func (fb *FuncBuilder) Tanh(x *Value) *Value { return fb.unary("stablehlo.tanh", x, clsFloatCplx) }

// IsFinite adds stablehlo.is_finite: an i1 tensor of x's shape.
func (fb *FuncBuilder) IsFinite(x *Value) *Value {
	const name = "stablehlo.is_finite"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.Type.(TensorType)
	if !ok || !t.DType.IsFloat() {
		fb.fail(name, []*Value{x}, "operand must be a float tensor")
		return deadValue(nil)
	}
	return fb.emitUnary(name, TensorType{DType: xla.Bool, Dims: t.Dims}, x)
}

// Real adds stablehlo.real: the real part of a complex tensor (a float
// tensor is returned unchanged by the op).
func (fb *FuncBuilder) Real(x *Value) *Value { return fb.realImag("stablehlo.real", x) }

// Imag adds stablehlo.imag: the imaginary part of a complex tensor (zero
// for a float tensor).
func (fb *FuncBuilder) Imag(x *Value) *Value { return fb.realImag("stablehlo.imag", x) }

func (fb *FuncBuilder) realImag(name string, x *Value) *Value {
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.Type.(TensorType)
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a float or complex tensor")
		return deadValue(nil)
	}
	rt, err := inferRealImag(t)
	if err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emitUnary(name, rt, x)
}

// Add adds stablehlo.add (logical or on booleans).
func (fb *FuncBuilder) Add(x, y *Value) *Value { return fb.binary("stablehlo.add", x, y, clsAll) }

// Subtract adds stablehlo.subtract.
func (fb *FuncBuilder) Subtract(x, y *Value) *Value {
	return fb.binary("stablehlo.subtract", x, y, clsNumeric)
}

// Multiply adds stablehlo.multiply (logical and on booleans).
func (fb *FuncBuilder) Multiply(x, y *Value) *Value {
	return fb.binary("stablehlo.multiply", x, y, clsAll)
}

// Divide adds stablehlo.divide.
func (fb *FuncBuilder) Divide(x, y *Value) *Value {
	return fb.binary("stablehlo.divide", x, y, clsNumeric)
}

// Remainder adds stablehlo.remainder.
func (fb *FuncBuilder) Remainder(x, y *Value) *Value {
	return fb.binary("stablehlo.remainder", x, y, clsNumeric)
}

// Power adds stablehlo.power.
func (fb *FuncBuilder) Power(x, y *Value) *Value {
	return fb.binary("stablehlo.power", x, y, clsNumeric)
}

// Maximum adds stablehlo.maximum.
func (fb *FuncBuilder) Maximum(x, y *Value) *Value {
	return fb.binary("stablehlo.maximum", x, y, clsAll)
}

// Minimum adds stablehlo.minimum.
func (fb *FuncBuilder) Minimum(x, y *Value) *Value {
	return fb.binary("stablehlo.minimum", x, y, clsAll)
}

// Atan2 adds stablehlo.atan2.
func (fb *FuncBuilder) Atan2(x, y *Value) *Value {
	return fb.binary("stablehlo.atan2", x, y, clsFloatCplx)
}

// And adds stablehlo.and.
func (fb *FuncBuilder) And(x, y *Value) *Value { return fb.binary("stablehlo.and", x, y, clsIntOrBool) }

// Or adds stablehlo.or.
func (fb *FuncBuilder) Or(x, y *Value) *Value { return fb.binary("stablehlo.or", x, y, clsIntOrBool) }

// Xor adds stablehlo.xor.
func (fb *FuncBuilder) Xor(x, y *Value) *Value { return fb.binary("stablehlo.xor", x, y, clsIntOrBool) }

// ShiftLeft adds stablehlo.shift_left.
func (fb *FuncBuilder) ShiftLeft(x, y *Value) *Value {
	return fb.binary("stablehlo.shift_left", x, y, clsInt)
}

// ShiftRightArithmetic adds stablehlo.shift_right_arithmetic.
func (fb *FuncBuilder) ShiftRightArithmetic(x, y *Value) *Value {
	return fb.binary("stablehlo.shift_right_arithmetic", x, y, clsInt)
}

// ShiftRightLogical adds stablehlo.shift_right_logical.
func (fb *FuncBuilder) ShiftRightLogical(x, y *Value) *Value {
	return fb.binary("stablehlo.shift_right_logical", x, y, clsInt)
}

// Complex adds stablehlo.complex: a complex tensor from real and imaginary
// parts (f32 → complex<f32>, f64 → complex<f64>).
func (fb *FuncBuilder) Complex(re, im *Value) *Value {
	const name = "stablehlo.complex"
	if !fb.check2(name, re, im) {
		return deadValue(nil)
	}
	rt, ok1 := re.TensorType()
	it, ok2 := im.TensorType()
	if !ok1 || !ok2 || rt.DType != it.DType || !sameDims(rt.Dims, it.Dims) {
		fb.fail(name, []*Value{re, im}, "operands must be tensors of the same type")
		return deadValue(nil)
	}
	var ct xla.DType
	switch rt.DType {
	case xla.Float32:
		ct = xla.Complex64
	case xla.Float64:
		ct = xla.Complex128
	default:
		fb.fail(name, []*Value{re, im}, "element type must be f32 or f64")
		return deadValue(nil)
	}
	return fb.emitBinary(name, TensorType{DType: ct, Dims: rt.Dims}, re, im)
}

// Compare adds stablehlo.compare; the result is an i1 tensor of the
// operands' shape. CompareAuto picks compare_type from the element type.
func (fb *FuncBuilder) Compare(x, y *Value, dir ComparisonDirection, ct CompareType) *Value {
	const name = "stablehlo.compare"
	if !fb.check2(name, x, y) {
		return deadValue(nil)
	}
	xt, ok1 := x.TensorType()
	yt, ok2 := y.TensorType()
	if !ok1 || !ok2 || xt.DType != yt.DType || !sameDims(xt.Dims, yt.Dims) {
		fb.fail(name, []*Value{x, y}, "operands must be tensors of the same type")
		return deadValue(nil)
	}
	if !validEnum("comparison_direction", string(dir)) {
		fb.fail(name, []*Value{x, y}, "invalid comparison direction %q", dir)
		return deadValue(nil)
	}
	if ct == CompareAuto {
		switch {
		case xt.DType.IsFloat() || xt.DType.IsComplex():
			ct = CompareFloat
		case xt.DType.IsUnsigned() || xt.DType.IsBool():
			ct = CompareUnsigned
		default:
			ct = CompareSigned
		}
	} else if !validEnum("comparison_type", string(ct)) || ct == "WEAKORDER" {
		// WEAKORDER is read (the interpreter evaluates it) but is not in
		// StableHLO's enum: a program built with it would not load in XLA.
		fb.fail(name, []*Value{x, y}, "invalid compare type %q (StableHLO has NOTYPE, FLOAT, TOTALORDER, SIGNED and UNSIGNED)", ct)
		return deadValue(nil)
	} else if !ct.AppliesTo(xt.DType) {
		fb.fail(name, []*Value{x, y}, "compare type %s does not apply to element type %s", ct, xt.DType)
		return deadValue(nil)
	}
	attrs := make([]NamedAttr, 2)
	attrs[0] = NamedAttr{Name: "comparison_direction", Value: enumAttr("comparison_direction", string(dir))}
	attrs[1] = NamedAttr{Name: "compare_type", Value: enumAttr("comparison_type", string(ct))}
	return fb.emitBinary(name, TensorType{DType: xla.Bool, Dims: xt.Dims}, x, y, attrs...)
}

// AppliesTo reports whether compare_type ct applies to element type dt,
// as the StableHLO spec has it: FLOAT to floats and complex numbers,
// TOTALORDER (and XLA's WEAKORDER) to floats, SIGNED to signed integers,
// UNSIGNED to unsigned integers and booleans, NOTYPE (and the builder's
// CompareAuto) to any.
func (ct CompareType) AppliesTo(dt xla.DType) bool {
	switch ct {
	case CompareFloat:
		return dt.IsFloat() || dt.IsComplex()
	case CompareTotalOrder, "WEAKORDER":
		return dt.IsFloat()
	case CompareSigned:
		return dt.IsInt() && !dt.IsUnsigned()
	case CompareUnsigned:
		return dt.IsUnsigned() || dt.IsBool()
	}
	return true
}

// Select adds stablehlo.select: pred (i1, a scalar or of the branches'
// shape) chooses between onTrue and onFalse.
func (fb *FuncBuilder) Select(pred, onTrue, onFalse *Value) *Value {
	const name = "stablehlo.select"
	if !fb.check3(name, pred, onTrue, onFalse) {
		return deadValue(nil)
	}
	ops := []*Value{pred, onTrue, onFalse}
	if err := inferSelect(pred.Type, onTrue.Type, onFalse.Type); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(onTrue.Type)
	}
	return fb.emit1(name, ops, onTrue.Type)
}

// Clamp adds stablehlo.clamp(min, x, max); min and max are scalars or of
// x's shape.
func (fb *FuncBuilder) Clamp(min, x, max *Value) *Value {
	const name = "stablehlo.clamp"
	if !fb.check3(name, min, x, max) {
		return deadValue(nil)
	}
	ops := []*Value{min, x, max}
	if err := inferClamp(min.Type, x.Type, max.Type); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(x.Type)
	}
	return fb.emit1(name, ops, x.Type)
}

// Convert adds stablehlo.convert to element type dtype.
func (fb *FuncBuilder) Convert(x *Value, dtype xla.DType) *Value {
	const name = "stablehlo.convert"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	if !dtype.Valid() {
		fb.fail(name, []*Value{x}, "invalid element type %v", dtype)
		return deadValue(nil)
	}
	return fb.emitUnary(name, TensorType{DType: dtype, Dims: t.Dims}, x)
}

// BitcastConvert adds stablehlo.bitcast_convert to element type dtype.
// A narrower dtype adds a trailing dimension of the width ratio; a wider
// one removes it.
func (fb *FuncBuilder) BitcastConvert(x *Value, dtype xla.DType) *Value {
	const name = "stablehlo.bitcast_convert"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	rt, err := inferBitcastConvert(t, dtype)
	if err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emitUnary(name, rt, x)
}

// ReducePrecision adds stablehlo.reduce_precision.
func (fb *FuncBuilder) ReducePrecision(x *Value, exponentBits, mantissaBits int32) *Value {
	const name = "stablehlo.reduce_precision"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a float tensor")
		return deadValue(nil)
	}
	if err := inferReducePrecision(t, int64(exponentBits), int64(mantissaBits)); err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(x.Type)
	}
	return fb.emit1(name, []*Value{x}, x.Type,
		NamedAttr{Name: "exponent_bits", Value: I32Attr(exponentBits)},
		NamedAttr{Name: "mantissa_bits", Value: I32Attr(mantissaBits)})
}

// Iota adds stablehlo.iota of type t counting along dimension dim. t is
// static: a dynamic dimension is an error (DynamicIota takes the
// dimensions as an operand).
func (fb *FuncBuilder) Iota(t TensorType, dim int64) *Value {
	const name = "stablehlo.iota"
	if !fb.ok(name, nil) {
		return deadValue(t)
	}
	if err := validType(t); err != nil {
		fb.fail(name, nil, "%v", err)
		return deadValue(t)
	}
	if err := checkStatic(t, "iota", "dynamic_iota"); err != nil {
		fb.fail(name, nil, "%v", err)
		return deadValue(t)
	}
	if err := inferIota(t, dim); err != nil {
		fb.fail(name, nil, "%v", err)
		return deadValue(t)
	}
	return fb.emit1(name, nil, Tensor(t.DType, t.Dims...), NamedAttr{Name: "iota_dimension", Value: I64Attr(dim)})
}
