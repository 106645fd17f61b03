package effects

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func printModule(t testing.TB, m *stablehlo.Module) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, stablehlo.Print(&b, m, stablehlo.PrintOptions{}))
	return b.String()
}

// countOps counts ops named name in f (nested regions included).
func countOps(f *stablehlo.Func, name string) int {
	n := 0
	f.Walk(func(op *stablehlo.Op) bool {
		if op.Name == name {
			n++
		}
		return true
	})
	return n
}

func types(ts ...stablehlo.Type) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

// A program with two ordered effects ("b" and "a"), an unordered callback,
// a call, a while, an if and a case: every construct gets the tokens of
// the effects used inside it, sorted by name, before its own values.
func controlFlowModule(t testing.TB, w *lines) *stablehlo.Module {
	b := stablehlo.NewBuilder("flow")
	logTo := func(fb *stablehlo.FuncBuilder, kind Effect, format string, vals ...*stablehlo.Value) {
		require.NoError(t, Fprint(fb, w, kind, format, vals...))
	}
	helper := b.NewFunction("helper", i32).Private()
	logTo(helper, Ordered("b"), "call %v", helper.Arg(0))
	helper.Return(helper.Add(helper.Arg(0), helper.Arg(0)))

	fb := b.NewFunction("main", i32)
	x := fb.Arg(0)
	logTo(fb, Ordered("a"), "start %v", x)
	y := fb.Call(helper, x)[0]
	loop := fb.While([]*stablehlo.Value{fb.ScalarOf(xla.Int32, 0)},
		func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) *stablehlo.Value {
			return rb.Compare(args[0], rb.ScalarOf(xla.Int32, 3), stablehlo.CompareLT, stablehlo.CompareSigned)
		},
		func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) []*stablehlo.Value {
			logTo(rb, Ordered("a"), "loop %v", args[0])
			return []*stablehlo.Value{rb.Add(args[0], rb.ScalarOf(xla.Int32, 1))}
		})
	pred := fb.Compare(x, fb.ScalarOf(xla.Int32, 0), stablehlo.CompareGT, stablehlo.CompareSigned)
	z := fb.If(pred, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
		logTo(rb, Ordered("b"), "then")
		return []*stablehlo.Value{rb.ScalarOf(xla.Int32, 1)}
	}, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
		logTo(rb, Ordered("b"), "else")
		return []*stablehlo.Value{rb.ScalarOf(xla.Int32, 2)}
	})[0]
	idx := fb.Remainder(x, fb.ScalarOf(xla.Int32, 2))
	fb.Case(idx, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
		logTo(rb, Ordered("a"), "case 0")
		return nil
	}, func(rb *stablehlo.FuncBuilder) []*stablehlo.Value {
		logTo(rb, Unordered, "case 1")
		return nil
	})
	logTo(fb, Ordered("a"), "end %v %v %v", y, loop[0], z)
	fb.Return(fb.Add(y, z))
	m, err := b.Build()
	require.NoError(t, err)
	return m
}

func TestLowerStructure(t *testing.T) {
	var w lines
	m := controlFlowModule(t, &w)
	before := printModule(t, m)
	l, err := Lower(m, LowerOptions{})
	require.NoError(t, err)
	assert.Equal(t, before, printModule(t, m), "the input module is not changed")
	assert.Equal(t, []string{"a", "b"}, l.Ordered)
	assert.True(t, l.Unordered)

	main := l.Module.Func("main")
	assert.Equal(t, []string{"!stablehlo.token", "!stablehlo.token", "tensor<i32>"}, types(main.ArgTypes()...), "one token per effect, first")
	assert.Equal(t, []string{"!stablehlo.token", "!stablehlo.token", "tensor<i32>"}, types(main.ResultTypes...))
	helper := l.Module.Func("helper")
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(helper.ArgTypes()...), "helper uses effect b only")
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(helper.ResultTypes...))

	byName := map[string]*stablehlo.Op{}
	main.Walk(func(op *stablehlo.Op) bool {
		if _, seen := byName[op.Name]; !seen {
			byName[op.Name] = op
		}
		return true
	})
	call := byName["func.call"]
	require.NotNil(t, call)
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(valueTypes(call.Operands)...))
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(valueTypes(call.Results)...))
	assert.Same(t, main.Args()[1], call.Operands[0], "the call takes effect b's token from main's parameter")

	while := byName["stablehlo.while"]
	require.NotNil(t, while)
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(valueTypes(while.Results)...), "the loop carries effect a's token")
	body := while.Regions[1].Blocks[0]
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(valueTypes(body.Args)...))
	assert.Equal(t, "!stablehlo.token", body.Terminator().Operands[0].Type.String())
	cond := while.Regions[0].Blocks[0]
	assert.Len(t, cond.Terminator().Operands, 1, "the condition returns only its predicate")

	ifOp := byName["stablehlo.if"]
	require.NotNil(t, ifOp)
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(valueTypes(ifOp.Results)...), "if returns effect b's token")
	caseOp := byName["stablehlo.case"]
	require.NotNil(t, caseOp)
	assert.Equal(t, []string{"!stablehlo.token"}, types(valueTypes(caseOp.Results)...), "case returns effect a's token only (its unordered callback has none)")

	// Every ordered callback takes a token as operand 0 and returns one as
	// result 0; the unordered one takes none.
	ordered, unordered := 0, 0
	l.Module.Walk(func(op *stablehlo.Op) bool {
		if e, ok := callbackEffect(op); ok {
			if e == "" {
				unordered++
				assert.Empty(t, op.Results)
				return true
			}
			ordered++
			assert.Equal(t, "!stablehlo.token", op.Operands[0].Type.String())
			assert.Equal(t, "!stablehlo.token", op.Results[0].Type.String())
			assert.Equal(t, stablehlo.BoolAttr(true), op.Attr("has_side_effect"))
		}
		return true
	})
	assert.Equal(t, 7, ordered)
	assert.Equal(t, 1, unordered)

	// Lowered text parses back and verifies.
	re, err := stablehlo.Parse([]byte(printModule(t, l.Module)))
	require.NoError(t, err)
	require.NoError(t, re.Verify())
}

// The lowered control-flow program runs on the interpreter with its
// prints in program order, across two computations.
func TestLowerRuns(t *testing.T) {
	c := openInterpreter(t, 1)
	var w lines
	exe := compile(t, c, controlFlowModule(t, &w))
	s := NewStream()
	for _, x := range []int32{1, 0} {
		_, err := s.Execute(exe, scalar(t, c, x, nil))
		require.NoError(t, err)
	}
	require.NoError(t, s.Barrier(ctxT(t)))
	assert.Equal(t, []string{
		"start 1", "call 1", "loop 0", "loop 1", "loop 2", "then", "case 1", "end 2 3 1",
		"start 0", "call 0", "loop 0", "loop 1", "loop 2", "else", "case 0", "end 0 3 2",
	}, w.all())
}

// With TokenArrays the entry takes and returns tensor<0xi1> per effect and
// makes its compiler tokens inside.
func TestLowerTokenArrays(t *testing.T) {
	var w lines
	l, err := Lower(controlFlowModule(t, &w), LowerOptions{TokenArrays: true})
	require.NoError(t, err)
	main := l.Module.Func("main")
	assert.Equal(t, []string{"tensor<0xi1>", "tensor<0xi1>", "tensor<i32>"}, types(main.ArgTypes()...))
	assert.Equal(t, []string{"tensor<0xi1>", "tensor<0xi1>", "tensor<i32>"}, types(main.ResultTypes...))
	assert.Equal(t, 2, countOps(main, "stablehlo.after_all"), "one compiler token per effect")
	helper := l.Module.Func("helper")
	assert.Equal(t, "!stablehlo.token", helper.ArgTypes()[0].String(), "inner functions keep real tokens")
	assert.True(t, l.TokenArrays)
}

// Functions and modules without ordered effects keep their signature.
func TestLowerWithoutOrderedEffects(t *testing.T) {
	var w lines
	m := build(t, func(fb *stablehlo.FuncBuilder) {
		require.NoError(t, Fprint(fb, &w, Unordered, "x"))
		fb.Return(fb.Arg(0))
	}, i32)
	l, err := Lower(m, LowerOptions{})
	require.NoError(t, err)
	assert.Empty(t, l.Ordered)
	assert.True(t, l.Unordered)
	assert.Equal(t, []string{"tensor<i32>"}, types(l.Module.Func("main").ArgTypes()...))

	plain := build(t, func(fb *stablehlo.FuncBuilder) { fb.Return(fb.Arg(0)) }, i32)
	l, err = Lower(plain, LowerOptions{})
	require.NoError(t, err)
	assert.False(t, l.HasEffects())
}

// A module whose only public function is not named main lowers its
// tokens onto that function, the one a plugin runs (Lower looked for
// @main only).
func TestLowerOntoTheModulesEntry(t *testing.T) {
	var w lines
	m := build(t, func(fb *stablehlo.FuncBuilder) {
		require.NoError(t, Fprint(fb, &w, Ordered("log"), "%v", fb.Arg(0)))
		fb.Return()
	}, i32)
	m.Func("main").Name = "entry"
	l, err := Lower(m, LowerOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"log"}, l.Ordered)
	assert.Equal(t, "entry", l.Module.EntryName())
	assert.Equal(t, []string{"!stablehlo.token", "tensor<i32>"}, types(l.Module.Func("entry").ArgTypes()...))
}

func TestLowerErrors(t *testing.T) {
	var w lines
	for _, tc := range []struct {
		name string
		mod  func() *stablehlo.Module
		opts LowerOptions
		want string
	}{
		{"no main", func() *stablehlo.Module {
			return build(t, func(fb *stablehlo.FuncBuilder) { fb.Return() })
		}, LowerOptions{Main: "entry"}, "no function @entry"},
		{"main beside the entry", func() *stablehlo.Module {
			m := build(t, func(fb *stablehlo.FuncBuilder) { fb.Return() })
			other := build(t, func(fb *stablehlo.FuncBuilder) { fb.Return() })
			f := other.Func("main")
			f.Name = "other"
			m.AddFunc(f)
			return m
		}, LowerOptions{Main: "other"}, "@other is not the module's entry function: a plugin runs @main"},
		{"lowered twice", func() *stablehlo.Module {
			m := build(t, func(fb *stablehlo.FuncBuilder) { fb.Return() })
			l, err := Lower(m, LowerOptions{})
			require.NoError(t, err)
			return l.Module
		}, LowerOptions{}, "lowered already"},
		{"while condition", func() *stablehlo.Module {
			return build(t, func(fb *stablehlo.FuncBuilder) {
				fb.While([]*stablehlo.Value{fb.ScalarOf(xla.Int32, 0)},
					func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) *stablehlo.Value {
						require.NoError(t, Fprint(rb, &w, Ordered("a"), "cond"))
						return rb.Compare(args[0], rb.ScalarOf(xla.Int32, 3), stablehlo.CompareLT, stablehlo.CompareSigned)
					},
					func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) []*stablehlo.Value {
						return []*stablehlo.Value{rb.Add(args[0], rb.ScalarOf(xla.Int32, 1))}
					})
				fb.Return()
			})
		}, LowerOptions{}, `ordered effect "a" inside a stablehlo.while condition`},
		{"reduce body", func() *stablehlo.Module {
			return build(t, func(fb *stablehlo.FuncBuilder) {
				x := fb.SplatOf(xla.Float32, 1, 4)
				fb.Reduce([]*stablehlo.Value{x}, []*stablehlo.Value{fb.ScalarOf(xla.Float32, 0)}, []int64{0},
					func(rb *stablehlo.FuncBuilder, args []*stablehlo.Value) []*stablehlo.Value {
						require.NoError(t, Fprint(rb, &w, Ordered("a"), "r"))
						return []*stablehlo.Value{rb.Add(args[0], args[1])}
					})
				fb.Return()
			})
		}, LowerOptions{}, `ordered effect "a" inside stablehlo.reduce`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Lower(tc.mod(), tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := Lower(nil, LowerOptions{})
	assert.Error(t, err)
}

// An effect inside a stablehlo.composite's decomposition counts as the
// program's: ordered, the composite becomes the call of its decomposition
// that threads the token (its prints stay in program order); unordered,
// Barrier waits for it and reports its failure.
func TestEffectsInCompositeDecomposition(t *testing.T) {
	for _, mode := range tokenModes {
		t.Run(mode.name, func(t *testing.T) {
			var out lines
			b := stablehlo.NewBuilder("composite")
			dec := b.NewFunction("dec", i32).Private()
			require.NoError(t, Fprint(dec, &out, Ordered("a"), "dec %v", dec.Arg(0)))
			dec.Return(dec.Arg(0))
			fb := b.NewFunction("main", i32)
			require.NoError(t, Fprint(fb, &out, Ordered("a"), "before %v", fb.Arg(0)))
			r := fb.Composite("my.op", dec, []*stablehlo.Value{fb.Arg(0)}, nil, 0)
			require.NoError(t, Fprint(fb, &out, Ordered("a"), "after %v", r[0]))
			fb.Return(r...)
			m, err := b.Build()
			require.NoError(t, err)
			l, err := Lower(m, LowerOptions{TokenArrays: mode.arrays})
			require.NoError(t, err)
			assert.Equal(t, []string{"a"}, l.Ordered)
			text := printModule(t, l.Module)
			assert.NotContains(t, text, "stablehlo.composite")
			assert.Contains(t, text, "call @dec")

			c := openInterpreter(t, 1)
			exe := compileMode(t, c, m, mode.arrays)
			s := NewStream()
			for i := range 3 {
				outs, err := s.Execute(exe, scalar(t, c, int32(i), nil))
				require.NoError(t, err)
				got, err := pjrt.ToScalar[int32](ctxT(t), outs[0])
				require.NoError(t, err)
				assert.Equal(t, int32(i), got)
			}
			require.NoError(t, s.Barrier(ctxT(t)))
			assert.Equal(t, []string{"before 0", "dec 0", "after 0", "before 1", "dec 1", "after 1", "before 2", "dec 2", "after 2"}, out.all())
		})
	}
	t.Run("unordered", func(t *testing.T) {
		gate := make(chan struct{})
		b := stablehlo.NewBuilder("composite")
		dec := b.NewFunction("dec", i32).Private()
		_, err := Callback(dec, HostFunc{Name: "inside", Fn: func([]Array) ([]Array, error) {
			<-gate
			return nil, errors.New("inside failed")
		}}, Unordered)
		require.NoError(t, err)
		dec.Return(dec.Arg(0))
		fb := b.NewFunction("main", i32)
		fb.Return(fb.Composite("my.op", dec, []*stablehlo.Value{fb.Arg(0)}, nil, 0)...)
		m, err := b.Build()
		require.NoError(t, err)
		c := openInterpreter(t, 1)
		exe := compile(t, c, m)
		assert.True(t, exe.Unordered())
		s := NewStream()
		_, err = s.Execute(exe, scalar(t, c, 1, nil))
		require.NoError(t, err)
		close(gate)
		var ce *CallbackError
		require.ErrorAs(t, s.Barrier(ctxT(t)), &ce)
		assert.Equal(t, "inside", ce.Callback)
	})
}
