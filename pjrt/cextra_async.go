package pjrt

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// cAsyncTransfer is a PJRT_AsyncHostToDeviceTransferManager.
type cAsyncTransfer struct {
	c         *cClient
	h         uintptr
	shapes    []xla.Shape
	closeOnce sync.Once
}

func (c *cClient) NewAsyncTransfer(shapes []xla.Shape, mem backend.Memory) (backend.AsyncTransfer, error) {
	const op = "PJRT_Client_CreateBuffersForAsyncHostToDevice"
	var pin runtime.Pinner
	specs := make([]capi.PJRT_ShapeSpec, len(shapes))
	var keep [][]int64
	for i, s := range shapes {
		bt, dims, dp, err := shapeArgs(op, s, &pin)
		if err != nil {
			pin.Unpin()
			return nil, err
		}
		keep = append(keep, dims)
		specs[i] = capi.PJRT_ShapeSpec{StructSize: capi.PJRT_ShapeSpec_STRUCT_SIZE, Dims: dp, NumDims: uint64(len(s.Dims)), ElementType: bt}
	}
	pin.Pin(&specs[0])
	a := &capi.PJRT_Client_CreateBuffersForAsyncHostToDevice_Args{
		StructSize:    capi.PJRT_Client_CreateBuffersForAsyncHostToDevice_Args_STRUCT_SIZE,
		Client:        c.h,
		ShapeSpecs:    uintptr(unsafe.Pointer(&specs[0])),
		NumShapeSpecs: uint64(len(specs)),
		Memory:        memoryHandle(mem),
	}
	err := c.p.call(capi.SlotPJRT_Client_CreateBuffersForAsyncHostToDevice, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(specs)
	runtime.KeepAlive(keep)
	if err != nil {
		return nil, err
	}
	return &cAsyncTransfer{c: c, h: a.TransferManager, shapes: shapes}, nil
}

func (t *cAsyncTransfer) Device() (backend.Device, error) {
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_Device_Args{StructSize: capi.PJRT_AsyncHostToDeviceTransferManager_Device_Args_STRUCT_SIZE, TransferManager: t.h}
	if err := t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_Device, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	if d := t.c.deviceOf(a.DeviceOut); d != nil {
		return d, nil
	}
	return nil, errorf(Internal, "PJRT_AsyncHostToDeviceTransferManager_Device", "the plugin returned a device the client did not list")
}

func (t *cAsyncTransfer) BufferCount() (int, error) {
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args{StructSize: capi.PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args_STRUCT_SIZE, TransferManager: t.h}
	if err := t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_BufferCount, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return int(a.BufferCount), nil
}

func (t *cAsyncTransfer) BufferSize(i int) (int64, error) {
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args{StructSize: capi.PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args_STRUCT_SIZE, TransferManager: t.h, BufferIndex: int32(i)}
	if err := t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_BufferSize, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return int64(a.BufferSize), nil
}

// pinData pins host data until the plugin's done event fires.
func pinData(data []byte) (*runtime.Pinner, uintptr) {
	pin := new(runtime.Pinner)
	if len(data) == 0 {
		return pin, 0
	}
	pin.Pin(&data[0])
	return pin, uintptr(unsafe.Pointer(&data[0]))
}

func (t *cAsyncTransfer) TransferData(i int, data []byte, offset int64, last bool) (backend.Event, error) {
	const op = "PJRT_AsyncHostToDeviceTransferManager_TransferData"
	pin, p := pinData(data)
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_TransferData_Args{
		StructSize:      capi.PJRT_AsyncHostToDeviceTransferManager_TransferData_Args_STRUCT_SIZE,
		TransferManager: t.h,
		BufferIndex:     int32(i),
		Data:            p,
		Offset:          offset,
		TransferSize:    int64(len(data)),
		IsLastTransfer:  last,
	}
	if err := t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_TransferData, unsafe.Pointer(a), nil); err != nil {
		pin.Unpin()
		return nil, err
	}
	return t.c.p.watchEvent(a.DoneWithH2dTransfer, op, func(error) {
		runtime.KeepAlive(data)
		pin.Unpin()
	}), nil
}

func (t *cAsyncTransfer) TransferLiteral(i int, data []byte, shape xla.Shape) (backend.Event, error) {
	const op = "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral"
	pin, p := pinData(data)
	var callPin runtime.Pinner
	bt, dims, dp, err := shapeArgs(op, shape, &callPin)
	if err != nil {
		callPin.Unpin()
		pin.Unpin()
		return nil, err
	}
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args{
		StructSize:       capi.PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args_STRUCT_SIZE,
		TransferManager:  t.h,
		BufferIndex:      int32(i),
		Data:             p,
		ShapeDims:        dp,
		ShapeNumDims:     uint64(len(shape.Dims)),
		ShapeElementType: bt,
	}
	err = t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_TransferLiteral, unsafe.Pointer(a), &callPin)
	runtime.KeepAlive(dims)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	return t.c.p.watchEvent(a.DoneWithH2dTransfer, op, func(error) {
		runtime.KeepAlive(data)
		pin.Unpin()
	}), nil
}

func (t *cAsyncTransfer) SetBufferError(i int, code int, msg string) error {
	var pin runtime.Pinner
	m, mp := bytesArg(msg, &pin)
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args{
		StructSize:       capi.PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args_STRUCT_SIZE,
		TransferManager:  t.h,
		BufferIndex:      int32(i),
		ErrorCode:        capi.PJRT_Error_Code(code),
		ErrorMessage:     mp,
		ErrorMessageSize: uint64(len(msg)),
	}
	err := t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_SetBufferError, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(m)
	return err
}

func (t *cAsyncTransfer) AddMetadata(md []backend.NamedValue) error {
	var pin runtime.Pinner
	nv, err := makeNamedValues(md, &pin)
	if err != nil {
		pin.Unpin()
		return err
	}
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args{
		StructSize:       capi.PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args_STRUCT_SIZE,
		TransferManager:  t.h,
		TransferMetadata: nv.ptr(),
		NumMetadata:      uint64(len(nv.vals)),
	}
	err = t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_AddMetadata, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(nv)
	return err
}

func (t *cAsyncTransfer) Buffer(i int) (backend.Buffer, error) {
	a := &capi.PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args{StructSize: capi.PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args_STRUCT_SIZE, TransferManager: t.h, BufferIndex: int32(i)}
	if err := t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return t.c.newBufferOf(a.BufferOut, t.shapes[i]), nil
}

func (t *cAsyncTransfer) Close() error {
	var err error
	t.closeOnce.Do(func() {
		a := &capi.PJRT_AsyncHostToDeviceTransferManager_Destroy_Args{StructSize: capi.PJRT_AsyncHostToDeviceTransferManager_Destroy_Args_STRUCT_SIZE, TransferManager: t.h}
		err = t.c.p.call(capi.SlotPJRT_AsyncHostToDeviceTransferManager_Destroy, unsafe.Pointer(a), nil)
	})
	return err
}
