package pjrt

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/internal/dl"
	"github.com/halo-ml/halo/pjrt/backend"
)

// cPlugin is a PJRT C plugin loaded with purego. Plugins are never
// dlclosed (XLA's plugins do not support it), so a cPlugin lives as long as
// the process; loading the same path twice returns the same cPlugin.
type cPlugin struct {
	path         string
	api          uintptr // const PJRT_Api*
	major, minor int
	slots        [len(capi.APISlots)]uintptr // function pointers; 0 when absent
	attrs        []backend.NamedValue
	exts         map[capi.PJRT_Extension_Type]uintptr

	ffiTypesMu sync.Mutex
	ffiTypes   map[string]int64 // FFI type ids by name (RegisterFFIType)
}

var (
	loadedMu sync.Mutex
	loaded   = map[string]*cPlugin{}
)

// loadCPlugin dlopens path, calls GetPjrtApi, checks the version, and
// initializes the plugin once.
func loadCPlugin(path string) (*cPlugin, error) {
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if p := loaded[path]; p != nil {
		return p, nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, err)
	}
	lib, err := dl.Open(path, false)
	if err != nil {
		return nil, fmt.Errorf("pjrt: cannot load plugin %s: %v", path, err)
	}
	sym, err := dl.Sym(lib, "GetPjrtApi")
	if err != nil || sym == 0 {
		return nil, fmt.Errorf("pjrt: %s is not a PJRT plugin: it has no GetPjrtApi symbol", path)
	}
	api, _, _ := purego.SyscallN(sym)
	if api == 0 {
		return nil, fmt.Errorf("pjrt: %s: GetPjrtApi returned NULL", path)
	}
	p := &cPlugin{path: path, api: api}
	table := (*capi.PJRT_Api)(cptr(api))
	p.major = int(table.PjrtApiVersion.MajorVersion)
	p.minor = int(table.PjrtApiVersion.MinorVersion)
	if p.major != capi.APIMajor {
		return nil, fmt.Errorf("pjrt: %s implements PJRT C API %d.%d, but halo speaks major version %d (built against %d.%d); use a plugin of major version %d",
			path, p.major, p.minor, capi.APIMajor, capi.APIMajor, capi.APIMinor, capi.APIMajor)
	}
	// Which slots exist is decided by the plugin's minor version (struct_size
	// under-reports for some minors), bounded by the table's reported size.
	apiSize := uintptr(table.StructSize)
	for i, s := range capi.APISlots {
		// Plugins built at minors up to 56 may under-report struct_size;
		// later ones report it exactly, so a slot past it is absent.
		if !s.PresentAt(p.minor) || (p.minor > 56 && s.ByteOffset+8 > apiSize) {
			continue
		}
		p.slots[i] = *(*uintptr)(cptr(api + s.ByteOffset))
	}
	p.walkExtensions(uintptr(table.ExtensionStart))
	if err := p.initialize(); err != nil {
		return nil, err
	}
	loaded[path] = p
	return p, nil
}

// walkExtensions records every extension of the chain by type.
func (p *cPlugin) walkExtensions(ext uintptr) {
	p.exts = map[capi.PJRT_Extension_Type]uintptr{}
	for n := 0; ext != 0 && n < 64; n++ {
		base := (*capi.PJRT_Extension_Base)(cptr(ext))
		if _, dup := p.exts[base.Type]; !dup {
			p.exts[base.Type] = ext
		}
		ext = uintptr(base.Next)
	}
}

func (p *cPlugin) initialize() error {
	if p.slots[capi.SlotPJRT_Plugin_Initialize] != 0 {
		args := &capi.PJRT_Plugin_Initialize_Args{StructSize: capi.PJRT_Plugin_Initialize_Args_STRUCT_SIZE}
		if err := p.call(capi.SlotPJRT_Plugin_Initialize, unsafe.Pointer(args), nil); err != nil {
			return err
		}
	}
	if p.slots[capi.SlotPJRT_Plugin_Attributes] != 0 {
		args := &capi.PJRT_Plugin_Attributes_Args{StructSize: capi.PJRT_Plugin_Attributes_Args_STRUCT_SIZE}
		if err := p.call(capi.SlotPJRT_Plugin_Attributes, unsafe.Pointer(args), nil); err != nil {
			return err
		}
		p.attrs = readNamedValues(uintptr(args.Attributes), int(args.NumAttributes))
	}
	return nil
}

// Version implements backend.Plugin.
func (p *cPlugin) Version() (int, int) { return p.major, p.minor }

// Attributes implements backend.Plugin.
func (p *cPlugin) Attributes() []backend.NamedValue { return p.attrs }

// call is the one place halo calls into a plugin: it checks that the slot
// exists, pins the args struct (and whatever pin holds) for the duration of
// the call, and turns a returned PJRT_Error into an *Error.
func (p *cPlugin) call(slot int, args unsafe.Pointer, pin *runtime.Pinner) error {
	fn := p.slots[slot]
	if fn == 0 {
		if pin != nil {
			pin.Unpin()
		}
		s := capi.APISlots[slot]
		return &Error{Code: Unimplemented, Op: s.Name,
			Msg: fmt.Sprintf("%s is not provided by plugin %s (PJRT C API %d.%d; the function exists from minor %d)", s.Name, p.path, p.major, p.minor, s.PresentFromMinor)}
	}
	var pinner runtime.Pinner
	pinner.Pin(args)
	r, _, _ := purego.SyscallN(fn, uintptr(args))
	pinner.Unpin()
	if pin != nil {
		pin.Unpin()
	}
	if r == 0 {
		return nil
	}
	return p.takeError(r, capi.APISlots[slot].Name, argsStructName(slot), *(*uint64)(args))
}

// argsStructName is the name of the args struct of a slot's function.
func argsStructName(slot int) string { return capi.APISlots[slot].Name + "_Args" }

// takeError copies a PJRT_Error's code and message and destroys it. When
// the plugin rejected an args struct as too small, the error says which
// struct, both versions, and what to do.
func (p *cPlugin) takeError(e uintptr, op, argsName string, sentSize uint64) error {
	if e == 0 {
		return nil
	}
	msgArgs := &capi.PJRT_Error_Message_Args{StructSize: capi.PJRT_Error_Message_Args_STRUCT_SIZE, Error: e}
	var pinner runtime.Pinner
	pinner.Pin(msgArgs)
	purego.SyscallN(p.slots[capi.SlotPJRT_Error_Message], uintptr(unsafe.Pointer(msgArgs)))
	pinner.Unpin()
	msg := goStringN(uintptr(msgArgs.Message), int(msgArgs.MessageSize))
	code := Unknown
	if fn := p.slots[capi.SlotPJRT_Error_GetCode]; fn != 0 {
		codeArgs := &capi.PJRT_Error_GetCode_Args{StructSize: capi.PJRT_Error_GetCode_Args_STRUCT_SIZE, Error: e}
		pinner.Pin(codeArgs)
		purego.SyscallN(fn, uintptr(unsafe.Pointer(codeArgs)))
		pinner.Unpin()
		code = Code(codeArgs.Code)
	}
	payloads := p.errorPayloads(e)
	destroy := &capi.PJRT_Error_Destroy_Args{StructSize: capi.PJRT_Error_Destroy_Args_STRUCT_SIZE, Error: e}
	pinner.Pin(destroy)
	purego.SyscallN(p.slots[capi.SlotPJRT_Error_Destroy], uintptr(unsafe.Pointer(destroy)))
	pinner.Unpin()
	err := &Error{Code: code, Msg: msg, Op: op, Payloads: payloads}
	if code == InvalidArgument && argsName != "" && strings.Contains(msg, "size") && strings.Contains(msg, argsName) {
		return &StructSizeError{Err: err, Struct: argsName, Sent: int(sentSize),
			PluginMinor: p.minor, HaloMinor: capi.APIMinor, PluginPath: p.path}
	}
	return err
}

// StructSizeError reports that a plugin rejected an args struct as too
// small: the plugin was built against a newer PJRT C API than halo's mirrors.
type StructSizeError struct {
	Err         *Error // the plugin's error
	Struct      string // the C struct it refused, e.g. "PJRT_Client_Create_Args"
	Sent        int    // the struct_size halo sent (its own header's size)
	PluginMinor int    // the plugin's PJRT API minor version
	HaloMinor   int    // the minor version halo's structs follow
	PluginPath  string // the plugin's file
}

// Error says which struct, both versions, and what to do.
func (e *StructSizeError) Error() string {
	expect := ""
	if _, rest, found := strings.Cut(e.Err.Msg, "expected at least "); found {
		var n int
		if _, err := fmt.Sscanf(rest, "%d", &n); err == nil {
			expect = fmt.Sprintf(" (it expects at least %d bytes)", n)
		}
	}
	head := fmt.Sprintf("pjrt: plugin %s (PJRT C API 0.%d) rejected %s of %d bytes from halo (built against 0.%d)%s",
		e.PluginPath, e.PluginMinor, e.Struct, e.Sent, e.HaloMinor, expect)
	if e.PluginMinor <= e.HaloMinor {
		// halo sent the size the plugin's own version gives the struct.
		size := ""
		if n, ok := capi.StructSizeAt(e.Struct, e.PluginMinor); ok {
			size = fmt.Sprintf(", %d bytes", n)
		}
		return fmt.Sprintf("%s, though halo sent what PJRT 0.%d defines%s: the plugin reports a wrong version or was built from a modified pjrt_c_api.h; plugin said: %s",
			head, e.PluginMinor, size, e.Err.Msg)
	}
	return fmt.Sprintf("%s: use a halo release built for PJRT 0.%d or newer, or a plugin of PJRT 0.%d; plugin said: %s",
		head, e.PluginMinor, e.HaloMinor, e.Err.Msg)
}

// Unwrap returns the plugin's error.
func (e *StructSizeError) Unwrap() error { return e.Err }

// goStringN copies n bytes at p into a Go string.
func goStringN(p uintptr, n int) string {
	if p == 0 || n <= 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(cptr(p)), n))
}

// goStringZ copies a NUL-terminated C string.
func goStringZ(p uintptr) string {
	if p == 0 {
		return ""
	}
	n := 0
	for *(*byte)(cptr(p + uintptr(n))) != 0 {
		n++
	}
	return goStringN(p, n)
}

// readNamedValues copies an array of PJRT_NamedValue into Go values.
func readNamedValues(arr uintptr, n int) []backend.NamedValue {
	if arr == 0 || n <= 0 {
		return nil
	}
	vals := unsafe.Slice((*capi.PJRT_NamedValue)(cptr(arr)), n)
	out := make([]backend.NamedValue, 0, n)
	for i := range vals {
		v := &vals[i]
		nv := backend.NamedValue{Name: goStringN(uintptr(v.Name), int(v.NameSize))}
		switch v.Type {
		case capi.PJRT_NamedValue_kString:
			nv.Value = goStringN(uintptr(v.StringValue()), int(v.ValueSize))
		case capi.PJRT_NamedValue_kInt64:
			nv.Value = v.Int64Value()
		case capi.PJRT_NamedValue_kInt64List:
			list := make([]int64, int(v.ValueSize))
			if len(list) > 0 {
				copy(list, unsafe.Slice((*int64)(cptr(v.Int64ArrayValue())), len(list)))
			}
			nv.Value = list
		case capi.PJRT_NamedValue_kFloat:
			nv.Value = v.FloatValue()
		case capi.PJRT_NamedValue_kBool:
			nv.Value = v.BoolValue()
		default:
			nv.Value = fmt.Sprintf("<unknown PJRT_NamedValue type %d>", v.Type)
		}
		out = append(out, nv)
	}
	return out
}

// namedValues is a PJRT_NamedValue array built from Go values, with the Go
// memory it points into kept alive and pinned by the caller's pinner.
type namedValues struct {
	vals []capi.PJRT_NamedValue
	keep [][]byte
	ints [][]int64
}

func makeNamedValues(opts []backend.NamedValue, pin *runtime.Pinner) (*namedValues, error) {
	nv := &namedValues{vals: make([]capi.PJRT_NamedValue, len(opts))}
	for i, o := range opts {
		v := &nv.vals[i]
		v.StructSize = capi.PJRT_NamedValue_STRUCT_SIZE
		name := append([]byte(o.Name), 0)
		nv.keep = append(nv.keep, name)
		pin.Pin(&name[0])
		v.Name = uintptr(unsafe.Pointer(&name[0]))
		v.NameSize = uint64(len(o.Name))
		switch x := o.Value.(type) {
		case string:
			s := append([]byte(x), 0)
			nv.keep = append(nv.keep, s)
			pin.Pin(&s[0])
			v.Type = capi.PJRT_NamedValue_kString
			v.SetStringValue(uintptr(unsafe.Pointer(&s[0])))
			v.ValueSize = uint64(len(x))
		case int:
			v.Type = capi.PJRT_NamedValue_kInt64
			v.SetInt64Value(int64(x))
			v.ValueSize = 1
		case int64:
			v.Type = capi.PJRT_NamedValue_kInt64
			v.SetInt64Value(x)
			v.ValueSize = 1
		case []int64:
			v.Type = capi.PJRT_NamedValue_kInt64List
			list := append([]int64{0}, x...) // never empty, so there is an address
			nv.ints = append(nv.ints, list)
			pin.Pin(&list[0])
			v.SetInt64ArrayValue(uintptr(unsafe.Pointer(&list[1])))
			if len(x) == 0 {
				v.SetInt64ArrayValue(uintptr(unsafe.Pointer(&list[0])))
			}
			v.ValueSize = uint64(len(x))
		case []int:
			list := make([]int64, len(x)+1)
			for j, e := range x {
				list[j] = int64(e)
			}
			nv.ints = append(nv.ints, list)
			pin.Pin(&list[0])
			v.Type = capi.PJRT_NamedValue_kInt64List
			v.SetInt64ArrayValue(uintptr(unsafe.Pointer(&list[0])))
			v.ValueSize = uint64(len(x))
		case float32:
			v.Type = capi.PJRT_NamedValue_kFloat
			v.SetFloatValue(x)
			v.ValueSize = 1
		case float64:
			v.Type = capi.PJRT_NamedValue_kFloat
			v.SetFloatValue(float32(x))
			v.ValueSize = 1
		case bool:
			v.Type = capi.PJRT_NamedValue_kBool
			v.SetBoolValue(x)
			v.ValueSize = 1
		default:
			return nil, fmt.Errorf("pjrt: option %q has type %T; options are string, int64, []int64, float32 or bool", o.Name, o.Value)
		}
	}
	if len(nv.vals) > 0 {
		pin.Pin(&nv.vals[0])
	}
	return nv, nil
}

// ptr returns the address of the first value, or 0.
func (nv *namedValues) ptr() uintptr {
	if len(nv.vals) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&nv.vals[0]))
}

// callVoid calls a C function of one pointer argument (a deleter).
func callVoid(fn, arg uintptr) { purego.SyscallN(fn, arg) }

// cptr converts an address of C memory to a pointer. C memory never moves
// and is not managed by the Go collector, so the conversion is safe; going
// through memory keeps vet's unsafeptr check (meant for Go memory) quiet.
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
