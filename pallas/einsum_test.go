package pallas

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// goEinsum is spec over a and b (row-major, of the letters' sizes) by
// brute force: every assignment of the letters, the products summed into
// the output's element.
func goEinsum(spec string, size map[rune]int64, a, b []float64) []float64 {
	ins, out, _ := strings.Cut(spec, "->")
	sa, sb, _ := strings.Cut(ins, ",")
	var letters []rune
	for _, c := range sa + sb {
		if !strings.ContainsRune(string(letters), c) {
			letters = append(letters, c)
		}
	}
	index := func(s string, at map[rune]int64) int64 {
		i := int64(0)
		for _, c := range s {
			i = i*size[c] + at[c]
		}
		return i
	}
	n := int64(1)
	for _, c := range out {
		n *= size[c]
	}
	res := make([]float64, n)
	at := map[rune]int64{}
	var walk func(int)
	walk = func(l int) {
		if l == len(letters) {
			res[index(out, at)] += a[index(sa, at)] * b[index(sb, at)]
			return
		}
		for i := int64(0); i < size[letters[l]]; i++ {
			at[letters[l]] = i
			walk(l + 1)
		}
	}
	walk(0)
	return res
}

// TestEinsum: products jnp.einsum writes, on every backend against Go's
// brute force: a@b, a@bᵀ, attention's scores per batch and head, a
// transposed output, a dot product to a scalar, an outer product, two
// contracted dims, a batch dim not in front, and a letter of one operand
// summed.
func TestEinsum(t *testing.T) {
	sizes := map[rune]int64{'m': 4, 'k': 8, 'n': 2, 'b': 2, 'h': 2, 'q': 4, 'd': 8, 'i': 8, 'j': 4, 'a': 2, 'c': 4, 'x': 2}
	for _, spec := range []string{
		"mk,kn->mn", "qd,kd->qk", "bhqd,bhkd->bhqk", "mk,kn->nm", "i,i->", "ac,jn->acjn",
		"kdm,dk->m", "mbk,bkn->bmn", "mkx,kn->mn",
	} {
		t.Run(spec, func(t *testing.T) {
			ins, out, _ := strings.Cut(spec, "->")
			sa, sb, _ := strings.Cut(ins, ",")
			dims := func(s string) []int64 {
				d := []int64{}
				for _, c := range s {
					d = append(d, sizes[c])
				}
				return d
			}
			x := fTensor(dims(sa), func(i int) float64 { return math.Sin(float64(i)*0.7) * 2 })
			y := fTensor(dims(sb), func(i int) float64 { return math.Cos(float64(i) * 1.3) })
			want := goEinsum(spec, sizes, floats(x), floats(y))
			c := tritonCase{name: "einsum", kernel: func(k *Kernel, r []*Ref) {
				v := Einsum(spec, r[0].Load(), r[1].Load(), xla.Float32)
				if len(out) == 0 {
					v = v.BroadcastTo(1)
				}
				r[2].Store(v)
			}, spec: CallSpec{Name: "einsum", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, max1(dims(out))...)}},
				args: []*interpreter.Tensor{x, y}}
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				got := floats(outs[0])
				require.Len(t, got, len(want), backend)
				for i, w := range want {
					assert.InDelta(t, w, got[i], 1e-4*math.Max(1, math.Abs(w)), "%s: element %d", backend, i)
				}
			})
		})
	}
}

// max1 is dims, or [1] for a scalar (stored as one element).
func max1(dims []int64) []int64 {
	if len(dims) == 0 {
		return []int64{1}
	}
	return dims
}

// TestEinsumTTIR: attention's scores are one 3-D tt.dot over the folded
// batch and heads, the keys transposed.
func TestEinsumTTIR(t *testing.T) {
	q := fTensor([]int64{2, 2, 16, 16}, func(i int) float64 { return float64(i%5) - 2 })
	c := tritonCase{name: "einsum_tt", kernel: func(k *Kernel, r []*Ref) {
		r[2].Store(Einsum("bhqd,bhkd->bhqk", r[0].Load(), r[1].Load(), xla.Float32))
	}, spec: CallSpec{Name: "einsum_tt", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 2, 16, 16)}},
		args: []*interpreter.Tensor{q, q}}
	k, err := lowerTritonCase(t, c)
	require.NoError(t, err)
	assert.Regexp(t, `"tt.dot"\(%\w+, %\w+, %\w+\) <\{inputPrecision = 2 : i32\}> : \(tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>\)`, k.IR)
	assert.Equal(t, 1, strings.Count(k.IR, `"tt.dot"`))
}

// TestEinsumMisuse: specs einsum does not take are errors naming the spec.
func TestEinsumMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}
	z := func(k *Kernel, dims ...int64) *Value { return k.Zeros(xla.Float32, dims...) }
	runMisuseCases(t, []misuseCase{
		{name: "no arrow", kernel: func(k *Kernel, r []*Ref) { Einsum("mk,kn", z(k, 4, 4), z(k, 4, 4), xla.Float32) }, spec: spec,
			want: []string{"einsum at einsum_test.go:", `"mk,kn": no "->"`}},
		{name: "three operands", kernel: func(k *Kernel, r []*Ref) { Einsum("a,b,c->abc", z(k, 4), z(k, 4), xla.Float32) }, spec: spec,
			want: []string{"two operands take two lists of letters"}},
		{name: "ellipsis", kernel: func(k *Kernel, r []*Ref) { Einsum("...k,kn->...n", z(k, 4, 4), z(k, 4, 4), xla.Float32) }, spec: spec,
			want: []string{`operand 0: '.' is not a letter`}},
		{name: "a repeated letter", kernel: func(k *Kernel, r []*Ref) { Einsum("ii,i->i", z(k, 4, 4), z(k, 4), xla.Float32) }, spec: spec,
			want: []string{`operand 0 names 'i' twice`}},
		{name: "rank", kernel: func(k *Kernel, r []*Ref) { Einsum("mk,kn->mn", z(k, 4), z(k, 4, 4), xla.Float32) }, spec: spec,
			want: []string{"letters for ranks 2 and 2, operands f32[4] and f32[4,4]"}},
		{name: "sizes", kernel: func(k *Kernel, r []*Ref) { Einsum("mk,kn->mn", z(k, 4, 8), z(k, 4, 4), xla.Float32) }, spec: spec,
			want: []string{`'k' is 8 long in one operand and 4 in the other`}},
		{name: "an output letter from nowhere", kernel: func(k *Kernel, r []*Ref) { Einsum("mk,kn->mz", z(k, 4, 4), z(k, 4, 4), xla.Float32) }, spec: spec,
			want: []string{`the output's 'z' is in neither operand`}},
		{name: "an error inside names einsum", kernel: func(k *Kernel, r []*Ref) {
			Einsum("mk,kn->mn", z(k, 4, 4), k.Zeros(xla.Int32, 4, 4), xla.Float32)
		}, spec: spec, want: []string{"dot in einsum at einsum_test.go:", "operand dtypes differ"}},
	})
}

// einsumCase is part of tritonCases: attention's scores per batch and
// head, and a product with a transposed output, as Einsum writes them.
func einsumCase() tritonCase {
	q := fTensor([]int64{2, 2, 16, 16}, func(i int) float64 { return math.Sin(float64(i)) })
	m := fTensor([]int64{16, 32}, func(i int) float64 { return math.Cos(float64(i) * 0.3) })
	return tritonCase{name: "einsum", kernel: func(k *Kernel, r []*Ref) {
		x := r[0].Load()
		r[2].Store(Einsum("bhqd,bhkd->bhqk", x, x, xla.Float32))
		r[3].Store(Einsum("mk,kn->nm", r[1].Load().T(), r[1].Load(), xla.Float32))
	}, spec: CallSpec{Name: "einsum", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 2, 16, 16), xla.MakeShape(xla.Float32, 32, 32)}},
		args: []*interpreter.Tensor{q, m}}
}

// TestEinsumSumsInPreferred: a letter of one operand that the output
// lacks is summed in the preferred type, as JAX does (found in review):
// i8 values summed into i32 do not wrap, bf16 ones into f32 keep their
// low bits; bool operands count in i32.
func TestEinsumSumsInPreferred(t *testing.T) {
	a8 := intTensor(xla.Int8, []int64{16, 16, 4}, func(int) int64 { return 100 })
	b8 := intTensor(xla.Int8, []int64{16, 16}, func(int) int64 { return 1 })
	ab := floatTensor(xla.BFloat16, []int64{16, 16, 2}, func(i int) float64 { return []float64{1, 1.0 / 256}[i%2] })
	bb := floatTensor(xla.BFloat16, []int64{16, 16}, func(int) float64 { return 1 })
	c := tritonCase{name: "einsum_sums", kernel: func(k *Kernel, r []*Ref) {
		r[4].Store(Einsum("mkx,kn->mn", r[0].Load(), r[1].Load(), xla.Int32))
		r[5].Store(Einsum("mkx,kn->mn", r[2].Load(), r[3].Load(), xla.Float32))
		t := k.Iota(xla.Int32, 2, 16, 16, 2).Eq(0)
		r[6].Store(Einsum("mkx,kn->mn", t, r[1].Load().Gt(0), xla.Invalid))
	}, spec: CallSpec{Name: "einsum_sums", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 16, 16), xla.MakeShape(xla.Float32, 16, 16),
		xla.MakeShape(xla.Int32, 16, 16)}}, args: []*interpreter.Tensor{a8, b8, ab, bb}}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		for i, v := range ints(t, outs[0]) {
			require.Equal(t, int64(16*400), v, "%s: i8 element %d", backend, i)
		}
		for i, v := range floats(outs[1]) {
			require.Equal(t, 16*(1+1.0/256), v, "%s: bf16 element %d", backend, i)
		}
		for i, v := range ints(t, outs[2]) {
			require.Equal(t, int64(16), v, "%s: bool element %d", backend, i)
		}
	})
}
