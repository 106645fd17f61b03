package interpreter

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// buffer is an array in host memory: a Tensor (or Token) that becomes
// available when its ready event fires.
//
// Like a PJRT runtime, the backend holds its own reference to a buffer for
// every pending use (an execution that takes it as an argument, a copy, a
// transfer to the host, an alias fulfilled from it) until the use has read
// the value: Delete (or Close) right after dispatching such a use is
// allowed; the buffer reports deleted at once and uses started later fail,
// but the pending ones still read the value, which is dropped with the
// last of them.
type buffer struct {
	c     *client
	dev   *device
	mem   *memory
	shape xla.Shape
	ready *event

	mu      sync.Mutex
	val     Value // *Tensor or Token; written before ready fires
	deleted bool
	holds   int // pending uses that will read val (see hold)
}

// littleEndian says whether the typed storage of exact-width types is the
// host encoding byte for byte.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func (b *buffer) DType() xla.DType { return b.shape.DType }
func (b *buffer) Dims() []int64    { return append([]int64(nil), b.shape.Dims...) }

func (b *buffer) OnDeviceSize() (int64, error) {
	if b.shape.DType == xla.Invalid {
		return 0, nil
	}
	return b.shape.Size() * int64(rtElemSize(StorageOf(b.shape.DType))), nil
}

func (b *buffer) Device() backend.Device { return b.dev }
func (b *buffer) Memory() backend.Memory { return b.mem }

func (b *buffer) HostSize() (int64, error) {
	if b.shape.DType == xla.Invalid {
		return 0, nil
	}
	if err := b.shape.Validate(); err != nil {
		return 0, backend.Errorf(codeInvalidArgument, "PJRT_Buffer_ToHostBuffer", "%v", err)
	}
	return b.shape.HostBytes(), nil
}

// value waits for the buffer and returns its value.
func (b *buffer) value() (Value, error) {
	<-b.ready.done
	if b.ready.err != nil {
		return nil, b.ready.err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.deleted {
		return nil, backend.Errorf(codeFailedPrecondition, "PJRT_Buffer", "buffer was deleted")
	}
	return b.val, nil
}

// hold registers a pending use of b's value, which then survives Delete
// until the use has read it with takeHeld (or given it up with unhold).
// It reports false when b was deleted already.
func (b *buffer) hold() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.deleted {
		return false
	}
	b.holds++
	return true
}

// takeHeld waits for b and returns its value for a use registered by
// hold, ending the use. A wait that would outlive the client (a buffer
// that is never ready: an alias fulfilled with a result computed from
// itself, say) ends when the client is closed, with ErrClientClosed.
func (b *buffer) takeHeld() (Value, error) {
	if b.c != nil {
		select {
		case <-b.ready.done:
		case <-b.c.ctx.Done():
			if !b.ready.fired() {
				b.unhold()
				cause := context.Cause(b.c.ctx)
				return nil, backend.Wrapf(codeCancelled, "PJRT_Buffer", cause, "%v", cause)
			}
		}
	}
	<-b.ready.done
	b.mu.Lock()
	v := b.val
	b.dropHoldLocked()
	b.mu.Unlock()
	if b.ready.err != nil {
		return nil, b.ready.err
	}
	return v, nil
}

// unhold ends a use registered by hold without reading the value.
func (b *buffer) unhold() {
	b.mu.Lock()
	b.dropHoldLocked()
	b.mu.Unlock()
}

func (b *buffer) dropHoldLocked() {
	b.holds--
	if b.holds == 0 && b.deleted {
		b.val = nil
	}
}

func (b *buffer) ToHost(dst []byte) (backend.Event, error) {
	const op = "PJRT_Buffer_ToHostBuffer"
	if b.IsDeleted() {
		return nil, backend.Errorf(codeFailedPrecondition, op, "buffer was deleted")
	}
	if b.ready.fired() {
		v, err := b.value()
		if err == nil {
			err = toHost(v, dst)
		}
		return firedEvent(err), nil
	}
	if !b.hold() {
		return nil, backend.Errorf(codeFailedPrecondition, op, "buffer was deleted")
	}
	ev := newEvent()
	go func() {
		v, err := b.takeHeld()
		if err == nil {
			err = toHost(v, dst)
		}
		ev.set(err)
	}()
	return ev, nil
}

// toHost writes v's host encoding into dst (nothing for a token).
func toHost(v Value, dst []byte) error {
	t, ok := v.(*Tensor)
	if !ok {
		return nil // a token has no data
	}
	if int64(len(dst)) < t.Shape.HostBytes() {
		return backend.Errorf(codeInvalidArgument, "PJRT_Buffer_ToHostBuffer", "destination has %d bytes, %v needs %d", len(dst), t.Shape, t.Shape.HostBytes())
	}
	encodeHost(t, dst)
	return nil
}

// encodeHost writes t's host encoding into dst.
func encodeHost(t *Tensor, dst []byte) {
	if littleEndian && !IsNarrowFloat(t.Shape.DType) {
		copy(dst, rtBytes(t))
		return
	}
	copy(dst, t.Host())
}

// decodeHost reads dense host data of shape into a tensor.
func decodeHost(shape xla.Shape, data []byte) (*Tensor, error) {
	dt := shape.DType
	if littleEndian && !IsNarrowFloat(dt) && dt != xla.Bool && dt.Bits()%8 == 0 {
		t := NewTensor(shape)
		copy(rtBytes(t), data)
		return t, nil
	}
	return TensorFromHost(shape, data)
}

func (b *buffer) CopyToDevice(dev backend.Device) (backend.Buffer, error) {
	d, ok := dev.(*device)
	if !ok || d.c != b.c {
		return nil, backend.Errorf(codeInvalidArgument, "PJRT_Buffer_CopyToDevice", "device %v belongs to another client", dev)
	}
	return b.copyTo(d, d.mem, "PJRT_Buffer_CopyToDevice")
}

func (b *buffer) CopyToMemory(mem backend.Memory) (backend.Buffer, error) {
	m, ok := mem.(*memory)
	if !ok || len(m.devs) == 0 || m.devs[0].(*device).c != b.c {
		return nil, backend.Errorf(codeInvalidArgument, "PJRT_Buffer_CopyToMemory", "memory %v belongs to another client", mem)
	}
	dev := b.dev
	if m != b.c.host {
		dev = m.devs[0].(*device)
	}
	return b.copyTo(dev, m, "PJRT_Buffer_CopyToMemory")
}

// copyTo returns a new buffer on dev/mem holding a copy of b's data (ready
// when b is).
func (b *buffer) copyTo(dev *device, mem *memory, op string) (backend.Buffer, error) {
	if b.IsDeleted() {
		return nil, backend.Errorf(codeFailedPrecondition, op, "buffer was deleted")
	}
	nb := &buffer{c: b.c, dev: dev, mem: mem, shape: b.shape.Clone()}
	if err := canAllocate(b.shape); err != nil {
		return nil, backend.Errorf(codeResourceExhausted, op, "%v", err)
	}
	if b.ready.fired() {
		v, err := b.value()
		nb.val = cloneValue(v)
		nb.ready = firedEvent(err)
		return nb, nil
	}
	if !b.hold() {
		return nil, backend.Errorf(codeFailedPrecondition, op, "buffer was deleted")
	}
	nb.ready = newEvent()
	go func() {
		v, err := b.takeHeld()
		nb.mu.Lock()
		nb.val = cloneValue(v)
		nb.mu.Unlock()
		nb.ready.set(err)
	}()
	return nb, nil
}

func cloneValue(v Value) Value {
	if t, ok := v.(*Tensor); ok && t != nil {
		return t.Clone()
	}
	return v
}

// ReadyEvent is the event of the computation that produces the buffer;
// a deleted or donated buffer has none to wait for (as XLA's buffers).
func (b *buffer) ReadyEvent() (backend.Event, error) {
	if b.IsDeleted() {
		return nil, backend.Errorf(codeFailedPrecondition, "PJRT_Buffer_ReadyEvent", "buffer was deleted or donated")
	}
	return b.ready, nil
}

// Delete releases the buffer's value, or, while uses registered by hold
// are pending, marks it deleted and leaves the value to the last of them.
func (b *buffer) Delete() error {
	b.mu.Lock()
	b.deleted = true
	if b.holds == 0 {
		b.val = nil
	}
	b.mu.Unlock()
	return nil
}

func (b *buffer) IsDeleted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.deleted
}

func (b *buffer) Close() error { return b.Delete() }

// IsOnCPU: the interpreter's buffers are in host memory.
func (b *buffer) IsOnCPU() (bool, error) { return true, nil }

// BufferFromHost copies host data into a new buffer (every semantics copies
// before returning, so done has fired already).
func (c *client) BufferFromHost(h backend.HostBuffer, dev backend.Device, mem backend.Memory) (backend.Buffer, backend.Event, error) {
	const op = "PJRT_Client_BufferFromHostBuffer"
	if c.closed.Load() {
		return nil, nil, backend.Errorf(codeFailedPrecondition, op, "client is closed")
	}
	d, m, err := c.place(dev, mem, op)
	if err != nil {
		return nil, nil, err
	}
	shape := h.Shape
	if err := shape.Validate(); err != nil {
		return nil, nil, backend.Errorf(codeInvalidArgument, op, "%v", err)
	}
	if StorageOf(shape.DType) == StorageInvalid {
		return nil, nil, backend.Errorf(codeUnimplemented, op, "element type %v is not supported by the interpreter", shape.DType)
	}
	if err := canAllocate(shape); err != nil {
		// Before gathering strided data: zero strides let a few host
		// bytes stand for a huge array.
		return nil, nil, backend.Errorf(codeResourceExhausted, op, "%v", err)
	}
	data := h.Data
	if h.ByteStrides != nil {
		dense, err := gatherStrided(shape, data, h.ByteStrides)
		if err != nil {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "%v", err)
		}
		data = dense
	}
	if int64(len(data)) != shape.HostBytes() {
		return nil, nil, backend.Errorf(codeInvalidArgument, op, "host data has %d bytes, %v needs %d", len(data), shape, shape.HostBytes())
	}
	t, err := decodeHost(shape, data)
	if err != nil {
		return nil, nil, backend.Errorf(codeInvalidArgument, op, "%v", err)
	}
	return &buffer{c: c, dev: d, mem: m, shape: shape.Clone(), val: t, ready: okEvent}, okEvent, nil
}

// gatherStrided copies host data laid out with byte strides into dense
// row-major order.
func gatherStrided(shape xla.Shape, data []byte, strides []int64) ([]byte, error) {
	need, err := shape.StridedBytes(strides)
	if err != nil {
		return nil, err
	}
	if need > int64(len(data)) {
		return nil, fmt.Errorf("byte strides %v reach byte %d of %d bytes of host data", strides, need, len(data))
	}
	eb := int64(shape.DType.HostBytes())
	n := shape.Size()
	out := make([]byte, n*eb)
	idx := make([]int64, shape.Rank())
	for o := int64(0); o < n; o++ {
		off := int64(0)
		for k, x := range idx {
			off += x * strides[k]
		}
		copy(out[o*eb:(o+1)*eb], data[off:off+eb])
		NextIndex(idx, shape.Dims)
	}
	return out, nil
}

// CreateUninitializedBuffer makes a zero buffer (backend.BufferCreator).
func (c *client) CreateUninitializedBuffer(shape xla.Shape, dev backend.Device, mem backend.Memory) (backend.Buffer, error) {
	const op = "PJRT_Client_CreateUninitializedBuffer"
	if err := shape.Validate(); err != nil {
		return nil, backend.Errorf(codeInvalidArgument, op, "%v", err)
	}
	if StorageOf(shape.DType) == StorageInvalid {
		return nil, backend.Errorf(codeUnimplemented, op, "element type %v is not supported by the interpreter", shape.DType)
	}
	if b := shape.Size() * int64(max(shape.DType.HostBytes(), 1)); b > ewMaxBytes {
		return nil, backend.Errorf(codeResourceExhausted, op, "%v needs %d bytes, more than the interpreter allocates for one buffer (%d)", shape, b, int64(ewMaxBytes))
	}
	d, m, err := c.place(dev, mem, op)
	if err != nil {
		return nil, err
	}
	if err := canAllocate(shape); err != nil {
		return nil, backend.Errorf(codeResourceExhausted, op, "%v", err)
	}
	return &buffer{c: c, dev: d, mem: m, shape: shape.Clone(), val: NewTensor(shape), ready: okEvent}, nil
}

// CreateErrorBuffer makes a buffer whose readiness carries an error.
func (c *client) CreateErrorBuffer(shape xla.Shape, mem backend.Memory, code int, msg string) (backend.Buffer, error) {
	d, m, err := c.place(nil, mem, "PJRT_Client_CreateErrorBuffer")
	if err != nil {
		return nil, err
	}
	return &buffer{c: c, dev: d, mem: m, shape: shape.Clone(), ready: firedEvent(backend.Errorf(code, "PJRT_Client_CreateErrorBuffer", "%s", msg))}, nil
}

// CreateViewOfDeviceBuffer is not possible: the interpreter's buffers are
// Go memory.
func (c *client) CreateViewOfDeviceBuffer(ptr uintptr, shape xla.Shape, dev backend.Device, mem backend.Memory, onDelete func()) (backend.Buffer, error) {
	return nil, backend.Errorf(codeUnimplemented, "PJRT_Client_CreateViewOfDeviceBuffer", "the interpreter cannot view foreign memory; use BufferFromHost")
}

func (c *client) place(dev backend.Device, mem backend.Memory, op string) (*device, *memory, error) {
	if dev != nil {
		d, ok := dev.(*device)
		if !ok || d.c != c {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "device %v belongs to another client", dev)
		}
		if mem == nil {
			return d, d.mem, nil
		}
	}
	if mem != nil {
		m, ok := mem.(*memory)
		if !ok || len(m.devs) == 0 || m.devs[0].(*device).c != c {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "memory %v belongs to another client", mem)
		}
		d, _ := dev.(*device)
		if d == nil {
			return m.devs[0].(*device), m, nil
		}
		if !slices.Contains(m.devs, backend.Device(d)) {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "memory %v is not attached to device %d", mem, d.id)
		}
		return d, m, nil
	}
	return c.devs[0], c.devs[0].mem, nil
}

// UnpaddedDims are the dimensions (no padding in host memory).
func (b *buffer) UnpaddedDims() ([]int64, error) { return b.Dims(), nil }

// DynamicDims: every dimension is static.
func (b *buffer) DynamicDims() ([]int, error) { return nil, nil }

// Layout is dense row-major.
func (b *buffer) Layout() (backend.Layout, error) {
	m2m := make([]int64, len(b.shape.Dims))
	for i := range m2m {
		m2m[i] = int64(len(m2m) - 1 - i)
	}
	return backend.Layout{MinorToMajor: m2m}, nil
}

// SerializedLayout needs the Layouts extension, which the interpreter does
// not have.
func (b *buffer) SerializedLayout() ([]byte, error) {
	return nil, backend.Errorf(codeUnimplemented, "PJRT_Layouts_PJRT_Buffer_MemoryLayout", "the interpreter has no serialized layouts (buffers are dense row-major)")
}
