package interpreter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// TestRunRejectsMalformedArguments: Run checks each argument tensor
// against its own shape before any op sees it, and names the argument.
func TestRunRejectsMalformedArguments(t *testing.T) {
	const static = `func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}`
	const identity = `func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}`
	const dynamic = `func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}`
	f32x4 := xla.MakeShape(xla.Float32, 4)
	for _, c := range []struct {
		name, src string
		arg       Value
		want      string
	}{
		{"short data", static, &Tensor{Shape: f32x4, Data: []float32{1, 2}}, "f32 tensor of 4 elements holds 2"},
		{"short data returned as is", identity, &Tensor{Shape: f32x4, Data: []float32{1, 2}}, "f32 tensor of 4 elements holds 2"},
		{"long data", static, &Tensor{Shape: f32x4, Data: make([]float32, 5)}, "f32 tensor of 4 elements holds 5"},
		{"float64 data", static, &Tensor{Shape: f32x4, Data: make([]float64, 4)}, "f32 tensor holds []float64, want []float32"},
		{"string data", static, &Tensor{Shape: f32x4, Data: "abcd"}, "f32 tensor holds string, want []float32"},
		{"no data", static, &Tensor{Shape: f32x4}, "f32 tensor holds <nil>, want []float32"},
		{"negative dim", dynamic, &Tensor{Shape: xla.MakeShape(xla.Float32, -1), Data: []float32{}}, "negative dimension -1 at axis 0"},
		{"nil tensor", static, (*Tensor)(nil), "nil *Tensor"},
		{"tuple element", `func.func @main(%t: tuple<tensor<4xf32>>) -> tuple<tensor<4xf32>> {
  return %t : tuple<tensor<4xf32>>
}`, Tuple{&Tensor{Shape: f32x4, Data: []float32{1}}}, "tuple element 0: f32 tensor of 4 elements holds 1"},
		{"unsupported dtype", static, &Tensor{Shape: xla.MakeShape(xla.Invalid, 4), Data: make([]float32, 4)}, "not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := runText(context.Background(), c.src, c.arg)
			require.Error(t, err, "result %v", out)
			assert.Contains(t, err.Error(), "@main argument 0: ")
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "stablehlo.add", "the argument is to blame, not the op")
		})
	}
}

// TestFormatElementMalformed: FormatElement answers "?" for an element a
// tensor does not hold, where it indexed past its data.
func TestFormatElementMalformed(t *testing.T) {
	short := &Tensor{Shape: xla.MakeShape(xla.Float32, 4), Data: []float32{1, 2}}
	assert.Equal(t, "?", FormatElement(short, 3))
	assert.Equal(t, "?", FormatElement(short, 0), "a malformed tensor has no elements to print")
	ok := &Tensor{Shape: xla.MakeShape(xla.Int32, 2), Data: []int32{7, 8}}
	assert.Equal(t, "8", FormatElement(ok, 1))
	assert.Equal(t, "?", FormatElement(ok, 2))
	assert.Equal(t, "?", FormatElement(ok, -1))
	assert.Equal(t, "?", FormatElement(nil, 0))
}

// TestHostMalformed: Host of a tensor whose data disagrees with its shape
// is nil, not the data padded with zeros (or a panic when it is longer).
func TestHostMalformed(t *testing.T) {
	f32x4 := xla.MakeShape(xla.Float32, 4)
	assert.Nil(t, (&Tensor{Shape: f32x4, Data: []float32{1, 2}}).Host(), "short")
	assert.Nil(t, (&Tensor{Shape: f32x4, Data: make([]float32, 6)}).Host(), "long")
	assert.Nil(t, (&Tensor{Shape: f32x4, Data: make([]float64, 4)}).Host(), "wrong type")
	assert.Nil(t, (*Tensor)(nil).Host(), "nil")
	assert.Equal(t, []byte{}, NewTensor(xla.MakeShape(xla.Float32, 0)).Host(), "no elements: empty, not nil")
	assert.Len(t, NewTensor(f32x4).Host(), 16)
}

// TestNilReceivers: nil programs, tensors and operands are errors or
// zero results, not panics.
func TestNilReceivers(t *testing.T) {
	_, err := (*Program)(nil).Run(context.Background(), Device{}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil *Program")
	_, err = (&Program{}).Run(context.Background(), Device{}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Compile")
	_, err = (*Program)(nil).RunSPMD(context.Background(), nil, SPMDOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil *Program")

	var nt *Tensor
	assert.Equal(t, 0, nt.Len())
	assert.Nil(t, nt.Clone())

	err = Convert(nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil")
	err = Convert(NewTensor(xla.MakeShape(xla.Float32, 2)), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "source")
	err = Convert(nil, NewTensor(xla.MakeShape(xla.Float32, 2)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "destination")
}

// TestRegisterKernelRejectsNil: a nil kernel does not remove the op's
// kernel (a built-in would be gone for the whole process).
func TestRegisterKernelRejectsNil(t *testing.T) {
	before := kernelFor("stablehlo.add")
	require.NotNil(t, before)
	err := RegisterKernel("stablehlo.add", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `RegisterKernel("stablehlo.add"): nil kernel`)
	assert.NotNil(t, kernelFor("stablehlo.add"), "stablehlo.add still has its kernel")
	err = RegisterInPlaceKernel("stablehlo.add", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil kernel")
	assert.NotNil(t, kernelFor("stablehlo.add"), "stablehlo.add still has its kernel")
	err = RegisterKernel("", func(*Exec, *stablehlo.Op, []Value) ([]Value, error) { return nil, nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "empty op name")
	_, registered := kernels[""]
	assert.False(t, registered)

	require.NotNil(t, opCheckFor("chlo.top_k"))
	err = RegisterOpCheck("chlo.top_k", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil check")
	assert.NotNil(t, opCheckFor("chlo.top_k"), "chlo.top_k keeps its check")
	out, err := runText(context.Background(), `func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}`, f32Tensor([]float32{1, 2}, 2))
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4}, out[0].(*Tensor).Data)
}

// TestRunSPMDRejectsMalformedArguments: each device's arguments are
// checked as Run checks them, and the error names the device.
func TestRunSPMDRejectsMalformedArguments(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`module @m attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	good := f32Tensor([]float32{1, 2}, 2)
	bad := &Tensor{Shape: good.Shape, Data: []int32{1, 2}}
	_, err = p.RunSPMD(context.Background(), [][]Value{{good}, {bad}}, SPMDOptions{})
	require.Error(t, err)
	var de *DeviceError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, 1, de.Device)
	assert.Contains(t, err.Error(), "@main argument 0: f32 tensor holds []int32, want []float32")
}

// TestCustomCallMalformedResult: a custom call's result tensor is checked
// against its own shape, as a run's arguments are.
func TestCustomCallMalformedResult(t *testing.T) {
	const target = "halo_test.malformed_result"
	RegisterCustomCall(target, func(c *CustomCall) ([]*Tensor, error) {
		return []*Tensor{{Shape: xla.MakeShape(xla.Float32, 4), Data: []float32{1}}}, nil
	})
	defer RegisterCustomCall(target, nil)
	_, err := runText(context.Background(), `func.func @main() -> tensor<4xf32> {
  %0 = stablehlo.custom_call @halo_test.malformed_result() : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `custom call "halo_test.malformed_result" returned a malformed tensor for result 0: f32 tensor of 4 elements holds 1`)
}

// TestTensorValidate: Validate accepts what NewTensor makes and names what
// is wrong with the rest.
func TestTensorValidate(t *testing.T) {
	for _, dt := range []xla.DType{xla.Bool, xla.Int4, xla.Int32, xla.Uint8, xla.BFloat16, xla.Float8E4M3FN, xla.Float64, xla.Complex64} {
		for _, dims := range [][]int64{nil, {0}, {3, 0, 5}, {2, 3}} {
			assert.NoError(t, NewTensor(xla.MakeShape(dt, dims...)).Validate(), "%v %v", dt, dims)
		}
	}
	huge := &Tensor{Shape: xla.MakeShape(xla.Float32, 1<<40, 1<<40), Data: []float32{}}
	assert.ErrorContains(t, huge.Validate(), "more elements than an int counts")
	assert.ErrorContains(t, (&Tensor{Shape: xla.MakeShape(xla.Float32, 2, -3), Data: []float32{}}).Validate(), "negative dimension -3 at axis 1")
	assert.ErrorContains(t, (&Tensor{Shape: xla.MakeShape(xla.Int4, 2), Data: []int32{1, 2}}).Validate(), "i4 tensor holds []int32, want []int8")
}

// TestAllocTensor: AllocTensor returns what NewTensor panics with.
func TestAllocTensor(t *testing.T) {
	x, err := AllocTensor(xla.MakeShape(xla.Int16, 2, 3))
	require.NoError(t, err)
	assert.Equal(t, make([]int16, 6), x.Data)

	var ae *AllocError
	_, err = AllocTensor(xla.MakeShape(xla.Float32, -1))
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, err.Error(), "negative dimension")
	_, err = AllocTensor(xla.MakeShape(xla.Float32, 1<<40, 1<<40))
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, err.Error(), "too large")

	defer func(f func() (int64, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (int64, bool) { return 1 << 30, true }
	_, err = AllocTensor(xla.MakeShape(xla.Float64, 1<<30))
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, err.Error(), "more than the 1.0 GiB of memory available")

	_, err = AllocTensor(xla.MakeShape(xla.Invalid, 2))
	assert.ErrorContains(t, err, "element type invalid is not supported")
}

type celsius float32

// TestTensorFromToSlice: Go slices go into tensors of their element type
// and come back out, copied both ways.
func TestTensorFromToSlice(t *testing.T) {
	f, err := TensorFrom([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, xla.MakeShape(xla.Float32, 2, 3), f.Shape)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, f.Data)

	src := []int32{7, 8}
	i, err := TensorFrom(src, 2)
	require.NoError(t, err)
	src[0] = 0
	assert.Equal(t, []int32{7, 8}, i.Data, "the tensor holds a copy")
	got, err := ToSlice[int32](i)
	require.NoError(t, err)
	got[1] = 0
	assert.Equal(t, []int32{7, 8}, i.Data, "ToSlice returns a copy")

	s, err := TensorFrom([]int{-3})
	require.NoError(t, err)
	assert.Equal(t, xla.DTypeOf[int](), s.Shape.DType)
	assert.Empty(t, s.Shape.Dims, "no dims: a scalar")
	back, err := ToSlice[int](s)
	require.NoError(t, err)
	assert.Equal(t, []int{-3}, back)

	c, err := TensorFrom([]celsius{36.6, -40}, 2)
	require.NoError(t, err)
	assert.Equal(t, []float32{36.6, -40}, c.Data)
	cs, err := ToSlice[celsius](c)
	require.NoError(t, err)
	assert.Equal(t, []celsius{36.6, -40}, cs)

	b, err := TensorFrom([]bool{true, false, true}, 3)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, b.Data)

	z, err := TensorFrom([]complex128{1 + 2i}, 1, 1)
	require.NoError(t, err)
	zs, err := ToSlice[complex128](z)
	require.NoError(t, err)
	assert.Equal(t, []complex128{1 + 2i}, zs)

	h, err := TensorFrom([]xla.BF16{xla.BF16FromFloat32(1.5), xla.BF16FromFloat32(-2)}, 2)
	require.NoError(t, err)
	assert.Equal(t, xla.BFloat16, h.Shape.DType)
	assert.Equal(t, []float32{1.5, -2}, h.Data)
	hs, err := ToSlice[xla.BF16](h)
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, -2}, []float32{hs[0].Float32(), hs[1].Float32()})

	e, err := TensorFrom([]float64{}, 0, 3)
	require.NoError(t, err)
	es, err := ToSlice[float64](e)
	require.NoError(t, err)
	assert.Empty(t, es)
}

// TestTensorFromToSliceErrors: the helpers name what does not fit.
func TestTensorFromToSliceErrors(t *testing.T) {
	_, err := TensorFrom([]float32{1, 2, 3}, 2, 2)
	assert.EqualError(t, err, "interpreter: TensorFrom: tensor<2x2xf32> has 4 elements, data 3")
	_, err = TensorFrom([]float32{1, 2, 3}, 1, 1)
	assert.EqualError(t, err, "interpreter: TensorFrom: tensor<1x1xf32> has 1 element, data 3", "one element, not 1 elements")
	_, err = TensorFrom([]float32{}, -1)
	assert.EqualError(t, err, "interpreter: TensorFrom: tensor<-1xf32> has negative dimension -1 at axis 0")
	_, err = TensorFrom([]float32{}, 1<<40, 1<<40)
	assert.EqualError(t, err, "interpreter: TensorFrom: tensor<1099511627776x1099511627776xf32> has more elements than an int counts")
	var ae *AllocError
	assert.False(t, errors.As(err, &ae), "a shape no data can fill is not an allocation failure")

	f := f32Tensor([]float32{1, 2}, 2)
	_, err = ToSlice[int32](f)
	assert.ErrorContains(t, err, "tensor holds f32, not int32 (i32)")
	_, err = ToSlice[float32](nil)
	assert.ErrorContains(t, err, "value is <nil>, not a *Tensor")
	_, err = ToSlice[float32](Tuple{f})
	assert.ErrorContains(t, err, "value is interpreter.Tuple, not a *Tensor")
	_, err = ToSlice[float32]((*Tensor)(nil))
	assert.ErrorContains(t, err, "nil *Tensor")
	_, err = ToSlice[float32](&Tensor{Shape: f.Shape, Data: []float32{1}})
	assert.ErrorContains(t, err, "f32 tensor of 2 elements holds 1")
}

// TestTensorString: fmt prints a tensor's type and its first elements.
func TestTensorString(t *testing.T) {
	x, err := TensorFrom([]float32{1, 2.5, -3, 4}, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, "tensor<2x2xf32> [1 2.5 -3 4]", fmt.Sprint(x))
	long := NewTensor(xla.MakeShape(xla.Int32, 20))
	want := "tensor<20xi32> [" + strings.TrimSpace(strings.Repeat("0 ", 16)) + " ...]"
	assert.Equal(t, want, long.String())
	z, err := TensorFrom([]complex64{1 - 2i})
	require.NoError(t, err)
	assert.Equal(t, "tensor<complex<f32>> [(1-2i)]", z.String())
	assert.Equal(t, "tensor<0xf32> []", NewTensor(xla.MakeShape(xla.Float32, 0)).String())
	assert.Equal(t, "<nil>", (*Tensor)(nil).String())
	assert.Equal(t, "tensor<4xf32> (invalid: f32 tensor of 4 elements holds 2 elements)",
		(&Tensor{Shape: xla.MakeShape(xla.Float32, 4), Data: []float32{1, 2}}).String())
}

// TestTensorFromChecksLengthFirst: TensorFrom compares the shape's element
// count with len(data) before it allocates anything: a 256 MiB tensor for
// one value was allocated first, and where memory was short the caller
// got an *AllocError rather than the length mismatch (found in review).
func TestTensorFromChecksLengthFirst(t *testing.T) {
	// Every allocation past 1 KiB fails, so any made shows as an error.
	defer func(min int64, f func() (int64, bool)) { checkAllocMin, availableMemory = min, f }(checkAllocMin, availableMemory)
	checkAllocMin = 0
	availableMemory = func() (int64, bool) { return 1 << 10, true }

	_, err := TensorFrom([]float32{1}, 1<<26)
	assert.EqualError(t, err, "interpreter: TensorFrom: tensor<67108864xf32> has 67108864 elements, data 1")
	_, err = TensorFrom([]float64{1, 2}, 1<<20, 1<<20, 1<<20)
	assert.EqualError(t, err, "interpreter: TensorFrom: tensor<1048576x1048576x1048576xf64> has 1152921504606846976 elements, data 2")
	_, err = NewFloatTensor(xla.Float32, []float32{1}, 1<<26)
	assert.EqualError(t, err, "interpreter: NewFloatTensor: tensor<67108864xf32> has 67108864 elements, data 1")

	// Where the lengths agree the allocation is what fails.
	_, err = TensorFrom(make([]float32, 1024), 1024)
	var ae *AllocError
	assert.ErrorAs(t, err, &ae)
}

// TestTensorFromScalar: no dims is a scalar (as effects.ArrayOf), and
// data of another length says so rather than "tensor<f32> has 1
// elements, data 3" (found in review).
func TestTensorFromScalar(t *testing.T) {
	s, err := TensorFrom([]int32{7})
	require.NoError(t, err)
	assert.Equal(t, xla.MakeShape(xla.Int32), s.Shape)
	_, err = TensorFrom([]float32{1, 2, 3})
	assert.EqualError(t, err, "interpreter: TensorFrom: no dims: a scalar; pass the dims (data 3 elements)")
	_, err = TensorFrom([]float32{})
	assert.EqualError(t, err, "interpreter: TensorFrom: no dims: a scalar; pass the dims (data 0 elements)")
	v, err := TensorFrom([]float32{1, 2, 3}, 3)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, v.Data)
}

// TestElementWording: counts of one are singular.
func TestElementWording(t *testing.T) {
	one := &Tensor{Shape: xla.MakeShape(xla.Float32, 1), Data: []float32{1, 2}}
	assert.EqualError(t, one.Validate(), "f32 tensor of 1 element holds 2 elements")
	two := &Tensor{Shape: xla.MakeShape(xla.Float32, 2), Data: []float32{1}}
	assert.EqualError(t, two.Validate(), "f32 tensor of 2 elements holds 1 element")
}

// TestFormatElementAsCLI: FormatElement, Tensor.String and
// FormatHostElement print elements as halo run prints a result's
// (cmd/halo: complex numbers as (1-2i), where String printed (1, -2);
// found in review), sub-byte integers and narrow floats as values.
func TestFormatElementAsCLI(t *testing.T) {
	le32 := func(f float32) []byte {
		b := math.Float32bits(f)
		return []byte{byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24)}
	}
	for _, c := range []struct {
		dt   xla.DType
		host []byte
		want string
	}{
		{xla.Complex64, append(le32(1), le32(-2)...), "(1-2i)"},
		{xla.Complex64, append(le32(0.5), le32(3)...), "(0.5+3i)"},
		{xla.Complex64, append(le32(float32(math.Inf(1))), le32(float32(math.NaN()))...), "(+Inf+NaNi)"},
		{xla.Float32, le32(2.5), "2.5"},
		{xla.Int4, []byte{0xff}, "-1"},
		{xla.Uint4, []byte{0x0f}, "15"},
		{xla.Int2, []byte{0xfe}, "-2"},
		{xla.Float8E4M3FN, []byte{0x1d}, "0.1015625"},
		{xla.BFloat16, []byte{0xc0, 0x3f}, "1.5"},
		{xla.Bool, []byte{1}, "true"},
		{xla.Int32, []byte{0xfe, 0xff, 0xff, 0xff}, "-2"},
	} {
		tt, err := TensorFromHost(xla.MakeShape(c.dt, 1), c.host)
		require.NoError(t, err)
		assert.Equal(t, c.want, FormatElement(tt, 0), "%v", c.dt)
		assert.Equal(t, c.want, FormatHostElement(c.dt, c.host), "%v", c.dt)
		assert.Equal(t, fmt.Sprintf("tensor<1x%s> [%s]", stablehlo.TensorOf(tt.Shape).DType, c.want), tt.String())
	}
	c128, err := TensorFrom([]complex128{-1.5 + 0.25i}, 1)
	require.NoError(t, err)
	assert.Equal(t, "(-1.5+0.25i)", FormatElement(c128, 0))
	assert.Equal(t, fmt.Sprint(complex64(1-2i)), FormatElement(must(TensorFrom([]complex64{1 - 2i})), 0), "as Go prints it")
	assert.Equal(t, "?", FormatHostElement(xla.Float32, []byte{1, 2}), "not one element")
	assert.Equal(t, "?", FormatHostElement(xla.Invalid, nil))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestEmptyTensorNilData: a tensor without elements may leave Data nil
// (Validate rejected it: "f32 tensor holds <nil>"; found in review), and
// every consumer takes it as the empty slice of its element type: Host,
// ToSlice, FormatElement, String, Clone, Convert, and Run, whose kernels
// get a typed empty slice, in arguments, tuples and custom-call results.
func TestEmptyTensorNilData(t *testing.T) {
	empty := &Tensor{Shape: xla.MakeShape(xla.Float32, 0, 3)}
	require.NoError(t, empty.Validate())
	assert.Equal(t, []byte{}, empty.Host())
	vals, err := ToSlice[float32](empty)
	require.NoError(t, err)
	assert.Empty(t, vals)
	bf, err := ToSlice[xla.BF16](&Tensor{Shape: xla.MakeShape(xla.BFloat16, 0)})
	require.NoError(t, err)
	assert.Empty(t, bf)
	assert.Equal(t, "?", FormatElement(empty, 0))
	assert.Equal(t, "tensor<0x3xf32> []", empty.String())
	assert.Equal(t, []float32{}, empty.Clone().Data)
	require.NoError(t, Convert(&Tensor{Shape: xla.MakeShape(xla.Int32, 0)}, empty))
	require.NoError(t, Convert(NewTensor(xla.MakeShape(xla.Float64, 0)), empty))

	// A scalar has one element: a nil Data is still malformed.
	assert.ErrorContains(t, (&Tensor{Shape: xla.MakeShape(xla.Float32)}).Validate(), "f32 tensor holds <nil>, want []float32")

	out, err := runText(context.Background(), `func.func @main(%x: tensor<0x3xf32>, %t: tuple<tensor<0xi32>>) -> (tensor<0x3xf32>, tensor<3x0xf32>, tensor<0xi32>) {
  %0 = stablehlo.add %x, %x : tensor<0x3xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<0x3xf32>) -> tensor<3x0xf32>
  %2 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<0xi32>>) -> tensor<0xi32>
  %3 = stablehlo.negate %2 : tensor<0xi32>
  return %0, %1, %3 : tensor<0x3xf32>, tensor<3x0xf32>, tensor<0xi32>
}`, empty, Tuple{&Tensor{Shape: xla.MakeShape(xla.Int32, 0)}})
	require.NoError(t, err)
	require.Len(t, out, 3)
	assert.Equal(t, []float32{}, out[0].(*Tensor).Data)
	assert.Equal(t, []float32{}, out[1].(*Tensor).Data)
	assert.Equal(t, []int32{}, out[2].(*Tensor).Data)
	assert.Nil(t, empty.Data, "the caller's tensor is not changed")

	// Returned as is, the argument comes back with a typed empty slice.
	out, err = runText(context.Background(), `func.func @main(%x: tensor<0xf32>) -> tensor<0xf32> {
  return %x : tensor<0xf32>
}`, &Tensor{Shape: xla.MakeShape(xla.Float32, 0)})
	require.NoError(t, err)
	assert.Equal(t, []float32{}, out[0].(*Tensor).Data)

	const target = "halo_test.empty_nil_data"
	RegisterCustomCall(target, func(c *CustomCall) ([]*Tensor, error) {
		return []*Tensor{{Shape: xla.MakeShape(xla.Float32, 0)}}, nil
	})
	defer RegisterCustomCall(target, nil)
	out, err = runText(context.Background(), `func.func @main() -> tensor<0xf32> {
  %0 = stablehlo.custom_call @halo_test.empty_nil_data() : () -> tensor<0xf32>
  %1 = stablehlo.exponential %0 : tensor<0xf32>
  return %1 : tensor<0xf32>
}`)
	require.NoError(t, err)
	assert.Equal(t, []float32{}, out[0].(*Tensor).Data)
}

// TestRegistrationErrorsHandled: RegisterInPlaceKernel returns what
// RegisterKernel returns, and this package's init registrations panic on
// a failure (a nil kernel or check was dropped in silence; found in
// review) rather than leave the op without it.
func TestRegistrationErrorsHandled(t *testing.T) {
	assert.PanicsWithError(t, `interpreter: registerKernel("halo_test.nil"): nil kernel (an op's kernel cannot be removed)`, func() {
		registerKernel("halo_test.nil", nil)
	})
	assert.Nil(t, kernelFor("halo_test.nil"))
	assert.PanicsWithError(t, `interpreter: RegisterOpCheck("halo_test.nil"): nil check (an op's check cannot be removed)`, func() {
		mustRegister(RegisterOpCheck("halo_test.nil", nil))
	})
	assert.NotPanics(t, func() { mustRegister(nil) })
	require.NoError(t, RegisterInPlaceKernel("halo_test.in_place", func(*Exec, *stablehlo.Op, []Value) ([]Value, error) { return nil, nil }))
	assert.NotNil(t, kernelFor("halo_test.in_place"))
}
