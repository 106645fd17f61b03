package pjrt

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Program is code for Compile: MLIR (StableHLO text or bytecode) or a
// serialized HLO module.
type Program struct {
	Code   []byte
	Format string // "mlir" or "hlo"

	err error // why StableHLO could not print its module (Compile returns it)
}

// StableHLO returns a program of a built or parsed StableHLO module,
// printed as MLIR text. A module that cannot be printed (nil, or with an
// operand used outside its scope) makes Compile fail with
// INVALID_ARGUMENT saying why. Programs with host callbacks or other
// effects compile with effects.Compile, which lowers them first.
func StableHLO(m *stablehlo.Module) Program {
	var text bytes.Buffer
	if err := stablehlo.Print(&text, m, stablehlo.PrintOptions{}); err != nil {
		return Program{Format: "mlir", err: fmt.Errorf("printing the module: %w", err)}
	}
	return Program{Code: text.Bytes(), Format: "mlir"}
}

// MLIR returns a program of StableHLO MLIR text or bytecode.
func MLIR(code []byte) Program { return Program{Code: code, Format: "mlir"} }

// MLIRText returns a program of StableHLO MLIR text.
func MLIRText(text string) Program { return Program{Code: []byte(text), Format: "mlir"} }

// HLO returns a program of a serialized HloModuleProto.
func HLO(code []byte) Program { return Program{Code: code, Format: "hlo"} }

// Executable is a compiled program loaded on a client's devices. It is
// safe for concurrent use.
type Executable struct {
	c        *Client
	b        backend.Executable
	compiled compiledDetails // queries of the compiled program (see details)

	g       guard      // Close releases b after the calls in progress
	mu      sync.Mutex // guards outputs
	outputs []backend.OutputInfo
}

// Compile compiles a program. opts may be nil for xla.DefaultCompileOptions
// (one replica, one partition). It first registers with the plugin the
// declared Go FFI handlers the program calls (DeclareFFIHandler). The
// built-in interpreter follows the program's own mhlo.num_replicas and
// mhlo.num_partitions when they are above 1 (nil options included) and
// refuses options that ask for other counts above 1; options asking for
// several replicas or partitions of a program that says 1 (as JAX writes
// for one device) run that many copies.
func (c *Client) Compile(p Program, opts *xla.CompileOptions) (*Executable, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	raw, err := compileInput("PJRT_Client_Compile", p, opts)
	if err != nil {
		return nil, err
	}
	if err := c.registerDeclared(p.Code); err != nil {
		return nil, err
	}
	b, err := c.b.Compile(p.Code, p.Format, raw)
	if err != nil {
		return nil, err
	}
	return c.newExecutable(b)
}

// compileInput checks program p for op and returns opts (the defaults when
// nil) serialized.
func compileInput(op string, p Program, opts *xla.CompileOptions) ([]byte, error) {
	if p.err != nil {
		return nil, &Error{Code: InvalidArgument, Op: op, Msg: p.err.Error(), cause: p.err}
	}
	if p.Format != "mlir" && p.Format != "hlo" {
		return nil, errorf(InvalidArgument, op, "program format %q: use \"mlir\" or \"hlo\"", p.Format)
	}
	if len(p.Code) == 0 {
		return nil, errorf(InvalidArgument, op, "empty program")
	}
	o := xla.DefaultCompileOptions()
	if opts != nil {
		o = *opts
	}
	raw, err := o.Marshal()
	if err != nil {
		return nil, errorf(InvalidArgument, op, "%v", err)
	}
	return raw, nil
}

// DeserializeAndLoad loads an executable from Executable.Serialize's bytes
// (of the same plugin and version), e.g. from an executable cache. opts,
// when not nil, overrides the compile options stored with it. It first
// registers every declared Go FFI handler with the plugin (the serialized
// form is the plugin's own: it cannot tell which ones the executable
// calls), so an executable that calls one loads as its compiled form ran.
func (c *Client) DeserializeAndLoad(data []byte, opts *xla.CompileOptions) (*Executable, error) {
	const op = "PJRT_Executable_DeserializeAndLoad"
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	var raw []byte
	if opts != nil {
		var err error
		if raw, err = opts.Marshal(); err != nil {
			return nil, errorf(InvalidArgument, op, "%v", err)
		}
	}
	if err := c.registerDeclared(nil); err != nil {
		return nil, err
	}
	b, err := c.b.DeserializeAndLoad(data, raw)
	if err != nil {
		return nil, err
	}
	return c.newExecutable(b)
}

func (c *Client) newExecutable(b backend.Executable) (*Executable, error) {
	if err := c.track(b); err != nil {
		return nil, err
	}
	e := &Executable{c: c, b: b, g: guard{c: c, x: b}}
	e.compiled = compiledDetails{enter: e.enter, exit: e.exit, prog: b, plugin: c.plugin}
	runtime.AddCleanup(e, func(b backend.Executable) { c.release(b) }, b)
	return e, nil
}

// enter begins a call on the executable (ErrClosed once it or its client
// is closed); exit must follow.
func (e *Executable) enter() error {
	if e == nil {
		return errorf(InvalidArgument, "Executable", "executable is nil")
	}
	return e.g.enter()
}

// exit ends a call begun by enter.
func (e *Executable) exit() { e.g.exit() }

// Output describes one output of an executable (the same on every device).
type Output struct {
	Shape      xla.Shape
	MemoryKind string
}

// Outputs describes the outputs each device produces.
func (e *Executable) Outputs() ([]Output, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.exit()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.outputs == nil {
		outs, err := e.b.Outputs()
		if err != nil {
			return nil, err
		}
		e.outputs = outs
	}
	return outputsOf(e.outputs), nil
}

// AddressableDevices are the devices Execute runs on, in argument-list order.
func (e *Executable) AddressableDevices() []*Device {
	if e == nil {
		return nil
	}
	var out []*Device
	for _, d := range e.b.AddressableDevices() {
		out = append(out, e.c.lookupDevice(d))
	}
	return out
}

// ExecuteOptions are the options of one execution.
type ExecuteOptions struct {
	// LaunchID identifies the launch across processes (for collectives).
	LaunchID int
	// NonDonatable lists argument indices that must not be donated even
	// if the program aliases them to outputs.
	NonDonatable []int
	// CompletionEvents asks for one event per device that fires when the
	// device has finished the execution (including its side effects).
	CompletionEvents bool
	// Context carries per-execution data (FFI user data); may be nil.
	Context *ExecuteContext
	// Device runs a single-device (portable) executable on this device.
	Device *Device
}

// Execution is the result of Execute: buffers that become ready
// asynchronously, and per-device completion events when asked for.
type Execution struct {
	// Outputs[d][i] is output i of the d-th device.
	Outputs [][]*Buffer
	// Completion[d] fires when device d has finished (nil unless asked for).
	Completion []*Event
}

// Execute runs the executable. args[d] are the arguments of the d-th
// addressable device, or the one list of opts.Device's (which an
// executable without addressable devices, a portable one, needs). It
// returns at once; wait on the outputs (Buffer.Await) or the completion
// events. It is safe to call from many goroutines at once.
func (e *Executable) Execute(args [][]*Buffer, opts ExecuteOptions) (*Execution, error) {
	if err := e.enter(); err != nil {
		return nil, err
	}
	defer e.exit()
	nDev := len(e.b.AddressableDevices())
	if opts.Device != nil {
		if opts.Device.c != e.c {
			return nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "execute device belongs to another client")
		}
		nDev = 1
	}
	if len(args) != nDev || nDev == 0 {
		return nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "%s", argListsError(len(args), nDev))
	}
	for d, list := range args {
		if len(list) != len(args[0]) {
			return nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "device %d has %d arguments, device 0 has %d: every device takes the same number", d, len(list), len(args[0]))
		}
	}
	bargs := make([][]backend.Buffer, len(args))
	// The arguments are in use until the call returns: a Close meanwhile
	// waits for it.
	entered := 0
	defer func() {
		for _, list := range args {
			for _, b := range list {
				if entered == 0 {
					return
				}
				entered--
				b.exit()
			}
		}
	}()
	for d, list := range args {
		bargs[d] = make([]backend.Buffer, len(list))
		for i, b := range list {
			if b == nil {
				return nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "argument %d of device %d is nil", i, d)
			}
			if b.c != e.c {
				return nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "argument %d of device %d belongs to another client", i, d)
			}
			if err := b.enter(); err != nil {
				return nil, fmt.Errorf("pjrt: argument %d of device %d: %w", i, d, err)
			}
			entered++
			bargs[d][i] = b.b
		}
	}
	for _, i := range opts.NonDonatable {
		if len(args) > 0 && (i < 0 || i >= len(args[0])) {
			return nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "non-donatable argument %d: the call has %d arguments", i, len(args[0]))
		}
	}
	var held *ExecuteContext // holds its context until the execution's events fire
	bo := backend.ExecuteOptions{
		LaunchID:             opts.LaunchID,
		NonDonatableArgs:     opts.NonDonatable,
		WantCompletionEvents: opts.CompletionEvents,
	}
	if opts.Context != nil {
		if err := opts.Context.enter(); err != nil {
			return nil, fmt.Errorf("pjrt: execute context: %w", err)
		}
		defer opts.Context.exit()
		if opts.Context.c != e.c {
			return nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "the execute context belongs to another client")
		}
		bo.Context = opts.Context.b
		// The plugin reads the context until the computation has
		// finished, after Execute returns: completion events say when,
		// and neither Close nor the garbage collector releases the
		// context before.
		if !opts.Context.g.hold() {
			return nil, fmt.Errorf("pjrt: execute context: %w", ErrClosed)
		}
		// Given up here unless the execution's events take it over.
		defer func() {
			if held != nil {
				held.g.leave()
			}
		}()
		held = opts.Context
		bo.WantCompletionEvents = true
	}
	if opts.Device != nil {
		bo.ExecuteDevice = opts.Device.b
	}
	outs, events, err := e.b.Execute(bargs, bo)
	runtime.KeepAlive(args)
	if err != nil {
		return nil, err
	}
	x := &Execution{Outputs: make([][]*Buffer, len(outs))}
	for d, list := range outs {
		x.Outputs[d] = make([]*Buffer, len(list))
		for i, b := range list {
			w, err := e.c.newBuffer(b)
			if err != nil {
				// The client closed during the run (newBuffer closed b):
				// release the outputs wrapped so far, close the rest.
				for d2, list := range outs {
					for i2, b2 := range list {
						switch {
						case d2 < d || d2 == d && i2 < i:
							e.c.release(b2)
						case d2 > d || i2 > i:
							b2.Close()
						}
					}
				}
				return nil, err
			}
			x.Outputs[d][i] = w
		}
	}
	if held != nil && len(events) > 0 {
		held.holdUntil(events)
		held = nil
	}
	if opts.CompletionEvents {
		for _, ev := range events {
			x.Completion = append(x.Completion, newEvent(e.c, ev))
		}
	}
	return x, nil
}

// Run executes on a single device with the given arguments and returns
// its outputs (ready asynchronously). An executable for several devices
// (replicas or partitions) runs with Execute, one argument list per device;
// one without addressable devices of its own (portable) runs with Execute
// and ExecuteOptions.Device.
func (e *Executable) Run(args ...*Buffer) ([]*Buffer, error) {
	x, err := e.Execute([][]*Buffer{args}, ExecuteOptions{})
	if err != nil {
		return nil, err
	}
	return x.Outputs[0], nil
}

// argListsError says why Execute cannot run lists argument lists on an
// executable of devices addressable devices (none: it needs
// ExecuteOptions.Device), and what to pass instead. One argument list,
// Run's, is a call meant for one device.
func argListsError(lists, devices int) string {
	switch {
	case devices == 0:
		return "the executable has no addressable devices (a portable executable, or one for devices of other processes): " +
			"name the device to run it on in ExecuteOptions.Device and pass Executable.Execute one argument list"
	case lists == 1:
		return fmt.Sprintf("Run, and Execute with one argument list, run an executable on one device; this one runs on %d (its replicas x partitions): "+
			"use Executable.Execute with one argument list per device", devices)
	}
	return fmt.Sprintf("%d argument lists for %d devices: pass one per device, in AddressableDevices order", lists, devices)
}

// Close releases the executable. It is idempotent.
func (e *Executable) Close() error {
	if e == nil {
		return nil // as Buffer.Close: a failed Compile's nil closes
	}
	return e.g.close()
}

// ExecuteContext carries per-execution data to a plugin (PJRT_ExecuteContext),
// e.g. FFI user data for host callbacks.
type ExecuteContext struct {
	c *Client
	b backend.ExecuteContext
	g guard // Close releases b after the executions using it finished

	hmu      sync.Mutex        // guards pending and draining
	pending  [][]backend.Event // completion events of executions holding the context
	draining bool              // a goroutine runs drain
}

// contextMaker is implemented by backends that support execute contexts.
type contextMaker interface {
	NewExecuteContext() (backend.ExecuteContext, error)
}

// NewExecuteContext creates an execute context, if the backend has them.
func (c *Client) NewExecuteContext() (*ExecuteContext, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	m, ok := c.b.(contextMaker)
	if !ok {
		return nil, errorf(Unimplemented, "PJRT_ExecuteContext_Create", "backend %s has no execute contexts", c.plugin.Name())
	}
	x, err := m.NewExecuteContext()
	if err != nil {
		return nil, err
	}
	if err := c.track(x); err != nil {
		return nil, err
	}
	w := &ExecuteContext{c: c, b: x, g: guard{c: c, x: x}}
	runtime.AddCleanup(w, func(x backend.ExecuteContext) { c.release(x) }, x)
	return w, nil
}

// holdUntil keeps the hold Execute took on the context until events have
// fired: one goroutine a context works through its executions' events in
// order, started when there are some (not one a dispatch).
func (x *ExecuteContext) holdUntil(events []backend.Event) {
	x.hmu.Lock()
	x.pending = append(x.pending, events)
	start := !x.draining
	x.draining = true
	x.hmu.Unlock()
	if start {
		go x.drain()
	}
}

// drain waits for the pending executions' events in turn, ending each one's
// hold, until none is left.
func (x *ExecuteContext) drain() {
	for {
		x.hmu.Lock()
		if len(x.pending) == 0 {
			x.pending, x.draining = nil, false
			x.hmu.Unlock()
			return
		}
		events := x.pending[0]
		x.pending[0] = nil
		x.pending = x.pending[1:]
		x.hmu.Unlock()
		for _, ev := range events {
			<-ev.Done()
		}
		x.g.leave()
	}
}

// Close releases the context, once the computations that use it have
// finished. It is idempotent.
func (x *ExecuteContext) Close() error {
	if x == nil {
		return nil
	}
	return x.g.close()
}

// enter begins a call using the context; exit must follow.
func (x *ExecuteContext) enter() error {
	if x == nil {
		return errorf(InvalidArgument, "ExecuteContext", "execute context is nil")
	}
	return x.g.enter()
}

// exit ends a call begun by enter.
func (x *ExecuteContext) exit() { x.g.exit() }
