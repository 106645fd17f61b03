package interpreter

import (
	"context"
	"encoding/binary"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Kernels never panic on bad programs: valid programs with randomly broken
// attributes and result types must either run or fail with an error that is
// not a recovered panic ("internal error").

type shpFuzzProgram struct {
	src  string
	args []Value
}

func shpFuzzPrograms() []shpFuzzProgram {
	i32, i64, f32 := xla.Int32, xla.Int64, xla.Float32
	ones := shpT(i64, shpDims(2, 2, 3, 2, 2), make([]float64, 48)...)
	return []shpFuzzProgram{
		{shpUnary("tensor<2x3x2xi32>", "tensor<2x3x2xi32>", `"stablehlo.transpose"(%a) {permutation = array<i64: 2, 1, 0>}`),
			[]Value{shpIota(i32, shpDims(2, 3, 2), 1)}},
		{shpUnary("tensor<1x3xi32>", "tensor<2x3x2xi32>", `"stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 2, 1>}`),
			[]Value{shpIota(i32, shpDims(1, 3), 1)}},
		{shpUnary("tensor<3x5xi32>", "tensor<2x2xi32>",
			`"stablehlo.slice"(%a) {start_indices = array<i64: 0, 1>, limit_indices = array<i64: 3, 5>, strides = array<i64: 2, 3>}`),
			[]Value{shpIota(i32, shpDims(3, 5), 0)}},
		{shpUnary("tensor<3x2xi32>", "tensor<3x2xi32>", `"stablehlo.reverse"(%a) {dimensions = array<i64: 1, 0>}`),
			[]Value{shpIota(i32, shpDims(3, 2), 1)}},
		{shpUnary("tensor<2x3xi32>", "tensor<3x2xi32>", `"stablehlo.reshape"(%a)`), []Value{shpIota(i32, shpDims(2, 3), 1)}},
		{`func.func @main(%a: tensor<2x3xi32>, %p: tensor<i32>) -> tensor<5x9xi32> {
  %0 = "stablehlo.pad"(%a, %p) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 2, 1>, interior_padding = array<i64: 1, 2>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<5x9xi32>
  return %0 : tensor<5x9xi32>
}`, []Value{shpIota(i32, shpDims(2, 3), 1), shpT(i32, nil, 0)}},
		{`func.func @main(%a: tensor<4x4xi32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<2x2xi32> {
  %0 = "stablehlo.dynamic_slice"(%a, %i, %j) {slice_sizes = array<i64: 2, 2>} : (tensor<4x4xi32>, tensor<i64>, tensor<i64>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}`, []Value{shpIota(i32, shpDims(4, 4), 0), shpT(i64, nil, -1), shpT(i64, nil, 3)}},
		{`func.func @main(%a: tensor<3x2xi64>, %b: tensor<1x2xi64>) -> tensor<4x2xi64> {
  %0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<3x2xi64>, tensor<1x2xi64>) -> tensor<4x2xi64>
  return %0 : tensor<4x2xi64>
}`, []Value{shpIota(i64, shpDims(3, 2), 1), shpT(i64, shpDims(1, 2), 7, 8)}},
		{shpReduceSrc("tensor<2x3xi32>", "i32", "tensor<2xi32>", "1", "stablehlo.add"),
			[]Value{shpIota(i32, shpDims(2, 3), 1), shpT(i32, nil, 0)}},
		{shpReduceSrc("tensor<2x3xi32>", "i32", "tensor<2xi32>", "1", "shptest.add"),
			[]Value{shpIota(i32, shpDims(2, 3), 1), shpT(i32, nil, 0)}},
		{`func.func @main(%a: tensor<3x2xi32>, %i: tensor<i32>) -> tensor<2x2xi32> {
  %0 = "stablehlo.reduce_window"(%a, %i) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = "stablehlo.add"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%s) : (tensor<i32>) -> ()
  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 4, 1>, base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 3, 1>, padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<3x2xi32>, tensor<i32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}`, []Value{shpIota(i32, shpDims(3, 2), 1), shpT(i32, nil, 0)}},
		{`func.func @main(%op: tensor<4x2xi32>, %src: tensor<2x2xi32>, %i: tensor<i32>) -> tensor<4x2xi32> {
  %0 = "stablehlo.select_and_scatter"(%op, %src, %i) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %c = "stablehlo.compare"(%x, %y) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = "stablehlo.add"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%s) : (tensor<i32>) -> ()
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<4x2xi32>, tensor<2x2xi32>, tensor<i32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}`, []Value{shpIota(i32, shpDims(4, 2), 0), shpIota(i32, shpDims(2, 2), 0), shpT(i32, nil, 0)}},
		{shpSortSrc("tensor<2x3xi64>", "tensor<2x3xi64>", "i64", "i64", "0", "true", shpCmpOp("stablehlo.compare", "GT", "i64", "a", "b", "")),
			[]Value{shpIota(i64, shpDims(2, 3), 0), shpIota(i64, shpDims(2, 3), 0)}},
		{shpGatherSrc("tensor<2x3x4x2xi32>", "tensor<2x2x3x2xi64>", "tensor<2x2x3x2x2xi32>",
			"offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [2, 1], index_vector_dim = 3", "1, 1, 2, 2"),
			[]Value{shpIota(i32, shpDims(2, 3, 4, 2), 1), shpIota(i64, shpDims(2, 2, 3, 2), -3)}},
		{shpScatterSrc("tensor<2x3x4x2xi64>", "tensor<2x2x3x2xi64>", "tensor<2x2x3x2x2xi64>", "i64",
			"update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3",
			shpAddBody("stablehlo.add", "i64")),
			[]Value{shpIota(i64, shpDims(2, 3, 4, 2), 1), shpIota(i64, shpDims(2, 2, 3, 2), -5), ones}},
		{`func.func @main(%a: tensor<2x3xi32>, %i: tensor<2x2xi32>) -> tensor<2x2xi32> {
  %0 = "stablehlo.torch_index_select"(%a, %i) {dim = 1 : i64, batch_dims = 1 : i64} : (tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}`, []Value{shpIota(i32, shpDims(2, 3), 1), shpT(i32, shpDims(2, 2), 2, 0, 1, 1)}},
		{`func.func @main(%s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 1 : i64} : (tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}`, []Value{shpT(i64, shpDims(2), 2, 3)}},
		{`func.func @main(%i: tensor<i32>, %x: tensor<2xi64>) -> tensor<2xi64> {
  %r = "stablehlo.case"(%i) ({
    "stablehlo.return"(%x) : (tensor<2xi64>) -> ()
  }) : (tensor<i32>) -> tensor<2xi64>
  %t = "stablehlo.tuple"(%r, %x) : (tensor<2xi64>, tensor<2xi64>) -> tuple<tensor<2xi64>, tensor<2xi64>>
  %e = "stablehlo.get_tuple_element"(%t) {index = 1 : i32} : (tuple<tensor<2xi64>, tensor<2xi64>>) -> tensor<2xi64>
  return %e : tensor<2xi64>
}`, []Value{shpT(i32, nil, 7), shpT(i64, shpDims(2), 1, 2)}},
		{`func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %m = "shptest.cmp"(%x, %y) {dir = "LT"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%m) : (tensor<i1>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}`, []Value{shpIota(f32, shpDims(3), 0), shpIota(f32, shpDims(3), 1)}},
	}
}

var shpFuzzOps = map[string]bool{}

func init() {
	for _, n := range []string{"reshape", "transpose", "broadcast_in_dim", "broadcast", "slice", "dynamic_slice",
		"dynamic_update_slice", "concatenate", "pad", "reverse", "get_dimension_size", "set_dimension_size",
		"reduce", "reduce_window", "select_and_scatter", "sort", "gather", "dynamic_gather", "scatter",
		"torch_index_select", "dynamic_broadcast_in_dim", "dynamic_iota", "dynamic_pad", "dynamic_reshape",
		"real_dynamic_slice", "while", "if", "case", "map", "tuple", "get_tuple_element", "optimization_barrier",
		"composite", "create_token", "after_all"} {
		shpFuzzOps["stablehlo."+n] = true
	}
	shpFuzzOps["func.call"] = true
}

// shpMutate changes a few attributes or result types of the ops of m.
func shpMutate(r *rand.Rand, m *stablehlo.Module) {
	rv := func() int64 {
		switch r.Intn(6) {
		case 0:
			return -1 - int64(r.Intn(3))
		case 1:
			return 1 << 20
		default:
			return int64(r.Intn(6))
		}
	}
	ints := func(v []int64) []int64 {
		v = append([]int64(nil), v...)
		switch r.Intn(4) {
		case 0:
			if len(v) > 0 {
				v = v[:len(v)-1]
			}
		case 1:
			v = append(v, rv())
		default:
			if len(v) > 0 {
				v[r.Intn(len(v))] = rv()
			}
		}
		return v
	}
	m.Walk(func(op *stablehlo.Op) bool {
		// Only the ops of these kernel files: the elementwise kernels in the
		// regions are not under test here.
		if !shpFuzzOps[op.Name] || r.Intn(3) != 0 {
			return true
		}
		for i := range op.Attrs {
			if r.Intn(2) != 0 {
				continue
			}
			switch a := op.Attrs[i].Value.(type) {
			case stablehlo.DenseArrayAttr:
				op.Attrs[i].Value = stablehlo.DenseArrayAttr{DType: a.DType, Values: ints(a.Values)}
			case stablehlo.IntAttr:
				op.Attrs[i].Value = stablehlo.IntAttr{Value: rv(), Type: a.Type}
			case stablehlo.DenseElementsAttr:
				if len(a.Data) >= 8 {
					d := append([]byte(nil), a.Data...)
					binary.LittleEndian.PutUint64(d[8*r.Intn(len(d)/8):], uint64(rv()))
					op.Attrs[i].Value = stablehlo.DenseElementsAttr{Type: a.Type, Data: d, Splat: a.Splat}
				}
			case stablehlo.GatherDimensionNumbers:
				switch r.Intn(6) {
				case 0:
					a.OffsetDims = ints(a.OffsetDims)
				case 1:
					a.CollapsedSliceDims = ints(a.CollapsedSliceDims)
				case 2:
					a.OperandBatchingDims = ints(a.OperandBatchingDims)
				case 3:
					a.StartIndicesBatchingDims = ints(a.StartIndicesBatchingDims)
				case 4:
					a.StartIndexMap = ints(a.StartIndexMap)
				default:
					a.IndexVectorDim = rv()
				}
				op.Attrs[i].Value = a
			case stablehlo.ScatterDimensionNumbers:
				switch r.Intn(6) {
				case 0:
					a.UpdateWindowDims = ints(a.UpdateWindowDims)
				case 1:
					a.InsertedWindowDims = ints(a.InsertedWindowDims)
				case 2:
					a.InputBatchingDims = ints(a.InputBatchingDims)
				case 3:
					a.ScatterIndicesBatchingDims = ints(a.ScatterIndicesBatchingDims)
				case 4:
					a.ScatterDimsToOperandDims = ints(a.ScatterDimsToOperandDims)
				default:
					a.IndexVectorDim = rv()
				}
				op.Attrs[i].Value = a
			}
		}
		if r.Intn(4) == 0 {
			for _, res := range op.Results {
				if tt, ok := res.Type.(stablehlo.TensorType); ok {
					res.Type = stablehlo.TensorType{DType: tt.DType, Dims: ints(tt.Dims)}
				}
			}
		}
		return true
	})
}

func TestKernelsNeverPanic(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	progs := shpFuzzPrograms()
	iters := 20000
	if testing.Short() {
		iters = 2000
	}
	ran, failed := 0, 0
	for it := 0; it < iters; it++ {
		p := progs[it%len(progs)]
		m, err := stablehlo.Parse([]byte(p.src))
		require.NoError(t, err)
		if it >= len(progs) { // the first round runs the programs unchanged
			shpMutate(r, m)
		}
		_ = m.Verify() // an error or nil, never a panic
		prog, err := Compile(m, "")
		if err != nil {
			continue
		}
		_, err = prog.Run(context.Background(), Device{}, p.args)
		if err == nil {
			ran++
			continue
		}
		failed++
		require.False(t, strings.Contains(err.Error(), "internal error"), "program %d, iteration %d: %v\n%s", it%len(progs), it, err, m)
		if it < len(progs) {
			t.Fatalf("unmutated program %d fails: %v", it, err)
		}
	}
	t.Logf("%d runs succeeded, %d failed with errors", ran, failed)
}

// A malformed tensor handed in from outside is an error, not a panic.
func TestMalformedTensorOperands(t *testing.T) {
	src := shpUnary("tensor<2x3xi32>", "tensor<3x2xi32>", `"stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>}`)
	bad := &Tensor{Shape: xla.MakeShape(xla.Int32, 2, 3), Data: []int32{1, 2}}
	assert := require.New(t)
	msg := shpRunErr(t, src, bad)
	assert.Contains(msg, "holds 2 elements")
	bad = &Tensor{Shape: xla.MakeShape(xla.Int32, 2, 3), Data: make([]float32, 6)}
	assert.Contains(shpRunErr(t, src, bad), "holds []float32")
}
