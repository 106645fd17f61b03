package pjrt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/halo-ml/halo/pjrt/backend"
)

// Client is a connection to a plugin's devices. It is safe for concurrent
// use. Close releases every buffer and executable still open.
type Client struct {
	plugin *Plugin
	b      backend.Client
	h      *clientHandle // closes b once, also for a Client dropped without Close

	mu       sync.RWMutex
	closed   bool
	calls    sync.WaitGroup         // calls in progress (enter/exit), which Close waits for
	live     map[io.Closer]struct{} // backend objects to release on Close
	devices  []*Device
	byID     map[int]*Device
	memories []*Memory
	memByB   map[backend.Memory]*Memory
}

// clientHandle releases a backend client once: from Close, or from the
// runtime cleanup of a Client dropped without Close. By then the
// client's buffers and executables, whose cleanups hold the Client, have
// been released by theirs.
type clientHandle struct {
	b    backend.Client
	once sync.Once
	err  error
}

func (h *clientHandle) close() error {
	h.once.Do(func() { h.err = h.b.Close() })
	return h.err
}

func newClient(p *Plugin, b backend.Client) *Client {
	c := &Client{plugin: p, b: b, h: &clientHandle{b: b}, live: map[io.Closer]struct{}{}, byID: map[int]*Device{}, memByB: map[backend.Memory]*Memory{}}
	runtime.AddCleanup(c, func(h *clientHandle) { h.close() }, c.h)
	for _, m := range b.AddressableMemories() {
		c.memory(m)
	}
	for _, d := range b.Devices() {
		c.device(d)
	}
	for _, d := range b.AddressableDevices() {
		c.device(d)
	}
	return c
}

func (c *Client) device(d backend.Device) *Device {
	if d == nil {
		return nil
	}
	if w := c.byID[d.ID()]; w != nil {
		return w
	}
	w := &Device{c: c, b: d}
	c.byID[d.ID()] = w
	c.devices = append(c.devices, w)
	return w
}

func (c *Client) memory(m backend.Memory) *Memory {
	if m == nil {
		return nil
	}
	if w := c.memByB[m]; w != nil {
		return w
	}
	w := &Memory{c: c, b: m}
	c.memByB[m] = w
	c.memories = append(c.memories, w)
	return w
}

// lookupDevice returns the wrapper of a backend device (read-only after
// creation, so no lock is needed).
func (c *Client) lookupDevice(d backend.Device) *Device {
	if d == nil {
		return nil
	}
	return c.byID[d.ID()]
}

// track registers a backend object to release on Close; it fails if the
// client is closed (and releases the object).
func (c *Client) track(x io.Closer) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		x.Close()
		return ErrClosed
	}
	c.live[x] = struct{}{}
	c.mu.Unlock()
	return nil
}

// pending is something the plugin waits for that the client must settle
// before it waits for the calls in progress (Close): a raw copy's
// destination, a control dependency. Close cancels it.
type pending struct{ cancel func() error }

// Close cancels the pending work (a no-op once settled).
func (p *pending) Close() error { return p.cancel() }

// untrack drops x from the objects Close releases, without closing it.
func (c *Client) untrack(x io.Closer) {
	c.mu.Lock()
	delete(c.live, x)
	c.mu.Unlock()
}

// release closes a tracked object once (counted as a call: Client.Close
// does not destroy the client under it; once the client is closing, its
// Close releases the object).
func (c *Client) release(x io.Closer) error {
	c.mu.Lock()
	_, ok := c.live[x]
	delete(c.live, x)
	if ok {
		c.calls.Add(1)
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	defer c.calls.Done()
	return x.Close()
}

// enter begins a call into the plugin on the client or one of its objects
// (ErrClosed once the client is closed); exit must follow. Close waits for
// the calls in progress before it releases anything.
func (c *Client) enter() error {
	if c == nil {
		return errorf(InvalidArgument, "Client", "client is nil")
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	c.calls.Add(1)
	return nil
}

// exit ends a call begun by enter.
func (c *Client) exit() { c.calls.Done() }

// Plugin returns the plugin the client belongs to.
func (c *Client) Plugin() *Plugin {
	if c == nil {
		return nil
	}
	return c.plugin
}

// PlatformName is the platform, e.g. "cpu", "cuda", "interpreter".
func (c *Client) PlatformName() string {
	if c == nil {
		return ""
	}
	return c.b.PlatformName()
}

// PlatformVersion is the platform's version string.
func (c *Client) PlatformVersion() string {
	if c == nil {
		return ""
	}
	return c.b.PlatformVersion()
}

// ProcessIndex is this process's index in a multi-process job (0 alone).
func (c *Client) ProcessIndex() int {
	if c == nil {
		return 0
	}
	return c.b.ProcessIndex()
}

// Devices returns every device of the job, addressable or not.
func (c *Client) Devices() []*Device {
	if c == nil {
		return nil
	}
	var out []*Device
	for _, d := range c.b.Devices() {
		out = append(out, c.lookupDevice(d))
	}
	return out
}

// AddressableDevices returns the devices this process can use.
func (c *Client) AddressableDevices() []*Device {
	if c == nil {
		return nil
	}
	var out []*Device
	for _, d := range c.b.AddressableDevices() {
		out = append(out, c.lookupDevice(d))
	}
	return out
}

// Device returns the device with the given id.
func (c *Client) Device(id int) (*Device, error) {
	if err := c.enter(); err != nil {
		return nil, err // nil or closed
	}
	defer c.exit()
	if d := c.byID[id]; d != nil {
		return d, nil
	}
	// Not among the devices listed at creation: ask the backend, which
	// explains why (or knows a device the listing missed).
	d, err := c.b.LookupDevice(id)
	if err == nil && d != nil {
		if w := c.lookupDevice(d); w != nil {
			return w, nil
		}
	}
	msg := fmt.Sprintf("no device with id %d (the client has %d)", id, len(c.devices))
	var pe *Error
	if errors.As(err, &pe) {
		msg += "; the plugin says: " + pe.Msg
	} else if err != nil {
		msg += "; " + err.Error()
	}
	return nil, &Error{Code: NotFound, Op: "PJRT_Client_LookupDevice", Msg: msg}
}

// Memories returns the memories addressable by this process.
func (c *Client) Memories() []*Memory {
	if c == nil {
		return nil
	}
	return append([]*Memory(nil), c.memories...)
}

// DefaultDeviceAssignment returns the plugin's device ids for a
// computation of replicas x partitions, indexed [replica][partition].
func (c *Client) DefaultDeviceAssignment(replicas, partitions int) ([][]int, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if replicas < 1 || partitions < 1 {
		return nil, errorf(InvalidArgument, "PJRT_Client_DefaultDeviceAssignment", "replicas (%d) and partitions (%d) must be at least 1", replicas, partitions)
	}
	if n := len(c.devices); replicas > n || partitions > n || replicas*partitions > n {
		return nil, errorf(InvalidArgument, "PJRT_Client_DefaultDeviceAssignment", "%d replicas x %d partitions need more devices than the client's %d", replicas, partitions, n)
	}
	ids, err := c.b.DefaultDeviceAssignment(replicas, partitions)
	if err != nil {
		return nil, err
	}
	if len(ids) != replicas*partitions {
		return nil, errorf(Internal, "PJRT_Client_DefaultDeviceAssignment", "the plugin returned %d device ids for %d replicas x %d partitions", len(ids), replicas, partitions)
	}
	out := make([][]int, replicas)
	for r := range out {
		out[r] = ids[r*partitions : (r+1)*partitions : (r+1)*partitions] // appending to a row copies it
	}
	return out, nil
}

// Close releases every buffer and executable of the client, then the
// client. It fails the alias buffers not yet fulfilled, then waits for the
// calls into the plugin in progress on the client and its objects (not
// for waits on events, which the release ends). While a Go FFI handler
// runs (of any plugin: Close may be called from one, within the Execute
// that runs it, and a target's handler serves every plugin it is
// registered with), Close does not wait: the release happens on
// another goroutine once those calls have returned, and its errors are
// dropped. Computations still running end as the plugin ends them (the
// built-in interpreter stops them, with interpreter.ErrClientClosed). It
// is idempotent; later calls on the client or its objects return
// ErrClosed.
func (c *Client) Close() error {
	if c == nil {
		return nil // as Buffer.Close
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	live := c.live
	c.live = nil
	c.mu.Unlock()
	var first error
	// What the plugin waits for from the caller fails first (alias
	// buffers not fulfilled, raw copies without a destination, control
	// dependencies not ready), so that work and calls waiting for it end;
	// then the calls in progress end before anything is released.
	for x := range live {
		var err error
		switch x := x.(type) {
		case *AliasFulfillment:
			err = x.cancel()
		case *pending:
			err = x.Close()
		default:
			continue
		}
		if err != nil && first == nil {
			first = err
		}
		delete(live, x)
	}
	if handlersRunning.Load() > 0 {
		go c.releaseAll(live)
		return first
	}
	if err := c.releaseAll(live); first == nil {
		first = err
	}
	return first
}

// releaseAll waits for the calls in progress, then releases the client's
// objects (buffers first) and the client.
func (c *Client) releaseAll(live map[io.Closer]struct{}) error {
	var first error
	c.calls.Wait()
	for x := range live {
		if _, isBuf := x.(backend.Buffer); isBuf {
			if err := x.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	for x := range live {
		if _, isBuf := x.(backend.Buffer); !isBuf {
			if err := x.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	if err := c.h.close(); err != nil && first == nil {
		first = err
	}
	return first
}

// LiveBuffers is the number of the client's buffers not yet released
// (closed, or collected after their last reference was dropped): what a
// leak check counts.
func (c *Client) LiveBuffers() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for x := range c.live {
		if _, ok := x.(backend.Buffer); ok {
			n++
		}
	}
	return n
}

// OnClose registers f to run once when the client is closed (after its
// buffers were released; executables and other objects are released in
// no particular order with it): for packages that keep state per client.
// It returns ErrClosed (and does not run f) when the client is closed
// already.
func (c *Client) OnClose(f func()) error {
	if c == nil {
		return errorf(InvalidArgument, "OnClose", "client is nil")
	}
	if f == nil {
		return errorf(InvalidArgument, "OnClose", "nil function")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed // track would run f
	}
	c.live[&closeHook{f: f}] = struct{}{}
	return nil
}

// closeHook runs a function registered with OnClose.
type closeHook struct {
	once sync.Once
	f    func()
}

func (h *closeHook) Close() error {
	h.once.Do(h.f)
	return nil
}

// String describes the client.
func (c *Client) String() string {
	if c == nil {
		return "client(nil)"
	}
	return fmt.Sprintf("%s client (%s, %d devices)", c.PlatformName(), c.plugin.Name(), len(c.devices))
}

// Device is one device of a client.
type Device struct {
	c *Client
	b backend.Device
}

// ID is the device's global id.
func (d *Device) ID() int {
	if d == nil {
		return -1
	}
	return d.b.ID()
}

// ProcessIndex is the process that owns the device.
func (d *Device) ProcessIndex() int {
	if d == nil {
		return 0
	}
	return d.b.ProcessIndex()
}

// Kind is the device kind, e.g. "NVIDIA H100 80GB HBM3" or "cpu".
func (d *Device) Kind() string {
	if d == nil {
		return ""
	}
	return d.b.Kind()
}

// DebugString is the plugin's verbose description.
func (d *Device) DebugString() string {
	if d == nil {
		return "Device(nil)"
	}
	return d.b.DebugString()
}

// String is the plugin's short description.
func (d *Device) String() string {
	if d == nil {
		return "Device(nil)"
	}
	return d.b.String()
}

// Attributes are the device description attributes (e.g. "core_count").
func (d *Device) Attributes() map[string]any {
	out := map[string]any{}
	if d == nil {
		return out
	}
	for _, a := range d.b.Attributes() {
		out[a.Name] = a.Value
	}
	return out
}

// IsAddressable reports whether this process can use the device.
func (d *Device) IsAddressable() bool { return d != nil && d.b.IsAddressable() }

// LocalHardwareID is the device's hardware id on its host (-1 if unknown).
func (d *Device) LocalHardwareID() int {
	if d == nil {
		return -1
	}
	return d.b.LocalHardwareID()
}

// Memories returns the memories the device can address.
func (d *Device) Memories() []*Memory {
	if d == nil {
		return nil
	}
	var out []*Memory
	for _, m := range d.b.Memories() {
		out = append(out, d.c.memByB[m])
	}
	return out
}

// DefaultMemory is where buffers for the device go by default.
func (d *Device) DefaultMemory() (*Memory, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.c.exit()
	m, err := d.b.DefaultMemory()
	if err != nil {
		return nil, err
	}
	return d.c.memByB[m], nil
}

// Client returns the device's client.
func (d *Device) Client() *Client {
	if d == nil {
		return nil
	}
	return d.c
}

// enter is d's client's enter, with an error for a nil device.
func (d *Device) enter() error {
	if d == nil {
		return errorf(InvalidArgument, "Device", "device is nil")
	}
	return d.c.enter()
}

// Memory is a memory space (device memory, pinned host memory ...).
type Memory struct {
	c *Client
	b backend.Memory
}

// ID is the memory's id (-1 for a nil memory).
func (m *Memory) ID() int {
	if m == nil {
		return -1
	}
	return m.b.ID()
}

// Kind is the memory kind, e.g. "device" or "pinned_host" ("" for a nil
// memory).
func (m *Memory) Kind() string {
	if m == nil {
		return ""
	}
	return m.b.Kind()
}

// KindID is the plugin's numeric id of the kind (-1 if unknown, and for a
// nil memory).
func (m *Memory) KindID() int {
	if m == nil {
		return -1
	}
	return m.b.KindID()
}

// DebugString is the plugin's verbose description ("Memory(nil)" for a
// nil memory).
func (m *Memory) DebugString() string {
	if m == nil {
		return "Memory(nil)"
	}
	return m.b.DebugString()
}

// String is the plugin's short description ("Memory(nil)" for a nil
// memory).
func (m *Memory) String() string {
	if m == nil {
		return "Memory(nil)"
	}
	return m.b.String()
}

// Devices returns the devices that can address the memory (none for a nil
// memory).
func (m *Memory) Devices() []*Device {
	if m == nil {
		return nil
	}
	var out []*Device
	for _, d := range m.b.Devices() {
		out = append(out, m.c.lookupDevice(d))
	}
	return out
}

// Event is the completion of asynchronous work: a transfer, an execution.
// It keeps its client alive: work that only an Event is kept for is not
// stopped by the client's release when the rest is collected.
type Event struct {
	b backend.Event
	c *Client // nil for user events
}

// Done is closed when the work has finished.
// A nil event's channel is closed: there is no work to wait for (Err and
// Await report the nil event).
func (e *Event) Done() <-chan struct{} {
	if e == nil {
		return closedChan
	}
	return e.b.Done()
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Await waits for the work and returns its error, or ctx's error if ctx
// ends first (the work goes on). Work cut short by closing its client
// ends Cancelled, and errors.Is(err, ErrClosed) holds too.
func (e *Event) Await(ctx context.Context) error {
	if e == nil {
		return errorf(InvalidArgument, "Event", "event is nil")
	}
	if ctx == nil {
		ctx = context.Background() // as a wait that cannot be cut short
	}
	select {
	case <-e.b.Done():
		return e.result()
	default:
	}
	select {
	case <-e.b.Done():
		return e.result()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Err returns the work's error if it has finished (as Await), nil
// otherwise.
func (e *Event) Err() error {
	if e == nil {
		return errorf(InvalidArgument, "Event", "event is nil")
	}
	select {
	case <-e.b.Done():
		return e.result()
	default:
		return nil
	}
}

// result is the finished work's error (see Client.markClosed).
func (e *Event) result() error { return e.c.markClosed(e.b.Err()) }

// markClosed marks err, the error of work of c, as ErrClosed too when it
// is a cancellation and c is closed: the work was cut short by Close.
func (c *Client) markClosed(err error) error {
	if err == nil || c == nil || !errors.Is(err, Cancelled) || errors.Is(err, ErrClosed) {
		return err
	}
	c.mu.RLock()
	closed := c.closed
	c.mu.RUnlock()
	if !closed {
		return err
	}
	return &closedError{err}
}

// closedError is a cancellation caused by closing the client: both the
// Cancelled error and ErrClosed.
type closedError struct{ err error }

func (e *closedError) Error() string { return e.err.Error() }

// Unwrap returns the cancellation and ErrClosed.
func (e *closedError) Unwrap() []error { return []error{e.err, ErrClosed} }

func newEvent(c *Client, b backend.Event) *Event {
	if b == nil {
		return nil
	}
	return &Event{b: b, c: c}
}
