package interpreter

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
)

// A while loop that writes element i of a loop-carried buffer on step i.
const inPlaceLoop = `func.func @main(%buf: tensor<N xf32>) -> tensor<N xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %b = %buf) : tensor<i32>, tensor<N xf32>
    cond {
      %n = stablehlo.constant dense<STEPS> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
      %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>
      %b2 = stablehlo.dynamic_update_slice %b, %u, %i : (tensor<N xf32>, tensor<1xf32>, tensor<i32>) -> tensor<N xf32>
      stablehlo.return %i1, %b2 : tensor<i32>, tensor<N xf32>
    }
  return %r#1 : tensor<N xf32>
}`

func inPlaceProgram(t *testing.T, src string, n, steps string) *Program {
	t.Helper()
	r := strings2(src, "N ", n, "STEPS", steps)
	m, err := stablehlo.Parse([]byte(r))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	return p
}

func strings2(s string, kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		out := ""
		for {
			j := indexOf(s, kv[i])
			if j < 0 {
				break
			}
			out += s[:j] + kv[i+1]
			s = s[j+len(kv[i]):]
		}
		s = out + s
	}
	return s
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestLoopCarriedUpdateIsInPlace(t *testing.T) {
	// 1 MiB buffer, 200 steps: a copy per step would allocate 200 MiB.
	p := inPlaceProgram(t, inPlaceLoop, "262144", "200")
	in := f32Tensor(make([]float32, 262144), 262144)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := p.Run(context.Background(), Device{}, []Value{in})
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	got := out[0].(*Tensor).Data.([]float32)
	for i := 0; i < 200; i++ {
		require.Equal(t, float32(i+1), got[i], "element %d", i)
	}
	assert.Zero(t, got[200])
	assert.Zero(t, in.Data.([]float32)[0], "the caller's operand is never written")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(32<<20), "updates of a loop-owned buffer are in place")
}

func TestLoopCarriedUpdateNeverClobbersSharedStorage(t *testing.T) {
	// updA sets element i of the carried %a to i+1.
	const updA = `%a2 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>`
	tests := []struct {
		name, body, ret string
		// The two carries and the argument after the loop (nil: not checked).
		a, b, arg []float32
	}{
		{
			// The same tensor carried twice: updating one must not change the other.
			name: "carried twice",
			body: updA,
			ret:  `%i1, %a2, %a2`,
			a:    []float32{1, 2, 3, 0},
			b:    []float32{1, 2, 3, 0},
		},
		{
			// b keeps the old a while a is updated.
			name: "old value kept in another carry",
			body: updA,
			ret:  `%i1, %a2, %a`,
			a:    []float32{1, 2, 3, 0},
			b:    []float32{1, 2, 0, 0},
		},
		{
			// The operand is read after the update.
			name: "operand read after",
			body: updA + `
      %s = stablehlo.add %a, %a : tensor<4xf32>`,
			ret: `%i1, %a2, %s`,
			a:   []float32{1, 2, 3, 0},
			b:   []float32{2, 4, 0, 0},
		},
		{
			// A value from outside the loop is updated in the body every step.
			name: "captured operand",
			body: `%a2 = stablehlo.dynamic_update_slice %arg, %u, %i : (tensor<4xf32>, tensor<1xf32>, tensor<i32>) -> tensor<4xf32>`,
			ret:  `%i1, %a2, %b`,
			a:    []float32{0, 0, 3, 0},
			arg:  []float32{0, 0, 0, 0},
		},
		{
			// Two carries share storage through a reshape.
			name: "shared through reshape",
			body: updA + `
      %r = stablehlo.reshape %a2 : (tensor<4xf32>) -> tensor<4xf32>`,
			ret: `%i1, %a2, %r`,
			a:   []float32{1, 2, 3, 0},
			b:   []float32{1, 2, 3, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := `func.func @main(%arg: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %a = %arg, %b = %arg) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
      %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>
      ` + tc.body + `
      stablehlo.return ` + tc.ret + ` : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    }
  return %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>
}`
			m, err := stablehlo.Parse([]byte(src))
			require.NoError(t, err)
			p, err := Compile(m, "")
			require.NoError(t, err)
			arg := f32Tensor(make([]float32, 4), 4)
			out, err := p.Run(context.Background(), Device{}, []Value{arg})
			require.NoError(t, err)
			for _, c := range []struct{ want, got []float32 }{
				{tc.a, out[0].(*Tensor).Data.([]float32)},
				{tc.b, out[1].(*Tensor).Data.([]float32)},
				{tc.arg, arg.Data.([]float32)},
			} {
				if c.want != nil {
					assert.Equal(t, c.want, c.got)
				}
			}
		})
	}
}

// handOverProgram is a loop whose first carried buffer starts as a splat
// constant %c of n float32 7s (%c2 holds 5s) and gets element i set to
// i+1 for 3 steps (%early, read before the loop, holds %c's first 4
// elements); carry2 is the second carry's operand and ret what main
// returns.
func handOverProgram(t *testing.T, n, carry2, ret, results string) *Program {
	t.Helper()
	src := strings.NewReplacer("{N}", n, "{CARRY2}", carry2, "{RET}", ret, "{RESULTS}", results).Replace(`
func.func @main() -> ({RESULTS}) {
  %c = stablehlo.constant dense<7.0> : tensor<{N}xf32>
  %c2 = stablehlo.constant dense<5.0> : tensor<{N}xf32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %early = stablehlo.dynamic_slice %c, %z, sizes = [4] : (tensor<{N}xf32>, tensor<i32>) -> tensor<4xf32>
  %r:3 = stablehlo.while(%i = %z, %a = %c, %b = {CARRY2}) : tensor<i32>, tensor<{N}xf32>, tensor<{N}xf32>
   cond {
    %three = stablehlo.constant dense<3> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i1 = stablehlo.add %i, %one : tensor<i32>
    %f = stablehlo.convert %i1 : (tensor<i32>) -> tensor<f32>
    %u = stablehlo.reshape %f : (tensor<f32>) -> tensor<1xf32>
    %a2 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<{N}xf32>, tensor<1xf32>, tensor<i32>) -> tensor<{N}xf32>
    stablehlo.return %i1, %a2, %b : tensor<i32>, tensor<{N}xf32>, tensor<{N}xf32>
  }
  return {RET} : {RESULTS}
}`)
	m, err := stablehlo.Parse([]byte(src))
	require.NoError(t, err)
	p, err := Compile(m, "main")
	require.NoError(t, err)
	return p
}

func TestLoopOwnsFreshOperandFromTheStart(t *testing.T) {
	// A 4 MiB constant used only as the loop's operand: the loop updates
	// it in place from the first step.
	p := handOverProgram(t, "1048576", "%c2", "%r#1", "tensor<1048576xf32>")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := p.Run(context.Background(), Device{}, nil)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	assert.Equal(t, []float32{1, 2, 3, 7}, out[0].(*Tensor).Data.([]float32)[:4])
	// The two constants take 8 MiB; a copy of the first would make 12.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(10<<20), "the loop owns the fresh constant")
}

func TestLoopDoesNotOwnSharedOperand(t *testing.T) {
	// 8192 elements: above the size of constants decoded once at compile
	// time, so each run decodes a fresh tensor.
	all := func(t *testing.T, v Value, want float32) {
		t.Helper()
		for i, x := range v.(*Tensor).Data.([]float32) {
			if x != want {
				t.Fatalf("element %d = %v, want %v", i, x, want)
			}
		}
	}
	for _, c := range []struct{ name, carry2, ret, results string }{
		{"constant also returned", "%c2", "%r#1, %c", "tensor<8192xf32>, tensor<8192xf32>"},
		{"slice read before and returned", "%c2", "%r#1, %early", "tensor<8192xf32>, tensor<4xf32>"},
		{"constant carried twice", "%c", "%r#1, %r#2", "tensor<8192xf32>, tensor<8192xf32>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := handOverProgram(t, "8192", c.carry2, c.ret, c.results)
			out, err := p.Run(context.Background(), Device{}, nil)
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 3, 7}, out[0].(*Tensor).Data.([]float32)[:4])
			all(t, out[1], 7)
		})
	}
}

// A loop-owned tensor that an op of the body hands to a second value (an
// if or a case returning a carried value) is not updated in place: the other value would see the update. The loop carries an
// invariant %inv and an accumulator that starts as %inv's tensor on the
// first iteration.
func TestLoopDoesNotUpdateAliasedTensorsInPlace(t *testing.T) {
	const alias = `%sel = "stablehlo.if"(%first) ({
        stablehlo.return %inv : tensor<8192xf32>
      }, {
        stablehlo.return %acc : tensor<8192xf32>
      }) : (tensor<i1>) -> tensor<8192xf32>`
	for name, pick := range map[string]string{
		"if": alias,
		"case": `%idx = stablehlo.convert %first : (tensor<i1>) -> tensor<i32>
      %sel = "stablehlo.case"(%idx) ({
        stablehlo.return %acc : tensor<8192xf32>
      }, {
        stablehlo.return %inv : tensor<8192xf32>
      }) : (tensor<i32>) -> tensor<8192xf32>`,
	} {
		t.Run(name, func(t *testing.T) {
			p := compileText(t, `func.func @main(%x: tensor<f32>) -> (tensor<8192xf32>, tensor<8192xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %a = stablehlo.constant dense<0.0> : tensor<8192xf32>
  %b = stablehlo.constant dense<1.0> : tensor<8192xf32>
  %r:3 = stablehlo.while(%i = %c0, %inv = %a, %acc = %b) : tensor<i32>, tensor<8192xf32>, tensor<8192xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %first = stablehlo.compare EQ, %i, %z : (tensor<i32>, tensor<i32>) -> tensor<i1>
      `+pick+`
      %u = stablehlo.reshape %x : (tensor<f32>) -> tensor<1xf32>
      %upd = stablehlo.dynamic_update_slice %sel, %u, %i : (tensor<8192xf32>, tensor<1xf32>, tensor<i32>) -> tensor<8192xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %inv, %upd : tensor<i32>, tensor<8192xf32>, tensor<8192xf32>
    }
  return %r#1, %r#2 : tensor<8192xf32>, tensor<8192xf32>
}`)
			out, err := p.Run(context.Background(), Device{}, []Value{f32Tensor([]float32{7})})
			require.NoError(t, err)
			inv, acc := out[0].(*Tensor).Data.([]float32), out[1].(*Tensor).Data.([]float32)
			assert.Equal(t, []float32{0, 0, 0, 0}, inv[:4], "the invariant is untouched")
			assert.Equal(t, []float32{7, 7, 7, 0}, acc[:4], "steps 0, 1, 2 wrote their element")
		})
	}
}
