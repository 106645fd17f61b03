package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/halo-ml/halo/stablehlo"
)

// fileError is an error about a file's text that names the file itself,
// so callers do not prefix it again: a parse error at a position, written
// as compilers write them (FILE:LINE:COL: message), or what the file
// holds ("FILE is empty").
type fileError struct {
	msg string
	err error // the parser's error behind it, if any
}

func (e *fileError) Error() string { return e.msg }
func (e *fileError) Unwrap() error { return e.err }

// parseError names path in err, the error of parsing its text: at the
// position, when the parser gave one.
func parseError(path string, err error) error {
	var se *stablehlo.SyntaxError
	if errors.As(err, &se) {
		return &fileError{msg: fmt.Sprintf("%s:%d:%d: %s", path, se.Line, se.Col, se.Msg), err: err}
	}
	return &fileError{msg: fmt.Sprintf("%s: %v", path, err), err: err}
}

// moduleFile is the one module of a file that halo run or bench runs.
type moduleFile struct {
	path string
	text []byte
	// m is nil when halo's parser cannot read text (MLIR bytecode, or a
	// dialect halo does not know), which still goes to the backend as it
	// is; parseErr is then the parser's error, nil for bytecode.
	m        *stablehlo.Module
	parseErr error
}

// mlirBytecode starts a file of MLIR bytecode.
var mlirBytecode = []byte("ML\xefR")

// readModule reads path for the command cmd ("run", "bench"), which takes
// one module: an empty file, or one of several modules (separated by lines
// "// -----", as halo check reads them), is an error naming the file. The
// whole text is parsed first: when it is one module (no function defined
// twice, no module op beside another), it is run whatever comment lines it
// holds; the separators decide only for text that is not.
func readModule(cmd, path string) (*moduleFile, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mf := &moduleFile{path: path, text: text}
	if bytes.HasPrefix(text, mlirBytecode) {
		return mf, nil
	}
	switch {
	case len(bytes.TrimSpace(text)) == 0:
		return nil, &fileError{msg: path + " is empty"}
	case len(bytes.TrimSpace(stripComments(text))) == 0:
		return nil, &fileError{msg: path + " holds only comments"}
	}
	m, perr := stablehlo.Parse(text)
	if perr == nil && isOneModule(m) {
		mf.m = m
		return mf, nil
	}
	if chunks, _ := splitModules(text); len(chunks) > 1 {
		return nil, &fileError{msg: fmt.Sprintf("%s takes one module; %s holds %d (separated by \"// -----\" lines, as halo check reads them)", cmd, path, len(chunks))}
	}

	if perr != nil {
		mf.parseErr = parseError(path, perr)
	}
	mf.m = m
	return mf, nil
}

// isOneModule reports whether m, parsed from a whole file, is one module
// rather than several read as one: no function is defined twice, and no
// module op stands among its top-level ops (two "module { ... }" in a
// file).
func isOneModule(m *stablehlo.Module) bool {
	for _, g := range m.Globals {
		if g.Name == "builtin.module" {
			return false
		}
	}
	seen := make(map[string]bool, len(m.Funcs))
	for _, f := range m.Funcs {
		if seen[f.Name] {
			return false
		}
		seen[f.Name] = true
	}
	return true
}

// moduleAdvice says how to give halo a file of several modules.
const moduleAdvice = "put one module in the file, or separate modules with \"// -----\" lines (halo check reads each)"

// nestedModules names the module ops among m's top-level ops: a module
// nested in the file's outer module, or several modules written one after
// another (the parser reads them as one), which halo does not look into.
func nestedModules(m *stablehlo.Module) []string {
	var names []string
	for _, g := range m.Globals {
		if g.Name != "builtin.module" {
			continue
		}
		if n, ok := g.Attr("sym_name").(stablehlo.StringAttr); ok {
			names = append(names, "@"+string(n))
		} else {
			names = append(names, fmt.Sprintf("an unnamed one at line %d", g.Line))
		}
	}
	return names
}

// entryFunc is the function halo run and bench run: @main, or the only
// public function when there is no @main (as in a JAX export).
func entryFunc(path string, m *stablehlo.Module) (*stablehlo.Func, error) {
	if f := m.Func(m.EntryName()); f != nil {
		return f, nil
	}
	var public []string
	for _, f := range m.Funcs {
		if !f.Private && f.Body != nil {
			public = append(public, "@"+f.Name)
		}
	}
	if inner := nestedModules(m); len(inner) > 0 && len(public) != 1 {
		return nil, fmt.Errorf("%s: no @main function at the top level: the file holds modules inside its module or beside each other (%s), which halo does not look into: %s", path, strings.Join(inner, ", "), moduleAdvice)
	}
	if len(public) == 0 {
		return nil, fmt.Errorf("%s: no @main function, and no public function to run in its place", path)
	}
	return nil, fmt.Errorf("%s: no @main function, and %d public functions (%s) to run in its place: name the one to run @main, or make the others private", path, len(public), strings.Join(public, ", "))
}

// moduleChunk is one module of a file of modules separated by lines
// "// -----".
type moduleChunk struct {
	// src is the module's text after as many newlines as there are lines
	// before it, so that the parser's line numbers are the file's.
	src   []byte
	index int // 1-based, among every part of the file (empty ones too)
}

// splitModules splits text at lines "// -----" as stablehlo.SplitModules
// does (and ParseAll, so halo check, run and bench read a file as the
// library does) and returns the parts with more than comments and space;
// total counts every part.
func splitModules(text []byte) (chunks []moduleChunk, total int) {
	parts := stablehlo.SplitModules(text)
	for k, p := range parts {
		if len(bytes.TrimSpace(stripComments(p.Text))) == 0 {
			continue
		}
		src := append(bytes.Repeat([]byte("\n"), p.Line-1), p.Text...)
		chunks = append(chunks, moduleChunk{src: src, index: k + 1})
	}
	return chunks, len(parts)
}

func stripComments(b []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(l); !bytes.HasPrefix(t, []byte("//")) {
			out = append(out, l...)
		}
	}
	return out
}
