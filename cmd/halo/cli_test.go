package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// pluginAsCPU puts a plugin file where discovery finds a CPU plugin and
// skips, saying why, when the machine has a better plugin than that.
func pluginAsCPU(t *testing.T, src []byte) string {
	dir := t.TempDir()
	path := filepath.Join(dir, "pjrt_c_api_cpu_plugin.so")
	require.NoError(t, os.WriteFile(path, src, 0o755))
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", dir)
	if c := pjrt.Candidates(); c[0].Path != path {
		t.Skipf("this machine has a better plugin (%s at %s) than the CPU one this test places", c[0].Name, c[0].Path)
	}
	return path
}

// TestDemoPassesOverFailingBackends: a CPU plugin that loads but cannot
// compile the demo, and one that does not load, are passed over with a
// note naming them and the error, and the demo runs on the interpreter.
func TestDemoPassesOverFailingBackends(t *testing.T) {
	conf, err := os.ReadFile(testplugin.Build(t))
	require.NoError(t, err)
	for _, c := range []struct {
		name, plugin, why string
	}{
		{"compile fails", string(conf), "no conformance directive"},
		{"not a library", "not an ELF file\n", "pjrt_c_api_cpu_plugin.so"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := pluginAsCPU(t, []byte(c.plugin))
			code, out, errOut := runCLI("demo")
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, "halo demo: passing over the cpu plugin "+path+": ")
			assert.Contains(t, errOut, c.why)
			assert.Contains(t, out, "backend: interpreter")
			assert.True(t, strings.HasSuffix(out, "\nOK\n"), out)

			// Named, the plugin is not passed over.
			code, _, errOut = runCLI("demo", "-plugin", path)
			assert.Equal(t, 1, code)
			assert.Contains(t, errOut, c.why)
		})
	}
}

// TestRunPassesOverUnloadablePlugin: halo run notes a plugin it could not
// load and runs on the next backend.
func TestRunPassesOverUnloadablePlugin(t *testing.T) {
	path := pluginAsCPU(t, []byte("junk"))
	file := writeMLIR(t, `func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.5, 2.5]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}`)
	code, out, errOut := runCLI("run", file)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "output 0: tensor<2xf32> = [1.5 2.5]\n", out)
	assert.Contains(t, errOut, "halo run: passing over the cpu plugin "+path)
}

func writeMLIR(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "p.mlir")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestMaxRelErrSeesNaN(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	assert.True(t, math.IsInf(maxRelErr([]float32{nan, 1}, []float32{1, 1}), 1), "a NaN result fails the check")
	assert.True(t, math.IsInf(maxRelErr([]float32{1, 1}, []float32{nan, 1}), 1))
	assert.True(t, math.IsInf(maxRelErr([]float32{inf}, []float32{1}), 1))
	assert.Equal(t, 0.0, maxRelErr([]float32{nan, inf}, []float32{nan, inf}))
	assert.InDelta(t, 0.5, maxRelErr([]float32{3, 0.5}, []float32{2, 0}), 1e-12)
	assert.True(t, math.IsInf(maxRelErr([]float32{1}, []float32{1, 2}), 1))
}

func TestRunPrintsEveryType(t *testing.T) {
	file := writeMLIR(t, `func.func @main() -> (tensor<2xui16>, tensor<2xi16>, tensor<2xui64>, tensor<2xf16>, tensor<2xcomplex<f32>>, tensor<2xcomplex<f64>>, tensor<3xi4>, tensor<2xui4>, tensor<2xf8E4M3FN>, !stablehlo.token, tensor<2xbf16>, tensor<i1>) {
  %0 = stablehlo.constant dense<[1, 65535]> : tensor<2xui16>
  %1 = stablehlo.constant dense<[-1, 300]> : tensor<2xi16>
  %2 = stablehlo.constant dense<[1, 18446744073709551615]> : tensor<2xui64>
  %3 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf16>
  %4 = stablehlo.constant dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>
  %5 = stablehlo.constant dense<[(0.5, -0.0), (-1.0, 8.0)]> : tensor<2xcomplex<f64>>
  %6 = stablehlo.constant dense<[-8, 7, -1]> : tensor<3xi4>
  %7 = stablehlo.constant dense<[15, 3]> : tensor<2xui4>
  %8 = stablehlo.constant dense<[1.0, -2.0]> : tensor<2xf8E4M3FN>
  %9 = stablehlo.create_token : !stablehlo.token
  %10 = stablehlo.constant dense<[1.5, -0.25]> : tensor<2xbf16>
  %11 = stablehlo.constant dense<true> : tensor<i1>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2xui16>, tensor<2xi16>, tensor<2xui64>, tensor<2xf16>, tensor<2xcomplex<f32>>, tensor<2xcomplex<f64>>, tensor<3xi4>, tensor<2xui4>, tensor<2xf8E4M3FN>, !stablehlo.token, tensor<2xbf16>, tensor<i1>
}`)
	code, out, errOut := runCLI("run", "-plugin", "interpreter", file)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `output 0: tensor<2xui16> = [1 65535]
output 1: tensor<2xi16> = [-1 300]
output 2: tensor<2xui64> = [1 18446744073709551615]
output 3: tensor<2xf16> = [1.5 -2]
output 4: tensor<2xcomplex<f32>> = [(1+2i) (3-4i)]
output 5: tensor<2xcomplex<f64>> = [(0.5-0i) (-1+8i)]
output 6: tensor<3xi4> = [-8 7 -1]
output 7: tensor<2xui4> = [15 3]
output 8: tensor<2xf8E4M3FN> = [1 -2]
output 9: !stablehlo.token
output 10: tensor<2xbf16> = [1.5 -0.25]
output 11: tensor<i1> = [true]
`, out)
	assert.Equal(t, "[1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 ...]", formatValues(xla.Int8, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}))
}

// TestRunOnEveryDevice: a program for two replicas runs on two simulated
// devices, each printing its outputs.
func TestRunOnEveryDevice(t *testing.T) {
	file := writeMLIR(t, `module @m attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main() -> tensor<i32> {
    %0 = stablehlo.replica_id : tensor<ui32>
    %1 = stablehlo.convert %0 : (tensor<ui32>) -> tensor<i32>
    return %1 : tensor<i32>
  }
}`)
	code, out, errOut := runCLI("run", file, "-plugin", "interpreter") // flags may follow the file
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "device 0 output 0: tensor<i32> = [0]\ndevice 1 output 0: tensor<i32> = [1]\n", out)
}

// With partitions, outputs are labelled with the device's id and the
// replica and partition it ran: XLA's default assignment puts replica r,
// partition p on device p*replicas+r.
func TestRunLabelsReplicasAndPartitions(t *testing.T) {
	file := writeMLIR(t, `module @m attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 2 : i32} {
  func.func @main() -> (tensor<ui32>, tensor<ui32>) {
    %0 = stablehlo.replica_id : tensor<ui32>
    %1 = stablehlo.partition_id : tensor<ui32>
    return %0, %1 : tensor<ui32>, tensor<ui32>
  }
}`)
	code, out, errOut := runCLI("run", "-plugin", "interpreter", file)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, `device 0 (replica 0, partition 0) output 0: tensor<ui32> = [0]
device 0 (replica 0, partition 0) output 1: tensor<ui32> = [0]
device 2 (replica 0, partition 1) output 0: tensor<ui32> = [0]
device 2 (replica 0, partition 1) output 1: tensor<ui32> = [1]
device 1 (replica 1, partition 0) output 0: tensor<ui32> = [1]
device 1 (replica 1, partition 0) output 1: tensor<ui32> = [0]
device 3 (replica 1, partition 1) output 0: tensor<ui32> = [1]
device 3 (replica 1, partition 1) output 1: tensor<ui32> = [1]
`, out)
}

func TestRunErrors(t *testing.T) {
	args := writeMLIR(t, "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}")
	code, _, errOut := runCLI("run", args)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, args+": @main takes 1 arguments (tensor<4xf32>); halo run runs functions without arguments")

	loop := writeMLIR(t, "func.func @main() -> tensor<i64> {\n  %0 = stablehlo.constant dense<0> : tensor<i64>\n"+spinWhile+"  return %1 : tensor<i64>\n}")
	code, _, errOut = runCLI("run", "-timeout", "50ms", loop)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "stopped after -timeout 50ms")

	none := writeMLIR(t, "func.func @main() {\n  return\n}")
	code, out, errOut := runCLI("run", none)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "(no outputs)\n", out)

	code, _, errOut = runCLI("run", "-timeout", "-1s", none)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "negative")
	code, _, errOut = runCLI("run", none, none)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "want exactly one FILE.mlir, got 2 arguments")
}

func TestArguments(t *testing.T) {
	for _, cmd := range []string{"devices", "demo", "run", "bench", "check"} {
		code, out, errOut := runCLI(cmd, "-h")
		assert.Equal(t, 0, code, cmd)
		assert.Contains(t, out, "usage: halo "+cmd, cmd)
		assert.Empty(t, errOut, cmd)
	}
	for _, cmd := range []string{"devices", "demo"} {
		code, _, errOut := runCLI(cmd, "extra")
		assert.Equal(t, 2, code, cmd)
		assert.Contains(t, errOut, "takes no arguments", cmd)
	}
	code, _, errOut := runCLI("demo", "-frob")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "flag provided but not defined: -frob")
	assert.Contains(t, errOut, "usage: halo demo")

	// "--" ends the flags: a file called -h.
	code, _, errOut = runCLI("run", "--", "-h")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "-h: no such file")

	// An unknown plugin: listed names include the built-in; said once.
	code, out, errOut := runCLI("devices", "-plugin", "nope")
	assert.Equal(t, 1, code)
	assert.NotContains(t, out, "nope")
	assert.Equal(t, 1, strings.Count(errOut, `unknown plugin "nope"`), errOut)
	assert.Contains(t, errOut, "interpreter")
	// The demo says so before printing anything.
	code, out, errOut = runCLI("demo", "-plugin", "nope")
	assert.Equal(t, 1, code)
	assert.Empty(t, out, "nothing printed before the error")
	assert.Contains(t, errOut, `unknown plugin "nope"`)
}

func TestCheckArguments(t *testing.T) {
	file := writeMLIR(t, "func.func @only_args(%a: tensor<f32>) {\n  func.return\n}")
	code, out, errOut := runCLI("check", file, "-timeout", "0s")
	assert.Equal(t, 2, code, out)
	assert.Contains(t, errOut, "want a positive time limit")
	code, _, errOut = runCLI("check", file, "-j", "-2")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "-j -2: want 0 (GOMAXPROCS) or more")
	code, out, errOut = runCLI("check", file, "-j", "1")
	assert.Equal(t, 0, code)
	assert.Equal(t, "0 passed, 0 failed\n", out)
	assert.Contains(t, errOut, "nothing to check")
	code, _, errOut = runCLI("check", "-run", "x", file)
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "matches -run x")

	// An empty file, or one of comments, fails as halo run says (it
	// passed, with "nothing to check": review), beside a good one too.
	empty := writeMLIR(t, "  \n")
	comments := writeMLIR(t, "// just a note\n")
	code, out, _ = runCLI("check", empty, comments, file)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "FAIL "+empty+": the file is empty")
	assert.Contains(t, out, "FAIL "+comments+": the file holds only comments")
	assert.Contains(t, out, "0 passed, 2 failed")

	// A check in a nested module is not skipped in silence: the file
	// fails, saying why (it used to pass, with "nothing to check").
	nested := writeMLIR(t, "module {\n  module @tests {\n    func.func @must_fail() {\n"+
		"      %a = stablehlo.constant dense<1> : tensor<i32>\n      check.expect_eq_const %a, dense<2> : tensor<i32>\n"+
		"      func.return\n    }\n  }\n}")
	code, out, _ = runCLI("check", nested)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "FAIL "+nested+": holds modules inside it or beside each other (@tests), whose functions halo check does not reach")
	assert.Contains(t, out, "0 passed, 1 failed")
	// MLIR bytecode is said as such, not as a parse error.
	bc := filepath.Join(t.TempDir(), "m.mlirbc")
	require.NoError(t, os.WriteFile(bc, []byte("ML\xefR\x00\x01junk"), 0o644))
	code, out, _ = runCLI("check", bc)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "FAIL "+bc+": MLIR bytecode: halo check reads StableHLO text")
}

func TestBench(t *testing.T) {
	file := writeMLIR(t, `func.func @main(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<4xi2>, %d: tensor<2xcomplex<f64>>, %e: tensor<3xbf16>, %f: tensor<2xi1>) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}`)
	code, out, errOut := runCLI("bench", "-n", "5", file, "-plugin", "interpreter")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"backend: interpreter", "@main, 6 argument(s) of pseudo-random values, 1 device(s)",
		"compile ", "first run ", "steady run: median ", "over 5 runs\n"} {
		assert.Contains(t, out, want)
	}
	token := writeMLIR(t, "func.func @main(%t: !stablehlo.token) -> !stablehlo.token {\n  return %t : !stablehlo.token\n}")
	code, _, errOut = runCLI("bench", token)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "@main argument 0: !stablehlo.token: halo bench makes tensor inputs only")
	code, _, errOut = runCLI("bench", "-n", "-1", token)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "must not be negative")
	code, _, errOut = runCLI("bench", "-timeout", "-1s", token)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "must not be negative")

	// A program that never ends is stopped by -timeout (the first run).
	loop := writeMLIR(t, "func.func @main(%x: tensor<i64>) -> tensor<i64> {\n  %0 = stablehlo.abs %x : tensor<i64>\n"+spinWhile+"  return %1 : tensor<i64>\n}")
	code, _, errOut = runCLI("bench", "-timeout", "50ms", loop)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "halo bench: "+loop+": stopped after -timeout 50ms")
}

// TestBenchInputs: the inputs stay in their ranges, whatever the type.
func TestBenchInputs(t *testing.T) {
	for _, c := range []struct {
		typ    string
		lo, hi float64
	}{{"i2", -2, 1}, {"i8", -4, 3}, {"ui2", 0, 3}, {"ui32", 0, 7}, {"f32", -1, 1}, {"bf16", -1, 1}, {"f64", -1, 1}, {"i1", 0, 1}} {
		dt, err := xla.ParseDType(c.typ)
		require.NoError(t, err)
		data, shape, err := benchInput(stablehlo.Tensor(dt, 64), 3)
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), shape.HostBytes())
		vals := strings.Fields(strings.Trim(formatValues(dt, data[:16*dt.HostBytes()]), "[]"))
		seen := map[string]bool{}
		for _, v := range vals {
			seen[v] = true
			if v == "true" || v == "false" {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, c.typ)
			assert.True(t, x >= c.lo && x <= c.hi, "%s: %v outside [%v, %v]", c.typ, x, c.lo, c.hi)
		}
		assert.Greater(t, len(seen), 1, "%s: the values vary", c.typ)
	}
}

// TestRunWaitsForSideEffects: a program whose check fails after its
// (absent) outputs are ready fails the run and the bench, which wait for
// the devices to finish.
func TestRunWaitsForSideEffects(t *testing.T) {
	file := writeMLIR(t, `func.func @main() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  %1 = stablehlo.constant dense<2.0> : tensor<f32>
  stablehlo.custom_call @check.expect_eq(%0, %1) {has_side_effect = true} : (tensor<f32>, tensor<f32>) -> ()
  return
}`)
	for _, cmd := range []string{"run", "bench"} {
		code, _, errOut := runCLI(cmd, "-plugin", "interpreter", file)
		assert.Equal(t, 1, code, cmd)
		assert.Contains(t, errOut, "expect_eq", cmd)
	}
}

func TestBenchLimitsAndInputs(t *testing.T) {
	big := writeMLIR(t, "func.func @main(%a: tensor<100000x100000xf32>) {\n  return\n}")
	code, _, errOut := runCLI("bench", big)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "take more than the 1024 MiB halo bench makes up (argument 0: tensor<100000x100000xf32>)")
	huge := writeMLIR(t, "func.func @main(%a: tensor<9223372036854775807xi8>) {\n  return\n}")
	code, _, errOut = runCLI("bench", huge)
	assert.Equal(t, 1, code)
	assert.NotContains(t, errOut, "panic")

	data, _, err := benchInput(stablehlo.Tensor(xla.Float8E8M0FNU, 64), 1)
	require.NoError(t, err)
	for _, v := range strings.Fields(strings.Trim(formatValues(xla.Float8E8M0FNU, data), "[] .")) {
		x, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err)
		assert.True(t, x >= 1.0/16 && x <= 16, "f8E8M0FNU input %v", v)
	}
	assert.Equal(t, "[(1+Infi)]", formatValues(xla.Complex128, complexBytes(1, math.Inf(1))))
}

// TestFormatValuesHostBytes pins what halo run prints for an output's host
// bytes (now interpreter.FormatHostElement's work, which replaced the
// CLI's own copy): complex numbers as (1-2i), bf16 and f8 as their values,
// sub-byte integers from the low bits of their byte (sign-extended for
// i4), booleans from any non-zero byte.
func TestFormatValuesHostBytes(t *testing.T) {
	le32 := func(fs ...float32) []byte {
		var b []byte
		for _, f := range fs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
		return b
	}
	for _, c := range []struct {
		dt   xla.DType
		data []byte
		want string
	}{
		{xla.Complex64, le32(1, -2, 0.5, 3), "[(1-2i) (0.5+3i)]"},
		{xla.Complex64, le32(float32(math.Inf(-1)), float32(math.NaN())), "[(-Inf+NaNi)]"},
		{xla.Complex128, complexBytes(-1.5, math.Copysign(0, -1)), "[(-1.5-0i)]"},
		{xla.BFloat16, []byte{0xc0, 0x3f, 0x80, 0xbe, 0x80, 0x7f, 0xcd, 0x3d}, "[1.5 -0.25 +Inf 0.100097656]"},
		{xla.Float8E4M3FN, []byte{0x1d, 0x7f}, "[0.1015625 NaN]"},
		{xla.Int4, []byte{0x08, 0x07, 0x0f, 0xff, 0xf1}, "[-8 7 -1 -1 1]"},
		{xla.Uint4, []byte{0x0f, 0xf3}, "[15 3]"},
		{xla.Int2, []byte{0x02, 0xfe}, "[-2 -2]"},
		{xla.Bool, []byte{0, 1, 2, 0xff}, "[false true true true]"},
		{xla.Float32, le32(1e7, 1e-5, 123456), "[1e+07 1e-05 123456]"},
		{xla.Int8, []byte{0x80}, "[-128]"},
		{xla.Invalid, nil, "[]"},
	} {
		assert.Equal(t, c.want, formatValues(c.dt, c.data), "%v", c.dt)
	}
}

func complexBytes(re, im float64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, math.Float64bits(re))
	binary.LittleEndian.PutUint64(b[8:], math.Float64bits(im))
	return b
}

// TestHelpAndFlagValues: every spelling of -h is help on stdout; -h or
// -- as a flag's value is that value.
func TestHelpAndFlagValues(t *testing.T) {
	for _, h := range []string{"-h", "--h", "-help", "--help", "-h=true", "-help=1"} {
		code, out, errOut := runCLI("run", h)
		assert.Equal(t, 0, code, h)
		assert.Contains(t, out, "usage: halo run", h)
		assert.Empty(t, errOut, h)
	}
	// halo help CMD is halo CMD -h; an unknown CMD, or more than one, is
	// a usage error (as go help's).
	for _, cmd := range []string{"run", "bench", "check", "devices"} {
		code, out, _ := runCLI("help", cmd)
		assert.Equal(t, 0, code, cmd)
		assert.Contains(t, out, "usage: halo "+cmd, cmd)
	}
	code, out, errOut := runCLI("help", "nonsense")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, `halo help: unknown command "nonsense"`)
	assert.Contains(t, errOut, "bench FILE", "the usage follows")
	code, _, errOut = runCLI("help", "run", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "one command at a time")
	code, out, _ = runCLI("help", "help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "bench FILE")
	file := writeMLIR(t, "func.func @main() {\n  return\n}")
	code, _, errOut = runCLI("run", "-plugin", "-h", file)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `"-h"`, "the plugin name")
	code, _, errOut = runCLI("run", "-plugin", "--", file, "-timeout", "1s")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `"--"`, "the plugin name")
}

// TestRunNamesTheFailingDevice: when one device fails, the others stop
// (cancelled) and the run reports the failure, whichever device comes
// first, with the file's name; a device that stopped says why.
func TestRunNamesTheFailingDevice(t *testing.T) {
	file := writeMLIR(t, `module @m attributes {mhlo.num_replicas = 4 : i32} {
  func.func @main() -> tensor<f32> {
    %0 = stablehlo.replica_id : tensor<ui32>
    %1 = stablehlo.convert %0 : (tensor<ui32>) -> tensor<f32>
    %2 = stablehlo.constant dense<3.0> : tensor<f32>
    %3 = stablehlo.compare LT, %1, %2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = "stablehlo.if"(%3) ({
      %w = "stablehlo.all_reduce"(%1) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<f32>) -> tensor<f32>
      stablehlo.return %w : tensor<f32>
    }, {
      check.expect_eq_const %1, dense<0.0> : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<i1>) -> tensor<f32>
    return %4 : tensor<f32>
  }
}`)
	for i := 0; i < 20; i++ {
		code, out, errOut := runCLI("run", "-plugin", "interpreter", file)
		require.Equal(t, 1, code, out)
		assert.Contains(t, errOut, "halo run: "+file+": device 3: ")
		assert.Contains(t, errOut, "check.expect_eq_const failed")
		assert.NotContains(t, errOut, "context canceled")
		assert.NotContains(t, errOut, "output 0")
	}
}

// Found in review: the 1 GiB cap on bench inputs was summed in an int64
// that a later argument near 2^63 bytes wrapped (then bench panicked
// making it); a timeout on several devices lost "timed out after" in
// check's report; and bench blamed -timeout for errors it did not cause
// (a missing file, a parse error), printing the path twice.
func TestCLIReviewFindings(t *testing.T) {
	huge := writeMLIR(t, "func.func @main(%a: tensor<16xi8>, %b: tensor<9223372036854775807xi8>) {\n  return\n}")
	code, _, errOut := runCLI("bench", "-n", "1", "-plugin", "interpreter", huge)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "take more than the 1024 MiB")

	const spin = "func.func @loop() {\n  %0 = stablehlo.constant dense<0> : tensor<i64>\n" + spinWhile +
		"  check.expect_eq_const %1, dense<0> : tensor<i64>\n  return\n}"
	for name, text := range map[string]string{
		"one device":   spin,
		"two replicas": "module attributes {mhlo.num_replicas = 2 : i32} {\n" + spin + "\n}",
	} {
		code, out, _ := runCLI("check", "-timeout", "100ms", writeMLIR(t, text))
		assert.Equal(t, 1, code, name)
		assert.Contains(t, out, "timed out after 100ms", name)
	}

	bad := writeMLIR(t, "func.func @main( {")
	missing := filepath.Join(t.TempDir(), "missing.mlir")
	for _, file := range []string{bad, missing} {
		code, _, errOut := runCLI("bench", "-timeout", "1ns", file)
		assert.Equal(t, 1, code, file)
		assert.NotContains(t, errOut, "stopped after -timeout", file)
		assert.Equal(t, 1, strings.Count(errOut, file), "the path once: %s", errOut)
	}
}

// spinWhile is a loop that never ends: %1 = while (%i = %0) with a
// condition always true (%0 an i64 the caller defines).
const spinWhile = `  %1 = stablehlo.while(%i = %0) : tensor<i64>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      stablehlo.return %i : tensor<i64>
    }
`

// TestRunPallasModule: a saved module with a pallas kernel in interpret
// mode runs (its bounds check is a custom call whose handler the pallas
// package registers: the command links it; the module's text here is
// what pallas.Call emitted, so this test itself does not import pallas).
func TestRunPallasModule(t *testing.T) {
	code, out, errOut := runCLI("run", "-plugin", "interpreter", filepath.Join("testdata", "pallas_double.mlir"))
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "output 0: tensor<8xf32> = [0 2 4 6 8 10 12 14]\n", out)
}
