package stablehlo

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// kitchenSink builds one module that uses every typed constructor of the
// builder (used by the coverage test, the example and the benchmarks of
// printing).
func kitchenSink() (*Module, error) {
	b := NewBuilder("kitchen_sink")
	b.SetNumPartitions(2)
	b.SetNumReplicas(1)
	dec := b.NewFunction("decomposition", f32(4)).Private()
	dec.Return(dec.Negate(dec.Arg(0)))

	f := b.NewFunction("main", f32(4), i32(4), Tensor(xla.Complex64, 4), f32(2, 3), Tensor(xla.Uint64, 2))
	x, n, z, m, state := f.Arg(0), f.Arg(1), f.Arg(2), f.Arg(3), f.Arg(4)
	sum := func(rb *FuncBuilder, a, c *Value) *Value { return rb.Add(a, c) }
	sum1 := func(rb *FuncBuilder, a []*Value) []*Value { return []*Value{rb.Add(a[0], a[1])} }
	var keep []*Value
	k := func(vs ...*Value) { keep = append(keep, vs...) }

	for _, u := range []func(*Value) *Value{f.Abs, f.Cbrt, f.Ceil, f.Cosine, f.Exponential, f.ExponentialMinusOne, f.Floor,
		f.Log, f.LogPlusOne, f.Logistic, f.Negate, f.RoundNearestAfz, f.RoundNearestEven, f.Rsqrt, f.Sign, f.Sine, f.Sqrt, f.Tan, f.Tanh, f.IsFinite, f.Real, f.Imag} {
		k(u(x))
	}
	k(f.CountLeadingZeros(n), f.Not(n), f.Popcnt(n))
	for _, bin := range []func(a, c *Value) *Value{f.Add, f.Subtract, f.Multiply, f.Divide, f.Remainder, f.Power, f.Maximum, f.Minimum, f.Atan2} {
		k(bin(x, x))
	}
	for _, bin := range []func(a, c *Value) *Value{f.And, f.Or, f.Xor, f.ShiftLeft, f.ShiftRightArithmetic, f.ShiftRightLogical} {
		k(bin(n, n))
	}
	k(f.Complex(x, x), f.Real(z))
	p := f.Compare(x, x, CompareLT, CompareAuto)
	k(f.Select(p, x, x), f.Clamp(x, x, x), f.Convert(n, xla.Float32), f.BitcastConvert(x, xla.Int32), f.ReducePrecision(x, 5, 10))
	k(f.Iota(i32(4), 0), Constant(f, []float32{1, 2, 3, 4}), f.BroadcastInDim(x, []int64{3, 4}, []int64{1}), f.Broadcast(x, 2))
	k(f.Reshape(m, 3, 2), f.Transpose(m, 1, 0), f.Slice(x, []int64{1}, []int64{3}, nil))
	i0 := ConstantScalar(f, int32(1))
	k(f.DynamicSlice(x, []*Value{i0}, []int64{2}), f.DynamicUpdateSlice(x, f.Slice(x, []int64{0}, []int64{2}, nil), []*Value{i0}))
	k(f.Concatenate(0, x, x), f.Pad(x, ConstantScalar(f, float32(0)), []int64{1}, []int64{1}, nil), f.Reverse(x, 0), f.GetDimensionSize(x, 0))
	k(f.SetDimensionSize(x, ConstantScalar(f, int32(4)), 0))
	idx := Constant(f, []int32{0, 2}, 2, 1)
	k(f.Gather(m, idx, GatherDimensionNumbers{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}, []int64{1, 3}, false))
	k(f.Scatter([]*Value{x}, Constant(f, []int32{1}, 1, 1), []*Value{Constant(f, []float32{5}, 1)},
		ScatterDimensionNumbers{InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}, false, false, sum1)...)
	k(f.TorchIndexSelect(m, Constant(f, []int32{0}), 1, 0))
	k(f.DotGeneral(m, m, DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{1}}), f.Dot(m, f.Reshape(m, 3, 2)))
	k(f.Einsum(m, m, "ab,cb->ac", f32(2, 2)), f.UnaryEinsum(m, "ab->a", f32(2)))
	img := f.Reshape(f.Concatenate(0, x, x, x, x), 1, 1, 4, 4)
	nchw := ConvDimensionNumbers{InputBatchDim: 0, InputFeatureDim: 1, InputSpatialDims: []int64{2, 3}, KernelOutputFeature: 0,
		KernelInputFeatureDim: 1, KernelSpatialDims: []int64{2, 3}, OutputBatchDim: 0, OutputFeatureDim: 1, OutputSpatialDims: []int64{2, 3}}
	kern := f.Reshape(x, 1, 1, 2, 2)
	k(f.Convolution(img, kern, ConvConfig{Dims: nchw}))
	k(f.DynamicConv(img, kern, Splat(f, int64(0), 2, 2), ConvConfig{Dims: nchw}, f32(1, 1, 3, 3)))
	sq := f.Reshape(x, 2, 2)
	k(f.Cholesky(sq, true), f.TriangularSolve(sq, sq, true, true, false, NoTranspose), f.Fft(z, FftForward, 4))
	scale := f.Slice(x, []int64{0}, []int64{1}, nil)
	img3 := f.Reshape(x, 4, 1)
	k(f.BatchNormInference(img3, scale, scale, scale, scale, 1e-5, 1))
	o, mean, variance := f.BatchNormTraining(img3, scale, scale, 1e-5, 1)
	g, _, _ := f.BatchNormGrad(img3, scale, mean, variance, o, 1e-5, 1)
	k(g)
	init := ConstantScalar(f, float32(0))
	k(f.Reduce([]*Value{x}, []*Value{init}, []int64{0}, sum1)...)
	k(f.ReduceWindow([]*Value{x}, []*Value{init}, Window{Dimensions: []int64{2}}, sum1)...)
	k(f.SelectAndScatter(x, f.Slice(x, []int64{0}, []int64{3}, nil), init, Window{Dimensions: []int64{2}},
		func(rb *FuncBuilder, a, c *Value) *Value { return rb.Compare(a, c, CompareGE, CompareAuto) }, sum))
	k(f.Sort([]*Value{x}, 0, true, func(rb *FuncBuilder, a []*Value) *Value { return rb.Compare(a[0], a[1], CompareLT, CompareAuto) })...)
	k(f.Map([]*Value{x, x}, []int64{0}, func(rb *FuncBuilder, a []*Value) *Value { return rb.Multiply(a[0], a[1]) }))
	k(f.While([]*Value{x}, func(rb *FuncBuilder, a []*Value) *Value { return ConstantScalar(rb, false) },
		func(rb *FuncBuilder, a []*Value) []*Value { return a })...)
	k(f.If(ConstantScalar(f, true), func(rb *FuncBuilder) []*Value { return []*Value{x} },
		func(rb *FuncBuilder) []*Value { return []*Value{rb.Negate(x)} })...)
	k(f.Case(i0, func(rb *FuncBuilder) []*Value { return []*Value{x} })...)
	k(f.OptimizationBarrier(x, n)...)
	k(f.Composite("my.neg", dec, []*Value{x}, nil, 0)...)
	k(f.Call(dec, x)...)
	st, bits := f.RngBitGenerator(RngDefault, state, Tensor(xla.Uint32, 4))
	k(st, bits, f.Rng(init, ConstantScalar(f, float32(1)), RngUniform, 4))
	tup := f.Tuple(x, n)
	k(f.GetTupleElement(tup, 1))
	tok := f.AfterAll(f.CreateToken())
	tok = f.Send([]*Value{x}, tok, ChannelHandle{Handle: 1, Type: 2}, true)
	rv, tok := f.Recv(tok, ChannelHandle{Handle: 2, Type: 3}, true, f32(4))
	iv, tok := f.Infeed(tok, "", f32(4))
	k(rv[0], iv[0], f.Outfeed([]*Value{x}, tok, ""))
	k(f.CustomCall("my_target", []*Value{x}, []Type{f32(4)}, CustomCallConfig{APIVersion: 4, BackendConfig: DictAttr{}})...)
	shape := Constant(f, []int64{2, 4})
	k(f.DynamicBroadcastInDim(x, shape, []int64{1}, f32(2, 4)), f.DynamicIota(shape, 0, f32(2, 4)))
	pads := Constant(f, []int64{1})
	k(f.DynamicPad(x, init, pads, pads, Constant(f, []int64{0}), f32(6)), f.DynamicReshape(x, shape, f32(2, 2)))
	k(f.DynamicGather(m, idx, Constant(f, []int64{1, 3}), GatherDimensionNumbers{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0},
		StartIndexMap: []int64{0}, IndexVectorDim: 1}, false, f32(2, 3)))
	k(f.RealDynamicSlice(x, Constant(f, []int64{0}), Constant(f, []int64{2}), Constant(f, []int64{1}), f32(2)))
	q := f.UniformQuantize(x, OpaqueType{Text: "tensor<4x!quant.uniform<i8:f32, 0.5>>"})
	k(f.UniformDequantize(q, f32(4)))
	groups := Collective{ReplicaGroups: [][]int64{{0, 1}}, Channel: &ChannelHandle{Handle: 3, Type: 1}}
	k(f.AllReduce([]*Value{x}, groups, sum)...)
	k(f.CollectiveReduce([]*Value{x}, groups, sum)...)
	k(f.Square(x))
	k(f.AllGather([]*Value{x}, 0, groups)...)
	k(f.ReduceScatter(x, 0, groups, sum))
	k(f.AllToAll([]*Value{x}, 0, 0, 2, groups)...)
	k(f.CollectivePermute(x, [][2]int64{{0, 1}, {1, 0}}, nil), f.CollectiveBroadcast(x, groups), f.ReplicaID(), f.PartitionID())
	k(f.Op("stablehlo.cross-replica-sum", []*Value{x}, []Type{f32(4)}, NamedAttr{Name: "replica_groups", Value: ReplicaGroupsAttr([][]int64{{0, 1}})})...)
	f.Return(x)
	_ = keep
	return b.Build()
}

// TestEveryOpHasABuilder checks that the builder emits every op of the op
// table and that each op it emits satisfies the table.
func TestEveryOpHasABuilder(t *testing.T) {
	m, err := kitchenSink()
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	seen := map[string]bool{}
	m.Walk(func(op *Op) bool {
		seen[op.Name] = true
		return true
	})
	var missing []string
	for name := range opSpecs {
		if !seen[name] && !strings.HasPrefix(name, "chlo.") { // chlo ops: package chlo builds them
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "ops of the table no builder method emitted")
	for name := range seen {
		assert.NotNil(t, opSpecs[name], "op %s is not in the table", name)
	}
}
