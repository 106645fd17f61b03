package stablehlo

import (
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callAll calls every exported method of recv with zero arguments (no
// variadic ones) and reports the methods that panicked: a nil or zero
// receiver is bad input, never a panic (found in review).
func callAll(t *testing.T, recv any) {
	t.Helper()
	v := reflect.ValueOf(recv)
	for i := range v.NumMethod() {
		name := v.Type().Method(i).Name
		mt := v.Method(i).Type()
		var args []reflect.Value
		for j := range mt.NumIn() {
			if mt.IsVariadic() && j == mt.NumIn()-1 {
				break
			}
			args = append(args, reflect.Zero(mt.In(j)))
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("(%T).%s panicked: %v", recv, name, r)
				}
			}()
			v.Method(i).Call(args)
		}()
	}
}

// Nil (and zero) builders, function builders and modules: every method
// returns an error, a placeholder or nothing, and never panics.
func TestNilReceiversDoNotPanic(t *testing.T) {
	for _, recv := range []any{(*Builder)(nil), &Builder{}, (*FuncBuilder)(nil), &FuncBuilder{}, (*Module)(nil)} {
		callAll(t, recv)
	}
	// The generic constructors take the FuncBuilder as an argument.
	for _, fb := range []*FuncBuilder{nil, {}} {
		assert.NotNil(t, Constant(fb, []float32{1, 2}))
		assert.NotNil(t, ConstantScalar(fb, int32(1)))
		assert.NotNil(t, Splat(fb, float32(1), 2))
	}
}

func TestNilBuilder(t *testing.T) {
	var b *Builder
	m, err := b.Build()
	assert.Nil(t, m)
	require.EqualError(t, err, "stablehlo: Build: nil *Builder (make one with NewBuilder or Extend)")
	require.EqualError(t, b.Err(), "stablehlo: nil *Builder (make one with NewBuilder or Extend)")
	assert.Nil(t, b.Module())
	assert.Nil(t, b.Function("main"))

	// NewFunction returns a FuncBuilder of a module of its own whose Err
	// names the nil Builder; its ops are skipped.
	fb := b.NewFunction("main", f32(2))
	require.NotNil(t, fb)
	be := &BuildError{}
	require.ErrorAs(t, fb.Err(), &be)
	assert.Equal(t, "func.func", be.Op)
	assert.Contains(t, be.Msg, `NewFunction("main") called on a nil *Builder`)
	assert.Equal(t, f32(2), fb.Arg(0).Type)
	x := fb.Add(fb.Arg(0), fb.Arg(0))
	require.NotNil(t, x)
	fb.Return(x)
	assert.Same(t, be, fb.Err(), "the first error stays")
}

// The zero Builder builds an unnamed module, as NewBuilder("") does.
func TestZeroBuilder(t *testing.T) {
	var b Builder
	fb := b.NewFunction("main", f32(2))
	fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)))
	m, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, "", m.Name)
	assert.Same(t, m, b.Module())
	require.NoError(t, m.Verify())

	var b2 Builder
	b2.SetNumReplicas(1)
	fb2 := b2.NewFunction("main")
	fb2.Return()
	m2, err := b2.Build()
	require.NoError(t, err)
	assert.NotNil(t, m2.Attr("mhlo.num_replicas"))
}

func TestNilFuncBuilder(t *testing.T) {
	for _, fb := range []*FuncBuilder{nil, {}} {
		require.EqualError(t, fb.Err(), "stablehlo: nil *FuncBuilder: it builds nothing (get one from Builder.NewFunction, BuilderAt or BuilderAtEnd)")
		assert.Nil(t, fb.Builder())
		assert.Nil(t, fb.Func())
		assert.Nil(t, fb.Block())
		assert.Nil(t, fb.Args())
		assert.Same(t, fb, fb.Private())
		assert.Same(t, fb, fb.WithLoc(Location{Name: "x"}))
		fb.Fail("my.op", errors.New("boom"))
		require.ErrorIs(t, fb.Err(), errNilFuncBuilder)

		// Ops return placeholders, which a real builder rejects.
		a := fb.Arg(0)
		require.NotNil(t, a)
		s := fb.Add(a, a)
		require.NotNil(t, s)
		fb.Return(s)
		b := NewBuilder("m")
		g := b.NewFunction("main")
		g.Return(s)
		requireErr(t, b, "func.return", "placeholder returned by a failed op")

		// If and Case return one placeholder per value their branches
		// return (the closures run with a nil FuncBuilder).
		rs := fb.If(a, func(rb *FuncBuilder) []*Value {
			assert.Nil(t, rb)
			return []*Value{rb.Arg(0), rb.Arg(1)}
		}, nil)
		assert.Len(t, rs, 2)
		rs = fb.Case(a, nil, func(rb *FuncBuilder) []*Value { return []*Value{rb.Arg(0), rb.Arg(1), rb.Arg(2)} })
		assert.Len(t, rs, 3)
	}

	// A zero FuncBuilder given as a callee or decomposition is an error
	// of the calling builder.
	b, fb := newFunc(f32(2))
	fb.Call(&FuncBuilder{}, fb.Arg(0))
	requireErr(t, b, "func.call", "callee is nil")
	b, fb = newFunc(f32(2))
	fb.Composite("my.op", &FuncBuilder{}, []*Value{fb.Arg(0)}, nil, 0)
	requireErr(t, b, "stablehlo.composite", "decomposition must be a function of this module builder")
}

func TestNilModule(t *testing.T) {
	var m *Module
	require.EqualError(t, m.Verify(), "stablehlo: Verify: nil module")
	assert.Nil(t, m.Func("main"))
	assert.Nil(t, m.Attr("x"))
	assert.Equal(t, "main", m.EntryName())
	assert.Nil(t, m.CallCycle(""))
	m.Walk(func(*Op) bool { t.Error("a nil module has no ops"); return true })
	m.AddFunc(&Func{Name: "f"})
	m.SetAttr("x", BoolAttr(true))

	// A nil function added to a module is reported by Verify.
	m = &Module{}
	m.AddFunc(nil)
	require.EqualError(t, m.Verify(), "stablehlo: function 0 is nil")
	assert.Nil(t, m.Func("f"))
	assert.Equal(t, "main", m.EntryName())
}

// Dimensions given to a builder are checked first, by one check: a
// negative dimension or a size past 2^63 elements is named as such, not as
// a consequence (Constant once said "2 elements do not fill
// tensor<-2xf32>"; found in review).
func TestBuilderDimensionErrors(t *testing.T) {
	const (
		neg  = "negative dimension in "
		huge = " has more than 2^63 elements"
	)
	scalar := func(fb *FuncBuilder) *Value { return ConstantScalar(fb, float32(0)) }
	for _, c := range []struct {
		name string
		op   string
		fn   func(fb *FuncBuilder)
		want string
	}{
		{"constant negative", "stablehlo.constant", func(fb *FuncBuilder) { Constant(fb, []float32{1, 2}, -2) }, neg + "tensor<-2xf32>"},
		{"constant huge", "stablehlo.constant", func(fb *FuncBuilder) { Constant(fb, []float32{1}, 1<<62, 4) }, "tensor<4611686018427387904x4xf32>" + huge},
		{"constant dynamic", "stablehlo.constant", func(fb *FuncBuilder) { Constant(fb, []float32{1}, DynamicDim) }, "constant of dynamic type tensor<?xf32>"},
		{"splat negative", "stablehlo.constant", func(fb *FuncBuilder) { Splat(fb, float32(1), 2, -3) }, neg + "tensor<2x-3xf32>"},
		{"iota huge", "stablehlo.iota", func(fb *FuncBuilder) { fb.Iota(f32(1<<62, 4), 0) }, "tensor<4611686018427387904x4xf32>" + huge},
		{"broadcast_in_dim negative", "stablehlo.broadcast_in_dim", func(fb *FuncBuilder) { fb.BroadcastInDim(fb.Arg(0), []int64{-3}, []int64{0}) }, neg + "tensor<-3xf32>"},
		{"broadcast_in_dim huge", "stablehlo.broadcast_in_dim", func(fb *FuncBuilder) { fb.BroadcastInDim(fb.Arg(0), []int64{1 << 62, 4}, []int64{0}) }, "tensor<4611686018427387904x4xf32>" + huge},
		{"broadcast_to negative", "stablehlo.broadcast_in_dim", func(fb *FuncBuilder) { fb.BroadcastTo(fb.Arg(0), -2, 1) }, neg + "tensor<-2x1xf32>"},
		{"broadcast negative", "stablehlo.broadcast", func(fb *FuncBuilder) { fb.Broadcast(fb.Arg(0), -2) }, neg + "tensor<-2x1xf32>"},
		{"broadcast huge", "stablehlo.broadcast", func(fb *FuncBuilder) { fb.Broadcast(fb.Arg(0), 1<<62, 4) }, "tensor<4611686018427387904x4x1xf32>" + huge},
		{"reshape negative", "stablehlo.reshape", func(fb *FuncBuilder) { fb.Reshape(fb.Arg(0), -2, -1) }, "result dimension 1 is dynamic"},
		{"reshape negative static", "stablehlo.reshape", func(fb *FuncBuilder) { fb.Reshape(fb.Arg(0), -2, 1) }, neg + "tensor<-2x1xf32>"},
		// 2^62 * 8 * 4 wraps to 0: the element count once compared equal
		// to an empty operand's.
		{"reshape huge", "stablehlo.reshape", func(fb *FuncBuilder) { fb.Reshape(fb.Arg(1), 1<<62, 8, 4) }, "tensor<4611686018427387904x8x4xf32>" + huge},
		{"rng negative", "stablehlo.rng", func(fb *FuncBuilder) { s := scalar(fb); fb.Rng(s, s, RngUniform, -2) }, neg + "tensor<-2xf32>"},
		{"declared result huge", "func.func", func(fb *FuncBuilder) { fb.DeclareResults(f32(1<<62, 4)) }, "@main: result 0: tensor<4611686018427387904x4xf32>" + huge},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, fb := newFunc(f32(1), f32(0))
			c.fn(fb)
			be := requireErr(t, b, c.op, c.want)
			assert.NotContains(t, be.Msg, "result type", "the dimensions are checked before the result is emitted")
		})
	}
}
