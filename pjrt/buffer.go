package pjrt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// Buffer is an array on a device. Close releases it; a Buffer that is
// garbage collected without Close is released by a cleanup.
type Buffer struct {
	c     *Client
	b     backend.Buffer
	shape xla.Shape

	g     guard      // Close releases b after the calls in progress
	mu    sync.Mutex // guards ready
	ready *Event
	// aliasOf is the fulfillment of an alias buffer (CreateAliasBuffer).
	aliasOf *AliasFulfillment
}

// newBuffer wraps and tracks a backend buffer.
func (c *Client) newBuffer(b backend.Buffer) (*Buffer, error) {
	if err := c.track(b); err != nil {
		return nil, err
	}
	w := &Buffer{c: c, b: b, shape: xla.Shape{DType: b.DType(), Dims: b.Dims()},
		g: guard{c: c, x: b}}
	runtime.AddCleanup(w, func(b backend.Buffer) { c.release(b) }, b)
	return w, nil
}

// BufferOption configures a host-to-device transfer.
type BufferOption func(*bufferConfig)

type bufferConfig struct {
	device    *Device
	memory    *Memory
	strides   []int64
	semantics backend.HostBufferSemantics
	wait      bool
}

// OnDevice places the buffer on d (default: the first addressable device).
func OnDevice(d *Device) BufferOption { return func(c *bufferConfig) { c.device = d } }

// InMemory places the buffer in memory m (e.g. pinned host memory).
func InMemory(m *Memory) BufferOption { return func(c *bufferConfig) { c.memory = m } }

// WithByteStrides says the host data is laid out with these strides in
// bytes per dimension instead of dense row-major.
func WithByteStrides(strides ...int64) BufferOption {
	return func(c *bufferConfig) { c.strides = append([]int64(nil), strides...) }
}

// CopyDuringCall makes the backend copy the host data before the call
// returns, so the caller may reuse it at once (one extra copy).
func CopyDuringCall() BufferOption {
	return func(c *bufferConfig) { c.semantics = backend.ImmutableOnlyDuringCall }
}

// ZeroCopy lets the buffer alias the host data for its whole life where
// the backend can (CPU backends). The data must stay unmodified until the
// buffer is closed; halo keeps it pinned until then.
func ZeroCopy() BufferOption {
	return func(c *bufferConfig) { c.semantics = backend.ImmutableZeroCopy }
}

// WaitForTransfer makes BufferFromHost return only after the backend has
// finished reading the host data.
func WaitForTransfer() BufferOption { return func(c *bufferConfig) { c.wait = true } }

// BufferFromHost transfers host data of the given shape to a device. data
// holds the elements in dense row-major order (one byte per element for
// sub-byte types), or as described by WithByteStrides. By default the
// transfer is asynchronous: data is pinned until the backend has read it,
// a moment the caller does not see, so data must not be modified
// afterwards; to reuse it, pass WaitForTransfer (the call returns once
// the backend has read it) or CopyDuringCall.
func (c *Client) BufferFromHost(data []byte, shape xla.Shape, opts ...BufferOption) (*Buffer, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	cfg := bufferConfig{semantics: backend.ImmutableUntilTransferCompletes}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, "PJRT_Client_BufferFromHostBuffer", "%v", err)
	}
	if cfg.strides == nil && int64(len(data)) != shape.HostBytes() {
		return nil, errorf(InvalidArgument, "PJRT_Client_BufferFromHostBuffer", "host data has %d bytes, shape %v needs %d", len(data), shape, shape.HostBytes())
	}
	if cfg.strides != nil {
		// The C API passes no length with the data: a plugin reads as
		// far as the strides say, so they are checked here.
		need, err := shape.StridedBytes(cfg.strides)
		if err != nil {
			return nil, errorf(InvalidArgument, "PJRT_Client_BufferFromHostBuffer", "%v", err)
		}
		if need > int64(len(data)) {
			return nil, errorf(InvalidArgument, "PJRT_Client_BufferFromHostBuffer", "byte strides %v reach byte %d of %d bytes of host data", cfg.strides, need, len(data))
		}
	}
	bd, bm, err := c.place("PJRT_Client_BufferFromHostBuffer", cfg, false)
	if err != nil {
		return nil, err
	}
	hb := backend.HostBuffer{Data: data, Shape: shape.Clone(), ByteStrides: cfg.strides, Semantics: cfg.semantics}
	b, done, err := c.b.BufferFromHost(hb, bd, bm)
	if err != nil {
		return nil, err
	}
	buf, err := c.newBuffer(b)
	if err != nil {
		return nil, err
	}
	if cfg.wait && done != nil {
		<-done.Done()
		if err := done.Err(); err != nil {
			buf.Close()
			return nil, err
		}
	}
	return buf, nil
}

// Shape is the buffer's element type and dimensions.
func (b *Buffer) Shape() xla.Shape {
	if b == nil {
		return xla.Shape{}
	}
	return b.shape.Clone()
}

// DType is the buffer's element type.
func (b *Buffer) DType() xla.DType {
	if b == nil {
		return xla.Invalid
	}
	return b.shape.DType
}

// Dims are the buffer's dimensions.
func (b *Buffer) Dims() []int64 {
	if b == nil {
		return nil
	}
	return append([]int64(nil), b.shape.Dims...)
}

// enter begins a call on the buffer: ErrClosed once it or its client is
// closed; exit must follow. A Close meanwhile releases the buffer when the
// last call in progress exits.
func (b *Buffer) enter() error {
	if b == nil {
		return errorf(InvalidArgument, "Buffer", "buffer is nil")
	}
	return b.g.enter()
}

// exit ends a call begun by enter.
func (b *Buffer) exit() { b.g.exit() }

// OnDeviceSize is the buffer's size in device memory.
func (b *Buffer) OnDeviceSize() (int64, error) {
	if err := b.enter(); err != nil {
		return 0, err
	}
	defer b.exit()
	return b.b.OnDeviceSize()
}

// Device is the device holding the buffer.
func (b *Buffer) Device() (*Device, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	d := b.c.lookupDevice(b.b.Device())
	if d == nil {
		return nil, errorf(Internal, "PJRT_Buffer_Device", "the plugin reported no device of the client's for the buffer")
	}
	return d, nil
}

// Memory is the memory holding the buffer.
func (b *Buffer) Memory() (*Memory, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	m := b.b.Memory()
	if m == nil {
		return nil, errorf(Unimplemented, "PJRT_Buffer_Memory", "backend does not report buffer memories")
	}
	return b.c.memByB[m], nil
}

// Ready returns an event that fires when the buffer's data has been
// computed; its error is the error of the computation that produced it.
func (b *Buffer) Ready() (*Event, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ready == nil {
		e, err := b.b.ReadyEvent()
		if err != nil {
			return nil, err
		}
		b.ready = newEvent(b.c, e)
	}
	return b.ready, nil
}

// Await waits until the buffer's data is ready. With a context that
// cannot be cancelled (context.Background) on a plugin, the plugin blocks
// the calling thread until then (PJRT_Event_Await), which returns sooner
// than waiting for the completion callback (up to 64 such waits at once,
// each holding an OS thread; more take the callback); otherwise it waits
// on Ready's event or for ctx to end.
func (b *Buffer) Await(ctx context.Context) error {
	if b == nil {
		return b.enter() // the nil buffer's error
	}
	if ctx == nil {
		ctx = context.Background() // as a wait that cannot be cut short
	}
	if w, ok := b.b.(backend.ReadyWaiter); ok && ctx.Done() == nil && !forceReadyCallback {
		done, err := b.blockInPlugin(func() (func() error, error) {
			b.mu.Lock()
			ready := b.ready
			b.mu.Unlock()
			if ready != nil {
				return nil, nil // wait on the event Ready made
			}
			return w.ReadyWait()
		})
		if done {
			return b.c.markClosed(err)
		}
	}
	e, err := b.Ready()
	if err != nil {
		return err
	}
	return e.Await(ctx) // outside enter/exit: Close need not wait for it
}

// blockInPlugin runs start within a counted call, then the wait it
// returns outside it (a Close, of the buffer or of the client, which may
// be what ends the wait, does not wait for it), holding one of the
// blocking-wait slots. done is false, and nothing ran, when no slot is
// free or start declines (a nil wait and no error).
func (b *Buffer) blockInPlugin(start func() (wait func() error, err error)) (done bool, err error) {
	if !blockingWaits.acquire() {
		return false, nil
	}
	defer blockingWaits.release()
	if err := b.enter(); err != nil {
		return true, err
	}
	wait, err := start()
	b.exit()
	switch {
	case err != nil:
		return true, err
	case wait == nil:
		return false, nil
	}
	return true, wait()
}

// forceReadyCallback makes Await wait on the completion callback even
// where it could block in the plugin (tests and benchmarks compare both).
var forceReadyCallback = false

// blockingWaits bounds the waits blocked in the plugin at once: each holds
// an OS thread until its event is ready (Go stops the process past 10,000
// threads), so the waits beyond it take the completion callback instead.
var blockingWaits = semaphore(make(chan struct{}, 64))

// semaphore is a counting semaphore that never blocks: acquire fails when
// it is full.
type semaphore chan struct{}

func (s semaphore) acquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s semaphore) release() { <-s }

// HostSize is the number of bytes ToHost writes (dense row-major).
func (b *Buffer) HostSize() (int64, error) {
	if err := b.enter(); err != nil {
		return 0, err
	}
	defer b.exit()
	return b.b.HostSize()
}

// ToHostAsync starts copying the buffer into dst (HostSize bytes) and
// returns an event that fires when dst is written. dst must not be touched
// until then.
func (b *Buffer) ToHostAsync(dst []byte) (*Event, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	dst, err := b.hostDst(dst)
	if err != nil {
		return nil, err
	}
	e, err := b.b.ToHost(dst)
	if err != nil {
		return nil, err
	}
	return newEvent(b.c, e), nil
}

// hostDst checks b and returns the part of dst a copy of b fills.
func (b *Buffer) hostDst(dst []byte) ([]byte, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	n, err := b.b.HostSize()
	if err != nil {
		return nil, err
	}
	if int64(len(dst)) < n {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_ToHostBuffer", "destination has %d bytes, buffer %v needs %d", len(dst), b.shape, n)
	}
	return dst[:n], nil
}

// ToHost copies the buffer into dst and waits for it. With a context that
// cannot be cancelled (context.Background) on a plugin, the plugin blocks
// the calling thread until dst is written, as Await does. A copy cannot be
// stopped: when ctx ends first, ToHost returns ctx's error and the plugin
// may still write dst later (halo keeps it pinned until then), so dst
// must not be reused.
func (b *Buffer) ToHost(ctx context.Context, dst []byte) error {
	if b == nil {
		return b.enter() // the nil buffer's error
	}
	if ctx == nil {
		ctx = context.Background() // as a copy that cannot be cut short
	}
	if w, ok := b.b.(backend.HostCopyWaiter); ok && ctx.Done() == nil && !forceReadyCallback {
		done, err := b.blockInPlugin(func() (func() error, error) {
			dst, err := b.hostDst(dst)
			if err != nil {
				return nil, err
			}
			return w.ToHostStart(dst)
		})
		if done {
			return b.c.markClosed(err)
		}
	}
	e, err := b.ToHostAsync(dst)
	if err != nil {
		return err
	}
	return e.Await(ctx)
}

// Bytes returns a copy of the buffer's data. A copy that needs more
// memory than is available is a ResourceExhausted error, not a process
// killed for running out of memory; BytesPrefix reads only the start of a
// buffer.
func (b *Buffer) Bytes(ctx context.Context) ([]byte, error) {
	n, err := b.HostSize()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > math.MaxInt {
		return nil, errorf(Internal, "Bytes", "the plugin reports %d host bytes for %v", n, b.shape)
	}
	if err := b.checkHostCopy(ctx, "Bytes", b.shape, n); err != nil {
		return nil, err
	}
	dst := make([]byte, n)
	if err := b.ToHost(ctx, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// BytesPrefix returns the first n bytes of what Bytes returns (all of it
// when there are fewer), reading back only those where the backend allows:
// where it copies raw bytes (CopyRawToHost) and the buffer's on-device
// form is its host form (a dense row-major layout without tiles, as many
// bytes on the device as on the host). Elsewhere (the built-in
// interpreter, packed sub-byte types) it copies the whole buffer, as Bytes
// does. It reads the first elements of a buffer too large to copy whole.
func (b *Buffer) BytesPrefix(ctx context.Context, n int64) ([]byte, error) {
	if n < 0 {
		return nil, errorf(InvalidArgument, "BytesPrefix", "negative length %d", n)
	}
	size, err := b.HostSize()
	switch {
	case err != nil:
		return nil, err
	case n >= size:
		return b.Bytes(ctx)
	case n == 0:
		if err := b.Await(ctx); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	if b.rawIsHost(size) {
		// The prefix, as many bytes as Bytes would allocate for a buffer
		// of n bytes, is checked as that copy is.
		if err := b.checkHostCopy(ctx, "BytesPrefix", xla.MakeShape(xla.Uint8, n), n); err != nil {
			return nil, err
		}
		dst := make([]byte, n)
		ev, err := b.CopyRawToHost(dst, 0)
		if err == nil {
			err = ev.Await(ctx)
		}
		if !errors.Is(err, Unimplemented) { // a plugin may refuse raw copies when asked
			if err != nil {
				return nil, err
			}
			return dst, nil
		}
	}
	all, err := b.Bytes(ctx)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), all[:n]...), nil
}

// rawIsHost reports whether the buffer's on-device bytes are its host
// data (host bytes, HostSize): a dense row-major layout without tiles or
// strides, and as many bytes on the device as on the host (no padding, no
// packed sub-byte elements).
func (b *Buffer) rawIsHost(host int64) bool {
	l, err := b.Layout()
	rank := b.shape.Rank()
	if err != nil || len(l.Tiles) > 0 || len(l.ByteStrides) > 0 || len(l.MinorToMajor) != rank {
		return false
	}
	for i, d := range l.MinorToMajor {
		if d != int64(rank-1-i) {
			return false
		}
	}
	dev, err := b.OnDeviceSize()
	if err != nil {
		return false
	}
	return dev == host
}

// checkHostCopy waits for a buffer whose copy needs n bytes of host memory
// (awaitBeforeAlloc), then checks that they can be allocated, as the
// interpreter checks its tensors (interpreter.CheckAlloc): a copy that
// needs more memory than is available is a ResourceExhausted error naming
// shape (the buffer's, or the part of it copied), not a process the system
// kills for running out of memory. The caller then makes the slice.
func (b *Buffer) checkHostCopy(ctx context.Context, op string, shape xla.Shape, n int64) error {
	if err := b.awaitBeforeAlloc(ctx, n); err != nil {
		return err
	}
	err := checkHostAlloc(shape, n)
	if err == nil {
		return nil
	}
	if errors.As(err, new(*interpreter.AllocError)) {
		return &Error{Code: ResourceExhausted, Op: op, Msg: "copying to the host: " + err.Error(), cause: err}
	}
	return errorf(Internal, op, "copying to the host: %v", err)
}

// checkHostAlloc is interpreter.CheckAlloc: nil, or the
// *interpreter.AllocError that says n bytes for shape do not fit in the
// memory available (tests replace it to set a smaller limit).
var checkHostAlloc = interpreter.CheckAlloc

// awaitBeforeAlloc waits for a buffer whose copy needs n bytes of host
// memory (from 1 MiB) before they are allocated: a computation that failed
// (one whose result would not fit in memory, say) returns its error
// instead of the process running out of memory making room for it.
func (b *Buffer) awaitBeforeAlloc(ctx context.Context, n int64) error {
	if n < 1<<20 {
		return nil
	}
	return b.Await(ctx)
}

// CopyToDevice copies the buffer to another device of the same client.
func (b *Buffer) CopyToDevice(d *Device) (*Buffer, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	if d == nil || d.c != b.c {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_CopyToDevice", "destination device is nil or of another client")
	}
	nb, err := b.b.CopyToDevice(d.b)
	if err != nil {
		return nil, err
	}
	return b.c.newBuffer(nb)
}

// CopyToMemory copies the buffer to another memory of the same client.
func (b *Buffer) CopyToMemory(m *Memory) (*Buffer, error) {
	if err := b.enter(); err != nil {
		return nil, err
	}
	defer b.exit()
	if m == nil || m.c != b.c {
		return nil, errorf(InvalidArgument, "PJRT_Buffer_CopyToMemory", "destination memory is nil or of another client")
	}
	nb, err := b.b.CopyToMemory(m.b)
	if err != nil {
		return nil, err
	}
	return b.c.newBuffer(nb)
}

// Delete frees the buffer's device memory now; the Buffer stays valid
// (IsDeleted reports true) until Close.
func (b *Buffer) Delete() error {
	if err := b.enter(); err != nil {
		return err
	}
	defer b.exit()
	return b.b.Delete()
}

// IsDeleted reports whether the buffer's memory was freed (by Delete or by
// donation to an execution).
func (b *Buffer) IsDeleted() bool {
	if b.enter() != nil {
		return true
	}
	defer b.exit()
	return b.b.IsDeleted()
}

// Close releases the buffer, after the calls on it in progress (an Await
// blocked in the plugin, say) have returned. It is idempotent.
func (b *Buffer) Close() error {
	if b == nil {
		return nil
	}
	return b.g.close()
}

// String describes the buffer.
func (b *Buffer) String() string {
	if b == nil {
		return "Buffer(nil)"
	}
	return fmt.Sprintf("Buffer(%v)", b.shape)
}

// Element is a Go type whose slices transfer to and from buffers
// (xla.Element).
type Element = xla.Element

// DTypeOf returns the element type for Go type T (xla.DTypeOf): bool,
// the sized integers, int and uint as wide as the platform's, float32,
// float64, complex64, complex128, xla.BF16 and xla.F16, and named types
// built on them.
func DTypeOf[T Element]() xla.DType { return xla.DTypeOf[T]() }

// asBytes views a slice of elements as bytes.
func asBytes[T Element](data []T) []byte {
	if len(data) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(z)))
}

// BufferFrom transfers a Go slice to a device with the given dimensions
// (none for a scalar). As with BufferFromHost, the slice must not be
// modified afterwards unless WaitForTransfer or CopyDuringCall is passed.
func BufferFrom[T Element](c *Client, data []T, dims []int64, opts ...BufferOption) (*Buffer, error) {
	dt := DTypeOf[T]()
	if dt == xla.Invalid {
		var z T
		return nil, errorf(InvalidArgument, "BufferFrom", "Go type %T has no element type; use BufferFromHost with an explicit shape", z)
	}
	return c.BufferFromHost(asBytes(data), xla.MakeShape(dt, dims...), opts...)
}

// ScalarBuffer transfers one value as a rank-0 buffer.
func ScalarBuffer[T Element](c *Client, v T, opts ...BufferOption) (*Buffer, error) {
	return BufferFrom(c, []T{v}, nil, append([]BufferOption{CopyDuringCall()}, opts...)...)
}

// ToSlice copies a buffer to a new Go slice, waiting for the transfer.
// T must match the buffer's element type. A copy that needs more memory
// than is available is a ResourceExhausted error, as with Bytes.
func ToSlice[T Element](ctx context.Context, b *Buffer) ([]T, error) {
	if b == nil {
		return nil, errorf(InvalidArgument, "ToSlice", "buffer is nil")
	}
	dt := DTypeOf[T]()
	if dt != b.DType() {
		var z T
		return nil, errorf(InvalidArgument, "ToSlice", "buffer holds %v, not %T (%v)", b.DType(), z, dt)
	}
	if err := b.shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, "ToSlice", "%v", err)
	}
	var z T
	n := b.shape.Size()
	if n > math.MaxInt/int64(unsafe.Sizeof(z)) {
		return nil, errorf(ResourceExhausted, "ToSlice", "%v has more elements than a Go slice of %T holds", b.shape, z)
	}
	if err := b.checkHostCopy(ctx, "ToSlice", b.shape, n*int64(unsafe.Sizeof(z))); err != nil {
		return nil, err
	}
	out := make([]T, n)
	if err := b.ToHost(ctx, asBytes(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// ToScalar copies a rank-0 buffer to a Go value.
func ToScalar[T Element](ctx context.Context, b *Buffer) (T, error) {
	var z T
	if b == nil {
		return z, errorf(InvalidArgument, "ToScalar", "buffer is nil")
	}
	if b.shape.Rank() != 0 {
		return z, errorf(InvalidArgument, "ToScalar", "buffer has shape %v, not a scalar", b.shape)
	}
	s, err := ToSlice[T](ctx, b)
	if err != nil {
		return z, err
	}
	return s[0], nil
}
