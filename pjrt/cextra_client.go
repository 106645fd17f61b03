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

func (c *cClient) LookupAddressableDevice(localHardwareID int) (backend.Device, error) {
	a := &capi.PJRT_Client_LookupAddressableDevice_Args{StructSize: capi.PJRT_Client_LookupAddressableDevice_Args_STRUCT_SIZE, Client: c.h, LocalHardwareId: int32(localHardwareID)}
	if err := c.p.call(capi.SlotPJRT_Client_LookupAddressableDevice, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	if d := c.deviceOf(a.AddressableDevice); d != nil {
		return d, nil
	}
	return nil, errorf(Internal, "PJRT_Client_LookupAddressableDevice", "the plugin returned a device the client did not list")
}

// shapeArgs converts a shape to a PJRT buffer type and pinned dims.
func shapeArgs(op string, shape xla.Shape, pin *runtime.Pinner) (capi.PJRT_Buffer_Type, []int64, uintptr, error) {
	bt, ok := bufferTypes[shape.DType]
	if !ok {
		return 0, nil, 0, errorf(InvalidArgument, op, "element type %v has no PJRT buffer type", shape.DType)
	}
	dims, dp := dimsArg(shape.Dims, pin)
	return bt, dims, dp, nil
}

func deviceHandle(d backend.Device) uintptr {
	if cd, ok := d.(*cDevice); ok && cd != nil {
		return cd.h
	}
	return 0
}

func memoryHandle(m backend.Memory) uintptr {
	if cm, ok := m.(*cMemory); ok && cm != nil {
		return cm.h
	}
	return 0
}

func (c *cClient) newBufferOf(h uintptr, shape xla.Shape) *cBuffer {
	return &cBuffer{c: c, h: h, dtype: shape.DType, dims: append([]int64(nil), shape.Dims...)}
}

func (c *cClient) CreateUninitializedBuffer(shape xla.Shape, dev backend.Device, mem backend.Memory) (backend.Buffer, error) {
	const op = "PJRT_Client_CreateUninitializedBuffer"
	var pin runtime.Pinner
	bt, dims, dp, err := shapeArgs(op, shape, &pin)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	a := &capi.PJRT_Client_CreateUninitializedBuffer_Args{
		StructSize:       capi.PJRT_Client_CreateUninitializedBuffer_Args_STRUCT_SIZE,
		Client:           c.h,
		ShapeDims:        dp,
		ShapeNumDims:     uint64(len(shape.Dims)),
		ShapeElementType: bt,
		Device:           deviceHandle(dev),
		Memory:           memoryHandle(mem),
	}
	err = c.p.call(capi.SlotPJRT_Client_CreateUninitializedBuffer, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(dims)
	if err != nil {
		return nil, err
	}
	return c.newBufferOf(a.Buffer, shape), nil
}

func (c *cClient) CreateErrorBuffer(shape xla.Shape, mem backend.Memory, code int, msg string) (backend.Buffer, error) {
	const op = "PJRT_Client_CreateErrorBuffer"
	var pin runtime.Pinner
	bt, dims, dp, err := shapeArgs(op, shape, &pin)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	m, mp := bytesArg(msg, &pin)
	a := &capi.PJRT_Client_CreateErrorBuffer_Args{
		StructSize:       capi.PJRT_Client_CreateErrorBuffer_Args_STRUCT_SIZE,
		Client:           c.h,
		ErrorCode:        capi.PJRT_Error_Code(code),
		ErrorMessage:     mp,
		ErrorMessageSize: uint64(len(msg)),
		ShapeDims:        dp,
		ShapeNumDims:     uint64(len(shape.Dims)),
		ShapeElementType: bt,
		Memory:           memoryHandle(mem),
	}
	err = c.p.call(capi.SlotPJRT_Client_CreateErrorBuffer, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(dims)
	runtime.KeepAlive(m)
	if err != nil {
		return nil, err
	}
	return c.newBufferOf(a.Buffer, shape), nil
}

// The on-delete trampoline of CreateViewOfDeviceBuffer: one purego callback
// for void (*)(void *device_buffer_ptr, void *user_arg); user_arg is a
// handle into viewDeleters.
var (
	viewOnce     sync.Once
	viewFn       uintptr
	viewMu       sync.Mutex
	viewDeleters = map[uintptr]func(){}
	viewNext     uintptr
)

func viewTrampoline() uintptr {
	viewOnce.Do(func() {
		viewFn = purego.NewCallback(func(ptr, userArg uintptr) uintptr {
			viewMu.Lock()
			f := viewDeleters[userArg]
			delete(viewDeleters, userArg)
			viewMu.Unlock()
			if f != nil {
				func() {
					defer func() { _ = recover() }() // a panic must not unwind into C
					f()
				}()
			}
			return 0
		})
	})
	return viewFn
}

// pendingViews is the number of view buffers whose on-delete callback has
// not run.
func pendingViews() int {
	viewMu.Lock()
	defer viewMu.Unlock()
	return len(viewDeleters)
}

func (c *cClient) CreateViewOfDeviceBuffer(ptr uintptr, shape xla.Shape, dev backend.Device, mem backend.Memory, onDelete func()) (backend.Buffer, error) {
	const op = "PJRT_Client_CreateViewOfDeviceBuffer"
	var pin runtime.Pinner
	bt, dims, dp, err := shapeArgs(op, shape, &pin)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	a := &capi.PJRT_Client_CreateViewOfDeviceBuffer_Args{
		StructSize:      capi.PJRT_Client_CreateViewOfDeviceBuffer_Args_STRUCT_SIZE,
		Client:          c.h,
		DeviceBufferPtr: ptr,
		Dims:            dp,
		NumDims:         uint64(len(shape.Dims)),
		ElementType:     bt,
		Device:          deviceHandle(dev),
		Memory:          memoryHandle(mem),
	}
	var h uintptr
	if onDelete != nil {
		viewMu.Lock()
		viewNext++
		h = viewNext
		viewDeleters[h] = onDelete
		viewMu.Unlock()
		a.OnDeleteCallback = viewTrampoline()
		a.OnDeleteCallbackArg = h
	}
	err = c.p.call(capi.SlotPJRT_Client_CreateViewOfDeviceBuffer, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(dims)
	if err != nil {
		if h != 0 {
			viewMu.Lock()
			delete(viewDeleters, h)
			viewMu.Unlock()
		}
		return nil, err
	}
	return c.newBufferOf(a.Buffer, shape), nil
}

// rowMajorLayout is the default (row-major, untiled) layout of a rank
// rank array as a PJRT_Buffer_MemoryLayout, pinned with pin along with its
// minor_to_major (also returned, to keep alive until the call is done).
func rowMajorLayout(rank int, pin *runtime.Pinner) (*capi.PJRT_Buffer_MemoryLayout, []int64) {
	l := &capi.PJRT_Buffer_MemoryLayout{StructSize: capi.PJRT_Buffer_MemoryLayout_STRUCT_SIZE, Type: capi.PJRT_Buffer_MemoryLayout_Type_Tiled}
	t := l.Tiled()
	t.StructSize = capi.PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE
	var m2m []int64
	if rank > 0 {
		m2m = make([]int64, rank)
		for i := range m2m {
			m2m[i] = int64(rank - 1 - i)
		}
		pin.Pin(&m2m[0])
		t.MinorToMajor = uintptr(unsafe.Pointer(&m2m[0]))
		t.MinorToMajorSize = uint64(rank)
	}
	pin.Pin(l)
	return l, m2m
}

// cAliasFulfiller holds the PJRT_FulfillAliasBufferCallback of an alias buffer.
type cAliasFulfiller struct {
	c  *cClient
	cb uintptr
}

func (c *cClient) CreateAliasBuffer(shape xla.Shape, mem backend.Memory) (backend.Buffer, backend.AliasFulfiller, error) {
	const op = "PJRT_Client_CreateAliasBuffer"
	var pin runtime.Pinner
	bt, dims, dp, err := shapeArgs(op, shape, &pin)
	if err != nil {
		pin.Unpin()
		return nil, nil, err
	}
	// XLA's GPU client needs the layout (it sizes the buffer by it): the
	// default, row-major.
	layout, m2m := rowMajorLayout(len(shape.Dims), &pin)
	a := &capi.PJRT_Client_CreateAliasBuffer_Args{
		StructSize:       capi.PJRT_Client_CreateAliasBuffer_Args_STRUCT_SIZE,
		Client:           c.h,
		Memory:           memoryHandle(mem),
		ShapeDims:        dp,
		ShapeNumDims:     uint64(len(shape.Dims)),
		ShapeElementType: bt,
		ShapeLayout:      uintptr(unsafe.Pointer(layout)),
	}
	err = c.p.call(capi.SlotPJRT_Client_CreateAliasBuffer, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(dims)
	runtime.KeepAlive(layout)
	runtime.KeepAlive(m2m)
	if err != nil {
		return nil, nil, err
	}
	return c.newBufferOf(a.AliasBuffer, shape), &cAliasFulfiller{c: c, cb: a.FulfillAliasBufferCb}, nil
}

func (f *cAliasFulfiller) Fulfill(src backend.Buffer, code int, msg string) error {
	var pin runtime.Pinner
	m, mp := bytesArg(msg, &pin)
	a := &capi.PJRT_Client_FulfillAliasBuffer_Args{
		StructSize:           capi.PJRT_Client_FulfillAliasBuffer_Args_STRUCT_SIZE,
		Client:               f.c.h,
		StatusCode:           capi.PJRT_Error_Code(code),
		ErrorMessage:         mp,
		ErrorMessageSize:     uint64(len(msg)),
		FulfillAliasBufferCb: f.cb,
	}
	if b, ok := src.(*cBuffer); ok && b != nil {
		a.Buffer = b.h
	}
	err := f.c.p.call(capi.SlotPJRT_Client_FulfillAliasBuffer, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(m)
	return err
}

// dmaMapping is host memory registered with DmaMap, pinned until unmapped.
type dmaMapping struct {
	pin  *runtime.Pinner
	data []byte
}

func (c *cClient) DMAMap(data []byte) error {
	p := uintptr(unsafe.Pointer(&data[0]))
	c.dmaMu.Lock()
	defer c.dmaMu.Unlock()
	if _, dup := c.dma[p]; dup {
		return errorf(AlreadyExists, "PJRT_Client_DmaMap", "the memory at %#x is already mapped", p)
	}
	pin := new(runtime.Pinner)
	pin.Pin(&data[0])
	a := &capi.PJRT_Client_DmaMap_Args{StructSize: capi.PJRT_Client_DmaMap_Args_STRUCT_SIZE, Client: c.h, Data: p, Size: uint64(len(data))}
	if err := c.p.call(capi.SlotPJRT_Client_DmaMap, unsafe.Pointer(a), nil); err != nil {
		pin.Unpin()
		return err
	}
	if c.dma == nil {
		c.dma = map[uintptr]dmaMapping{}
	}
	c.dma[p] = dmaMapping{pin: pin, data: data}
	return nil
}

func (c *cClient) DMAUnmap(data []byte) error {
	p := uintptr(unsafe.Pointer(&data[0]))
	c.dmaMu.Lock()
	defer c.dmaMu.Unlock()
	return c.dmaUnmapLocked(p)
}

func (c *cClient) dmaUnmapLocked(p uintptr) error {
	a := &capi.PJRT_Client_DmaUnmap_Args{StructSize: capi.PJRT_Client_DmaUnmap_Args_STRUCT_SIZE, Client: c.h, Data: p}
	if err := c.p.call(capi.SlotPJRT_Client_DmaUnmap, unsafe.Pointer(a), nil); err != nil {
		return err
	}
	if m, ok := c.dma[p]; ok {
		m.pin.Unpin()
		delete(c.dma, p)
	}
	return nil
}

// unmapAll undoes the DMA mappings still registered (at Close).
func (c *cClient) unmapAll() {
	c.dmaMu.Lock()
	defer c.dmaMu.Unlock()
	for p := range c.dma {
		if err := c.dmaUnmapLocked(p); err != nil {
			c.dma[p].pin.Unpin()
			delete(c.dma, p)
		}
	}
}

func (c *cClient) UpdateGlobalProcessInfo(infos []backend.ProcessInfo) error {
	var pin runtime.Pinner
	cs := make([]capi.PJRT_ProcessInfo, len(infos)+1)
	pin.Pin(&cs[0])
	var keep [][]byte
	for i, in := range infos {
		m, mp := bytesArg(in.ErrorMessage, &pin)
		keep = append(keep, m)
		cs[i] = capi.PJRT_ProcessInfo{
			StructSize:       capi.PJRT_ProcessInfo_STRUCT_SIZE,
			TaskId:           int32(in.TaskID),
			IncarnationId:    in.IncarnationID,
			State:            capi.PJRT_ProcessState(in.State),
			ErrorCode:        int32(in.ErrorCode),
			ErrorMessage:     mp,
			ErrorMessageSize: uint64(len(in.ErrorMessage)),
		}
	}
	a := &capi.PJRT_Client_UpdateGlobalProcessInfo_Args{
		StructSize:      capi.PJRT_Client_UpdateGlobalProcessInfo_Args_STRUCT_SIZE,
		Client:          c.h,
		ProcessInfos:    uintptr(unsafe.Pointer(&cs[0])),
		NumProcessInfos: uint64(len(infos)),
	}
	err := c.p.call(capi.SlotPJRT_Client_UpdateGlobalProcessInfo, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(cs)
	runtime.KeepAlive(keep)
	return err
}
