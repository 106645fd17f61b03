package interpreter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// The interpreter as a pjrt backend ("interpreter"): the same Client,
// Device, Buffer, Executable and Event API as a C plugin. Buffers live in
// host memory as Tensors; Compile parses, verifies and plans MLIR text
// once; Execute returns at once and runs each device of the computation in
// its own goroutine; events fire when the work is done, carrying its
// error. As in a PJRT runtime, pending work holds the buffers it reads (an
// execution its arguments, a copy or transfer its source, an alias buffer
// the buffer it is fulfilled from) until it has read them, so a caller may
// close a buffer right after dispatching work on it. An argument for a
// !stablehlo.token parameter of main orders the execution (it waits for
// the token) but its producer's failure does not fail it: a token carries
// order, not data. Package pjrt registers it (pjrt.Open("interpreter"), and
// pjrt.Open("") when no C plugin is found).
//
// Client options: "device_count" or "cpu_device_count" (int64, default 1):
// the number of simulated devices; "collective_timeout_ms" (int64, default
// 30000): how long a device waits for its peers at a collective.
//
// Not modelled: donation (arguments are never donated: executions read
// them and outputs are new buffers), zero-copy host buffers (host data is
// always copied; the copy is done before BufferFromHost returns), layouts
// other than dense row-major, multi-process clients.

// PJRT error codes used by the backend (the values of pjrt.Code).
const (
	codeCancelled          = 1
	codeInvalidArgument    = 3
	codeDeadlineExceeded   = 4
	codeNotFound           = 5
	codeAlreadyExists      = 6
	codeResourceExhausted  = 8
	codeFailedPrecondition = 9
	codeUnimplemented      = 12
	codeInternal           = 13
)

// BackendName is the name the pjrt package registers the backend under.
const BackendName = "interpreter"

// OpenBackend returns the interpreter as a pjrt backend plugin.
func OpenBackend() (backend.Plugin, error) { return thePlugin, nil }

var thePlugin = &plugin{}

type plugin struct{}

func (*plugin) Version() (major, minor int) { return capi.APIMajor, capi.APIMinor }

func (*plugin) Attributes() []backend.NamedValue {
	return []backend.NamedValue{
		{Name: "interpreter", Value: "halo StableHLO interpreter (pure Go)"},
		{Name: "program_formats", Value: "mlir (StableHLO text)"},
	}
}

func (*plugin) NewClient(options []backend.NamedValue) (backend.Client, error) {
	n := 1
	timeout := DefaultCollectiveTimeout
	seen := map[string]int{}
	for _, o := range options {
		switch o.Name {
		case "device_count", "cpu_device_count", "collective_timeout_ms":
			v, ok := optionInt(o.Value)
			if !ok {
				return nil, backend.Errorf(codeInvalidArgument, "PJRT_Client_Create", "option %s is %T, want an integer", o.Name, o.Value)
			}
			if o.Name == "collective_timeout_ms" {
				if v <= 0 {
					return nil, backend.Errorf(codeInvalidArgument, "PJRT_Client_Create", "option collective_timeout_ms is %d, want a positive number", v)
				}
				// Past what a Duration holds (292 years) is as good as
				// forever: the longest one (the product wrapped around).
				timeout = time.Duration(math.MaxInt64)
				if v <= math.MaxInt64/int64(time.Millisecond) {
					timeout = time.Duration(v) * time.Millisecond
				}
				continue
			}
			if v < 1 || v > maxDevices {
				return nil, backend.Errorf(codeInvalidArgument, "PJRT_Client_Create", "option %s is %d, want 1 to %d devices", o.Name, v, maxDevices)
			}
			for name, prev := range seen {
				if prev != int(v) {
					return nil, backend.Errorf(codeInvalidArgument, "PJRT_Client_Create", "options %s = %d and %s = %d disagree", name, prev, o.Name, v)
				}
			}
			seen[o.Name] = int(v)
			n = int(v)
		}
	}
	return newClient(n, timeout), nil
}

func optionInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	}
	return 0, false
}

// ---- client, devices, memories ----

type client struct {
	devices  []backend.Device
	devs     []*device
	memories []backend.Memory
	host     *memory // pinned_host memory shared by every device
	timeout  time.Duration
	closed   atomic.Bool
	// ctx is the context of the client's runs: Close cancels it, with
	// ErrClientClosed as its cause, so that a run still going stops.
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// ErrClientClosed ends the computations still running when their client
// is closed (a run's error wraps it).
var ErrClientClosed = errors.New("interpreter: the client was closed while the computation ran")

func newClient(n int, timeout time.Duration) *client {
	c := &client{timeout: timeout}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	c.host = &memory{id: n, kind: "pinned_host", kindID: 1}
	for i := 0; i < n; i++ {
		d := &device{c: c, id: i}
		d.mem = &memory{id: i, kind: "device", kindID: 0, devs: []backend.Device{d}}
		d.mems = []backend.Memory{d.mem, c.host}
		c.devs = append(c.devs, d)
		c.devices = append(c.devices, d)
		c.memories = append(c.memories, d.mem)
		c.host.devs = append(c.host.devs, d)
	}
	c.memories = append(c.memories, c.host)
	return c
}

func (c *client) PlatformName() string    { return BackendName }
func (c *client) PlatformVersion() string { return "halo interpreter (StableHLO, pure Go)" }
func (c *client) ProcessIndex() int       { return 0 }

func (c *client) Devices() []backend.Device            { return c.devices }
func (c *client) AddressableDevices() []backend.Device { return c.devices }
func (c *client) AddressableMemories() []backend.Memory {
	return c.memories
}

func (c *client) LookupDevice(id int) (backend.Device, error) {
	if id < 0 || id >= len(c.devs) {
		return nil, backend.Errorf(codeNotFound, "PJRT_Client_LookupDevice", "no device with id %d: the interpreter client has %d devices (option device_count)", id, len(c.devs))
	}
	return c.devs[id], nil
}

// LookupAddressableDevice finds a device by local hardware id (the id).
func (c *client) LookupAddressableDevice(hw int) (backend.Device, error) {
	if hw < 0 || hw >= len(c.devs) {
		return nil, backend.Errorf(codeNotFound, "PJRT_Client_LookupAddressableDevice", "no device with local hardware id %d: the interpreter client has %d devices", hw, len(c.devs))
	}
	return c.devs[hw], nil
}

func (c *client) DefaultDeviceAssignment(replicas, partitions int) ([]int, error) {
	if n := len(c.devs); replicas < 1 || partitions < 1 || replicas > n || partitions > n || replicas*partitions > n {
		return nil, backend.Errorf(codeInvalidArgument, "PJRT_Client_DefaultDeviceAssignment",
			"%d replicas x %d partitions need %d devices, the client has %d (option device_count)", replicas, partitions, replicas*partitions, len(c.devs))
	}
	da := xla.DefaultDeviceAssignment(replicas, partitions)
	out := make([]int, 0, replicas*partitions)
	for r := range da {
		for _, id := range da[r] {
			out = append(out, int(id))
		}
	}
	return out, nil
}

func (c *client) Close() error {
	c.closed.Store(true)
	c.cancel(ErrClientClosed)
	return nil
}

type device struct {
	c    *client
	id   int
	mem  *memory
	mems []backend.Memory
}

func (d *device) ID() int                                { return d.id }
func (d *device) ProcessIndex() int                      { return 0 }
func (d *device) Kind() string                           { return BackendName }
func (d *device) DebugString() string                    { return fmt.Sprintf("interpreter:%d", d.id) }
func (d *device) String() string                         { return fmt.Sprintf("InterpreterDevice(id=%d)", d.id) }
func (d *device) IsAddressable() bool                    { return true }
func (d *device) LocalHardwareID() int                   { return d.id }
func (d *device) Memories() []backend.Memory             { return d.mems }
func (d *device) DefaultMemory() (backend.Memory, error) { return d.mem, nil }
func (d *device) Attributes() []backend.NamedValue {
	return []backend.NamedValue{{Name: "simulated", Value: true}}
}

// MemoryDescriptions describes the device's memory spaces.
func (d *device) MemoryDescriptions() ([]backend.MemoryDescription, error) {
	return []backend.MemoryDescription{
		{Kind: "device", KindID: 0, Default: true},
		{Kind: "pinned_host", KindID: 1},
	}, nil
}

type memory struct {
	id     int
	kind   string
	kindID int
	devs   []backend.Device
}

func (m *memory) ID() int                   { return m.id }
func (m *memory) Kind() string              { return m.kind }
func (m *memory) KindID() int               { return m.kindID }
func (m *memory) DebugString() string       { return fmt.Sprintf("interpreter %s memory %d", m.kind, m.id) }
func (m *memory) String() string            { return fmt.Sprintf("InterpreterMemory(%s, id=%d)", m.kind, m.id) }
func (m *memory) Devices() []backend.Device { return m.devs }

// ---- events ----

// event is a backend.Event completed once with set.
type event struct {
	done chan struct{}
	err  error
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// firedEvent is an event that has already completed.
func firedEvent(err error) *event { return &event{done: closedChan, err: err} }

var okEvent = firedEvent(nil)

func newEvent() *event { return &event{done: make(chan struct{})} }

func (e *event) set(err error) {
	e.err = err
	close(e.done)
}

func (e *event) Done() <-chan struct{} { return e.done }

// Err is valid once Done is closed.
func (e *event) Err() error {
	select {
	case <-e.done:
		return e.err
	default:
		return nil
	}
}

func (e *event) fired() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// userEvent is an event the caller completes (backend.UserEvent).
type userEvent struct {
	event
	once sync.Once
}

// NewUserEvent makes an event completed by Set (backend.EventCreator).
func (*plugin) NewUserEvent() (backend.UserEvent, error) {
	return &userEvent{event: event{done: make(chan struct{})}}, nil
}

func (u *userEvent) Set(code int, msg string) error {
	set := false
	u.once.Do(func() {
		set = true
		var err error
		if code != 0 {
			err = backend.Errorf(code, "PJRT_Event_Set", "%s", msg)
		}
		u.event.set(err)
	})
	if !set {
		return backend.Errorf(codeFailedPrecondition, "PJRT_Event_Set", "event already set")
	}
	return nil
}

func (u *userEvent) Handle() uintptr { return 0 }

// Close completes an event not yet set with Cancelled, so that nothing
// waits on it forever.
func (u *userEvent) Close() error {
	u.once.Do(func() {
		u.event.set(backend.Errorf(codeCancelled, "PJRT_Event_Destroy", "the event was closed before it was set"))
	})
	return nil
}
