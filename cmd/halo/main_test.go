package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/testplugin"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestUsageErrors(t *testing.T) {
	code, _, errOut := runCLI()
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "usage: halo")
	code, _, errOut = runCLI("frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown command "frobnicate"`)
	code, _, errOut = runCLI("run")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "FILE.mlir")
	// A wrong argument count shows the command's usage line (review).
	for _, args := range [][]string{{"run"}, {"bench", "a", "b"}, {"devices", "x"}, {"check"}} {
		code, _, errOut = runCLI(args...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, errOut, "usage: halo "+args[0]+" ", args)
	}
	// A flag before the command is said to be one.
	code, _, errOut = runCLI("-plugin", "cpu", "demo")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-plugin before a command: flags go after it")
	// halo help -h is halo help.
	for _, h := range []string{"-h", "--help"} {
		code, out, errOut := runCLI("help", h)
		assert.Equal(t, 0, code, h)
		assert.Contains(t, out, "usage: halo", h)
		assert.Empty(t, errOut, h)
	}
}

func TestDevicesWithPlugin(t *testing.T) {
	so := testplugin.Build(t)
	code, out, errOut := runCLI("devices", "-plugin", so)
	assert.Equal(t, 0, code, errOut)
	for _, want := range []string{"PJRT 0.114", "extensions: ", "attribute xla_version = 2", "platform conformance",
		`kind="conformance_device"`, `memory 0: kind="device" (default)`, `kind="pinned_host"`} {
		assert.Contains(t, out, want)
	}
}

func TestDevicesListsSearch(t *testing.T) {
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir())
	code, out, _ := runCLI("devices")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "plugins:")
	for _, name := range []string{"cpu", "cuda", "tpu", "interpreter"} {
		assert.Contains(t, out, "  "+name)
	}
}

func TestDemo(t *testing.T) {
	for _, args := range [][]string{{"demo"}, {"demo", "-plugin", "interpreter"}} {
		code, out, errOut := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v failed: %s\n%s", args, errOut, out)
		}
		for _, want := range []string{
			"module @demo_mlp", "stablehlo.dot_general", "stablehlo.maximum", "stablehlo.reduce",
			"backend: ", "device(s)", "logits[0] = [", "column sums = [", "check against plain Go", "timings: build", "\nOK\n",
		} {
			assert.Contains(t, out, want, args)
		}
		if len(args) == 3 {
			assert.Contains(t, out, "backend: interpreter")
		}
	}
	code, _, errOut := runCLI("demo", "-plugin", "no-such-plugin")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no-such-plugin")
}

func TestRunFileReportsPluginErrors(t *testing.T) {
	so := testplugin.Build(t)
	path := filepath.Join(t.TempDir(), "bad.mlir")
	assert.NoError(t, os.WriteFile(path, []byte("func.func @main() {\n  return\n}\n"), 0o644))
	code, _, errOut := runCLI("run", "-plugin", so, path)
	assert.Equal(t, 1, code)
	assert.True(t, strings.Contains(errOut, "conformance directive"), errOut)
	code, _, errOut = runCLI("run", "-plugin", so, filepath.Join(t.TempDir(), "missing.mlir"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no such file")
}

const checkFileText = `// A conformance file: modules separated by "// -----".

func.func @add_passes() {
  %0 = stablehlo.constant dense<[7, -8, 3]> : tensor<3xi4>
  %1 = stablehlo.constant dense<[1, -1, 2]> : tensor<3xi4>
  %2 = stablehlo.add %0, %1 : tensor<3xi4>
  check.expect_eq_const %2, dense<[-8, 7, 5]> : tensor<3xi4>
  func.return
}

// -----

func.func @almost_eq_fails() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[2.0, 5.0]> : tensor<2xf32>
  func.return
}

// -----

module @jit_testcase {
  func.func public @main() -> tensor<2xf32> {
    %0 = call @inputs() : () -> tensor<2xf32>
    %1 = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
    %2 = stablehlo.add %0, %0 : tensor<2xf32>
    stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
    return %2 : tensor<2xf32>
  }
  func.func private @inputs() -> tensor<2xf32> {
    %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func public @takes_args(%a: tensor<2xf32>) -> tensor<2xf32> {
    return %a : tensor<2xf32>
  }
}

// -----

module @spmd attributes {mhlo.num_replicas = 2 : i32} {
  func.func @replicas() {
    %0 = stablehlo.replica_id : tensor<ui32>
    %1 = "stablehlo.all_reduce"(%0) ({
    ^bb0(%a: tensor<ui32>, %b: tensor<ui32>):
      %s = stablehlo.add %a, %b : tensor<ui32>
      stablehlo.return %s : tensor<ui32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<ui32>) -> tensor<ui32>
    check.expect_eq_const %1, dense<1> : tensor<ui32>
    func.return
  }
}

// -----

func.func @unknown_op() {
  %0 = "mydialect.frob"() : () -> tensor<2xf32>
  func.return
}

// -----

func.func @broken( {
`

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf.mlir")
	assert.NoError(t, os.WriteFile(path, []byte(checkFileText), 0o644))
	code, out, errOut := runCLI("check", path)
	assert.Equal(t, 1, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"PASS " + path + ":3 @add_passes",
		"FAIL " + path + ":13 @almost_eq_fails: check.expect_almost_eq_const: index [1]: expected 5, got 4 (1 of 2 elements differ; tolerance 0.0001)",
		"PASS " + path + ":23 @main",
		"PASS " + path + ":42 @replicas",
		"FAIL " + path + ":56 @unknown_op: ",
		"FAIL " + path + `:63:20: expected type, found "{"`,
		"3 passed, 3 failed",
	}
	if assert.Len(t, lines, len(want), out) {
		for i, w := range want {
			assert.True(t, strings.HasPrefix(lines[i], w), "line %d:\n got %s\nwant %s", i, lines[i], w)
		}
	}
	assert.Contains(t, out, "mydialect.frob is not supported")

	code, out, _ = runCLI("check", "-run", "^add_", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "1 passed, 1 failed", "the parse error still counts")

	code, _, errOut = runCLI("check")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "FILE.mlir")
	code, out, _ = runCLI("check", filepath.Join(dir, "missing.mlir"))
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "no such file")
}

// failingWriter refuses every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestCLIReviewFixes: output that does not arrive fails the command;
// check names the line of each function (also when one name starts with
// another, and for quoted names) and the failing replica; bench names the
// file in its errors (found in review).
func TestCLIReviewFixes(t *testing.T) {
	var errb strings.Builder
	assert.Equal(t, 1, runChecked([]string{"help"}, failingWriter{}, &errb))
	assert.Contains(t, errb.String(), "halo: writing the output: no space left on device")

	dir := t.TempDir()
	names := filepath.Join(dir, "names.mlir")
	require.NoError(t, os.WriteFile(names, []byte(`func.func @t.x() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<1> : tensor<i32>
  return
}
func.func @t() {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<2> : tensor<i32>
  return
}

func.func @"with space"() {
  return
}
`), 0o644))
	code, out, _ := runCLI("check", names)
	assert.Equal(t, 1, code)
	for _, want := range []string{"PASS " + names + ":1 @t.x", "FAIL " + names + ":6 @t:", "PASS " + names + ":12 @with space"} {
		assert.Contains(t, out, want)
	}

	reps := filepath.Join(dir, "replicas.mlir")
	require.NoError(t, os.WriteFile(reps, []byte(`module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main() {
    %r = stablehlo.replica_id : tensor<ui32>
    check.expect_eq_const %r, dense<0> : tensor<ui32>
    return
  }
}
`), 0o644))
	code, out, _ = runCLI("check", reps)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "@main: device 1 (replica 1, partition 0): check.expect_eq_const")

	fails := filepath.Join(dir, "fails.mlir")
	require.NoError(t, os.WriteFile(fails, []byte(`func.func @main() -> tensor<i32> {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  check.expect_eq_const %0, dense<2> : tensor<i32>
  return %0 : tensor<i32>
}
`), 0o644))
	code, _, errOut := runCLI("bench", "-n", "1", fails)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "halo bench: "+fails+": ")

	many := filepath.Join(dir, "many.mlir")
	require.NoError(t, os.WriteFile(many, []byte(`module attributes {mhlo.num_replicas = 100000 : i32} {
  func.func @main() -> tensor<f32> {
    %0 = stablehlo.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }
}
`), 0o644))
	code, _, errOut = runCLI("run", "-plugin", "interpreter", many)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "halo run: "+many+": ")
	assert.Contains(t, errOut, "the program asks for 100000 devices")
	// Without -plugin: the last backend's error is said once, in the
	// error returned, not also as a backend passed over.
	code, _, errOut = runCLI("run", many)
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, strings.Count(errOut, "the program asks for 100000 devices"), errOut)
}
