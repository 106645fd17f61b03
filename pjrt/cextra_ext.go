package pjrt

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// Extensions implements backend.ExtensionLister: the extension chain's
// types without the PJRT_Extension_Type_ prefix, sorted.
func (p *cPlugin) Extensions() []string {
	out := make([]string, 0, len(p.exts))
	for t := range p.exts {
		out = append(out, strings.TrimPrefix(t.String(), "PJRT_Extension_Type_"))
	}
	sort.Strings(out)
	return out
}

// extSize is the struct_size the plugin reports for an extension.
func extSize(ext uintptr) uintptr {
	return uintptr((*capi.PJRT_Extension_Base)(cptr(ext)).StructSize)
}

// extField reads the function pointer at byte offset off of an extension
// struct, or 0 when the plugin's struct is too short to have it.
func extField(ext, off uintptr) uintptr {
	if ext == 0 || off+8 > extSize(ext) {
		return 0
	}
	return *(*uintptr)(cptr(ext + off))
}

// callExt calls an extension function of the PJRT_Error* (*)(Args*) kind,
// like call does for the PJRT_Api slots.
func (p *cPlugin) callExt(fn uintptr, name string, args unsafe.Pointer) error {
	if fn == 0 {
		return &Error{Code: Unimplemented, Op: name, Msg: fmt.Sprintf("%s is not provided by plugin %s", name, p.path)}
	}
	var pinner runtime.Pinner
	pinner.Pin(args)
	r, _, _ := purego.SyscallN(fn, uintptr(args))
	pinner.Unpin()
	if r == 0 {
		return nil
	}
	return p.takeError(r, name, name+"_Args", *(*uint64)(args))
}

// layouts returns the Layouts extension, or an Unimplemented error for op.
func (p *cPlugin) layouts(op string) (*capi.PJRT_Layouts_Extension, error) {
	ext := p.exts[capi.PJRT_Extension_Type_Layouts]
	if ext == 0 {
		return nil, &Error{Code: Unimplemented, Op: op, Msg: fmt.Sprintf("plugin %s has no Layouts extension", p.path)}
	}
	return (*capi.PJRT_Layouts_Extension)(cptr(ext)), nil
}

// layoutFn reads a function of the Layouts extension by field offset.
func (p *cPlugin) layoutFn(ext *capi.PJRT_Layouts_Extension, field *uintptr) uintptr {
	base := uintptr(unsafe.Pointer(ext))
	return extField(base, uintptr(unsafe.Pointer(field))-base)
}

// serializeLayout serializes a PJRT_Layouts_MemoryLayout and, when owned,
// destroys it.
func (p *cPlugin) serializeLayout(ext *capi.PJRT_Layouts_Extension, layout uintptr, owned bool) ([]byte, error) {
	if owned {
		defer func() {
			d := &capi.PJRT_Layouts_MemoryLayout_Destroy_Args{StructSize: capi.PJRT_Layouts_MemoryLayout_Destroy_Args_STRUCT_SIZE, Layout: layout}
			_ = p.callExt(p.layoutFn(ext, &ext.PJRT_Layouts_MemoryLayout_Destroy), "PJRT_Layouts_MemoryLayout_Destroy", unsafe.Pointer(d))
		}()
	}
	a := &capi.PJRT_Layouts_MemoryLayout_Serialize_Args{StructSize: capi.PJRT_Layouts_MemoryLayout_Serialize_Args_STRUCT_SIZE, Layout: layout}
	if err := p.callExt(p.layoutFn(ext, &ext.PJRT_Layouts_MemoryLayout_Serialize), "PJRT_Layouts_MemoryLayout_Serialize", unsafe.Pointer(a)); err != nil {
		return nil, err
	}
	out := []byte(goStringN(a.SerializedBytes, int(a.SerializedBytesSize)))
	if a.SerializedLayoutDeleter != 0 && a.SerializedLayout != 0 {
		callVoid(a.SerializedLayoutDeleter, a.SerializedLayout)
	}
	return out, nil
}

// defaultLayout asks the Layouts extension for the default layout of shape
// on a client or a topology (fn is the function, fill sets the handle).
func (p *cPlugin) defaultLayout(shape xla.Shape, client, topology uintptr) ([]byte, error) {
	op := "PJRT_Layouts_PJRT_Client_GetDefaultLayout"
	if topology != 0 {
		op = "PJRT_Layouts_PJRT_Topology_GetDefaultLayout"
	}
	ext, err := p.layouts(op)
	if err != nil {
		return nil, err
	}
	bt, ok := bufferTypes[shape.DType]
	if !ok {
		return nil, errorf(InvalidArgument, op, "element type %v has no PJRT buffer type", shape.DType)
	}
	var pin runtime.Pinner
	dims, dp := dimsArg(shape.Dims, &pin)
	defer pin.Unpin()
	var layout uintptr
	if topology != 0 {
		a := &capi.PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args{StructSize: capi.PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args_STRUCT_SIZE,
			TopologyDescription: topology, Type: bt, Dims: dp, NumDims: uint64(len(shape.Dims))}
		err = p.callExt(p.layoutFn(ext, &ext.PJRT_Layouts_PJRT_Topology_GetDefaultLayout), op, unsafe.Pointer(a))
		layout = a.Layout
	} else {
		a := &capi.PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args{StructSize: capi.PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args_STRUCT_SIZE,
			Client: client, Type: bt, Dims: dp, NumDims: uint64(len(shape.Dims))}
		err = p.callExt(p.layoutFn(ext, &ext.PJRT_Layouts_PJRT_Client_GetDefaultLayout), op, unsafe.Pointer(a))
		layout = a.Layout
	}
	runtime.KeepAlive(dims)
	if err != nil {
		return nil, err
	}
	return p.serializeLayout(ext, layout, true)
}

// DefaultLayout implements backend.DefaultLayouter.
func (c *cClient) DefaultLayout(shape xla.Shape) ([]byte, error) {
	return c.p.defaultLayout(shape, c.h, 0)
}

// memoryDescriptions reads the memory spaces of a device description
// through the MemoryDescriptions extension.
func (p *cPlugin) memoryDescriptions(desc uintptr) ([]backend.MemoryDescription, error) {
	ext := p.exts[capi.PJRT_Extension_Type_MemoryDescriptions]
	const op = "PJRT_DeviceDescription_MemoryDescriptions"
	if ext == 0 {
		return nil, &Error{Code: Unimplemented, Op: op, Msg: fmt.Sprintf("plugin %s has no MemoryDescriptions extension", p.path)}
	}
	e := (*capi.PJRT_MemoryDescriptions_Extension)(cptr(ext))
	a := &capi.PJRT_DeviceDescription_MemoryDescriptions_Args{StructSize: capi.PJRT_DeviceDescription_MemoryDescriptions_Args_STRUCT_SIZE, DeviceDescription: desc}
	if err := p.callExt(extField(ext, unsafe.Offsetof(e.PJRT_DeviceDescription_MemoryDescriptions)), op, unsafe.Pointer(a)); err != nil {
		return nil, err
	}
	var out []backend.MemoryDescription
	for i, md := range ptrSlice(a.MemoryDescriptions, int(a.NumMemoryDescriptions)) {
		k := &capi.PJRT_MemoryDescription_Kind_Args{StructSize: capi.PJRT_MemoryDescription_Kind_Args_STRUCT_SIZE, MemoryDescription: md}
		if err := p.callExt(extField(ext, unsafe.Offsetof(e.PJRT_MemoryDescription_Kind)), "PJRT_MemoryDescription_Kind", unsafe.Pointer(k)); err != nil {
			return nil, err
		}
		out = append(out, backend.MemoryDescription{Kind: goStringN(k.Kind, int(k.KindSize)), KindID: int(k.KindId), Default: uint64(i) == a.DefaultMemoryIndex})
	}
	return out, nil
}

// MemoryDescriptions implements backend.DeviceMemoryDescriber.
func (d *cDevice) MemoryDescriptions() ([]backend.MemoryDescription, error) {
	return d.c.p.memoryDescriptions(d.desc)
}
