package pallas

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Bad input through the public API: every case must come back as an error
// naming the problem (a *Error naming the kernel, and for kernel ops the op
// and the user's line), never as a panic. TestTraceErrors, TestTritonErrors
// and TestVmapErrors hold the cases not repeated here.

// noPanic runs f; a panic fails the test with the case's name instead of
// crashing the run.
func noPanic(t *testing.T, name string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: panicked: %v\n%s", name, r, debug.Stack())
		}
	}()
	return f()
}

// requireMisuse checks err is a *Error of kernel (unless "") whose message
// holds every want.
func requireMisuse(t *testing.T, err error, kernel string, want ...string) {
	t.Helper()
	require.Error(t, err, "want an error naming %q", want)
	var pe *Error
	require.True(t, errors.As(err, &pe), "want a *pallas.Error, got %T: %v", err, err)
	if kernel != "" {
		assert.Equal(t, kernel, pe.Kernel, "%v", err)
	}
	for _, w := range want {
		assert.Contains(t, err.Error(), w)
	}
}

type misuseCase struct {
	name   string
	kernel KernelFunc
	spec   CallSpec
	args   []stablehlo.TensorType
	want   []string
}

// callMisuse builds main(args) = CallErr(kernel, spec, args...) (kernel
// name "bad" unless the spec names it) and builds the module.
func callMisuse(t *testing.T, c misuseCase) error {
	t.Helper()
	return noPanic(t, c.name, func() error {
		b := stablehlo.NewBuilder("misuse")
		types := make([]stablehlo.Type, len(c.args))
		for i, a := range c.args {
			types[i] = a
		}
		fb := b.NewFunction("main", types...)
		spec := c.spec
		if spec.Name == "" {
			spec.Name = "bad"
		}
		outs, err := CallErr(fb, c.kernel, spec, fb.Args()...)
		if err != nil {
			return err
		}
		fb.Return(outs...)
		_, err = b.Build()
		return err
	})
}

func runMisuseCases(t *testing.T, cases []misuseCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := callMisuse(t, c)
			kernel := c.spec.Name
			if kernel == "" {
				kernel = "bad"
			}
			requireMisuse(t, err, kernel, c.want...)
		})
	}
}

func f32t(dims ...int64) stablehlo.TensorType { return stablehlo.Tensor(xla.Float32, dims...) }

// copyKernel copies the last input to the first output.
func copyKernel(k *Kernel, r []*Ref) { r[len(r)-1].Store(r[len(r)-2].Load()) }

func TestMisuseCallSpec(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	x4 := []stablehlo.TensorType{f32t(4)}
	nop := func(k *Kernel, r []*Ref) {}
	im := func(idx ...any) IndexMapFunc { return func([]*Value, []*Ref) []any { return idx } }
	runMisuseCases(t, []misuseCase{
		{name: "nil kernel", spec: CallSpec{OutShapes: one}, args: x4, want: []string{"pallas_call", "kernel function is nil"}},
		{name: "no outputs", kernel: nop, args: x4, want: []string{"no OutShapes"}},
		{name: "more InSpecs than operands", kernel: copyKernel, spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{nil, nil}},
			args: x4, want: []string{"2 InSpecs for 1 non-prefetch operands"}},
		{name: "fewer InSpecs than operands", kernel: copyKernel, spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{nil}},
			args: []stablehlo.TensorType{f32t(4), f32t(4)}, want: []string{"1 InSpecs for 2 non-prefetch operands"}},
		{name: "more OutSpecs than outputs", kernel: copyKernel, spec: CallSpec{OutShapes: one, OutSpecs: []*BlockSpec{nil, nil}},
			args: x4, want: []string{"2 OutSpecs for 1 outputs"}},
		{name: "operand with a dynamic dim", kernel: copyKernel, spec: CallSpec{OutShapes: one},
			args: []stablehlo.TensorType{f32t(stablehlo.DynamicDim)}, want: []string{"pallas_call", "operand 0 is tensor<?xf32>", "dynamic or negative dims"}},
		{name: "input block rank", kernel: copyKernel, spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2, 2}}}},
			args: x4, want: []string{"input 0: block shape [2 2] has rank 2, the array f32[4] rank 1"}},
		{name: "output block rank", kernel: nop,
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 2)}, OutSpecs: []*BlockSpec{{BlockShape: []int64{2}}}},
			want: []string{"output 0: block shape [2] has rank 1, the array f32[2,2] rank 2"}},
		{name: "output without a dtype", kernel: nop, spec: CallSpec{OutShapes: []xla.Shape{{Dims: []int64{4}}}},
			want: []string{"output 0 has no dtype"}},
		{name: "output with a negative dim", kernel: nop, spec: CallSpec{OutShapes: []xla.Shape{{DType: xla.Float32, Dims: []int64{-4}}}},
			want: []string{"output 0 has shape"}},
		{name: "zero block dim", kernel: copyKernel, spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{0}}}},
			args: x4, want: []string{"input 0: block shape [0]: dim 0 is not positive"}},
		{name: "negative block dim", kernel: copyKernel, spec: CallSpec{OutShapes: one, OutSpecs: []*BlockSpec{{BlockShape: []int64{-5}}}},
			args: x4, want: []string{"output 0: block shape [-5]: dim 0 is not positive"}},
		{name: "block of an empty dim", kernel: func(k *Kernel, r []*Ref) { r[0].Store(1.0) },
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 0)}, OutSpecs: []*BlockSpec{{BlockShape: []int64{2}}}},
			want: []string{"output 0: block shape [2]: dim 0 of the array f32[0] is empty"}},
		{name: "block too large to pad to", kernel: copyKernel, spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{math.MaxInt64 - 2}}}},
			args: x4, want: []string{"input 0: block shape [9223372036854775805]: the array f32[4] padded to whole blocks has more than 2^63 bytes"}},
		{name: "blocks too large together", kernel: nop,
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)}, OutSpecs: []*BlockSpec{{BlockShape: []int64{1 << 40, 1 << 40}}}},
			want: []string{"output 0: block shape [1099511627776 1099511627776]: the array f32[4,4] padded to whole blocks has more than 2^63 bytes"}},
		{name: "static slice start near the int64 limit", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(int64(math.MaxInt64), 1))) },
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 1)}},
			args: x4, want: []string{"load", "slice of size 1 starting at 9223372036854775807 of dim 0 (size 4)"}},
		{name: "Go bool as a slice start", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(true, 2))) },
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2)}},
			args: x4, want: []string{"load", "want an integer, got the Go bool true"}},
		{name: "Go bool as a loop bound", kernel: func(k *Kernel, r []*Ref) { k.ForLoop(false, true, nil, func(*Value, []*Value) []*Value { return nil }) },
			spec: CallSpec{OutShapes: one}, want: []string{"for", "want an integer, got the Go bool false"}},
		{name: "Go bool as a block index", kernel: copyKernel,
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2)},
				InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func([]*Value, []*Ref) []any { return []any{true} }}}},
			args: x4, want: []string{"want an integer, got the Go bool true"}},
		{name: "negative grid dim", kernel: nop, spec: CallSpec{OutShapes: one, Grid: []int64{2, -3}},
			want: []string{"grid [2 -3]: dim 1 is not positive"}},
		{name: "grid steps overflow", kernel: nop, spec: CallSpec{OutShapes: one, Grid: []int64{1 << 40, 1 << 40}},
			want: []string{"pallas_call", "grid [1099511627776 1099511627776] has more than 9223372036854775807 steps"}},
		{name: "grid too large for interpret mode", kernel: nop, spec: CallSpec{OutShapes: one, Grid: []int64{1 << 16, 1 << 15}},
			want: []string{"interpret", "grid [65536 32768] has 2147483648 steps, more than interpret mode's 2147483647"}},
		{name: "grid too large for Triton", kernel: nop, spec: CallSpec{OutShapes: one, Grid: []int64{1 << 31, 2, 2}, Backend: Triton},
			want: []string{"triton", "more than CUDA's 2147483647"}},
		{name: "index map returns no indices", kernel: copyKernel,
			spec: CallSpec{OutShapes: one, OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: im()}}},
			args: x4, want: []string{"index map of output 0 (f32[2] block of f32[4]) at misuse_test.go:", "returns 0 block indices for an array of rank 1"}},
		{name: "index map returns a float value", kernel: copyKernel, spec: CallSpec{OutShapes: one, Grid: []int64{2},
			InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0].Astype(xla.Float32)} }}}},
			args: x4, want: []string{"index map of input 0", "misuse_test.go:", "want an integer scalar, got f32[]"}},
		{name: "index map returns a vector", kernel: copyKernel, spec: CallSpec{OutShapes: one, Grid: []int64{2},
			InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0].BroadcastTo(2)} }}}},
			args: x4, want: []string{"index map of input 0", "want an integer scalar, got i32[2]"}},
		{name: "index map returns a string", kernel: copyKernel,
			spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: im("0")}}},
			args: x4, want: []string{"index map of input 0", "constant of Go type string"}},
		{name: "index map returns DS", kernel: copyKernel, spec: CallSpec{OutShapes: one, Grid: []int64{2},
			InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{DS(g[0], 1)} }}}},
			args: x4, want: []string{"index map of input 0", "misuse_test.go:", "block index of dim 0 is a ref index (DS(..., 1)): an index map returns which block, a number"}},
		{name: "index map returns All", kernel: copyKernel,
			spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: im(All)}}},
			args: x4, want: []string{"index map of input 0", "block index of dim 0 is a ref index (All)"}},
		{name: "index map returns nil", kernel: copyKernel,
			spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: im(nil)}}},
			args: x4, want: []string{"index map of input 0", "operand is nil"}},
		{name: "index map block out of range", kernel: copyKernel,
			spec: CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: im(2)}}},
			args: x4, want: []string{"index map of input 0", "block index 2 of dim 0 is outside [0, 2)"}},
		{name: "too many prefetch operands", kernel: nop, spec: CallSpec{OutShapes: one, NumScalarPrefetch: 2},
			args: []stablehlo.TensorType{stablehlo.Tensor(xla.Int32, 2)}, want: []string{"NumScalarPrefetch 2 with 1 operands"}},
		{name: "negative prefetch count", kernel: nop, spec: CallSpec{OutShapes: one, NumScalarPrefetch: -1},
			args: x4, want: []string{"NumScalarPrefetch -1 with 1 operands"}},
		// Integer, bool and float prefetch arrays are accepted (scalars in
		// SMEM); complex ones are not.
		{name: "complex prefetch operand", kernel: nop, spec: CallSpec{OutShapes: one, NumScalarPrefetch: 1},
			args: []stablehlo.TensorType{stablehlo.Tensor(xla.Complex64, 2)}, want: []string{"prefetch operand 0 is tensor<2xcomplex<f32>>"}},
		{name: "alias of a missing operand", kernel: copyKernel, spec: CallSpec{OutShapes: one, InputOutputAliases: map[int]int{1: 0}},
			args: x4, want: []string{"input_output_aliases 1 -> 0 out of range (1 operands, 1 outputs)"}},
		{name: "alias to a missing output", kernel: copyKernel, spec: CallSpec{OutShapes: one, InputOutputAliases: map[int]int{0: 1}},
			args: x4, want: []string{"input_output_aliases 0 -> 1 out of range"}},
		{name: "negative alias", kernel: copyKernel, spec: CallSpec{OutShapes: one, InputOutputAliases: map[int]int{-1: 0}},
			args: x4, want: []string{"input_output_aliases -1 -> 0 out of range"}},
		{name: "alias of another dtype", kernel: nop, spec: CallSpec{OutShapes: one, InputOutputAliases: map[int]int{0: 0}},
			args: []stablehlo.TensorType{stablehlo.Tensor(xla.Int32, 4)}, want: []string{"operand 0 (tensor<4xi32>) aliased to output 0 of a different type tensor<4xf32>"}},
		{name: "alias of another shape", kernel: nop, spec: CallSpec{OutShapes: one, InputOutputAliases: map[int]int{0: 0}},
			args: []stablehlo.TensorType{f32t(8)}, want: []string{"operand 0 (tensor<8xf32>) aliased to output 0 of a different type"}},
		{name: "output aliased twice", kernel: nop, spec: CallSpec{OutShapes: one, InputOutputAliases: map[int]int{0: 0, 1: 0}},
			args: []stablehlo.TensorType{f32t(4), f32t(4)}, want: []string{"output 0 aliased to operands"}},
		{name: "scratch without a dtype", kernel: copyKernel, spec: CallSpec{OutShapes: one, ScratchShapes: []xla.Shape{{Dims: []int64{4}}}},
			args: x4, want: []string{"scratch 0 has no dtype"}},
		{name: "scratch with a negative dim", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) },
			spec: CallSpec{OutShapes: one, ScratchShapes: []xla.Shape{{DType: xla.Float32, Dims: []int64{-2}}}},
			args: x4, want: []string{"pallas_call", "scratch 0 has shape"}},
	})

	t.Run("operand is not a tensor", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			fb := stablehlo.NewBuilder("m").NewFunction("main", stablehlo.TokenType{})
			_, err := CallErr(fb, copyKernel, CallSpec{Name: "bad", OutShapes: one}, fb.Arg(0))
			return err
		})
		requireMisuse(t, err, "bad", "operand 0 is !stablehlo.token, not a tensor")
	})
	t.Run("nil operand", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			fb := stablehlo.NewBuilder("m").NewFunction("main")
			_, err := CallErr(fb, copyKernel, CallSpec{Name: "bad", OutShapes: one}, nil)
			return err
		})
		requireMisuse(t, err, "bad", "operand 0 is nil")
	})
	t.Run("operand of another function", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			b := stablehlo.NewBuilder("m")
			a := b.NewFunction("a", f32t(4))
			fb := b.NewFunction("main", f32t(4))
			_, err := CallErr(fb, copyKernel, CallSpec{Name: "bad", OutShapes: one}, fb.Arg(0), a.Arg(0))
			return err
		})
		requireMisuse(t, err, "bad", "pallas_call", "operand 1 is defined in another function (@a)")
		// Through Call, Build reports it.
		err = noPanic(t, t.Name(), func() error {
			b := stablehlo.NewBuilder("m")
			a := b.NewFunction("a", f32t(4))
			fb := b.NewFunction("main")
			fb.Return(Call(fb, copyKernel, CallSpec{Name: "bad", OutShapes: one}, a.Arg(0))...)
			_, err := b.Build()
			return err
		})
		requireMisuse(t, err, "bad", "pallas_call", "operand 0 is defined in another function (@a)")
	})
	t.Run("operand of another module", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			other := stablehlo.NewBuilder("other").NewFunction("g", f32t(4))
			fb := stablehlo.NewBuilder("m").NewFunction("main")
			_, err := CallErr(fb, copyKernel, CallSpec{Name: "bad", OutShapes: one}, other.Arg(0))
			return err
		})
		requireMisuse(t, err, "bad", "pallas_call", "operand 0 is not a value of @main visible here")
	})
	t.Run("operand of a closed region", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			fb := stablehlo.NewBuilder("m").NewFunction("main", f32t(4))
			var inner *stablehlo.Value
			fb.While([]*stablehlo.Value{fb.Arg(0)},
				func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) *stablehlo.Value {
					return rb.ScalarOf(xla.Bool, 0)
				},
				func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
					inner = rb.Add(a[0], a[0])
					return []*stablehlo.Value{inner}
				})
			_, err := CallErr(fb, copyKernel, CallSpec{Name: "bad", OutShapes: one}, inner)
			return err
		})
		requireMisuse(t, err, "bad", "pallas_call", "operand 0 is defined in a region of an op of @main, not visible here")
	})
	t.Run("operands of enclosing scopes are the function's", func(t *testing.T) {
		// A call built inside a region may use the region's arguments and
		// the function's values; one of a sibling region may not.
		var inBody, fromCond error
		err := noPanic(t, t.Name(), func() error {
			b := stablehlo.NewBuilder("m")
			fb := b.NewFunction("main", f32t(4))
			var condVal *stablehlo.Value
			res := fb.While([]*stablehlo.Value{fb.Arg(0)},
				func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) *stablehlo.Value {
					condVal = rb.Add(a[0], a[0])
					return rb.ScalarOf(xla.Bool, 0)
				},
				func(rb *stablehlo.FuncBuilder, a []*stablehlo.Value) []*stablehlo.Value {
					spec := CallSpec{Name: "bad", OutShapes: one}
					outs, err := CallErr(rb, func(k *Kernel, r []*Ref) { r[2].Store(r[0].Load().Add(r[1].Load())) }, spec, a[0], fb.Arg(0))
					inBody = err
					// Refused before anything is emitted: the builder
					// records no error.
					_, fromCond = CallErr(rb, copyKernel, spec, condVal)
					if inBody != nil {
						return a
					}
					return outs
				})
			fb.Return(res...)
			_, err := b.Build()
			return err
		})
		require.NoError(t, inBody)
		require.NoError(t, err)
		requireMisuse(t, fromCond, "bad", "pallas_call", "operand 0 is not a value of @main visible here")
	})
	t.Run("nil FuncBuilder", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			_, err := CallErr(nil, copyKernel, CallSpec{Name: "bad", OutShapes: one})
			return err
		})
		requireMisuse(t, err, "bad", "nil FuncBuilder")
		// Call has nowhere to record it; it still returns one value per output.
		outs := []*stablehlo.Value{}
		require.NoError(t, noPanic(t, t.Name(), func() error { outs = Call(nil, copyKernel, CallSpec{OutShapes: one}); return nil }))
		assert.Len(t, outs, 1)
	})
	t.Run("Trace with a nil kernel", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			_, err := Trace(nil, CallSpec{Name: "bad", OutShapes: one}, []stablehlo.TensorType{f32t(4)})
			return err
		})
		requireMisuse(t, err, "bad", "kernel function is nil")
	})
	t.Run("Trace with an operand without a dtype", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			_, err := Trace(copyKernel, CallSpec{Name: "bad", OutShapes: one}, []stablehlo.TensorType{{Dims: []int64{4}}})
			return err
		})
		requireMisuse(t, err, "bad", "pallas_call", "operand 0 has no dtype")
	})
	t.Run("Trace with a negative operand dim", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			_, err := Trace(copyKernel, CallSpec{Name: "bad", OutShapes: one}, []stablehlo.TensorType{f32t(-3)})
			return err
		})
		requireMisuse(t, err, "bad", "pallas_call", "operand 0 is tensor<-3xf32>")
	})
}

func TestMisuseKernelOps(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	x4 := []stablehlo.TensorType{f32t(4)}
	spec := CallSpec{OutShapes: one}
	grid2 := CallSpec{OutShapes: one, Grid: []int64{2}}
	f := func(k *Kernel, shape ...int64) *Value { return k.Zeros(xla.Float32, shape...) }
	var nilValue *Value
	var nilRef *Ref
	runMisuseCases(t, []misuseCase{
		// Indexing.
		{name: "load with too many indices", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(0, 1)) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "2 indices for input 0 (f32[4] block of f32[4]) of rank 1"}},
		{name: "store with too many indices", kernel: func(k *Kernel, r []*Ref) { r[1].Store(1.0, 0, 0) }, spec: spec, args: x4,
			want: []string{"store at misuse_test.go:", "2 indices for output 0 (f32[4] block of f32[4]) of rank 1"}},
		{name: "slice past the end", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(Slice(2, 6)).Sum()) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "slice 2:6 of dim 0 (size 4)"}},
		{name: "reversed slice", kernel: func(k *Kernel, r []*Ref) { r[1].Store(1.0, Slice(3, 1)) }, spec: spec, args: x4,
			want: []string{"store at misuse_test.go:", "slice 3:1 of dim 0 (size 4)"}},
		{name: "dynamic slice of negative size", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(k.ProgramID(0), -1)).Sum()) }, spec: grid2, args: x4,
			want: []string{"load at misuse_test.go:", "dynamic slice of size -1 of dim 0 (size 4)"}},
		{name: "unmasked dynamic slice longer than the dim", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(k.ProgramID(0), 8)).Sum()) }, spec: grid2, args: x4,
			want: []string{"load at misuse_test.go:", "dynamic slice of size 8 of dim 0 (size 4)"}},
		{name: "dynamic slice with a static start past the end", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(3, 2)).Sum()) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "slice 3:5 of dim 0 (size 4)"}},
		{name: "dynamic slice with a vector start", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(k.Arange(2), 2)).Sum()) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "want an integer scalar, got i32[2]"}},
		{name: "index of an unsupported type", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load("0")) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "index 0 has unsupported type string"}},
		{name: "float index array", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(f(k, 4))) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "index 0 is f32[4], not an integer"}},
		{name: "float mask", kernel: func(k *Kernel, r []*Ref) { Store(r[1], nil, 1.0, f(k, 4)) }, spec: spec, args: x4,
			want: []string{"store at misuse_test.go:", "mask is f32[4], not bool"}},
		{name: "other without a mask", kernel: func(k *Kernel, r []*Ref) { r[1].Store(Load(r[0], nil, nil, 1.0)) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "other given without a mask"}},
		{name: "masked complex load without other", kernel: func(k *Kernel, r []*Ref) { r[1].Store(Load(r[0], nil, k.Arange(4).Lt(2), nil)) },
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Complex64, 4)}}, args: []stablehlo.TensorType{{DType: xla.Complex64, Dims: []int64{4}}},
			want: []string{"load at misuse_test.go:", "a masked load of a complex<f32> ref needs other"}},
		{name: "store of the wrong shape", kernel: func(k *Kernel, r []*Ref) { r[1].Store(f(k, 3)) }, spec: spec, args: x4,
			want: []string{"store at misuse_test.go:", "value of shape [3] does not broadcast to the indexed shape [4]"}},
		{name: "store of a higher rank", kernel: func(k *Kernel, r []*Ref) { r[1].Store(f(k, 1, 4)) }, spec: spec, args: x4,
			want: []string{"store at misuse_test.go:", "value of shape [1 4] does not broadcast to the indexed shape [4]"}},
		{name: "store of the wrong dtype", kernel: func(k *Kernel, r []*Ref) { r[1].Store(k.Zeros(xla.Int32, 4)) }, spec: spec, args: x4,
			want: []string{"store at misuse_test.go:", "value is i32[4], the ref holds f32"}},
		{name: "store of a ref", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0]) }, spec: spec, args: x4,
			want: []string{"store at misuse_test.go:", "a Ref is not a value; read it with Load"}},

		// Value ops.
		{name: "dot of mismatched shapes", kernel: func(k *Kernel, r []*Ref) { Dot(f(k, 2, 3), f(k, 2, 3), xla.Invalid) }, spec: spec,
			want: []string{"dot at misuse_test.go:", "contracting dims differ: f32[2,3] and f32[2,3]"}},
		{name: "dot of mismatched ranks", kernel: func(k *Kernel, r []*Ref) { Dot(f(k, 2, 2), f(k, 2), xla.Invalid) }, spec: spec,
			want: []string{"dot at misuse_test.go:", "operands must be both 2-D (matrices) or both of one rank above 2 (batches of them), got f32[2,2] and f32[2]"}},
		{name: "dot of mismatched dtypes", kernel: func(k *Kernel, r []*Ref) { Dot(f(k, 2, 2), k.Zeros(xla.Int32, 2, 2), xla.Invalid) }, spec: spec,
			want: []string{"dot at misuse_test.go:", "operand dtypes differ"}},
		{name: "dot into bool", kernel: func(k *Kernel, r []*Ref) { Dot(f(k, 2, 2), f(k, 2, 2), xla.Bool) }, spec: spec,
			want: []string{"dot at misuse_test.go:", "preferred type i1 is not a number type"}},
		{name: "reshape to another size", kernel: func(k *Kernel, r []*Ref) { f(k, 4).Reshape(3) }, spec: spec,
			want: []string{"reshape at misuse_test.go:", "cannot reshape f32[4] to [3]"}},
		{name: "reshape to negative dims", kernel: func(k *Kernel, r []*Ref) { f(k, 4).Reshape(-2, -2) }, spec: spec,
			want: []string{"reshape at misuse_test.go:", "negative dim in shape [-2 -2]"}},
		{name: "broadcast to a negative dim", kernel: func(k *Kernel, r []*Ref) { f(k).BroadcastTo(-1) }, spec: spec,
			want: []string{"broadcast_in_dim at misuse_test.go:", "negative dim in shape [-1]"}},
		{name: "iota of a negative dim", kernel: func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, -3) }, spec: spec,
			want: []string{"iota at misuse_test.go:", "negative dim in shape [-3]"}},
		{name: "reduce over a missing axis", kernel: func(k *Kernel, r []*Ref) { r[0].Store(f(k, 4, 2).Sum(2)) }, spec: spec,
			want: []string{"reduce at misuse_test.go:", "bad axes [2] for rank 2"}},
		{name: "reduce over an axis twice", kernel: func(k *Kernel, r []*Ref) { f(k, 4, 2).ReduceMax(1, -1) }, spec: spec,
			want: []string{"reduce at misuse_test.go:", "bad axes [1 -1] for rank 2"}},
		{name: "transpose with a bad permutation", kernel: func(k *Kernel, r []*Ref) { f(k, 2, 2).Transpose(0, 0) }, spec: spec,
			want: []string{"transpose at misuse_test.go:", "bad permutation [0 0]"}},
		{name: "num_programs of a negative axis", kernel: func(k *Kernel, r []*Ref) { k.NumPrograms(-1) }, spec: grid2,
			want: []string{"num_programs at misuse_test.go:", "axis -1 outside the grid of rank 1"}},

		// Control flow.
		{name: "when on a vector", kernel: func(k *Kernel, r []*Ref) { k.When(k.Zeros(xla.Bool, 2), func() {}) }, spec: spec,
			want: []string{"when at misuse_test.go:", "condition must be a bool scalar, got i1[2]"}},
		{name: "when on an integer", kernel: func(k *Kernel, r []*Ref) { k.When(k.ProgramID(0), func() {}) }, spec: grid2,
			want: []string{"when at misuse_test.go:", "condition must be a bool scalar, got i32[]"}},
		{name: "when with a nil body", kernel: func(k *Kernel, r []*Ref) { k.When(k.ProgramID(0).Eq(0), nil) }, spec: grid2,
			want: []string{"when at misuse_test.go:", "body is nil"}},
		{name: "loop body returns too many values", kernel: func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2, []*Value{f(k)}, func(i *Value, c []*Value) []*Value { return []*Value{c[0], c[0]} })
		}, spec: spec, want: []string{"for at misuse_test.go:", "body returns 2 values, the carry has 1"}},
		{name: "loop body returns no values", kernel: func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2, []*Value{f(k), f(k)}, func(i *Value, c []*Value) []*Value { return nil })
		}, spec: spec, want: []string{"for at misuse_test.go:", "body returns 0 values, the carry has 2"}},
		{name: "loop body returns another shape", kernel: func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2, []*Value{f(k)}, func(i *Value, c []*Value) []*Value { return []*Value{c[0].BroadcastTo(2)} })
		}, spec: spec, want: []string{"for at misuse_test.go:", "body returns f32[2] for carry 0 of type f32[]"}},
		{name: "loop body returns nil", kernel: func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2, []*Value{f(k)}, func(i *Value, c []*Value) []*Value { return []*Value{nil} })
		}, spec: spec, want: []string{"for at misuse_test.go:", "operand 0 is nil"}},
		{name: "loop with a float bound", kernel: func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2.5, nil, func(i *Value, c []*Value) []*Value { return nil })
		}, spec: spec, want: []string{"for at misuse_test.go:", "want an integer, got the Go float64 2.5"}},
		{name: "loop with a nil body", kernel: func(k *Kernel, r []*Ref) { k.ForLoop(0, 2, []*Value{f(k)}, nil) }, spec: spec,
			want: []string{"for at misuse_test.go:", "body is nil"}},
		{name: "while condition is not bool", kernel: func(k *Kernel, r []*Ref) {
			k.While([]*Value{f(k)}, func(c []*Value) *Value { return c[0] }, func(c []*Value) []*Value { return c })
		}, spec: spec, want: []string{"while", "condition must be a bool scalar, got f32[]"}},
		{name: "while body returns another dtype", kernel: func(k *Kernel, r []*Ref) {
			k.While([]*Value{f(k)}, func(c []*Value) *Value { return c[0].Lt(1) }, func(c []*Value) []*Value { return []*Value{c[0].Astype(xla.Int32)} })
		}, spec: spec, want: []string{"while", "body returns i32[] for carry 0 of type f32[]"}},
		{name: "while with a nil condition", kernel: func(k *Kernel, r []*Ref) { k.While([]*Value{f(k)}, nil, func(c []*Value) []*Value { return c }) },
			spec: spec, want: []string{"while at misuse_test.go:", "condition or body is nil"}},
		// A While condition only reads: a store in it (in a When or loop
		// inside it too) is refused by tracing, whatever the backend.
		{name: "store in a while condition", kernel: storeInWhileCond(false), spec: spec,
			want: []string{"store at misuse_test.go:", "stores to output 0 (f32[4] block of f32[4]) inside the condition of a While"}},
		{name: "store in a while condition on Triton", kernel: storeInWhileCond(false), spec: CallSpec{OutShapes: one, Backend: Triton},
			want: []string{"store at misuse_test.go:", "inside the condition of a While"}},
		{name: "store in a when in a while condition", kernel: storeInWhileCond(true), spec: spec,
			want: []string{"store at misuse_test.go:", "inside the condition of a While"}},
		{name: "store in a when in a while condition on Triton", kernel: storeInWhileCond(true), spec: CallSpec{OutShapes: one, Backend: Triton},
			want: []string{"store at misuse_test.go:", "inside the condition of a While"}},

		// Nil values and refs.
		{name: "nil receiver", kernel: func(k *Kernel, r []*Ref) { nilValue.Add(1) }, spec: spec,
			want: []string{"add at misuse_test.go:", "operand 0 is nil"}},
		{name: "nil receiver of a unary op", kernel: func(k *Kernel, r []*Ref) { nilValue.Exp() }, spec: spec,
			want: []string{"exp at misuse_test.go:", "operand 0 is nil"}},
		{name: "nil receiver of a comparison", kernel: func(k *Kernel, r []*Ref) { nilValue.Lt(1) }, spec: spec,
			want: []string{"cmp at misuse_test.go:", "operand 0 is nil"}},
		{name: "nil receiver of a reduction", kernel: func(k *Kernel, r []*Ref) { nilValue.Sum() }, spec: spec,
			want: []string{"reduce at misuse_test.go:", "operand 0 is nil"}},
		{name: "nil receiver of a reshape", kernel: func(k *Kernel, r []*Ref) { nilValue.Reshape(4) }, spec: spec,
			want: []string{"reshape at misuse_test.go:", "operand 0 is nil"}},
		{name: "nil receiver of a convert", kernel: func(k *Kernel, r []*Ref) { nilValue.Astype(xla.Int32) }, spec: spec,
			want: []string{"convert at misuse_test.go:", "operand 0 is nil"}},
		{name: "value not made by a trace", kernel: func(k *Kernel, r []*Ref) { (&Value{Type: Type{DType: xla.Float32}}).Neg() }, spec: spec,
			want: []string{"neg at misuse_test.go:", "operand 0 is not a value of a kernel trace"}},
		{name: "dot of a nil first operand", kernel: func(k *Kernel, r []*Ref) { Dot(nil, f(k, 2, 2), xla.Invalid) }, spec: spec,
			want: []string{"dot at misuse_test.go:", "operand 0 is nil"}},
		{name: "dot of a nil second operand", kernel: func(k *Kernel, r []*Ref) { Dot(f(k, 2, 2), nil, xla.Invalid) }, spec: spec,
			want: []string{"dot at misuse_test.go:", "operand 1 is nil"}},
		{name: "where with a nil condition", kernel: func(k *Kernel, r []*Ref) { r[0].Store(Where(nil, 1.0, 2.0)) }, spec: spec,
			want: []string{"select at misuse_test.go:", "condition is nil"}},
		{name: "where with a nil value", kernel: func(k *Kernel, r []*Ref) { Where(k.Zeros(xla.Bool, 4), nilValue, 2.0) }, spec: spec,
			want: []string{"select at misuse_test.go:", ": x is nil"}},
		{name: "store of a nil value", kernel: func(k *Kernel, r []*Ref) { r[0].Store(nilValue) }, spec: spec,
			want: []string{"store at misuse_test.go:", ": value is nil"}},
		// Values that do not fit what they are used as.
		{name: "bool compared with 2", kernel: func(k *Kernel, r []*Ref) { k.Zeros(xla.Bool, 4).Eq(2) }, spec: spec,
			want: []string{"cmp at misuse_test.go:", "constant 2 is not a bool"}},
		{name: "2 stored into a bool ref", kernel: func(k *Kernel, r []*Ref) { r[0].Store(2) },
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Bool, 4)}}, want: []string{"store at misuse_test.go:", "constant 2 is not a bool"}},
		{name: "reshape past 2^63 elements", kernel: func(k *Kernel, r []*Ref) { f(k, 0).Reshape(1<<32, 1<<32) }, spec: spec,
			want: []string{"reshape at misuse_test.go:", "more than 2^63 elements"}},
		{name: "order of complex values", kernel: func(k *Kernel, r []*Ref) { r[0].Load().Lt(r[0].Load()) }, spec: spec,
			args: []stablehlo.TensorType{stablehlo.Tensor(xla.Complex64, 4)}, want: []string{"cmp at misuse_test.go:", "complex values have no order (LT)"}},
		{name: "nil index", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(nilValue)) }, spec: spec, args: x4,
			want: []string{"load at misuse_test.go:", "index 0 is a nil *Value"}},
		{name: "load from a nil ref", kernel: func(k *Kernel, r []*Ref) { r[0].Store(nilRef.Load()) }, spec: spec,
			want: []string{"load at misuse_test.go:", "ref is nil"}},
		{name: "store to a nil ref", kernel: func(k *Kernel, r []*Ref) { Store(nilRef, nil, 1.0, nil) }, spec: spec,
			want: []string{"store at misuse_test.go:", "ref is nil"}},
		{name: "store to a ref not made by a trace", kernel: func(k *Kernel, r []*Ref) { (&Ref{}).Store(1.0) }, spec: spec,
			want: []string{"store at misuse_test.go:", "ref is not a kernel argument"}},
		{name: "error before a nil receiver", kernel: func(k *Kernel, r []*Ref) { k.Full(xla.Int8, 300); nilValue.Add(1) }, spec: spec,
			// Errors are sticky: the first one is reported.
			want: []string{"const at misuse_test.go:", "constant 300 overflows i8"}},
	})
}

// storeInWhileCond is a kernel whose While condition stores to its
// output, in a When inside the condition when inWhen.
func storeInWhileCond(inWhen bool) KernelFunc {
	return func(k *Kernel, r []*Ref) {
		res := k.While([]*Value{k.Const(xla.Int32, 0)}, func(c []*Value) *Value {
			if inWhen {
				k.When(c[0].Eq(1), func() { r[0].Store(1.0) })
			} else {
				r[0].Store(c[0].Astype(xla.Float32).BroadcastTo(4))
			}
			return c[0].Lt(3)
		}, func(c []*Value) []*Value { return []*Value{c[0].Add(1)} })
		r[0].Store(res[0].Astype(xla.Float32).BroadcastTo(4))
	}
}

// TestMisuseAcrossTraces uses Values, Refs and the Kernel of one trace in
// another: the error is the second kernel's.
func TestMisuseAcrossTraces(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	var (
		leakedK   *Kernel
		leakedV   *Value
		leakedRef *Ref
		mapV      *Value
		mapRef    *Ref
	)
	first := misuseCase{name: "first", kernel: func(k *Kernel, r []*Ref) {
		leakedK, leakedV, leakedRef = k, k.Zeros(xla.Float32, 4), r[2]
		r[2].Store(r[1].Load())
	}, spec: CallSpec{Name: "first", OutShapes: one, NumScalarPrefetch: 1, Grid: []int64{1},
		InSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, pf []*Ref) []any {
			mapV, mapRef = g[0], pf[0]
			return []any{g[0]}
		}}}}, args: []stablehlo.TensorType{stablehlo.Tensor(xla.Int32, 2), f32t(4)}}
	require.NoError(t, callMisuse(t, first))
	require.NotNil(t, leakedV)

	second := CallSpec{Name: "second", OutShapes: one}
	runMisuseCases(t, []misuseCase{
		{name: "value of another kernel as an operand", kernel: func(k *Kernel, r []*Ref) { r[0].Store(leakedV) }, spec: second,
			want: []string{"store at misuse_test.go:", "comes from another kernel, index map or a closed region"}},
		{name: "op on a value of another kernel", kernel: func(k *Kernel, r []*Ref) { leakedV.Add(1) }, spec: second,
			want: []string{"misuse_test.go:", "whose trace has ended"}},
		{name: "op on a value of another kernel used here", kernel: func(k *Kernel, r []*Ref) { r[0].Store(leakedV.Exp()) }, spec: second,
			want: []string{"exp at misuse_test.go:", "whose trace has ended"}},
		{name: "store to a ref of another kernel", kernel: func(k *Kernel, r []*Ref) { leakedRef.Store(1.0) }, spec: second,
			want: []string{"store at misuse_test.go:", "whose trace has ended"}},
		{name: "load from a ref of another kernel", kernel: func(k *Kernel, r []*Ref) { r[0].Store(leakedRef.Load()) }, spec: second,
			want: []string{"load at misuse_test.go:", "whose trace has ended"}},
		{name: "the Kernel of another kernel", kernel: func(k *Kernel, r []*Ref) { r[0].Store(leakedK.Zeros(xla.Float32, 4)) }, spec: second,
			want: []string{"const at misuse_test.go:", "whose trace has ended"}},
		{name: "a loop on the Kernel of another kernel", kernel: func(k *Kernel, r []*Ref) {
			leakedK.ForLoop(0, 2, nil, func(*Value, []*Value) []*Value { return nil })
		}, spec: second, want: []string{"misuse_test.go:", "whose trace has ended"}},
		{name: "index map value in another kernel", kernel: func(k *Kernel, r []*Ref) { r[0].Store(mapV.Astype(xla.Float32)) }, spec: second,
			want: []string{"convert at misuse_test.go:", "whose trace has ended"}},
		{name: "prefetch ref of an index map in another kernel", kernel: func(k *Kernel, r []*Ref) { r[0].Store(mapRef.Load(0).Astype(xla.Float32)) }, spec: second,
			want: []string{"load at misuse_test.go:", "whose trace has ended"}},
	})

	// Within one call: a value of an index map used in the kernel body.
	var inMap *Value
	err := callMisuse(t, misuseCase{name: "index map value in the body", kernel: func(k *Kernel, r []*Ref) {
		r[1].Store(r[0].Load().Add(inMap.Astype(xla.Float32)))
	}, spec: CallSpec{Name: "same", OutShapes: one, Grid: []int64{2},
		InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { inMap = g[0]; return []any{g[0]} }}},
		OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}},
		args: []stablehlo.TensorType{f32t(4)}})
	requireMisuse(t, err, "same", "convert at misuse_test.go:", "whose trace has ended")
}

func TestMisuseTriton(t *testing.T) {
	t.Run("nil program", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error { _, err := LowerTriton(nil, CompilerParams{}); return err })
		requireMisuse(t, err, "", "triton", "nil program")
	})

	// A traced copy kernel with a 2-D block whose minor dim is not a power
	// of two, lowered directly.
	t.Run("non power of two block", func(t *testing.T) {
		blk := &BlockSpec{BlockShape: []int64{4, 3}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{0, g[0]} }}
		spec := CallSpec{Name: "k43", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 6)}, Grid: []int64{2},
			InSpecs: []*BlockSpec{blk}, OutSpecs: []*BlockSpec{blk}}
		p, err := Trace(copyKernel, spec, []stablehlo.TensorType{f32t(4, 6)})
		require.NoError(t, err)
		err = noPanic(t, t.Name(), func() error { _, err := LowerTriton(p, CompilerParams{}); return err })
		requireMisuse(t, err, "k43", "input 0 (f32[4,3] block of f32[4,6])", "power-of-two block dims")
		// Not the index map's line (maps are often shared between
		// specs): the ref names the spec, and Call adds its own line.
		assert.NotContains(t, err.Error(), "at misuse_test.go:")
	})

	loopKernel := func(k *Kernel, r []*Ref) {
		out := k.ForLoop(0, 2, []*Value{r[0].Load()}, func(i *Value, c []*Value) []*Value { return []*Value{c[0].Exp()} })
		r[1].Store(out[0])
	}
	traceLoop := func(t *testing.T) (*Program, *Op) {
		p, err := Trace(loopKernel, CallSpec{Name: "kl", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}, []stablehlo.TensorType{f32t(4)})
		require.NoError(t, err)
		var exp *Op
		for _, op := range p.Body.Ops {
			if op.Name == "for" {
				for _, inner := range op.Regions[0].Ops {
					if inner.Name == "exp" {
						exp = inner
					}
				}
			}
		}
		require.NotNil(t, exp)
		return p, exp
	}
	t.Run("op without a lowering in a loop", func(t *testing.T) {
		p, exp := traceLoop(t)
		exp.Name = "exp_fast" // an op the lowering does not know
		err := noPanic(t, t.Name(), func() error { _, err := LowerTriton(p, CompilerParams{}); return err })
		requireMisuse(t, err, "kl", `triton: exp_fast at misuse_test.go:`, `op "exp_fast" has no Triton lowering`)
	})
	t.Run("operand used before its definition", func(t *testing.T) {
		p, exp := traceLoop(t)
		exp.Operands[0] = &Value{Type: exp.Operands[0].Type, ID: 9999}
		err := noPanic(t, t.Name(), func() error { _, err := LowerTriton(p, CompilerParams{}); return err })
		requireMisuse(t, err, "kl", "triton: exp at misuse_test.go:", "operand %9999 is not defined before its use")
	})
	t.Run("launch settings", func(t *testing.T) {
		p, _ := traceLoop(t)
		err := noPanic(t, t.Name(), func() error { _, err := LowerTriton(p, CompilerParams{NumWarps: 64}); return err })
		requireMisuse(t, err, "kl", "NumWarps 64 is not a power of two in [1, 32]")
		err = noPanic(t, t.Name(), func() error { _, err := LowerTriton(p, CompilerParams{NumStages: -1}); return err })
		requireMisuse(t, err, "kl", "NumStages -1 is not in [1, 2147483647]")
		err = noPanic(t, t.Name(), func() error { _, err := LowerTriton(p, CompilerParams{NumStages: 1 << 32}); return err })
		requireMisuse(t, err, "kl", "NumStages 4294967296 is not in [1, 2147483647]")
	})
}

// TestMisuseLoweringErrors: whatever a lowering fails with (its own error
// or an op it emitted) comes back as a *Error naming the kernel and
// wrapping the cause.
func TestMisuseLoweringErrors(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	boom := errors.New("boom")
	const raw, badOp Backend = "test-raw-error", "test-bad-op"
	RegisterBackend(raw, func(fb *stablehlo.FuncBuilder, p *Program, c *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error) {
		return nil, boom
	})
	RegisterBackend(badOp, func(fb *stablehlo.FuncBuilder, p *Program, c *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error) {
		// An op on a value of another module fails in the builder; the
		// lowering returns the builder's error, as the interpret lowering
		// does.
		other := stablehlo.NewBuilder("other").NewFunction("g", f32t(4))
		fb.Add(operands[0], other.Arg(0))
		return nil, fb.Err()
	})
	const panics Backend = "test-panic"
	RegisterBackend(panics, func(fb *stablehlo.FuncBuilder, p *Program, c *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error) {
		var m map[string]int
		m["x"] = 1 // a lowering's bug
		return nil, nil
	})
	const none, wrong Backend = "test-no-outputs", "test-wrong-output"
	RegisterBackend(none, func(fb *stablehlo.FuncBuilder, p *Program, c *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error) {
		return nil, nil
	})
	RegisterBackend(wrong, func(fb *stablehlo.FuncBuilder, p *Program, c *CallSpec, operands []*stablehlo.Value) ([]*stablehlo.Value, error) {
		return []*stablehlo.Value{fb.Convert(operands[0], xla.Int32)}, nil
	})
	defer RegisterBackend(raw, nil)
	defer RegisterBackend(badOp, nil)
	defer RegisterBackend(panics, nil)
	defer RegisterBackend(none, nil)
	defer RegisterBackend(wrong, nil)

	// A lowering's outputs are checked against OutShapes (one that
	// returned none left callers indexing an empty slice; found in
	// review).
	err := callMisuse(t, misuseCase{name: "no outputs", kernel: copyKernel, spec: CallSpec{Name: "lw", OutShapes: one, Backend: none}, args: []stablehlo.TensorType{f32t(4)}})
	requireMisuse(t, err, "lw", "pallas_call", "test-no-outputs lowering returned 0 outputs for 1 OutShapes")
	err = callMisuse(t, misuseCase{name: "wrong output", kernel: copyKernel, spec: CallSpec{Name: "lw", OutShapes: one, Backend: wrong}, args: []stablehlo.TensorType{f32t(4)}})
	requireMisuse(t, err, "lw", "pallas_call", "test-wrong-output lowering returned output 0 of type tensor<4xi32>, not tensor<4xf32>")

	// A lowering that panics fails the call instead (nothing panics out of
	// Call; interpret mode's padding of a zero-size block divided by
	// zero, found in review).
	err = callMisuse(t, misuseCase{name: "panic", kernel: copyKernel, spec: CallSpec{Name: "lw", OutShapes: one, Backend: panics}, args: []stablehlo.TensorType{f32t(4)}})
	requireMisuse(t, err, "lw", "pallas_call", "test-panic lowering: panic: assignment to entry in nil map")

	err = callMisuse(t, misuseCase{name: "raw", kernel: copyKernel, spec: CallSpec{Name: "lw", OutShapes: one, Backend: raw}, args: []stablehlo.TensorType{f32t(4)}})
	requireMisuse(t, err, "lw", "pallas_call", "test-raw-error lowering: boom")
	assert.ErrorIs(t, err, boom)

	err = callMisuse(t, misuseCase{name: "bad op", kernel: copyKernel, spec: CallSpec{Name: "lw", OutShapes: one, Backend: badOp}, args: []stablehlo.TensorType{f32t(4)}})
	requireMisuse(t, err, "lw", "pallas_call", "test-bad-op lowering:", "stablehlo.add")
	var be *stablehlo.BuildError
	assert.ErrorAs(t, err, &be)
}

// TestTritonCallWithoutOperands: a kernel without inputs (it writes an
// iota) lowers to a custom call with empty operand layouts next to its
// result layouts.
func TestTritonCallWithoutOperands(t *testing.T) {
	err := callMisuse(t, misuseCase{name: "no operands", kernel: func(k *Kernel, r []*Ref) {
		r[0].Store(k.Arange(8).Astype(xla.Float32))
	}, spec: CallSpec{Name: "iota8", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Backend: Triton}})
	require.NoError(t, err)
}

func TestMisuseVmap(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	// Reads row 0 of its input: with the input's batch flag missing it
	// would read the first batch element in every program.
	row := func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(0)) }
	vmapCall := func(t *testing.T, kernel KernelFunc, spec CallSpec, batch int64, batched []bool, args ...stablehlo.TensorType) error {
		t.Helper()
		return noPanic(t, t.Name(), func() error {
			vk, vspec, err := Vmap(kernel, spec, batch, batched)
			if err != nil {
				return err
			}
			return callMisuse(t, misuseCase{name: t.Name(), kernel: vk, spec: vspec, args: args})
		})
	}
	t.Run("batched flags missing", func(t *testing.T) {
		err := vmapCall(t, row, CallSpec{Name: "v", OutShapes: one}, 3, nil, f32t(3, 4, 4))
		requireMisuse(t, err, "v", "Vmap was given batched flags for 0 operands, the call has 1")
	})
	t.Run("too many batched flags", func(t *testing.T) {
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one}, 3, []bool{true, true}, f32t(3, 4))
		requireMisuse(t, err, "v", "Vmap was given batched flags for 2 operands, the call has 1")
	})
	t.Run("fewer batched flags than prefetch operands", func(t *testing.T) {
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, NumScalarPrefetch: 2}, 3, []bool{false})
		requireMisuse(t, err, "v", "vmap", "1 batched flags (one per operand) for NumScalarPrefetch 2: fewer than the prefetch operands")
	})
	t.Run("batched flags and InSpecs disagree", func(t *testing.T) {
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, InSpecs: []*BlockSpec{nil, nil}}, 3, []bool{true})
		requireMisuse(t, err, "v", "vmap", "1 batched flags (one per operand) for a call of 2 (0 scalar-prefetch, 2 InSpecs)")
	})
	t.Run("OutSpecs and outputs disagree", func(t *testing.T) {
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, OutSpecs: []*BlockSpec{nil, nil}}, 3, []bool{true})
		requireMisuse(t, err, "v", "vmap", "2 OutSpecs for 1 outputs")
	})
	t.Run("index map errors point at the user's map", func(t *testing.T) {
		blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }}
		mapLine := lineOf(t, "IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }")
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, Grid: []int64{2}, InSpecs: []*BlockSpec{blk}}, 2, []bool{true}, f32t(2, 4))
		requireMisuse(t, err, "v", fmt.Sprintf("at misuse_test.go:%d", mapLine), "returns 2 block indices for an array of rank 1")
		far := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{5} }}
		farLine := lineOf(t, "IndexMap: func(g []*Value, _ []*Ref) []any { return []any{5} }")
		err = vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, Grid: []int64{2}, InSpecs: []*BlockSpec{far}}, 2, []bool{true}, f32t(2, 4))
		requireMisuse(t, err, "v", fmt.Sprintf("at misuse_test.go:%d", farLine), "block index 5 of dim 0 is outside [0, 2)")
		// An operand Vmap leaves unbatched: its map's own numbers.
		err = vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, Grid: []int64{2}, InSpecs: []*BlockSpec{blk}}, 2, []bool{false}, f32t(4))
		requireMisuse(t, err, "v", fmt.Sprintf("at misuse_test.go:%d", mapLine), "returns 2 block indices for an array of rank 1")
		// Block shapes as written, without Vmap's squeezed batch dims.
		err = vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, Grid: []int64{2},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{0}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}}, 2, []bool{true}, f32t(2, 4))
		requireMisuse(t, err, "v", "pallas_call", "output 0: block shape [0]: dim 0 is not positive")
		err = vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, Grid: []int64{2},
			InSpecs: []*BlockSpec{{BlockShape: []int64{2, 2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{0, g[0]} }}}}, 2, []bool{true}, f32t(2, 4))
		requireMisuse(t, err, "v", "pallas_call", "input 0: block shape [2 2] has rank 2, the array f32[4] rank 1")
		// Only the batched array may overflow: it is shown whole.
		err = vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, Grid: []int64{1},
			InSpecs: []*BlockSpec{{BlockShape: []int64{3}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}}, 2, []bool{true}, f32t(2, 1<<61))
		requireMisuse(t, err, "v", "pallas_call", "input 0: block shape [3]: the array f32[2,2305843009213693952] (with the 1 batch dims of Vmap) padded to whole blocks has more than 2^63 bytes")
	})
	t.Run("unbatched operand aliased to an output", func(t *testing.T) {
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, InputOutputAliases: map[int]int{0: 0}}, 3, []bool{false}, f32t(4))
		requireMisuse(t, err, "v", "vmap", "operand 0 is aliased to output 0 (InputOutputAliases) but not batched")
	})
	t.Run("negative batch", func(t *testing.T) {
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one}, -2, []bool{true})
		requireMisuse(t, err, "v", "vmap", "batch size -2 is not positive")
	})
	t.Run("nested Vmap with another operand count", func(t *testing.T) {
		err := noPanic(t, t.Name(), func() error {
			ik, ispec, err := Vmap(copyKernel, CallSpec{Name: "v", OutShapes: one}, 3, []bool{true})
			require.NoError(t, err)
			_, _, err = Vmap(ik, ispec, 2, []bool{true, false})
			return err
		})
		requireMisuse(t, err, "v", "vmap", "2 batched flags for the 1 operands of the inner Vmap")
	})
	t.Run("batched scalar", func(t *testing.T) {
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one}, 3, []bool{true}, f32t())
		requireMisuse(t, err, "v", "batched input 0 has rank 0, fewer than its 1 batch dims")
	})
	t.Run("batched leading dim is not the batch size", func(t *testing.T) {
		// Rows of x (f32[3,4]) against batch sizes 2 (a row would be
		// dropped) and 5 (rows read past the end), with a block spec and
		// without (whole array per batch element).
		blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
		blocked := CallSpec{Name: "v", OutShapes: one, Grid: []int64{2}, InSpecs: []*BlockSpec{blk}, OutSpecs: []*BlockSpec{blk}}
		whole := CallSpec{Name: "v", OutShapes: one}
		for _, spec := range []CallSpec{blocked, whole} {
			for _, batch := range []int64{2, 5} {
				err := vmapCall(t, copyKernel, spec, batch, []bool{true}, f32t(3, 4))
				requireMisuse(t, err, "v", "vmap", fmt.Sprintf("operand 0 (tensor<3x4xf32>) is batched: its dim 0 is 3, the batch size is %d", batch))
			}
		}
		// Behind a prefetch operand, the operand index counts it.
		err := vmapCall(t, copyKernel, CallSpec{Name: "v", OutShapes: one, NumScalarPrefetch: 1}, 2, []bool{false, true},
			stablehlo.Tensor(xla.Int32, 2), f32t(3, 4))
		requireMisuse(t, err, "v", "vmap", "operand 1 (tensor<3x4xf32>) is batched: its dim 0 is 3, the batch size is 2")
	})
	t.Run("nested Vmap with a wrong inner batch dim", func(t *testing.T) {
		blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
		for _, spec := range []CallSpec{
			{Name: "v", OutShapes: one, Grid: []int64{2}, InSpecs: []*BlockSpec{blk}, OutSpecs: []*BlockSpec{blk}},
			{Name: "v", OutShapes: one},
		} {
			err := noPanic(t, t.Name(), func() error {
				ik, ispec, err := Vmap(copyKernel, spec, 3, []bool{true})
				require.NoError(t, err)
				ok, ospec, err := Vmap(ik, ispec, 2, []bool{true})
				require.NoError(t, err)
				return callMisuse(t, misuseCase{name: t.Name(), kernel: ok, spec: ospec, args: []stablehlo.TensorType{f32t(2, 4, 4)}})
			})
			requireMisuse(t, err, "v", "vmap", "operand 0 (tensor<2x4x4xf32>) is batched: its dim 1 is 4, the batch size is 3")
		}
	})
	t.Run("program id beyond the unbatched grid", func(t *testing.T) {
		// The kernel sees its own grid (rank 1), not the batch axis.
		err := vmapCall(t, func(k *Kernel, r []*Ref) { k.ProgramID(1) }, CallSpec{Name: "v", OutShapes: one, Grid: []int64{2}}, 3, nil)
		requireMisuse(t, err, "v", "program_id at misuse_test.go:", "axis 1 outside the grid of rank 1")
	})
}

// TestMisuseGoIntegerKinds: a block index or ref index given as a Go
// integer of any kind (or another Go number the IR takes as an integer) is
// checked at trace time like an int, never clamped at run time; unsigned
// values beyond int64 are errors, not wrapped.
func TestMisuseGoIntegerKinds(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	x4 := []stablehlo.TensorType{f32t(4)}
	mapTo := func(idx any) CallSpec {
		return CallSpec{OutShapes: one, Grid: []int64{1},
			InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func([]*Value, []*Ref) []any { return []any{idx} }}}}
	}
	outside := func(i int) []string {
		return []string{"index map of input 0", "misuse_test.go:", fmt.Sprintf("block index %d of dim 0 is outside [0, 2)", i)}
	}
	runMisuseCases(t, []misuseCase{
		{name: "uint32 block index", kernel: copyKernel, spec: mapTo(uint32(5)), args: x4, want: outside(5)},
		{name: "uint block index", kernel: copyKernel, spec: mapTo(uint(2)), args: x4, want: outside(2)},
		{name: "uint8 block index", kernel: copyKernel, spec: mapTo(uint8(3)), args: x4, want: outside(3)},
		{name: "uint16 block index", kernel: copyKernel, spec: mapTo(uint16(7)), args: x4, want: outside(7)},
		{name: "uint64 block index", kernel: copyKernel, spec: mapTo(uint64(2)), args: x4, want: outside(2)},
		{name: "uintptr block index", kernel: copyKernel, spec: mapTo(uintptr(9)), args: x4, want: outside(9)},
		{name: "int8 block index", kernel: copyKernel, spec: mapTo(int8(-1)), args: x4, want: outside(-1)},
		{name: "int16 block index", kernel: copyKernel, spec: mapTo(int16(2)), args: x4, want: outside(2)},
		{name: "float block index", kernel: copyKernel, spec: mapTo(2.0), args: x4, want: []string{"index map of input 0", "want an integer, got the Go float64 2"}},
		{name: "uint64 block index beyond int64", kernel: copyKernel, spec: mapTo(uint64(1) << 63), args: x4,
			want: []string{"index map of input 0", "block index 9223372036854775808 of dim 0 is outside [0, 2)"}},
		{name: "uint64 ref index beyond int64", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(uint64(math.MaxUint64)).BroadcastTo(4)) },
			spec: CallSpec{OutShapes: one}, args: x4, want: []string{"load at misuse_test.go:", "constant 18446744073709551615 overflows int64"}},
		{name: "uint ref index past the end", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(uint(4)).BroadcastTo(4)) },
			spec: CallSpec{OutShapes: one}, args: x4, want: []string{"load at misuse_test.go:", "index 4 is outside dim 0 (size 4)"}},
		{name: "uint32 slice start past the end", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(uint32(3), 2)).Sum().BroadcastTo(4)) },
			spec: CallSpec{OutShapes: one}, args: x4, want: []string{"load at misuse_test.go:", "slice 3:5 of dim 0 (size 4)"}},
		{name: "uint64 slice start beyond int64", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(^uint64(0), 2)).Sum().BroadcastTo(4)) },
			spec: CallSpec{OutShapes: one}, args: x4, want: []string{"load at misuse_test.go:", "overflows int64"}},
	})
}

// TestRecoveredRegionPanicIsAnError: a kernel that recovers a panic of a
// ForLoop (or When) body must not go on tracing into the region that
// never closed (its later ops were silently dropped); the call fails.
func TestRecoveredRegionPanicIsAnError(t *testing.T) {
	x := tensor(t, xla.Float32, []float32{1, 2, 3, 4}, 4)
	spec := CallSpec{Name: "recovers", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1}}
	for name, region := range map[string]func(k *Kernel){
		"for":  func(k *Kernel) { k.ForLoop(0, 2, nil, func(i *Value, c []*Value) []*Value { panic("boom") }) },
		"when": func(k *Kernel) { k.When(k.ProgramID(0).Eq(0), func() { panic("boom") }) },
		// A While's condition too (its store rule outlived the panic and
		// blamed the later store, found in review).
		"while": func(k *Kernel) {
			k.While([]*Value{k.Const(xla.Int32, 0)}, func(c []*Value) *Value { panic("boom") },
				func(c []*Value) []*Value { return c })
		},
	} {
		t.Run(name, func(t *testing.T) {
			kernel := func(k *Kernel, r []*Ref) {
				func() {
					defer func() { recover() }()
					region(k)
				}()
				r[1].Store(r[0].Load().Add(1.0))
			}
			_, err := runCall(kernel, spec, x)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "body panicked and the kernel recovered")
			assert.Contains(t, err.Error(), "misuse_test.go")
		})
	}
}

// TestConstantsOutsideI32: Go constants for loop bounds and block indices
// are checked when the kernel is traced, whatever their size: a loop
// bound outside i32 is an error naming it, a block index outside its
// dim's blocks the usual error (both said "overflows i32").
func TestConstantsOutsideI32(t *testing.T) {
	x := tensor(t, xla.Float32, []float32{1, 2, 3, 4}, 4)
	spec := CallSpec{Name: "wide", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1}}
	loop := func(k *Kernel, r []*Ref) {
		s := k.ForLoop(0, int64(1)<<40, []*Value{k.Zeros(xla.Float32, 4)}, func(i *Value, c []*Value) []*Value { return c })
		r[1].Store(r[0].Load().Add(s[0]))
	}
	_, err := runCall(loop, spec, x)
	require.ErrorContains(t, err, "the constant 1099511627776 is outside i32")
	require.ErrorContains(t, err, "misuse_test.go")
	spec.InSpecs = []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{int64(1) << 40} }}}
	_, err = runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Sum().BroadcastTo(4)) }, spec, x)
	require.ErrorContains(t, err, "block index 1099511627776 of dim 0 is outside [0, 2)")
	spec.InSpecs = []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{^uint64(0)} }}}
	_, err = runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Sum().BroadcastTo(4)) }, spec, x)
	require.ErrorContains(t, err, "block index 18446744073709551615 of dim 0 is outside [0, 2)")
}

// TestMisuseAliasedRead: loading an input after storing to the output
// aliased to it reads different values on a GPU (one buffer) and in
// interpret mode (the input as it came), so it is refused for both; a
// load before the first store, or of an input no output aliases, is fine.
func TestMisuseAliasedRead(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 4)}
	spec := CallSpec{OutShapes: one, InputOutputAliases: map[int]int{0: 0}}
	args := []stablehlo.TensorType{f32t(4), f32t(4)}
	runMisuseCases(t, []misuseCase{
		{name: "load after store", kernel: func(k *Kernel, r []*Ref) {
			r[2].Store(r[0].Load().Mul(2))
			r[3].Store(r[0].Load())
		}, spec: spec, args: args, want: []string{"load at misuse_test.go:", "input 0 (f32[4] block of f32[4]) is the memory of the output aliased to it"}},
		{name: "load in a loop after the last iteration's store", kernel: func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value {
				r[2].Store(r[0].Load().Add(1))
				return nil
			})
			r[3].Store(r[1].Load())
		}, spec: spec, args: args, want: []string{"load at misuse_test.go:", "load it before the first store"}},
	})
	// A scalar-prefetch array aliased to an output: loads in the kernel
	// after a store, and index maps reading it at all once the kernel
	// stores to it (a GPU's later programs would read the stored values).
	pspec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32, 4)},
		NumScalarPrefetch: 1, InputOutputAliases: map[int]int{0: 0}, Grid: []int64{2}}
	pargs := []stablehlo.TensorType{stablehlo.Tensor(xla.Int32, 4)}
	bySlot := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0]).Rem(2)} }}
	mapped := pspec
	mapped.OutSpecs = []*BlockSpec{nil, bySlot}
	runMisuseCases(t, []misuseCase{
		{name: "prefetch load after store", kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load().Mul(10))
			r[2].Store(r[0].Load().Add(1))
		}, spec: pspec, args: pargs, want: []string{"load at misuse_test.go:", "prefetch 0", "load it before the first store"}},
		{name: "index map reads a stored prefetch array", kernel: func(k *Kernel, r []*Ref) {
			v, w := r[0].Load(), r[0].Load(Slice(0, 2))
			r[1].Store(v.Mul(10))
			r[2].Store(w)
		}, spec: mapped, args: pargs, want: []string{"index map at misuse_test.go:", "prefetch 0", "later programs would read the stored values"}},
	})
	require.NoError(t, callMisuse(t, misuseCase{name: "prefetch loaded first", kernel: func(k *Kernel, r []*Ref) {
		v := r[0].Load()
		r[1].Store(v.Mul(10))
		r[2].Store(v.Add(1))
	}, spec: pspec, args: pargs}))
	for _, k := range []KernelFunc{
		func(k *Kernel, r []*Ref) { v := r[0].Load(); r[2].Store(v.Mul(2)); r[3].Store(v) },
		func(k *Kernel, r []*Ref) { r[3].Store(r[1].Load()); r[2].Store(r[0].Load().Add(r[1].Load(0))) },
	} {
		require.NoError(t, callMisuse(t, misuseCase{name: "fine", kernel: k, spec: spec, args: args}))
	}
}

// lineOf is the line of this file holding text (once).
func lineOf(t *testing.T, text string) int {
	t.Helper()
	src, err := os.ReadFile("misuse_test.go")
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	found := 0
	for i, l := range lines {
		if strings.Contains(l, text) && !strings.Contains(l, "lineOf(") {
			require.Zero(t, found, "%q is on lines %d and %d", text, found, i+1)
			found = i + 1
		}
	}
	require.NotZero(t, found, "%q is not in misuse_test.go", text)
	return found
}

// Shapes past 2^63 elements are trace errors wherever an op makes one (a
// masked slice's indexed shape, a broadcast, a dot), not sizes that wrap
// to 0 and pass the lowerings' limits (found in review).
func TestShapesPastInt64AreErrors(t *testing.T) {
	spec := CallSpec{Name: "huge", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 2)}}
	for name, kernel := range map[string]KernelFunc{
		"masked slices": func(k *Kernel, r []*Ref) {
			Store(r[0], []any{Slice(0, 1<<32), Slice(0, 1<<32)}, 1.0, k.Const(xla.Bool, false))
		},
		"dot": func(k *Kernel, r []*Ref) {
			z := k.Zeros(xla.Float32, 1<<32, 1)
			r[0].Store(Dot(z, z.T(), xla.Float32).Reshape(0).Sum().BroadcastTo(2, 2))
		},
	} {
		_, err := Trace(kernel, spec, nil)
		require.ErrorContains(t, err, "has more than 2^63 elements", name)
	}
	assert.Equal(t, int64(math.MaxInt64), Type{DType: xla.Float32, Shape: []int64{1 << 32, 1 << 32}}.Size())
}

// TestLowerTritonChecksThePrograms: a Program built or edited by hand
// that breaks the shape the lowering relies on is an error naming what
// is wrong, not a crash.
func TestLowerTritonChecksThePrograms(t *testing.T) {
	spec := CallSpec{Name: "h", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}
	args := []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 4)}
	copyK := func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load()) }
	for name, c := range map[string]struct {
		edit func(p *Program)
		want string
	}{
		"refs dropped": {func(p *Program) { p.Refs = nil }, "0 Refs for 0 prefetch, 1 input, 1 output and 0 scratch refs"},
		"grid of zero": {func(p *Program) { p.Grid = []int64{0} }, "axis 0 is not positive"},
		"bare program": {func(p *Program) { *p = Program{Name: "h", Body: &Region{}, NumOutputs: 1} }, "0 Refs for"},
		"no maps":      {func(p *Program) { p.IndexMaps = nil }, "0 index maps for 1 inputs and 1 outputs"},
		"kinds":        {func(p *Program) { p.Refs[0].Kind = OutputRef }, "ref 0 is not the body's argument 0 of kind input"},
		"negative":     {func(p *Program) { p.NumScratch = -1 }, "a negative ref count"},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := Trace(copyK, spec, args)
			require.NoError(t, err)
			c.edit(p)
			_, err = LowerTriton(p, CompilerParams{})
			require.ErrorContains(t, err, c.want)
			require.NotPanics(t, func() { _ = p.String() })
		})
	}
	require.Equal(t, "<nil program>", (*Program)(nil).String())
	require.NotPanics(t, func() { _ = (&Program{}).String() })
}

// TestAliasedReadsCheckIsLinear: the check that a kernel loads an
// aliased input only before storing its output walks nested loops once
// each (it used to walk each loop's body twice, 2^depth walks: forty
// nested loops would not finish).
func TestAliasedReadsCheckIsLinear(t *testing.T) {
	nested := func(depth int) KernelFunc {
		return func(k *Kernel, r []*Ref) {
			var rec func(d int)
			rec = func(d int) {
				if d == 0 {
					r[1].Store(r[1].Load().Add(1))
					return
				}
				k.ForLoop(0, 1, nil, func(i *Value, c []*Value) []*Value { rec(d - 1); return nil })
			}
			rec(depth)
		}
	}
	spec := CallSpec{Name: "deep", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, InputOutputAliases: map[int]int{0: 0}}
	_, err := Trace(nested(40), spec, []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 4)})
	require.NoError(t, err)
	// A load of the aliased input after the store, a loop iteration later.
	late := func(k *Kernel, r []*Ref) {
		k.ForLoop(0, 2, nil, func(i *Value, c []*Value) []*Value {
			r[1].Store(r[0].Load().Add(1))
			return nil
		})
	}
	_, err = Trace(late, spec, []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 4)})
	require.ErrorContains(t, err, "stored to before this load")
}

// TestIndexErrorsSayWhy: a static index or slice the ref refuses says
// what is wrong with it, and that a negative one does not count from
// the end as in Python.
func TestIndexErrorsSayWhy(t *testing.T) {
	in := []stablehlo.TensorType{stablehlo.Tensor(xla.Float32, 4, 8)}
	spec := CallSpec{Name: "ix", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}
	for _, c := range []struct {
		kernel KernelFunc
		want   string
	}{
		{func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(All, Slice(0, -1)).Sum(1)) }, "slice 0:-1 of dim 1 (size 8) of input 0 (f32[4,8] block of f32[4,8]): its stop is before its start"},
		{func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(All, Slice(-2, 4)).Sum(1)) }, "it reaches outside the dim (mask the access to reach past its ends); a negative index does not count from the end, as in Python: write size-1"},
		{func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(All, DS(6, 4)).Sum(1)) }, "slice 6:10 of dim 1 (size 8)"},
		{func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(All, DS(k.Const(xla.Int32, 0), 9)).Sum(1)) }, "dynamic slice of size 9 of dim 1 (size 8) of input 0 (f32[4,8] block of f32[4,8]): larger than the dim"},
		{func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(-1)) }, "index -1 is outside dim 0 (size 4) of input 0 (f32[4,8] block of f32[4,8]); a negative index does not count from the end"},
	} {
		_, err := Trace(c.kernel, spec, in)
		require.ErrorContains(t, err, c.want)
	}
}

// TestKernelNameNotUTF8: a kernel name that is not UTF-8 is shown the
// same way by trace errors and by the run-time bounds error (whose config
// travels as JSON), with U+FFFD for the bad bytes.
func TestKernelNameNotUTF8(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(DS(k.ProgramID(0).Add(3), 2)).Sum().BroadcastTo(4)) }
	spec := CallSpec{Name: "bad\xffname", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1}}
	_, err := runCall(kernel, spec, tensor(t, xla.Float32, []float32{1, 2, 3, 4}, 4))
	var be *BoundsError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "bad\uFFFDname", be.Kernel)
	p, err := Trace(kernel, spec, []stablehlo.TensorType{f32t(4)})
	require.NoError(t, err)
	require.Equal(t, be.Kernel, p.Name)
}

// TestCompositeErrorsNameTheFunction: an error in an op that a function
// built of other ops made names that function too ("concatenate in
// top_k"), at the user's line, at trace time and when lowering.
func TestCompositeErrorsNameTheFunction(t *testing.T) {
	x := fTensor([]int64{4, 16}, func(i int) float64 { return float64(i % 7) })
	topK := tritonCase{name: "topk", kernel: func(k *Kernel, r []*Ref) {
		v, _ := TopK(r[0].Load(), 3)
		r[1].Store(v.Sum(1))
	}, spec: CallSpec{Name: "topk", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}, args: []*interpreter.Tensor{x}}
	err := lowerTritonErr(t, topK)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "triton: concatenate in top_k at misuse_test.go:")
	assert.Contains(t, err.Error(), "power-of-two count of blocks (pairs joined by tt.join), not 3")

	_, err = runCall(func(k *Kernel, r []*Ref) {
		k.Zeros(xla.Float64, 1<<61).Bitcast(xla.Uint8)
	}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in bitcast at misuse_test.go:")

	// The function's own checks name it alone.
	_, err = runCall(func(k *Kernel, r []*Ref) { TopK(k.Zeros(xla.Float32, 4), 5) },
		CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "top_k at misuse_test.go:")
	assert.NotContains(t, err.Error(), " in top_k")
}
