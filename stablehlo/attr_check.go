package stablehlo

import "fmt"

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

// checkAttrValue reports a nil attribute, a nil part of one, or an integer that
// its type cannot hold.
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
	case IntAttr:
		if dt := a.Type; dt.IsInt() && dt.Bits() < 64 {
			lo, hi := -int64(1)<<(dt.Bits()-1), int64(1)<<(dt.Bits()-1)-1
			if dt.IsUnsigned() {
				lo, hi = 0, int64(1)<<dt.Bits()-1
			}
			if a.Value < lo || a.Value > hi {
				return fmt.Errorf("%d does not fit %v", a.Value, dt)
			}
		}
	}
	return nil
}
