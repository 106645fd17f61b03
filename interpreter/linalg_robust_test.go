package interpreter

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Mutation test: each linear-algebra kernel gets a valid op (which must
// succeed), then the same op with one thing broken: an attribute of the
// wrong kind or with a wrong or extreme value, a wrong result type, an
// operand of another shape or type. Every call returns a result or an
// error; none panics (a panic caught by laRecover shows up as "internal
// error" and fails the test).

type laMutator struct{ rng *rand.Rand }

func (m laMutator) dtype() xla.DType {
	all := []xla.DType{xla.Float32, xla.Float64, xla.BFloat16, xla.Float16, xla.Int8, xla.Int32, xla.Int64,
		xla.Uint8, xla.Uint64, xla.Int4, xla.Bool, xla.Complex64, xla.Complex128, xla.Float8E4M3FN}
	return all[m.rng.IntN(len(all))]
}

func (m laMutator) tensorOf(dt xla.DType, dims []int64) *Tensor {
	return laTensor(dt, dims, laRandInts(m.rng, int(xla.MakeShape(dt, dims...).Size()), 3, dt.IsComplex()))
}

func (m laMutator) dims(maxRank int) []int64 {
	d := make([]int64, m.rng.IntN(maxRank+1))
	for i := range d {
		d[i] = int64(m.rng.IntN(4))
	}
	return d
}

func (m laMutator) value() int64 {
	switch m.rng.IntN(10) {
	case 0:
		return 1 << 40
	case 1:
		return -1 << 40
	case 2:
		return 1<<63 - 1
	}
	return int64(m.rng.IntN(7) - 2)
}

// mutateAttr breaks one attribute of op: removes it, gives it another kind,
// or changes one of its values.
func (m laMutator) mutateAttr(op *stablehlo.Op) {
	if len(op.Attrs) == 0 {
		return
	}
	a := &op.Attrs[m.rng.IntN(len(op.Attrs))]
	switch m.rng.IntN(4) {
	case 0:
		a.Value = nil
		return
	case 1:
		a.Value = []stablehlo.Attribute{stablehlo.StringAttr("x"), stablehlo.IntAttr{Value: m.value()},
			stablehlo.BoolAttr(true), stablehlo.UnitAttr{}}[m.rng.IntN(4)]
		return
	}
	switch v := a.Value.(type) {
	case stablehlo.DenseArrayAttr:
		vals := append([]int64(nil), v.Values...)
		if len(vals) == 0 || m.rng.IntN(4) == 0 {
			vals = append(vals, m.value())
		} else {
			vals[m.rng.IntN(len(vals))] = m.value()
		}
		a.Value = stablehlo.DenseArrayAttr{DType: v.DType, Values: vals}
	case stablehlo.DenseElementsAttr:
		data := append([]byte(nil), v.Data...)
		if len(data) >= 8 {
			i := m.rng.IntN(len(data) / 8)
			binary.LittleEndian.PutUint64(data[8*i:], uint64(m.value()))
		} else {
			data = nil
		}
		a.Value = stablehlo.DenseElementsAttr{Type: v.Type, Data: data, Splat: v.Splat}
	case stablehlo.IntAttr:
		a.Value = stablehlo.IntAttr{Value: m.value(), Type: v.Type}
	case stablehlo.EnumAttr:
		a.Value = stablehlo.EnumAttr{Dialect: v.Dialect, Enum: v.Enum, Value: "BOGUS"}
	case stablehlo.DotDimensionNumbers:
		l := [][]int64{v.LhsBatchingDims, v.RhsBatchingDims, v.LhsContractingDims, v.RhsContractingDims}
		i := m.rng.IntN(4)
		l[i] = append(append([]int64(nil), l[i]...), m.value())
		a.Value = stablehlo.DotDimensionNumbers{LhsBatchingDims: l[0], RhsBatchingDims: l[1], LhsContractingDims: l[2], RhsContractingDims: l[3]}
	case stablehlo.ConvDimensionNumbers:
		switch m.rng.IntN(4) {
		case 0:
			v.InputBatchDim = m.value()
		case 1:
			v.KernelOutputFeature = v.KernelInputFeatureDim
		case 2:
			v.OutputSpatialDims = append(append([]int64(nil), v.OutputSpatialDims...), m.value())
		default:
			v.InputSpatialDims = nil
		}
		a.Value = v
	case stablehlo.StringAttr:
		a.Value = stablehlo.StringAttr(string(v) + []string{",", "->", "...", "a", "zz"}[m.rng.IntN(5)])
	case stablehlo.BoolAttr:
		a.Value = !v
	}
}

// mutate breaks op or args in one random way.
func (m laMutator) mutate(op *stablehlo.Op, args []Value) {
	switch m.rng.IntN(3) {
	case 0:
		m.mutateAttr(op)
	case 1:
		i := m.rng.IntN(len(op.Results))
		var d []int64
		if tt, ok := op.Results[i].Type.(stablehlo.TensorType); ok {
			d = append(d, tt.Dims...)
		}
		switch m.rng.IntN(5) {
		case 0:
			op.Results[i].Type = stablehlo.TokenType{}
		case 1:
			op.Results[i].Type = stablehlo.Tensor(m.dtype(), d...)
		case 2:
			op.Results[i].Type = stablehlo.Tensor(m.dtype(), append(d, 1<<40)...)
		case 3:
			op.Results[i].Type = stablehlo.Tensor(m.dtype(), append(d, -1)...)
		default:
			if len(d) > 0 {
				d[m.rng.IntN(len(d))]++
			}
			op.Results[i].Type = stablehlo.Tensor(m.dtype(), d...)
		}
	default:
		i := m.rng.IntN(len(args))
		switch m.rng.IntN(3) {
		case 0:
			args[i] = Token{}
		default:
			args[i] = m.tensorOf(m.dtype(), m.dims(4))
		}
	}
}

type laCase struct {
	k    Kernel
	op   *stablehlo.Op
	args []Value
}

func (m laMutator) dotCase() laCase {
	nb, nc, lf, rf := m.rng.IntN(3), m.rng.IntN(3), m.rng.IntN(2), m.rng.IntN(2)
	bs, cs := m.dims(0), m.dims(0)
	for i := 0; i < nb; i++ {
		bs = append(bs, int64(1+m.rng.IntN(3)))
	}
	for i := 0; i < nc; i++ {
		cs = append(cs, int64(m.rng.IntN(4)))
	}
	place := func(free int) ([]int64, []int64, []int64) {
		p := m.rng.Perm(nb + nc + free)
		d := make([]int64, len(p))
		var bd, cd []int64
		for i := range p {
			switch {
			case i < nb:
				d[p[i]], bd = bs[i], append(bd, int64(p[i]))
			case i < nb+nc:
				d[p[i]], cd = cs[i-nb], append(cd, int64(p[i]))
			default:
				d[p[i]] = int64(1 + m.rng.IntN(3))
			}
		}
		return d, bd, cd
	}
	ld, lb, lc := place(lf)
	rd, rb, rc := place(rf)
	dn := stablehlo.DotDimensionNumbers{LhsBatchingDims: lb, RhsBatchingDims: rb, LhsContractingDims: lc, RhsContractingDims: rc}
	dt := m.dtype()
	p, _ := planDot(xla.MakeShape(dt, ld...), xla.MakeShape(dt, rd...), dn)
	op := stablehlo.NewOp("stablehlo.dot_general", nil, []stablehlo.Type{stablehlo.Tensor(dt, p.resultDims...)},
		stablehlo.NamedAttr{Name: "dot_dimension_numbers", Value: dn})
	return laCase{dotGeneralKernel, op, []Value{m.tensorOf(dt, ld), m.tensorOf(dt, rd)}}
}

func (m laMutator) convCase() laCase {
	s := m.rng.IntN(3)
	layout := func(a, b byte) string {
		l := []byte{a, b}
		for d := 0; d < s; d++ {
			l = append(l, byte('0'+d))
		}
		m.rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
		return string(l)
	}
	c := convCase{in: layout('b', 'f'), kernel: layout('i', 'o'), out: layout('b', 'f'), lhsDims: make([]int64, s+2), inType: m.dtype()}
	groups := int64(1)
	switch m.rng.IntN(3) {
	case 1:
		c.fgc, groups = 2, 2
	case 2:
		c.bgc, groups = 2, 2
	}
	c.defaults()
	ci, og, nb := int64(m.rng.IntN(3)), int64(1+m.rng.IntN(2)), int64(m.rng.IntN(3))
	in, k := make([]int64, s), make([]int64, s)
	for d := 0; d < s; d++ {
		in[d], k[d] = int64(m.rng.IntN(5)), int64(1+m.rng.IntN(2))
		c.strides[d], c.lhsDil[d], c.rhsDil[d] = int64(1+m.rng.IntN(2)), int64(1+m.rng.IntN(2)), int64(1+m.rng.IntN(2))
		c.pad[d] = [2]int64{int64(m.rng.IntN(3) - 1), int64(m.rng.IntN(3) - 1)}
	}
	place := func(layout string, sizes map[byte]int64, spatial []int64) []int64 {
		out := make([]int64, len(layout))
		for i := range layout {
			if d := layout[i]; d >= '0' && d <= '9' {
				out[i] = spatial[d-'0']
			} else {
				out[i] = sizes[d]
			}
		}
		return out
	}
	c.lhsDims = place(c.in, map[byte]int64{'b': nb * c.bgc, 'f': ci * c.fgc}, in)
	c.rhsDims = place(c.kernel, map[byte]int64{'i': ci, 'o': og * groups}, k)
	_, outDims := refConv(c, make([]complex128, xla.MakeShape(c.inType, c.lhsDims...).Size()), make([]complex128, xla.MakeShape(c.inType, c.rhsDims...).Size()))
	var pads []int64
	for _, p := range c.pad {
		pads = append(pads, p[0], p[1])
	}
	padAttr := stablehlo.DenseElementsAttr{Type: stablehlo.Tensor(xla.Int64, int64(s), 2), Data: make([]byte, 8*len(pads))}
	for i, v := range pads {
		binary.LittleEndian.PutUint64(padAttr.Data[8*i:], uint64(v))
	}
	rev := stablehlo.DenseArrayAttr{DType: xla.Bool, Values: make([]int64, s)}
	op := stablehlo.NewOp("stablehlo.convolution", nil, []stablehlo.Type{stablehlo.Tensor(c.inType, outDims...)},
		stablehlo.NamedAttr{Name: "dimension_numbers", Value: convDims(c.in, c.kernel, c.out)},
		stablehlo.NamedAttr{Name: "window_strides", Value: stablehlo.DenseArrayAttr{DType: xla.Int64, Values: c.strides}},
		stablehlo.NamedAttr{Name: "lhs_dilation", Value: stablehlo.DenseArrayAttr{DType: xla.Int64, Values: c.lhsDil}},
		stablehlo.NamedAttr{Name: "rhs_dilation", Value: stablehlo.DenseArrayAttr{DType: xla.Int64, Values: c.rhsDil}},
		stablehlo.NamedAttr{Name: "window_reversal", Value: rev},
		stablehlo.NamedAttr{Name: "padding", Value: padAttr},
		stablehlo.NamedAttr{Name: "feature_group_count", Value: stablehlo.IntAttr{Value: c.fgc, Type: xla.Int64}},
		stablehlo.NamedAttr{Name: "batch_group_count", Value: stablehlo.IntAttr{Value: c.bgc, Type: xla.Int64}})
	return laCase{convolutionKernel, op, []Value{m.tensorOf(c.inType, c.lhsDims), m.tensorOf(c.inType, c.rhsDims)}}
}

func (m laMutator) fftCase() laCase {
	l := 1 + m.rng.IntN(3)
	dims := m.dims(2)
	for i := 0; i < l; i++ {
		dims = append(dims, int64(1+m.rng.IntN(5)))
	}
	lengths := append([]int64(nil), dims[len(dims)-l:]...)
	typ := []string{"FFT", "IFFT", "RFFT", "IRFFT"}[m.rng.IntN(4)]
	cdt := []xla.DType{xla.Complex64, xla.Complex128}[m.rng.IntN(2)]
	rdt := cdt.ComplexElem()
	half := append([]int64(nil), dims...)
	half[len(half)-1] = dims[len(dims)-1]/2 + 1
	inDT, inDims, outDT, outDims := cdt, dims, cdt, dims
	switch typ {
	case "RFFT":
		inDT, outDT, outDims = rdt, cdt, half
	case "IRFFT":
		inDT, inDims, outDT = cdt, half, rdt
	}
	op := stablehlo.NewOp("stablehlo.fft", nil, []stablehlo.Type{stablehlo.Tensor(outDT, outDims...)},
		stablehlo.NamedAttr{Name: "fft_type", Value: stablehlo.EnumAttr{Dialect: "stablehlo", Enum: "fft_type", Value: typ}},
		stablehlo.NamedAttr{Name: "fft_length", Value: stablehlo.DenseArrayAttr{DType: xla.Int64, Values: lengths}})
	return laCase{fftKernel, op, []Value{m.tensorOf(inDT, inDims)}}
}

func (m laMutator) linalgCase() laCase {
	dt := []xla.DType{xla.Float32, xla.Float64, xla.Complex64, xla.BFloat16}[m.rng.IntN(4)]
	batch := m.dims(2)
	n := int64(m.rng.IntN(4))
	a := append(append([]int64(nil), batch...), n, n)
	if m.rng.IntN(2) == 0 {
		op := stablehlo.NewOp("stablehlo.cholesky", nil, []stablehlo.Type{stablehlo.Tensor(dt, a...)},
			stablehlo.NamedAttr{Name: "lower", Value: stablehlo.BoolAttr(m.rng.IntN(2) == 0)})
		return laCase{choleskyKernel, op, []Value{m.tensorOf(dt, a)}}
	}
	left := m.rng.IntN(2) == 0
	other := int64(m.rng.IntN(4))
	b := append(append([]int64(nil), batch...), n, other)
	if !left {
		b = append(append([]int64(nil), batch...), other, n)
	}
	op := stablehlo.NewOp("stablehlo.triangular_solve", nil, []stablehlo.Type{stablehlo.Tensor(dt, b...)},
		stablehlo.NamedAttr{Name: "left_side", Value: stablehlo.BoolAttr(left)},
		stablehlo.NamedAttr{Name: "lower", Value: stablehlo.BoolAttr(m.rng.IntN(2) == 0)},
		stablehlo.NamedAttr{Name: "unit_diagonal", Value: stablehlo.BoolAttr(m.rng.IntN(2) == 0)},
		stablehlo.NamedAttr{Name: "transpose_a", Value: stablehlo.EnumAttr{Dialect: "stablehlo", Enum: "transpose",
			Value: []string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}[m.rng.IntN(3)]}})
	return laCase{triangularSolveKernel, op, []Value{m.tensorOf(dt, a), m.tensorOf(dt, b)}}
}

func (m laMutator) rngCase() laCase {
	if m.rng.IntN(3) == 0 {
		dt := []xla.DType{xla.Float32, xla.Int32, xla.Uint8, xla.Float64, xla.BFloat16}[m.rng.IntN(5)]
		dims := m.dims(3)
		dist := "UNIFORM"
		if dt.IsFloat() && m.rng.IntN(2) == 0 {
			dist = "NORMAL"
		}
		op := stablehlo.NewOp("stablehlo.rng", nil, []stablehlo.Type{stablehlo.Tensor(dt, dims...)},
			stablehlo.NamedAttr{Name: "rng_distribution", Value: stablehlo.EnumAttr{Dialect: "stablehlo", Enum: "rng_distribution", Value: dist}})
		shape := make([]complex128, len(dims))
		for i, d := range dims {
			shape[i] = complex(float64(d), 0)
		}
		return laCase{rngKernel, op, []Value{laTensor(dt, nil, []complex128{0}), laTensor(dt, nil, []complex128{3}),
			laTensor(xla.Int64, []int64{int64(len(dims))}, shape)}}
	}
	alg := []string{"DEFAULT", "THREE_FRY", "PHILOX"}[m.rng.IntN(3)]
	n := int64(2)
	if alg != "THREE_FRY" && m.rng.IntN(2) == 0 {
		n = 3
	}
	out := stablehlo.Tensor([]xla.DType{xla.Uint32, xla.Float64, xla.Int8, xla.BFloat16, xla.Uint4}[m.rng.IntN(5)], m.dims(3)...)
	op := stablehlo.NewOp("stablehlo.rng_bit_generator", nil, []stablehlo.Type{stablehlo.Tensor(xla.Uint64, n), out},
		stablehlo.NamedAttr{Name: "rng_algorithm", Value: stablehlo.EnumAttr{Dialect: "stablehlo", Enum: "rng_algorithm", Value: alg}})
	return laCase{rngBitGeneratorKernel, op, []Value{m.tensorOf(xla.Uint64, []int64{n})}}
}

func (m laMutator) einsumCase() laCase {
	cfgs := []struct {
		cfg    string
		a, b   []int64
		result []int64
	}{
		{"ij,jk->ik", []int64{2, 3}, []int64{3, 4}, []int64{2, 4}},
		{"...ij,...jk->...ik", []int64{2, 2, 3}, []int64{2, 3, 1}, []int64{2, 2, 1}},
		{"ab,ba->", []int64{2, 3}, []int64{3, 2}, nil},
	}
	c := cfgs[m.rng.IntN(len(cfgs))]
	dt := m.dtype()
	op := stablehlo.NewOp("stablehlo.einsum", nil, []stablehlo.Type{stablehlo.Tensor(dt, c.result...)},
		stablehlo.NamedAttr{Name: "einsum_config", Value: stablehlo.StringAttr(c.cfg)})
	return laCase{einsumKernel, op, []Value{m.tensorOf(dt, c.a), m.tensorOf(dt, c.b)}}
}

func TestLinalgKernelsNeverPanic(t *testing.T) {
	m := laMutator{rand.New(rand.NewPCG(99, 100))}
	gens := map[string]func() laCase{
		"dot_general": m.dotCase, "convolution": m.convCase, "fft": m.fftCase,
		"linalg": m.linalgCase, "rng": m.rngCase, "einsum": m.einsumCase,
	}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			var ok, failed int
			for i := 0; i < 1500; i++ {
				c := gen()
				_, err := c.k(nil, c.op, c.args)
				require.NoError(t, err, "valid %s %v", c.op.Name, c.op.Attrs)
				for j := 0; j < 3; j++ {
					c.op.Attrs = append([]stablehlo.NamedAttr(nil), c.op.Attrs...)
					m.mutate(c.op, c.args)
					_, err := c.k(nil, c.op, c.args)
					if err == nil {
						ok++
						continue
					}
					failed++
					require.NotContains(t, err.Error(), "internal error", "%s %v %s", c.op.Name, c.op.Attrs, fmt.Sprint(c.op.Results[0].Type))
				}
			}
			// Both outcomes happen: the mutations are not all fatal.
			assert.Positive(t, ok)
			assert.Positive(t, failed)
		})
	}
}
