package pjrt

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// bufferTypes maps halo dtypes to PJRT_Buffer_Type (whose numbering differs
// from xla.PrimitiveType).
var bufferTypes = map[xla.DType]capi.PJRT_Buffer_Type{
	xla.Bool: capi.PJRT_Buffer_Type_PRED, xla.Int1: capi.PJRT_Buffer_Type_S1, xla.Uint1: capi.PJRT_Buffer_Type_U1,
	xla.Int2: capi.PJRT_Buffer_Type_S2, xla.Int4: capi.PJRT_Buffer_Type_S4, xla.Int8: capi.PJRT_Buffer_Type_S8,
	xla.Int16: capi.PJRT_Buffer_Type_S16, xla.Int32: capi.PJRT_Buffer_Type_S32, xla.Int64: capi.PJRT_Buffer_Type_S64,
	xla.Uint2: capi.PJRT_Buffer_Type_U2, xla.Uint4: capi.PJRT_Buffer_Type_U4, xla.Uint8: capi.PJRT_Buffer_Type_U8,
	xla.Uint16: capi.PJRT_Buffer_Type_U16, xla.Uint32: capi.PJRT_Buffer_Type_U32, xla.Uint64: capi.PJRT_Buffer_Type_U64,
	xla.Float16: capi.PJRT_Buffer_Type_F16, xla.BFloat16: capi.PJRT_Buffer_Type_BF16,
	xla.Float32: capi.PJRT_Buffer_Type_F32, xla.Float64: capi.PJRT_Buffer_Type_F64,
	xla.Complex64: capi.PJRT_Buffer_Type_C64, xla.Complex128: capi.PJRT_Buffer_Type_C128,
	xla.Float8E5M2: capi.PJRT_Buffer_Type_F8E5M2, xla.Float8E4M3FN: capi.PJRT_Buffer_Type_F8E4M3FN,
	xla.Float8E4M3B11FNUZ: capi.PJRT_Buffer_Type_F8E4M3B11FNUZ, xla.Float8E5M2FNUZ: capi.PJRT_Buffer_Type_F8E5M2FNUZ,
	xla.Float8E4M3FNUZ: capi.PJRT_Buffer_Type_F8E4M3FNUZ, xla.Float8E4M3: capi.PJRT_Buffer_Type_F8E4M3,
	xla.Float8E3M4: capi.PJRT_Buffer_Type_F8E3M4, xla.Float8E8M0FNU: capi.PJRT_Buffer_Type_F8E8M0FNU,
	xla.Float4E2M1FN: capi.PJRT_Buffer_Type_F4E2M1FN, xla.Float6E2M3FN: capi.PJRT_Buffer_Type_F6E2M3FN,
	xla.Float6E3M2FN: capi.PJRT_Buffer_Type_F6E3M2FN,
}

var dtypesByBufferType = func() map[capi.PJRT_Buffer_Type]xla.DType {
	m := map[capi.PJRT_Buffer_Type]xla.DType{}
	for d, t := range bufferTypes {
		m[t] = d
	}
	return m
}()

// BufferType returns the PJRT_Buffer_Type number of d, or false when PJRT
// has none.
func BufferType(d xla.DType) (int32, bool) {
	t, ok := bufferTypes[d]
	return int32(t), ok
}

// cBuffer is a PJRT_Buffer.
type cBuffer struct {
	c         *cClient
	h         uintptr
	dtype     xla.DType
	dims      []int64
	closeOnce sync.Once
}

func (c *cClient) BufferFromHost(hb backend.HostBuffer, dev backend.Device, mem backend.Memory) (backend.Buffer, backend.Event, error) {
	bt, ok := bufferTypes[hb.Shape.DType]
	if !ok {
		return nil, nil, errorf(InvalidArgument, "PJRT_Client_BufferFromHostBuffer", "element type %v has no PJRT buffer type", hb.Shape.DType)
	}
	pin := new(runtime.Pinner)
	dims := append([]int64{0}, hb.Shape.Dims...) // a leading slot keeps the address valid for scalars
	pin.Pin(&dims[0])
	var data uintptr
	if len(hb.Data) > 0 {
		pin.Pin(&hb.Data[0])
		data = uintptr(unsafe.Pointer(&hb.Data[0]))
	}
	a := &capi.PJRT_Client_BufferFromHostBuffer_Args{
		StructSize:          capi.PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE,
		Client:              c.h,
		Data:                data,
		Type:                bt,
		Dims:                uintptr(unsafe.Pointer(&dims[min(1, len(hb.Shape.Dims))])),
		NumDims:             uint64(len(hb.Shape.Dims)),
		HostBufferSemantics: capi.PJRT_HostBufferSemantics(hb.Semantics),
	}
	var strides []int64
	if hb.ByteStrides != nil {
		strides = append([]int64{0}, hb.ByteStrides...)
		pin.Pin(&strides[0])
		a.ByteStrides = uintptr(unsafe.Pointer(&strides[1]))
		a.NumByteStrides = uint64(len(hb.ByteStrides))
	}
	if d, ok := dev.(*cDevice); ok && d != nil {
		a.Device = d.h
	}
	if m, ok := mem.(*cMemory); ok && m != nil {
		a.Memory = m.h
		a.Device = 0
	}
	// The args struct and dims are only read during the call; the host data
	// stays pinned until the plugin says it is done with it.
	err := c.p.call(capi.SlotPJRT_Client_BufferFromHostBuffer, unsafe.Pointer(a), nil)
	runtime.KeepAlive(dims)
	runtime.KeepAlive(strides)
	if err != nil {
		pin.Unpin()
		return nil, nil, err
	}
	b := &cBuffer{c: c, h: a.Buffer, dtype: hb.Shape.DType, dims: append([]int64(nil), hb.Shape.Dims...)}
	data2 := hb.Data
	done := c.p.watchEvent(a.DoneWithHostBuffer, "PJRT_Client_BufferFromHostBuffer", func(error) {
		runtime.KeepAlive(data2)
		pin.Unpin()
	})
	return b, done, nil
}

func (b *cBuffer) DType() xla.DType { return b.dtype }
func (b *cBuffer) Dims() []int64    { return b.dims }

func (b *cBuffer) OnDeviceSize() (int64, error) {
	a := &capi.PJRT_Buffer_OnDeviceSizeInBytes_Args{StructSize: capi.PJRT_Buffer_OnDeviceSizeInBytes_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_OnDeviceSizeInBytes, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return int64(a.OnDeviceSizeInBytes), nil
}

func (b *cBuffer) Device() backend.Device {
	a := &capi.PJRT_Buffer_Device_Args{StructSize: capi.PJRT_Buffer_Device_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_Device, unsafe.Pointer(a), nil); err != nil {
		return nil
	}
	if d := b.c.deviceOf(a.Device); d != nil {
		return d
	}
	return nil
}

func (b *cBuffer) Memory() backend.Memory {
	a := &capi.PJRT_Buffer_Memory_Args{StructSize: capi.PJRT_Buffer_Memory_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_Memory, unsafe.Pointer(a), nil); err != nil {
		return nil
	}
	if m := b.c.memoryOf(a.Memory); m != nil {
		return m
	}
	return nil
}

func (b *cBuffer) HostSize() (int64, error) {
	a := &capi.PJRT_Buffer_ToHostBuffer_Args{StructSize: capi.PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE, Src: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_ToHostBuffer, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return int64(a.DstSize), nil
}

func (b *cBuffer) ToHost(dst []byte) (backend.Event, error) {
	if len(dst) == 0 {
		// Nothing to copy, but the buffer's computation may still run or
		// have failed: its ready event says when, and how.
		return b.ReadyEvent()
	}
	pin := new(runtime.Pinner)
	ev, err := b.startToHost(dst, pin)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	return b.c.p.watchEvent(ev, "PJRT_Buffer_ToHostBuffer", func(error) {
		runtime.KeepAlive(dst)
		pin.Unpin()
	}), nil
}

// ToHostStart implements backend.HostCopyWaiter: PJRT_Buffer_ToHostBuffer;
// the wait awaits its event in the plugin and destroys it.
func (b *cBuffer) ToHostStart(dst []byte) (func() error, error) {
	if len(dst) == 0 {
		return b.ReadyWait() // as ToHost
	}
	pin := new(runtime.Pinner)
	ev, err := b.startToHost(dst, pin)
	if err != nil || ev == 0 {
		pin.Unpin()
		return noWait, err
	}
	p := b.c.p
	return func() error {
		return p.awaitEvent(ev, "PJRT_Buffer_ToHostBuffer", func(error) {
			runtime.KeepAlive(dst)
			pin.Unpin()
		})
	}, nil
}

func noWait() error { return nil }

// startToHost pins dst (non-empty; the caller unpins it once the copy is
// done) and starts PJRT_Buffer_ToHostBuffer into it, returning the copy's
// event (0 when it is already done).
func (b *cBuffer) startToHost(dst []byte, pin *runtime.Pinner) (uintptr, error) {
	pin.Pin(&dst[0])
	a := &capi.PJRT_Buffer_ToHostBuffer_Args{
		StructSize: capi.PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE,
		Src:        b.h,
		Dst:        uintptr(unsafe.Pointer(&dst[0])),
		DstSize:    uint64(len(dst)),
	}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_ToHostBuffer, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return a.Event, nil
}

// awaitEvent blocks until ev is ready (PJRT_Event_Await), runs release
// (may be nil), destroys ev and returns its error named after op, the call
// that made the event (as the completion callback's error is). When the
// await call itself fails while ev is pending, it waits as watchEvent
// does (the completion callback, else polling), so release never runs
// before the event is done.
func (p *cPlugin) awaitEvent(ev uintptr, op string, release func(error)) error {
	w := &capi.PJRT_Event_Await_Args{StructSize: capi.PJRT_Event_Await_Args_STRUCT_SIZE, Event: ev}
	err := p.call(capi.SlotPJRT_Event_Await, unsafe.Pointer(w), nil)
	if err != nil {
		if ready, rerr := p.eventReady(ev); rerr != nil || !ready {
			e := p.watchEvent(ev, op, release)
			<-e.Done()
			return e.Err()
		}
		err = p.eventError(ev, op) // the event's own error, not the call's
	}
	if e, ok := err.(*Error); ok {
		e.Op = op
	}
	if release != nil {
		release(err)
	}
	p.destroyEvent(ev)
	return err
}

func (b *cBuffer) CopyToDevice(dev backend.Device) (backend.Buffer, error) {
	d, ok := dev.(*cDevice)
	if !ok || d == nil || d.c != b.c {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_CopyToDevice", "device is not a device of this buffer's client")
	}
	a := &capi.PJRT_Buffer_CopyToDevice_Args{StructSize: capi.PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE, Buffer: b.h, DstDevice: d.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_CopyToDevice, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return &cBuffer{c: b.c, h: a.DstBuffer, dtype: b.dtype, dims: b.dims}, nil
}

func (b *cBuffer) CopyToMemory(mem backend.Memory) (backend.Buffer, error) {
	m, ok := mem.(*cMemory)
	if !ok || m == nil || m.c != b.c {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_CopyToMemory", "memory is not a memory of this buffer's client")
	}
	a := &capi.PJRT_Buffer_CopyToMemory_Args{StructSize: capi.PJRT_Buffer_CopyToMemory_Args_STRUCT_SIZE, Buffer: b.h, DstMemory: m.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_CopyToMemory, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return &cBuffer{c: b.c, h: a.DstBuffer, dtype: b.dtype, dims: b.dims}, nil
}

func (b *cBuffer) ReadyEvent() (backend.Event, error) {
	a := &capi.PJRT_Buffer_ReadyEvent_Args{StructSize: capi.PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_ReadyEvent, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return b.c.p.watchEvent(a.Event, "PJRT_Buffer_ReadyEvent", nil), nil
}

// ReadyWait implements backend.ReadyWaiter: the buffer's ready event; the
// wait awaits it in the plugin (PJRT_Event_Await) and destroys it.
func (b *cBuffer) ReadyWait() (func() error, error) {
	const op = "PJRT_Buffer_ReadyEvent"
	a := &capi.PJRT_Buffer_ReadyEvent_Args{StructSize: capi.PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_ReadyEvent, unsafe.Pointer(a), nil); err != nil {
		return noWait, err
	}
	if a.Event == 0 {
		return noWait, nil
	}
	p, ev := b.c.p, a.Event
	return func() error { return p.awaitEvent(ev, op, nil) }, nil
}

func (b *cBuffer) Delete() error {
	a := &capi.PJRT_Buffer_Delete_Args{StructSize: capi.PJRT_Buffer_Delete_Args_STRUCT_SIZE, Buffer: b.h}
	return b.c.p.call(capi.SlotPJRT_Buffer_Delete, unsafe.Pointer(a), nil)
}

func (b *cBuffer) IsDeleted() bool {
	a := &capi.PJRT_Buffer_IsDeleted_Args{StructSize: capi.PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE, Buffer: b.h}
	if err := b.c.p.call(capi.SlotPJRT_Buffer_IsDeleted, unsafe.Pointer(a), nil); err != nil {
		return false
	}
	return a.IsDeleted
}

func (b *cBuffer) Close() error {
	var err error
	b.closeOnce.Do(func() {
		a := &capi.PJRT_Buffer_Destroy_Args{StructSize: capi.PJRT_Buffer_Destroy_Args_STRUCT_SIZE, Buffer: b.h}
		err = b.c.p.call(capi.SlotPJRT_Buffer_Destroy, unsafe.Pointer(a), nil)
	})
	return err
}

func (b *cBuffer) String() string { return fmt.Sprintf("buffer %v%v", b.dtype, b.dims) }
