package interpreter_test

import (
	"context"
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
