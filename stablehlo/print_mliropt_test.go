package stablehlo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mlirFindOpt returns the path of mlir-opt (Debian's mlir-22-tools), or "".
func mlirFindOpt() string {
	for _, name := range []string{"mlir-opt", "mlir-opt-22"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	matches, _ := filepath.Glob("/usr/lib/llvm-*/bin/mlir-opt")
	for i := len(matches) - 1; i >= 0; i-- {
		if st, err := os.Stat(matches[i]); err == nil && !st.IsDir() {
			return matches[i]
		}
	}
	return ""
}

// mlirRunOpt feeds text to mlir-opt and returns its generic re-print.
func mlirRunOpt(t *testing.T, opt string, text string, extra ...string) string {
	t.Helper()
	args := append([]string{"--allow-unregistered-dialect", "--mlir-print-op-generic"}, extra...)
	cmd := exec.Command(opt, args...)
	cmd.Stdin = bytes.NewReader([]byte(text))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mlir-opt rejected the generic form: %v\n%s\n--- input ---\n%s", err, errb.String(), text)
	}
	return out.String()
}

// TestMLIROptAcceptsGenericForm pipes the generic form of a corpus of
// programs covering every op through mlir-opt --allow-unregistered-dialect,
// checks that mlir-opt's re-print parses back into an equal module and
// that halo prints that module exactly as mlir-opt did.
func TestMLIROptAcceptsGenericForm(t *testing.T) {
	opt := mlirFindOpt()
	if opt == "" {
		t.Skip("mlir-opt not found (PATH mlir-opt, mlir-opt-22, /usr/lib/llvm-*/bin): apt-get install mlir-22-tools")
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
				t.Fatalf("halo prints mlir-opt's output differently:\n%s", mlirFirstDiff(out, again))
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

// mlirFirstDiff shows the first differing line of two texts.
func mlirFirstDiff(a, b string) string {
	la, lb := bytes.Split([]byte(a), []byte("\n")), bytes.Split([]byte(b), []byte("\n"))
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return "line " + mlirItoa(i+1) + ":\nwant " + string(la[i]) + "\ngot  " + string(lb[i])
		}
	}
	return "lengths differ"
}

func mlirItoa(i int) string { return string(mlirAppendInt(nil, int64(i))) }
