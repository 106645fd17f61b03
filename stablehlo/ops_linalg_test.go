package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

func TestLinalgOps(t *testing.T) {
	nchw := ConvDimensionNumbers{
		InputBatchDim: 0, InputFeatureDim: 1, InputSpatialDims: []int64{2, 3},
		KernelOutputFeature: 0, KernelInputFeatureDim: 1, KernelSpatialDims: []int64{2, 3},
		OutputBatchDim: 0, OutputFeatureDim: 1, OutputSpatialDims: []int64{2, 3},
	}
	nhwc := ConvDimensionNumbers{
		InputBatchDim: 0, InputFeatureDim: 3, InputSpatialDims: []int64{1, 2},
		KernelInputFeatureDim: 2, KernelOutputFeature: 3, KernelSpatialDims: []int64{0, 1},
		OutputBatchDim: 0, OutputFeatureDim: 3, OutputSpatialDims: []int64{1, 2},
	}
	cases := []opCase{
		{name: "dot_general/spec-example", op: "stablehlo.dot_general", args: []Type{i64(2, 2, 2), i64(2, 2, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneral(a[0], a[1], DotDimensionNumbers{
					LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0},
					LhsContractingDims: []int64{2}, RhsContractingDims: []int64{1},
				}, PrecisionDefault, PrecisionDefault)
			}, want: i64(2, 2, 2)},
		{name: "dot_general/free-dims", op: "stablehlo.dot_general", args: []Type{f32(7, 3, 5), f32(5, 7, 4, 6)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneral(a[0], a[1], DotDimensionNumbers{
					LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{1},
					LhsContractingDims: []int64{2}, RhsContractingDims: []int64{0},
				})
			}, want: f32(7, 3, 4, 6)},
		{name: "dot_general/outer-product", op: "stablehlo.dot_general", args: []Type{f32(3), f32(4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.DotGeneral(a[0], a[1], DotDimensionNumbers{}) },
			want:  f32(3, 4)},
		{name: "dot_general/result-dtype", op: "stablehlo.dot_general", args: []Type{Tensor(xla.BFloat16, 2, 3), Tensor(xla.BFloat16, 3, 4)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneralWith(a[0], a[1], DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
					DotConfig{ResultDType: xla.Float32, Precision: []Precision{PrecisionHigh, PrecisionHighest}})
			}, want: f32(2, 4)},
		// Results the products cannot give (the interpreter refused them at
		// run time): floats into integers, complex numbers into reals.
		{name: "dot_general/float-to-int", op: "stablehlo.dot_general", args: []Type{f32(2, 3), f32(3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneralWith(a[0], a[1], DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
					DotConfig{ResultDType: xla.Int32})
			}, wantErr: "f32 operands cannot give i32 results"},
		{name: "dot_general/complex-to-real", op: "stablehlo.dot_general", args: []Type{Tensor(xla.Complex64, 2, 3), Tensor(xla.Complex64, 3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneralWith(a[0], a[1], DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
					DotConfig{ResultDType: xla.Float32})
			}, wantErr: "complex<f32> operands cannot give real f32 results"},
		{name: "dot_general/int-to-float", op: "stablehlo.dot_general", args: []Type{Tensor(xla.Int8, 2, 3), Tensor(xla.Int8, 3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneralWith(a[0], a[1], DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
					DotConfig{ResultDType: xla.Float32})
			}, want: f32(2, 2)},
		{name: "convolution/float-to-int", op: "stablehlo.convolution", args: []Type{f32(1, 1, 4, 4), f32(1, 1, 2, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{Dims: nchw, ResultDType: xla.Int32})
			}, wantErr: "f32 operands cannot give i32 results"},
		{name: "dot_general/contracting-size", op: "stablehlo.dot_general", args: []Type{f32(2, 3), f32(4, 5)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneral(a[0], a[1], DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}})
			}, wantErr: "contracting dimension sizes differ: 3 vs 4"},
		{name: "dot_general/batch-size", op: "stablehlo.dot_general", args: []Type{f32(2, 3), f32(5, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneral(a[0], a[1], DotDimensionNumbers{LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0}})
			}, wantErr: "batching dimension sizes differ"},
		{name: "dot_general/dim-reused", op: "stablehlo.dot_general", args: []Type{f32(3, 3), f32(3, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneral(a[0], a[1], DotDimensionNumbers{LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0},
					LhsContractingDims: []int64{0}, RhsContractingDims: []int64{1}})
			}, wantErr: "dimension 0 repeated"},
		{name: "dot_general/out-of-range", op: "stablehlo.dot_general", args: []Type{f32(3, 3), f32(3, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneral(a[0], a[1], DotDimensionNumbers{LhsContractingDims: []int64{2}, RhsContractingDims: []int64{0}})
			}, wantErr: "dimension 2 out of range [0, 2)"},
		{name: "dot_general/mixed-dtypes", op: "stablehlo.dot_general", args: []Type{f32(3), Tensor(xla.Float64, 3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.DotGeneral(a[0], a[1], DotDimensionNumbers{}) },
			wantErr: "element types differ"},
		{name: "dot_general/precision-count", op: "stablehlo.dot_general", args: []Type{f32(3), f32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.DotGeneral(a[0], a[1], DotDimensionNumbers{}, PrecisionHigh)
			}, wantErr: "precision_config needs 0 or 2 entries"},
		{name: "matmul/batched", op: "stablehlo.dot_general", args: []Type{f32(8, 2, 3), f32(8, 3, 4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Matmul(a[0], a[1]) }, want: f32(8, 2, 4)},
		{name: "dot/matrix-vector", op: "stablehlo.dot", args: []Type{f32(2, 3), f32(3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Dot(a[0], a[1]) }, want: f32(2)},
		{name: "dot/mismatch", op: "stablehlo.dot", args: []Type{f32(2, 3), f32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Dot(a[0], a[1]) }, wantErr: "contracting dimensions differ"},
		{name: "convolution/spec-example", op: "stablehlo.convolution", args: []Type{i64(1, 4, 4, 1), i64(3, 3, 1, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{WindowStrides: []int64{4, 4}, LhsDilation: []int64{2, 2},
					RhsDilation: []int64{1, 1}, WindowReversal: []bool{false, false}, Dims: nhwc,
					FeatureGroupCount: 1, BatchGroupCount: 1, Precision: []Precision{PrecisionDefault, PrecisionDefault}})
			}, want: i64(1, 2, 2, 1)},
		{name: "convolution/same-padding", op: "stablehlo.convolution", args: []Type{f32(8, 3, 32, 32), f32(16, 3, 3, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{Padding: [][2]int64{{1, 1}, {1, 1}}, Dims: nchw})
			}, want: f32(8, 16, 32, 32)},
		{name: "convolution/stride-dilation", op: "stablehlo.convolution", args: []Type{f32(1, 1, 10, 9), f32(2, 1, 3, 2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{WindowStrides: []int64{2, 3}, RhsDilation: []int64{2, 1}, Dims: nchw})
			}, want: f32(1, 2, 3, 3)},
		{name: "convolution/feature-groups", op: "stablehlo.convolution", args: []Type{f32(1, 4, 5, 5), f32(6, 2, 1, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{Dims: nchw, FeatureGroupCount: 2})
			}, want: f32(1, 6, 5, 5)},
		{name: "convolution/feature-groups-bad", op: "stablehlo.convolution", args: []Type{f32(1, 4, 5, 5), f32(6, 4, 1, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{Dims: nchw, FeatureGroupCount: 2})
			}, wantErr: "input features / feature_group_count (2) != kernel input features (4)"},
		{name: "convolution/batch-groups", op: "stablehlo.convolution", args: []Type{f32(4, 3, 5, 5), f32(6, 3, 1, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{Dims: nchw, BatchGroupCount: 2})
			}, want: f32(2, 6, 5, 5)},
		{name: "convolution/both-groups", op: "stablehlo.convolution", args: []Type{f32(4, 4, 5, 5), f32(4, 2, 1, 1)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.Convolution(a[0], a[1], ConvConfig{Dims: nchw, BatchGroupCount: 2, FeatureGroupCount: 2})
			}, wantErr: "cannot both be > 1"},
		{name: "convolution/rank", op: "stablehlo.convolution", args: []Type{f32(4, 4, 5), f32(4, 2, 1, 1)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Convolution(a[0], a[1], ConvConfig{Dims: nchw}) },
			wantErr: "must have rank 4"},
		{name: "convolution/window-too-big", op: "stablehlo.convolution", args: []Type{f32(1, 1, 2, 2), f32(1, 1, 3, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Convolution(a[0], a[1], ConvConfig{Dims: nchw}) },
			want:  f32(1, 1, 0, 0)},
		{name: "cholesky", op: "stablehlo.cholesky", args: []Type{Tensor(xla.Float64, 2, 3, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Cholesky(a[0], true) }, want: Tensor(xla.Float64, 2, 3, 3)},
		{name: "cholesky/not-square", op: "stablehlo.cholesky", args: []Type{f32(3, 4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Cholesky(a[0], true) }, wantErr: "square matrices"},
		{name: "triangular_solve/left", op: "stablehlo.triangular_solve", args: []Type{f32(2, 3, 3), f32(2, 3, 5)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.TriangularSolve(a[0], a[1], true, true, false, NoTranspose)
			}, want: f32(2, 3, 5)},
		{name: "triangular_solve/right-bad", op: "stablehlo.triangular_solve", args: []Type{f32(2, 3, 3), f32(2, 3, 5)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.TriangularSolve(a[0], a[1], false, true, false, AdjointTranspose)
			}, wantErr: "matching dimension is 5"},
		{name: "triangular_solve/transpose", op: "stablehlo.triangular_solve", args: []Type{f32(3, 3), f32(3, 3)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.TriangularSolve(a[0], a[1], false, true, false, "SIDEWAYS")
			}, wantErr: `invalid transpose_a "SIDEWAYS"`},
		{name: "fft", op: "stablehlo.fft", args: []Type{Tensor(xla.Complex64, 4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Fft(a[0], FftForward, 4) }, want: Tensor(xla.Complex64, 4)},
		{name: "rfft", op: "stablehlo.fft", args: []Type{f32(4, 16)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Fft(a[0], FftRealForward, 16) }, want: Tensor(xla.Complex64, 4, 9)},
		{name: "irfft", op: "stablehlo.fft", args: []Type{Tensor(xla.Complex128, 2, 4, 9)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Fft(a[0], FftInverseToReal, 4, 16) }, want: Tensor(xla.Float64, 2, 4, 16)},
		{name: "fft/real-operand", op: "stablehlo.fft", args: []Type{f32(4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Fft(a[0], FftInverse, 4) }, wantErr: "needs a complex operand"},
		{name: "fft/length", op: "stablehlo.fft", args: []Type{Tensor(xla.Complex64, 4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Fft(a[0], FftForward, 8) }, wantErr: "trailing dimensions [4] != fft_length [8]"},
		{name: "batch_norm_inference", op: "stablehlo.batch_norm_inference", args: []Type{f32(2, 2, 2), f32(2), f32(2), f32(2), f32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.BatchNormInference(a[0], a[1], a[2], a[3], a[4], 1e-5, 2)
			},
			want: f32(2, 2, 2)},
		{name: "batch_norm_inference/feature-size", op: "stablehlo.batch_norm_inference", args: []Type{f32(2, 2, 3), f32(2), f32(2), f32(2), f32(2)},
			build: func(f *FuncBuilder, a []*Value) *Value {
				return f.BatchNormInference(a[0], a[1], a[2], a[3], a[4], 1e-5, 2)
			},
			wantErr: "operand 1 must be a 1-D tensor of 3 f32"},
		{name: "einsum", op: "stablehlo.einsum", args: []Type{f32(4, 16), f32(16, 4)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.Einsum(a[0], a[1], "ab,bc->ac", f32(4, 4)) }, want: f32(4, 4)},
		{name: "unary_einsum", op: "stablehlo.unary_einsum", args: []Type{f32(4, 16)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.UnaryEinsum(a[0], "ab->a", f32(4)) }, want: f32(4)},
		// The config is checked against the operands when built (the
		// interpreter found these only when run).
		{name: "einsum/label-sizes", op: "stablehlo.einsum", args: []Type{f32(2, 3), f32(5, 4)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Einsum(a[0], a[1], "ij,jk->ik", f32(2, 4)) },
			wantErr: `einsum_config "ij,jk->ik": label 'j' has sizes 3 and 5`},
		{name: "einsum/operand-count", op: "stablehlo.einsum", args: []Type{f32(2, 3), f32(3, 4)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Einsum(a[0], a[1], "garbage", f32(2, 4)) },
			wantErr: `einsum_config "garbage" names 1 operands, the op has 2`},
		{name: "einsum/result-shape", op: "stablehlo.einsum", args: []Type{f32(2, 3), f32(3, 4)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.Einsum(a[0], a[1], "ij,jk->ik", f32(2, 5)) },
			wantErr: `does not match einsum_config "ij,jk->ik" (want dimensions [2 4])`},
		{name: "unary_einsum/result-shape", op: "stablehlo.unary_einsum", args: []Type{f32(2, 3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.UnaryEinsum(a[0], "ij->ji", f32(2, 3)) },
			wantErr: "want dimensions [3 2]"},
		{name: "torch_index_select", op: "stablehlo.torch_index_select", args: []Type{f32(8, 128, 3072, 64), i32(8, 16, 1024)},
			build: func(f *FuncBuilder, a []*Value) *Value { return f.TorchIndexSelect(a[0], a[1], 2, 1) },
			want:  f32(8, 128, 16, 1024, 64)},
		{name: "torch_index_select/batch-dims", op: "stablehlo.torch_index_select", args: []Type{f32(2, 3), i32(5)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.TorchIndexSelect(a[0], a[1], 1, 1) },
			wantErr: "batch dimension 0 differs: operand tensor<2x3xf32>, index tensor<5xi32>"},
		{name: "torch_index_select/empty-dim", op: "stablehlo.torch_index_select", args: []Type{Tensor(xla.Complex64, 2, 0, 1), i32(3)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.TorchIndexSelect(a[0], a[1], 1, 0) },
			wantErr: "cannot select from dimension 1 of tensor<2x0x1xcomplex<f32>>: it is empty"},
		{name: "torch_index_select/range", op: "stablehlo.torch_index_select", args: []Type{f32(2, 3), i32(2, 4)},
			build:   func(f *FuncBuilder, a []*Value) *Value { return f.TorchIndexSelect(a[0], a[1], 0, 1) },
			wantErr: "dim 0 and batch_dims 1 out of range"},
	}
	runOpCases(t, cases)
}

func TestLinalgAttributes(t *testing.T) {
	_, f := newFunc(f32(2, 3), f32(3, 4))
	v := f.DotGeneralWith(f.Arg(0), f.Arg(1), DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
		DotConfig{Precision: []Precision{PrecisionDefault, PrecisionHighest}, Algorithm: OpaqueAttr("#stablehlo.dot_algorithm<lhs_precision_type = tf32>")})
	op := v.Op()
	assert.Equal(t, DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}, op.Attr("dot_dimension_numbers"))
	assert.Equal(t, ArrayAttr{Enum("precision", "DEFAULT"), Enum("precision", "HIGHEST")}, op.Attr("precision_config"))
	assert.Equal(t, OpaqueAttr("#stablehlo.dot_algorithm<lhs_precision_type = tf32>"), op.Attr("algorithm"))
	v = f.Matmul(f.Arg(0), f.Arg(1))
	assert.Nil(t, v.Op().Attr("precision_config"))

	_, f = newFunc(f32(1, 4, 4, 1), f32(3, 3, 1, 1))
	dn := ConvDimensionNumbers{
		InputBatchDim: 0, InputFeatureDim: 3, InputSpatialDims: []int64{1, 2},
		KernelInputFeatureDim: 2, KernelOutputFeature: 3, KernelSpatialDims: []int64{0, 1},
		OutputBatchDim: 0, OutputFeatureDim: 3, OutputSpatialDims: []int64{1, 2},
	}
	v = f.Convolution(f.Arg(0), f.Arg(1), ConvConfig{Dims: dn, Padding: [][2]int64{{1, 1}, {0, 2}}, WindowReversal: []bool{true, false}})
	op = v.Op()
	require.NoError(t, checkOpSpec(op))
	assert.Equal(t, I64Array(1, 1), op.Attr("window_strides"))
	assert.Equal(t, I64Array(1, 1), op.Attr("lhs_dilation"))
	assert.Equal(t, I64Array(1, 1), op.Attr("rhs_dilation"))
	assert.Equal(t, DenseArrayAttr{DType: xla.Bool, Values: []int64{1, 0}}, op.Attr("window_reversal"))
	pad := op.Attr("padding").(DenseElementsAttr)
	assert.Equal(t, Tensor(xla.Int64, 2, 2).String(), pad.Type.String())
	assert.Equal(t, [][]int64{{1, 1}, {0, 2}}, denseMatrix(pad))
	assert.Equal(t, dn, op.Attr("dimension_numbers"))
	assert.Equal(t, I64Attr(1), op.Attr("feature_group_count"))
	assert.Equal(t, I64Attr(1), op.Attr("batch_group_count"))
	assert.Equal(t, f32(1, 4, 4, 1).String(), v.Type.String())

	_, f = newFunc(f32(3, 3), f32(3, 3))
	op = f.TriangularSolve(f.Arg(0), f.Arg(1), true, false, true, TransposeA).Op()
	assert.Equal(t, BoolAttr(true), op.Attr("left_side"))
	assert.Equal(t, BoolAttr(false), op.Attr("lower"))
	assert.Equal(t, BoolAttr(true), op.Attr("unit_diagonal"))
	assert.Equal(t, Enum("transpose", "TRANSPOSE"), op.Attr("transpose_a"))
	op = f.Fft(f.Convert(f.Arg(0), xla.Complex64), FftInverse, 3, 3).Op()
	assert.Equal(t, Enum("fft_type", "IFFT"), op.Attr("fft_type"))
	assert.Equal(t, I64Array(3, 3), op.Attr("fft_length"))

	b, f := newFunc(f32(2, 3), f32(3), f32(3))
	out, mean, variance := f.BatchNormTraining(f.Arg(0), f.Arg(1), f.Arg(2), 0.001, 1)
	require.NoError(t, b.Err())
	assert.Equal(t, f32(2, 3).String(), out.Type.String())
	assert.Equal(t, f32(3).String(), mean.Type.String())
	assert.Equal(t, f32(3).String(), variance.Type.String())
	assert.Equal(t, FloatAttr{Value: float64(float32(0.001)), Type: xla.Float32}, out.Op().Attr("epsilon"))
	assert.Equal(t, I64Attr(1), out.Op().Attr("feature_index"))
	g1, g2, g3 := f.BatchNormGrad(f.Arg(0), f.Arg(1), mean, variance, out, 0.001, 1)
	require.NoError(t, b.Err())
	assert.Equal(t, []string{"tensor<2x3xf32>", "tensor<3xf32>", "tensor<3xf32>"}, []string{g1.Type.String(), g2.Type.String(), g3.Type.String()})
}
