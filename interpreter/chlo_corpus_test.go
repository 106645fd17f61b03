package interpreter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/chlo"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
)

// runCorpusModule runs every public function of m that takes no
// arguments, as `halo check` does: the check custom calls inside fail the
// run on a mismatch.
func runCorpusModule(t *testing.T, m *stablehlo.Module) int {
	t.Helper()
	n := 0
	for _, f := range m.Funcs {
		if f.Private || f.Body == nil || len(f.Args()) != 0 {
			continue
		}
		p, err := interpreter.Compile(m, f.Name)
		require.NoError(t, err, "@%s", f.Name)
		_, err = p.Run(context.Background(), interpreter.Device{}, nil)
		require.NoError(t, err, "@%s", f.Name)
		n++
	}
	return n
}

// xlaApproximate lists the corpus files whose expected values are XLA's
// float32 approximations rather than correctly rounded results: XLA
// evaluates these functions in float32 arithmetic (the Lanczos sum and
// the reflection formula for lgamma, the shifted asymptotic series for
// digamma), and StableHLO's own interpreter passes them because it runs
// the same float32 decompositions. Measured against mpmath at 50 digits,
// the expected values are up to 53+ ULP off (most of them 4 ULP or more),
// while their absolute error stays below 2e-5; the interpreter's kernels
// and the chlo.Expand decompositions evaluate in float64 and round once,
// so they are within 1 ULP of the true value and cannot also be within
// @check.expect_close's 3 ULP of XLA's. For these files the test runs the
// check as written and accepts only a @check.expect_close mismatch as its
// failure, then runs the file again with the check that upstream's JAX
// test generator uses for ops it computes approximately,
// @check.expect_almost_eq (absolute tolerance 1e-3), which must pass.
var xlaApproximate = map[string]bool{
	"lgamma_float32_20_20_chlo.mlir":  true,
	"digamma_float32_20_20_chlo.mlir": true,
}

// runApproximate runs m as runCorpusModule does, but first lets a
// @check.expect_close mismatch through (logged), then checks the results
// again with @check.expect_almost_eq.
func runApproximate(t *testing.T, src []byte, expand bool) {
	t.Helper()
	parse := func() *stablehlo.Module {
		m, err := stablehlo.Parse(src)
		require.NoError(t, err)
		if expand {
			require.NoError(t, chlo.Expand(m, chlo.ExpandOptions{}))
		}
		return m
	}
	m := parse()
	p, err := interpreter.Compile(m, "main")
	require.NoError(t, err)
	_, err = p.Run(context.Background(), interpreter.Device{}, nil)
	if err != nil {
		var ce *interpreter.CheckError
		require.True(t, errors.As(err, &ce), "not a check failure: %v", err)
		assert.Equal(t, "@check.expect_close", ce.Check)
		t.Logf("expand=%v: as written: %v", expand, err)
	}
	m = parse()
	swapped := 0
	m.Walk(func(op *stablehlo.Op) bool {
		if op.Name == "stablehlo.custom_call" && op.Attr("call_target_name") == stablehlo.StringAttr("check.expect_close") {
			op.SetAttr("call_target_name", stablehlo.StringAttr("check.expect_almost_eq"))
			swapped++
		}
		return true
	})
	require.Positive(t, swapped, "no @check.expect_close to relax")
	assert.Positive(t, runCorpusModule(t, m))
}

// The CHLO conformance corpus (testdata/chlo_corpus, JAX-generated test
// programs of openxla/stablehlo with their inputs and expected outputs):
// every file parses, contains a CHLO op, and passes its checks on the
// interpreter, both as written (the CHLO kernels) and after chlo.Expand
// (the StableHLO decompositions).
func TestChloCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "chlo_corpus", "*.mlir"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	ops := map[string]bool{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			m, err := stablehlo.Parse(src)
			require.NoError(t, err)
			var used []string
			m.Walk(func(op *stablehlo.Op) bool {
				if strings.HasPrefix(op.Name, "chlo.") && !slices.Contains(used, op.Name) {
					used = append(used, op.Name)
				}
				return true
			})
			require.NotEmpty(t, used, "no CHLO op in %s", path)
			for _, u := range used {
				ops[u] = true
			}
			if xlaApproximate[filepath.Base(path)] {
				runApproximate(t, src, false)
				runApproximate(t, src, true)
				return
			}
			assert.Positive(t, runCorpusModule(t, m), "no public function without arguments")

			// The same program with its CHLO ops decomposed.
			m2, err := stablehlo.Parse(src)
			require.NoError(t, err)
			require.NoError(t, chlo.Expand(m2, chlo.ExpandOptions{}))
			m2.Walk(func(op *stablehlo.Op) bool {
				assert.False(t, strings.HasPrefix(op.Name, "chlo."), "left after Expand: %s", op.Name)
				return true
			})
			runCorpusModule(t, m2)
		})
	}
	names := make([]string, 0, len(ops))
	for n := range ops {
		names = append(names, n)
	}
	slices.Sort(names)
	t.Logf("%d files, CHLO ops: %v", len(files), names)
}
