package stablehlo

import (
	"fmt"
	"math"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// checkAttrs reports named attributes the printer could not write as
// MLIR: an empty or repeated name, a nil value, or a nil part inside one.
func checkAttrs(attrs []NamedAttr) error {
	seen := make(map[string]bool, len(attrs))
	for _, a := range attrs {
		if a.Name == "" {
			return fmt.Errorf("an attribute has no name")
		}
		if seen[a.Name] {
			return fmt.Errorf("attribute %s is given twice", a.Name)
		}
		seen[a.Name] = true
		if err := checkAttrValue(a.Value); err != nil {
			return fmt.Errorf("attribute %s: %w", a.Name, err)
		}
	}
	return nil
}

// checkAttrValue reports a nil attribute, a nil part of one, an integer that
// its type cannot hold, or an opaque attribute whose text does not parse.
func checkAttrValue(a Attribute) error {
	switch a := a.(type) {
	case nil:
		return fmt.Errorf("nil value")
	case ArrayAttr:
		for i, e := range a {
			if err := checkAttrValue(e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case DictAttr:
		return checkAttrs(a)
	case TypeAttr:
		if a.Type == nil {
			return fmt.Errorf("nil type")
		}
	case OpaqueAttr:
		return validOpaqueAttr(a)
	case IntAttr:
		return checkIntValue(a.Value, a.Type)
	case FloatAttr:
		return checkFloatValue(a.Value, a.Type)
	case DenseArrayAttr:
		if a.DType == xla.Invalid {
			return fmt.Errorf("array attribute without an element type")
		}
		for i, v := range a.Values {
			if err := checkIntValue(v, a.DType); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case DenseFloatArrayAttr:
		if a.DType == xla.Invalid {
			return fmt.Errorf("array attribute without an element type")
		}
		for i, v := range a.Values {
			if err := checkFloatValue(v, a.DType); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	}
	return nil
}

// checkIntValue reports an integer attribute value its type cannot hold
// as MLIR reads it: out of the integer type's range, not 0 or 1 for i1,
// or given a float type (the printer would write "5 : f32", which MLIR
// refuses). The zero type is i64.
func checkIntValue(v int64, dt xla.DType) error {
	switch {
	case dt == xla.Invalid:
		return nil
	case dt == xla.Bool:
		if v != 0 && v != 1 {
			return fmt.Errorf("%d is not an i1 (0 or 1)", v)
		}
	case dt.IsInt() && dt.Bits() < 64:
		lo, hi := -int64(1)<<(dt.Bits()-1), int64(1)<<(dt.Bits()-1)-1
		if dt.IsUnsigned() {
			lo, hi = 0, int64(1)<<dt.Bits()-1
		}
		if v < lo || v > hi {
			return fmt.Errorf("%d does not fit %v", v, dt)
		}
	case !dt.IsInt():
		return fmt.Errorf("integer %d given type %v, not an integer type", v, dt)
	}
	return nil
}

// checkFloatValue reports a float attribute value given a type that is
// not a float type, or a NaN or infinity its narrow format has no code
// for (f4E2M1FN has neither: MLIR refuses the literal).
func checkFloatValue(v float64, dt xla.DType) error {
	switch {
	case dt == xla.Invalid:
		return nil
	case !dt.IsFloat():
		return fmt.Errorf("float %v given type %v, not a float type", v, dt)
	}
	if nf := xla.NarrowFloatOf(dt); nf != nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		if math.IsInf(v, 0) && !nf.HasInf() || math.IsNaN(v) && !nf.IsNaN(nf.Encode64(v)) {
			return fmt.Errorf("%v has no code in %v", v, dt)
		}
	}
	return nil
}

// validOpaqueAttr checks that an OpaqueAttr's text, which the printer
// writes as it is, is one attribute value the parser reads back: not
// empty, malformed (unbalanced brackets or quotes, a newline in a
// string), several values, an undefined alias, or ending in a comment
// that would hide what the printer writes after it. The text is parsed
// between brackets, as an element of an array attribute.
func validOpaqueAttr(a OpaqueAttr) (err error) {
	if strings.TrimSpace(string(a)) == "" {
		return fmt.Errorf("opaque attribute with empty text")
	}
	if strings.IndexByte(string(a), 0) >= 0 {
		return fmt.Errorf("opaque attribute %q holds a NUL byte", string(a))
	}
	p := newMLIRParser([]byte("["+string(a)+"]"), 0)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(mlirParseFailure)
			if !ok {
				panic(r)
			}
			if strings.HasPrefix(f.err.Msg, "expected ']'") { // the bracket added around it
				err = fmt.Errorf("opaque attribute %q is not one complete attribute value (text follows it, a bracket is unbalanced, or a comment hides its end)", string(a))
				return
			}
			err = fmt.Errorf("opaque attribute %q does not parse: %s", string(a), f.err.Msg)
		}
	}()
	got, _ := p.parseAttr()
	// The added ']' must end the array (p.atEnd would skip a comment).
	if arr, ok := got.(ArrayAttr); !ok || len(arr) != 1 || p.pos != len(p.src) {
		return fmt.Errorf("opaque attribute %q is not one attribute value", string(a))
	}
	return nil
}
