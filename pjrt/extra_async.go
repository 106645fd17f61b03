package pjrt

import (
	"runtime"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// AsyncTransfer fills device buffers from the host in pieces
// (PJRT_AsyncHostToDeviceTransferManager): the buffers exist at once and
// can be passed to Execute while their data is still arriving. Close
// releases the transfer (buffers not yet taken with Buffer are released
// too, and buffers whose last piece was not sent fail with Cancelled).
type AsyncTransfer struct {
	c      *Client
	b      backend.AsyncTransfer
	shapes []xla.Shape

	g guard // Close releases b after the calls in progress
}

// NewAsyncTransfer creates the buffers of the given shapes in the memory
// InMemory names, else in the default memory of OnDevice's (or the first
// addressable) device.
func (c *Client) NewAsyncTransfer(shapes []xla.Shape, opts ...BufferOption) (*AsyncTransfer, error) {
	const op = "PJRT_Client_CreateBuffersForAsyncHostToDevice"
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	x, ok := c.b.(backend.AsyncTransferCreator)
	if !ok {
		return nil, notSupported(op, "async host-to-device transfers", c.plugin)
	}
	if len(shapes) == 0 {
		return nil, errorf(InvalidArgument, op, "no shapes")
	}
	cp := make([]xla.Shape, len(shapes))
	for i, s := range shapes {
		if err := s.Validate(); err != nil {
			return nil, errorf(InvalidArgument, op, "%v", err)
		}
		cp[i] = s.Clone()
	}
	_, bm, err := c.placement(op, opts, true)
	if err != nil {
		return nil, err
	}
	b, err := x.NewAsyncTransfer(cp, bm)
	if err != nil {
		return nil, err
	}
	if err := c.track(b); err != nil {
		return nil, err
	}
	t := &AsyncTransfer{c: c, b: b, shapes: cp, g: guard{c: c, x: b}}
	runtime.AddCleanup(t, func(b backend.AsyncTransfer) { c.release(b) }, b)
	return t, nil
}

// enter begins a call on the transfer's buffer i (ErrClosed once it or
// its client is closed); exit must follow.
func (t *AsyncTransfer) enter(op string, i int) error {
	if t == nil {
		return errorf(InvalidArgument, "AsyncTransfer", "async transfer is nil")
	}
	if i < 0 || i >= len(t.shapes) {
		return errorf(InvalidArgument, op, "buffer index %d out of range [0, %d)", i, len(t.shapes))
	}
	return t.g.enter()
}

// exit ends a call begun by enter.
func (t *AsyncTransfer) exit() { t.g.exit() }

// Device is the device the buffers are on.
func (t *AsyncTransfer) Device() (*Device, error) {
	if err := t.enter("PJRT_AsyncHostToDeviceTransferManager_Device", 0); err != nil {
		return nil, err
	}
	defer t.exit()
	d, err := t.b.Device()
	if err != nil {
		return nil, err
	}
	return t.c.lookupDevice(d), nil
}

// BufferCount is the number of buffers, as the plugin reports it.
func (t *AsyncTransfer) BufferCount() (int, error) {
	if err := t.enter("PJRT_AsyncHostToDeviceTransferManager_BufferCount", 0); err != nil {
		return 0, err
	}
	defer t.exit()
	return t.b.BufferCount()
}

// BufferSize is the on-device size of buffer i in bytes: what
// TransferData's pieces must add up to.
func (t *AsyncTransfer) BufferSize(i int) (int64, error) {
	if err := t.enter("PJRT_AsyncHostToDeviceTransferManager_BufferSize", i); err != nil {
		return 0, err
	}
	defer t.exit()
	return t.b.BufferSize(i)
}

// TransferData sends data to buffer i at byte offset; last marks the final
// piece, after which the buffer becomes ready. data must not be modified
// until the returned event fires (halo keeps it pinned until then).
func (t *AsyncTransfer) TransferData(i int, data []byte, offset int64, last bool) (*Event, error) {
	const op = "PJRT_AsyncHostToDeviceTransferManager_TransferData"
	if err := t.enter(op, i); err != nil {
		return nil, err
	}
	defer t.exit()
	if offset < 0 {
		return nil, errorf(InvalidArgument, op, "negative offset %d", offset)
	}
	e, err := t.b.TransferData(i, data, offset, last)
	if err != nil {
		return nil, err
	}
	return newEvent(t.c, e), nil
}

// TransferLiteral sends the whole of buffer i as dense row-major host data
// of its shape (Shape.HostBytes bytes), as its last piece.
func (t *AsyncTransfer) TransferLiteral(i int, data []byte) (*Event, error) {
	const op = "PJRT_AsyncHostToDeviceTransferManager_TransferLiteral"
	if err := t.enter(op, i); err != nil {
		return nil, err
	}
	defer t.exit()
	if int64(len(data)) != t.shapes[i].HostBytes() {
		return nil, errorf(InvalidArgument, op, "host data has %d bytes, shape %v needs %d", len(data), t.shapes[i], t.shapes[i].HostBytes())
	}
	e, err := t.b.TransferLiteral(i, data, t.shapes[i])
	if err != nil {
		return nil, err
	}
	return newEvent(t.c, e), nil
}

// SetBufferError fails buffer i with err instead of sending its data.
func (t *AsyncTransfer) SetBufferError(i int, err error) error {
	const op = "PJRT_AsyncHostToDeviceTransferManager_SetBufferError"
	if cerr := t.enter(op, i); cerr != nil {
		return cerr
	}
	defer t.exit()
	code, msg := errorCode(err)
	if code == 0 {
		return errorf(InvalidArgument, op, "the buffer's error is nil")
	}
	return t.b.SetBufferError(i, code, msg)
}

// AddMetadata attaches key/value metadata to the transfer (values as
// Option values).
func (t *AsyncTransfer) AddMetadata(md map[string]any) error {
	const op = "PJRT_AsyncHostToDeviceTransferManager_AddMetadata"
	if err := t.enter(op, 0); err != nil {
		return err
	}
	defer t.exit()
	opts := make([]Option, 0, len(md))
	for _, k := range sortedAttrNames(md) {
		opts = append(opts, Option{Name: k, Value: md[k]})
	}
	nvs, err := optionValues(opts)
	if err != nil {
		return err
	}
	return t.b.AddMetadata(nvs)
}

// Buffer takes buffer i (once per index); it becomes ready when its last
// piece has arrived.
func (t *AsyncTransfer) Buffer(i int) (*Buffer, error) {
	if err := t.enter("PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer", i); err != nil {
		return nil, err
	}
	defer t.exit()
	b, err := t.b.Buffer(i)
	if err != nil {
		return nil, err
	}
	return t.c.newBuffer(b)
}

// Close releases the transfer. It is idempotent, and a nil one (a failed
// NewAsyncTransfer's) closes without error.
func (t *AsyncTransfer) Close() error {
	if t == nil {
		return nil
	}
	return t.g.close()
}
