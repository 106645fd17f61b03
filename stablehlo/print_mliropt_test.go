package stablehlo

import (
	"bytes"
	"strings"
	"testing"

	"github.com/halo-ml/halo/internal/mliropt"
)

// mlirRunOpt feeds text to mlir-opt and returns its generic re-print.
func mlirRunOpt(t *testing.T, opt string, text string, extra ...string) string {
	t.Helper()
	out, err := mliropt.Run(opt, text, append([]string{"--mlir-print-op-generic"}, extra...)...)
	if err != nil {
		t.Fatalf("mlir-opt rejected the generic form: %v\n--- input ---\n%s", err, text)
	}
	return out
}

// TestMLIROptAcceptsGenericForm pipes the generic form of a corpus of
// programs covering every op through mlir-opt --allow-unregistered-dialect,
// checks that mlir-opt's re-print parses back into an equal module and
// that halo prints that module exactly as mlir-opt did.
func TestMLIROptAcceptsGenericForm(t *testing.T) {
	opt := mliropt.Path()
	if opt == "" {
		t.Skip(mliropt.Missing)
	}
	progs := mlirAllPrograms(t)
	t.Logf("mlir-opt %s, %d programs", opt, len(progs))
	for _, prog := range progs {
		t.Run(prog.name, func(t *testing.T) {
			text := mlirPrintString(t, prog.m, PrintOptions{Generic: true})
			out := strings.TrimRight(mlirRunOpt(t, opt, text), "\n") + "\n"
			m2, err := Parse([]byte(out))
			if err != nil {
				t.Fatalf("Parse(mlir-opt output): %v\n%s", err, out)
			}
			if d := equalModulesOpaque(prog.m, m2, false, true); d != "" {
				t.Fatalf("mlir-opt's re-print differs: %s\n%s", d, out)
			}
			if again := mlirPrintString(t, m2, PrintOptions{Generic: true}); again != out {
				if d := mlirFirstDiff(out, again); d != "" {
					t.Fatalf("halo prints mlir-opt's output differently:\n%s", d)
				}
			}
			// With locations: mlir-opt prints them through #loc aliases.
			textLoc := mlirPrintString(t, prog.m, PrintOptions{Generic: true, Locations: true})
			outLoc := mlirRunOpt(t, opt, textLoc, "--mlir-print-debuginfo")
			if _, err := Parse([]byte(outLoc)); err != nil {
				t.Fatalf("Parse(mlir-opt output with locations): %v\n%s", err, outLoc)
			}
		})
	}
}

// mlirFirstDiff shows the first differing line of two texts, "" when
// they differ only where mlir-opt writes a large boolean constant as hex:
// halo writes those as lists (the hex form changed in LLVM 2026-02, and
// each version refuses the other's; the module equality above checks the
// values).
func mlirFirstDiff(a, b string) string {
	la, lb := bytes.Split([]byte(a), []byte("\n")), bytes.Split([]byte(b), []byte("\n"))
	if len(la) != len(lb) {
		return "lengths differ"
	}
	for i := 0; i < len(la) && i < len(lb); i++ {
		if bytes.Contains(la[i], []byte(`dense<"0x`)) && bytes.Contains(la[i], []byte("xi1>")) && bytes.Contains(lb[i], []byte("dense<[")) {
			continue
		}
		if !bytes.Equal(la[i], lb[i]) {
			return "line " + mlirItoa(i+1) + ":\nwant " + string(la[i]) + "\ngot  " + string(lb[i])
		}
	}
	return ""
}

func mlirItoa(i int) string { return string(mlirAppendInt(nil, int64(i))) }
