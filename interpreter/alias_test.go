package interpreter

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Adversarial programs for the ways a run shares and reuses storage
// (planned in-place ops, loop-owned updates, spare buffers, slice views,
// packed windows, shared constants, reshapes): each runs compiled as usual
// and compiled with all of them off (compileProgram with share false), and
// the results must be the same, bit for bit, on the first run and on the
// second (which starts from recycled storage); the arguments must come
// back untouched, a first run's results must not change when the program
// runs again, and a caller writing into its results must change nothing a
// later run computes. Values are small integers, so that every sum is
// exact in any order.

// aliasInts is a tensor of f32 small integers in [-2, 2] drawn from seed.
func aliasInts(seed uint64, dims ...int64) *Tensor {
	t := NewTensor(xla.MakeShape(xla.Float32, dims...))
	r := rand.New(rand.NewPCG(seed, 7))
	for i, d := 0, t.Data.([]float32); i < len(d); i++ {
		d[i] = float32(r.IntN(5) - 2)
	}
	return t
}

// aliasFill is a tensor of f32 all v.
func aliasFill(v float32, dims ...int64) *Tensor {
	t := NewTensor(xla.MakeShape(xla.Float32, dims...))
	for i, d := 0, t.Data.([]float32); i < len(d); i++ {
		d[i] = v
	}
	return t
}

// sameValue reports whether a and b hold the same values (floats compared
// by their bits).
func sameValue(a, b Value) bool {
	switch a := a.(type) {
	case *Tensor:
		b, ok := b.(*Tensor)
		if !ok || !a.Shape.Equal(b.Shape) {
			return false
		}
		switch ad := a.Data.(type) {
		case []float32:
			bd := b.Data.([]float32)
			for i := range ad {
				if math.Float32bits(ad[i]) != math.Float32bits(bd[i]) {
					return false
				}
			}
			return true
		case []float64:
			bd := b.Data.([]float64)
			for i := range ad {
				if math.Float64bits(ad[i]) != math.Float64bits(bd[i]) {
					return false
				}
			}
			return true
		}
		return reflect.DeepEqual(a.Data, b.Data)
	case Tuple:
		b, ok := b.(Tuple)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func requireSameValues(t *testing.T, want, got []Value, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.True(t, sameValue(want[i], got[i]), "%s: result %d differs", what, i)
	}
}

func cloneValues(vs []Value) []Value {
	out := make([]Value, len(vs))
	for i, v := range vs {
		switch v := v.(type) {
		case *Tensor:
			out[i] = v.Clone()
		case Tuple:
			out[i] = Tuple(cloneValues(v))
		default:
			out[i] = v
		}
	}
	return out
}

// scribble overwrites every element of the tensors in vs.
func scribble(vs []Value) {
	for _, v := range vs {
		switch v := v.(type) {
		case *Tensor:
			switch d := v.Data.(type) {
			case []float32:
				for i := range d {
					d[i] = -999
				}
			case []int32:
				for i := range d {
					d[i] = -999
				}
			}
		case Tuple:
			scribble(v)
		}
	}
}

type aliasCase struct {
	name string
	src  string
	// args makes new arguments (the same values every call).
	args func() []Value
	// check, when set, checks results computed by hand.
	check func(t *testing.T, out []Value)
}

// compileTwice compiles src as usual (shared) and with all storage sharing
// off (plain).
func compileTwice(t *testing.T, src string) (shared, plain *Program) {
	t.Helper()
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err, src)
	shared, err = Compile(m, "")
	require.NoError(t, err, src)
	plain, err = compileProgram(m, "", false)
	require.NoError(t, err, src)
	return shared, plain
}

func runAliasCase(t *testing.T, c aliasCase) {
	t.Helper()
	shared, plain := compileTwice(t, c.src)
	ctx := context.Background()
	want, err := plain.Run(ctx, Device{}, c.args())
	require.NoError(t, err)
	if c.check != nil {
		c.check(t, want)
	}
	args := c.args()
	before := cloneValues(args)
	var first []Value
	for run := 1; run <= 2; run++ {
		got, err := shared.Run(ctx, Device{}, args)
		require.NoError(t, err)
		requireSameValues(t, want, got, fmt.Sprintf("run %d", run))
		if c.check != nil {
			c.check(t, got)
		}
		requireSameValues(t, before, args, fmt.Sprintf("arguments after run %d", run))
		if run == 1 {
			first = got
		}
	}
	requireSameValues(t, want, first, "first run's results after the second")
	// A caller writing into its results (and so into its own arguments
	// where results share them) changes nothing a later run computes.
	got, err := shared.Run(ctx, Device{}, c.args())
	require.NoError(t, err)
	scribble(got)
	again, err := shared.Run(ctx, Device{}, c.args())
	require.NoError(t, err)
	requireSameValues(t, want, again, "run after the caller wrote into results")
}

// matmul is a (m×k) times b (k×n), row-major.
func matmul(a, b []float32, m, k, n int) []float32 {
	c := make([]float32, m*n)
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			av := a[i*k+p]
			for j := 0; j < n; j++ {
				c[i*n+j] += av * b[p*n+j]
			}
		}
	}
	return c
}

// window returns rows r0..r1 and columns c0..c1 of a (rows×cols).
func window(a []float32, cols, r0, r1, c0, c1 int) []float32 {
	var out []float32
	for i := r0; i < r1; i++ {
		out = append(out, a[i*cols+c0:i*cols+c1]...)
	}
	return out
}

func f32s(v Value) []float32 { return v.(*Tensor).Data.([]float32) }

func negated(a []float32) []float32 {
	out := make([]float32, len(a))
	for i, v := range a {
		out[i] = -v
	}
	return out
}

// loopPassThrough is a loop over a carried 16384-element %acc (element i
// set to i+1 at step i, through %sel, a value that %pass makes from %acc)
// that also keeps %acc+%acc, computed after the update, in a second carry.
func loopPassThrough(pass string) string {
	return `func.func @main(%x: tensor<16384xf32>, %p: tensor<i1>) -> (tensor<16384xf32>, tensor<16384xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %acc = %x, %old = %x) : tensor<i32>, tensor<16384xf32>, tensor<16384xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
      %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>
      ` + pass + `
      %upd = stablehlo.dynamic_update_slice %sel, %u, %i : (tensor<16384xf32>, tensor<1xf32>, tensor<i32>) -> tensor<16384xf32>
      %keep = stablehlo.add %acc, %acc : tensor<16384xf32>
      stablehlo.return %i1, %upd, %keep : tensor<i32>, tensor<16384xf32>, tensor<16384xf32>
    }
  return %r#1, %r#2 : tensor<16384xf32>, tensor<16384xf32>
}
` + idFunc("16384")
}

// passThroughs make %sel from %acc, a tensor<{D}xf32>, in ways that hand
// over the same tensor (or its storage); passThrough fills in {D}.
var passThroughs = map[string]string{
	"optimization_barrier": `%sel = "stablehlo.optimization_barrier"(%acc) : (tensor<{D}xf32>) -> tensor<{D}xf32>`,
	"tuple": `%tp = "stablehlo.tuple"(%acc) : (tensor<{D}xf32>) -> tuple<tensor<{D}xf32>>
      %sel = "stablehlo.get_tuple_element"(%tp) {index = 0 : i32} : (tuple<tensor<{D}xf32>>) -> tensor<{D}xf32>`,
	"call":    `%sel = func.call @id(%acc) : (tensor<{D}xf32>) -> tensor<{D}xf32>`,
	"reshape": `%sel = stablehlo.reshape %acc : (tensor<{D}xf32>) -> tensor<{D}xf32>`,
	"bitcast": `%bi = stablehlo.bitcast_convert %acc : (tensor<{D}xf32>) -> tensor<{D}xi32>
      %sel = stablehlo.bitcast_convert %bi : (tensor<{D}xi32>) -> tensor<{D}xf32>`,
	"if": `%sel = "stablehlo.if"(%p) ({
        stablehlo.return %acc : tensor<{D}xf32>
      }, {
        stablehlo.return %acc : tensor<{D}xf32>
      }) : (tensor<i1>) -> tensor<{D}xf32>`,
	"case": `%ix = stablehlo.convert %p : (tensor<i1>) -> tensor<i32>
      %sel = "stablehlo.case"(%ix) ({
        stablehlo.return %acc : tensor<{D}xf32>
      }, {
        stablehlo.return %acc : tensor<{D}xf32>
      }) : (tensor<i32>) -> tensor<{D}xf32>`,
}

// passThrough is passThroughs[name] for an %acc of dims d ("16x1024").
func passThrough(name, d string) string {
	return strings.ReplaceAll(passThroughs[name], "{D}", d)
}

// idFunc is the function @id that the "call" pass-through calls, for a
// tensor of dims d.
func idFunc(d string) string {
	return strings.ReplaceAll(`func.func private @id(%q: tensor<{D}xf32>) -> tensor<{D}xf32> {
  return %q : tensor<{D}xf32>
}`, "{D}", d)
}

// elementwisePassThrough hands %acc (an elementwise result of 16384
// elements) to another value by %pass, then lets %acc die at an elementwise
// op (which may write into it) while the other value is returned.
func elementwisePassThrough(pass string) string {
	return `func.func @main(%x: tensor<16384xf32>, %p: tensor<i1>) -> (tensor<16384xf32>, tensor<16384xf32>) {
  %acc = stablehlo.add %x, %x : tensor<16384xf32>
  ` + pass + `
  %n = stablehlo.negate %acc : tensor<16384xf32>
  %m = stablehlo.multiply %n, %n : tensor<16384xf32>
  return %sel, %m : tensor<16384xf32>, tensor<16384xf32>
}
` + idFunc("16384")
}

func passArgs() []Value {
	return []Value{aliasInts(1, 16384), &Tensor{Shape: xla.MakeShape(xla.Bool), Data: []bool{true}}}
}

// viewLoop carries a 16×1024 %acc whose row 0 is set to i+1 at step i
// (through %sel, made from %acc by %pass before row 0 is sliced), and sums
// row 0 as it was before each step's update times %w (ones): 1024 times
// x's row 0 sum, then 1024·1 and 1024·2.
func viewLoop(pass string) string {
	return `func.func @main(%x: tensor<16x1024xf32>, %w: tensor<1024x16xf32>, %p: tensor<i1>) -> (tensor<16x1024xf32>, tensor<1x16xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %s0 = stablehlo.constant dense<0.0> : tensor<1x16xf32>
  %r:3 = stablehlo.while(%i = %c0, %acc = %x, %sum = %s0) : tensor<i32>, tensor<16x1024xf32>, tensor<1x16xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
      %u = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<1x1024xf32>
      ` + pass + `
      %v = stablehlo.dynamic_slice %acc, %z, %z, sizes = [1, 1024] : (tensor<16x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1024xf32>
      %upd = stablehlo.dynamic_update_slice %sel, %u, %z, %z : (tensor<16x1024xf32>, tensor<1x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<16x1024xf32>
      %d = stablehlo.dot_general %v, %w, contracting_dims = [1] x [0] : (tensor<1x1024xf32>, tensor<1024x16xf32>) -> tensor<1x16xf32>
      %s2 = stablehlo.add %sum, %d : tensor<1x16xf32>
      stablehlo.return %i1, %upd, %s2 : tensor<i32>, tensor<16x1024xf32>, tensor<1x16xf32>
    }
  return %r#1, %r#2 : tensor<16x1024xf32>, tensor<1x16xf32>
}
` + idFunc("16x1024")
}

func viewArgs() []Value {
	return []Value{aliasInts(2, 16, 1024), aliasFill(1, 1024, 16), &Tensor{Shape: xla.MakeShape(xla.Bool), Data: []bool{true}}}
}

// viewPassThroughs are the pass-throughs viewLoop runs with.
var viewPassThroughs = []string{"call", "if", "optimization_barrier", "tuple"}

func aliasCases() []aliasCase {
	var cases []aliasCase
	for _, name := range slices.Sorted(maps.Keys(passThroughs)) {
		cases = append(cases, aliasCase{
			name: "loop update through " + name + " while the original is read after",
			src:  loopPassThrough(passThrough(name, "16384")),
			args: passArgs,
			check: func(t *testing.T, out []Value) {
				x := f32s(passArgs()[0])
				acc, keep := f32s(out[0]), f32s(out[1])
				assert.Equal(t, []float32{1, 2, 3, x[3]}, acc[:4])
				// keep is 2·acc as it was at step 2 (before its update).
				assert.Equal(t, []float32{2, 4, 2 * x[2], 2 * x[3]}, keep[:4])
			},
		})
		cases = append(cases, aliasCase{
			name: "elementwise reuse of a value handed on by " + name,
			src:  elementwisePassThrough(passThrough(name, "16384")),
			args: passArgs,
			check: func(t *testing.T, out []Value) {
				x := f32s(passArgs()[0])
				sel, m := f32s(out[0]), f32s(out[1])
				for i := range x {
					if sel[i] != 2*x[i] || m[i] != 4*x[i]*x[i] {
						t.Fatalf("element %d: %v, %v for x = %v", i, sel[i], m[i], x[i])
					}
				}
			},
		})
	}
	for _, name := range viewPassThroughs {
		cases = append(cases, aliasCase{
			name: "slice multiplied after its source is updated through " + name,
			src:  viewLoop(passThrough(name, "16x1024")),
			args: viewArgs,
			check: func(t *testing.T, out []Value) {
				x := f32s(aliasInts(2, 16, 1024))
				var row0 float32
				for _, v := range x[:1024] {
					row0 += v
				}
				for j, v := range f32s(out[1]) {
					require.Equal(t, row0+1024+2048, v, "sum %d", j)
				}
			},
		})
	}
	cases = append(cases,
		aliasCase{
			// %s dies at the slice; the product of its window has %s's size.
			name: "product the size of a dying slice source",
			src: `func.func @main(%x: tensor<64x1024xf32>, %w: tensor<256x1024xf32>) -> tensor<64x1024xf32> {
  %s = stablehlo.negate %x : tensor<64x1024xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %v = stablehlo.dynamic_slice %s, %z, %z, sizes = [64, 256] : (tensor<64x1024xf32>, tensor<i32>, tensor<i32>) -> tensor<64x256xf32>
  %d = stablehlo.dot_general %v, %w, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x1024xf32>) -> tensor<64x1024xf32>
  return %d : tensor<64x1024xf32>
}`,
			args: func() []Value { return []Value{aliasInts(3, 64, 1024), aliasInts(4, 256, 1024)} },
			check: func(t *testing.T, out []Value) {
				x, w := f32s(aliasInts(3, 64, 1024)), f32s(aliasInts(4, 256, 1024))
				want := matmul(negated(window(x, 1024, 0, 64, 0, 256)), w, 64, 256, 1024)
				require.Equal(t, want, f32s(out[0]))
			},
		},
		aliasCase{
			// An op between the slice and the product makes a value of
			// the dying source's size.
			name: "new value between a slice of a dying source and its product",
			src: `func.func @main(%x: tensor<128x128xf32>, %y: tensor<128x128xf32>, %w: tensor<128x8xf32>) -> (tensor<16x8xf32>, tensor<128x128xf32>) {
  %s = stablehlo.negate %x : tensor<128x128xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %v = stablehlo.dynamic_slice %s, %z, %z, sizes = [16, 128] : (tensor<128x128xf32>, tensor<i32>, tensor<i32>) -> tensor<16x128xf32>
  %e = stablehlo.add %y, %y : tensor<128x128xf32>
  %d = stablehlo.dot_general %v, %w, contracting_dims = [1] x [0] : (tensor<16x128xf32>, tensor<128x8xf32>) -> tensor<16x8xf32>
  return %d, %e : tensor<16x8xf32>, tensor<128x128xf32>
}`,
			args: func() []Value { return []Value{aliasInts(5, 128, 128), aliasInts(6, 128, 128), aliasInts(7, 128, 8)} },
			check: func(t *testing.T, out []Value) {
				x, w := f32s(aliasInts(5, 128, 128)), f32s(aliasInts(7, 128, 8))
				require.Equal(t, matmul(negated(window(x, 128, 0, 16, 0, 128)), w, 16, 128, 8), f32s(out[0]))
			},
		},
		aliasCase{
			name: "same source sliced twice into one product",
			src: `func.func @main(%x: tensor<128x128xf32>) -> tensor<16x16xf32> {
  %s = stablehlo.negate %x : tensor<128x128xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %k = stablehlo.constant dense<16> : tensor<i32>
  %a = stablehlo.dynamic_slice %s, %k, %z, sizes = [16, 128] : (tensor<128x128xf32>, tensor<i32>, tensor<i32>) -> tensor<16x128xf32>
  %b = stablehlo.dynamic_slice %s, %z, %k, sizes = [128, 16] : (tensor<128x128xf32>, tensor<i32>, tensor<i32>) -> tensor<128x16xf32>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<16x128xf32>, tensor<128x16xf32>) -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}`,
			args: func() []Value { return []Value{aliasInts(8, 128, 128)} },
			check: func(t *testing.T, out []Value) {
				x := negated(f32s(aliasInts(8, 128, 128)))
				require.Equal(t, matmul(window(x, 128, 16, 32, 0, 128), window(x, 128, 0, 128, 16, 32), 16, 128, 16), f32s(out[0]))
			},
		},
		aliasCase{
			// The loop owns the window's source and updates it right after
			// the product.
			name: "loop-owned slice source updated after the product",
			src: strings.Replace(viewLoop(passThrough("optimization_barrier", "16x1024")),
				"%upd = stablehlo.dynamic_update_slice %sel", "%upd = stablehlo.dynamic_update_slice %acc", 1),
			args: viewArgs,
		},
		aliasCase{
			// Windows of an argument (kept packed for the run) and of
			// reshapes of it and of a value computed from it.
			name: "windows of an argument and of reshapes",
			src: `func.func @main(%x: tensor<8x1024xf32>, %y: tensor<1024x512xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>, tensor<8x256xf32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %c = stablehlo.constant dense<256> : tensor<i32>
  %r = stablehlo.reshape %y : (tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %y2 = stablehlo.add %y, %y : tensor<1024x512xf32>
  %r2 = stablehlo.reshape %y2 : (tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %a = stablehlo.dynamic_slice %y, %z, %c, sizes = [1024, 256] : (tensor<1024x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x256xf32>
  %d1 = stablehlo.dot_general %x, %a, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
  %b = stablehlo.dynamic_slice %r, %z, %c, sizes = [1024, 256] : (tensor<1024x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x256xf32>
  %d2 = stablehlo.dot_general %x, %b, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
  %e = stablehlo.dynamic_slice %r2, %z, %c, sizes = [1024, 256] : (tensor<1024x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x256xf32>
  %d3 = stablehlo.dot_general %x, %e, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
  return %d1, %d2, %d3 : tensor<8x256xf32>, tensor<8x256xf32>, tensor<8x256xf32>
}`,
			args: func() []Value { return []Value{aliasInts(9, 8, 1024), aliasInts(10, 1024, 512)} },
			check: func(t *testing.T, out []Value) {
				x, y := f32s(aliasInts(9, 8, 1024)), f32s(aliasInts(10, 1024, 512))
				want := matmul(x, window(y, 512, 0, 1024, 256, 512), 8, 1024, 256)
				require.Equal(t, want, f32s(out[0]))
				require.Equal(t, want, f32s(out[1]))
				for i, v := range f32s(out[2]) {
					require.Equal(t, 2*want[i], v)
				}
			},
		},
		aliasCase{
			name: "dot result carried twice, one copy updated",
			src: `func.func @main(%x: tensor<128x128xf32>, %w: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %a = %d, %b = %d) : tensor<i32>, tensor<128x128xf32>, tensor<128x128xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %u = stablehlo.constant dense<9.0> : tensor<1x128xf32>
      %a2 = stablehlo.dynamic_update_slice %a, %u, %i, %c0 : (tensor<128x128xf32>, tensor<1x128xf32>, tensor<i32>, tensor<i32>) -> tensor<128x128xf32>
      stablehlo.return %i1, %a2, %b : tensor<i32>, tensor<128x128xf32>, tensor<128x128xf32>
    }
  return %r#1, %r#2 : tensor<128x128xf32>, tensor<128x128xf32>
}`,
			args: func() []Value { return []Value{aliasInts(11, 128, 128), aliasInts(12, 128, 128)} },
			check: func(t *testing.T, out []Value) {
				d := matmul(f32s(aliasInts(11, 128, 128)), f32s(aliasInts(12, 128, 128)), 128, 128, 128)
				require.Equal(t, d, f32s(out[1]))
				a := f32s(out[0])
				require.Equal(t, float32(9), a[2*128+5])
				require.Equal(t, d[3*128:], a[3*128:])
			},
		},
		aliasCase{
			// The loop owns %d from the start and hands it back as its
			// result, which is read after alongside the value before it.
			name: "loop-owned dot result read after the loop",
			src: `func.func @main(%x: tensor<128x128xf32>, %w: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %e = stablehlo.negate %d : tensor<128x128xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %a = %d) : tensor<i32>, tensor<128x128xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %u = stablehlo.constant dense<9.0> : tensor<1x128xf32>
      %a2 = stablehlo.dynamic_update_slice %a, %u, %i, %c0 : (tensor<128x128xf32>, tensor<1x128xf32>, tensor<i32>, tensor<i32>) -> tensor<128x128xf32>
      stablehlo.return %i1, %a2 : tensor<i32>, tensor<128x128xf32>
    }
  %s = stablehlo.add %r#1, %e : tensor<128x128xf32>
  return %r#1, %s : tensor<128x128xf32>, tensor<128x128xf32>
}`,
			args: func() []Value { return []Value{aliasInts(11, 128, 128), aliasInts(12, 128, 128)} },
			check: func(t *testing.T, out []Value) {
				d := matmul(f32s(aliasInts(11, 128, 128)), f32s(aliasInts(12, 128, 128)), 128, 128, 128)
				s := f32s(out[1])
				require.Equal(t, 9-d[5], s[5])
				require.Equal(t, float32(0), s[3*128+5])
			},
		},
		aliasCase{
			// An inner loop updates the outer loop's carried value; the
			// outer body reads the value from before.
			name: "nested loop updating the outer carried value",
			src: `func.func @main(%x: tensor<16384xf32>) -> (tensor<16384xf32>, tensor<16384xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %acc = %x, %tot = %x) : tensor<i32>, tensor<16384xf32>, tensor<16384xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %in:2 = stablehlo.while(%j = %c0, %b = %acc) : tensor<i32>, tensor<16384xf32>
        cond {
          %m = stablehlo.constant dense<2> : tensor<i32>
          %lt2 = stablehlo.compare LT, %j, %m : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt2 : tensor<i1>
        } do {
          %j1 = stablehlo.add %j, %one : tensor<i32>
          %f = stablehlo.convert %j1 : (tensor<i32>) -> tensor<f32>
          %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>
          %k = stablehlo.add %i, %j : tensor<i32>
          %b2 = stablehlo.dynamic_update_slice %b, %u, %k : (tensor<16384xf32>, tensor<1xf32>, tensor<i32>) -> tensor<16384xf32>
          stablehlo.return %j1, %b2 : tensor<i32>, tensor<16384xf32>
        }
      %t2 = stablehlo.add %tot, %acc : tensor<16384xf32>
      stablehlo.return %i1, %in#1, %t2 : tensor<i32>, tensor<16384xf32>, tensor<16384xf32>
    }
  return %r#1, %r#2 : tensor<16384xf32>, tensor<16384xf32>
}`,
			args: func() []Value { return []Value{aliasInts(13, 16384)} },
			check: func(t *testing.T, out []Value) {
				x := f32s(aliasInts(13, 16384))
				// acc: step i writes 1 at i and 2 at i+1.
				assert.Equal(t, []float32{1, 1, 1, 2, x[4]}, f32s(out[0])[:5])
				// tot = x + acc0 + acc1 + acc2.
				assert.Equal(t, x[0]+x[0]+1+1, f32s(out[1])[0])
				assert.Equal(t, 4*x[5], f32s(out[1])[5])
			},
		},
		aliasCase{
			// A small constant (decoded once, shared by every run) is
			// carried and updated, and read by elementwise ops.
			name: "small shared constant updated in a loop",
			src: `func.func @main(%x: tensor<f32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
  %c = stablehlo.constant dense<1.0> : tensor<64xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %c) : tensor<i32>, tensor<64xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %u = stablehlo.reshape %x : (tensor<f32>) -> tensor<1xf32>
      %a2 = stablehlo.dynamic_update_slice %acc, %u, %i : (tensor<64xf32>, tensor<1xf32>, tensor<i32>) -> tensor<64xf32>
      stablehlo.return %i1, %a2 : tensor<i32>, tensor<64xf32>
    }
  %n = stablehlo.negate %c : tensor<64xf32>
  %m = stablehlo.add %n, %n : tensor<64xf32>
  return %r#1, %m, %c : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}`,
			args: func() []Value { return []Value{f32Tensor([]float32{7})} },
			check: func(t *testing.T, out []Value) {
				assert.Equal(t, []float32{7, 7, 7, 1}, f32s(out[0])[:4])
				assert.Equal(t, float32(-2), f32s(out[1])[10])
				assert.Equal(t, float32(1), f32s(out[2])[0])
			},
		},
		aliasCase{
			// A tuple result holding a shared constant: the caller may
			// write into it.
			name: "tuple result holding a shared constant",
			src: `func.func @main(%x: tensor<4xf32>) -> (tuple<tensor<4xf32>, tensor<4xf32>>, tensor<4xf32>) {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = stablehlo.reshape %c : (tensor<4xf32>) -> tensor<4xf32>
  %t = "stablehlo.tuple"(%c, %x) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  return %t, %r : tuple<tensor<4xf32>, tensor<4xf32>>, tensor<4xf32>
}`,
			args: func() []Value { return []Value{f32Tensor([]float32{5, 6, 7, 8}, 4)} },
			check: func(t *testing.T, out []Value) {
				assert.Equal(t, []float32{1, 2, 3, 4}, f32s(out[0].(Tuple)[0]))
				assert.Equal(t, []float32{1, 2, 3, 4}, f32s(out[1]))
			},
		},
		aliasCase{
			// A 16384-element constant decoded by every run, owned by the
			// loop from the start.
			name: "large constant owned by a loop, run twice",
			src: `func.func @main(%x: tensor<f32>) -> tensor<16384xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<16384xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %c) : tensor<i32>, tensor<16384xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %u = stablehlo.reshape %x : (tensor<f32>) -> tensor<1xf32>
      %a2 = stablehlo.dynamic_update_slice %acc, %u, %i : (tensor<16384xf32>, tensor<1xf32>, tensor<i32>) -> tensor<16384xf32>
      stablehlo.return %i1, %a2 : tensor<i32>, tensor<16384xf32>
    }
  return %r#1 : tensor<16384xf32>
}`,
			args: func() []Value { return []Value{f32Tensor([]float32{7})} },
			check: func(t *testing.T, out []Value) {
				assert.Equal(t, []float32{7, 7, 7, 1}, f32s(out[0])[:4])
			},
		},
		aliasCase{
			// Regions (sort, scatter, reduce, map returning its argument)
			// over 16384 elements, their results then reused in place.
			name: "sort scatter reduce and map",
			src: `func.func @main(%x: tensor<16384xf32>) -> (tensor<16384xf32>, tensor<16384xf32>, tensor<16384xf32>, tensor<f32>, tensor<16384xf32>) {
  %e = stablehlo.add %x, %x : tensor<16384xf32>
  %s = "stablehlo.sort"(%e) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<16384xf32>) -> tensor<16384xf32>
  %m = "stablehlo.map"(%e) ({
  ^bb0(%a: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<16384xf32>) -> tensor<16384xf32>
  %idx = stablehlo.constant dense<[[3], [5]]> : tensor<2x1xi32>
  %upd = stablehlo.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %sc = "stablehlo.scatter"(%e, %idx, %upd) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<16384xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<16384xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %red = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<16384xf32>, tensor<f32>) -> tensor<f32>
  %n = stablehlo.negate %e : tensor<16384xf32>
  %n2 = stablehlo.multiply %n, %n : tensor<16384xf32>
  %s2 = stablehlo.negate %s : tensor<16384xf32>
  %sc2 = stablehlo.add %sc, %sc : tensor<16384xf32>
  return %s2, %m, %sc2, %red, %n2 : tensor<16384xf32>, tensor<16384xf32>, tensor<16384xf32>, tensor<f32>, tensor<16384xf32>
}`,
			args: func() []Value { return []Value{aliasInts(14, 16384)} },
			check: func(t *testing.T, out []Value) {
				x := f32s(aliasInts(14, 16384))
				m, sc := f32s(out[1]), f32s(out[2])
				for i := range x {
					want := 4 * x[i]
					switch i {
					case 3:
						want += 20
					case 5:
						want += 40
					}
					if m[i] != 2*x[i] || sc[i] != want {
						t.Fatalf("element %d: map %v, scatter %v for x = %v", i, m[i], sc[i], x[i])
					}
				}
			},
		},
		aliasCase{
			// A pallas-like loop: multiply a block of rows of the carried
			// %acc (a window read in place) and write the product back
			// over that block (in place: the loop owns %acc).
			name: "blocks of a carried value multiplied and written back",
			src: `func.func @main(%x: tensor<128x128xf32>, %w: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<128x128xf32>
    cond {
      %n = stablehlo.constant dense<8> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %sixteen = stablehlo.constant dense<16> : tensor<i32>
      %row = stablehlo.multiply %i, %sixteen : tensor<i32>
      %v = stablehlo.dynamic_slice %acc, %row, %c0, sizes = [16, 128] : (tensor<128x128xf32>, tensor<i32>, tensor<i32>) -> tensor<16x128xf32>
      %d = stablehlo.dot_general %v, %w, contracting_dims = [1] x [0] : (tensor<16x128xf32>, tensor<128x128xf32>) -> tensor<16x128xf32>
      %acc2 = stablehlo.dynamic_update_slice %acc, %d, %row, %c0 : (tensor<128x128xf32>, tensor<16x128xf32>, tensor<i32>, tensor<i32>) -> tensor<128x128xf32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %acc2 : tensor<i32>, tensor<128x128xf32>
    }
  return %r#1 : tensor<128x128xf32>
}`,
			args: func() []Value { return []Value{aliasInts(18, 128, 128), aliasInts(19, 128, 128)} },
			check: func(t *testing.T, out []Value) {
				want := matmul(f32s(aliasInts(18, 128, 128)), f32s(aliasInts(19, 128, 128)), 128, 128, 128)
				require.Equal(t, want, f32s(out[0]))
			},
		},
		aliasCase{
			// A tuple carried by a loop next to one of its elements, which
			// the loop updates.
			name: "loop carrying a tuple holding the updated value",
			src: `func.func @main(%x: tensor<16384xf32>) -> (tensor<16384xf32>, tuple<tensor<16384xf32>>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %t0 = "stablehlo.tuple"(%x) : (tensor<16384xf32>) -> tuple<tensor<16384xf32>>
  %r:3 = stablehlo.while(%i = %c0, %acc = %x, %tp = %t0) : tensor<i32>, tensor<16384xf32>, tuple<tensor<16384xf32>>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
      %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>
      %a2 = stablehlo.dynamic_update_slice %acc, %u, %i : (tensor<16384xf32>, tensor<1xf32>, tensor<i32>) -> tensor<16384xf32>
      %t2 = "stablehlo.tuple"(%a2) : (tensor<16384xf32>) -> tuple<tensor<16384xf32>>
      stablehlo.return %i1, %a2, %t2 : tensor<i32>, tensor<16384xf32>, tuple<tensor<16384xf32>>
    }
  return %r#1, %r#2 : tensor<16384xf32>, tuple<tensor<16384xf32>>
}`,
			args: func() []Value { return []Value{aliasInts(20, 16384)} },
		},
		aliasCase{
			// Results that share storage with each other and with an
			// argument.
			name: "results sharing storage",
			src: `func.func @main(%x: tensor<16384xf32>) -> (tensor<16384xf32>, tensor<16384xf32>, tensor<16384xf32>, tensor<128x128xf32>) {
  %e = stablehlo.add %x, %x : tensor<16384xf32>
  %r = stablehlo.reshape %e : (tensor<16384xf32>) -> tensor<128x128xf32>
  return %e, %e, %x, %r : tensor<16384xf32>, tensor<16384xf32>, tensor<16384xf32>, tensor<128x128xf32>
}`,
			args: func() []Value { return []Value{aliasInts(15, 16384)} },
		},
	)
	return cases
}

func TestStorageSharingMatchesFreshResults(t *testing.T) {
	for _, c := range aliasCases() {
		t.Run(c.name, func(t *testing.T) { runAliasCase(t, c) })
	}
}

// Runs of one program at once share its compiled state (the constants
// decoded at compile time ...): none may write into it (go test -race).
func TestStorageSharingConcurrentRuns(t *testing.T) {
	for _, c := range aliasCases() {
		p, plain := compileTwice(t, c.src)
		want, err := plain.Run(context.Background(), Device{}, c.args())
		require.NoError(t, err)
		const runs = 4
		errs := make(chan error, runs)
		for range runs {
			go func() {
				got, err := p.Run(context.Background(), Device{}, c.args())
				if err == nil {
					for i := range want {
						if !sameValue(want[i], got[i]) {
							err = fmt.Errorf("result %d differs", i)
						}
					}
				}
				errs <- err
			}()
		}
		for range runs {
			require.NoError(t, <-errs, c.name)
		}
	}
}

// A custom call may keep its operands (a transfer, a collective, a
// recorder ...): a loop must not later update such an operand in place.
func TestLoopDoesNotUpdateKeptOperandsInPlace(t *testing.T) {
	var kept []*Tensor
	RegisterCustomCall("alias_test.keep", func(c *CustomCall) ([]*Tensor, error) {
		kept = append(kept, c.Operands[0])
		return []*Tensor{NewTensor(xla.MakeShape(xla.Float32))}, nil
	})
	defer RegisterCustomCall("alias_test.keep", nil)
	for name, pass := range map[string]string{
		"operand": `%k = stablehlo.custom_call @alias_test.keep(%acc) {has_side_effect = true} : (tensor<4xf32>) -> tensor<f32>`,
		"reshape of": `%r = stablehlo.reshape %acc : (tensor<4xf32>) -> tensor<2x2xf32>
      %k = stablehlo.custom_call @alias_test.keep(%r) {has_side_effect = true} : (tensor<2x2xf32>) -> tensor<f32>`,
	} {
		t.Run(name, func(t *testing.T) {
			kept = nil
			p := compileText(t, `func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
      %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>
      `+pass+`
      %upd = stablehlo.dynamic_update_slice %acc, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>
      stablehlo.return %i1, %upd : tensor<i32>, tensor<4xf32>
    }
  return %r#1 : tensor<4xf32>
}`)
			out, err := p.Run(context.Background(), Device{}, []Value{f32Tensor(make([]float32, 4), 4)})
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 3, 0}, f32s(out[0]))
			require.Len(t, kept, 3)
			assert.Equal(t, []float32{0, 0, 0, 0}, f32s(kept[0]))
			assert.Equal(t, []float32{1, 0, 0, 0}, f32s(kept[1]), "the operand the call kept at step 1")
			assert.Equal(t, []float32{1, 2, 0, 0}, f32s(kept[2]), "the operand the call kept at step 2")
		})
	}
}

// A window of an argument packed for a product is kept for the run, by
// where it lies: the argument's storage must stay the argument's for the
// whole run, even when the caller holds it nowhere else and the program's
// last use of it is long past (a collection could otherwise give the
// address to a new value, whose window would then look kept).
func TestKeptWindowsOutliveTheirArguments(t *testing.T) {
	RegisterCustomCall("alias_test.gc", func(c *CustomCall) ([]*Tensor, error) {
		runtime.GC()
		runtime.GC()
		return []*Tensor{NewTensor(xla.MakeShape(xla.Float32))}, nil
	})
	defer RegisterCustomCall("alias_test.gc", nil)
	p := compileText(t, `func.func @main(%a: tensor<1024x512xf32>, %x: tensor<8x1024xf32>, %y: tensor<1024x512xf32>) -> (tensor<8x256xf32>, tensor<8x256xf32>, tensor<f32>) {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %v = stablehlo.dynamic_slice %a, %z, %z, sizes = [1024, 256] : (tensor<1024x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x256xf32>
  %d1 = stablehlo.dot_general %x, %v, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
  %g = stablehlo.custom_call @alias_test.gc(%d1) {has_side_effect = true} : (tensor<8x256xf32>) -> tensor<f32>
  %b = stablehlo.negate %y : tensor<1024x512xf32>
  %v2 = stablehlo.dynamic_slice %b, %z, %z, sizes = [1024, 256] : (tensor<1024x512xf32>, tensor<i32>, tensor<i32>) -> tensor<1024x256xf32>
  %d2 = stablehlo.dot_general %x, %v2, contracting_dims = [1] x [0] : (tensor<8x1024xf32>, tensor<1024x256xf32>) -> tensor<8x256xf32>
  return %d1, %d2, %g : tensor<8x256xf32>, tensor<8x256xf32>, tensor<f32>
}`)
	x, y := aliasFill(1, 8, 1024), aliasFill(1, 1024, 512)
	for i := 0; i < 20; i++ {
		// The caller keeps no reference to %a's tensor.
		out, err := p.Run(context.Background(), Device{}, []Value{aliasFill(3, 1024, 512), x, y})
		require.NoError(t, err)
		require.Equal(t, float32(3*1024), f32s(out[0])[0])
		require.Equal(t, float32(-1024), f32s(out[1])[0], "run %d: the product of -y's window", i)
	}
}

// A device's collective_permute peer reads its operand after the
// exchange: the device must not update that operand in place in a later
// step (a race, and wrong sums).
func TestLoopDoesNotUpdateCollectiveOperandsInPlace(t *testing.T) {
	shared, plain := compileTwice(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<16384xf32>) -> (tensor<16384xf32>, tensor<16384xf32>) {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %r:3 = stablehlo.while(%i = %c0, %acc = %x, %sum = %x) : tensor<i32>, tensor<16384xf32>, tensor<16384xf32>
      cond {
        %n = stablehlo.constant dense<20> : tensor<i32>
        %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %i1 = stablehlo.add %i, %one : tensor<i32>
        %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
        %u = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4096xf32>
        %p = "stablehlo.collective_permute"(%acc) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<16384xf32>) -> tensor<16384xf32>
        %z = stablehlo.constant dense<0> : tensor<i32>
        %upd = stablehlo.dynamic_update_slice %acc, %u, %z : (tensor<16384xf32>, tensor<4096xf32>, tensor<i32>) -> tensor<16384xf32>
        %s2 = stablehlo.add %sum, %p : tensor<16384xf32>
        stablehlo.return %i1, %upd, %s2 : tensor<i32>, tensor<16384xf32>, tensor<16384xf32>
      }
    return %r#1, %r#2 : tensor<16384xf32>, tensor<16384xf32>
  }
}`)
	args := func() [][]Value { return [][]Value{{aliasInts(16, 16384)}, {aliasInts(17, 16384)}} }
	opts := SPMDOptions{Timeout: 10 * time.Second}
	want, err := plain.RunSPMD(context.Background(), args(), opts)
	require.NoError(t, err)
	for run := 0; run < 3; run++ {
		got, err := shared.RunSPMD(context.Background(), args(), opts)
		require.NoError(t, err)
		for d := range want {
			requireSameValues(t, want[d], got[d], fmt.Sprintf("run %d, device %d", run, d))
		}
	}
	// The sums by hand: device 0 adds device 1's operand of every step,
	// x1 at step 0 and x1 with its first 4096 elements set to k at step k.
	x0, x1 := f32s(aliasInts(16, 16384)), f32s(aliasInts(17, 16384))
	s := f32s(want[0][1])
	for j := range s {
		w := x0[j] + 20*x1[j]
		if j < 4096 {
			w = x0[j] + x1[j] + 190
		}
		if s[j] != w {
			t.Fatalf("device 0 sum %d = %v, want %v", j, s[j], w)
		}
	}
}

// aliasFuzzProgram writes a random program over 64×256 f32 values (64
// KiB: spare-sized): a prologue, a loop of 3 steps carrying three values
// and an epilogue, each a random sequence of elementwise ops, ops that
// hand a value on (optimization_barrier, reshape, tuple, call, if, case,
// bitcast_convert), products of row blocks (slices read in place) written
// into other values, and updates of blocks; values are read again after
// other ops used them.
func aliasFuzzProgram(r *rand.Rand) string {
	const ty = "tensor<64x256xf32>"
	var b strings.Builder
	n := 0
	fresh := func() string { n++; return fmt.Sprintf("%%v%d", n) }
	pick := func(pool []string) string {
		if r.IntN(2) == 0 {
			return pool[len(pool)-1-r.IntN(min(3, len(pool)))]
		}
		return pool[r.IntN(len(pool))]
	}
	// ops appends k random ops over pool to b (indent ind); row is a
	// tensor<i32> value holding a row offset.
	ops := func(pool []string, k int, ind, row string) []string {
		// pending are slices whose product is not written yet: other ops
		// may come between a slice and its product.
		var pending [][2]string
		flush := func(all bool) {
			for len(pending) > 0 && (all || r.IntN(2) == 0) {
				sl, to := pending[0][0], pending[0][1]
				pending = pending[1:]
				c, v := pick(pool), fresh()
				fmt.Fprintf(&b, "%s%s_d = stablehlo.dot_general %s, %%w, contracting_dims = [1] x [0] : (tensor<16x256xf32>, tensor<256x256xf32>) -> tensor<16x256xf32>\n", ind, v, sl)
				fmt.Fprintf(&b, "%s%s = stablehlo.dynamic_update_slice %s, %s_d, %s, %%c0 : (%s, tensor<16x256xf32>, tensor<i32>, tensor<i32>) -> %s\n", ind, v, c, v, to, ty, ty)
				pool = append(pool, v)
			}
		}
		for range k {
			flush(false)
			a, c := pick(pool), pick(pool)
			v := fresh()
			switch r.IntN(14) {
			case 12:
				// A block of a set to a constant shared by every run.
				fmt.Fprintf(&b, "%s%s = stablehlo.dynamic_update_slice %s, %%k, %s, %%c0 : (%s, tensor<16x256xf32>, tensor<i32>, tensor<i32>) -> %s\n", ind, v, a, row, ty, ty)
			case 13:
				// An inner loop setting two blocks of a.
				fmt.Fprintf(&b, "%s%s_w:2 = stablehlo.while(%s_j = %%c0, %s_b = %s) : tensor<i32>, %s\n", ind, v, v, v, a, ty)
				fmt.Fprintf(&b, "%s  cond {\n%s    %s_n = stablehlo.constant dense<2> : tensor<i32>\n", ind, ind, v)
				fmt.Fprintf(&b, "%s    %s_lt = stablehlo.compare LT, %s_j, %s_n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n", ind, v, v, v)
				fmt.Fprintf(&b, "%s    stablehlo.return %s_lt : tensor<i1>\n%s  } do {\n", ind, v, ind)
				fmt.Fprintf(&b, "%s    %s_o = stablehlo.constant dense<1> : tensor<i32>\n", ind, v)
				fmt.Fprintf(&b, "%s    %s_j1 = stablehlo.add %s_j, %s_o : tensor<i32>\n", ind, v, v, v)
				fmt.Fprintf(&b, "%s    %s_rj = stablehlo.multiply %s_j, %%c16 : tensor<i32>\n", ind, v, v)
				fmt.Fprintf(&b, "%s    %s_f = stablehlo.convert %s_j1 : (tensor<i32>) -> tensor<f32>\n", ind, v, v)
				fmt.Fprintf(&b, "%s    %s_u = stablehlo.broadcast_in_dim %s_f, dims = [] : (tensor<f32>) -> tensor<16x256xf32>\n", ind, v, v)
				fmt.Fprintf(&b, "%s    %s_b2 = stablehlo.dynamic_update_slice %s_b, %s_u, %s_rj, %%c0 : (%s, tensor<16x256xf32>, tensor<i32>, tensor<i32>) -> %s\n", ind, v, v, v, v, ty, ty)
				fmt.Fprintf(&b, "%s    stablehlo.return %s_j1, %s_b2 : tensor<i32>, %s\n%s  }\n", ind, v, v, ty, ind)
				fmt.Fprintf(&b, "%s%s = stablehlo.add %s_w#1, %s : %s\n", ind, v, v, c, ty)
			case 0:
				fmt.Fprintf(&b, "%s%s = stablehlo.negate %s : %s\n", ind, v, a, ty)
			case 1:
				fmt.Fprintf(&b, "%s%s = stablehlo.add %s, %s : %s\n", ind, v, a, c, ty)
			case 2:
				fmt.Fprintf(&b, "%s%s = stablehlo.subtract %s, %s : %s\n", ind, v, a, c, ty)
			case 3:
				fmt.Fprintf(&b, "%s%s = stablehlo.maximum %s, %s : %s\n", ind, v, a, c, ty)
			case 4:
				fmt.Fprintf(&b, "%s%s = stablehlo.sign %s : %s\n", ind, v, a, ty)
			case 5:
				switch r.IntN(4) {
				case 0:
					fmt.Fprintf(&b, "%s%s = \"stablehlo.optimization_barrier\"(%s) : (%s) -> %s\n", ind, v, a, ty, ty)
				case 1:
					fmt.Fprintf(&b, "%s%s_r = stablehlo.reshape %s : (%s) -> tensor<16384xf32>\n", ind, v, a, ty)
					fmt.Fprintf(&b, "%s%s = stablehlo.reshape %s_r : (tensor<16384xf32>) -> %s\n", ind, v, v, ty)
				case 2:
					fmt.Fprintf(&b, "%s%s_t = \"stablehlo.tuple\"(%s, %s) : (%s, %s) -> tuple<%s, %s>\n", ind, v, a, c, ty, ty, ty, ty)
					fmt.Fprintf(&b, "%s%s = \"stablehlo.get_tuple_element\"(%s_t) {index = %d : i32} : (tuple<%s, %s>) -> %s\n", ind, v, v, r.IntN(2), ty, ty, ty)
				case 3:
					fmt.Fprintf(&b, "%s%s = func.call @id(%s) : (%s) -> %s\n", ind, v, a, ty, ty)
				}
			case 6:
				if r.IntN(2) == 0 {
					fmt.Fprintf(&b, "%s%s = \"stablehlo.if\"(%%p) ({\n%s  stablehlo.return %s : %s\n%s}, {\n%s  stablehlo.return %s : %s\n%s}) : (tensor<i1>) -> %s\n",
						ind, v, ind, a, ty, ind, ind, c, ty, ind, ty)
				} else {
					fmt.Fprintf(&b, "%s%s_i = stablehlo.convert %%p : (tensor<i1>) -> tensor<i32>\n", ind, v)
					fmt.Fprintf(&b, "%s%s = \"stablehlo.case\"(%s_i) ({\n%s  stablehlo.return %s : %s\n%s}, {\n%s  stablehlo.return %s : %s\n%s}) : (tensor<i32>) -> %s\n",
						ind, v, v, ind, c, ty, ind, ind, a, ty, ind, ty)
				}
			case 7:
				fmt.Fprintf(&b, "%s%s_b = stablehlo.bitcast_convert %s : (%s) -> tensor<64x256xi32>\n", ind, v, a, ty)
				fmt.Fprintf(&b, "%s%s = stablehlo.bitcast_convert %s_b : (tensor<64x256xi32>) -> %s\n", ind, v, v, ty)
			case 8, 9:
				// A block of rows of a, to be multiplied by w and written
				// over a block of a value (later).
				at := [2]string{row, "%c16"}[r.IntN(2)]
				to := [2]string{row, "%c32"}[r.IntN(2)]
				fmt.Fprintf(&b, "%s%s_s = stablehlo.dynamic_slice %s, %s, %%c0, sizes = [16, 256] : (%s, tensor<i32>, tensor<i32>) -> tensor<16x256xf32>\n", ind, v, a, at, ty)
				pending = append(pending, [2]string{v + "_s", to})
				continue
			default:
				// A block of a set to the row offset.
				fmt.Fprintf(&b, "%s%s_f = stablehlo.convert %s : (tensor<i32>) -> tensor<f32>\n", ind, v, row)
				fmt.Fprintf(&b, "%s%s_u = stablehlo.broadcast_in_dim %s_f, dims = [] : (tensor<f32>) -> tensor<16x256xf32>\n", ind, v, v)
				fmt.Fprintf(&b, "%s%s = stablehlo.dynamic_update_slice %s, %s_u, %s, %%c0 : (%s, tensor<16x256xf32>, tensor<i32>, tensor<i32>) -> %s\n", ind, v, a, v, row, ty, ty)
			}
			pool = append(pool, v)
		}
		flush(true)
		return pool
	}
	fmt.Fprintf(&b, "func.func @main(%%x0: %s, %%x1: %s, %%w: tensor<256x256xf32>, %%p: tensor<i1>) -> (%s, %s, %s, %s, %s) {\n", ty, ty, ty, ty, ty, ty, ty)
	b.WriteString("  %c0 = stablehlo.constant dense<0> : tensor<i32>\n  %c16 = stablehlo.constant dense<16> : tensor<i32>\n  %c32 = stablehlo.constant dense<32> : tensor<i32>\n")
	b.WriteString("  %k = stablehlo.constant dense<5.0> : tensor<16x256xf32>\n")
	start := []string{"%x0", "%x1"}
	if r.IntN(2) == 0 {
		// Fresh values (a loop may own them from the start).
		fmt.Fprintf(&b, "  %%big = stablehlo.constant dense<3.0> : %s\n", ty)
		fmt.Fprintf(&b, "  %%xw = stablehlo.dot_general %%x0, %%w, contracting_dims = [1] x [0] : (%s, tensor<256x256xf32>) -> %s\n", ty, ty)
		start = append(start, "%big", "%xw")
	}
	outer := ops(start, r.IntN(5), "  ", "%c16")
	init := []string{pick(outer), pick(outer), pick(outer)}
	fmt.Fprintf(&b, "  %%r:4 = stablehlo.while(%%i = %%c0, %%a0 = %s, %%a1 = %s, %%a2 = %s) : tensor<i32>, %s, %s, %s\n", init[0], init[1], init[2], ty, ty, ty)
	b.WriteString(`    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %row = stablehlo.multiply %i, %c16 : tensor<i32>
`)
	body := ops(append([]string{"%a0", "%a1", "%a2"}, outer[len(outer)-r.IntN(min(2, len(outer)))-1:]...), 3+r.IntN(10), "      ", "%row")
	fmt.Fprintf(&b, "      stablehlo.return %%i1, %s, %s, %s : tensor<i32>, %s, %s, %s\n    }\n", pick(body), pick(body), pick(body), ty, ty, ty)
	after := ops(append(outer, "%r#1", "%r#2", "%r#3"), r.IntN(6), "  ", "%c32")
	fmt.Fprintf(&b, "  return %%r#1, %%r#2, %%r#3, %s, %s : %s, %s, %s, %s, %s\n}\n", pick(after), pick(after), ty, ty, ty, ty, ty)
	fmt.Fprintf(&b, "func.func private @id(%%q: %s) -> %s {\n  return %%q : %s\n}\n", ty, ty, ty)
	return b.String()
}

// sameNumbers is sameValue with every NaN equal and -0 = +0 (products of
// different paths may sum zeros, or overflow, in another order).
func sameNumbers(a, b Value) bool {
	at, ok1 := a.(*Tensor)
	bt, ok2 := b.(*Tensor)
	if !ok1 || !ok2 {
		return sameValue(a, b)
	}
	ad, ok1 := at.Data.([]float32)
	bd, ok2 := bt.Data.([]float32)
	if !ok1 || !ok2 || len(ad) != len(bd) {
		return sameValue(a, b)
	}
	for i := range ad {
		if ad[i] != bd[i] && !(ad[i] != ad[i] && bd[i] != bd[i]) {
			return false
		}
	}
	return true
}

// TestStorageSharingRandomPrograms runs random programs
// (aliasFuzzProgram) with and without storage sharing; ALIAS_FUZZ_N sets
// how many (150 by default, 50 with -short).
func TestStorageSharingRandomPrograms(t *testing.T) {
	n := 150
	if v := os.Getenv("ALIAS_FUZZ_N"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	if testing.Short() {
		n = 50
	}
	// w: a permutation of the columns (exact products in any order).
	w := NewTensor(xla.MakeShape(xla.Float32, 256, 256))
	perm := rand.New(rand.NewPCG(1, 1)).Perm(256)
	for j, k := range perm {
		w.Data.([]float32)[k*256+j] = 1
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		src := aliasFuzzProgram(r)
		shared, plain := compileTwice(t, src)
		args := func() []Value {
			return []Value{aliasInts(uint64(seed)*2, 64, 256), aliasInts(uint64(seed)*2+1, 64, 256), w,
				&Tensor{Shape: xla.MakeShape(xla.Bool), Data: []bool{seed%2 == 0}}}
		}
		want, err := plain.Run(context.Background(), Device{}, args())
		require.NoError(t, err)
		in := args()
		before := cloneValues(in)
		for run := 1; run <= 2; run++ {
			got, err := shared.Run(context.Background(), Device{}, in)
			require.NoError(t, err)
			for i := range want {
				if !sameNumbers(want[i], got[i]) {
					t.Fatalf("seed %d, run %d: result %d differs\n%s", seed, run, i, src)
				}
			}
			requireSameValues(t, before, in, "arguments")
		}
	}
}
