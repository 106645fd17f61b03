// Package mliropt finds and runs Debian's mlir-opt (package mlir-22-tools)
// for tests that check the MLIR halo emits with an independent parser and
// verifier. Tests skip, saying why (Missing), where it is not installed;
// .ci/run installs it.
package mliropt

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Missing is the reason a test gives for skipping where Path finds no
// mlir-opt.
const Missing = "mlir-opt not found (PATH mlir-opt, mlir-opt-22, /usr/lib/llvm-*/bin): apt-get install mlir-22-tools"

// Path returns the path of mlir-opt (on PATH as mlir-opt or mlir-opt-22,
// else the newest /usr/lib/llvm-*/bin/mlir-opt), or "".
func Path() string {
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

// Run feeds text to the mlir-opt at path with --allow-unregistered-dialect
// and args, and returns what it printed. When mlir-opt refuses the text,
// the error holds its diagnostics.
func Run(path, text string, args ...string) (string, error) {
	cmd := exec.Command(path, append([]string{"--allow-unregistered-dialect"}, args...)...)
	cmd.Stdin = bytes.NewReader([]byte(text))
	var out, diag bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &diag
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("mlir-opt: %v\n%s", err, diag.String())
	}
	return out.String(), nil
}

// Verify has mlir-opt parse and verify each text (ops of unregistered
// dialects such as tt taken as they are), failing tb with mlir-opt's
// diagnostics and the text it refused; it skips tb, saying why, where
// mlir-opt is not installed.
func Verify(tb testing.TB, texts ...string) {
	tb.Helper()
	opt := Path()
	if opt == "" {
		tb.Skip(Missing)
	}
	for i, text := range texts {
		if _, err := Run(opt, text); err != nil {
			tb.Fatalf("text %d of %d: %v\n--- input ---\n%s", i+1, len(texts), err, text)
		}
	}
}
