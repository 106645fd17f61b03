package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/stablehlo"
)

// TestParseErrorsAtTheirPosition: run, bench and check say a parse error
// alike, at FILE:LINE:COL as compilers do, without the PJRT call it went
// through; a plugin that refuses the text too has its say after it.
func TestParseErrorsAtTheirPosition(t *testing.T) {
	file := writeMLIR(t, "func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<<1.0> : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
	want := file + ":2:33: unexpected '<' in dense literal"
	for _, cmd := range []string{"run", "bench"} {
		code, _, errOut := runCLI(cmd, "-plugin", "interpreter", file)
		assert.Equal(t, 1, code, cmd)
		assert.Equal(t, "halo "+cmd+": "+want+"\n", errOut, cmd)
	}
	code, out, _ := runCLI("check", file)
	assert.Equal(t, 1, code)
	assert.Equal(t, "FAIL "+want+"\n0 passed, 1 failed\n", out)

	// The plugin's word follows when it is not the same.
	code, _, errOut := runCLI("run", "-plugin", testplugin.Build(t), file)
	assert.Equal(t, 1, code)
	assert.True(t, strings.HasPrefix(errOut, "halo run: "+want+" ("), errOut)
	assert.Contains(t, errOut, "no conformance directive")

	// Text halo's parser does not read goes to the plugin, which may
	// compile it (the conformance plugin reads only its directive).
	other := writeMLIR(t, "// conformance: fail f32[2] -> f32[2]\nfunc.func @main() -> tensor<2xf32> {\n  %0 = mhlo.frob : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
	code, _, errOut = runCLI("run", "-plugin", testplugin.Build(t), other)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "halo run: "+other+": pjrt: PJRT_LoadedExecutable_Execute: ", "compiled, then refused 0 arguments for 1")
	assert.NotContains(t, errOut, "mhlo.frob")
}

// TestRunAndBenchTakeOneModule: a file of several modules (as halo check
// reads them), an empty one, a module without @main and several public
// functions: each is said as such, not as the parser's or the
// interpreter's error about the merged text.
func TestRunAndBenchTakeOneModule(t *testing.T) {
	const one = "func.func @main() -> tensor<i32> {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n  return %0 : tensor<i32>\n}\n"
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	two := write("two.mlir", one+"\n// -----\n\n"+one)
	mods := write("modules.mlir", "module @a {\n"+one+"}\n// -----\nmodule @b {\n"+one+"}\n")
	empty := write("empty.mlir", "")
	blank := write("blank.mlir", " \n\n")
	comments := write("comments.mlir", "// nothing here\n// -----\n// nor here\n")
	public := write("public.mlir", strings.ReplaceAll(one, "@main", "public @f")+strings.ReplaceAll(one, "@main", "@g")+
		strings.ReplaceAll(one, "@main", "private @helper"))
	private := write("private.mlir", strings.ReplaceAll(one, "@main", "private @helper"))
	nested := write("nested.mlir", "module {\n  module @tests {\n"+one+"  }\n}\n")
	adjacent := write("adjacent.mlir", "module @a {\n"+one+"}\nmodule @b {\n"+one+"}\n")
	for _, c := range []struct{ file, want string }{
		{two, "CMD takes one module; " + two + " holds 2 (separated by \"// -----\" lines"},
		{mods, "CMD takes one module; " + mods + " holds 2 (separated by \"// -----\" lines"},
		{empty, empty + " is empty"},
		{blank, blank + " is empty"},
		{"/dev/null", "/dev/null is empty"},
		{comments, comments + " holds only comments"},
		{public, public + ": no @main function, and 2 public functions (@f, @g) to run in its place: name the one to run @main, or make the others private"},
		{private, private + ": no @main function, and no public function to run in its place"},
		// Modules the parser keeps as opaque ops: not "no @main".
		{nested, nested + ": no @main function at the top level: the file holds modules inside its module or beside each other (@tests)"},
		{adjacent, adjacent + ": no @main function at the top level: the file holds modules inside its module or beside each other (@a, @b)"},
	} {
		for _, cmd := range []string{"run", "bench"} {
			code, _, errOut := runCLI(cmd, c.file)
			assert.Equal(t, 1, code, "%s %s", cmd, c.file)
			assert.True(t, strings.HasPrefix(errOut, "halo "+cmd+": "+strings.ReplaceAll(c.want, "CMD", cmd)), "%s %s: %s", cmd, c.file, errOut)
			assert.NotContains(t, errOut, "duplicate function")
			assert.Equal(t, 1, strings.Count(errOut, c.file), "the file once: %s", errOut)
		}
	}

	// One module among separators and comments runs, as does the only
	// public function of a module without @main. A banner comment
	// ("// ------------") is not a separator (MLIR's split-input-file
	// takes a line of exactly "// -----"), and a module that parses whole
	// is one module, whatever comment lines it holds.
	helper := strings.ReplaceAll(one, "@main", "private @helper")
	for _, file := range []string{
		write("trailing.mlir", "// a module\n// -----\n"+one+"// -----\n// the end\n"),
		write("only.mlir", strings.ReplaceAll(one, "@main", "public @only")+helper),
		write("banners.mlir", "// ------------\n// helpers\n// ------------\n"+helper+"\n// ----------------------------------------\n"+one),
		write("banner.mlir", helper+"// ----- main -----\n"+one),
		write("spaces.mlir", "// -----   \r\n"+one+"\t// -----\n"),
		write("whole.mlir", helper+"// -----\n"+one),
	} {
		code, out, errOut := runCLI("run", "-plugin", "interpreter", file)
		assert.Equal(t, 0, code, "%s: %s", file, errOut)
		assert.Equal(t, "output 0: tensor<i32> = [1]\n", out, file)
		code, out, errOut = runCLI("bench", "-plugin", "interpreter", "-n", "1", file)
		assert.Equal(t, 0, code, "%s: %s", file, errOut)
		assert.Contains(t, out, "compile", file)
	}
}

// TestSplitModulesAtExactSeparators: a separator is a line of exactly
// "// -----" (indented or with trailing space at most), as MLIR's
// split-input-file reads it; longer dashes and text after it are
// comments.
func TestSplitModulesAtExactSeparators(t *testing.T) {
	for text, want := range map[string]int{
		"a\n// -----\nb\n":                      2,
		"a\n  // -----  \r\nb\n":                2,
		"a\n// ------------\nb\n":               1,
		"a\n// ----- x\nb\n":                    1,
		"a\n//-----\nb\n":                       1,
		"a\nx // -----\nb\n":                    1,
		"a\n// -----\nb\n// -----\nc":           3,
		"a\r\n// -----\r\nb\r\n":                2,
		"a\n\t// -----\t\nb\n":                  2,
		"a\n// -----// IR Dump //----- //\nb\n": 1,
	} {
		chunks, total := splitModules([]byte(text))
		assert.Len(t, chunks, want, "%q", text)
		assert.Equal(t, want, total, "%q", text)
		assert.Len(t, stablehlo.SplitModules([]byte(text)), total, "%q: ParseAll splits as halo check does", text)
	}
	// A module keeps its lines of the file, so that errors name them.
	chunks, total := splitModules([]byte("// -----\r\n// only a comment\r\n  // -----  \r\nb\r\n"))
	require.Len(t, chunks, 1)
	assert.Equal(t, 3, total)
	assert.Equal(t, "\n\n\nb\r\n", string(chunks[0].src))
	assert.Equal(t, 3, chunks[0].index)
}
