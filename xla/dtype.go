// Package xla holds the facts shared by every part of halo: element types
// (DType), array shapes (Shape), and the CompileOptions sent to a PJRT plugin.
package xla

import (
	"fmt"
	"strings"
)

// DType is the element type of an array. The zero value is Invalid.
//
// The numbering is halo's own; use the conversion helpers of the package
// that talks to a given format (PJRT buffer types, MLIR type names).
type DType uint8

// The element types halo knows. Sub-byte integers and the f8, f6 and f4
// kinds have no Go type: host buffers hold one element per byte. The
// interpreter computes with them (narrow floats in float32, rounded after
// each op, NarrowFloat; sub-byte integers wrap).
const (
	Invalid    DType = iota
	Bool             // i1 / PRED
	Int2             // i2 (S2)
	Int4             // i4 (S4)
	Int8             // i8
	Int16            // i16
	Int32            // i32
	Int64            // i64
	Uint2            // ui2 (U2)
	Uint4            // ui4 (U4)
	Uint8            // ui8
	Uint16           // ui16
	Uint32           // ui32
	Uint64           // ui64
	Float16          // f16
	BFloat16         // bf16
	Float32          // f32
	Float64          // f64
	Complex64        // complex<f32>
	Complex128       // complex<f64>
	Float8E5M2
	Float8E4M3FN
	Float8E4M3B11FNUZ
	Float8E5M2FNUZ
	Float8E4M3FNUZ
	Float8E4M3
	Float8E3M4
	Float8E8M0FNU
	Float4E2M1FN
	Float6E2M3FN
	Float6E3M2FN
	Int1  // i1 used as a signed 1-bit integer (S1); MLIR spells it like Bool
	Uint1 // U1
	numDTypes
)

type dtypeInfo struct {
	name string // the MLIR spelling
	bits int    // storage bits per element
	kind byte   // 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex
}

var dtypeInfos = [numDTypes]dtypeInfo{
	Invalid:           {"invalid", 0, 0},
	Bool:              {"i1", 1, 'b'},
	Int2:              {"i2", 2, 'i'},
	Int4:              {"i4", 4, 'i'},
	Int8:              {"i8", 8, 'i'},
	Int16:             {"i16", 16, 'i'},
	Int32:             {"i32", 32, 'i'},
	Int64:             {"i64", 64, 'i'},
	Uint2:             {"ui2", 2, 'u'},
	Uint4:             {"ui4", 4, 'u'},
	Uint8:             {"ui8", 8, 'u'},
	Uint16:            {"ui16", 16, 'u'},
	Uint32:            {"ui32", 32, 'u'},
	Uint64:            {"ui64", 64, 'u'},
	Float16:           {"f16", 16, 'f'},
	BFloat16:          {"bf16", 16, 'f'},
	Float32:           {"f32", 32, 'f'},
	Float64:           {"f64", 64, 'f'},
	Complex64:         {"complex<f32>", 64, 'c'},
	Complex128:        {"complex<f64>", 128, 'c'},
	Float8E5M2:        {"f8E5M2", 8, 'f'},
	Float8E4M3FN:      {"f8E4M3FN", 8, 'f'},
	Float8E4M3B11FNUZ: {"f8E4M3B11FNUZ", 8, 'f'},
	Float8E5M2FNUZ:    {"f8E5M2FNUZ", 8, 'f'},
	Float8E4M3FNUZ:    {"f8E4M3FNUZ", 8, 'f'},
	Float8E4M3:        {"f8E4M3", 8, 'f'},
	Float8E3M4:        {"f8E3M4", 8, 'f'},
	Float8E8M0FNU:     {"f8E8M0FNU", 8, 'f'},
	Float4E2M1FN:      {"f4E2M1FN", 4, 'f'},
	Float6E2M3FN:      {"f6E2M3FN", 6, 'f'},
	Float6E3M2FN:      {"f6E3M2FN", 6, 'f'},
	Int1:              {"i1", 1, 'i'},
	Uint1:             {"ui1", 1, 'u'},
}

// AllDTypes lists every valid DType in declaration order.
func AllDTypes() []DType {
	out := make([]DType, 0, numDTypes-1)
	for d := Bool; d < numDTypes; d++ {
		out = append(out, d)
	}
	return out
}

// Valid reports whether d is a known element type other than Invalid.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

// String returns the MLIR spelling of d ("f32", "ui8", "complex<f64>").
func (d DType) String() string {
	if d < numDTypes {
		return dtypeInfos[d].name
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Bits is the number of bits one element occupies in its dense encoding.
func (d DType) Bits() int {
	if d < numDTypes {
		return dtypeInfos[d].bits
	}
	return 0
}

// HostBytes is the number of bytes one element takes in a host buffer:
// sub-byte types are stored one element per byte, as PJRT expects for
// unpacked host data.
func (d DType) HostBytes() int {
	b := d.Bits()
	if b == 0 {
		return 0
	}
	return (b + 7) / 8
}

// IsBool reports whether d is the boolean type.
func (d DType) IsBool() bool { return d.Valid() && dtypeInfos[d].kind == 'b' }

// IsInt reports whether d is a signed or unsigned integer type (not Bool).
func (d DType) IsInt() bool {
	return d.Valid() && (dtypeInfos[d].kind == 'i' || dtypeInfos[d].kind == 'u')
}

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d.Valid() && dtypeInfos[d].kind == 'u' }

// IsFloat reports whether d is a real floating-point type.
func (d DType) IsFloat() bool { return d.Valid() && dtypeInfos[d].kind == 'f' }

// IsComplex reports whether d is a complex type.
func (d DType) IsComplex() bool { return d.Valid() && dtypeInfos[d].kind == 'c' }

// ComplexElem returns the real type of a complex type's parts
// (Float32 for Complex64), or Invalid.
func (d DType) ComplexElem() DType {
	switch d {
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return Invalid
}

// ParseDType reads an MLIR element type name ("f32", "i1", "ui4",
// "complex<f32>"). "i1" reads as Bool.
func ParseDType(s string) (DType, error) {
	s = strings.TrimSpace(s)
	for d := Bool; d < numDTypes; d++ {
		if d == Int1 {
			continue
		}
		if dtypeInfos[d].name == s {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("xla: unknown element type %q", s)
}
