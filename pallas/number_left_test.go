package pallas

import (
	"fmt"
	"math"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
)

// TestNumberOnTheLeft: Sub, Div, Rem, FloorDiv, Mod, Pow, Atan2, Shl and
// Shr with a Go number on the left take the other side's dtype and give
// what the methods give with that number as a constant, on every backend;
// a value on the left is the method itself.
func TestNumberOnTheLeft(t *testing.T) {
	xs := []float64{1, -2, 3.5, 0.25, -7, 2, 5, -0.5}
	ns := []int64{0, 1, 3, 7, 2, 5, 4, 6}
	c := tritonCase{name: "number_left", kernel: func(k *Kernel, r []*Ref) {
		x, n := r[0].Load(), r[1].Load()
		r[2].Store(Sub(1.0, x))
		r[3].Store(Div(1.0, x))
		r[4].Store(Rem(10.0, x))
		r[5].Store(FloorDiv(10.0, x))
		r[6].Store(Mod(10.0, x))
		r[7].Store(Pow(2.0, x))
		r[8].Store(Atan2(1.0, x))
		r[9].Store(Shl(1, n))
		r[10].Store(Shr(-256, n))
		r[11].Store(Sub(x, 1.0)) // a value on the left: x.Sub(1)
	}, spec: CallSpec{Name: "number_left", OutShapes: []xla.Shape{
		xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8),
		xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8),
		xla.MakeShape(xla.Int32, 8), xla.MakeShape(xla.Int32, 8), xla.MakeShape(xla.Float32, 8)}},
		args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return xs[i] }),
			intTensor(xla.Int32, []int64{8}, func(i int) int64 { return ns[i] })}}
	f32 := func(v float64) float64 { return float64(float32(v)) }
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		for i, x := range xs {
			assert.Equal(t, f32(1-x), floats(outs[0])[i], "%s: 1 - %v", backend, x)
			assert.InDelta(t, 1/x, floats(outs[1])[i], 1e-6, "%s: 1 / %v", backend, x)
			assert.Equal(t, f32(math.Mod(10, x)), floats(outs[2])[i], "%s: rem(10, %v)", backend, x)
			assert.Equal(t, math.Floor(10/x), floats(outs[3])[i], "%s: 10 // %v", backend, x)
			m := math.Mod(10, x)
			if m != 0 && (m < 0) != (x < 0) {
				m += x
			}
			assert.Equal(t, f32(m), floats(outs[4])[i], "%s: 10 %% %v", backend, x)
			assert.InDelta(t, math.Pow(2, x), floats(outs[5])[i], 1e-5*math.Pow(2, x), "%s: 2 ** %v", backend, x)
			assert.InDelta(t, math.Atan2(1, x), floats(outs[6])[i], 1e-6, "%s: atan2(1, %v)", backend, x)
			assert.Equal(t, f32(x-1), floats(outs[9])[i], "%s: %v - 1", backend, x)
		}
		for i, n := range ns {
			assert.Equal(t, int64(1)<<n, ints(t, outs[7])[i], "%s: 1 << %d", backend, n)
			assert.Equal(t, int64(-256)>>n, ints(t, outs[8])[i], "%s: -256 >> %d", backend, n)
		}
	})
}

// TestNumberOnTheLeftMisuse: two Go numbers, a float on the left of an
// integer value, a Ref on the left: errors naming the op and the line.
func TestNumberOnTheLeftMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}
	runMisuseCases(t, []misuseCase{
		{name: "two numbers", kernel: func(k *Kernel, r []*Ref) { Sub(1, 2) }, spec: spec,
			want: []string{"sub", "neither operand is a kernel value (*pallas.Value): one side must be", "number_left_test.go:"}},
		{name: "a float left of an integer", kernel: func(k *Kernel, r []*Ref) { Shl(1.5, k.Iota(xla.Int32, 0, 4)) }, spec: spec,
			want: []string{"shl at number_left_test.go:", "1.5"}},
		{name: "a ref on the left", kernel: func(k *Kernel, r []*Ref) { Div(r[0], k.Zeros(xla.Float32, 4)) }, spec: spec,
			want: []string{"div at number_left_test.go:", "operand 0: a Ref is not a value; read it with Load"}},
		{name: "a nil value on the left", kernel: func(k *Kernel, r []*Ref) { var v *Value; Pow(v, 2.0) }, spec: spec,
			want: []string{"pow", "operand 0 is nil"}},
		{name: "a nil value on the right", kernel: func(k *Kernel, r []*Ref) { var v *Value; Sub(1, v) }, spec: spec,
			want: []string{"sub", "operand 1 is nil", "number_left_test.go:"}},
		{name: "a ref on the right", kernel: func(k *Kernel, r []*Ref) { Sub(1.0, r[0]) }, spec: spec,
			want: []string{"sub", "operand 1: a Ref is not a value; read it with Load", "number_left_test.go:"}},
	})
}

// TestNumberOnTheLeftAfterTheTrace: a value kept past its Call names the
// op it was given to (not the constant made for the number).
func TestNumberOnTheLeftAfterTheTrace(t *testing.T) {
	var kept *Value
	_, err := runCall(func(k *Kernel, r []*Ref) {
		kept = r[0].Load()
		r[1].Store(kept)
	}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}, fTensor([]int64{4}, func(i int) float64 { return 1 }))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		r := recover()
		assert.Contains(t, fmt.Sprint(r), "sub: uses a Value, Ref or Kernel of a kernel or index map whose trace has ended")
	}()
	Sub(1.0, kept)
	t.Error("no panic")
}
