package stablehlo

import (
	"encoding/binary"

	"github.com/halo-ml/halo/xla"
)

// ComparisonDirection is compare's comparison_direction.
type ComparisonDirection string

// The comparison directions.
const (
	CompareEQ ComparisonDirection = "EQ"
	CompareNE ComparisonDirection = "NE"
	CompareGE ComparisonDirection = "GE"
	CompareGT ComparisonDirection = "GT"
	CompareLE ComparisonDirection = "LE"
	CompareLT ComparisonDirection = "LT"
)

// CompareType is compare's compare_type. The empty CompareType lets the
// builder choose from the operands' element type (FLOAT for floats and
// complex numbers, SIGNED for signed integers, UNSIGNED for unsigned
// integers and booleans), as JAX does.
type CompareType string

// The compare types.
const (
	CompareAuto       CompareType = ""
	CompareNoType     CompareType = "NOTYPE"
	CompareFloat      CompareType = "FLOAT"
	CompareTotalOrder CompareType = "TOTALORDER"
	CompareSigned     CompareType = "SIGNED"
	CompareUnsigned   CompareType = "UNSIGNED"
)

// Precision is an entry of precision_config.
type Precision string

// The precisions.
const (
	PrecisionDefault Precision = "DEFAULT"
	PrecisionHigh    Precision = "HIGH"
	PrecisionHighest Precision = "HIGHEST"
)

// RngAlgorithm is rng_bit_generator's rng_algorithm.
type RngAlgorithm string

// The RNG algorithms.
const (
	RngDefault  RngAlgorithm = "DEFAULT"
	RngThreeFry RngAlgorithm = "THREE_FRY"
	RngPhilox   RngAlgorithm = "PHILOX"
)

// RngDistribution is rng's rng_distribution.
type RngDistribution string

// The RNG distributions.
const (
	RngUniform RngDistribution = "UNIFORM"
	RngNormal  RngDistribution = "NORMAL"
)

// FftType is fft's fft_type.
type FftType string

// The FFT types.
const (
	FftForward       FftType = "FFT"
	FftInverse       FftType = "IFFT"
	FftRealForward   FftType = "RFFT"
	FftInverseToReal FftType = "IRFFT"
)

// TransposeMode is triangular_solve's transpose_a.
type TransposeMode string

// The transpose modes.
const (
	NoTranspose      TransposeMode = "NO_TRANSPOSE"
	TransposeA       TransposeMode = "TRANSPOSE"
	AdjointTranspose TransposeMode = "ADJOINT"
)

// Attributes are values: the builder may share one attribute between ops
// (e.g. precision_config = [DEFAULT, DEFAULT]), so rewrites replace an
// op's attribute with SetAttr rather than modify it in place.

// Enum returns the #stablehlo<enum value> attribute.
func Enum(enum, value string) EnumAttr {
	return EnumAttr{Dialect: "stablehlo", Enum: enum, Value: value}
}

// enumAttrs holds every known enum attribute boxed once, so building one
// does not allocate.
var enumAttrs = func() map[[2]string]Attribute {
	m := map[[2]string]Attribute{}
	for enum, values := range enumValues {
		for _, v := range values {
			m[[2]string{enum, v}] = Enum(enum, v)
		}
	}
	return m
}()

func enumAttr(enum, value string) Attribute {
	if a, ok := enumAttrs[[2]string{enum, value}]; ok {
		return a
	}
	return Enum(enum, value)
}

func validEnum(enum, value string) bool {
	for _, v := range enumValues[enum] {
		if v == value {
			return true
		}
	}
	return false
}

// I64Array returns array<i64: values...>.
func I64Array(values ...int64) DenseArrayAttr {
	return DenseArrayAttr{DType: xla.Int64, Values: append([]int64{}, values...)}
}

// BoolArray returns array<i1: values...>.
func BoolArray(values ...bool) DenseArrayAttr {
	out := make([]int64, len(values))
	for i, b := range values {
		if b {
			out[i] = 1
		}
	}
	return DenseArrayAttr{DType: xla.Bool, Values: out}
}

// I64Attr returns "v : i64".
func I64Attr(v int64) IntAttr { return IntAttr{Value: v, Type: xla.Int64} }

// I32Attr returns "v : i32".
func I32Attr(v int32) IntAttr { return IntAttr{Value: int64(v), Type: xla.Int32} }

// I64Matrix returns dense<rows> : tensor<RxCxi64>; every row must have
// cols entries (cols is used when rows is empty).
func I64Matrix(rows [][]int64, cols int) DenseElementsAttr {
	if len(rows) > 0 {
		cols = len(rows[0])
	}
	data := make([]byte, 0, len(rows)*cols*8)
	for _, r := range rows {
		for _, v := range r {
			data = binary.LittleEndian.AppendUint64(data, uint64(v))
		}
	}
	return DenseElementsAttr{Type: Tensor(xla.Int64, int64(len(rows)), int64(cols)), Data: data}
}

// PaddingAttr returns dense<[[lo, hi], ...]> : tensor<Nx2xi64>.
func PaddingAttr(pads [][2]int64) DenseElementsAttr {
	data := make([]byte, 0, len(pads)*16)
	for _, p := range pads {
		data = binary.LittleEndian.AppendUint64(data, uint64(p[0]))
		data = binary.LittleEndian.AppendUint64(data, uint64(p[1]))
	}
	return DenseElementsAttr{Type: Tensor(xla.Int64, int64(len(pads)), 2), Data: data}
}

// ReplicaGroupsAttr returns replica_groups as dense<...> : tensor<GxSxi64>.
// Groups shorter than the longest are padded with -1, as XLA expects.
func ReplicaGroupsAttr(groups [][]int64) DenseElementsAttr {
	size := 0
	for _, g := range groups {
		size = max(size, len(g))
	}
	rows := make([][]int64, len(groups))
	for i, g := range groups {
		r := make([]int64, size)
		for j := range r {
			r[j] = -1
		}
		copy(r, g)
		rows[i] = r
	}
	return I64Matrix(rows, size)
}

// PrecisionConfig returns precision_config = [#stablehlo<precision P>, ...].
func PrecisionConfig(ps ...Precision) ArrayAttr {
	out := make(ArrayAttr, len(ps))
	for i, p := range ps {
		out[i] = enumAttr("precision", string(p))
	}
	return out
}

// denseInts returns the elements of an integer DenseElementsAttr as int64
// (a splat is expanded).
func denseInts(a DenseElementsAttr) []int64 {
	dt := a.Type.DType
	w := dt.HostBytes()
	if w == 0 {
		return nil
	}
	n := len(a.Data) / w
	if a.Splat {
		size := a.Type.Size()
		if size > maxExpandedSplat {
			return nil // its users report the wrong number of elements
		}
		if size >= 0 {
			n = int(size)
		}
	}
	out := make([]int64, n)
	for i := range out {
		off := i * w
		if a.Splat {
			off = 0
		}
		if off+w > len(a.Data) {
			break
		}
		b := a.Data[off : off+w]
		var u uint64
		switch w {
		case 1:
			u = uint64(b[0])
		case 2:
			u = uint64(binary.LittleEndian.Uint16(b))
		case 4:
			u = uint64(binary.LittleEndian.Uint32(b))
		case 8:
			u = binary.LittleEndian.Uint64(b)
		}
		if dt.IsUnsigned() || dt.IsBool() {
			out[i] = int64(u)
		} else {
			shift := 64 - uint(dt.Bits())
			out[i] = int64(u<<shift) >> shift
		}
	}
	return out
}

// Matrix reads an i64 DenseElementsAttr of rank 2 back as rows.
func denseMatrix(a DenseElementsAttr) [][]int64 {
	if len(a.Type.Dims) != 2 {
		return nil
	}
	vals := denseInts(a)
	r, c := int(a.Type.Dims[0]), int(a.Type.Dims[1])
	if int64(r)*int64(c) != int64(len(vals)) || r < 0 || c < 0 {
		return nil // not the elements its type says (a splat too large to expand)
	}
	out := make([][]int64, r)
	for i := range out {
		if (i+1)*c <= len(vals) {
			out[i] = vals[i*c : (i+1)*c]
		}
	}
	return out
}

// BF16 is a bfloat16 number stored as its 16 bits (xla.BF16).
type BF16 = xla.BF16

// F16 is an IEEE half-precision number stored as its 16 bits (xla.F16).
type F16 = xla.F16

// BF16FromFloat32 rounds f to bfloat16 (round to nearest even).
func BF16FromFloat32(f float32) BF16 { return xla.BF16FromFloat32(f) }

// F16FromFloat32 rounds f to IEEE half precision (round to nearest even).
func F16FromFloat32(f float32) F16 { return xla.F16FromFloat32(f) }

// BF16FromFloat64 rounds f to bfloat16 once (round to nearest even).
func BF16FromFloat64(f float64) BF16 { return xla.BF16FromFloat64(f) }

// F16FromFloat64 rounds f to IEEE half precision once (round to nearest
// even).
func F16FromFloat64(f float64) F16 { return xla.F16FromFloat64(f) }
