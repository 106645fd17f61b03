package interpreter

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func tensorOf(t *testing.T, dt xla.DType, vals any, dims ...int64) *Tensor {
	t.Helper()
	x := NewTensor(xla.MakeShape(dt, dims...))
	switch d := x.Data.(type) {
	case []float32:
		copy(d, vals.([]float32))
	case []float64:
		copy(d, vals.([]float64))
	case []int32:
		copy(d, vals.([]int32))
	case []int8:
		copy(d, vals.([]int8))
	case []bool:
		copy(d, vals.([]bool))
	case []complex64:
		copy(d, vals.([]complex64))
	default:
		t.Fatalf("tensorOf: %T", d)
	}
	return x
}

func runChecks(t *testing.T, text string, args ...Value) error {
	t.Helper()
	p := compileText(t, text)
	_, err := p.Run(context.Background(), Device{}, args)
	return err
}

// TestCheckConstHugeSplat: the expected value of a _const check is a
// splat of 1e12 elements: the check fails on the shapes, the splat is not
// expanded (4 TB took the process down); TensorFromAttr refuses it with
// an *AllocError.
func TestCheckConstHugeSplat(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main() {
  %a = stablehlo.constant dense<7> : tensor<3xi32>
  "check.expect_eq_const"(%a) {value = dense<7> : tensor<1000000000000xi32>} : (tensor<3xi32>) -> ()
  return
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	_, err = p.Run(context.Background(), Device{}, nil)
	var ce *CheckError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Contains(t, err.Error(), "got a tensor<3xi32>, expected a tensor<1000000000000xi32>")
	_, err = TensorFromAttr(stablehlo.DenseElementsAttr{Type: stablehlo.Tensor(xla.Int32, 1000000000000), Data: []byte{7, 0, 0, 0}, Splat: true})
	var ae *AllocError
	require.True(t, errors.As(err, &ae), "%v", err)
	got, err := TensorFromAttr(stablehlo.DenseElementsAttr{Type: stablehlo.Tensor(xla.Int32, 3), Data: []byte{7, 0, 0, 0}, Splat: true})
	require.NoError(t, err)
	assert.Equal(t, []int32{7, 7, 7}, got.Data)
}

func TestCheckDialect(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan := float32(math.NaN())
	tests := []struct {
		name string
		body string // uses %a and %b
		a, b *Tensor
		// wantErr is "" for a pass, else a substring of the failure.
		wantErr string
		index   []int64
	}{
		{"eq_const pass", `check.expect_eq_const %a, dense<[1, 2]> : tensor<2xi32>`,
			tensorOf(t, xla.Int32, []int32{1, 2}, 2), nil, "", nil},
		{"eq_const fail", `check.expect_eq_const %a, dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>`,
			tensorOf(t, xla.Int32, []int32{1, 2, 3, 5}, 2, 2), nil, "1 of 4 elements differ; first at index [1, 1]: expected 4, got 5", []int64{1, 1}},
		{"eq_const splat", `check.expect_eq_const %a, dense<7> : tensor<3xi32>`,
			tensorOf(t, xla.Int32, []int32{7, 7, 7}, 3), nil, "", nil},
		{"eq pair NaN matches NaN", `check.expect_eq %a, %b : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{nan, 1}, 2), tensorOf(t, xla.Float32, []float32{nan, 1}, 2), "", nil},
		{"eq pair signed zeros are equal", `check.expect_eq %a, %b : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{1, negZero}, 2), tensorOf(t, xla.Float32, []float32{1, 0}, 2), "", nil},
		{"eq pair float differs", `check.expect_eq %a, %b : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{1, 2}, 2), tensorOf(t, xla.Float32, []float32{1, math.Nextafter32(2, 3)}, 2), "expected 2.0000002, got 2", []int64{1}},
		{"almost_eq signs differ", `check.expect_almost_eq %a, %b : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{1e-6, 0}, 2), tensorOf(t, xla.Float32, []float32{-1e-6, negZero}, 2), "expected -1e-06, got 1e-06", []int64{0}},
		{"eq type mismatch", `check.expect_eq %a, %b : tensor<2xf32>, tensor<3xf32>`,
			tensorOf(t, xla.Float32, []float32{1, 2}, 2), tensorOf(t, xla.Float32, []float32{1, 2, 3}, 3), "got a tensor<2xf32>, expected a tensor<3xf32>", nil},
		{"almost_eq default tolerance", `check.expect_almost_eq %a, %b : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{1.00005, 2}, 2), tensorOf(t, xla.Float32, []float32{1, 2}, 2), "", nil},
		{"almost_eq default tolerance fails", `check.expect_almost_eq %a, %b : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{1.0002, 2}, 2), tensorOf(t, xla.Float32, []float32{1, 2}, 2), "tolerance 0.0001", []int64{0}},
		{"almost_eq tolerance", `check.expect_almost_eq %a, %b, tolerance = 0.01 : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{1.005, 2}, 2), tensorOf(t, xla.Float32, []float32{1, 2}, 2), "", nil},
		{"almost_eq infinity", `check.expect_almost_eq %a, %b : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{float32(math.Inf(1)), 2}, 2), tensorOf(t, xla.Float32, []float32{float32(math.Inf(-1)), 2}, 2), "expected -Inf, got +Inf", []int64{0}},
		{"almost_eq_const", `check.expect_almost_eq_const %a, dense<[0.333333, 2.0]> : tensor<2xf32>`,
			tensorOf(t, xla.Float32, []float32{1.0 / 3, 2}, 2), nil, "", nil},
		{"almost_eq complex", `check.expect_almost_eq %a, %b : tensor<1xcomplex<f32>>`,
			tensorOf(t, xla.Complex64, []complex64{1 + 2i}, 1), tensorOf(t, xla.Complex64, []complex64{1 + 2.1i}, 1), "expected (1+2.1i), got (1+2i)", []int64{0}},
		{"close within 3 ULP", `check.expect_close %a, %b : tensor<1xf32>`,
			tensorOf(t, xla.Float32, []float32{math.Nextafter32(math.Nextafter32(1, 2), 2)}, 1), tensorOf(t, xla.Float32, []float32{1}, 1), "", nil},
		{"close max_ulp_difference", `check.expect_close %a, %b, max_ulp_difference = 1 : tensor<1xf32>`,
			tensorOf(t, xla.Float32, []float32{math.Nextafter32(math.Nextafter32(1, 2), 2)}, 1), tensorOf(t, xla.Float32, []float32{1}, 1), "2 ULP apart, want 0 to 1", []int64{0}},
		{"close min_ulp_difference", `check.expect_close %a, %b, min_ulp_difference = 1, max_ulp_difference = 4 : tensor<1xf32>`,
			tensorOf(t, xla.Float32, []float32{1}, 1), tensorOf(t, xla.Float32, []float32{1}, 1), "0 ULP apart, want 1 to 4", []int64{0}},
		{"close integers are exact", `check.expect_close %a, %b : tensor<2xi8>`,
			tensorOf(t, xla.Int8, []int8{1, 2}, 2), tensorOf(t, xla.Int8, []int8{1, 3}, 2), "expected 3, got 2", []int64{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sig := "%a: " + stablehlo.TensorOf(tc.a.Shape).String()
			args := []Value{tc.a}
			if tc.b != nil {
				sig += ", %b: " + stablehlo.TensorOf(tc.b.Shape).String()
				args = append(args, tc.b)
			}
			err := runChecks(t, "func.func @main("+sig+") {\n  "+tc.body+"\n  return\n}", args...)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Contains(t, err.Error(), "@main")
			var ce *CheckError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tc.index, ce.Index)
		})
	}
}

func TestCheckCustomCalls(t *testing.T) {
	prog := func(target, ty, result string) string {
		return "func.func @main(%a: " + ty + ", %b: " + ty + ") -> (" + result + ") {\n" +
			"  %0 = stablehlo.custom_call @" + target + "(%a, %b) {has_side_effect = true} : (" + ty + ", " + ty + ") -> " + result + "\n" +
			"  return %0 : " + result + "\n}"
	}
	noResult := func(target, ty string) string {
		return "func.func @main(%a: " + ty + ", %b: " + ty + ") {\n" +
			"  stablehlo.custom_call @" + target + "(%a, %b) {has_side_effect = true} : (" + ty + ", " + ty + ") -> ()\n" +
			"  return\n}"
	}
	one := tensorOf(t, xla.Float32, []float32{1, 2}, 2)
	tests := []struct {
		name    string
		text    string
		a, b    *Tensor
		wantErr string
	}{
		{"expect_eq pass", noResult("check.expect_eq", "tensor<2xf32>"), one, one, ""},
		{"expect_eq fail", noResult("check.expect_eq", "tensor<2xf32>"), one, tensorOf(t, xla.Float32, []float32{1, 3}, 2), "@check.expect_eq failed: 1 of 2 elements differ; first at index [1]: expected 3, got 2"},
		{"expect_almost_eq 1e-3", noResult("check.expect_almost_eq", "tensor<2xf32>"), one, tensorOf(t, xla.Float32, []float32{1.0009, 2}, 2), ""},
		{"expect_almost_eq fails past 1e-3", noResult("check.expect_almost_eq", "tensor<2xf32>"), one, tensorOf(t, xla.Float32, []float32{1.002, 2}, 2), "tolerance 0.001"},
		{"expect_close 3 ULP", noResult("check.expect_close", "tensor<2xf32>"), one,
			tensorOf(t, xla.Float32, []float32{1, math.Nextafter32(math.Nextafter32(math.Nextafter32(2, 3), 3), 3)}, 2), ""},
		{"expect_close 4 ULP fails", noResult("check.expect_close", "tensor<2xf32>"), one,
			tensorOf(t, xla.Float32, []float32{1, math.Nextafter32(math.Nextafter32(math.Nextafter32(math.Nextafter32(2, 3), 3), 3), 3)}, 2), "4 ULP apart"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := runChecks(t, tc.text, tc.a, tc.b)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}

	t.Run("check.eq returns true or fails the run", func(t *testing.T) {
		p := compileText(t, prog("check.eq", "tensor<2xf32>", "tensor<i1>"))
		out, err := p.Run(context.Background(), Device{}, []Value{one, tensorOf(t, xla.Float32, []float32{1.00005, 2}, 2)})
		require.NoError(t, err, "floats match within 1e-4")
		assert.Equal(t, []bool{true}, out[0].(*Tensor).Data)
		_, err = p.Run(context.Background(), Device{}, []Value{one, tensorOf(t, xla.Float32, []float32{1, 2.5}, 2)})
		require.Error(t, err)
		var ce *CheckError
		require.True(t, errors.As(err, &ce))
		assert.Equal(t, "2.5", ce.Expected)
		assert.Equal(t, "@check.eq", ce.Check)
		pi := compileText(t, prog("check.eq", "tensor<2xi32>", "tensor<i1>"))
		_, err = pi.Run(context.Background(), Device{}, []Value{tensorOf(t, xla.Int32, []int32{1, 2}, 2), tensorOf(t, xla.Int32, []int32{1, 3}, 2)})
		require.Error(t, err, "integers compare exactly")
	})
}

func TestULPDistance(t *testing.T) {
	negZero := math.Copysign(0, -1)
	tests := []struct {
		dt   xla.DType
		a, b float64
		want uint64
	}{
		{xla.Float32, 1, 1, 0},
		{xla.Float32, 0, negZero, 0},
		{xla.Float32, 1, float64(math.Nextafter32(1, 2)), 1},
		{xla.Float32, float64(math.SmallestNonzeroFloat32), -math.SmallestNonzeroFloat32, 2},
		{xla.Float32, math.MaxFloat32, math.Inf(1), math.MaxUint64},
		{xla.Float32, math.Inf(-1), math.Inf(-1), 0},
		{xla.Float64, 1, math.Nextafter(math.Nextafter(1, 0), 0), 2},
		{xla.BFloat16, 1, 1.0078125, 1},
		{xla.Float16, 1, 1 + 1.0/512, 2},
		{xla.Float8E4M3FN, 448, 416, 1},
		{xla.Float8E4M3FN, -1, 1, 2 * 0x38},
		{xla.Float32, math.NaN(), math.NaN(), 0},
		{xla.Float32, math.NaN(), 1, math.MaxUint64},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, ULPDistance(tc.dt, tc.a, tc.b), "%v %v %v", tc.dt, tc.a, tc.b)
	}
}

func TestCustomCallRegistry(t *testing.T) {
	RegisterCustomCall("test.double", func(c *CustomCall) ([]*Tensor, error) {
		out := c.Operands[0].Clone()
		for i := range out.Data.([]float32) {
			out.Data.([]float32)[i] *= 2
		}
		assert.True(t, c.HasSideEffect)
		assert.Equal(t, stablehlo.StringAttr("cfg"), c.BackendConfig)
		return []*Tensor{out}, nil
	})
	defer RegisterCustomCall("test.double", nil)
	p := compileText(t, `func.func @main(%t: !stablehlo.token, %a: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
  %0:2 = stablehlo.custom_call @test.double(%t, %a) {has_side_effect = true, backend_config = "cfg"} : (!stablehlo.token, tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>)
  return %0#0, %0#1 : !stablehlo.token, tensor<2xf32>
}`)
	require.NoError(t, CheckCustomCallTargets(p.Module))
	out, err := p.Run(context.Background(), Device{}, []Value{Token{}, tensorOf(t, xla.Float32, []float32{1, 2}, 2)})
	require.NoError(t, err)
	assert.Equal(t, Token{}, out[0])
	assert.Equal(t, []float32{2, 4}, out[1].(*Tensor).Data)
	assert.Contains(t, CustomCallTargets(), "test.double")

	t.Run("wrong result type", func(t *testing.T) {
		RegisterCustomCall("test.bad", func(c *CustomCall) ([]*Tensor, error) {
			return []*Tensor{NewTensor(xla.MakeShape(xla.Float32, 3))}, nil
		})
		defer RegisterCustomCall("test.bad", nil)
		err := runChecks(t, `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @test.bad(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`, tensorOf(t, xla.Float32, []float32{1, 2}, 2))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `returned tensor<3xf32> for result 0 of type tensor<2xf32>`)
	})
	t.Run("tuples", func(t *testing.T) {
		// The older custom-call forms pass and return tuples: the handler
		// sees their tensors flattened, in order.
		RegisterCustomCall("test.swap", func(c *CustomCall) ([]*Tensor, error) {
			require.Len(t, c.Operands, 3)
			require.Len(t, c.Results, 3)
			assert.Equal(t, []int64{1}, c.Results[2].Dims)
			return []*Tensor{c.Operands[1], c.Operands[0], c.Operands[2]}, nil
		})
		defer RegisterCustomCall("test.swap", nil)
		p := compileText(t, `func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<1xi32>) -> (tensor<2xf32>, tensor<1xi32>) {
  %in = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<2xf32>>
  %r = stablehlo.custom_call @test.swap(%in, %c) : (tuple<tensor<2xf32>, tensor<2xf32>>, tensor<1xi32>) -> tuple<tuple<tensor<2xf32>, tensor<2xf32>>, tensor<1xi32>>
  %p = stablehlo.get_tuple_element %r[0] : (tuple<tuple<tensor<2xf32>, tensor<2xf32>>, tensor<1xi32>>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  %x = stablehlo.get_tuple_element %p[0] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %i = stablehlo.get_tuple_element %r[1] : (tuple<tuple<tensor<2xf32>, tensor<2xf32>>, tensor<1xi32>>) -> tensor<1xi32>
  return %x, %i : tensor<2xf32>, tensor<1xi32>
}`)
		out, err := p.Run(context.Background(), Device{}, []Value{tensorOf(t, xla.Float32, []float32{1, 2}, 2), tensorOf(t, xla.Float32, []float32{3, 4}, 2), tensorOf(t, xla.Int32, []int32{7}, 1)})
		require.NoError(t, err)
		assert.Equal(t, []float32{3, 4}, out[0].(*Tensor).Data)
		assert.Equal(t, []int32{7}, out[1].(*Tensor).Data)

		RegisterCustomCall("test.swap", func(c *CustomCall) ([]*Tensor, error) {
			return []*Tensor{c.Operands[0], c.Operands[2], c.Operands[2]}, nil
		})
		_, err = p.Run(context.Background(), Device{}, []Value{tensorOf(t, xla.Float32, []float32{1, 2}, 2), tensorOf(t, xla.Float32, []float32{3, 4}, 2), tensorOf(t, xla.Int32, []int32{7}, 1)})
		require.ErrorContains(t, err, "returned tensor<1xi32> for tensor 1 (in tuple result 0) of type tensor<2xf32>")
	})
	t.Run("panic", func(t *testing.T) {
		// The error names the target (it said only "interpreter panic").
		RegisterCustomCall("test.panics", func(c *CustomCall) ([]*Tensor, error) { panic("boom") })
		defer RegisterCustomCall("test.panics", nil)
		err := runChecks(t, `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @test.panics(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`, tensorOf(t, xla.Float32, []float32{1, 2}, 2))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `custom call "test.panics": panicked: boom`)
	})
	t.Run("unknown target", func(t *testing.T) {
		text := `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @no.such.target(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`
		p := compileText(t, text)
		err := CheckCustomCallTargets(p.Module)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"no.such.target" is not registered`)
		assert.Contains(t, err.Error(), "@main")
		_, err = p.Run(context.Background(), Device{}, []Value{tensorOf(t, xla.Float32, []float32{1, 2}, 2)})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"no.such.target" is not registered`)
	})
	t.Run("a GPU kernel", func(t *testing.T) {
		p := compileText(t, `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @__gpu$xla.gpu.triton(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`)
		err := CheckCustomCallTargets(p.Module)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is a kernel for XLA's GPU backend: it runs on a CUDA or ROCm PJRT plugin")
	})
	t.Run("a host callback", func(t *testing.T) {
		// effects' callbacks (a print, pallas's DebugPrint) run through
		// effects.Compile: the error says so (effects is not imported
		// here, so nothing registered the target).
		p := compileText(t, `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  stablehlo.custom_call @halo.effects.callback(%a) {has_side_effect = true} : (tensor<2xf32>) -> ()
  return %a : tensor<2xf32>
}`)
		err := CheckCustomCallTargets(p.Module)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"halo.effects.callback" is a host callback of package effects: compile the program with effects.Compile`)
	})
}

func TestShardingCustomCallIsIdentity(t *testing.T) {
	p := compileText(t, `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{replicated}"} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`)
	a := tensorOf(t, xla.Float32, []float32{1, 2}, 2)
	out, err := p.Run(context.Background(), Device{}, []Value{a})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, out[0].(*Tensor).Data)
}

// A nil context runs as context.Background (it panicked in the first
// op's cancellation check).
func TestRunWithNilContext(t *testing.T) {
	p := compileText(t, `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}`)
	//nolint:staticcheck // a nil context on purpose
	out, err := p.Run(nil, Device{}, []Value{tensorOf(t, xla.Float32, []float32{1, 2}, 2)})
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4}, out[0].(*Tensor).Data)
	//nolint:staticcheck
	outs, err := p.RunSPMD(nil, [][]Value{{tensorOf(t, xla.Float32, []float32{1, 2}, 2)}}, SPMDOptions{})
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4}, outs[0][0].(*Tensor).Data)
}
