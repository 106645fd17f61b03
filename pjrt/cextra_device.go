package pjrt

import (
	"io"
	"runtime"
	"sync"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
)

func (d *cDevice) MemoryStats() (backend.MemoryStats, error) {
	a := &capi.PJRT_Device_MemoryStats_Args{StructSize: capi.PJRT_Device_MemoryStats_Args_STRUCT_SIZE, Device: d.h}
	if err := d.c.p.call(capi.SlotPJRT_Device_MemoryStats, unsafe.Pointer(a), nil); err != nil {
		return backend.MemoryStats{}, err
	}
	return backend.MemoryStats{
		BytesInUse:     a.BytesInUse,
		PeakBytesInUse: a.PeakBytesInUse, HasPeakBytesInUse: a.PeakBytesInUseIsSet,
		NumAllocs: a.NumAllocs, HasNumAllocs: a.NumAllocsIsSet,
		LargestAllocSize: a.LargestAllocSize, HasLargestAllocSize: a.LargestAllocSizeIsSet,
		BytesLimit: a.BytesLimit, HasBytesLimit: a.BytesLimitIsSet,
		BytesReserved: a.BytesReserved, HasBytesReserved: a.BytesReservedIsSet,
		PeakBytesReserved: a.PeakBytesReserved, HasPeakBytesReserved: a.PeakBytesReservedIsSet,
		BytesReservableLimit: a.BytesReservableLimit, HasBytesReservableLimit: a.BytesReservableLimitIsSet,
		LargestFreeBlockBytes: a.LargestFreeBlockBytes, HasLargestFreeBlockBytes: a.LargestFreeBlockBytesIsSet,
		PoolBytes: a.PoolBytes, HasPoolBytes: a.PoolBytesIsSet,
		PeakPoolBytes: a.PeakPoolBytes, HasPeakPoolBytes: a.PeakPoolBytesIsSet,
		PeakAllocatedBytes: a.PeakAllocatedBytes, HasPeakAllocatedBytes: a.PeakAllocatedBytesIsSet,
	}, nil
}

func (d *cDevice) ClearMemoryStats() error {
	a := &capi.PJRT_Device_ClearMemoryStats_Args{StructSize: capi.PJRT_Device_ClearMemoryStats_Args_STRUCT_SIZE, Device: d.h}
	return d.c.p.call(capi.SlotPJRT_Device_ClearMemoryStats, unsafe.Pointer(a), nil)
}

func (d *cDevice) CurrentAttributes() ([]backend.NamedValue, error) {
	a := &capi.PJRT_Device_GetAttributes_Args{StructSize: capi.PJRT_Device_GetAttributes_Args_STRUCT_SIZE, Device: d.h}
	if err := d.c.p.call(capi.SlotPJRT_Device_GetAttributes, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := readNamedValues(a.Attributes, int(a.NumAttributes))
	if a.AttributesDeleter != 0 && a.DeviceAttributes != 0 {
		callVoid(a.AttributesDeleter, a.DeviceAttributes)
	}
	return out, nil
}

func (d *cDevice) PoisonExecution(launchID int, code int, msg string) (bool, error) {
	var pin runtime.Pinner
	m, mp := bytesArg(msg, &pin)
	a := &capi.PJRT_Device_PoisonExecution_Args{
		StructSize:       capi.PJRT_Device_PoisonExecution_Args_STRUCT_SIZE,
		Device:           d.h,
		LaunchId:         int32(launchID),
		ErrorCode:        capi.PJRT_Error_Code(code),
		ErrorMessage:     mp,
		ErrorMessageSize: uint64(len(msg)),
	}
	err := d.c.p.call(capi.SlotPJRT_Device_PoisonExecution, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(m)
	if err != nil {
		return false, err
	}
	return a.Poisoned, nil
}

// cTrackingEvent is a PJRT_AsyncTrackingEvent.
type cTrackingEvent struct {
	p    *cPlugin
	h    uintptr
	once sync.Once
}

func (d *cDevice) CreateAsyncTrackingEvent(description string) (io.Closer, error) {
	var pin runtime.Pinner
	s, sp := bytesArg(description, &pin)
	a := &capi.PJRT_Device_CreateAsyncTrackingEvent_Args{
		StructSize:      capi.PJRT_Device_CreateAsyncTrackingEvent_Args_STRUCT_SIZE,
		Device:          d.h,
		Description:     sp,
		DescriptionSize: uint64(len(description)),
	}
	err := d.c.p.call(capi.SlotPJRT_Device_CreateAsyncTrackingEvent, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	return &cTrackingEvent{p: d.c.p, h: a.Event}, nil
}

func (e *cTrackingEvent) Close() error {
	var err error
	e.once.Do(func() {
		a := &capi.PJRT_AsyncTrackingEvent_Destroy_Args{StructSize: capi.PJRT_AsyncTrackingEvent_Destroy_Args_STRUCT_SIZE, Event: e.h}
		err = e.p.call(capi.SlotPJRT_AsyncTrackingEvent_Destroy, unsafe.Pointer(a), nil)
	})
	return err
}
