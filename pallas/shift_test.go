package pallas

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
)

// TestShifts: Shl and Shr on every integer width, signed and unsigned, in
// interpret mode and as Triton (the TTIR evaluator fails on LLVM's
// poison: a shift by the width or more), against Go with XLA's rule for
// amounts outside [0, bits): read as unsigned, they give 0, or the sign
// fill shifting a signed value right.
func TestShifts(t *testing.T) {
	for _, dt := range []xla.DType{xla.Int8, xla.Uint8, xla.Int16, xla.Uint16, xla.Int32, xla.Uint32, xla.Int64, xla.Uint64} {
		t.Run(dt.String(), func(t *testing.T) {
			bits := int64(dt.Bits())
			xs := []int64{1, -1, 5, -100, 1 << (bits - 2), -1 << (bits - 1), 0x55, 3, 7, -7, 12, 1, 2, 9, 100, -2}
			amounts := []int64{0, 1, 2, bits - 1, bits, bits + 1, -1, 3, 4, bits / 2, 2 * bits, 1, 0, 7, bits - 2, -bits}
			x := intTensor(dt, []int64{16}, func(i int) int64 { return xs[i] })
			y := intTensor(dt, []int64{16}, func(i int) int64 { return amounts[i] })
			c := tritonCase{name: "shifts_" + dt.String(), kernel: func(k *Kernel, r []*Ref) {
				a, n := r[0].Load(), r[1].Load()
				r[2].Store(a.Shl(n))
				r[3].Store(a.Shr(n))
				r[4].Store(a.Shl(3).Shr(2)) // Go-number amounts
			}, spec: CallSpec{Name: "shifts", OutShapes: []xla.Shape{xla.MakeShape(dt, 16), xla.MakeShape(dt, 16), xla.MakeShape(dt, 16)}},
				args: []*interpreter.Tensor{x, y}}
			xv, yv := ints(t, x), ints(t, y)
			want := [3][]int64{}
			for i := range xv {
				want[0] = append(want[0], wantShift(dt, "shl", xv[i], yv[i]))
				want[1] = append(want[1], wantShift(dt, "shr", xv[i], yv[i]))
				want[2] = append(want[2], wantShift(dt, "shr", wantShift(dt, "shl", xv[i], 3), 2))
			}
			interp, err := runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
			if opt := mliropt.Path(); opt != "" {
				p, err := Trace(c.kernel, c.spec, argTypes(c.args))
				require.NoError(t, err)
				k, err := LowerTriton(p, CompilerParams{})
				require.NoError(t, err)
				_, err = mliropt.Run(opt, k.IR)
				require.NoError(t, err, "--- input ---\n%s", k.IR)
			}
			gpu := runTritonEval(t, c)
			for o := range want {
				require.Equal(t, want[o], ints(t, interp[o]), "interpret mode, output %d", o)
				require.Equal(t, want[o], ints(t, gpu[o]), "Triton, output %d", o)
			}
		})
	}
	// Shifts are integer ops: a float or a bool is a trace error.
	_, err := runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Shl(1)) },
		CallSpec{Name: "float_shift", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}, fTensor([]int64{4}, func(int) float64 { return 1 }))
	require.ErrorContains(t, err, "shl at shift_test.go:")
}

// wantShift is XLA's shift of x (a value of dt) by amount.
func wantShift(dt xla.DType, op string, x, amount int64) int64 {
	bits := uint64(dt.Bits())
	amt := uint64(amount)
	if bits < 64 {
		amt &= 1<<bits - 1
	}
	u := dt.IsUnsigned()
	var r int64
	switch {
	case amt >= bits && (op == "shl" || u):
		r = 0
	case amt >= bits:
		r = wrapI(dt, x) >> 63
	case op == "shl":
		r = x << amt
	case u:
		r = int64(uint64(wrapI(dt, x)) >> amt)
	default:
		r = wrapI(dt, x) >> amt
	}
	return wrapI(dt, r)
}

// ints is an integer tensor's elements as int64 (wrapped as wrapI keeps
// them: unsigned ones as their value, u64 as its bits).
func ints(t *testing.T, x *interpreter.Tensor) []int64 {
	t.Helper()
	v := reflect.ValueOf(x.Data)
	out := make([]int64, v.Len())
	for i := range out {
		switch e := v.Index(i); e.Kind() {
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			out[i] = e.Int()
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out[i] = int64(e.Uint())
		default:
			panic(fmt.Sprintf("ints: %v", e.Kind()))
		}
	}
	return out
}
