// Package capi holds the Go mirrors of the PJRT C API (PJRT_API_MAJOR 0,
// PJRT_API_MINOR 114), its extensions, and the XLA FFI C API (0.3), as laid
// out on x86-64 Linux (LP64).
//
// Almost everything here is generated from the measured ABI tables in
// third_party/pjrt (see third_party/pjrt/README.md) by the program in
// internal/capi/internal/gen; do not edit the zz_*.go files. To regenerate
// them, and the C header pjrt/testdata/conformance/pjrt_abi.h used by the
// conformance test plugin, run:
//
//	go generate ./internal/capi
//
// What is generated:
//
//   - one Go struct per C struct, named exactly as in C (PJRT_Client_Create_Args,
//     XLA_FFI_CallFrame), with explicit padding so that every offset and
//     unsafe.Sizeof equal the C ones (tests check this against the tables);
//   - the <Struct>_STRUCT_SIZE constants: the value a caller must store in
//     struct_size, which is not always unsafe.Sizeof;
//   - one int32-based Go type per C enum, with every constant under its C name;
//   - the PJRT_Api function table (APISlots and the Slot* index constants),
//     and StructSizeAt, the STRUCT_SIZE of a struct at an older minor.
//
// Field names are the C names in CamelCase (struct_size -> StructSize);
// names that already start with an upper-case letter are kept
// (PJRT_Api.PJRT_Client_Create).
//
// Type mapping. Every pointer and function pointer is a uintptr: Go memory
// referenced by one must be pinned by the caller (runtime.Pinner, or memory
// not managed by Go) for the duration of the call or longer, as long as C
// may use it. size_t and uint64_t are uint64; uintptr_t is uintptr; intptr_t
// and int64_t are int64; int and int32_t are int32; uint32_t is uint32; bool
// is bool; float is float32; double is float64; C enums (4 bytes here) are
// their generated int32-based type; structs embedded by value are their
// mirror type. An anonymous union is one field of 8-byte words (uint64 or
// [N]uint64) named after what it holds (PJRT_NamedValue.Value,
// PJRT_Buffer_MemoryLayout.Layout), with an accessor per member: a getter and
// a setter for scalars and pointers (Int64Value, SetInt64Value), a pointer
// getter for structs (Tiled, Strides).
package capi

//go:generate go run ./internal/gen
