package stablehlo

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

func mlirPrintString(t testing.TB, m *Module, opts PrintOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := Print(&b, m, opts); err != nil {
		t.Fatalf("Print: %v", err)
	}
	return b.String()
}

var mlirPrintModes = []struct {
	name string
	opts PrintOptions
}{
	{"pretty", PrintOptions{}},
	{"generic", PrintOptions{Generic: true}},
	{"pretty+loc", PrintOptions{Locations: true}},
	{"generic+loc", PrintOptions{Generic: true, Locations: true}},
}

// TestRoundTripCorpus checks parse(print(m)) == m and that print(parse(text))
// is a fixed point, in both forms, for a program of every op.
func TestRoundTripCorpus(t *testing.T) {
	for _, prog := range mlirAllPrograms(t) {
		for _, mode := range mlirPrintModes {
			t.Run(prog.name+"/"+mode.name, func(t *testing.T) {
				text := mlirPrintString(t, prog.m, mode.opts)
				m2, err := Parse([]byte(text))
				if err != nil {
					t.Fatalf("Parse: %v\n%s", err, text)
				}
				if d := equalModules(prog.m, m2, mode.opts.Locations); d != "" {
					t.Fatalf("parse(print(m)) != m: %s\n%s", d, text)
				}
				text2 := mlirPrintString(t, m2, mode.opts)
				if text2 != text {
					t.Fatalf("print(parse(text)) != text:\n%s\n---\n%s", text, text2)
				}
			})
		}
	}
}

// TestCorpusCoversEveryOp checks the hand-built corpus holds every op of
// the op table, and names which of them print in a custom form.
func TestCorpusCoversEveryOp(t *testing.T) {
	seen := map[string]bool{}
	var walk func(ops []*Op)
	walk = func(ops []*Op) {
		for _, op := range ops {
			seen[op.Name] = true
			for _, r := range op.Regions {
				for _, b := range r.Blocks {
					walk(b.Ops)
				}
			}
		}
	}
	for _, prog := range mlirTestCorpus() {
		walk(prog.m.Globals)
		for _, f := range prog.m.Funcs {
			if f.Body != nil {
				for _, b := range f.Body.Blocks {
					walk(b.Ops)
				}
			}
		}
	}
	var generic []string
	for name := range opSpecs {
		if !seen[name] && !strings.HasPrefix(name, "chlo.") { // chlo ops: chlo_ops_test.go
			t.Errorf("the corpus has no %s", name)
		}
		if mlirPrettyPrinters[name] == nil {
			generic = append(generic, name)
		}
	}
	sort.Strings(generic)
	t.Logf("%d ops in the table; generic form only (as StableHLO prints them): %v", len(opSpecs), generic)
}

// TestPrintErrors: invalid IR prints with placeholders and an error.
func TestPrintErrors(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, nil, PrintOptions{}); err == nil {
		t.Error("nil module: no error")
	}
	m := &Module{}
	m.Funcs = append(m.Funcs, nil)
	if err := Print(&b, m, PrintOptions{}); err == nil {
		t.Error("nil function: no error")
	}
	// An op whose operand was never defined.
	m = &Module{}
	_, k := cpFunc(m, "b", nil, nil)
	k.v("stablehlo.abs", Scalar(xla.Float32), cpVals(NewBlock(Scalar(xla.Float32)).Args[0]))
	k.ret("func.return")
	if err := Print(&b, m, PrintOptions{}); err == nil {
		t.Error("undefined value: no error")
	}
}

// TestStringMethods: Module, Func and Op print themselves.
func TestStringMethods(t *testing.T) {
	m := &Module{Name: "m"}
	f, k := cpFunc(m, "main", cpTypes(Scalar(xla.Float32)), cpTypes(Scalar(xla.Float32)))
	x := k.v("stablehlo.abs", Scalar(xla.Float32), cpVals(k.b.Args[0]))
	k.ret("func.return", x)
	if got, want := x.Op().String(), "%0 = stablehlo.abs %<?> : tensor<f32>"; got != want {
		t.Errorf("Op.String() = %q, want %q", got, want)
	}
	wantF := "func.func @main(%arg0: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.abs %arg0 : tensor<f32>\n  return %0 : tensor<f32>\n}"
	if got := f.String(); got != wantF {
		t.Errorf("Func.String() = %q, want %q", got, wantF)
	}
	if got, want := m.String(), "module @m {\n  "+strings.ReplaceAll(wantF, "\n", "\n  ")+"\n}\n"; got != want {
		t.Errorf("Module.String() = %q, want %q", got, want)
	}
}

// TestAliasedTypesPrintWithoutAliases: a type alias used as a tensor's
// element type, or an attribute alias as its encoding, is written out
// when printed (the printer writes no alias definitions), so the text
// parses again to the same program; an alias of a builtin element type
// makes a plain tensor type (found in review: the aliases were kept in
// opaque text and printed undefined).
func TestAliasedTypesPrintWithoutAliases(t *testing.T) {
	src := `!e = f32
!q = !quant.uniform<i8:f32, 1.000000e-01>
#enc = #foo.enc<1>
func.func @f(%a: tensor<4x!e>, %b: tensor<4x!q>, %c: tensor<4xf32, #enc>) -> tensor<4x!e> {
  return %a : tensor<4x!e>
}`
	m, err := Parse([]byte(src))
	require.NoError(t, err)
	args := m.Funcs[0].Body.Blocks[0].Args
	assert.Equal(t, Tensor(xla.Float32, 4), args[0].Type)
	assert.Equal(t, OpaqueType{Text: "tensor<4x!quant.uniform<i8:f32, 1.000000e-01>>"}, args[1].Type)
	assert.Equal(t, OpaqueType{Text: "tensor<4xf32, #foo.enc<1>>"}, args[2].Type)
	for _, mode := range mlirPrintModes {
		text := mlirPrintString(t, m, mode.opts)
		assert.NotContains(t, text, "!e", mode.name)
		assert.NotContains(t, text, "#enc", mode.name)
		m2, err := Parse([]byte(text))
		require.NoError(t, err, "%s:\n%s", mode.name, text)
		assert.Empty(t, equalModules(m, m2, mode.opts.Locations), mode.name)
	}
	// A type that is no element type is refused as one.
	_, err = Parse([]byte("!t = tuple<f32>\nfunc.func @g(%a: tensor<4x!t>) -> tensor<4x!t> {\n  return %a : tensor<4x!t>\n}"))
	require.ErrorContains(t, err, "is not an element type")
}
