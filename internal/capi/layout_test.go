package capi

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/halo-ml/halo/internal/capi/internal/capigen"
)

// layoutRow is the Go side of one layout table row (see zz_layout_test.go).
type layoutRow struct {
	Struct, Field string
	Offset        uintptr
	Size          uintptr
	StructSize    uintptr
	StructAlign   uintptr
}

// tableRow is one layout table row as read by the test itself.
type tableRow struct {
	where                                   string
	structName, field                       string
	offset, sizeOf, fieldSize, align, macro int
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := capigen.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readLayoutTables(t *testing.T) []tableRow {
	t.Helper()
	root := repoRoot(t)
	var rows []tableRow
	for _, name := range capigen.LayoutFiles {
		data, err := os.ReadFile(filepath.Join(root, "third_party", "pjrt", name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		for i, l := range lines[1:] {
			c := strings.Split(l, "\t")
			if len(c) < 10 {
				t.Fatalf("%s:%d: %d columns", name, i+2, len(c))
			}
			r := tableRow{where: fmt.Sprintf("%s:%d", name, i+2), structName: c[0], field: c[1]}
			for j, p := range []*int{&r.offset, &r.sizeOf, &r.fieldSize, &r.align, &r.macro} {
				n, err := strconv.Atoi(c[2+j])
				if err != nil {
					t.Fatalf("%s:%d: column %d: %v", name, i+2, 3+j, err)
				}
				*p = n
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func TestLayoutMatchesTable(t *testing.T) {
	table := readLayoutTables(t)
	if len(table) == 0 {
		t.Fatal("no layout rows")
	}
	type key struct{ s, f string }
	gen := map[key]layoutRow{}
	for _, r := range layoutRows {
		k := key{r.Struct, r.Field}
		if _, dup := gen[k]; dup {
			t.Errorf("%s.%s: twice in the generated layout data", r.Struct, r.Field)
		}
		gen[k] = r
	}
	if len(gen) != len(table) {
		t.Errorf("generated layout data has %d rows, the tables have %d", len(gen), len(table))
	}
	macros := map[string]int{}
	for _, tr := range table {
		name := tr.structName + "." + tr.field
		g, ok := gen[key{tr.structName, tr.field}]
		if !ok {
			t.Errorf("%s (%s): no Go mirror field", name, tr.where)
			continue
		}
		if int(g.Offset) != tr.offset {
			t.Errorf("%s (%s): Go offset %d, C offset %d", name, tr.where, g.Offset, tr.offset)
		}
		if int(g.Size) != tr.fieldSize {
			t.Errorf("%s (%s): Go size %d, C size %d", name, tr.where, g.Size, tr.fieldSize)
		}
		if int(g.StructSize) != tr.sizeOf {
			t.Errorf("%s (%s): unsafe.Sizeof(%s) = %d, C sizeof %d", name, tr.where, tr.structName, g.StructSize, tr.sizeOf)
		}
		if int(g.StructAlign) != tr.align {
			t.Errorf("%s (%s): unsafe.Alignof(%s) = %d, C alignment %d", name, tr.where, tr.structName, g.StructAlign, tr.align)
		}
		macros[tr.structName] = tr.macro
	}
	for s, macro := range macros {
		got, ok := structSizeConsts[s]
		switch {
		case macro < 0 && ok:
			t.Errorf("%s: has %s_STRUCT_SIZE = %d, the table has no macro", s, s, got)
		case macro >= 0 && !ok:
			t.Errorf("%s: no %s_STRUCT_SIZE constant, the table says %d", s, s, macro)
		case macro >= 0 && int(got) != macro:
			t.Errorf("%s: %s_STRUCT_SIZE = %d, the table says %d", s, s, got, macro)
		}
	}
	if len(structSizeConsts) > len(macros) {
		t.Errorf("%d STRUCT_SIZE constants for %d structs", len(structSizeConsts), len(macros))
	}
}

func TestGeneratedCodeUpToDate(t *testing.T) {
	root := repoRoot(t)
	files, err := capigen.Generate(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files[capigen.HeaderPath]; !ok {
		t.Errorf("generator did not produce %s", capigen.HeaderPath)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./internal/capi)", name, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from the generator's output: run go generate ./internal/capi\n%s", name, firstDiff(string(got), string(want)))
		}
	}
	// No stale generated Go file may remain.
	stale, err := filepath.Glob(filepath.Join(root, "internal", "capi", "zz_*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		rel, _ := filepath.Rel(root, p)
		if _, ok := files[filepath.ToSlash(rel)]; !ok {
			t.Errorf("%s is not produced by the generator any more: delete it", rel)
		}
	}
}

// firstDiff describes the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d:\n  committed: %q\n  generated: %q", i+1, gl, wl)
		}
	}
	return "(no line differs)"
}
