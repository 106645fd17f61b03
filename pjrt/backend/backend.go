// Package backend defines what a pjrt backend implements, the way
// database/sql/driver does for database/sql. halo has two: C plugins loaded
// through purego (in package pjrt) and the built-in interpreter. Users never
// call these interfaces; package pjrt wraps them with argument checks,
// use-after-close errors and context-aware waiting.
//
// Implementations must be safe for concurrent use. Errors should carry a
// PJRT error code where one applies: *pjrt.Error values, or errors made
// with Errorf by backends that cannot import pjrt (backends may return any
// error; pjrt passes it through).
package backend

import (
	"fmt"

	"github.com/halo-ml/halo/xla"
)

// CodedError is an error that carries a PJRT error code (the absl status
// codes of pjrt.Code). Built-in backends, which cannot import package
// pjrt, make them with Errorf.
type CodedError interface {
	error
	PJRTCode() int
}

// errorConstructor makes the errors of Errorf and Wrapf; package pjrt
// installs one that returns *pjrt.Error.
var errorConstructor func(code int, op, msg string, cause error) error

// SetErrorConstructor is called once by package pjrt (at init) so that
// Errorf returns *pjrt.Error values, which work with errors.Is against
// pjrt's code sentinels and errors.As(&*pjrt.Error). cause is Wrapf's
// (nil for Errorf): the error's Unwrap returns it.
func SetErrorConstructor(f func(code int, op, msg string, cause error) error) { errorConstructor = f }

// Errorf returns an error with a PJRT code, the PJRT call it concerns
// (e.g. "PJRT_Client_Compile") and a formatted message: a *pjrt.Error when
// package pjrt is linked in, else a CodedError.
func Errorf(code int, op, format string, args ...any) error {
	return Wrapf(code, op, nil, format, args...)
}

// Wrapf is Errorf for an error caused by cause (a Go backend's own error,
// such as an interpreter kernel's): errors.Is and errors.As find cause and
// what it wraps through the returned error.
func Wrapf(code int, op string, cause error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if f := errorConstructor; f != nil {
		return f(code, op, msg, cause)
	}
	return &codedError{code: code, op: op, msg: msg, cause: cause}
}

type codedError struct {
	code    int
	op, msg string
	cause   error
}

func (e *codedError) Error() string { return fmt.Sprintf("pjrt: %s: code %d: %s", e.op, e.code, e.msg) }
func (e *codedError) PJRTCode() int { return e.code }
func (e *codedError) Unwrap() error { return e.cause }

// NamedValue is a typed option or attribute (PJRT_NamedValue). Value is one
// of string, int64, []int64, float32 or bool.
type NamedValue struct {
	Name  string
	Value any
}

// Opener opens a backend registered by name (see pjrt.Register).
type Opener func() (Plugin, error)

// Plugin is a loaded backend.
type Plugin interface {
	// Version is the PJRT C API version the backend implements.
	Version() (major, minor int)
	// Attributes are the plugin attributes (xla_version, stablehlo_current_version ...).
	Attributes() []NamedValue
	// NewClient creates a client with the given options.
	NewClient(options []NamedValue) (Client, error)
}

// HostBufferSemantics says how long the backend may read the host data of
// BufferFromHost, as PJRT_HostBufferSemantics does.
type HostBufferSemantics int

// The host-buffer semantics of PJRT.
const (
	// ImmutableOnlyDuringCall: the data is copied before BufferFromHost returns.
	ImmutableOnlyDuringCall HostBufferSemantics = iota
	// ImmutableUntilTransferCompletes: the data is read until the done event fires.
	ImmutableUntilTransferCompletes
	// ImmutableZeroCopy: the buffer may alias the data for its whole life.
	ImmutableZeroCopy
	// MutableZeroCopy: as ImmutableZeroCopy, and the device may write it.
	MutableZeroCopy
)

// HostBuffer describes host data to transfer: Data holds the elements
// (Shape.HostBytes bytes for dense row-major data). ByteStrides, when not
// nil, gives the distance in bytes between consecutive indices of each dim.
type HostBuffer struct {
	Data        []byte
	Shape       xla.Shape
	ByteStrides []int64
	Semantics   HostBufferSemantics
}

// Client is a backend client.
type Client interface {
	PlatformName() string
	PlatformVersion() string
	ProcessIndex() int
	Devices() []Device
	AddressableDevices() []Device
	AddressableMemories() []Memory
	LookupDevice(id int) (Device, error)
	// BufferFromHost transfers data to dev (or to mem when mem is not nil).
	// done fires when the backend no longer reads h.Data.
	BufferFromHost(h HostBuffer, dev Device, mem Memory) (buf Buffer, done Event, err error)
	// Compile compiles a program; format is "mlir" or "hlo"; options is a
	// serialized CompileOptionsProto.
	Compile(code []byte, format string, options []byte) (Executable, error)
	// DeserializeAndLoad loads an executable produced by Executable.Serialize.
	DeserializeAndLoad(data []byte, options []byte) (Executable, error)
	// DefaultDeviceAssignment returns device ids, replica-major.
	DefaultDeviceAssignment(replicas, partitions int) ([]int, error)
	Close() error
}

// Device is one device of a client.
type Device interface {
	ID() int
	ProcessIndex() int
	Kind() string
	DebugString() string
	String() string
	Attributes() []NamedValue
	IsAddressable() bool
	LocalHardwareID() int
	Memories() []Memory
	DefaultMemory() (Memory, error)
}

// Memory is a memory space reachable by devices.
type Memory interface {
	ID() int
	Kind() string
	KindID() int
	DebugString() string
	String() string
	Devices() []Device
}

// Buffer is an array on a device.
type Buffer interface {
	DType() xla.DType
	Dims() []int64
	OnDeviceSize() (int64, error)
	Device() Device
	Memory() Memory
	// HostSize is the number of bytes ToHost needs for dense row-major data.
	HostSize() (int64, error)
	// ToHost copies the buffer into dst; done fires when dst is written.
	ToHost(dst []byte) (done Event, err error)
	CopyToDevice(dev Device) (Buffer, error)
	CopyToMemory(mem Memory) (Buffer, error)
	// ReadyEvent fires when the buffer's data is computed (with its error).
	ReadyEvent() (Event, error)
	// Delete frees the device memory; the handle stays valid.
	Delete() error
	IsDeleted() bool
	// Close deletes and destroys the buffer handle.
	Close() error
}

// Event is the completion of asynchronous work.
type Event interface {
	// Done is closed when the work has finished.
	Done() <-chan struct{}
	// Err is the work's error; valid once Done is closed.
	Err() error
}

// OutputInfo describes one output of an executable.
type OutputInfo struct {
	Shape      xla.Shape
	MemoryKind string
}

// ExecuteOptions are the options of one Execute call.
type ExecuteOptions struct {
	LaunchID             int
	NonDonatableArgs     []int
	WantCompletionEvents bool
	Context              ExecuteContext // may be nil
	ExecuteDevice        Device         // run on this device only (portable executables)
}

// ExecuteContext carries per-execution data (FFI user data) to a backend.
// Backends define what they accept; nil means none.
type ExecuteContext interface{ Close() error }

// Executable is a compiled, loaded program.
type Executable interface {
	Name() (string, error)
	NumReplicas() (int, error)
	NumPartitions() (int, error)
	Outputs() ([]OutputInfo, error)
	AddressableDevices() []Device
	Fingerprint() (string, error)
	Serialize() ([]byte, error)
	// Execute runs the program. args[d] are the arguments for the d-th
	// addressable device (or for ExecuteDevice). It returns at once:
	// outputs[d][i] are buffers whose ReadyEvent reports completion, and
	// completion[d] (when asked for) fires when device d has finished.
	Execute(args [][]Buffer, opts ExecuteOptions) (outputs [][]Buffer, completion []Event, err error)
	Close() error
}
