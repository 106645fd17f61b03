package stablehlo

import (
	"slices"

	"github.com/halo-ml/halo/xla"
)

// DotConfig holds dot_general's optional settings.
type DotConfig struct {
	// Precision is precision_config: none, or one per operand.
	Precision []Precision
	// ResultDType is the result element type; Invalid means the operands'.
	ResultDType xla.DType
	// Algorithm, when set, is the #stablehlo.dot_algorithm<...> attribute
	// (an OpaqueAttr with its text).
	Algorithm Attribute
}

// DotGeneral adds stablehlo.dot_general. The result dimensions are the
// batching dimensions, then lhs's free dimensions, then rhs's.
func (fb *FuncBuilder) DotGeneral(lhs, rhs *Value, dn DotDimensionNumbers, precision ...Precision) *Value {
	return fb.DotGeneralWith(lhs, rhs, dn, DotConfig{Precision: precision})
}

// DotGeneralWith is DotGeneral with all settings.
func (fb *FuncBuilder) DotGeneralWith(lhs, rhs *Value, dn DotDimensionNumbers, cfg DotConfig) *Value {
	const name = "stablehlo.dot_general"
	if !fb.check2(name, lhs, rhs) {
		return deadValue(nil)
	}
	lt, ok1 := lhs.Type.(TensorType)
	rt, ok2 := rhs.Type.(TensorType)
	if !ok1 || !ok2 {
		fb.fail(name, []*Value{lhs, rhs}, "operands must be tensors")
		return deadValue(nil)
	}
	res, err := inferDotGeneral(lt, rt, dn, cfg.ResultDType)
	if err != nil {
		fb.fail(name, []*Value{lhs, rhs}, "%v", err)
		return deadValue(nil)
	}
	if !fb.checkPrecision(name, []*Value{lhs, rhs}, cfg.Precision) {
		return deadValue(nil)
	}
	if cfg.Algorithm != nil {
		if err := checkAttrValue(cfg.Algorithm); err != nil {
			fb.fail(name, []*Value{lhs, rhs}, "attribute algorithm: %v", err)
			return deadValue(nil)
		}
	}
	n := fb.s.b.dotNodes.get()
	attrs := n.attrs[:1]
	attrs[0] = NamedAttr{Name: "dot_dimension_numbers", Value: fb.s.b.dotDims(dn)}
	if len(cfg.Precision) > 0 {
		attrs = append(attrs, NamedAttr{Name: "precision_config", Value: precisionAttr(cfg.Precision)})
	}
	if cfg.Algorithm != nil {
		attrs = append(attrs, NamedAttr{Name: "algorithm", Value: cfg.Algorithm})
	}
	n.op.Attrs = attrs
	n.operands[0], n.operands[1] = lhs, rhs
	n.res = Value{Type: sameTypeAs(res, lhs.Type, rhs.Type), op: &n.op}
	n.results[0] = &n.res
	n.op.Name = name
	n.op.Operands = n.operands[:]
	n.op.Results = n.results[:]
	fb.emit(&n.op)
	return &n.res
}

// dotNode is a dot_general op, its result and attributes in one allocation.
type dotNode struct {
	node2
	attrs [3]NamedAttr
}

// sameTypeAs returns the operand type equal to t (an interface value that
// is already boxed), or t.
func sameTypeAs(t TensorType, operands ...Type) Type {
	for _, o := range operands {
		if ot, ok := o.(TensorType); ok && ot.DType == t.DType && slices.Equal(ot.Dims, t.Dims) {
			return o
		}
	}
	return t
}

// dotDims returns dn as an attribute, reusing the previous dot_general's
// when the dimension numbers are the same (as in a stack of layers).
func (b *Builder) dotDims(dn DotDimensionNumbers) Attribute {
	if b.lastDot != nil {
		p := b.lastDotDN
		if slices.Equal(p.LhsBatchingDims, dn.LhsBatchingDims) && slices.Equal(p.RhsBatchingDims, dn.RhsBatchingDims) &&
			slices.Equal(p.LhsContractingDims, dn.LhsContractingDims) && slices.Equal(p.RhsContractingDims, dn.RhsContractingDims) {
			return b.lastDot
		}
	}
	c := cloneDot(dn)
	b.lastDotDN, b.lastDot = c, c
	return b.lastDot
}

// cloneDot copies dn's dimension lists into one backing array.
func cloneDot(dn DotDimensionNumbers) DotDimensionNumbers {
	lb, rb, lc, rc := len(dn.LhsBatchingDims), len(dn.RhsBatchingDims), len(dn.LhsContractingDims), len(dn.RhsContractingDims)
	buf := make([]int64, lb+rb+lc+rc)
	var out DotDimensionNumbers
	take := func(src []int64) []int64 {
		if src == nil {
			return nil
		}
		n := copy(buf, src)
		s := buf[:n:n]
		buf = buf[n:]
		return s
	}
	out.LhsBatchingDims = take(dn.LhsBatchingDims)
	out.RhsBatchingDims = take(dn.RhsBatchingDims)
	out.LhsContractingDims = take(dn.LhsContractingDims)
	out.RhsContractingDims = take(dn.RhsContractingDims)
	return out
}

// precisionAttr returns precision_config, shared for the common
// [DEFAULT, DEFAULT].
func precisionAttr(ps []Precision) Attribute {
	if len(ps) == 2 && ps[0] == PrecisionDefault && ps[1] == PrecisionDefault {
		return defaultPrecision
	}
	return PrecisionConfig(ps...)
}

var defaultPrecision Attribute = PrecisionConfig(PrecisionDefault, PrecisionDefault)

func (fb *FuncBuilder) checkPrecision(name string, ops []*Value, ps []Precision) bool {
	if len(ps) != 0 && len(ps) != 2 {
		fb.fail(name, ops, "precision_config needs 0 or 2 entries, got %d", len(ps))
		return false
	}
	for _, p := range ps {
		if !validEnum("precision", string(p)) {
			fb.fail(name, ops, "invalid precision %q", p)
			return false
		}
	}
	return true
}

// Matmul multiplies matrices (or batches of them, with matching leading
// batch dimensions) with dot_general: [..., m, k] x [..., k, n] -> [..., m, n].
func (fb *FuncBuilder) Matmul(lhs, rhs *Value) *Value {
	const name = "stablehlo.dot_general"
	if !fb.check2(name, lhs, rhs) {
		return deadValue(nil)
	}
	lt, ok1 := lhs.TensorType()
	rt, ok2 := rhs.TensorType()
	if !ok1 || !ok2 || lt.Rank() < 2 || lt.Rank() != rt.Rank() {
		fb.fail(name, []*Value{lhs, rhs}, "Matmul needs two tensors of the same rank >= 2")
		return deadValue(nil)
	}
	r := int64(lt.Rank())
	var batch []int64
	for i := range r - 2 {
		batch = append(batch, i)
	}
	return fb.DotGeneral(lhs, rhs, DotDimensionNumbers{
		LhsBatchingDims: batch, RhsBatchingDims: batch,
		LhsContractingDims: []int64{r - 1}, RhsContractingDims: []int64{r - 2},
	})
}

// Dot adds the deprecated stablehlo.dot: vector·vector, matrix·vector or
// matrix·matrix.
func (fb *FuncBuilder) Dot(lhs, rhs *Value, precision ...Precision) *Value {
	const name = "stablehlo.dot"
	if !fb.check2(name, lhs, rhs) {
		return deadValue(nil)
	}
	ops := []*Value{lhs, rhs}
	lt, ok1 := lhs.TensorType()
	rt, ok2 := rhs.TensorType()
	if !ok1 || !ok2 || lt.Rank() < 1 || lt.Rank() > 2 || rt.Rank() < 1 || rt.Rank() > 2 || lt.DType != rt.DType {
		fb.fail(name, ops, "operands must be rank-1 or rank-2 tensors of one element type")
		return deadValue(nil)
	}
	lc, rc := lt.Dims[lt.Rank()-1], rt.Dims[0]
	if !dimEq(lc, rc) {
		fb.fail(name, ops, "contracting dimensions differ: %d vs %d", lc, rc)
		return deadValue(nil)
	}
	if !fb.checkPrecision(name, ops, precision) {
		return deadValue(nil)
	}
	var dims []int64
	if lt.Rank() == 2 {
		dims = append(dims, lt.Dims[0])
	}
	if rt.Rank() == 2 {
		dims = append(dims, rt.Dims[1])
	}
	var attrs []NamedAttr
	if len(precision) > 0 {
		attrs = append(attrs, NamedAttr{Name: "precision_config", Value: PrecisionConfig(precision...)})
	}
	return fb.emit1(name, ops, Tensor(lt.DType, dims...), attrs...)
}

// ConvConfig holds a convolution's window and dimension settings. Nil
// slices take the defaults (strides and dilations 1, padding 0, no
// reversal); zero group counts mean 1.
type ConvConfig struct {
	WindowStrides     []int64
	Padding           [][2]int64
	LhsDilation       []int64
	RhsDilation       []int64
	WindowReversal    []bool
	Dims              ConvDimensionNumbers
	FeatureGroupCount int64
	BatchGroupCount   int64
	Precision         []Precision
	ResultDType       xla.DType // Invalid: the operands' element type
}

func (c ConvConfig) params() convParams {
	n := len(c.Dims.InputSpatialDims)
	p := convParams{strides: c.WindowStrides, lhsDil: c.LhsDilation, rhsDil: c.RhsDilation, padding: c.Padding,
		reversal: c.WindowReversal, dn: c.Dims, fgc: c.FeatureGroupCount, bgc: c.BatchGroupCount}
	if p.strides == nil {
		p.strides = ones(n)
	}
	if p.lhsDil == nil {
		p.lhsDil = ones(n)
	}
	if p.rhsDil == nil {
		p.rhsDil = ones(n)
	}
	if p.padding == nil {
		p.padding = make([][2]int64, n)
	}
	if p.fgc == 0 {
		p.fgc = 1
	}
	if p.bgc == 0 {
		p.bgc = 1
	}
	return p
}

func (c ConvConfig) attrs(p convParams, withPadding bool) []NamedAttr {
	attrs := []NamedAttr{
		{Name: "window_strides", Value: I64Array(p.strides...)},
	}
	if withPadding {
		attrs = append(attrs, NamedAttr{Name: "padding", Value: PaddingAttr(p.padding)})
	}
	attrs = append(attrs,
		NamedAttr{Name: "lhs_dilation", Value: I64Array(p.lhsDil...)},
		NamedAttr{Name: "rhs_dilation", Value: I64Array(p.rhsDil...)})
	if p.reversal != nil {
		attrs = append(attrs, NamedAttr{Name: "window_reversal", Value: BoolArray(p.reversal...)})
	}
	dn := p.dn
	attrs = append(attrs,
		NamedAttr{Name: "dimension_numbers", Value: ConvDimensionNumbers{
			InputBatchDim: dn.InputBatchDim, InputFeatureDim: dn.InputFeatureDim, InputSpatialDims: slices.Clone(dn.InputSpatialDims),
			KernelInputFeatureDim: dn.KernelInputFeatureDim, KernelOutputFeature: dn.KernelOutputFeature, KernelSpatialDims: slices.Clone(dn.KernelSpatialDims),
			OutputBatchDim: dn.OutputBatchDim, OutputFeatureDim: dn.OutputFeatureDim, OutputSpatialDims: slices.Clone(dn.OutputSpatialDims),
		}},
		NamedAttr{Name: "feature_group_count", Value: I64Attr(p.fgc)},
		NamedAttr{Name: "batch_group_count", Value: I64Attr(p.bgc)})
	if len(c.Precision) > 0 {
		attrs = append(attrs, NamedAttr{Name: "precision_config", Value: PrecisionConfig(c.Precision...)})
	}
	return attrs
}

// Convolution adds stablehlo.convolution of lhs (input) with rhs (kernel).
func (fb *FuncBuilder) Convolution(lhs, rhs *Value, cfg ConvConfig) *Value {
	const name = "stablehlo.convolution"
	if !fb.check2(name, lhs, rhs) {
		return deadValue(nil)
	}
	ops := []*Value{lhs, rhs}
	ts, ok := fb.tensorOperands(name, ops, lhs, rhs)
	if !ok {
		return deadValue(nil)
	}
	p := cfg.params()
	rt, err := inferConvolution(ts[0], ts[1], p, cfg.ResultDType)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	if !fb.checkPrecision(name, ops, cfg.Precision) {
		return deadValue(nil)
	}
	return fb.emit1(name, ops, rt, cfg.attrs(p, true)...)
}

// Cholesky adds stablehlo.cholesky of a batch of square matrices.
func (fb *FuncBuilder) Cholesky(a *Value, lower bool) *Value {
	const name = "stablehlo.cholesky"
	if !fb.check1(name, a) {
		return deadValue(nil)
	}
	t, ok := a.TensorType()
	if !ok {
		fb.fail(name, []*Value{a}, "operand must be a tensor")
		return deadValue(nil)
	}
	if err := checkBatchedSquare("a", t); err != nil {
		fb.fail(name, []*Value{a}, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{a}, a.Type, NamedAttr{Name: "lower", Value: BoolAttr(lower)})
}

// TriangularSolve adds stablehlo.triangular_solve: solves op(a)·x = b
// (leftSide) or x·op(a) = b.
func (fb *FuncBuilder) TriangularSolve(a, b *Value, leftSide, lower, unitDiagonal bool, transposeA TransposeMode) *Value {
	const name = "stablehlo.triangular_solve"
	if !fb.check2(name, a, b) {
		return deadValue(nil)
	}
	ops := []*Value{a, b}
	ts, ok := fb.tensorOperands(name, ops, a, b)
	if !ok {
		return deadValue(nil)
	}
	if err := inferTriangularSolve(ts[0], ts[1], leftSide); err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	if !validEnum("transpose", string(transposeA)) || transposeA == "TRANSPOSE_INVALID" {
		fb.fail(name, ops, "invalid transpose_a %q", transposeA)
		return deadValue(nil)
	}
	return fb.emit1(name, ops, b.Type,
		NamedAttr{Name: "left_side", Value: BoolAttr(leftSide)},
		NamedAttr{Name: "lower", Value: BoolAttr(lower)},
		NamedAttr{Name: "unit_diagonal", Value: BoolAttr(unitDiagonal)},
		NamedAttr{Name: "transpose_a", Value: enumAttr("transpose", string(transposeA))})
}

// Fft adds stablehlo.fft over the trailing len(length) dimensions.
func (fb *FuncBuilder) Fft(x *Value, fftType FftType, length ...int64) *Value {
	const name = "stablehlo.fft"
	if !fb.check1(name, x) {
		return deadValue(nil)
	}
	t, ok := x.TensorType()
	if !ok {
		fb.fail(name, []*Value{x}, "operand must be a tensor")
		return deadValue(nil)
	}
	rt, err := inferFft(t, fftType, length)
	if err != nil {
		fb.fail(name, []*Value{x}, "%v", err)
		return deadValue(nil)
	}
	return fb.emit1(name, []*Value{x}, rt,
		NamedAttr{Name: "fft_type", Value: enumAttr("fft_type", string(fftType))},
		NamedAttr{Name: "fft_length", Value: I64Array(length...)})
}

// checkBatchNorm checks that operand's feature dimension exists and that
// every 1-D operand has its size and element type.
func (fb *FuncBuilder) checkBatchNorm(name string, ops []*Value, featureIndex int64, vectors []*Value) (TensorType, bool) {
	ts, ok := fb.tensorOperands(name, ops, ops...)
	if !ok {
		return TensorType{}, false
	}
	x := ts[0]
	if !x.DType.IsFloat() || featureIndex < 0 || featureIndex >= int64(x.Rank()) {
		fb.fail(name, ops, "operand must be a float tensor with feature_index %d in range", featureIndex)
		return TensorType{}, false
	}
	for i, v := range vectors {
		vt, _ := v.TensorType()
		if vt.Rank() != 1 || vt.DType != x.DType || !dimEq(vt.Dims[0], x.Dims[featureIndex]) {
			fb.fail(name, ops, "operand %d must be a 1-D tensor of %d %s", i+1, x.Dims[featureIndex], x.DType)
			return TensorType{}, false
		}
	}
	return x, true
}

func batchNormAttrs(epsilon float32, featureIndex int64) []NamedAttr {
	return []NamedAttr{
		{Name: "epsilon", Value: FloatAttr{Value: float64(epsilon), Type: xla.Float32}},
		{Name: "feature_index", Value: I64Attr(featureIndex)},
	}
}

// BatchNormInference adds stablehlo.batch_norm_inference.
func (fb *FuncBuilder) BatchNormInference(x, scale, offset, mean, variance *Value, epsilon float32, featureIndex int64) *Value {
	const name = "stablehlo.batch_norm_inference"
	ops := []*Value{x, scale, offset, mean, variance}
	if !fb.checkOperands(name, ops) {
		return deadValue(nil)
	}
	if _, ok := fb.checkBatchNorm(name, ops, featureIndex, ops[1:]); !ok {
		return deadValue(nil)
	}
	return fb.emit1(name, ops, x.Type, batchNormAttrs(epsilon, featureIndex)...)
}

// BatchNormTraining adds stablehlo.batch_norm_training and returns
// (output, batch_mean, batch_var).
func (fb *FuncBuilder) BatchNormTraining(x, scale, offset *Value, epsilon float32, featureIndex int64) (output, batchMean, batchVar *Value) {
	const name = "stablehlo.batch_norm_training"
	ops := []*Value{x, scale, offset}
	if !fb.checkOperands(name, ops) {
		return deadValue(nil), deadValue(nil), deadValue(nil)
	}
	if _, ok := fb.checkBatchNorm(name, ops, featureIndex, ops[1:]); !ok {
		return deadValue(nil), deadValue(nil), deadValue(nil)
	}
	op := fb.emitN(name, ops, []Type{x.Type, scale.Type, scale.Type}, batchNormAttrs(epsilon, featureIndex)...)
	return op.Results[0], op.Results[1], op.Results[2]
}

// BatchNormGrad adds stablehlo.batch_norm_grad and returns (grad_operand,
// grad_scale, grad_offset).
func (fb *FuncBuilder) BatchNormGrad(x, scale, mean, variance, gradOutput *Value, epsilon float32, featureIndex int64) (gradOperand, gradScale, gradOffset *Value) {
	const name = "stablehlo.batch_norm_grad"
	ops := []*Value{x, scale, mean, variance, gradOutput}
	if !fb.checkOperands(name, ops) {
		return deadValue(nil), deadValue(nil), deadValue(nil)
	}
	if _, ok := fb.checkBatchNorm(name, ops, featureIndex, ops[1:4]); !ok {
		return deadValue(nil), deadValue(nil), deadValue(nil)
	}
	if !TypesEqual(gradOutput.Type, x.Type) {
		fb.fail(name, ops, "grad_output must have the operand's type")
		return deadValue(nil), deadValue(nil), deadValue(nil)
	}
	op := fb.emitN(name, ops, []Type{x.Type, scale.Type, scale.Type}, batchNormAttrs(epsilon, featureIndex)...)
	return op.Results[0], op.Results[1], op.Results[2]
}

// Einsum adds the deprecated stablehlo.einsum with an explicit result type.
func (fb *FuncBuilder) Einsum(lhs, rhs *Value, config string, result TensorType) *Value {
	const name = "stablehlo.einsum"
	if !fb.check2(name, lhs, rhs) || !fb.checkTypes(name, []*Value{lhs, rhs}, []Type{result}) || !fb.checkEinsum(name, config, result, lhs, rhs) {
		return deadValue(result)
	}
	return fb.emit1(name, []*Value{lhs, rhs}, result, NamedAttr{Name: "einsum_config", Value: StringAttr(config)})
}

// checkEinsum checks config against the operands' shapes (PlanEinsum)
// and result against the shape and element type they give.
func (fb *FuncBuilder) checkEinsum(name, config string, result TensorType, ops ...*Value) bool {
	dims := make([][]int64, len(ops))
	dts := make([]xla.DType, len(ops))
	for i, v := range ops {
		t, ok := v.TensorType()
		if !ok {
			fb.fail(name, ops, "operand %d is %s, not a tensor", i, v.Type)
			return false
		}
		dims[i], dts[i] = t.Dims, t.DType
	}
	plan, err := PlanEinsum(config, dims...)
	if err == nil { // unary: the operand times itself, for the types
		_, err = productDType(dts[0], dts[len(dts)-1], result.DType)
	}
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return false
	}
	if want := plan.ResultDims(); !sameDims(want, result.Dims) {
		fb.fail(name, ops, "result type %s does not match einsum_config %q (want dimensions %v)", result, config, want)
		return false
	}
	return true
}

// UnaryEinsum adds the deprecated stablehlo.unary_einsum with an explicit
// result type.
func (fb *FuncBuilder) UnaryEinsum(x *Value, config string, result TensorType) *Value {
	const name = "stablehlo.unary_einsum"
	if !fb.check1(name, x) || !fb.checkTypes(name, []*Value{x}, []Type{result}) || !fb.checkEinsum(name, config, result, x) {
		return deadValue(result)
	}
	return fb.emit1(name, []*Value{x}, result, NamedAttr{Name: "einsum_config", Value: StringAttr(config)})
}

// TorchIndexSelect adds the deprecated stablehlo.torch_index_select.
func (fb *FuncBuilder) TorchIndexSelect(x, index *Value, dim, batchDims int64) *Value {
	const name = "stablehlo.torch_index_select"
	if !fb.check2(name, x, index) {
		return deadValue(nil)
	}
	ops := []*Value{x, index}
	ts, ok := fb.tensorOperands(name, ops, x, index)
	if !ok {
		return deadValue(nil)
	}
	xt, it := ts[0], ts[1]
	rt, err := inferTorchIndexSelect(xt, it, dim, batchDims)
	if err != nil {
		fb.fail(name, ops, "%v", err)
		return deadValue(nil)
	}
	if dim < 0 { // negative: counted from the end, as in PyTorch
		dim += int64(xt.Rank())
	}
	if batchDims < 0 {
		batchDims += int64(it.Rank())
	}
	return fb.emit1(name, ops, rt,
		NamedAttr{Name: "dim", Value: I64Attr(dim)}, NamedAttr{Name: "batch_dims", Value: I64Attr(batchDims)})
}
