// Package capigen turns the measured PJRT / XLA FFI ABI tables in
// third_party/pjrt into the Go mirrors of package capi and the C header used
// by the conformance test plugin.
//
// It is a library so that the tests of package capi can run it in memory and
// compare the result with the committed files; the command
// internal/capi/internal/gen is a thin wrapper used by go generate.
package capigen

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// TableDir is the directory, relative to the repository root, that holds the
// ABI tables.
const TableDir = "third_party/pjrt"

// LayoutFiles are the layout tables, in the order their structs are emitted.
var LayoutFiles = []string{"pjrt_layout.tsv", "pjrt_ext_layout.tsv", "ffi_layout.tsv"}

// EnumFiles are the enum tables, in the order their constants are emitted.
var EnumFiles = []string{"pjrt_enums.tsv", "ffi_enums.tsv"}

const (
	apiTableFile    = "pjrt_api_table.tsv"
	sizeHistoryFile = "pjrt_struct_size_history.tsv"
)

// LayoutRow is one row of a layout table: one field of one C struct.
type LayoutRow struct {
	File string // table file name, e.g. "pjrt_layout.tsv"
	Line int    // 1-based line number in File

	Struct    string
	Field     string
	Offset    int
	Sizeof    int // sizeof(struct)
	FieldSize int
	Align     int // _Alignof(struct)
	Macro     int // <struct>_STRUCT_SIZE, -1 when the header has none
	CType     string
	AnonOf    string // name of the anonymous union the field sits in, or ""
	Header    string
	// MinorFirstSeen is the minor version in which the field first appeared
	// ("pre" for fields older than versioning); only pjrt_layout.tsv has it.
	MinorFirstSeen string
}

// Where names the row for error messages.
func (r *LayoutRow) Where() string {
	return fmt.Sprintf("%s:%d (%s.%s)", r.File, r.Line, r.Struct, r.Field)
}

// EnumRow is one enum constant.
type EnumRow struct {
	File, Header string
	Line         int
	Type, Name   string
	Value        int64
}

// APIRow is one slot of the PJRT_Api function table.
type APIRow struct {
	Index, ByteOffset int
	Name              string
	AddedInMinor      int // -1: pre-versioning
	PresentFromMinor  int // 0: present in every measured minor (">=29" rows say "<=29")
	ReportedFromMinor int // as PresentFromMinor, for PJRT_Api_STRUCT_SIZE
}

// SizeRow is one row of the struct size history.
type SizeRow struct {
	Struct     string
	Minor      int
	StructSize int
	Sizeof     int
}

// Tables holds every table, parsed.
type Tables struct {
	Layout  []*LayoutRow
	Enums   []*EnumRow
	API     []*APIRow
	History []*SizeRow
}

// tsv reads a tab-separated file and checks its header starts with want.
func tsv(fsys fs.FS, name string, want []string) ([][]string, error) {
	data, err := fs.ReadFile(fsys, TableDir+"/"+name)
	if err != nil {
		return nil, err
	}
	text := strings.TrimRight(string(data), "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: empty", name)
	}
	head := strings.Split(strings.TrimRight(lines[0], "\r"), "\t")
	if len(head) < len(want) {
		return nil, fmt.Errorf("%s: header has %d columns, want at least %d", name, len(head), len(want))
	}
	for i, w := range want {
		if head[i] != w {
			return nil, fmt.Errorf("%s: column %d is %q, want %q", name, i+1, head[i], w)
		}
	}
	var rows [][]string
	for i, l := range lines[1:] {
		l = strings.TrimRight(l, "\r")
		if l == "" {
			return nil, fmt.Errorf("%s:%d: empty line", name, i+2)
		}
		cols := strings.Split(l, "\t")
		if len(cols) != len(head) {
			return nil, fmt.Errorf("%s:%d: %d columns, header has %d", name, i+2, len(cols), len(head))
		}
		rows = append(rows, cols)
	}
	return rows, nil
}

func atoi(file string, line int, col, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s:%d: column %s: %q is not an integer", file, line, col, s)
	}
	return n, nil
}

// minorCell parses a minor version cell: "<=29" (present in every measured
// minor) gives 0, "pre-versioning" gives -1, a number gives itself.
func minorCell(file string, line int, col, s string) (int, error) {
	switch {
	case s == "pre-versioning":
		return -1, nil
	case strings.HasPrefix(s, "<="):
		if _, err := strconv.Atoi(s[2:]); err != nil {
			return 0, fmt.Errorf("%s:%d: column %s: bad minor %q", file, line, col, s)
		}
		return 0, nil
	}
	return atoi(file, line, col, s)
}

var layoutCols = []string{"struct", "field", "offset", "size_of_struct", "field_size", "align_of_struct", "STRUCT_SIZE_macro", "field_type", "anon_member_of", "header"}

// ReadTables reads every table from fsys, whose root is the repository root.
func ReadTables(fsys fs.FS) (*Tables, error) {
	t := &Tables{}
	for _, f := range LayoutFiles {
		rows, err := tsv(fsys, f, layoutCols)
		if err != nil {
			return nil, err
		}
		for i, c := range rows {
			line := i + 2
			r := &LayoutRow{File: f, Line: line, Struct: c[0], Field: c[1], CType: strings.TrimSpace(c[7]), AnonOf: c[8], Header: c[9]}
			ints := []*int{&r.Offset, &r.Sizeof, &r.FieldSize, &r.Align, &r.Macro}
			for j, p := range ints {
				if *p, err = atoi(f, line, layoutCols[2+j], c[2+j]); err != nil {
					return nil, err
				}
			}
			if len(c) > 10 {
				r.MinorFirstSeen = c[10]
			}
			if r.Struct == "" || r.Field == "" {
				return nil, fmt.Errorf("%s:%d: empty struct or field name", f, line)
			}
			t.Layout = append(t.Layout, r)
		}
	}
	for _, f := range EnumFiles {
		rows, err := tsv(fsys, f, []string{"enum_type", "name", "value", "header"})
		if err != nil {
			return nil, err
		}
		for i, c := range rows {
			v, err := strconv.ParseInt(c[2], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: enum value %q: %v", f, i+2, c[2], err)
			}
			// ffi_enums.tsv spells one type "enum XLA_FFI_Handler_TraitsBits".
			typ := strings.TrimSpace(strings.TrimPrefix(c[0], "enum "))
			t.Enums = append(t.Enums, &EnumRow{File: f, Line: i + 2, Type: typ, Name: c[1], Value: v, Header: c[3]})
		}
	}
	rows, err := tsv(fsys, apiTableFile, []string{"index", "byte_offset", "name", "minor_when_first_added", "date_first_added"})
	if err != nil {
		return nil, err
	}
	if len(rows) > 0 && len(rows[0]) < 7 {
		return nil, fmt.Errorf("%s: want 7 columns", apiTableFile)
	}
	for i, c := range rows {
		line := i + 2
		r := &APIRow{Name: c[2]}
		if r.Index, err = atoi(apiTableFile, line, "index", c[0]); err != nil {
			return nil, err
		}
		if r.ByteOffset, err = atoi(apiTableFile, line, "byte_offset", c[1]); err != nil {
			return nil, err
		}
		if r.AddedInMinor, err = minorCell(apiTableFile, line, "minor_when_first_added", c[3]); err != nil {
			return nil, err
		}
		if r.PresentFromMinor, err = minorCell(apiTableFile, line, "slot_present_from_minor", c[5]); err != nil {
			return nil, err
		}
		if r.ReportedFromMinor, err = minorCell(apiTableFile, line, "reported_in_struct_size_from_minor", c[6]); err != nil {
			return nil, err
		}
		if r.PresentFromMinor < 0 || r.ReportedFromMinor < 0 {
			return nil, fmt.Errorf("%s:%d: slot presence cannot be pre-versioning", apiTableFile, line)
		}
		t.API = append(t.API, r)
	}
	rows, err = tsv(fsys, sizeHistoryFile, []string{"struct", "minor", "date", "commit", "STRUCT_SIZE", "sizeof"})
	if err != nil {
		return nil, err
	}
	for i, c := range rows {
		line := i + 2
		r := &SizeRow{Struct: c[0]}
		if r.Minor, err = atoi(sizeHistoryFile, line, "minor", c[1]); err != nil {
			return nil, err
		}
		if r.StructSize, err = atoi(sizeHistoryFile, line, "STRUCT_SIZE", c[4]); err != nil {
			return nil, err
		}
		if r.Sizeof, err = atoi(sizeHistoryFile, line, "sizeof", c[5]); err != nil {
			return nil, err
		}
		t.History = append(t.History, r)
	}
	return t, nil
}
