package pallas

import (
	"fmt"
	"slices"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Einsum is the product of a and b that spec names, as jnp.einsum(spec,
// a, b, preferred_element_type=preferred) of two operands: "mk,kn->mn" is
// a@b, "bhqd,bhkd->bhqk" attention's scores, "qd,kd->qk" a@bᵀ, "i,i->" a
// dot product, "ab,cd->abcd" an outer product. Each operand's letters
// name its dims (one letter a dim, no letter twice in an operand, no
// "..."); a letter in both operands and in the output is a batch dim, in
// both but not the output summed (contracted), in one operand only kept
// (or summed first, in preferred, when the output lacks it). The output's letters must
// come from the operands. It is transposes and reshapes around one Dot
// (batched over the batch dims), so on Triton one tt.dot.
func Einsum(spec string, a, b *Value, preferred xla.DType) *Value {
	k := kernelOf("einsum", "operand 0", a)
	defer k.within("einsum")()
	fail := func(format string, args ...any) *Value {
		k.failf("einsum", "%q: %s", spec, fmt.Sprintf(format, args...))
		return k.placeholder(Type{DType: preferred})
	}
	if !k.check("einsum", a, b) {
		return k.placeholder(Type{DType: preferred})
	}
	ins, out, ok := strings.Cut(strings.ReplaceAll(spec, " ", ""), "->")
	if !ok {
		return fail("no \"->\" before the output's letters (an implicit output is not taken)")
	}
	sa, sb, ok := strings.Cut(ins, ",")
	if !ok || strings.Contains(sb, ",") {
		return fail("two operands take two lists of letters")
	}
	for i, s := range []string{sa, sb, out} {
		what := []string{"operand 0", "operand 1", "the output"}[i]
		for j, c := range s {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return fail("%s: %q is not a letter (one letter a dim; \"...\" is not taken)", what, c)
			}
			if strings.ContainsRune(s[j+1:], c) {
				return fail("%s names %q twice", what, c)
			}
		}
	}
	if len(sa) != a.Type.Rank() || len(sb) != b.Type.Rank() {
		return fail("letters for ranks %d and %d, operands %s and %s", len(sa), len(sb), a.Type, b.Type)
	}
	size := map[rune]int64{}
	for _, x := range []struct {
		s string
		v *Value
	}{{sa, a}, {sb, b}} {
		for i, c := range x.s {
			if n, seen := size[c]; seen && n != x.v.Type.Shape[i] {
				return fail("%q is %d long in one operand and %d in the other", c, n, x.v.Type.Shape[i])
			}
			size[c] = x.v.Type.Shape[i]
		}
	}
	var batch, contract, freeA, freeB []rune
	for _, c := range out {
		switch inA, inB := strings.ContainsRune(sa, c), strings.ContainsRune(sb, c); {
		case inA && inB:
			batch = append(batch, c)
		case inA:
			freeA = append(freeA, c)
		case inB:
			freeB = append(freeB, c)
		default:
			return fail("the output's %q is in neither operand", c)
		}
	}
	// Letters of one operand that the output lacks are summed first, in
	// the preferred type (as JAX does: an i8 sum would wrap, a bf16 one
	// round); the other operand then takes the sum's type for the Dot.
	var summed xla.DType
	sumLone := func(v *Value, s, other string) (*Value, string) {
		var axes []int
		kept := ""
		for i, c := range s {
			if !strings.ContainsRune(other, c) && !strings.ContainsRune(out, c) {
				axes = append(axes, i)
			} else {
				kept += string(c)
			}
		}
		if len(axes) == 0 {
			return v, s
		}
		if preferred.Valid() && v.Type.DType != preferred {
			v = v.Astype(preferred)
		}
		v = v.Sum(axes...)
		summed = v.Type.DType
		return v, kept
	}
	a, sa = sumLone(a, sa, sb)
	b, sb = sumLone(b, sb, sa)
	if summed.Valid() {
		if a.Type.DType != summed {
			a = a.Astype(summed)
		}
		if b.Type.DType != summed {
			b = b.Astype(summed)
		}
	}
	for _, c := range sa {
		if strings.ContainsRune(sb, c) && !strings.ContainsRune(out, c) {
			contract = append(contract, c)
		}
	}
	// a to [batch, freeA, contract], b to [batch, contract, freeB], each
	// group one dim, then one Dot.
	count := func(cs []rune) int64 {
		n := int64(1)
		for _, c := range cs {
			n *= size[c]
		}
		return n
	}
	arrange := func(v *Value, s string, groups ...[]rune) *Value {
		var perm []int64
		for _, g := range groups {
			for _, c := range g {
				perm = append(perm, int64(strings.IndexRune(s, c)))
			}
		}
		if !slices.IsSorted(perm) {
			v = v.Transpose(perm...)
		}
		dims := make([]int64, len(groups)) // a group of no letters: a dim of 1
		for i, g := range groups {
			dims[i] = count(g)
		}
		return v.Reshape(dims...)
	}
	var y *Value
	if len(batch) == 0 {
		y = Dot(arrange(a, sa, freeA, contract), arrange(b, sb, contract, freeB), preferred)
	} else {
		y = Dot(arrange(a, sa, batch, freeA, contract), arrange(b, sb, batch, contract, freeB), preferred)
	}
	// [batch, freeA, freeB] to the output's order.
	var dims []int64
	order := append(append(slices.Clone(batch), freeA...), freeB...)
	for _, c := range order {
		dims = append(dims, size[c])
	}
	y = y.Reshape(dims...)
	perm := make([]int64, len(out))
	for i, c := range out {
		perm[i] = int64(slices.Index(order, c))
	}
	if !slices.IsSorted(perm) {
		y = y.Transpose(perm...)
	}
	return y
}
