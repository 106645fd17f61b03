package pjrt

import (
	"fmt"
	"hash/fnv"
	"runtime/debug"

	"github.com/halo-ml/halo/pjrt/backend"
)

// FFIHandler is a Go function that implements a typed-FFI custom call
// (stablehlo.custom_call with api_version = 4). It runs on the plugin's
// threads, once per device and execution; a returned error fails the
// execution with the error's code (Internal for errors that are not
// *pjrt.Error or Code) and message, and a panic is recovered into such an
// error.
type FFIHandler = backend.FFIHandler

// FFICallFrame is the typed view of one call of an FFIHandler: stage,
// argument and result buffers, attributes, and the execution context
// (FFICallFrame.UserData, Context.DeviceOrdinal, RunID, Stream). It and
// its buffers are valid only during the call.
type FFICallFrame = backend.FFICallFrame

// FFIBuffer is a buffer argument or result of an FFI call: element type,
// dimensions and data address (host memory on CPU plugins, device memory
// on GPUs; FFIBuffer.Bytes views host memory).
type FFIBuffer = backend.FFIBuffer

// The execution stages of FFICallFrame.Stage. halo registers Go handlers
// for the execute stage only.
const (
	FFIStageInstantiate = 0
	FFIStagePrepare     = 1
	FFIStageInitialize  = 2
	FFIStageExecute     = 3
)

// FFITraits are XLA FFI handler traits.
type FFITraits uint32

// FFICommandBufferCompatible lets XLA record the handler into command
// buffers (CUDA graphs).
const FFICommandBufferCompatible FFITraits = 1

// FFICallbackAttr is the attribute through which a call reaches its Go
// handler. Every Go handler is registered with the same C function (one
// purego trampoline for the XLA_FFI_Handler signature), and XLA passes
// only the call frame, so a custom call to a Go handler must carry
//
//	halo.callback_id = <FFICallbackID(target)> : i64
//
// in its backend_config dictionary (api_version = 4); the trampoline looks
// the handler up by it.
const FFICallbackAttr = "halo.callback_id"

// FFICallbackID is the value of the FFICallbackAttr attribute for a
// target: a 63-bit FNV-1a hash of the target name, the same in every
// process, so a program can be built (and serialized) without asking the
// runtime.
func FFICallbackID(target string) int64 {
	h := fnv.New64a()
	h.Write([]byte(target))
	return int64(h.Sum64() &^ (1 << 63))
}

// RegisterFFIHandler registers a Go function as the typed-FFI handler of
// custom-call target on platform (the plugin's platform name as XLA spells
// it, e.g. "Host", "CUDA"; the conformance plugin accepts any). It uses
// the plugin's FFI extension, or, for plugins whose FFI extension predates
// handler registration, the GPU custom-call extension (api_version 1).
// XLA calls the handler once at registration with a metadata call frame;
// halo answers it (API version 0.3 or the plugin's lower one, and traits).
//
// Handlers are kept in one process-wide table keyed by FFICallbackID(target):
// registering a target again (on another plugin or platform) replaces its
// Go function for every plugin.
func (p *Plugin) RegisterFFIHandler(target, platform string, h FFIHandler, traits FFITraits) error {
	const op = "PJRT_FFI_Register_Handler"
	if err := p.check(); err != nil {
		return err
	}
	if target == "" {
		return errorf(InvalidArgument, op, "empty target name")
	}
	if h == nil {
		return errorf(InvalidArgument, op, "handler for %q is nil", target)
	}
	x, ok := p.b.(backend.FFIRegistrar)
	if !ok {
		return notSupported(op, "FFI handlers", p)
	}
	run := func(f *FFICallFrame) error {
		handlersRunning.Add(1)
		defer handlersRunning.Add(-1)
		return runHandler(target, h, f)
	}
	return x.RegisterFFIHandler(target, platform, run, uint32(traits))
}

// runHandler calls h on a goroutine of its own and returns its error, or
// an Internal error when it panicked or called runtime.Goexit (t.FailNow
// in a test, say): on the plugin's thread that would end the process (a
// C plugin's thread is not Go's) or the backend's worker, whose
// computation would then never finish.
func runHandler(target string, h FFIHandler, f *FFICallFrame) (err error) {
	done := make(chan struct{})
	go func() {
		returned := false
		defer func() {
			if r := recover(); r != nil {
				err = &Error{Code: Internal, Op: "FFI handler " + target,
					Msg: fmt.Sprintf("the Go handler for %q panicked: %v\n%s", target, r, debug.Stack())}
			} else if !returned {
				err = &Error{Code: Internal, Op: "FFI handler " + target,
					Msg: fmt.Sprintf("the Go handler for %q called runtime.Goexit instead of returning", target)}
			}
			close(done)
		}()
		err = h(f)
		returned = true
	}()
	<-done
	return err
}

// RegisterFFIType registers a user-data type by name (PJRT_FFI_Type_Register)
// and returns its type id, for ExecuteContext.AddFFIUserData and
// FFICallFrame.UserData. The same name gets the same id.
func (p *Plugin) RegisterFFIType(name string) (int64, error) {
	const op = "PJRT_FFI_Type_Register"
	if err := p.check(); err != nil {
		return 0, err
	}
	if name == "" {
		return 0, errorf(InvalidArgument, op, "empty type name")
	}
	x, ok := p.b.(backend.FFIRegistrar)
	if !ok {
		return 0, notSupported(op, "FFI types", p)
	}
	return x.RegisterFFIType(name)
}

// AddFFIUserData attaches user data of a registered type to the context;
// FFI handlers of executions run with the context read it with
// FFICallFrame.UserData(typeID). data is passed as is: an integer handle,
// or the address of memory (C memory, or pinned Go memory) that outlives
// the context. One datum per type id.
func (x *ExecuteContext) AddFFIUserData(typeID int64, data uintptr) error {
	const op = "PJRT_FFI_UserData_Add"
	if err := x.enter(); err != nil {
		return err
	}
	defer x.exit()
	a, ok := x.b.(backend.FFIUserDataAdder)
	if !ok {
		return notSupported(op, "FFI user data", x.c.plugin)
	}
	return a.AddFFIUserData(typeID, data)
}
