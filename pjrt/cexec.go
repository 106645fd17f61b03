package pjrt

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// readShape asks the plugin for the element type and dimensions of b's
// buffer (for an output whose shape its executable did not tell).
func (b *cBuffer) readShape() error {
	p := b.c.p
	et := &capi.PJRT_Buffer_ElementType_Args{StructSize: capi.PJRT_Buffer_ElementType_Args_STRUCT_SIZE, Buffer: b.h}
	if err := p.call(capi.SlotPJRT_Buffer_ElementType, unsafe.Pointer(et), nil); err != nil {
		return err
	}
	dm := &capi.PJRT_Buffer_Dimensions_Args{StructSize: capi.PJRT_Buffer_Dimensions_Args_STRUCT_SIZE, Buffer: b.h}
	if err := p.call(capi.SlotPJRT_Buffer_Dimensions, unsafe.Pointer(dm), nil); err != nil {
		return err
	}
	b.dtype = dtypesByBufferType[et.Type] // Invalid for a type halo has no dtype for (a token)
	b.dims = make([]int64, int(dm.NumDims))
	if len(b.dims) > 0 {
		copy(b.dims, unsafe.Slice((*int64)(cptr(dm.Dims)), len(b.dims)))
	}
	return nil
}

// compileInputs are a PJRT_Program and compile options, pinned for
// PJRT_Client_Compile or PJRT_Compile (keep them alive until it returns).
type compileInputs struct {
	prog                  *capi.PJRT_Program
	options               uintptr
	code0, format0, opts0 []byte
}

func pinCompileInputs(pin *runtime.Pinner, code []byte, format string, options []byte) *compileInputs {
	in := &compileInputs{
		code0:   append([]byte{0}, code...),
		format0: append([]byte(format), 0),
		opts0:   append([]byte{0}, options...),
	}
	pin.Pin(&in.code0[0])
	pin.Pin(&in.format0[0])
	pin.Pin(&in.opts0[0])
	in.prog = &capi.PJRT_Program{
		StructSize: capi.PJRT_Program_STRUCT_SIZE,
		Code:       uintptr(unsafe.Pointer(&in.code0[1%len(in.code0)])),
		CodeSize:   uint64(len(code)),
		Format:     uintptr(unsafe.Pointer(&in.format0[0])),
		FormatSize: uint64(len(format)),
	}
	pin.Pin(in.prog)
	in.options = uintptr(unsafe.Pointer(&in.opts0[1%len(in.opts0)]))
	return in
}

func (c *cClient) Compile(code []byte, format string, options []byte) (backend.Executable, error) {
	var pin runtime.Pinner
	in := pinCompileInputs(&pin, code, format, options)
	a := &capi.PJRT_Client_Compile_Args{
		StructSize:         capi.PJRT_Client_Compile_Args_STRUCT_SIZE,
		Client:             c.h,
		Program:            uintptr(unsafe.Pointer(in.prog)),
		CompileOptions:     in.options,
		CompileOptionsSize: uint64(len(options)),
	}
	err := c.p.call(capi.SlotPJRT_Client_Compile, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(in)
	if err != nil {
		return nil, err
	}
	return c.wrapExecutable(a.Executable)
}

func (c *cClient) DeserializeAndLoad(data []byte, options []byte) (backend.Executable, error) {
	var pin runtime.Pinner
	data0 := append([]byte{0}, data...)
	opts0 := append([]byte{0}, options...)
	pin.Pin(&data0[0])
	pin.Pin(&opts0[0])
	a := &capi.PJRT_Executable_DeserializeAndLoad_Args{
		StructSize:               capi.PJRT_Executable_DeserializeAndLoad_Args_STRUCT_SIZE,
		Client:                   c.h,
		SerializedExecutable:     uintptr(unsafe.Pointer(&data0[1%len(data0)])),
		SerializedExecutableSize: uint64(len(data)),
	}
	if len(options) > 0 {
		a.OverriddenSerializedCompileOptions = uintptr(unsafe.Pointer(&opts0[1]))
		a.OverriddenSerializedCompileOptionsSize = uint64(len(options))
	}
	err := c.p.call(capi.SlotPJRT_Executable_DeserializeAndLoad, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(data0)
	runtime.KeepAlive(opts0)
	if err != nil {
		return nil, err
	}
	return c.wrapExecutable(a.LoadedExecutable)
}

// cExecutable is a PJRT_LoadedExecutable and its PJRT_Executable.
type cExecutable struct {
	execDetails
	c         *cClient
	loaded    uintptr
	exec      uintptr
	devices   []*cDevice
	closeOnce sync.Once

	outputsOnce sync.Once
	outputs     []backend.OutputInfo
	outputsErr  error
}

func (c *cClient) wrapExecutable(loaded uintptr) (*cExecutable, error) {
	e := &cExecutable{c: c, loaded: loaded}
	g := &capi.PJRT_LoadedExecutable_GetExecutable_Args{StructSize: capi.PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE, LoadedExecutable: loaded}
	if err := c.p.call(capi.SlotPJRT_LoadedExecutable_GetExecutable, unsafe.Pointer(g), nil); err != nil {
		e.Close()
		return nil, err
	}
	e.exec = g.Executable
	e.execDetails = execDetails{p: c.p, exec: g.Executable}
	ad := &capi.PJRT_LoadedExecutable_AddressableDevices_Args{StructSize: capi.PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE, Executable: loaded}
	if err := c.p.call(capi.SlotPJRT_LoadedExecutable_AddressableDevices, unsafe.Pointer(ad), nil); err != nil {
		e.Close()
		return nil, err
	}
	for _, h := range ptrSlice(ad.AddressableDevices, int(ad.NumAddressableDevices)) {
		d, err := c.device(h)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.devices = append(e.devices, d)
	}
	return e, nil
}

// Outputs implements backend.Executable; the answer is read once.
func (e *cExecutable) Outputs() ([]backend.OutputInfo, error) {
	e.outputsOnce.Do(func() { e.outputs, e.outputsErr = e.readOutputs() })
	return e.outputs, e.outputsErr
}

func (e *cExecutable) readOutputs() ([]backend.OutputInfo, error) {
	return readExecOutputs(e.c.p, e.exec)
}

// readExecOutputs reads the output types, dimensions and memory kinds of a
// PJRT_Executable. An output's Dims stay nil when the plugin does not report
// them (a scalar's are empty, not nil): Execute then asks each buffer.
func readExecOutputs(p *cPlugin, exec uintptr) ([]backend.OutputInfo, error) {
	n := &capi.PJRT_Executable_NumOutputs_Args{StructSize: capi.PJRT_Executable_NumOutputs_Args_STRUCT_SIZE, Executable: exec}
	if err := p.call(capi.SlotPJRT_Executable_NumOutputs, unsafe.Pointer(n), nil); err != nil {
		return nil, err
	}
	outs := make([]backend.OutputInfo, int(n.NumOutputs))
	et := &capi.PJRT_Executable_OutputElementTypes_Args{StructSize: capi.PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE, Executable: exec}
	if err := p.call(capi.SlotPJRT_Executable_OutputElementTypes, unsafe.Pointer(et), nil); err != nil {
		return nil, err
	}
	if int(et.NumOutputTypes) != len(outs) {
		return nil, errorf(Internal, "PJRT_Executable_OutputElementTypes", "plugin reported %d output types for %d outputs", et.NumOutputTypes, len(outs))
	}
	if len(outs) > 0 {
		types := unsafe.Slice((*capi.PJRT_Buffer_Type)(cptr(et.OutputTypes)), len(outs))
		for i, t := range types {
			outs[i].Shape.DType = dtypesByBufferType[t]
		}
	}
	od := &capi.PJRT_Executable_OutputDimensions_Args{StructSize: capi.PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE, Executable: exec}
	if err := p.call(capi.SlotPJRT_Executable_OutputDimensions, unsafe.Pointer(od), nil); err != nil {
		return nil, err
	}
	if int(od.NumOutputs) == len(outs) && len(outs) > 0 {
		sizes := unsafe.Slice((*uint64)(cptr(od.DimSizes)), len(outs))
		total := 0
		for _, s := range sizes {
			total += int(s)
		}
		var dims []int64
		if total > 0 {
			dims = unsafe.Slice((*int64)(cptr(od.Dims)), total)
		}
		off := 0
		for i, s := range sizes {
			outs[i].Shape.Dims = append([]int64{}, dims[off:off+int(s)]...)
			off += int(s)
		}
	}
	if p.slots[capi.SlotPJRT_Executable_OutputMemoryKinds] != 0 {
		mk := &capi.PJRT_Executable_OutputMemoryKinds_Args{StructSize: capi.PJRT_Executable_OutputMemoryKinds_Args_STRUCT_SIZE, Executable: exec}
		if err := p.call(capi.SlotPJRT_Executable_OutputMemoryKinds, unsafe.Pointer(mk), nil); err == nil && int(mk.NumOutputs) == len(outs) && len(outs) > 0 {
			kinds := unsafe.Slice((*uintptr)(cptr(mk.MemoryKinds)), len(outs))
			sizes := unsafe.Slice((*uint64)(cptr(mk.MemoryKindSizes)), len(outs))
			for i := range outs {
				outs[i].MemoryKind = goStringN(kinds[i], int(sizes[i]))
			}
		}
	}
	return outs, nil
}

func (e *cExecutable) AddressableDevices() []backend.Device {
	out := make([]backend.Device, len(e.devices))
	for i, d := range e.devices {
		out[i] = d
	}
	return out
}

func (e *cExecutable) Fingerprint() (string, error) {
	p := e.c.p
	if p.slots[capi.SlotPJRT_Executable_Fingerprint] != 0 {
		a := &capi.PJRT_Executable_Fingerprint_Args{StructSize: capi.PJRT_Executable_Fingerprint_Args_STRUCT_SIZE, Executable: e.exec}
		if err := p.call(capi.SlotPJRT_Executable_Fingerprint, unsafe.Pointer(a), nil); err != nil {
			return "", err
		}
		return goStringN(a.ExecutableFingerprint, int(a.ExecutableFingerprintSize)), nil
	}
	a := &capi.PJRT_LoadedExecutable_Fingerprint_Args{StructSize: capi.PJRT_LoadedExecutable_Fingerprint_Args_STRUCT_SIZE, Executable: e.loaded}
	if err := p.call(capi.SlotPJRT_LoadedExecutable_Fingerprint, unsafe.Pointer(a), nil); err != nil {
		return "", err
	}
	return goStringN(a.ExecutableFingerprint, int(a.ExecutableFingerprintSize)), nil
}

func (e *cExecutable) Execute(args [][]backend.Buffer, opts backend.ExecuteOptions) ([][]backend.Buffer, []backend.Event, error) {
	p := e.c.p
	nDev := len(args)
	nArgs := 0
	if nDev > 0 {
		nArgs = len(args[0])
	}
	outs, err := e.Outputs()
	if err != nil {
		return nil, nil, err
	}
	nOut := len(outs)
	var pin runtime.Pinner
	// One flat allocation of handles: per device an argument list then an
	// output list, plus the arrays of list pointers and events.
	handles := make([]uintptr, nDev*(nArgs+nOut)+2*nDev+nDev+1)
	argLists := handles[nDev*(nArgs+nOut) : nDev*(nArgs+nOut)+nDev]
	outLists := handles[nDev*(nArgs+nOut)+nDev : nDev*(nArgs+nOut)+2*nDev]
	events := handles[nDev*(nArgs+nOut)+2*nDev : nDev*(nArgs+nOut)+3*nDev]
	pin.Pin(&handles[0])
	base := uintptr(unsafe.Pointer(&handles[0]))
	for d := 0; d < nDev; d++ {
		if len(args[d]) != nArgs {
			pin.Unpin()
			return nil, nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "device %d has %d arguments, device 0 has %d", d, len(args[d]), nArgs)
		}
		for i, b := range args[d] {
			cb, ok := b.(*cBuffer)
			if !ok || cb == nil || cb.c != e.c {
				pin.Unpin()
				return nil, nil, errorf(InvalidArgument, "PJRT_LoadedExecutable_Execute", "argument %d of device %d is not a buffer of this client", i, d)
			}
			handles[d*(nArgs+nOut)+i] = cb.h
		}
		argLists[d] = base + uintptr(d*(nArgs+nOut))*8
		outLists[d] = base + uintptr(d*(nArgs+nOut)+nArgs)*8
	}
	eo := &capi.PJRT_ExecuteOptions{
		StructSize: capi.PJRT_ExecuteOptions_STRUCT_SIZE,
		LaunchId:   int32(opts.LaunchID),
	}
	var nonDonatable []int64
	if len(opts.NonDonatableArgs) > 0 {
		nonDonatable = make([]int64, len(opts.NonDonatableArgs))
		for i, x := range opts.NonDonatableArgs {
			nonDonatable[i] = int64(x)
		}
		pin.Pin(&nonDonatable[0])
		eo.NonDonatableInputIndices = uintptr(unsafe.Pointer(&nonDonatable[0]))
		eo.NumNonDonatableInputIndices = uint64(len(nonDonatable))
	}
	if ctx, ok := opts.Context.(*cExecuteContext); ok && ctx != nil {
		eo.Context = ctx.h
	}
	pin.Pin(eo)
	a := &capi.PJRT_LoadedExecutable_Execute_Args{
		StructSize:    capi.PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE,
		Executable:    e.loaded,
		Options:       uintptr(unsafe.Pointer(eo)),
		ArgumentLists: base + uintptr(nDev*(nArgs+nOut))*8,
		NumDevices:    uint64(nDev),
		NumArgs:       uint64(nArgs),
		OutputLists:   base + uintptr(nDev*(nArgs+nOut)+nDev)*8,
	}
	if opts.WantCompletionEvents {
		a.DeviceCompleteEvents = base + uintptr(nDev*(nArgs+nOut)+2*nDev)*8
	}
	if d, ok := opts.ExecuteDevice.(*cDevice); ok && d != nil {
		a.ExecuteDevice = d.h
	}
	err = p.call(capi.SlotPJRT_LoadedExecutable_Execute, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(handles)
	runtime.KeepAlive(nonDonatable)
	runtime.KeepAlive(eo)
	runtime.KeepAlive(args)
	if err != nil {
		return nil, nil, err
	}
	results := make([][]backend.Buffer, nDev)
	for d := 0; d < nDev; d++ {
		results[d] = make([]backend.Buffer, nOut)
		for i := 0; i < nOut; i++ {
			h := handles[d*(nArgs+nOut)+nArgs+i]
			b := &cBuffer{c: e.c, h: h, dtype: outs[i].Shape.DType, dims: outs[i].Shape.Dims}
			results[d][i] = b
			if b.dims == nil && err == nil {
				// The executable did not tell this output's shape: the
				// buffer knows it.
				if err = b.readShape(); err != nil {
					err = fmt.Errorf("output %d of device %d: %w", i, d, err)
				}
			}
		}
	}
	if err != nil {
		// Nothing is handed out: release what the run made.
		for _, list := range results {
			for _, b := range list {
				b.(*cBuffer).Close()
			}
		}
		if opts.WantCompletionEvents {
			for _, ev := range events {
				if ev != 0 {
					p.destroyEvent(ev)
				}
			}
		}
		return nil, nil, err
	}
	var completion []backend.Event
	if opts.WantCompletionEvents {
		completion = make([]backend.Event, nDev)
		for d := range completion {
			completion[d] = p.watchEvent(events[d], "PJRT_LoadedExecutable_Execute", nil)
		}
	}
	return results, completion, nil
}

func (e *cExecutable) Close() error {
	var err error
	e.closeOnce.Do(func() {
		p := e.c.p
		if e.exec != 0 {
			a := &capi.PJRT_Executable_Destroy_Args{StructSize: capi.PJRT_Executable_Destroy_Args_STRUCT_SIZE, Executable: e.exec}
			err = p.call(capi.SlotPJRT_Executable_Destroy, unsafe.Pointer(a), nil)
		}
		if e.loaded != 0 {
			a := &capi.PJRT_LoadedExecutable_Destroy_Args{StructSize: capi.PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, Executable: e.loaded}
			if err2 := p.call(capi.SlotPJRT_LoadedExecutable_Destroy, unsafe.Pointer(a), nil); err == nil {
				err = err2
			}
		}
	})
	return err
}

// cExecuteContext is a PJRT_ExecuteContext.
type cExecuteContext struct {
	c         *cClient
	h         uintptr
	closeOnce sync.Once
}

func (c *cClient) NewExecuteContext() (backend.ExecuteContext, error) {
	a := &capi.PJRT_ExecuteContext_Create_Args{StructSize: capi.PJRT_ExecuteContext_Create_Args_STRUCT_SIZE}
	if err := c.p.call(capi.SlotPJRT_ExecuteContext_Create, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	return &cExecuteContext{c: c, h: a.Context}, nil
}

func (x *cExecuteContext) Close() error {
	var err error
	x.closeOnce.Do(func() {
		a := &capi.PJRT_ExecuteContext_Destroy_Args{StructSize: capi.PJRT_ExecuteContext_Destroy_Args_STRUCT_SIZE, Context: x.h}
		err = x.c.p.call(capi.SlotPJRT_ExecuteContext_Destroy, unsafe.Pointer(a), nil)
	})
	return err
}

var _ = xla.Invalid
