package stablehlo

import (
	"bytes"
	"sort"
	"testing"
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
		if !seen[name] {
			t.Errorf("the corpus has no %s", name)
		}
		if mlirPrettyPrinters[name] == nil {
			generic = append(generic, name)
		}
	}
	sort.Strings(generic)
	t.Logf("%d ops in the table; generic form only (as StableHLO prints them): %v", len(opSpecs), generic)
}
