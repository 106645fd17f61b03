package effects

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/dl"
)

// On GPU plugins a callback's operands and results are device memory:
// the handler copies them on the call's stream with the CUDA driver API
// (libcuda.so.1, loaded on first use with purego) and waits for the
// stream before the Go function runs and before it returns.

var cuda struct {
	once      sync.Once
	err       error
	dtoh      uintptr // cuMemcpyDtoHAsync_v2
	htod      uintptr // cuMemcpyHtoDAsync_v2
	streamSyn uintptr // cuStreamSynchronize
}

func loadCUDA() error {
	cuda.once.Do(func() {
		lib, err := dl.Open("libcuda.so.1", true)
		if err != nil {
			cuda.err = fmt.Errorf("loading the CUDA driver (libcuda.so.1) to copy callback operands: %w", err)
			return
		}
		for _, s := range []struct {
			name string
			p    *uintptr
		}{{"cuMemcpyDtoHAsync_v2", &cuda.dtoh}, {"cuMemcpyHtoDAsync_v2", &cuda.htod}, {"cuStreamSynchronize", &cuda.streamSyn}} {
			fn, err := dl.Sym(lib, s.name)
			if err != nil {
				cuda.err = fmt.Errorf("CUDA driver has no %s: %w", s.name, err)
				return
			}
			*s.p = fn
		}
	})
	return cuda.err
}

// cudaCall calls a driver function and turns its CUresult into an error.
func cudaCall(name string, fn uintptr, args ...uintptr) error {
	if r, _, _ := purego.SyscallN(fn, args...); r != 0 {
		return fmt.Errorf("%s failed with CUresult %d", name, r)
	}
	return nil
}

// copyFromDevice copies len(dst) bytes of device memory src into dst on
// stream and waits for it.
func copyFromDevice(stream uintptr, dst []byte, src unsafe.Pointer) error {
	if err := loadCUDA(); err != nil {
		return err
	}
	var pin runtime.Pinner
	pin.Pin(&dst[0])
	defer pin.Unpin()
	if err := cudaCall("cuMemcpyDtoHAsync", cuda.dtoh, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)), stream); err != nil {
		return err
	}
	return cudaCall("cuStreamSynchronize", cuda.streamSyn, stream)
}

// copyToDevice copies src into device memory dst on stream and waits for
// it (src is Go memory that does not outlive the call).
func copyToDevice(stream uintptr, dst unsafe.Pointer, src []byte) error {
	if err := loadCUDA(); err != nil {
		return err
	}
	var pin runtime.Pinner
	pin.Pin(&src[0])
	defer pin.Unpin()
	if err := cudaCall("cuMemcpyHtoDAsync", cuda.htod, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), stream); err != nil {
		return err
	}
	return cudaCall("cuStreamSynchronize", cuda.streamSyn, stream)
}
