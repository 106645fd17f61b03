package pallas

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bitcastWidthCase bitcasts x (a whole block) to a type of another
// width, of shape out, and back: out 0 the parts (or the joined
// elements), out 1 the round trip (x's bits exactly).
func bitcastWidthCase(x *interpreter.Tensor, to xla.DType, out []int64) tritonCase {
	from := x.Shape.DType
	return tritonCase{name: "bitcast_width", kernel: func(k *Kernel, r []*Ref) {
		b := r[0].Load().Bitcast(to)
		r[1].Store(b)
		r[2].Store(b.Bitcast(from))
	}, spec: CallSpec{Name: "bitcast_width", OutShapes: []xla.Shape{xla.MakeShape(to, out...), x.Shape}},
		args: []*interpreter.Tensor{x}}
}

// littleEndian is a tensor's elements' bytes in memory order.
func littleEndian(t *testing.T, x *interpreter.Tensor) []byte {
	w := x.Shape.DType.Bits() / 8
	var out []byte
	put := func(u uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], u)
		out = append(out, b[:w]...)
	}
	switch x.Shape.DType {
	case xla.Float32:
		for _, v := range x.Data.([]float32) {
			put(uint64(math.Float32bits(v)))
		}
	case xla.Float64:
		for _, v := range x.Data.([]float64) {
			put(math.Float64bits(v))
		}
	case xla.BFloat16, xla.Float16:
		for _, v := range ints(t, interpreterBits(t, x)) {
			put(uint64(v))
		}
	default:
		for _, v := range ints(t, x) {
			put(uint64(v))
		}
	}
	return out
}

// interpreterBits is a 16-bit float tensor's bits as u16 (the
// interpreter's own bitcast_convert).
func interpreterBits(t *testing.T, x *interpreter.Tensor) *interpreter.Tensor {
	return interpreterBitcast(t, x, xla.Uint16)
}

// TestBitcastWidths: to a narrower type each element's parts, lowest bits
// first (the bytes of a little-endian memory, as XLA's bitcast_convert
// and JAX's lax.bitcast_convert_type give them); to a wider one the last
// dim joined; floats and integers, signed and unsigned, each way and back
// exactly, on every backend.
func TestBitcastWidths(t *testing.T) {
	pairs := [][2]xla.DType{
		{xla.Float32, xla.Uint8}, {xla.Float32, xla.BFloat16}, {xla.Float64, xla.Int32}, {xla.Int64, xla.Float32},
		{xla.Uint32, xla.Int16}, {xla.Int64, xla.Uint8}, {xla.BFloat16, xla.Int8},
		{xla.Uint8, xla.Float32}, {xla.Int16, xla.Uint64}, {xla.Float16, xla.Float32}, {xla.Int8, xla.Int16},
	}
	for _, p := range pairs {
		from, to := p[0], p[1]
		t.Run(fmt.Sprintf("%v_to_%v", from, to), func(t *testing.T) {
			dims := []int64{4, 8}
			if from.Bits() < to.Bits() {
				dims = append(dims, int64(to.Bits()/from.Bits())) // the parts of an element
			}
			var x *interpreter.Tensor
			if from.IsFloat() {
				x = floatTensor(from, dims, func(i int) float64 { return math.Sin(float64(i)*1.7) * math.Pow(3, float64(i%9)) })
			} else {
				x = intTensor(from, dims, func(i int) int64 {
					v := int64(uint64(i)*0x9E3779B97F4A7C15 + 0x5bd1e995)
					return wrapI(from, v)
				})
			}
			mem := littleEndian(t, x)
			// The interpreter's own stablehlo.bitcast_convert is the
			// reference for the parts (interpret mode builds them with shifts).
			want := interpreterBitcast(t, x, to)
			c := bitcastWidthCase(x, to, want.Shape.Dims)
			require.Equal(t, mem, littleEndian(t, want), "the interpreter's bitcast_convert keeps memory order")
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				assert.Equal(t, want.Shape, outs[0].Shape, backend)
				assert.Equal(t, mem, littleEndian(t, outs[0]), "%s: parts", backend)
				assert.Equal(t, mem, littleEndian(t, outs[1]), "%s: round trip", backend)
			})
		})
	}
}

// interpreterBitcast runs stablehlo.bitcast_convert of x to dtype on the
// interpreter, outside any kernel.
func interpreterBitcast(t *testing.T, x *interpreter.Tensor, dtype xla.DType) *interpreter.Tensor {
	t.Helper()
	b := stablehlo.NewBuilder("bitcast")
	fb := b.NewFunction("main", stablehlo.TensorOf(x.Shape))
	fb.Return(fb.BitcastConvert(fb.Arg(0), dtype))
	m, err := b.Build()
	require.NoError(t, err)
	res, err := interpreter.RunModule(context.Background(), m, "main", x)
	require.NoError(t, err)
	return res[0].(*interpreter.Tensor)
}

// bitcastWidthCases are two of TestBitcastWidths' kernels for tritonCases
// (mlir-opt, a GPU plugin): f32 to bytes and bytes to f32.
func bitcastWidthCases() []tritonCase {
	f := floatTensor(xla.Float32, []int64{4, 8}, func(i int) float64 { return math.Sin(float64(i)*1.7) * math.Pow(3, float64(i%9)) })
	u := intTensor(xla.Uint8, []int64{4, 8, 4}, func(i int) int64 { return int64(i*37+11) % 256 })
	a := bitcastWidthCase(f, xla.Uint8, []int64{4, 8, 4})
	a.name = "bitcast_f32_u8"
	b := bitcastWidthCase(u, xla.Float32, []int64{4, 8})
	b.name = "bitcast_u8_f32"
	return []tritonCase{a, b}
}
