package pjrt

import (
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// The FFI trampoline: one purego callback for the C signature
// XLA_FFI_Error* (*XLA_FFI_Handler)(XLA_FFI_CallFrame*), registered for
// every Go handler. A call is dispatched by its FFICallbackAttr attribute
// to ffiHandlers; the metadata call made at registration is answered
// without a handler (API version and the traits of the registration in
// progress, ffiMetaTraits).
var (
	ffiOnce sync.Once
	ffiFn   uintptr

	ffiTableMu  sync.RWMutex
	ffiHandlers = map[int64]ffiEntry{}

	// ffiRegMu serializes registrations so that the metadata call, which
	// arrives on the registering thread during the registration call, can
	// be answered with that registration's traits (an atomic, because the
	// trampoline must not take a lock the registering goroutine holds).
	ffiRegMu      sync.Mutex
	ffiMetaTraits atomic.Uint32
)

type ffiEntry struct {
	target string
	h      backend.FFIHandler
}

func ffiTrampoline() uintptr {
	ffiOnce.Do(func() {
		ffiFn = purego.NewCallback(func(frame uintptr) uintptr { return ffiCall(frame) })
	})
	return ffiFn
}

// ffiCall handles one call of the trampoline and returns an XLA_FFI_Error*
// (0 for success).
func ffiCall(frame uintptr) uintptr {
	if frame == 0 {
		return 0
	}
	f := (*capi.XLA_FFI_CallFrame)(cptr(frame))
	if md := ffiMetadata(f); md != 0 {
		ffiAnswerMetadata(f, md)
		return 0
	}
	// Fields up to api are needed to report anything.
	if f.StructSize < uint64(unsafe.Offsetof(f.Ctx)) {
		return 0
	}
	api := f.Api
	if f.StructSize < capi.XLA_FFI_CallFrame_STRUCT_SIZE {
		return ffiError(api, Internal, fmt.Sprintf("halo FFI trampoline: XLA_FFI_CallFrame of %d bytes, expected at least %d (the plugin's XLA FFI API is older than 0.%d)", f.StructSize, capi.XLA_FFI_CallFrame_STRUCT_SIZE, capi.FFIMinor))
	}
	attrs, err := decodeFFIAttrs(&f.Attrs)
	if err != nil {
		return ffiError(api, InvalidArgument, "halo FFI trampoline: "+err.Error())
	}
	id, ok := callbackID(attrs[FFICallbackAttr])
	if !ok {
		return ffiError(api, InvalidArgument, fmt.Sprintf("halo FFI trampoline: the call has no integer attribute %s; custom calls to Go handlers must carry backend_config = {%s = pjrt.FFICallbackID(target) : i64}", FFICallbackAttr, FFICallbackAttr))
	}
	ffiTableMu.RLock()
	entry, found := ffiHandlers[id]
	ffiTableMu.RUnlock()
	if !found {
		return ffiError(api, NotFound, fmt.Sprintf("halo FFI trampoline: no Go handler with %s = %d", FFICallbackAttr, id))
	}
	args, err := decodeFFIBuffers(f.Args.Size, f.Args.Types, f.Args.Args, "argument")
	if err != nil {
		return ffiError(api, InvalidArgument, "halo FFI trampoline: "+err.Error())
	}
	rets, err := decodeFFIBuffers(f.Rets.Size, f.Rets.Types, f.Rets.Rets, "result")
	if err != nil {
		return ffiError(api, InvalidArgument, "halo FFI trampoline: "+err.Error())
	}
	cf := &backend.FFICallFrame{Stage: int(f.Stage), Args: args, Rets: rets, Attrs: attrs}
	if api != 0 && f.Ctx != 0 {
		cf.Context = &cFFIContext{api: api, ctx: f.Ctx}
	}
	// entry.h is Plugin.RegisterFFIHandler's wrapper, which runs the
	// handler on its own goroutine and turns a panic into an error.
	if err := entry.h(cf); err != nil {
		code, msg := errorCode(err)
		if code == int(Unknown) {
			code = int(Internal)
		}
		return ffiError(api, Code(code), msg)
	}
	return 0
}

// ffiMetadata returns the XLA_FFI_Metadata* of a metadata call frame, or 0.
func ffiMetadata(f *capi.XLA_FFI_CallFrame) uintptr {
	for ext, n := f.ExtensionStart, 0; ext != 0 && n < 16; n++ {
		base := (*capi.XLA_FFI_Extension_Base)(cptr(ext))
		if base.Type == capi.XLA_FFI_Extension_Metadata {
			return (*capi.XLA_FFI_Metadata_Extension)(cptr(ext)).Metadata
		}
		ext = base.Next
	}
	return 0
}

// ffiAnswerMetadata fills the handler's API version (0.FFIMinor, or the
// plugin's lower minor when the frame carries its API) and traits.
func ffiAnswerMetadata(f *capi.XLA_FFI_CallFrame, md uintptr) {
	minor := int32(capi.FFIMinor)
	if f.Api != 0 {
		v := (*capi.XLA_FFI_Api)(cptr(f.Api)).ApiVersion
		if v.MajorVersion == capi.FFIMajor && v.MinorVersion > 0 && v.MinorVersion < minor {
			minor = v.MinorVersion
		}
	}
	m := (*capi.XLA_FFI_Metadata)(cptr(md))
	m.ApiVersion.MajorVersion = capi.FFIMajor
	m.ApiVersion.MinorVersion = minor
	if m.StructSize >= uint64(unsafe.Offsetof(m.Traits))+4 {
		m.Traits = ffiMetaTraits.Load()
	}
}

// ffiApiFn reads a function of the XLA_FFI_Api by field offset, or 0 when
// the plugin's API struct is too short to have it.
func ffiApiFn(api uintptr, field uintptr) uintptr {
	if api == 0 {
		return 0
	}
	if field+8 > uintptr((*capi.XLA_FFI_Api)(cptr(api)).StructSize) {
		return 0
	}
	return *(*uintptr)(cptr(api + field))
}

var ffiAPIOffsets = struct{ create, getMessage, destroy, ctxGet, stream, runID, ordinal uintptr }{
	unsafe.Offsetof(capi.XLA_FFI_Api{}.XLA_FFI_Error_Create),
	unsafe.Offsetof(capi.XLA_FFI_Api{}.XLA_FFI_Error_GetMessage),
	unsafe.Offsetof(capi.XLA_FFI_Api{}.XLA_FFI_Error_Destroy),
	unsafe.Offsetof(capi.XLA_FFI_Api{}.XLA_FFI_ExecutionContext_Get),
	unsafe.Offsetof(capi.XLA_FFI_Api{}.XLA_FFI_Stream_Get),
	unsafe.Offsetof(capi.XLA_FFI_Api{}.XLA_FFI_RunId_Get),
	unsafe.Offsetof(capi.XLA_FFI_Api{}.XLA_FFI_DeviceOrdinal_Get),
}

// ffiError creates an XLA_FFI_Error through the frame's API (0 when the
// frame has none: the call then counts as a success, which only happens
// with malformed frames).
func ffiError(api uintptr, code Code, msg string) uintptr {
	fn := ffiApiFn(api, ffiAPIOffsets.create)
	if fn == 0 {
		return 0
	}
	var pin runtime.Pinner
	m := append([]byte(msg), 0)
	pin.Pin(&m[0])
	a := &capi.XLA_FFI_Error_Create_Args{StructSize: capi.XLA_FFI_Error_Create_Args_STRUCT_SIZE, Message: uintptr(unsafe.Pointer(&m[0])), Errc: capi.XLA_FFI_Error_Code(code)}
	pin.Pin(a)
	r, _, _ := purego.SyscallN(fn, uintptr(unsafe.Pointer(a)))
	pin.Unpin()
	runtime.KeepAlive(m)
	return r
}

// takeFFIError turns an XLA_FFI_Error returned by an XLA_FFI_Api function
// into a Go error and destroys it.
func takeFFIError(api, e uintptr, op string) error {
	if e == 0 {
		return nil
	}
	msg := "unknown XLA FFI error"
	var pin runtime.Pinner
	if fn := ffiApiFn(api, ffiAPIOffsets.getMessage); fn != 0 {
		g := &capi.XLA_FFI_Error_GetMessage_Args{StructSize: capi.XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE, Error: e}
		pin.Pin(g)
		purego.SyscallN(fn, uintptr(unsafe.Pointer(g)))
		pin.Unpin()
		msg = goStringZ(g.Message)
	}
	if fn := ffiApiFn(api, ffiAPIOffsets.destroy); fn != 0 {
		d := &capi.XLA_FFI_Error_Destroy_Args{StructSize: capi.XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, Error: e}
		pin.Pin(d)
		purego.SyscallN(fn, uintptr(unsafe.Pointer(d)))
		pin.Unpin()
	}
	return &Error{Code: Unknown, Op: op, Msg: msg}
}

// cFFIContext implements backend.FFIContext over the frame's
// XLA_FFI_ExecutionContext.
type cFFIContext struct{ api, ctx uintptr }

// callAPI calls an XLA_FFI_Api function of the XLA_FFI_Error* (*)(Args*) kind.
func (c *cFFIContext) callAPI(off uintptr, op string, args unsafe.Pointer) error {
	fn := ffiApiFn(c.api, off)
	if fn == 0 {
		return &Error{Code: Unimplemented, Op: op, Msg: op + " is not provided by the plugin's XLA FFI API"}
	}
	var pin runtime.Pinner
	pin.Pin(args)
	r, _, _ := purego.SyscallN(fn, uintptr(args))
	pin.Unpin()
	return takeFFIError(c.api, r, op)
}

func (c *cFFIContext) UserData(typeID int64) (uintptr, error) {
	id := &capi.XLA_FFI_TypeId{TypeId: typeID}
	var pin runtime.Pinner
	pin.Pin(id)
	defer pin.Unpin()
	a := &capi.XLA_FFI_ExecutionContext_Get_Args{StructSize: capi.XLA_FFI_ExecutionContext_Get_Args_STRUCT_SIZE, Ctx: c.ctx, TypeId: uintptr(unsafe.Pointer(id))}
	if err := c.callAPI(ffiAPIOffsets.ctxGet, "XLA_FFI_ExecutionContext_Get", unsafe.Pointer(a)); err != nil {
		return 0, err
	}
	return a.Data, nil
}

func (c *cFFIContext) DeviceOrdinal() (int, error) {
	a := &capi.XLA_FFI_DeviceOrdinal_Get_Args{StructSize: capi.XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE, Ctx: c.ctx}
	if err := c.callAPI(ffiAPIOffsets.ordinal, "XLA_FFI_DeviceOrdinal_Get", unsafe.Pointer(a)); err != nil {
		return 0, err
	}
	return int(a.DeviceOrdinal), nil
}

func (c *cFFIContext) RunID() (int64, error) {
	a := &capi.XLA_FFI_RunId_Get_Args{StructSize: capi.XLA_FFI_RunId_Get_Args_STRUCT_SIZE, Ctx: c.ctx}
	if err := c.callAPI(ffiAPIOffsets.runID, "XLA_FFI_RunId_Get", unsafe.Pointer(a)); err != nil {
		return 0, err
	}
	return a.RunId, nil
}

func (c *cFFIContext) Stream() (uintptr, error) {
	a := &capi.XLA_FFI_Stream_Get_Args{StructSize: capi.XLA_FFI_Stream_Get_Args_STRUCT_SIZE, Ctx: c.ctx}
	if err := c.callAPI(ffiAPIOffsets.stream, "XLA_FFI_Stream_Get", unsafe.Pointer(a)); err != nil {
		return 0, err
	}
	return a.Stream, nil
}

// ffiDTypes maps XLA FFI data types (the xla.PrimitiveType numbers) to halo's.
var ffiDTypes = map[capi.XLA_FFI_DataType]xla.DType{
	capi.XLA_FFI_DataType_PRED: xla.Bool, capi.XLA_FFI_DataType_S1: xla.Int1, capi.XLA_FFI_DataType_S2: xla.Int2,
	capi.XLA_FFI_DataType_S4: xla.Int4, capi.XLA_FFI_DataType_S8: xla.Int8, capi.XLA_FFI_DataType_S16: xla.Int16,
	capi.XLA_FFI_DataType_S32: xla.Int32, capi.XLA_FFI_DataType_S64: xla.Int64, capi.XLA_FFI_DataType_U1: xla.Uint1,
	capi.XLA_FFI_DataType_U2: xla.Uint2, capi.XLA_FFI_DataType_U4: xla.Uint4, capi.XLA_FFI_DataType_U8: xla.Uint8,
	capi.XLA_FFI_DataType_U16: xla.Uint16, capi.XLA_FFI_DataType_U32: xla.Uint32, capi.XLA_FFI_DataType_U64: xla.Uint64,
	capi.XLA_FFI_DataType_F16: xla.Float16, capi.XLA_FFI_DataType_F32: xla.Float32, capi.XLA_FFI_DataType_F64: xla.Float64,
	capi.XLA_FFI_DataType_BF16: xla.BFloat16, capi.XLA_FFI_DataType_C64: xla.Complex64, capi.XLA_FFI_DataType_C128: xla.Complex128,
	capi.XLA_FFI_DataType_F8E5M2: xla.Float8E5M2, capi.XLA_FFI_DataType_F8E3M4: xla.Float8E3M4,
	capi.XLA_FFI_DataType_F8E4M3: xla.Float8E4M3, capi.XLA_FFI_DataType_F8E4M3FN: xla.Float8E4M3FN,
	capi.XLA_FFI_DataType_F8E4M3B11FNUZ: xla.Float8E4M3B11FNUZ, capi.XLA_FFI_DataType_F8E5M2FNUZ: xla.Float8E5M2FNUZ,
	capi.XLA_FFI_DataType_F8E4M3FNUZ: xla.Float8E4M3FNUZ, capi.XLA_FFI_DataType_F4E2M1FN: xla.Float4E2M1FN,
	capi.XLA_FFI_DataType_F8E8M0FNU: xla.Float8E8M0FNU,
}

// decodeFFIBuffers reads the buffers of XLA_FFI_Args or XLA_FFI_Rets (only
// buffer arguments exist in the 0.3 API).
func decodeFFIBuffers(n int64, types, ptrs uintptr, what string) ([]backend.FFIBuffer, error) {
	if n < 0 || n > 1<<20 || (n > 0 && (types == 0 || ptrs == 0)) {
		return nil, fmt.Errorf("malformed %s list (size %d)", what, n)
	}
	out := make([]backend.FFIBuffer, n)
	if n == 0 {
		return out, nil
	}
	ts := unsafe.Slice((*int32)(cptr(types)), n)
	ps := unsafe.Slice((*uintptr)(cptr(ptrs)), n)
	for i := range out {
		if ts[i] != int32(capi.XLA_FFI_ArgType_BUFFER) || ps[i] == 0 {
			return nil, fmt.Errorf("%s %d has type %d, not a buffer", what, i, ts[i])
		}
		b := (*capi.XLA_FFI_Buffer)(cptr(ps[i]))
		if b.Rank < 0 || b.Rank > 64 || (b.Rank > 0 && b.Dims == 0) {
			return nil, fmt.Errorf("%s %d has rank %d", what, i, b.Rank)
		}
		out[i] = backend.FFIBuffer{DType: ffiDTypes[b.Dtype], Dims: int64s(b.Dims, int(b.Rank)), Data: cptr(b.Data)}
	}
	return out, nil
}

// decodeFFIAttrs reads XLA_FFI_Attrs into Go values (see FFICallFrame.Attrs).
func decodeFFIAttrs(a *capi.XLA_FFI_Attrs) (map[string]any, error) {
	out := map[string]any{}
	if a.Size == 0 {
		return out, nil
	}
	if a.Size < 0 || a.Size > 1<<16 || a.Types == 0 || a.Names == 0 || a.Attrs == 0 {
		return nil, fmt.Errorf("malformed attribute list (size %d)", a.Size)
	}
	types := unsafe.Slice((*int32)(cptr(a.Types)), a.Size)
	names := unsafe.Slice((*uintptr)(cptr(a.Names)), a.Size)
	vals := unsafe.Slice((*uintptr)(cptr(a.Attrs)), a.Size)
	for i := range types {
		if names[i] == 0 || vals[i] == 0 {
			return nil, fmt.Errorf("attribute %d is NULL", i)
		}
		span := (*capi.XLA_FFI_ByteSpan)(cptr(names[i]))
		name := goStringN(span.Ptr, int(span.Len))
		var v any
		switch capi.XLA_FFI_AttrType(types[i]) {
		case capi.XLA_FFI_AttrType_SCALAR:
			s := (*capi.XLA_FFI_Scalar)(cptr(vals[i]))
			v = ffiScalar(s.Dtype, s.Value)
		case capi.XLA_FFI_AttrType_ARRAY:
			arr := (*capi.XLA_FFI_Array)(cptr(vals[i]))
			v = ffiArray(arr.Dtype, arr.Data, int(arr.Size))
		case capi.XLA_FFI_AttrType_STRING:
			s := (*capi.XLA_FFI_ByteSpan)(cptr(vals[i]))
			v = goStringN(s.Ptr, int(s.Len))
		case capi.XLA_FFI_AttrType_DICTIONARY:
			d, err := decodeFFIAttrs((*capi.XLA_FFI_Attrs)(cptr(vals[i])))
			if err != nil {
				return nil, fmt.Errorf("attribute %q: %w", name, err)
			}
			v = d
		default:
			return nil, fmt.Errorf("attribute %q has unknown type %d", name, types[i])
		}
		out[name] = v
	}
	return out, nil
}

// ffiScalar reads a scalar attribute value.
func ffiScalar(dt capi.XLA_FFI_DataType, p uintptr) any {
	if p == 0 {
		return nil
	}
	if v := ffiArray(dt, p, 1); v != nil {
		switch s := v.(type) {
		case []bool:
			return s[0]
		case []int8:
			return s[0]
		case []int16:
			return s[0]
		case []int32:
			return s[0]
		case []int64:
			return s[0]
		case []uint8:
			return s[0]
		case []uint16:
			return s[0]
		case []uint32:
			return s[0]
		case []uint64:
			return s[0]
		case []float32:
			return s[0]
		case []float64:
			return s[0]
		}
	}
	return nil
}

// ffiArray copies an array attribute (nil for element types without a Go
// equivalent).
func ffiArray(dt capi.XLA_FFI_DataType, p uintptr, n int) any {
	if p == 0 && n > 0 || n < 0 || n > 1<<24 {
		return nil
	}
	switch dt {
	case capi.XLA_FFI_DataType_PRED:
		return copyC[bool](p, n)
	case capi.XLA_FFI_DataType_S8:
		return copyC[int8](p, n)
	case capi.XLA_FFI_DataType_S16:
		return copyC[int16](p, n)
	case capi.XLA_FFI_DataType_S32:
		return copyC[int32](p, n)
	case capi.XLA_FFI_DataType_S64:
		return copyC[int64](p, n)
	case capi.XLA_FFI_DataType_U8:
		return copyC[uint8](p, n)
	case capi.XLA_FFI_DataType_U16:
		return copyC[uint16](p, n)
	case capi.XLA_FFI_DataType_U32:
		return copyC[uint32](p, n)
	case capi.XLA_FFI_DataType_U64:
		return copyC[uint64](p, n)
	case capi.XLA_FFI_DataType_F32:
		return copyC[float32](p, n)
	case capi.XLA_FFI_DataType_F64:
		return copyC[float64](p, n)
	}
	return nil
}

func copyC[T any](p uintptr, n int) []T {
	out := make([]T, n)
	if n > 0 {
		copy(out, unsafe.Slice((*T)(cptr(p)), n))
	}
	return out
}

// callbackID reads an integer attribute value.
func callbackID(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case uint64:
		return int64(x), true
	case uint32:
		return int64(x), true
	}
	return 0, false
}

// ffiExt returns the plugin's FFI extension (0 when absent).
func (p *cPlugin) ffiExt() uintptr { return p.exts[capi.PJRT_Extension_Type_FFI] }

var ffiOffsets = struct{ typeRegister, userDataAdd, registerHandler uintptr }{
	unsafe.Offsetof(capi.PJRT_FFI{}.TypeRegister),
	unsafe.Offsetof(capi.PJRT_FFI{}.UserDataAdd),
	unsafe.Offsetof(capi.PJRT_FFI{}.RegisterHandler),
}

// RegisterFFIHandler implements backend.FFIRegistrar.
func (p *cPlugin) RegisterFFIHandler(target, platform string, h backend.FFIHandler, traits uint32) error {
	const op = "PJRT_FFI_Register_Handler"
	register := extField(p.ffiExt(), ffiOffsets.registerHandler)
	gpu := p.exts[capi.PJRT_Extension_Type_Gpu_Custom_Call]
	if register == 0 && gpu == 0 {
		return &Error{Code: Unimplemented, Op: op, Msg: fmt.Sprintf("plugin %s can register FFI handlers neither through its FFI extension (absent, or older than handler registration) nor through the GPU custom-call extension (absent)", p.path)}
	}
	id := FFICallbackID(target)
	ffiTableMu.Lock()
	prev, had := ffiHandlers[id]
	if had && prev.target != target {
		ffiTableMu.Unlock()
		return errorf(AlreadyExists, op, "targets %q and %q have the same callback id %d; rename one", target, prev.target, id)
	}
	ffiHandlers[id] = ffiEntry{target: target, h: h}
	ffiTableMu.Unlock()

	ffiRegMu.Lock()
	ffiMetaTraits.Store(traits)
	var err error
	if register != 0 {
		var pin runtime.Pinner
		t, tp := bytesArg(target, &pin)
		pl, pp := bytesArg(platform, &pin)
		a := &capi.PJRT_FFI_Register_Handler_Args{
			StructSize:       capi.PJRT_FFI_Register_Handler_Args_STRUCT_SIZE,
			TargetName:       tp,
			TargetNameSize:   uint64(len(target)),
			Handler:          ffiTrampoline(),
			PlatformName:     pp,
			PlatformNameSize: uint64(len(platform)),
			Traits:           capi.PJRT_FFI_Handler_TraitsBits(traits),
		}
		err = p.callExt(register, op, unsafe.Pointer(a))
		pin.Unpin()
		runtime.KeepAlive(t)
		runtime.KeepAlive(pl)
	} else {
		err = p.RegisterGPUCustomCall(target, 1, backend.GPUCustomCallHandlers{Execute: ffiTrampoline()})
	}
	ffiMetaTraits.Store(0)
	ffiRegMu.Unlock()

	if err != nil {
		ffiTableMu.Lock()
		if had {
			ffiHandlers[id] = prev
		} else {
			delete(ffiHandlers, id)
		}
		ffiTableMu.Unlock()
	}
	return err
}

// RegisterFFIType implements backend.FFIRegistrar.
func (p *cPlugin) RegisterFFIType(name string) (int64, error) {
	const op = "PJRT_FFI_Type_Register"
	// XLA gives a name an id once (TypeRegistry::AssignTypeId): a second
	// registration is an error saying which id the name has. The ids are
	// kept here, and taken from that error when the name was registered
	// by other code of the process.
	p.ffiTypesMu.Lock()
	defer p.ffiTypesMu.Unlock()
	if id, ok := p.ffiTypes[name]; ok {
		return id, nil
	}
	id, err := p.registerFFIType(name)
	if err != nil {
		m := registeredTypeID.FindStringSubmatch(err.Error())
		if m == nil {
			return 0, err
		}
		if id, err = strconv.ParseInt(m[1], 10, 64); err != nil {
			return 0, err
		}
	}
	if p.ffiTypes == nil {
		p.ffiTypes = map[string]int64{}
	}
	p.ffiTypes[name] = id
	return id, nil
}

// registeredTypeID matches XLA's error for a type name registered before.
var registeredTypeID = regexp.MustCompile(`already registered with type id (\d+)`)

// registerFFIType is PJRT_FFI_Type_Register with no type id (the plugin
// assigns one).
func (p *cPlugin) registerFFIType(name string) (int64, error) {
	const op = "PJRT_FFI_Type_Register"
	fn := extField(p.ffiExt(), ffiOffsets.typeRegister)
	if fn == 0 {
		return 0, &Error{Code: Unimplemented, Op: op, Msg: fmt.Sprintf("plugin %s has no FFI extension", p.path)}
	}
	var pin runtime.Pinner
	n, np := bytesArg(name, &pin)
	defer pin.Unpin()
	// The 48-byte args are also accepted by plugins whose
	// PJRT_FFI_TypeID_Register_Args ended at type_id (40). XLA reads
	// type_info->deleter without a NULL check (a NULL type_info crashed
	// the CUDA plugin, PJRT 0.115), so it points at an empty type info:
	// no deleter, no serialization.
	info := &capi.PJRT_FFI_Type_Info{}
	pin.Pin(info)
	a := &capi.PJRT_FFI_Type_Register_Args{StructSize: capi.PJRT_FFI_Type_Register_Args_STRUCT_SIZE, TypeName: np,
		TypeNameSize: uint64(len(name)), TypeInfo: uintptr(unsafe.Pointer(info))}
	err := p.callExt(fn, op, unsafe.Pointer(a))
	runtime.KeepAlive(n)
	runtime.KeepAlive(info)
	if err != nil {
		return 0, err
	}
	return a.TypeId, nil
}

// userDataAddArgs is PJRT_FFI_UserData_Add_Args with the per-datum deleter
// of older FFI extensions (PJRT_FFI_UserData {type_id, data, deleter}):
// sending 48 bytes with a NULL deleter suits both layouts.
type userDataAddArgs struct {
	capi.PJRT_FFI_UserData_Add_Args
	deleter uintptr
}

// AddFFIUserData implements backend.FFIUserDataAdder.
func (x *cExecuteContext) AddFFIUserData(typeID int64, data uintptr) error {
	const op = "PJRT_FFI_UserData_Add"
	p := x.c.p
	fn := extField(p.ffiExt(), ffiOffsets.userDataAdd)
	if fn == 0 {
		return &Error{Code: Unimplemented, Op: op, Msg: fmt.Sprintf("plugin %s has no FFI extension", p.path)}
	}
	a := &userDataAddArgs{PJRT_FFI_UserData_Add_Args: capi.PJRT_FFI_UserData_Add_Args{
		StructSize: uint64(unsafe.Sizeof(userDataAddArgs{})),
		Context:    x.h,
		UserData:   capi.PJRT_FFI_UserData{TypeId: typeID, Data: data},
	}}
	return p.callExt(fn, op, unsafe.Pointer(a))
}
