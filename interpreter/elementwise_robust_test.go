package interpreter

import (
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Every kernel of this part, given any operand element types, any result
// type and wrong operand counts, returns a result or an error: it never
// panics.
func TestElementwiseKernelsNeverPanic(t *testing.T) {
	var types []xla.DType
	for _, dt := range xla.AllDTypes() {
		if StorageOf(dt) != StorageInvalid {
			types = append(types, dt)
		}
	}
	enum := func(name, enum, v string) stablehlo.NamedAttr {
		return stablehlo.NamedAttr{Name: name, Value: stablehlo.EnumAttr{Dialect: "stablehlo", Enum: enum, Value: v}}
	}
	i32 := func(name string, v int64) stablehlo.NamedAttr {
		return stablehlo.NamedAttr{Name: name, Value: stablehlo.IntAttr{Value: v, Type: xla.Int32}}
	}
	attrs := map[string][][]stablehlo.NamedAttr{
		"stablehlo.compare": {
			{enum("comparison_direction", "comparison_direction", "LT")},
			{enum("comparison_direction", "comparison_direction", "GE"), enum("compare_type", "comparison_type", "TOTALORDER")},
			{enum("comparison_direction", "comparison_direction", "EQ"), enum("compare_type", "comparison_type", "WEAKORDER")},
		},
		"stablehlo.reduce_precision": {{i32("exponent_bits", 5), i32("mantissa_bits", 2)}, {i32("exponent_bits", 1), i32("mantissa_bits", 0)}},
		"stablehlo.iota":             {{stablehlo.NamedAttr{Name: "iota_dimension", Value: stablehlo.IntAttr{Value: 0, Type: xla.Int64}}}},
	}
	var ops []string
	for name := range ewBinaryOps {
		ops = append(ops, name)
	}
	for name := range ewUnaryOps {
		ops = append(ops, name)
	}
	ops = append(ops, "stablehlo.complex", "stablehlo.compare", "stablehlo.select", "stablehlo.clamp",
		"stablehlo.convert", "stablehlo.bitcast_convert", "stablehlo.reduce_precision", "stablehlo.iota", "stablehlo.constant")
	calls := 0
	run := func(name string, a []stablehlo.NamedAttr, result stablehlo.Type, args ...Value) {
		calls++
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s %v -> %v panics: %v", name, args, result, r)
			}
		}()
		_, _ = ewtKernel(name, a, result, args...)
	}
	for _, name := range ops {
		as := attrs[name]
		if as == nil {
			as = [][]stablehlo.NamedAttr{nil}
		}
		for _, a := range as {
			for _, dt := range types {
				x := NewTensor(xla.MakeShape(dt, 3))
				s := NewTensor(xla.MakeShape(dt))
				p := NewTensor(xla.MakeShape(xla.Bool, 3))
				for _, rdt := range types {
					for _, res := range []stablehlo.Type{stablehlo.Tensor(rdt, 3), stablehlo.Tensor(rdt, 3, 2), stablehlo.Tensor(rdt)} {
						run(name, a, res)
						run(name, a, res, x)
						run(name, a, res, x, x)
						run(name, a, res, x, s)
						run(name, a, res, p, x, x)
						run(name, a, res, s, x, s)
						run(name, a, res, x, x, x)
					}
				}
				run(name, a, stablehlo.TokenType{}, x, x)
				run(name, a, nil, x, x)
				run(name, a, stablehlo.Tensor(dt, 3), x, Token{})
				run(name, a, stablehlo.Tensor(dt, 3), x, Tuple{x})
			}
		}
	}
	t.Logf("%d kernel calls", calls)
}
