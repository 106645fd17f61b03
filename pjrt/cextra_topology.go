package pjrt

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// cTopology is a PJRT_TopologyDescription: owned by a client (never
// destroyed) or standalone.
type cTopology struct {
	p         *cPlugin
	h         uintptr
	owned     bool // destroy on Close
	closeOnce sync.Once
}

func (c *cClient) Topology() (backend.Topology, error) {
	a := &capi.PJRT_Client_TopologyDescription_Args{StructSize: capi.PJRT_Client_TopologyDescription_Args_STRUCT_SIZE, Client: c.h}
	if err := c.p.call(capi.SlotPJRT_Client_TopologyDescription, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return &cTopology{p: c.p, h: a.Topology}, nil
}

// NewTopology implements backend.TopologyCreator.
func (p *cPlugin) NewTopology(name string, options []backend.NamedValue) (backend.Topology, error) {
	var pin runtime.Pinner
	nv, err := makeNamedValues(options, &pin)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	nb, np := bytesArg(name, &pin)
	a := &capi.PJRT_TopologyDescription_Create_Args{
		StructSize:       capi.PJRT_TopologyDescription_Create_Args_STRUCT_SIZE,
		TopologyName:     np,
		TopologyNameSize: uint64(len(name)),
		CreateOptions:    nv.ptr(),
		NumOptions:       uint64(len(nv.vals)),
	}
	err = p.call(capi.SlotPJRT_TopologyDescription_Create, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(nv)
	runtime.KeepAlive(nb)
	if err != nil {
		return nil, err
	}
	return &cTopology{p: p, h: a.Topology, owned: true}, nil
}

// DeserializeTopology implements backend.TopologyCreator.
func (p *cPlugin) DeserializeTopology(data []byte) (backend.Topology, error) {
	var pin runtime.Pinner
	pin.Pin(&data[0])
	a := &capi.PJRT_TopologyDescription_Deserialize_Args{
		StructSize:             capi.PJRT_TopologyDescription_Deserialize_Args_STRUCT_SIZE,
		SerializedTopology:     uintptr(unsafe.Pointer(&data[0])),
		SerializedTopologySize: uint64(len(data)),
	}
	err := p.call(capi.SlotPJRT_TopologyDescription_Deserialize, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(data)
	if err != nil {
		return nil, err
	}
	return &cTopology{p: p, h: a.Topology, owned: true}, nil
}

func (t *cTopology) PlatformName() (string, error) {
	a := &capi.PJRT_TopologyDescription_PlatformName_Args{StructSize: capi.PJRT_TopologyDescription_PlatformName_Args_STRUCT_SIZE, Topology: t.h}
	if err := t.p.call(capi.SlotPJRT_TopologyDescription_PlatformName, unsafe.Pointer(a), nil); err != nil {
		return "", err
	}
	return goStringN(a.PlatformName, int(a.PlatformNameSize)), nil
}

func (t *cTopology) PlatformVersion() (string, error) {
	a := &capi.PJRT_TopologyDescription_PlatformVersion_Args{StructSize: capi.PJRT_TopologyDescription_PlatformVersion_Args_STRUCT_SIZE, Topology: t.h}
	if err := t.p.call(capi.SlotPJRT_TopologyDescription_PlatformVersion, unsafe.Pointer(a), nil); err != nil {
		return "", err
	}
	return goStringN(a.PlatformVersion, int(a.PlatformVersionSize)), nil
}

// readDeviceDescription reads a PJRT_DeviceDescription.
func (p *cPlugin) readDeviceDescription(desc uintptr) (backend.DeviceDescription, error) {
	var d backend.DeviceDescription
	id := &capi.PJRT_DeviceDescription_Id_Args{StructSize: capi.PJRT_DeviceDescription_Id_Args_STRUCT_SIZE, DeviceDescription: desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_Id, unsafe.Pointer(id), nil); err != nil {
		return d, err
	}
	d.ID = int(id.Id)
	pi := &capi.PJRT_DeviceDescription_ProcessIndex_Args{StructSize: capi.PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE, DeviceDescription: desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_ProcessIndex, unsafe.Pointer(pi), nil); err != nil {
		return d, err
	}
	d.ProcessIndex = int(pi.ProcessIndex)
	k := &capi.PJRT_DeviceDescription_Kind_Args{StructSize: capi.PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE, DeviceDescription: desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_Kind, unsafe.Pointer(k), nil); err != nil {
		return d, err
	}
	d.Kind = goStringN(k.DeviceKind, int(k.DeviceKindSize))
	ds := &capi.PJRT_DeviceDescription_DebugString_Args{StructSize: capi.PJRT_DeviceDescription_DebugString_Args_STRUCT_SIZE, DeviceDescription: desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_DebugString, unsafe.Pointer(ds), nil); err == nil {
		d.DebugString = goStringN(ds.DebugString, int(ds.DebugStringSize))
	}
	ts := &capi.PJRT_DeviceDescription_ToString_Args{StructSize: capi.PJRT_DeviceDescription_ToString_Args_STRUCT_SIZE, DeviceDescription: desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_ToString, unsafe.Pointer(ts), nil); err == nil {
		d.String = goStringN(ts.ToString, int(ts.ToStringSize))
	}
	at := &capi.PJRT_DeviceDescription_Attributes_Args{StructSize: capi.PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE, DeviceDescription: desc}
	if err := p.call(capi.SlotPJRT_DeviceDescription_Attributes, unsafe.Pointer(at), nil); err == nil {
		d.Attributes = readNamedValues(at.Attributes, int(at.NumAttributes))
	}
	if p.exts[capi.PJRT_Extension_Type_MemoryDescriptions] != 0 {
		if mds, err := p.memoryDescriptions(desc); err == nil {
			d.Memories = mds
		}
	}
	return d, nil
}

func (t *cTopology) DeviceDescriptions() ([]backend.DeviceDescription, error) {
	a := &capi.PJRT_TopologyDescription_GetDeviceDescriptions_Args{StructSize: capi.PJRT_TopologyDescription_GetDeviceDescriptions_Args_STRUCT_SIZE, Topology: t.h}
	if err := t.p.call(capi.SlotPJRT_TopologyDescription_GetDeviceDescriptions, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	var out []backend.DeviceDescription
	for _, desc := range ptrSlice(a.Descriptions, int(a.NumDescriptions)) {
		d, err := t.p.readDeviceDescription(desc)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (t *cTopology) Attributes() ([]backend.NamedValue, error) {
	a := &capi.PJRT_TopologyDescription_Attributes_Args{StructSize: capi.PJRT_TopologyDescription_Attributes_Args_STRUCT_SIZE, Topology: t.h}
	if err := t.p.call(capi.SlotPJRT_TopologyDescription_Attributes, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return readNamedValues(a.Attributes, int(a.NumAttributes)), nil
}

func (t *cTopology) Serialize() ([]byte, error) {
	a := &capi.PJRT_TopologyDescription_Serialize_Args{StructSize: capi.PJRT_TopologyDescription_Serialize_Args_STRUCT_SIZE, Topology: t.h}
	if err := t.p.call(capi.SlotPJRT_TopologyDescription_Serialize, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := []byte(goStringN(a.SerializedBytes, int(a.SerializedBytesSize)))
	if a.SerializedTopologyDeleter != 0 && a.SerializedTopology != 0 {
		callVoid(a.SerializedTopologyDeleter, a.SerializedTopology)
	}
	return out, nil
}

func (t *cTopology) Fingerprint() (uint64, error) {
	a := &capi.PJRT_TopologyDescription_Fingerprint_Args{StructSize: capi.PJRT_TopologyDescription_Fingerprint_Args_STRUCT_SIZE, Topology: t.h}
	if err := t.p.call(capi.SlotPJRT_TopologyDescription_Fingerprint, unsafe.Pointer(a), nil); err != nil {
		return 0, err
	}
	return a.Fingerprint, nil
}

func (t *cTopology) MemoryKindIDs() ([]int, error) {
	a := &capi.PJRT_TopologyDescription_GetMemorySpaceKindIds_Args{StructSize: capi.PJRT_TopologyDescription_GetMemorySpaceKindIds_Args_STRUCT_SIZE, Topology: t.h}
	if err := t.p.call(capi.SlotPJRT_TopologyDescription_GetMemorySpaceKindIds, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	out := []int{}
	if a.MemorySpaceKindIds != 0 && a.NumMemorySpaceKindIds > 0 {
		for _, id := range unsafe.Slice((*int32)(cptr(a.MemorySpaceKindIds)), int(a.NumMemorySpaceKindIds)) {
			out = append(out, int(id))
		}
	}
	return out, nil
}

func (t *cTopology) CanonicalShape(kindID int, shape xla.Shape) ([]byte, error) {
	const op = "PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace"
	var pin runtime.Pinner
	bt, dims, dp, err := shapeArgs(op, shape, &pin)
	if err != nil {
		pin.Unpin()
		return nil, err
	}
	a := &capi.PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args{
		StructSize:        capi.PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args_STRUCT_SIZE,
		Topology:          t.h,
		MemorySpaceKindId: int32(kindID),
		Dims:              dp,
		NumDims:           uint64(len(shape.Dims)),
		ElementType:       bt,
	}
	err = t.p.call(capi.SlotPJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(dims)
	if err != nil {
		return nil, err
	}
	out := []byte(goStringN(a.SerializedShape, int(a.SerializedShapeSize)))
	if a.SerializedShapeDeleter != 0 && a.SerializedShape != 0 {
		callVoid(a.SerializedShapeDeleter, a.SerializedShape)
	}
	return out, nil
}

func (t *cTopology) DefaultLayout(shape xla.Shape) ([]byte, error) {
	return t.p.defaultLayout(shape, 0, t.h)
}

func (t *cTopology) Compile(code []byte, format string, options []byte, client backend.Client) (backend.CompiledProgram, error) {
	var pin runtime.Pinner
	in := pinCompileInputs(&pin, code, format, options)
	a := &capi.PJRT_Compile_Args{
		StructSize:         capi.PJRT_Compile_Args_STRUCT_SIZE,
		Topology:           t.h,
		Program:            uintptr(unsafe.Pointer(in.prog)),
		CompileOptions:     in.options,
		CompileOptionsSize: uint64(len(options)),
	}
	if c, ok := client.(*cClient); ok && c != nil {
		a.Client = c.h
	}
	err := t.p.call(capi.SlotPJRT_Compile, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(in)
	if err != nil {
		return nil, err
	}
	return &cProgram{execDetails: execDetails{p: t.p, exec: a.Executable}}, nil
}

func (t *cTopology) Close() error {
	var err error
	t.closeOnce.Do(func() {
		if !t.owned {
			return
		}
		a := &capi.PJRT_TopologyDescription_Destroy_Args{StructSize: capi.PJRT_TopologyDescription_Destroy_Args_STRUCT_SIZE, Topology: t.h}
		err = t.p.call(capi.SlotPJRT_TopologyDescription_Destroy, unsafe.Pointer(a), nil)
	})
	return err
}

// cProgram is a PJRT_Executable made by PJRT_Compile.
type cProgram struct {
	execDetails
	closeOnce   sync.Once
	outputsOnce sync.Once
	outputs     []backend.OutputInfo
	outputsErr  error
}

func (e *cProgram) Outputs() ([]backend.OutputInfo, error) {
	e.outputsOnce.Do(func() { e.outputs, e.outputsErr = readExecOutputs(e.p, e.exec) })
	return e.outputs, e.outputsErr
}

func (e *cProgram) Fingerprint() (string, error) {
	a := &capi.PJRT_Executable_Fingerprint_Args{StructSize: capi.PJRT_Executable_Fingerprint_Args_STRUCT_SIZE, Executable: e.exec}
	if err := e.p.call(capi.SlotPJRT_Executable_Fingerprint, unsafe.Pointer(a), nil); err != nil {
		return "", err
	}
	return goStringN(a.ExecutableFingerprint, int(a.ExecutableFingerprintSize)), nil
}

func (e *cProgram) Close() error {
	var err error
	e.closeOnce.Do(func() {
		a := &capi.PJRT_Executable_Destroy_Args{StructSize: capi.PJRT_Executable_Destroy_Args_STRUCT_SIZE, Executable: e.exec}
		err = e.p.call(capi.SlotPJRT_Executable_Destroy, unsafe.Pointer(a), nil)
	})
	return err
}

// Load implements backend.ProgramLoader (PJRT_Client_Load).
func (c *cClient) Load(prog backend.CompiledProgram, options []byte) (backend.Executable, error) {
	cp, ok := prog.(*cProgram)
	if !ok || cp == nil || cp.p != c.p {
		return nil, errorf(InvalidArgument, "PJRT_Client_Load", "the executable was not compiled by this client's plugin")
	}
	var pin runtime.Pinner
	opts0 := append([]byte{0}, options...)
	pin.Pin(&opts0[0])
	a := &capi.PJRT_Client_Load_Args{StructSize: capi.PJRT_Client_Load_Args_STRUCT_SIZE, Client: c.h, Executable: cp.exec}
	if len(options) > 0 {
		a.CompileOptions = uintptr(unsafe.Pointer(&opts0[1]))
		a.CompileOptionsSize = uint64(len(options))
	}
	err := c.p.call(capi.SlotPJRT_Client_Load, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(opts0)
	if err != nil {
		return nil, err
	}
	return c.wrapExecutable(a.LoadedExecutable)
}
