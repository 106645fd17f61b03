package pjrt

import (
	"io"
	"runtime"
	"sync"

	"github.com/halo-ml/halo/pjrt/backend"
)

// MemoryStats are a device's allocator statistics; a field whose Has flag
// is false was not reported by the plugin.
type MemoryStats = backend.MemoryStats

// MemoryDescription is a memory space a device offers (kind, kind id and
// whether it is the device's default).
type MemoryDescription = backend.MemoryDescription

// MemoryStats returns the device's allocator statistics.
func (d *Device) MemoryStats() (MemoryStats, error) {
	if err := d.enter(); err != nil {
		return MemoryStats{}, err
	}
	defer d.c.exit()
	x, ok := d.b.(backend.DeviceStats)
	if !ok {
		return MemoryStats{}, notSupported("PJRT_Device_MemoryStats", "memory statistics", d.c.plugin)
	}
	return x.MemoryStats()
}

// ClearMemoryStats resets the device's peak statistics.
func (d *Device) ClearMemoryStats() error {
	if err := d.enter(); err != nil {
		return err
	}
	defer d.c.exit()
	x, ok := d.b.(backend.DeviceStats)
	if !ok {
		return notSupported("PJRT_Device_ClearMemoryStats", "memory statistics", d.c.plugin)
	}
	return x.ClearMemoryStats()
}

// CurrentAttributes reads the device's attributes again
// (PJRT_Device_GetAttributes); Attributes returns those read at startup.
func (d *Device) CurrentAttributes() (map[string]any, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.c.exit()
	x, ok := d.b.(backend.DeviceLiveAttributes)
	if !ok {
		return nil, notSupported("PJRT_Device_GetAttributes", "current device attributes", d.c.plugin)
	}
	attrs, err := x.CurrentAttributes()
	if err != nil {
		return nil, err
	}
	return namedValueMap(attrs), nil
}

// PoisonExecution fails the earliest execution on the device with the
// given launch id that has not started yet, with err as its error. It
// reports whether an execution was poisoned.
func (d *Device) PoisonExecution(launchID int, err error) (bool, error) {
	if cerr := d.enter(); cerr != nil {
		return false, cerr
	}
	defer d.c.exit()
	x, ok := d.b.(backend.DevicePoisoner)
	if !ok {
		return false, notSupported("PJRT_Device_PoisonExecution", "poisoning executions", d.c.plugin)
	}
	code, msg := errorCode(err)
	if code == 0 {
		code, msg = int(Aborted), "execution poisoned"
	}
	return x.PoisonExecution(launchID, code, msg)
}

// AsyncTrackingEvent marks asynchronous work on a device for profilers;
// Close ends it.
type AsyncTrackingEvent struct {
	c    *Client
	b    io.Closer
	once sync.Once
	err  error
}

// CreateAsyncTrackingEvent starts a tracking event with a description.
func (d *Device) CreateAsyncTrackingEvent(description string) (*AsyncTrackingEvent, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.c.exit()
	x, ok := d.b.(backend.AsyncTrackingEventCreator)
	if !ok {
		return nil, notSupported("PJRT_Device_CreateAsyncTrackingEvent", "async tracking events", d.c.plugin)
	}
	b, err := x.CreateAsyncTrackingEvent(description)
	if err != nil {
		return nil, err
	}
	if err := d.c.track(b); err != nil {
		return nil, err
	}
	e := &AsyncTrackingEvent{c: d.c, b: b}
	runtime.AddCleanup(e, func(b io.Closer) { d.c.release(b) }, b)
	return e, nil
}

// Close ends the tracking event. It is idempotent, and a nil event closes
// without error.
func (e *AsyncTrackingEvent) Close() error {
	if e == nil {
		return nil
	}
	e.once.Do(func() { e.err = e.c.release(e.b) })
	return e.err
}

// MemoryDescriptions lists the device's memory spaces as its description
// reports them (MemoryDescriptions extension).
func (d *Device) MemoryDescriptions() ([]MemoryDescription, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.c.exit()
	x, ok := d.b.(backend.DeviceMemoryDescriber)
	if !ok {
		return nil, notSupported("PJRT_DeviceDescription_MemoryDescriptions", "memory descriptions", d.c.plugin)
	}
	return x.MemoryDescriptions()
}
