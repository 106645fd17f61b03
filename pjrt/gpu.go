package pjrt

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
)

// GPUCustomCallHandlers are the C functions of a GPU custom call. For
// api_version 1 (typed FFI) they are XLA_FFI_Handler pointers, one per
// execution stage (only Execute is required); for api_version 0 Execute is
// the legacy custom-call function. Go functions are registered with
// Plugin.RegisterFFIHandler instead.
type GPUCustomCallHandlers = backend.GPUCustomCallHandlers

// gpuExtensionV2FromMinor is the first PJRT minor whose GPU custom-call
// extension has the four handler_* fields (version 2, late 2024); older
// plugins take {struct_size, function_name, function_name_size,
// api_version, custom_call_function} (40 bytes).
const gpuExtensionV2FromMinor = 55

// RegisterGPUCustomCall registers C handlers for a custom-call target with
// the plugin's GPU custom-call extension (CUDA and ROCm plugins). It
// handles the extension's versions: plugins older than PJRT 0.55 take only
// an execute function, so other stages are an error there.
func (p *Plugin) RegisterGPUCustomCall(name string, apiVersion int, h GPUCustomCallHandlers) error {
	const op = "PJRT_Gpu_Register_Custom_Call"
	if err := p.check(); err != nil {
		return err
	}
	if name == "" {
		return errorf(InvalidArgument, op, "empty custom-call name")
	}
	if apiVersion != 0 && apiVersion != 1 {
		return errorf(InvalidArgument, op, "api_version %d: use 0 (untyped) or 1 (typed FFI)", apiVersion)
	}
	if h.Execute == 0 {
		return errorf(InvalidArgument, op, "the execute handler of %q is 0", name)
	}
	x, ok := p.b.(backend.GPUCustomCallRegistrar)
	if !ok {
		return notSupported(op, "GPU custom calls", p)
	}
	return x.RegisterGPUCustomCall(name, apiVersion, h)
}

// gpuRegisterV1Args is the version-1 layout of PJRT_Gpu_Register_Custom_Call_Args.
type gpuRegisterV1Args struct {
	StructSize         uint64
	FunctionName       uintptr
	FunctionNameSize   uint64
	ApiVersion         int32
	_                  [4]byte
	CustomCallFunction uintptr
}

// RegisterGPUCustomCall implements backend.GPUCustomCallRegistrar.
func (p *cPlugin) RegisterGPUCustomCall(name string, apiVersion int, h backend.GPUCustomCallHandlers) error {
	const op = "PJRT_Gpu_Register_Custom_Call"
	ext := p.exts[capi.PJRT_Extension_Type_Gpu_Custom_Call]
	fn := extField(ext, unsafe.Offsetof(capi.PJRT_Gpu_Custom_Call{}.CustomCall))
	if fn == 0 {
		return &Error{Code: Unimplemented, Op: op, Msg: fmt.Sprintf("plugin %s has no GPU custom-call extension", p.path)}
	}
	var pin runtime.Pinner
	n, np := bytesArg(name, &pin)
	defer pin.Unpin()
	var err error
	if p.minor < gpuExtensionV2FromMinor {
		if h.Instantiate != 0 || h.Prepare != 0 || h.Initialize != 0 {
			return errorf(InvalidArgument, op, "plugin %s (PJRT 0.%d) has version 1 of the GPU custom-call extension, which takes only an execute handler; instantiate/prepare/initialize handlers need PJRT 0.%d or newer", p.path, p.minor, gpuExtensionV2FromMinor)
		}
		a := &gpuRegisterV1Args{StructSize: uint64(unsafe.Sizeof(gpuRegisterV1Args{})), FunctionName: np, FunctionNameSize: uint64(len(name)), ApiVersion: int32(apiVersion), CustomCallFunction: h.Execute}
		err = p.callExt(fn, op, unsafe.Pointer(a))
	} else {
		a := &capi.PJRT_Gpu_Register_Custom_Call_Args{
			StructSize:         capi.PJRT_Gpu_Register_Custom_Call_Args_STRUCT_SIZE,
			FunctionName:       np,
			FunctionNameSize:   uint64(len(name)),
			ApiVersion:         int32(apiVersion),
			HandlerInstantiate: h.Instantiate,
			HandlerPrepare:     h.Prepare,
			HandlerInitialize:  h.Initialize,
			HandlerExecute:     h.Execute,
		}
		err = p.callExt(fn, op, unsafe.Pointer(a))
	}
	runtime.KeepAlive(n)
	return err
}
