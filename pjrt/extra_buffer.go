package pjrt

import (
	"sync"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// Layout is a buffer's memory layout: tiled (MinorToMajor, Tiles) or
// strided (ByteStrides). The dense row-major layout of a rank-n array has
// MinorToMajor n-1, ..., 0 and no tiles.
type Layout = backend.Layout

// bufferCall runs f on b's backend buffer as the optional interface X,
// within enter and exit (what a backend lacks is Unimplemented, naming op
// and what).
func bufferCall[X, R any](b *Buffer, op, what string, f func(X) (R, error)) (R, error) {
	var zero R
	if err := b.enter(); err != nil {
		return zero, err
	}
	defer b.exit()
	x, ok := b.b.(X)
	if !ok {
		return zero, notSupported(op, what, b.c.plugin)
	}
	return f(x)
}

// noResult adapts a method that returns only an error to bufferCall.
func noResult[X any](f func(X) error) func(X) (struct{}, error) {
	return func(x X) (struct{}, error) { return struct{}{}, f(x) }
}

// UnpaddedDims are the buffer's dimensions without the padding of dynamic
// dimensions.
func (b *Buffer) UnpaddedDims() ([]int64, error) {
	return bufferCall(b, "PJRT_Buffer_UnpaddedDimensions", "buffer layout queries", backend.BufferInfo.UnpaddedDims)
}

// DynamicDims are the indices of the buffer's dynamic dimensions.
func (b *Buffer) DynamicDims() ([]int, error) {
	return bufferCall(b, "PJRT_Buffer_DynamicDimensionIndices", "buffer layout queries", backend.BufferInfo.DynamicDims)
}

// Layout is the buffer's memory layout on the device.
func (b *Buffer) Layout() (Layout, error) {
	return bufferCall(b, "PJRT_Buffer_GetMemoryLayout", "buffer layout queries", backend.BufferInfo.Layout)
}

// SerializedLayout is the buffer's layout as the plugin serializes it
// (Layouts extension), e.g. "{1,0}".
func (b *Buffer) SerializedLayout() ([]byte, error) {
	return bufferCall(b, "PJRT_Layouts_PJRT_Buffer_MemoryLayout", "buffer layout queries", backend.BufferInfo.SerializedLayout)
}

// IsOnCPU reports whether the buffer's memory is host memory.
func (b *Buffer) IsOnCPU() (bool, error) {
	return bufferCall(b, "PJRT_Buffer_IsOnCpu", "buffer layout queries", backend.BufferInfo.IsOnCPU)
}

// UnsafePointer is the address of the buffer's memory, for interop with
// other libraries. It is valid while the buffer exists and is not deleted;
// hold an external reference (IncreaseExternalReferenceCount) while using
// it.
func (b *Buffer) UnsafePointer() (uintptr, error) {
	return bufferCall(b, "PJRT_Buffer_UnsafePointer", "buffer pointers", backend.BufferPointers.UnsafePointer)
}

// DeviceMemoryPointer is the opaque device memory pointer of the buffer
// (PJRT_Buffer_OpaqueDeviceMemoryDataPointer), e.g. a CUDA device pointer.
func (b *Buffer) DeviceMemoryPointer() (uintptr, error) {
	return bufferCall(b, "PJRT_Buffer_OpaqueDeviceMemoryDataPointer", "buffer pointers", backend.BufferPointers.DeviceMemoryPointer)
}

// IncreaseExternalReferenceCount tells the plugin that something outside
// it uses the buffer's memory (keeping it from being donated or moved).
func (b *Buffer) IncreaseExternalReferenceCount() error {
	_, err := bufferCall(b, "PJRT_Buffer_IncreaseExternalReferenceCount", "external buffer references",
		noResult(backend.BufferExternalRefs.IncreaseExternalReferenceCount))
	return err
}

// DecreaseExternalReferenceCount releases one external reference.
func (b *Buffer) DecreaseExternalReferenceCount() error {
	_, err := bufferCall(b, "PJRT_Buffer_DecreaseExternalReferenceCount", "external buffer references",
		noResult(backend.BufferExternalRefs.DecreaseExternalReferenceCount))
	return err
}

// CopyRawToHost starts copying len(dst) bytes of the buffer's on-device
// representation, from byte offset, into dst. dst must not be touched
// until the returned event fires (halo keeps it pinned until then).
func (b *Buffer) CopyRawToHost(dst []byte, offset int64) (*Event, error) {
	if offset < 0 {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_CopyRawToHost", "negative offset %d", offset)
	}
	return bufferCall(b, "PJRT_Buffer_CopyRawToHost", "raw copies to the host", func(x backend.BufferRawCopier) (*Event, error) {
		e, err := x.CopyRawToHost(dst, offset)
		if err != nil {
			return nil, err
		}
		return newEvent(b.c, e), nil
	})
}

// RawCopy is a raw copy to the host whose destination is given later
// (PJRT_Buffer_CopyRawToHostFuture): the plugin can start reading the
// device while the caller prepares the destination.
type RawCopy struct {
	c       *Client
	pending *pending // what Client.Close cancels
	done    *Event
	size    int64
	mu      sync.Mutex
	used    bool
	provide func(dst []byte, code int, msg string) error
}

// CopyRawToHostLater starts a raw copy of size bytes from offset whose
// destination is given by RawCopy.Provide (or abandoned by RawCopy.Cancel).
// One of them must be called.
func (b *Buffer) CopyRawToHostLater(offset, size int64) (*RawCopy, error) {
	if offset < 0 || size < 0 {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_CopyRawToHostFuture", "negative offset %d or size %d", offset, size)
	}
	return bufferCall(b, "PJRT_Buffer_CopyRawToHostFuture", "raw copies to the host", func(x backend.BufferRawCopier) (*RawCopy, error) {
		done, provide, err := x.CopyRawToHostFuture(offset, size)
		if err != nil {
			return nil, err
		}
		r := &RawCopy{c: b.c, done: newEvent(b.c, done), size: size, provide: provide}
		r.pending = &pending{cancel: func() error {
			return r.settle(nil, int(Cancelled), "the client was closed before the raw copy's destination was given", true)
		}}
		if err := b.c.track(r.pending); err != nil { // closed: cancelled
			return nil, err
		}
		return r, nil
	})
}

// Done fires when the copy has been written (or has failed). A nil copy's
// is a nil *Event: its Done channel is closed, and Err and Await report
// the nil event (Provide and Cancel report the nil copy).
func (r *RawCopy) Done() *Event {
	if r == nil {
		return nil
	}
	return r.done
}

// check returns the error of a call on a nil copy.
func (r *RawCopy) check() error {
	if r == nil {
		return errorf(InvalidArgument, "RawCopy", "raw copy is nil")
	}
	return nil
}

func (r *RawCopy) finish(dst []byte, code int, msg string) error {
	if err := r.c.enter(); err != nil {
		return err // Client.Close cancels the copy
	}
	defer r.c.exit()
	r.c.untrack(r.pending)
	return r.settle(dst, code, msg, false)
}

// settle gives the plugin the destination, or the error code, once; a
// second time is an error, or nothing when quiet.
func (r *RawCopy) settle(dst []byte, code int, msg string, quiet bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.used {
		if quiet {
			return nil
		}
		return errorf(FailedPrecondition, "PJRT_Buffer_CopyRawToHostFuture", "the raw copy's destination was already provided or cancelled")
	}
	r.used = true
	return r.provide(dst, code, msg)
}

// Provide gives the destination (at least the copy's size); it must not be
// touched until Done fires.
func (r *RawCopy) Provide(dst []byte) error {
	if err := r.check(); err != nil {
		return err
	}
	if int64(len(dst)) < r.size {
		return errorf(InvalidArgument, "PJRT_Buffer_CopyRawToHostFuture", "destination has %d bytes, the copy needs %d", len(dst), r.size)
	}
	return r.finish(dst[:r.size], 0, "")
}

// Cancel abandons the copy; Done fires with err (Cancelled when nil).
func (r *RawCopy) Cancel(err error) error {
	if cerr := r.check(); cerr != nil {
		return cerr
	}
	code, msg := errorCode(err)
	if code == 0 {
		code, msg = int(Cancelled), "raw copy cancelled"
	}
	return r.finish(nil, code, msg)
}

// Bitcast returns a buffer that views the same memory as another shape of
// the same byte size (PJRT_Buffer_Bitcast).
func (b *Buffer) Bitcast(shape xla.Shape) (*Buffer, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_Bitcast", "%v", err)
	}
	x, ok := b.b.(backend.BufferBitcaster)
	if !ok {
		return nil, notSupported("PJRT_Buffer_Bitcast", "bitcasts", b.c.plugin)
	}
	nb, err := x.Bitcast(shape.Clone())
	if err != nil {
		return nil, err
	}
	return b.c.newBuffer(nb)
}

// ControlDependency completes the dependency of a buffer made by
// DonateWithControlDependency.
type ControlDependency struct {
	c       *Client
	pending *pending // what Client.Close cancels
	mu      sync.Mutex
	done    bool
	set     func(code int, msg string) error
}

// Ready says the dependency has finished; err (may be nil) becomes the
// new buffer's error. It may be called once.
func (d *ControlDependency) Ready(err error) error {
	if d == nil {
		return errorf(InvalidArgument, "ControlDependency", "control dependency is nil")
	}
	if err := d.c.enter(); err != nil {
		return err // Client.Close cancelled the dependency
	}
	defer d.c.exit()
	d.c.untrack(d.pending)
	code, msg := errorCode(err)
	return d.settle(code, msg, false)
}

// settle completes the dependency once; a second time is an error, or
// nothing when quiet.
func (d *ControlDependency) settle(code int, msg string, quiet bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		if quiet {
			return nil
		}
		return errorf(FailedPrecondition, "PJRT_Buffer_DonateWithControlDependency", "the dependency was already marked ready")
	}
	d.done = true
	return d.set(code, msg)
}

// DonateWithControlDependency donates the buffer's memory to a new buffer
// that becomes ready only after ControlDependency.Ready is called (which
// must happen). The original buffer is deleted.
func (b *Buffer) DonateWithControlDependency() (*Buffer, *ControlDependency, error) {
	if err := b.enter(); err != nil {
		return nil, nil, err
	}
	defer b.exit()
	x, ok := b.b.(backend.BufferDonator)
	if !ok {
		return nil, nil, notSupported("PJRT_Buffer_DonateWithControlDependency", "donation with a control dependency", b.c.plugin)
	}
	nb, set, err := x.DonateWithControlDependency()
	if err != nil {
		return nil, nil, err
	}
	w, err := b.c.newBuffer(nb)
	if err != nil {
		set(int(Cancelled), "client closed")
		return nil, nil, err
	}
	d := &ControlDependency{c: b.c, set: set}
	d.pending = &pending{cancel: func() error {
		return d.settle(int(Cancelled), "the client was closed before the control dependency was ready", true)
	}}
	if err := b.c.track(d.pending); err != nil { // closed: cancelled
		return nil, nil, err
	}
	return w, d, nil
}
