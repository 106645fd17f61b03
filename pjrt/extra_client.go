package pjrt

import (
	"slices"
	"sync"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// placement resolves OnDevice / InMemory options to backend objects; with
// neither it picks the first addressable device (and, when wantMemory, its
// default memory).
func (c *Client) placement(op string, opts []BufferOption, wantMemory bool) (backend.Device, backend.Memory, error) {
	var cfg bufferConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return c.place(op, cfg, wantMemory)
}

// place is placement for options already applied to cfg. A device and a
// memory given together must belong together: the memory is one the
// device addresses.
func (c *Client) place(op string, cfg bufferConfig, wantMemory bool) (backend.Device, backend.Memory, error) {
	var bd backend.Device
	var bm backend.Memory
	if cfg.device != nil {
		if cfg.device.c != c {
			return nil, nil, errorf(InvalidArgument, op, "device %d belongs to another client", cfg.device.ID())
		}
		bd = cfg.device.b
	}
	if cfg.memory != nil {
		if cfg.memory.c != c {
			return nil, nil, errorf(InvalidArgument, op, "memory %d belongs to another client", cfg.memory.ID())
		}
		bm = cfg.memory.b
	}
	if bd != nil && bm != nil && !slices.ContainsFunc(bm.Devices(), func(d backend.Device) bool { return d.ID() == bd.ID() }) {
		return nil, nil, errorf(InvalidArgument, op, "memory %d (%s) is not attached to device %d", cfg.memory.ID(), cfg.memory.Kind(), cfg.device.ID())
	}
	if bd == nil && bm == nil {
		addr := c.b.AddressableDevices()
		if len(addr) == 0 {
			return nil, nil, errorf(FailedPrecondition, op, "client has no addressable device")
		}
		bd = addr[0]
	}
	if wantMemory && bm == nil {
		m, err := bd.DefaultMemory()
		if err != nil {
			return nil, nil, err
		}
		bm = m
	}
	return bd, bm, nil
}

// bufferCreator is c's backend as a BufferCreator (the caller is within
// c.enter and c.exit).
func (c *Client) bufferCreator(op string) (backend.BufferCreator, error) {
	x, ok := c.b.(backend.BufferCreator)
	if !ok {
		return nil, notSupported(op, "creating buffers without host data", c.plugin)
	}
	return x, nil
}

// LookupAddressableDevice returns the addressable device with the given
// local hardware id (see Device.LocalHardwareID).
func (c *Client) LookupAddressableDevice(localHardwareID int) (*Device, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	x, ok := c.b.(backend.AddressableDeviceLookup)
	if !ok {
		for _, d := range c.AddressableDevices() {
			if d.LocalHardwareID() == localHardwareID {
				return d, nil
			}
		}
		return nil, errorf(NotFound, "PJRT_Client_LookupAddressableDevice", "no addressable device with local hardware id %d", localHardwareID)
	}
	d, err := x.LookupAddressableDevice(localHardwareID)
	if err != nil {
		return nil, err
	}
	return c.lookupDevice(d), nil
}

// CreateUninitializedBuffer allocates a buffer of the given shape whose
// contents are undefined, on the first addressable device or as OnDevice /
// InMemory say.
func (c *Client) CreateUninitializedBuffer(shape xla.Shape, opts ...BufferOption) (*Buffer, error) {
	const op = "PJRT_Client_CreateUninitializedBuffer"
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	x, err := c.bufferCreator(op)
	if err != nil {
		return nil, err
	}
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, op, "%v", err)
	}
	bd, bm, err := c.placement(op, opts, false)
	if err != nil {
		return nil, err
	}
	b, err := x.CreateUninitializedBuffer(shape.Clone(), bd, bm)
	if err != nil {
		return nil, err
	}
	return c.newBuffer(b)
}

// CreateErrorBuffer makes a buffer of the given shape whose readiness
// carries bufErr with its code (that of a *pjrt.Error or a Code, else
// Unknown): every computation
// that consumes it fails with that error. It lives in the memory InMemory
// names, else in the default memory of OnDevice's (or the first) device.
func (c *Client) CreateErrorBuffer(shape xla.Shape, bufErr error, opts ...BufferOption) (*Buffer, error) {
	const op = "PJRT_Client_CreateErrorBuffer"
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	x, err := c.bufferCreator(op)
	if err != nil {
		return nil, err
	}
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, op, "%v", err)
	}
	if bufErr == nil {
		return nil, errorf(InvalidArgument, op, "the buffer's error is nil")
	}
	_, bm, err := c.placement(op, opts, true)
	if err != nil {
		return nil, err
	}
	code, msg := errorCode(bufErr)
	b, err := x.CreateErrorBuffer(shape.Clone(), bm, code, msg)
	if err != nil {
		return nil, err
	}
	return c.newBuffer(b)
}

// CreateViewOfDeviceBuffer wraps memory the caller owns (a device pointer,
// or host memory on CPU plugins) as a buffer without copying. The memory
// must stay valid until onDelete (may be nil) runs, which happens when the
// plugin no longer uses it (after the buffer is closed or deleted and its
// pending work is done).
func (c *Client) CreateViewOfDeviceBuffer(ptr uintptr, shape xla.Shape, onDelete func(), opts ...BufferOption) (*Buffer, error) {
	const op = "PJRT_Client_CreateViewOfDeviceBuffer"
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	x, err := c.bufferCreator(op)
	if err != nil {
		return nil, err
	}
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, op, "%v", err)
	}
	if ptr == 0 && shape.HostBytes() > 0 {
		return nil, errorf(InvalidArgument, op, "the device pointer is 0")
	}
	bd, bm, err := c.placement(op, opts, false)
	if err != nil {
		return nil, err
	}
	b, err := x.CreateViewOfDeviceBuffer(ptr, shape.Clone(), bd, bm, onDelete)
	if err != nil {
		return nil, err
	}
	return c.newBuffer(b)
}

// AliasFulfillment provides the data of a buffer made by
// CreateAliasBuffer, once. The client's Close cancels it if it was not
// used.
type AliasFulfillment struct {
	c     *Client
	mu    sync.Mutex
	done  bool
	b     backend.AliasFulfiller
	alias backend.Buffer // the buffer it fulfils
	shape xla.Shape      // its shape
	// closed: Client.Close cancelled it.
	closed bool
	// src is the fulfillment of the alias buffer it was fulfilled with, if
	// any (guarded by aliasChains): a chain of them must not come back to
	// an alias. (Not the source *Buffer: that would keep it from being
	// collected.)
	src *AliasFulfillment
}

// aliasChains guards AliasFulfillment.src: finding a cycle and closing
// one are one step.
var aliasChains sync.Mutex

// CreateAliasBuffer makes a buffer now whose data is provided later by
// AliasFulfillment.Fulfill (or replaced by an error with Fail); one of
// them must be called. Computations may consume the buffer at once and
// wait for it. A token's shape (xla.Invalid without dims, as Outputs
// reports token results) is passed on to backends that have token buffers
// (the interpreter).
func (c *Client) CreateAliasBuffer(shape xla.Shape, opts ...BufferOption) (*Buffer, *AliasFulfillment, error) {
	const op = "PJRT_Client_CreateAliasBuffer"
	if err := c.enter(); err != nil {
		return nil, nil, err
	}
	defer c.exit()
	x, ok := c.b.(backend.AliasBufferCreator)
	if !ok {
		return nil, nil, notSupported(op, "alias buffers", c.plugin)
	}
	if shape.DType != xla.Invalid || len(shape.Dims) != 0 {
		if err := shape.Validate(); err != nil {
			return nil, nil, errorf(InvalidArgument, op, "%v", err)
		}
	}
	_, bm, err := c.placement(op, opts, true)
	if err != nil {
		return nil, nil, err
	}
	b, f, err := x.CreateAliasBuffer(shape.Clone(), bm)
	if err != nil {
		return nil, nil, err
	}
	w, err := c.newBuffer(b)
	if err != nil {
		f.Fulfill(nil, int(Cancelled), "client closed")
		return nil, nil, err
	}
	af := &AliasFulfillment{c: c, b: f, alias: b, shape: w.shape}
	if err := c.track(af); err != nil {
		return nil, nil, err
	}
	w.aliasOf = af
	return w, af, nil
}

// check returns the error of a call on a nil fulfillment.
func (f *AliasFulfillment) check() error {
	if f == nil {
		return errorf(InvalidArgument, "AliasFulfillment", "alias fulfillment is nil")
	}
	return nil
}

func (f *AliasFulfillment) finish(src *Buffer, code int, msg string) error {
	// An alias fulfilled with an alias is a link of a chain that must not
	// come back to f (a1 fulfilled with a2, then a2 with a1, waits for
	// ever). The link is noted before the fulfillment, so that a call on
	// another goroutine closing the cycle sees it, and undone if the
	// fulfillment fails; what is known to fail (f already fulfilled,
	// closed, or of another shape than src) is not noted.
	var link *AliasFulfillment
	if src != nil && src.aliasOf != nil && f.mayTake(src) {
		link = src.aliasOf
		aliasChains.Lock()
		for a := link; a != nil; a = a.src {
			if a == f {
				aliasChains.Unlock()
				return errorf(InvalidArgument, "PJRT_Client_FulfillAliasBuffer", "an alias buffer cannot be fulfilled with itself, nor with an alias buffer fulfilled (directly or through others) with it: its readiness would wait for itself")
			}
		}
		f.src = link
		aliasChains.Unlock()
	}
	if err := f.finishLocked(src, code, msg); err != nil {
		if link != nil {
			aliasChains.Lock()
			f.src = nil
			aliasChains.Unlock()
		}
		return err
	}
	f.c.release(f) // Close is then a no-op
	return nil
}

// mayTake reports whether f may be fulfilled with src, of the alias
// buffer's shape, as far as halo can tell before asking the plugin.
func (f *AliasFulfillment) mayTake(src *Buffer) bool {
	f.mu.Lock()
	err := f.refusal(src)
	f.mu.Unlock()
	return err == nil && src.shape.Equal(f.shape)
}

// refusal is why f cannot be fulfilled with src (nil for an error) now,
// with f.mu held: closed, already fulfilled, or src of another client or
// the alias itself.
func (f *AliasFulfillment) refusal(src *Buffer) error {
	switch {
	case f.closed:
		return ErrClosed
	case f.done:
		return errorf(FailedPrecondition, "PJRT_Client_FulfillAliasBuffer", "the alias buffer was already fulfilled")
	case src == nil:
		return nil
	case src.c != f.c:
		return errorf(InvalidArgument, "PJRT_Client_FulfillAliasBuffer", "the source buffer belongs to another client")
	case src.b == f.alias:
		return errorf(InvalidArgument, "PJRT_Client_FulfillAliasBuffer", "an alias buffer cannot be fulfilled with itself")
	}
	return nil
}

func (f *AliasFulfillment) finishLocked(src *Buffer, code int, msg string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refusal(src); err != nil {
		return err
	}
	var bs backend.Buffer
	if src != nil {
		if err := src.enter(); err != nil {
			return err
		}
		defer src.exit()
		bs = src.b
	}
	if err := f.b.Fulfill(bs, code, msg); err != nil {
		return err
	}
	f.done = true
	return nil
}

// Fulfill makes the alias buffer hold src's data (same shape). src may be
// another alias buffer, but not this one nor one that alias buffers
// fulfil, in a chain, with this one (an error: its readiness would wait
// for itself); a src computed from this alias buffer waits for ever too,
// and that, Fulfill cannot see.
func (f *AliasFulfillment) Fulfill(src *Buffer) error {
	if err := f.check(); err != nil {
		return err
	}
	if src == nil {
		return errorf(InvalidArgument, "PJRT_Client_FulfillAliasBuffer", "source buffer is nil")
	}
	return f.finish(src, 0, "")
}

// Fail makes the alias buffer's readiness carry err with its code (that
// of a *pjrt.Error or a Code; Unknown for others and for nil).
func (f *AliasFulfillment) Fail(err error) error {
	if cerr := f.check(); cerr != nil {
		return cerr
	}
	code, msg := errorCode(err)
	if code == 0 {
		code, msg = int(Unknown), "alias buffer failed"
	}
	return f.finish(nil, code, msg)
}

// Close cancels the alias buffer (its readiness carries Cancelled) if it
// was neither fulfilled nor failed, and lets the client forget f. It is
// idempotent, and a nil one closes without error.
func (f *AliasFulfillment) Close() error {
	if f == nil {
		return nil
	}
	err := f.cancel()
	f.c.release(f) // calls Close again, which finds nothing left to do
	return err
}

func (f *AliasFulfillment) cancel() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return nil
	}
	f.done, f.closed = true, true
	return f.b.Fulfill(nil, int(Cancelled), "the alias buffer was cancelled before it was fulfilled")
}

// DMAMap registers host memory with the plugin for faster transfers. data
// stays pinned until DMAUnmap.
func (c *Client) DMAMap(data []byte) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	x, ok := c.b.(backend.DMAMapper)
	if !ok {
		return notSupported("PJRT_Client_DmaMap", "DMA mappings", c.plugin)
	}
	if len(data) == 0 {
		return errorf(InvalidArgument, "PJRT_Client_DmaMap", "empty data")
	}
	return x.DMAMap(data)
}

// DMAUnmap undoes DMAMap for the same slice.
func (c *Client) DMAUnmap(data []byte) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	x, ok := c.b.(backend.DMAMapper)
	if !ok {
		return notSupported("PJRT_Client_DmaUnmap", "DMA mappings", c.plugin)
	}
	if len(data) == 0 {
		return errorf(InvalidArgument, "PJRT_Client_DmaUnmap", "empty data")
	}
	return x.DMAUnmap(data)
}

// ProcessState is the state of a process of a multi-process job
// (PJRT_ProcessState).
type ProcessState int

// The process states.
const (
	ProcessUnspecified ProcessState = iota
	ProcessUninitialized
	ProcessDisconnected
	ProcessConnected
	ProcessError
)

// ProcessInfo is what UpdateGlobalProcessInfo tells a plugin about one
// process of the job.
type ProcessInfo struct {
	TaskID        int          // the process's task id in the job
	IncarnationID uint64       // which start of that task (a restarted task has a new one)
	State         ProcessState // whether it is running, failed ...
	// Err is the process's error when State is ProcessError.
	Err error
}

// UpdateGlobalProcessInfo tells the plugin the state of the job's
// processes (multi-process jobs).
func (c *Client) UpdateGlobalProcessInfo(infos []ProcessInfo) error {
	if err := c.enter(); err != nil {
		return err
	}
	defer c.exit()
	x, ok := c.b.(backend.ProcessInfoUpdater)
	if !ok {
		return notSupported("PJRT_Client_UpdateGlobalProcessInfo", "process info updates", c.plugin)
	}
	bs := make([]backend.ProcessInfo, len(infos))
	for i, p := range infos {
		code, msg := errorCode(p.Err)
		bs[i] = backend.ProcessInfo{TaskID: p.TaskID, IncarnationID: p.IncarnationID, State: int(p.State), ErrorCode: code, ErrorMessage: msg}
	}
	return x.UpdateGlobalProcessInfo(bs)
}

// DefaultLayout is the plugin's serialized default layout for arrays of
// the given shape (Layouts extension), e.g. "{1,0}".
func (c *Client) DefaultLayout(shape xla.Shape) ([]byte, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	x, ok := c.b.(backend.DefaultLayouter)
	if !ok {
		return nil, notSupported("PJRT_Layouts_PJRT_Client_GetDefaultLayout", "default layouts", c.plugin)
	}
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, "PJRT_Layouts_PJRT_Client_GetDefaultLayout", "%v", err)
	}
	return x.DefaultLayout(shape)
}
