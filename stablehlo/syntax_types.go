package stablehlo

import (
	"strings"

	"github.com/halo-ml/halo/xla"
)

// FunctionType is an MLIR function type, "(tensor<f32>, i32) -> tensor<f32>".
// The parser uses it for function_type attributes of ops it keeps
// generically (a func.func nested in another op, tt.func ...) and for the
// signature of a declaration (a func.func without a body, whose argument
// types the IR cannot otherwise hold: Func.Attrs then carries
// "function_type" = TypeAttr{FunctionType}).
type FunctionType struct {
	Inputs  []Type
	Results []Type
}

// String prints the type as MLIR does: "(a, b) -> c" or "(a) -> (b, c)".
func (t FunctionType) String() string {
	return string(mlirAppendType(nil, t))
}

func (FunctionType) isType() {}

// mlirAppendType appends the MLIR spelling of t.
func mlirAppendType(b []byte, t Type) []byte {
	switch t := t.(type) {
	case nil:
		return append(b, "<<NULL TYPE>>"...)
	case TensorType:
		b = append(b, "tensor<"...)
		for _, d := range t.Dims {
			if d < 0 {
				b = append(b, '?')
			} else {
				b = mlirAppendInt(b, d)
			}
			b = append(b, 'x')
		}
		b = append(b, mlirDTypeName(t.DType)...)
		return append(b, '>')
	case TokenType:
		return append(b, "!stablehlo.token"...)
	case TupleType:
		b = append(b, "tuple<"...)
		for i, e := range t.Elems {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = mlirAppendType(b, e)
		}
		return append(b, '>')
	case FunctionType:
		b = append(b, '(')
		for i, e := range t.Inputs {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = mlirAppendType(b, e)
		}
		b = append(b, ") -> "...)
		return mlirAppendResultTypes(b, t.Results)
	case OpaqueType:
		return append(b, t.Text...)
	}
	return append(b, t.String()...)
}

// mlirAppendResultTypes appends a result type list as a function type's
// right-hand side: "t" alone, else "(t1, t2)".
func mlirAppendResultTypes(b []byte, ts []Type) []byte {
	if len(ts) == 1 {
		if _, isFn := ts[0].(FunctionType); !isFn {
			return mlirAppendType(b, ts[0])
		}
	}
	b = append(b, '(')
	for i, e := range ts {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = mlirAppendType(b, e)
	}
	return append(b, ')')
}

// mlirAppendTypeList appends "t1, t2".
func mlirAppendTypeList(b []byte, ts []Type) []byte {
	for i, e := range ts {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = mlirAppendType(b, e)
	}
	return b
}

func mlirDTypeName(d xla.DType) string {
	if d == xla.Int1 {
		return "i1"
	}
	return d.String()
}

// mlirTypeListEqual reports whether two type lists are equal.
func mlirTypeListEqual(a, b []Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !mlirTypeEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// mlirTypeEqual is TypesEqual that also understands FunctionType.
func mlirTypeEqual(a, b Type) bool {
	if fa, ok := a.(FunctionType); ok {
		fb, ok := b.(FunctionType)
		return ok && mlirTypeListEqual(fa.Inputs, fb.Inputs) && mlirTypeListEqual(fa.Results, fb.Results)
	}
	if ta, ok := a.(TensorType); ok {
		tb, ok := b.(TensorType)
		if !ok || ta.DType != tb.DType || len(ta.Dims) != len(tb.Dims) {
			return false
		}
		for i := range ta.Dims {
			if ta.Dims[i] != tb.Dims[i] {
				return false
			}
		}
		return true
	}
	if ot, ok := a.(OpaqueType); ok {
		if bt, ok := b.(OpaqueType); ok {
			return strings.TrimSpace(ot.Text) == strings.TrimSpace(bt.Text)
		}
	}
	return TypesEqual(a, b)
}

// mlirScalarOf is the rank-0 tensor of t's element type: for a tensor
// type this package keeps as text (a bounded or quantized one,
// "tensor<?x4xf32, #stablehlo.bounds<8, ?>>", "tensor<4x!quant.uniform<…>>"),
// the element type read from that text (tensor<f32>,
// tensor<!quant.uniform<…>>).
func mlirScalarOf(t Type) (Type, bool) {
	switch t := t.(type) {
	case TensorType:
		return TensorType{DType: t.DType}, true
	case OpaqueType:
		rest, ok := strings.CutPrefix(t.Text, "tensor<")
		if !ok || strings.HasPrefix(rest, "*") { // unranked: not a reduce input
			return nil, false
		}
		// Skip the dimensions ("4x", "?x").
		for {
			i := 0
			for i < len(rest) && (rest[i] == '?' || rest[i] >= '0' && rest[i] <= '9') {
				i++
			}
			if i == 0 || i >= len(rest) || rest[i] != 'x' {
				break
			}
			rest = rest[i+1:]
		}
		// The element type ends at the top-level ',' (an encoding) or
		// the closing '>'.
		depth := 0
		for i, c := range rest {
			switch c {
			case '<', '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			case '>':
				if depth == 0 {
					return mlirTextType(rest[:i]), true
				}
				depth--
			case ',':
				if depth == 0 {
					return mlirTextType(rest[:i]), true
				}
			}
		}
	}
	return nil, false
}

// mlirTextType is the rank-0 tensor of the element type written elem.
func mlirTextType(elem string) Type {
	elem = strings.TrimSpace(elem)
	if dt, err := xla.ParseDType(elem); err == nil {
		return TensorType{DType: dt}
	}
	return OpaqueType{Text: "tensor<" + elem + ">"}
}

// mlirElemDType reports the element type of a ranked tensor type.
func mlirElemDType(t Type) (xla.DType, bool) {
	tt, ok := t.(TensorType)
	if !ok {
		return xla.Invalid, false
	}
	return tt.DType, true
}
