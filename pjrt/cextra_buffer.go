package pjrt

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// int64s copies a C array of n int64.
func int64s(p uintptr, n int) []int64 {
	out := make([]int64, max(n, 0))
	if p != 0 && n > 0 {
		copy(out, unsafe.Slice((*int64)(cptr(p)), n))
	}
	return out
}

// dimsArg returns a pinned, never-empty copy of dims and the address of
// its elements (valid for a scalar too).
func dimsArg(dims []int64, pin *runtime.Pinner) ([]int64, uintptr) {
	d := append([]int64{0}, dims...)
	pin.Pin(&d[0])
	return d, uintptr(unsafe.Pointer(&d[min(1, len(dims))]))
}

// bytesArg pins s (with a trailing NUL) and returns its address, or 0 for "".
func bytesArg(s string, pin *runtime.Pinner) ([]byte, uintptr) {
	if s == "" {
		return nil, 0
	}
	b := append([]byte(s), 0)
	pin.Pin(&b[0])
	return b, uintptr(unsafe.Pointer(&b[0]))
}

func (b *cBuffer) UnpaddedDims() ([]int64, error) {
	a := &capi.PJRT_Buffer_UnpaddedDimensions_Args{StructSize: capi.PJRT_Buffer_UnpaddedDimensions_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_UnpaddedDimensions, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return int64s(a.UnpaddedDims, int(a.NumDims)), nil
}

func (b *cBuffer) DynamicDims() ([]int, error) {
	a := &capi.PJRT_Buffer_DynamicDimensionIndices_Args{StructSize: capi.PJRT_Buffer_DynamicDimensionIndices_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_DynamicDimensionIndices, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := []int{}
	if a.DynamicDimIndices != 0 && a.NumDynamicDims > 0 {
		for _, i := range unsafe.Slice((*uint64)(cptr(a.DynamicDimIndices)), int(a.NumDynamicDims)) {
			out = append(out, int(i))
		}
	}
	return out, nil
}

// readLayout copies a PJRT_Buffer_MemoryLayout.
func readLayout(l *capi.PJRT_Buffer_MemoryLayout) backend.Layout {
	var out backend.Layout
	switch l.Type {
	case capi.PJRT_Buffer_MemoryLayout_Type_Strides:
		s := l.Strides()
		out.ByteStrides = int64s(s.ByteStrides, int(s.NumByteStrides))
	default:
		t := l.Tiled()
		out.MinorToMajor = int64s(t.MinorToMajor, int(t.MinorToMajorSize))
		if t.NumTiles > 0 && t.TileDimSizes != 0 && t.TileDims != 0 {
			sizes := unsafe.Slice((*uint64)(cptr(t.TileDimSizes)), int(t.NumTiles))
			off := uintptr(0)
			for _, n := range sizes {
				out.Tiles = append(out.Tiles, int64s(t.TileDims+off*8, int(n)))
				off += uintptr(n)
			}
		}
	}
	return out
}

func (b *cBuffer) Layout() (backend.Layout, error) {
	a := &capi.PJRT_Buffer_GetMemoryLayout_Args{StructSize: capi.PJRT_Buffer_GetMemoryLayout_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_GetMemoryLayout, unsafe.Pointer(a), nil); err != nil {
		return backend.Layout{}, err
	}
	return readLayout(&a.Layout), nil
}

func (b *cBuffer) SerializedLayout() ([]byte, error) {
	ext, err := b.c.p.layouts("PJRT_Layouts_PJRT_Buffer_MemoryLayout")
	if err != nil {
		return nil, err
	}
	a := &capi.PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args{StructSize: capi.PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.callExt(ext.PJRT_Layouts_PJRT_Buffer_MemoryLayout, "PJRT_Layouts_PJRT_Buffer_MemoryLayout", unsafe.Pointer(a)); err != nil {
		return nil, err
	}
	return b.c.p.serializeLayout(ext, a.Layout, true)
}

func (b *cBuffer) IsOnCPU() (bool, error) {
	a := &capi.PJRT_Buffer_IsOnCpu_Args{StructSize: capi.PJRT_Buffer_IsOnCpu_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_IsOnCpu, unsafe.Pointer(a), nil); err != nil {
		return false, err
	}
	return a.IsOnCpu, nil
}

func (b *cBuffer) UnsafePointer() (uintptr, error) {
	a := &capi.PJRT_Buffer_UnsafePointer_Args{StructSize: capi.PJRT_Buffer_UnsafePointer_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_UnsafePointer, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return a.BufferPointer, nil
}

func (b *cBuffer) DeviceMemoryPointer() (uintptr, error) {
	a := &capi.PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args{StructSize: capi.PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_OpaqueDeviceMemoryDataPointer, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return a.DeviceMemoryPtr, nil
}

func (b *cBuffer) IncreaseExternalReferenceCount() error {
	a := &capi.PJRT_Buffer_IncreaseExternalReferenceCount_Args{StructSize: capi.PJRT_Buffer_IncreaseExternalReferenceCount_Args_STRUCT_SIZE, Buffer: b.h}
	return b.c.p.call(capi.SlotPJRT_Buffer_IncreaseExternalReferenceCount, unsafe.Pointer(a), nil)
}

func (b *cBuffer) DecreaseExternalReferenceCount() error {
	a := &capi.PJRT_Buffer_DecreaseExternalReferenceCount_Args{StructSize: capi.PJRT_Buffer_DecreaseExternalReferenceCount_Args_STRUCT_SIZE, Buffer: b.h}
	return b.c.p.call(capi.SlotPJRT_Buffer_DecreaseExternalReferenceCount, unsafe.Pointer(a), nil)
}

func (b *cBuffer) CopyRawToHost(dst []byte, offset int64) (backend.Event, error) {
	pin := new(runtime.Pinner)
	var p uintptr
	if len(dst) > 0 {
		pin.Pin(&dst[0])
		p = uintptr(unsafe.Pointer(&dst[0]))
	}
	a := &capi.PJRT_Buffer_CopyRawToHost_Args{
		StructSize:   capi.PJRT_Buffer_CopyRawToHost_Args_STRUCT_SIZE,
		Buffer:       b.h,
		Dst:          p,
		Offset:       offset,
		TransferSize: int64(len(dst)),
	}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_CopyRawToHost, unsafe.Pointer(a), nil); err != nil {
		pin.Unpin()
		return nil, err
	}
	return b.c.p.watchEvent(a.Event, "PJRT_Buffer_CopyRawToHost", func(error) {
		runtime.KeepAlive(dst)
		pin.Unpin()
	}), nil
}

func (b *cBuffer) CopyRawToHostFuture(offset, size int64) (backend.Event, func([]byte, int, string) error, error) {
	a := &capi.PJRT_Buffer_CopyRawToHostFuture_Args{
		StructSize:   capi.PJRT_Buffer_CopyRawToHostFuture_Args_STRUCT_SIZE,
		Buffer:       b.h,
		Offset:       offset,
		TransferSize: size,
	}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_CopyRawToHostFuture, unsafe.Pointer(a), nil); err != nil {
		return nil, nil, err
	}
	// dst is pinned from Provide until the event fires (whichever comes
	// first wins: a destination provided after a failed event stays unpinned).
	var (
		mu       sync.Mutex
		finished bool
		pin      runtime.Pinner
	)
	done := b.c.p.watchEvent(a.Event, "PJRT_Buffer_CopyRawToHostFuture", func(error) {
		mu.Lock()
		finished = true
		pin.Unpin()
		mu.Unlock()
	})
	cb, data := a.FutureReadyCallback, a.CallbackData
	provide := func(dst []byte, code int, msg string) error {
		ca := &capi.PJRT_Buffer_CopyRawToHostFuture_Callback_Args{
			StructSize:   capi.PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE,
			CallbackData: data,
			ErrorCode:    capi.PJRT_Error_Code(code),
		}
		var callPin runtime.Pinner
		m, mp := bytesArg(msg, &callPin)
		ca.ErrorMessage, ca.ErrorMessageSize = mp, uint64(len(msg))
		if len(dst) > 0 {
			mu.Lock()
			if !finished {
				pin.Pin(&dst[0])
			}
			mu.Unlock()
			ca.Dst = uintptr(unsafe.Pointer(&dst[0]))
		}
		callPin.Pin(ca)
		purego.SyscallN(cb, uintptr(unsafe.Pointer(ca)))
		callPin.Unpin()
		runtime.KeepAlive(m)
		return nil
	}
	return done, provide, nil
}

func (b *cBuffer) Bitcast(shape xla.Shape) (backend.Buffer, error) {
	bt, ok := bufferTypes[shape.DType]
	if !ok {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_Bitcast", "element type %v has no PJRT buffer type", shape.DType)
	}
	var pin runtime.Pinner
	dims, dp := dimsArg(shape.Dims, &pin)
	a := &capi.PJRT_Buffer_Bitcast_Args{
		StructSize:  capi.PJRT_Buffer_Bitcast_Args_STRUCT_SIZE,
		Buffer:      b.h,
		ElementType: bt,
		Dims:        dp,
		NumDims:     uint64(len(shape.Dims)),
	}
	err := b.c.p.call(capi.SlotPJRT_Buffer_Bitcast, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(dims)
	if err != nil {
		return nil, err
	}
	return &cBuffer{c: b.c, h: a.OutBuffer, dtype: shape.DType, dims: append([]int64(nil), shape.Dims...)}, nil
}

func (b *cBuffer) DonateWithControlDependency() (backend.Buffer, func(int, string) error, error) {
	a := &capi.PJRT_Buffer_DonateWithControlDependency_Args{StructSize: capi.PJRT_Buffer_DonateWithControlDependency_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_DonateWithControlDependency, unsafe.Pointer(a), nil); err != nil {
		return nil, nil, err
	}
	cb, data := a.DependencyReadyCallback, a.CallbackData
	set := func(code int, msg string) error {
		var pin runtime.Pinner
		m, mp := bytesArg(msg, &pin)
		ca := &capi.PJRT_Buffer_DonateWithControlDependency_Callback_Args{
			StructSize:       capi.PJRT_Buffer_DonateWithControlDependency_Callback_Args_STRUCT_SIZE,
			CallbackData:     data,
			ErrorCode:        capi.PJRT_Error_Code(code),
			ErrorMessage:     mp,
			ErrorMessageSize: uint64(len(msg)),
		}
		pin.Pin(ca)
		purego.SyscallN(cb, uintptr(unsafe.Pointer(ca)))
		pin.Unpin()
		runtime.KeepAlive(m)
		return nil
	}
	return &cBuffer{c: b.c, h: a.OutBuffer, dtype: b.dtype, dims: b.dims}, set, nil
}
