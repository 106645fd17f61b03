package capi

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"
)

func TestAPISlots(t *testing.T) {
	if len(APISlots) != NumAPISlots {
		t.Fatalf("len(APISlots) = %d", len(APISlots))
	}
	for i, s := range APISlots {
		if s.Index != i || s.ByteOffset != uintptr(APISlotsOffset+8*i) {
			t.Errorf("slot %d: %+v", i, s)
		}
	}
	if got := unsafe.Sizeof(PJRT_Api{}); got != uintptr(APISlotsOffset+8*NumAPISlots) {
		t.Errorf("unsafe.Sizeof(PJRT_Api{}) = %d, want %d", got, APISlotsOffset+8*NumAPISlots)
	}
	if got := unsafe.Offsetof(PJRT_Api{}.PJRT_Client_Compile); got != 200 {
		t.Errorf("Offsetof(PJRT_Api.PJRT_Client_Compile) = %d, want 200", got)
	}
	cases := []struct {
		name             string
		index            int
		offset           uintptr
		added, presentAt int
	}{
		{"PJRT_Error_Destroy", 0, 40, -1, 0},
		{"PJRT_Plugin_Initialize", 3, 64, 13, 0},
		{"PJRT_Client_Create", 10, 120, -1, 0},
		{"PJRT_Client_Compile", 20, 200, -1, 0},
		{"PJRT_Buffer_CopyToMemory", 92, 776, 32, 32},
		{"PJRT_Executable_GetCompiledMemoryStats", 96, 808, 40, 40},
		{"PJRT_TopologyDescription_GetMemorySpaceKindIds", 137, 1136, 110, 110},
	}
	for _, c := range cases {
		s, ok := SlotByName(c.name)
		if !ok {
			t.Errorf("%s: no slot", c.name)
			continue
		}
		if s.Index != c.index || s.ByteOffset != c.offset || s.PresentFromMinor != c.presentAt {
			t.Errorf("%s: got %+v, want index %d offset %d present from %d", c.name, s, c.index, c.offset, c.presentAt)
		}
		if c.added != 0 && s.AddedInMinor != c.added {
			t.Errorf("%s: AddedInMinor = %d, want %d", c.name, s.AddedInMinor, c.added)
		}
	}
	if SlotPJRT_Client_Create != 10 || SlotPJRT_Client_Compile != 20 || SlotPJRT_Buffer_CopyToMemory != 92 {
		t.Errorf("slot constants: %d %d %d", SlotPJRT_Client_Create, SlotPJRT_Client_Compile, SlotPJRT_Buffer_CopyToMemory)
	}
	s := APISlots[SlotPJRT_Buffer_CopyToMemory]
	if s.PresentAt(31) || !s.PresentAt(32) || !s.PresentAt(APIMinor) {
		t.Errorf("PJRT_Buffer_CopyToMemory presence wrong: %+v", s)
	}
	if !APISlots[SlotPJRT_Client_Create].PresentAt(29) {
		t.Error("PJRT_Client_Create absent at minor 29")
	}
	// PJRT_Api_STRUCT_SIZE under-reports at some minors.
	fp := APISlots[SlotPJRT_Executable_GetCompiledMemoryStats]
	if fp.ReportedFromMinor != 56 {
		t.Errorf("PJRT_Executable_GetCompiledMemoryStats reported from %d, want 56", fp.ReportedFromMinor)
	}
	if _, ok := SlotByName("PJRT_No_Such_Function"); ok {
		t.Error("SlotByName found a missing name")
	}
	if APIMajor != 0 || APIMinor != 114 || FFIMajor != 0 || FFIMinor != 3 {
		t.Errorf("versions %d.%d ffi %d.%d", APIMajor, APIMinor, FFIMajor, FFIMinor)
	}
}

func TestStructSizeAt(t *testing.T) {
	cases := []struct {
		name  string
		minor int
		size  int
		ok    bool
	}{
		{"PJRT_Error_GetCode_Args", 29, 28, true},
		{"PJRT_Error_GetCode_Args", 114, PJRT_Error_GetCode_Args_STRUCT_SIZE, true},
		{"PJRT_Error_GetCode_Args", 500, PJRT_Error_GetCode_Args_STRUCT_SIZE, true},
		{"PJRT_Error_GetCode_Args", 28, 0, false},
		{"PJRT_No_Such_Struct", 100, 0, false},
		{"PJRT_Api", 114, PJRT_Api_STRUCT_SIZE, true},
	}
	for _, c := range cases {
		size, ok := StructSizeAt(c.name, c.minor)
		if size != c.size || ok != c.ok {
			t.Errorf("StructSizeAt(%q, %d) = %d, %v; want %d, %v", c.name, c.minor, size, ok, c.size, c.ok)
		}
	}
	// Every struct of the history has its current STRUCT_SIZE at APIMinor.
	for name := range structSizeHistory {
		want, ok := structSizeConsts[name]
		if !ok {
			continue
		}
		if got, ok := StructSizeAt(name, APIMinor); !ok || got != int(want) {
			t.Errorf("StructSizeAt(%q, APIMinor) = %d, %v; %s_STRUCT_SIZE is %d", name, got, ok, name, want)
		}
	}
	// A struct that was added later: absent before, present after.
	h := structSizeHistory["PJRT_Buffer_CopyToMemory_Args"]
	if len(h) == 0 {
		t.Fatal("no history for PJRT_Buffer_CopyToMemory_Args")
	}
	first := int(h[0].minor)
	if first <= historyFirstMinor {
		t.Fatalf("PJRT_Buffer_CopyToMemory_Args first seen at %d", first)
	}
	if _, ok := StructSizeAt("PJRT_Buffer_CopyToMemory_Args", first-1); ok {
		t.Errorf("PJRT_Buffer_CopyToMemory_Args reported at minor %d", first-1)
	}
	if _, ok := StructSizeAt("PJRT_Buffer_CopyToMemory_Args", first); !ok {
		t.Errorf("PJRT_Buffer_CopyToMemory_Args missing at minor %d", first)
	}
	// The PJRT_Api table grows: its STRUCT_SIZE never shrinks.
	prev := 0
	for m := historyFirstMinor; m <= historyLastMinor; m++ {
		s, ok := StructSizeAt("PJRT_Api", m)
		if !ok || s < prev {
			t.Errorf("PJRT_Api STRUCT_SIZE at minor %d: %d, %v (previous %d)", m, s, ok, prev)
		}
		prev = s
	}
}

func TestUnionAccessors(t *testing.T) {
	var nv PJRT_NamedValue
	nv.SetInt64Value(-1)
	nv.SetFloatValue(1.5)
	if nv.FloatValue() != 1.5 || nv.Value>>32 != 0 {
		t.Errorf("SetFloatValue left %#x", nv.Value)
	}
	nv.SetBoolValue(true)
	if !nv.BoolValue() || nv.Value != 1 {
		t.Errorf("SetBoolValue: %#x", nv.Value)
	}
	nv.SetInt64Value(-42)
	if nv.Int64Value() != -42 {
		t.Errorf("Int64Value = %d", nv.Int64Value())
	}
	nv.SetStringValue(0x1234)
	if nv.StringValue() != 0x1234 || nv.Int64ArrayValue() != 0x1234 {
		t.Errorf("StringValue = %#x", nv.StringValue())
	}
	var l PJRT_Buffer_MemoryLayout
	l.Tiled().StructSize = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE
	if l.Strides().StructSize != PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE {
		t.Error("Tiled and Strides do not share storage")
	}
	if uintptr(unsafe.Pointer(l.Tiled()))-uintptr(unsafe.Pointer(&l)) != 16 {
		t.Error("Tiled is not at offset 16")
	}
}

func TestEnums(t *testing.T) {
	if PJRT_Buffer_Type_BF16 != 13 || PJRT_Buffer_Type_F32 != 11 {
		t.Errorf("PJRT_Buffer_Type values: BF16 %d F32 %d", PJRT_Buffer_Type_BF16, PJRT_Buffer_Type_F32)
	}
	if unsafe.Sizeof(PJRT_Error_Code(0)) != 4 {
		t.Error("enum types must be 4 bytes")
	}
	if s := PJRT_Error_Code_INVALID_ARGUMENT.String(); s != "PJRT_Error_Code_INVALID_ARGUMENT" {
		t.Errorf("String() = %q", s)
	}
	if s := PJRT_Error_Code(999).String(); s != "PJRT_Error_Code(999)" {
		t.Errorf("String() = %q", s)
	}
}

// TestHeaderCompiles checks the C header with a C compiler when one is
// installed: its _Static_asserts prove the layout on the C side.
func TestHeaderCompiles(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	root := repoRoot(t)
	src := filepath.Join(t.TempDir(), "abi.c")
	prog := `#include "pjrt_abi.h"
int use(void) {
  PJRT_NamedValue nv;
  nv.int64_value = PJRT_Buffer_Type_F32;
  PJRT_Buffer_MemoryLayout l;
  l.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  return (int)nv.int64_value + (int)l.tiled.struct_size + PJRT_API_MINOR;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
		"-I", filepath.Join(root, "pjrt", "testdata", "conformance"), src).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
}
