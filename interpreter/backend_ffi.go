package interpreter

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Typed-FFI handlers through the pjrt API: pjrt.Plugin.RegisterFFIHandler
// on the interpreter makes the handler the custom-call target of that
// name, called with an FFICallFrame whose buffers are host memory (valid
// during the call), the custom call's backend_config dictionary as
// attributes (decoded once per op and executable: read-only), and a context that gives the device ordinal, the launch id
// and the FFI user data of the execute context the program was executed
// with. Platform names are not checked: every handler runs on the
// interpreter.

var (
	ffiTypesMu sync.Mutex
	ffiTypes   = map[string]int64{}
)

// RegisterFFIHandler makes h the implementation of custom-call target.
func (*plugin) RegisterFFIHandler(target, platform string, h backend.FFIHandler, traits uint32) error {
	if target == "" || h == nil {
		return backend.Errorf(codeInvalidArgument, "PJRT_FFI_Register_Handler", "empty target or nil handler")
	}
	RegisterCustomCall(target, ffiCustomCall(target, h))
	return nil
}

// RegisterFFIType returns the id of a user-data type (the same name, the
// same id).
func (*plugin) RegisterFFIType(name string) (int64, error) {
	ffiTypesMu.Lock()
	defer ffiTypesMu.Unlock()
	if id, ok := ffiTypes[name]; ok {
		return id, nil
	}
	id := int64(len(ffiTypes) + 1)
	ffiTypes[name] = id
	return id, nil
}

// execContext is a backend.ExecuteContext carrying FFI user data.
type execContext struct {
	mu   sync.Mutex
	data map[int64]uintptr
}

// NewExecuteContext makes an execute context (pjrt.Client.NewExecuteContext).
func (c *client) NewExecuteContext() (backend.ExecuteContext, error) {
	return &execContext{data: map[int64]uintptr{}}, nil
}

func (x *execContext) AddFFIUserData(typeID int64, data uintptr) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, dup := x.data[typeID]; dup {
		return backend.Errorf(codeAlreadyExists, "PJRT_FFI_UserData_Add", "user data of type %d was added already", typeID)
	}
	x.data[typeID] = data
	return nil
}

func (x *execContext) Close() error { return nil }

// runInfo is what an execution tells the FFI handlers it calls.
type runInfo struct {
	xctx     *execContext
	device   int
	launchID int64
	exe      *executable // nil when the program runs outside Execute
}

type runInfoKey struct{}

var runIDs atomic.Int64

// ffiContext implements backend.FFIContext for one call.
type ffiContext struct{ info *runInfo }

func (f ffiContext) UserData(typeID int64) (uintptr, error) {
	if f.info == nil || f.info.xctx == nil {
		return 0, backend.Errorf(codeNotFound, "FFI_UserData", "the execution has no execute context")
	}
	f.info.xctx.mu.Lock()
	defer f.info.xctx.mu.Unlock()
	v, ok := f.info.xctx.data[typeID]
	if !ok {
		return 0, backend.Errorf(codeNotFound, "FFI_UserData", "no user data of type %d in the execute context", typeID)
	}
	return v, nil
}

func (f ffiContext) DeviceOrdinal() (int, error) {
	if f.info == nil {
		return 0, nil
	}
	return f.info.device, nil
}

func (f ffiContext) RunID() (int64, error) {
	if f.info == nil {
		return 0, nil
	}
	return f.info.launchID, nil
}

func (f ffiContext) Stream() (uintptr, error) { return 0, errNoStream() }

// errNoStream is made once (handlers ask for the stream on every call),
// and lazily: backend.Errorf's constructor is installed by package pjrt.
var errNoStream = sync.OnceValue(func() error {
	return backend.Errorf(codeUnimplemented, "FFI_Stream", "the interpreter has no device streams")
})

// ffiCustomCall adapts a typed-FFI handler to a custom-call target.
func ffiCustomCall(target string, h backend.FFIHandler) CustomCallFunc {
	return func(c *CustomCall) (out []*Tensor, err error) {
		frame := &backend.FFICallFrame{Stage: 3}
		var info *runInfo
		if c.Exec != nil && c.Exec.Ctx != nil {
			info, _ = c.Exec.Ctx.Value(runInfoKey{}).(*runInfo)
			if info == nil {
				info = &runInfo{device: c.Exec.Device.Replica*max(1, c.Exec.Program.NumPartitions) + c.Exec.Device.Partition}
			}
			frame.Context = ffiContext{info: info}
		}
		frame.Attrs = cachedFFIAttrs(info, c)
		frame.Args = make([]backend.FFIBuffer, 0, len(c.Operands))
		frame.Rets = make([]backend.FFIBuffer, 0, len(c.Results))
		for _, t := range c.Operands {
			data := rtBytes(t)
			if IsNarrowFloat(t.Shape.DType) {
				data = t.Host()
			}
			frame.Args = append(frame.Args, ffiBuffer(t.Shape.DType, t.Shape.Dims, data))
		}
		// Results: handlers write host bytes; exact-width types write the
		// tensor's storage directly.
		out = make([]*Tensor, len(c.Results))
		hostRets := make([][]byte, len(c.Results))
		for i, rt := range c.Results {
			shape := rt.Shape()
			if direct(shape.DType) {
				out[i] = NewTensor(shape)
				hostRets[i] = rtBytes(out[i])
			} else {
				hostRets[i] = make([]byte, shape.HostBytes())
			}
			frame.Rets = append(frame.Rets, ffiBuffer(shape.DType, shape.Dims, hostRets[i]))
		}
		// A result aliased to an operand (output_operand_aliases, as
		// jax.ffi.ffi_call's input_output_aliases lowers) starts as the
		// operand's data, as in XLA, where it is the operand's buffer: an
		// in-place handler updates only what it changes.
		if err := fillAliasedResults(c, frame.Args, hostRets); err != nil {
			return nil, fmt.Errorf("FFI call %q: %w", target, err)
		}
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("FFI handler %q panicked: %v", target, v)
			}
		}()
		if err := h(frame); err != nil {
			return nil, err
		}
		for i, rt := range c.Results {
			if out[i] == nil {
				t, err := TensorFromHost(rt.Shape(), hostRets[i])
				if err != nil {
					return nil, err
				}
				out[i] = t
			}
		}
		return out, nil
	}
}

// cachedFFIAttrs returns the call's attributes, decoded once per op of an
// executable (handlers get the same map on every call and must not
// modify it).
func cachedFFIAttrs(info *runInfo, c *CustomCall) map[string]any {
	if info == nil || info.exe == nil || c.Op == nil {
		return ffiAttrs(c.BackendConfig)
	}
	if a, ok := info.exe.ffiAttrs.Load(c.Op); ok {
		return a.(map[string]any)
	}
	a, _ := info.exe.ffiAttrs.LoadOrStore(c.Op, ffiAttrs(c.BackendConfig))
	return a.(map[string]any)
}

// direct reports whether dt's storage is its host encoding byte for byte
// (and any byte pattern is a valid value).
func direct(dt xla.DType) bool {
	return littleEndian && !IsNarrowFloat(dt) && dt != xla.Bool && dt.Bits()%8 == 0
}

func ffiBuffer(dt xla.DType, dims []int64, data []byte) backend.FFIBuffer {
	b := backend.FFIBuffer{DType: dt, Dims: append([]int64(nil), dims...)}
	if len(data) > 0 {
		b.Data = unsafe.Pointer(unsafe.SliceData(data))
	}
	return b
}

// ffiAttrs converts a backend_config dictionary to FFI attribute values.
func ffiAttrs(a stablehlo.Attribute) map[string]any {
	d, ok := a.(stablehlo.DictAttr)
	if !ok {
		return map[string]any{}
	}
	out := make(map[string]any, len(d))
	for _, e := range d {
		if v, ok := ffiAttrValue(e.Value); ok {
			out[e.Name] = v
		}
	}
	return out
}

func ffiAttrValue(a stablehlo.Attribute) (any, bool) {
	switch a := a.(type) {
	case stablehlo.IntAttr:
		switch a.Type {
		case xla.Int8:
			return int8(a.Value), true
		case xla.Int16:
			return int16(a.Value), true
		case xla.Int32:
			return int32(a.Value), true
		case xla.Uint8:
			return uint8(a.Value), true
		case xla.Uint16:
			return uint16(a.Value), true
		case xla.Uint32:
			return uint32(a.Value), true
		case xla.Uint64:
			return uint64(a.Value), true
		case xla.Bool:
			return a.Value != 0, true
		}
		return a.Value, true
	case stablehlo.FloatAttr:
		if a.Type == xla.Float32 {
			return float32(a.Value), true
		}
		return a.Value, true
	case stablehlo.BoolAttr:
		return bool(a), true
	case stablehlo.StringAttr:
		return string(a), true
	case stablehlo.DenseArrayAttr:
		// Slices of the element type, as a C plugin's frame decodes them.
		switch a.DType {
		case xla.Int8:
			return convertInts[int8](a.Values), true
		case xla.Int16:
			return convertInts[int16](a.Values), true
		case xla.Int32:
			return convertInts[int32](a.Values), true
		case xla.Uint8:
			return convertInts[uint8](a.Values), true
		case xla.Uint16:
			return convertInts[uint16](a.Values), true
		case xla.Uint32:
			return convertInts[uint32](a.Values), true
		case xla.Uint64:
			return convertInts[uint64](a.Values), true
		case xla.Bool:
			out := make([]bool, len(a.Values))
			for i, v := range a.Values {
				out[i] = v != 0
			}
			return out, true
		}
		return append([]int64(nil), a.Values...), true
	case stablehlo.DenseFloatArrayAttr:
		if a.DType == xla.Float32 {
			out := make([]float32, len(a.Values))
			for i, v := range a.Values {
				out[i] = float32(v)
			}
			return out, true
		}
		return append([]float64(nil), a.Values...), true
	case stablehlo.DictAttr:
		return ffiAttrs(a), true
	}
	return nil, false
}

// convertInts converts an integer array attribute's values to T.
func convertInts[T int8 | int16 | int32 | uint8 | uint16 | uint32 | uint64](vals []int64) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return out
}

// fillAliasedResults copies each operand a result of c aliases
// (output_operand_aliases) into that result's bytes (rets, one per
// tensor result; args, one per tensor operand).
func fillAliasedResults(c *CustomCall, args []backend.FFIBuffer, rets [][]byte) error {
	if c.Op == nil {
		return nil
	}
	aliases, _ := c.Op.Attr("output_operand_aliases").(stablehlo.ArrayAttr)
	if len(aliases) == 0 {
		return nil
	}
	var operands, results []stablehlo.Type
	for _, v := range c.Op.Operands {
		operands = append(operands, v.Type)
	}
	for _, v := range c.Op.Results {
		results = append(results, v.Type)
	}
	for _, a := range aliases {
		al, ok := a.(stablehlo.OutputOperandAlias)
		if !ok {
			if p, isPtr := a.(*stablehlo.OutputOperandAlias); isPtr && p != nil {
				al, ok = *p, true
			}
		}
		if !ok {
			return fmt.Errorf("output_operand_aliases holds %v, not an output_operand_alias", a)
		}
		// Several results are a tuple's elements (HLO's view): the
		// output's first tuple index picks the result.
		rIndex, rPath := int64(0), al.OutputTupleIndices
		if len(results) > 1 {
			if len(rPath) == 0 {
				return fmt.Errorf("output_operand_alias of operand %d names no result of %d", al.OperandIndex, len(results))
			}
			rIndex, rPath = rPath[0], rPath[1:]
		}
		ri, rok := flatTensorIndex(results, rIndex, rPath)
		oi, ook := flatTensorIndex(operands, al.OperandIndex, al.OperandTupleIndices)
		if !rok || !ook || ri >= len(rets) || oi >= len(args) {
			return fmt.Errorf("output_operand_alias %v names no tensor result and operand", al)
		}
		src := args[oi].Bytes()
		if len(src) != len(rets[ri]) {
			return fmt.Errorf("result %d (%d bytes) cannot alias operand %d (%d bytes)", ri, len(rets[ri]), oi, len(src))
		}
		copy(rets[ri], src)
	}
	return nil
}

// flatTensorIndex is the position among the tensors of types (tuples
// flattened in order, tokens left out) of element path of types[index].
func flatTensorIndex(types []stablehlo.Type, index int64, path []int64) (int, bool) {
	if index < 0 || index >= int64(len(types)) {
		return 0, false
	}
	n := 0
	for _, t := range types[:index] {
		n += tensorCount(t)
	}
	t := types[index]
	for _, i := range path {
		tt, ok := t.(stablehlo.TupleType)
		if !ok || i < 0 || i >= int64(len(tt.Elems)) {
			return 0, false
		}
		for _, e := range tt.Elems[:i] {
			n += tensorCount(e)
		}
		t = tt.Elems[i]
	}
	_, ok := t.(stablehlo.TensorType)
	return n, ok
}

// tensorCount is how many tensors t holds (a tuple's, flattened).
func tensorCount(t stablehlo.Type) int {
	switch t := t.(type) {
	case stablehlo.TensorType:
		return 1
	case stablehlo.TupleType:
		n := 0
		for _, e := range t.Elems {
			n += tensorCount(e)
		}
		return n
	}
	return 0
}
