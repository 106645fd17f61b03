package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
	for _, name := range []string{"cpu", "cuda", "tpu"} {
		assert.Contains(t, out, "  "+name)
	}
}

func TestDemoPrintsProgram(t *testing.T) {
	code, out, errOut := runCLI("demo")
	if code != 0 {
		t.Fatalf("demo failed: %s", errOut)
	}
	assert.Contains(t, out, "stablehlo.add %arg0, %arg1 : tensor<4xf32>")
	assert.Contains(t, out, "stablehlo.multiply")
}

func TestRunFileReportsPluginErrors(t *testing.T) {
	so := testplugin.Build(t)
	path := filepath.Join(t.TempDir(), "bad.mlir")
	assert.NoError(t, os.WriteFile(path, []byte("module {}\n"), 0o644))
	code, _, errOut := runCLI("run", "-plugin", so, path)
	assert.Equal(t, 1, code)
	assert.True(t, strings.Contains(errOut, "conformance directive"), errOut)
	code, _, errOut = runCLI("run", "-plugin", so, filepath.Join(t.TempDir(), "missing.mlir"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no such file")
}
