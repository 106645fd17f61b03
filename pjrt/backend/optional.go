package backend

import (
	"io"
	"unsafe"

	"github.com/halo-ml/halo/xla"
)

// Optional interfaces. Like database/sql/driver's Pinger or Execer, each is
// implemented by the backend objects that support a feature; package pjrt
// type-asserts and returns an Unimplemented *pjrt.Error naming the feature
// when an object does not. The C-plugin backend implements all of them and
// reports, per call, an Unimplemented error when the loaded plugin lacks the
// PJRT function.

// ---- Plugin ----

// ExtensionLister is implemented by plugins that report their PJRT
// extensions ("FFI", "Gpu_Custom_Call", "Layouts" ...).
type ExtensionLister interface {
	Extensions() []string
}

// EventCreator is implemented by plugins that make events the caller
// completes (PJRT_Event_Create / PJRT_Event_Set).
type EventCreator interface {
	NewUserEvent() (UserEvent, error)
}

// UserEvent is an event created by the caller and completed with Set.
type UserEvent interface {
	Event
	// Set completes the event: code 0 is success, else an error code and message.
	Set(code int, msg string) error
	// Handle is the backend's handle of the event (a PJRT_Event* for C plugins).
	Handle() uintptr
	Close() error
}

// TopologyCreator is implemented by plugins that describe topologies
// without a client (PJRT_TopologyDescription_Create / _Deserialize).
type TopologyCreator interface {
	NewTopology(name string, options []NamedValue) (Topology, error)
	DeserializeTopology(data []byte) (Topology, error)
}

// Topology describes the devices of a platform, with or without a client.
type Topology interface {
	PlatformName() (string, error)
	PlatformVersion() (string, error)
	DeviceDescriptions() ([]DeviceDescription, error)
	Attributes() ([]NamedValue, error)
	Serialize() ([]byte, error)
	Fingerprint() (uint64, error)
	MemoryKindIDs() ([]int, error)
	// CanonicalShape returns a serialized xla.ShapeProto of shape in the
	// memory space of the given kind.
	CanonicalShape(kindID int, shape xla.Shape) ([]byte, error)
	// DefaultLayout is the serialized default layout of shape (Layouts extension).
	DefaultLayout(shape xla.Shape) ([]byte, error)
	// Compile compiles without loading (PJRT_Compile); client may be nil.
	Compile(code []byte, format string, options []byte, client Client) (CompiledProgram, error)
	Close() error
}

// DeviceDescription describes one device of a topology.
type DeviceDescription struct {
	ID           int
	ProcessIndex int
	Kind         string
	DebugString  string
	String       string
	Attributes   []NamedValue
	// Memories are the device's memory spaces (MemoryDescriptions
	// extension; nil without it).
	Memories []MemoryDescription
}

// MemoryDescription is a memory space of a device description.
type MemoryDescription struct {
	Kind    string
	KindID  int
	Default bool
}

// CompiledProgram is a compiled executable that is not loaded on a client
// (a PJRT_Executable).
type CompiledProgram interface {
	Name() (string, error)
	NumReplicas() (int, error)
	NumPartitions() (int, error)
	Outputs() ([]OutputInfo, error)
	Fingerprint() (string, error)
	Serialize() ([]byte, error)
	Close() error
}

// FFIRegistrar is implemented by plugins with the PJRT FFI extension (or
// the GPU custom-call extension for typed FFI handlers).
type FFIRegistrar interface {
	// RegisterFFIHandler registers h as the typed FFI handler of target on
	// platform.
	RegisterFFIHandler(target, platform string, h FFIHandler, traits uint32) error
	// RegisterFFIType registers a user-data type and returns its id.
	RegisterFFIType(name string) (int64, error)
}

// GPUCustomCallRegistrar is implemented by plugins with the GPU custom-call
// extension.
type GPUCustomCallRegistrar interface {
	RegisterGPUCustomCall(name string, apiVersion int, h GPUCustomCallHandlers) error
}

// GPUCustomCallHandlers are C function pointers of a GPU custom call: for
// api_version 1 XLA_FFI_Handler pointers per execution stage; for
// api_version 0 Execute is the legacy custom-call function.
type GPUCustomCallHandlers struct {
	Instantiate, Prepare, Initialize, Execute uintptr
}

// ---- Client ----

// AddressableDeviceLookup is implemented by clients that find devices by
// their local hardware id.
type AddressableDeviceLookup interface {
	LookupAddressableDevice(localHardwareID int) (Device, error)
}

// ReadyWaiter is implemented by buffers that can block the calling thread
// until their data is ready (PJRT_Event_Await), which wakes a waiter
// sooner than a completion callback does. ReadyWait takes the buffer's
// ready event; the wait it returns blocks on it (it cannot be cancelled,
// and it no longer uses the buffer: the buffer may be released meanwhile).
type ReadyWaiter interface {
	ReadyWait() (wait func() error, err error)
}

// HostCopyWaiter is implemented by buffers that can copy their data to
// host memory and block the calling thread until it is written
// (PJRT_Event_Await on the copy's event). ToHostStart starts the copy; the
// wait it returns blocks until dst is written (as ReadyWait's).
type HostCopyWaiter interface {
	ToHostStart(dst []byte) (wait func() error, err error)
}

// BufferCreator is implemented by clients that make buffers without host data.
type BufferCreator interface {
	// CreateUninitializedBuffer allocates a buffer on dev (or in mem).
	CreateUninitializedBuffer(shape xla.Shape, dev Device, mem Memory) (Buffer, error)
	// CreateErrorBuffer makes a buffer whose readiness carries an error.
	CreateErrorBuffer(shape xla.Shape, mem Memory, code int, msg string) (Buffer, error)
	// CreateViewOfDeviceBuffer wraps existing device memory; onDelete (may
	// be nil) runs when the backend no longer uses it.
	CreateViewOfDeviceBuffer(ptr uintptr, shape xla.Shape, dev Device, mem Memory, onDelete func()) (Buffer, error)
}

// AliasBufferCreator is implemented by clients that make a buffer now and
// provide its data later (PJRT_Client_CreateAliasBuffer).
type AliasBufferCreator interface {
	CreateAliasBuffer(shape xla.Shape, mem Memory) (Buffer, AliasFulfiller, error)
}

// AliasFulfiller completes an alias buffer once: with src's data, or with
// an error (code != 0).
type AliasFulfiller interface {
	Fulfill(src Buffer, code int, msg string) error
}

// TopologyGetter is implemented by clients that describe their topology.
type TopologyGetter interface {
	Topology() (Topology, error)
}

// ProgramLoader is implemented by clients that load a CompiledProgram.
type ProgramLoader interface {
	Load(p CompiledProgram, options []byte) (Executable, error)
}

// DMAMapper is implemented by clients that register host memory for DMA.
type DMAMapper interface {
	DMAMap(data []byte) error
	DMAUnmap(data []byte) error
}

// ProcessInfo is the state of one process of a multi-process job.
type ProcessInfo struct {
	TaskID        int
	IncarnationID uint64
	State         int // PJRT_ProcessState
	ErrorCode     int
	ErrorMessage  string
}

// ProcessInfoUpdater is implemented by clients of multi-process jobs.
type ProcessInfoUpdater interface {
	UpdateGlobalProcessInfo(infos []ProcessInfo) error
}

// AsyncTransferCreator is implemented by clients that fill buffers from the
// host in pieces (PJRT_Client_CreateBuffersForAsyncHostToDevice).
type AsyncTransferCreator interface {
	NewAsyncTransfer(shapes []xla.Shape, mem Memory) (AsyncTransfer, error)
}

// AsyncTransfer fills the buffers of an async host-to-device transfer.
type AsyncTransfer interface {
	Device() (Device, error)
	BufferCount() (int, error)
	BufferSize(i int) (int64, error)
	// TransferData copies data to buffer i at offset; done fires when the
	// backend no longer reads data.
	TransferData(i int, data []byte, offset int64, last bool) (done Event, err error)
	// TransferLiteral copies a whole array of the buffer's shape.
	TransferLiteral(i int, data []byte, shape xla.Shape) (done Event, err error)
	SetBufferError(i int, code int, msg string) error
	AddMetadata(md []NamedValue) error
	// Buffer hands buffer i to the caller (once per index).
	Buffer(i int) (Buffer, error)
	Close() error
}

// DefaultLayouter is implemented by clients that report default layouts
// (Layouts extension).
type DefaultLayouter interface {
	DefaultLayout(shape xla.Shape) ([]byte, error)
}

// ---- Device ----

// MemoryStats are a device's allocator statistics; a field whose Has flag
// is false was not reported.
type MemoryStats struct {
	BytesInUse                     int64
	PeakBytesInUse                 int64
	HasPeakBytesInUse              bool
	NumAllocs                      int64
	HasNumAllocs                   bool
	LargestAllocSize               int64
	HasLargestAllocSize            bool
	BytesLimit                     int64
	HasBytesLimit                  bool
	BytesReserved                  int64
	HasBytesReserved               bool
	PeakBytesReserved              int64
	HasPeakBytesReserved           bool
	BytesReservableLimit           int64
	HasBytesReservableLimit        bool
	LargestFreeBlockBytes          int64
	HasLargestFreeBlockBytes       bool
	PoolBytes, PeakPoolBytes       int64
	HasPoolBytes, HasPeakPoolBytes bool
	PeakAllocatedBytes             int64
	HasPeakAllocatedBytes          bool
}

// DeviceStats is implemented by devices that report memory statistics.
type DeviceStats interface {
	MemoryStats() (MemoryStats, error)
	ClearMemoryStats() error
}

// DeviceLiveAttributes is implemented by devices whose attributes can be
// read again at any time (PJRT_Device_GetAttributes).
type DeviceLiveAttributes interface {
	CurrentAttributes() ([]NamedValue, error)
}

// DevicePoisoner is implemented by devices that can fail a pending
// execution by launch id.
type DevicePoisoner interface {
	PoisonExecution(launchID int, code int, msg string) (bool, error)
}

// AsyncTrackingEventCreator is implemented by devices that create tracking
// events for profilers.
type AsyncTrackingEventCreator interface {
	CreateAsyncTrackingEvent(description string) (io.Closer, error)
}

// DeviceMemoryDescriber is implemented by devices that describe their
// memory spaces (MemoryDescriptions extension).
type DeviceMemoryDescriber interface {
	MemoryDescriptions() ([]MemoryDescription, error)
}

// ---- Buffer ----

// Layout is a buffer's memory layout: tiled (MinorToMajor, Tiles) or
// strided (ByteStrides).
type Layout struct {
	MinorToMajor []int64
	Tiles        [][]int64
	ByteStrides  []int64
}

// BufferInfo is implemented by buffers that report layout details.
type BufferInfo interface {
	UnpaddedDims() ([]int64, error)
	DynamicDims() ([]int, error)
	Layout() (Layout, error)
	IsOnCPU() (bool, error)
	// SerializedLayout is the layout as the Layouts extension serializes it.
	SerializedLayout() ([]byte, error)
}

// BufferPointers is implemented by buffers that expose their memory.
type BufferPointers interface {
	UnsafePointer() (uintptr, error)
	DeviceMemoryPointer() (uintptr, error)
}

// BufferExternalRefs is implemented by buffers with external reference counts.
type BufferExternalRefs interface {
	IncreaseExternalReferenceCount() error
	DecreaseExternalReferenceCount() error
}

// BufferRawCopier is implemented by buffers that copy raw bytes to the host.
type BufferRawCopier interface {
	// CopyRawToHost copies len(dst) bytes from offset; done fires when dst
	// is written.
	CopyRawToHost(dst []byte, offset int64) (done Event, err error)
	// CopyRawToHostFuture starts a copy whose destination comes later.
	CopyRawToHostFuture(offset, size int64) (done Event, provide func(dst []byte, code int, msg string) error, err error)
}

// BufferBitcaster is implemented by buffers that can be viewed as another
// shape of the same size.
type BufferBitcaster interface {
	Bitcast(shape xla.Shape) (Buffer, error)
}

// BufferDonator is implemented by buffers that can be donated to a new
// buffer that becomes ready only once a dependency is (the returned
// function, called once).
type BufferDonator interface {
	DonateWithControlDependency() (Buffer, func(code int, msg string) error, error)
}

// ---- Executable ----

// CompiledMemoryStats are the memory sizes of a compiled executable.
type CompiledMemoryStats struct {
	GeneratedCodeSizeInBytes, ArgumentSizeInBytes, OutputSizeInBytes   int64
	AliasSizeInBytes, TempSizeInBytes                                  int64
	HostGeneratedCodeSizeInBytes, HostArgumentSizeInBytes              int64
	HostOutputSizeInBytes, HostAliasSizeInBytes, HostTempSizeInBytes   int64
	PeakMemoryInBytes, TotalSizeInBytes                                int64
	TotalAllocationBytes, IndefiniteAllocations, PeakUnpaddedHeapBytes int64
}

// ExecutableDetails is implemented by executables (loaded or not) that
// report compilation details.
type ExecutableDetails interface {
	SizeOfGeneratedCode() (int64, error)
	CostAnalysis() ([]NamedValue, error)
	CompiledMemoryStats() (CompiledMemoryStats, error)
	// OptimizedProgram returns the program after optimization and its format.
	OptimizedProgram() ([]byte, string, error)
	// CompileOptions returns the serialized CompileOptionsProto.
	CompileOptions() ([]byte, error)
	ParameterMemoryKinds() ([]string, error)
	// OutputLayouts and ParameterLayouts are serialized layouts (Layouts extension).
	OutputLayouts() ([][]byte, error)
	ParameterLayouts() ([][]byte, error)
}

// LogicalDeviceID is the replica and partition a device runs.
type LogicalDeviceID struct{ Replica, Partition int }

// LoadedExecutableDetails is implemented by loaded executables that report
// their placement and can be deleted.
type LoadedExecutableDetails interface {
	Delete() error
	IsDeleted() (bool, error)
	// DeviceAssignment is a serialized xla.DeviceAssignmentProto.
	DeviceAssignment() ([]byte, error)
	LogicalDeviceIDs() ([]LogicalDeviceID, error)
}

// FFIUserDataAdder is implemented by execute contexts that carry FFI user data.
type FFIUserDataAdder interface {
	AddFFIUserData(typeID int64, data uintptr) error
}

// ---- FFI call frames ----

// FFIHandler is a Go function called by a backend for a typed-FFI custom call.
type FFIHandler func(*FFICallFrame) error

// FFIBuffer is a buffer argument or result of an FFI call: its element
// type, dimensions and the address of its data (host memory on CPU
// backends, device memory on GPUs).
type FFIBuffer struct {
	DType xla.DType
	Dims  []int64
	Data  unsafe.Pointer
}

// Bytes views the buffer's data as bytes (dense row-major, one byte per
// element for sub-byte types). Only for host memory, and only during the
// handler call.
func (b FFIBuffer) Bytes() []byte {
	if b.Data == nil {
		return nil
	}
	n := xla.Shape{DType: b.DType, Dims: b.Dims}.HostBytes()
	if n <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(b.Data), n)
}

// FFIContext is what a backend offers a handler during a call.
type FFIContext interface {
	UserData(typeID int64) (uintptr, error)
	DeviceOrdinal() (int, error)
	RunID() (int64, error)
	Stream() (uintptr, error)
}

// FFICallFrame is the typed view of one FFI call. It and its buffers are
// valid only during the handler call.
type FFICallFrame struct {
	// Stage is the execution stage (0 instantiate, 1 prepare, 2 initialize,
	// 3 execute).
	Stage int
	Args  []FFIBuffer
	Rets  []FFIBuffer
	// Attrs are the custom call's attributes: integers as int8..int64 /
	// uint8..uint64, floats as float32/float64, bool, string, slices of
	// those for arrays, map[string]any for dictionaries.
	Attrs map[string]any
	// Context reaches the backend's execution context (may be nil).
	Context FFIContext
}

// UserData returns the user data of the given type id that was added to
// the execute context.
func (f *FFICallFrame) UserData(typeID int64) (uintptr, error) {
	if f == nil || f.Context == nil {
		return 0, errNoContext
	}
	return f.Context.UserData(typeID)
}

type ffiError string

func (e ffiError) Error() string { return string(e) }

const errNoContext = ffiError("pjrt: the FFI call frame has no execution context")
