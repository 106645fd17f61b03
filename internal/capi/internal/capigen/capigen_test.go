package capigen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// realTables returns the repository's tables as an in-memory file system.
func realTables(t *testing.T) fstest.MapFS {
	t.Helper()
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	names := append(append([]string{apiTableFile, sizeHistoryFile}, LayoutFiles...), EnumFiles...)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(TableDir), n))
		if err != nil {
			t.Fatal(err)
		}
		fsys[TableDir+"/"+n] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// edit replaces the first occurrence of old in a table.
func edit(t *testing.T, fsys fstest.MapFS, file, old, new string) {
	t.Helper()
	f := fsys[TableDir+"/"+file]
	if !strings.Contains(string(f.Data), old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	f.Data = []byte(strings.Replace(string(f.Data), old, new, 1))
}

func TestGenerateRealTables(t *testing.T) {
	fsys := realTables(t)
	tables, err := ReadTables(fsys)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(tables)
	if err != nil {
		t.Fatal(err)
	}
	// No row is dropped: every row becomes exactly one member.
	n := 0
	for _, s := range m.Structs {
		if len(s.Members) != len(s.Rows) {
			t.Errorf("%s: %d rows, %d members", s.Name, len(s.Rows), len(s.Members))
		}
		n += len(s.Members)
	}
	if n != len(tables.Layout) {
		t.Errorf("%d members for %d layout rows", n, len(tables.Layout))
	}
	if _, err := Generate(fsys); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownTypesFail(t *testing.T) {
	cases := []struct {
		name, file, old, new, wantErr string
	}{
		{"unknown scalar", "pjrt_layout.tsv",
			"\tsize_t num_options\t", "\tmystery_t num_options\t", `unknown C type "mystery_t"`},
		{"unknown struct by value", "pjrt_ext_layout.tsv",
			"\tPJRT_Extension_Base base\t", "\tPJRT_No_Such_Struct base\t", `unknown C type "PJRT_No_Such_Struct"`},
		{"unparsable declaration", "ffi_layout.tsv",
			"\tsize_t struct_size\t", "\tsize_t\t", "does not end with the field name"},
		{"empty type", "pjrt_layout.tsv",
			"\tsize_t num_options\t", "\t\t", "empty field_type"},
		{"size differs", "pjrt_layout.tsv",
			"\tint64_t int64_value\t", "\tint int64_value\t", "field_size is 8"},
		{"renamed column", "pjrt_layout.tsv", "field_type", "c_type", `column 8 is "c_type"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := realTables(t)
			edit(t, fsys, c.file, c.old, c.new)
			_, err := Generate(fsys)
			if err == nil {
				t.Fatal("Generate succeeded")
			}
			if !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %q does not contain %q", err, c.wantErr)
			}
		})
	}
}

func TestAppendedRowWithUnknownTypeFails(t *testing.T) {
	fsys := realTables(t)
	f := fsys[TableDir+"/pjrt_ext_layout.tsv"]
	f.Data = append(f.Data, []byte("PJRT_New_Args\tstruct_size\t0\t16\t8\t8\t16\tsize_t struct_size\t\tnew.h\n"+
		"PJRT_New_Args\tfancy\t8\t16\t8\t8\t16\t__int128_t fancy\t\tnew.h\n")...)
	_, err := Generate(fsys)
	if err == nil || !strings.Contains(err.Error(), "PJRT_New_Args.fancy") || !strings.Contains(err.Error(), "__int128_t") {
		t.Fatalf("want an error naming PJRT_New_Args.fancy and its type, got %v", err)
	}
}

func TestCamelCase(t *testing.T) {
	for in, want := range map[string]string{
		"struct_size":        "StructSize",
		"num_args":           "NumArgs",
		"int64_value":        "Int64Value",
		"PJRT_Client_Create": "PJRT_Client_Create",
		"type":               "Type",
		"x":                  "X",
	} {
		if got := CamelCase(in); got != want {
			t.Errorf("CamelCase(%q) = %q, want %q", in, got, want)
		}
	}
}
