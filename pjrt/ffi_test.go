package pjrt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/dl"
	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// ffiProgram is a conformance program that calls target's Go handler.
func ffiProgram(target, sig string, attrs ...string) string {
	return fmt.Sprintf("// conformance: ffi:%s %s attr.%s=i64:%d %s\n", target, sig, FFICallbackAttr, FFICallbackID(target), strings.Join(attrs, " "))
}

// runFFI compiles and runs prog on x and returns the first output's error
// and values.
func runFFI(t *testing.T, cl *Client, prog string, xctx *ExecuteContext, in ...float32) ([]float32, error) {
	t.Helper()
	exe, err := cl.Compile(MLIRText(prog), nil)
	require.NoError(t, err)
	defer exe.Close()
	x, err := BufferFrom(cl, in, []int64{int64(len(in))}, CopyDuringCall())
	require.NoError(t, err)
	res, err := exe.Execute([][]*Buffer{{x}}, ExecuteOptions{Context: xctx, LaunchID: 5})
	require.NoError(t, err)
	return ToSlice[float32](ctxT(t), res.Outputs[0][0])
}

func TestFFIHandlers(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	p := cl.Plugin()
	assert.Equal(t, []string{"FFI", "Gpu_Custom_Call", "Layouts", "MemoryDescriptions"}, p.Extensions())

	var calls atomic.Int32
	var seen *FFICallFrame
	var seenOrdinal int
	var seenRun int64
	double := func(f *FFICallFrame) error {
		calls.Add(1)
		in := f.Args[0].Bytes()
		out := f.Rets[0].Bytes()
		src, dst := asFloat32(in), asFloat32(out)
		for i := range src {
			dst[i] = 2 * src[i]
		}
		seen = f
		seenOrdinal, _ = f.Context.DeviceOrdinal()
		seenRun, _ = f.Context.RunID()
		return nil
	}
	metaBefore := c.counter("ffi_metadata_calls")
	require.NoError(t, p.RegisterFFIHandler("halo_double", "conformance", double, FFICommandBufferCompatible))
	assert.Equal(t, metaBefore+1, c.counter("ffi_metadata_calls"), "XLA calls the handler once with a metadata frame")
	assert.Contains(t, c.text("conformance_ffi_handlers"), "halo_double@conformance:api=0.3:traits=1:meta_traits=1",
		"the trampoline answers the metadata call with API 0.3 and the registration's traits")

	prog := ffiProgram("halo_double", "f32[4] -> f32[4]", "attr.scale=f32:2.5", "attr.name=str:hello", "attr.dims=i64s:1,2,3", "attr.flag=pred:true", "attr.small=i32:-7")
	got, err := runFFI(t, cl, prog, nil, 1, 2, 3, 4)
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, got)
	assert.EqualValues(t, 1, calls.Load())
	require.NotNil(t, seen)
	assert.Equal(t, FFIStageExecute, seen.Stage)
	assert.Equal(t, xla.Float32, seen.Args[0].DType)
	assert.Equal(t, []int64{4}, seen.Args[0].Dims)
	assert.Equal(t, map[string]any{
		FFICallbackAttr: FFICallbackID("halo_double"), "scale": float32(2.5), "name": "hello",
		"dims": []int64{1, 2, 3}, "flag": true, "small": int32(-7),
	}, seen.Attrs)
	assert.Equal(t, 0, seenOrdinal)
	assert.EqualValues(t, 5, seenRun, "the launch id")

	// Errors, panics and missing dispatch attributes fail the execution, never the process.
	require.NoError(t, p.RegisterFFIHandler("halo_refuse", "conformance", func(*FFICallFrame) error {
		return &Error{Code: FailedPrecondition, Msg: "handler says no"}
	}, 0))
	_, err = runFFI(t, cl, ffiProgram("halo_refuse", "f32[1] -> f32[1]"), nil, 1)
	assert.ErrorIs(t, err, FailedPrecondition)
	assert.Contains(t, err.Error(), "handler says no")

	require.NoError(t, p.RegisterFFIHandler("halo_plain_error", "conformance", func(*FFICallFrame) error {
		return errors.New("plain failure")
	}, 0))
	_, err = runFFI(t, cl, ffiProgram("halo_plain_error", "f32[1] -> f32[1]"), nil, 1)
	assert.ErrorIs(t, err, Internal)
	assert.Contains(t, err.Error(), "plain failure")

	require.NoError(t, p.RegisterFFIHandler("halo_panic", "conformance", func(f *FFICallFrame) error {
		var m map[string]int
		m["boom"] = 1 // nil map write
		return nil
	}, 0))
	_, err = runFFI(t, cl, ffiProgram("halo_panic", "f32[1] -> f32[1]"), nil, 1)
	assert.ErrorIs(t, err, Internal)
	assert.Contains(t, err.Error(), `the Go handler for "halo_panic" panicked`)

	_, err = runFFI(t, cl, "// conformance: ffi:halo_double f32[1] -> f32[1]\n", nil, 1)
	assert.ErrorIs(t, err, InvalidArgument)
	assert.Contains(t, err.Error(), FFICallbackAttr)
	_, err = runFFI(t, cl, fmt.Sprintf("// conformance: ffi:halo_double f32[1] -> f32[1] attr.%s=i64:12345\n", FFICallbackAttr), nil, 1)
	assert.ErrorIs(t, err, NotFound)

	// Registering a target again replaces its Go function.
	require.NoError(t, p.RegisterFFIHandler("halo_refuse", "conformance", func(f *FFICallFrame) error {
		copy(f.Rets[0].Bytes(), f.Args[0].Bytes())
		return nil
	}, 0))
	got, err = runFFI(t, cl, ffiProgram("halo_refuse", "f32[1] -> f32[1]"), nil, 9)
	require.NoError(t, err)
	assert.Equal(t, []float32{9}, got)

	assert.ErrorIs(t, p.RegisterFFIHandler("", "conformance", double, 0), InvalidArgument)
	assert.ErrorIs(t, p.RegisterFFIHandler("x", "conformance", nil, 0), InvalidArgument)
	assert.Equal(t, int64(0), c.live("ffi_error"), "every XLA_FFI_Error was consumed")
}

// asFloat32 views host bytes as float32s.
func asFloat32(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// loadLib dlopens a conformance plugin file for its inspection functions.
func loadLib(path string) (uintptr, error) {
	return dl.Open(path, false)
}

func TestFFIUserData(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	p := cl.Plugin()
	id, err := p.RegisterFFIType("halo_test_scale")
	require.NoError(t, err)
	again, err := p.RegisterFFIType("halo_test_scale")
	require.NoError(t, err)
	assert.Equal(t, id, again, "the same name gets the same id")
	assert.Contains(t, c.text("conformance_ffi_types"), fmt.Sprintf("halo_test_scale=%d", id))

	require.NoError(t, p.RegisterFFIHandler("halo_scale", "conformance", func(f *FFICallFrame) error {
		scale, err := f.UserData(id)
		if err != nil {
			return err
		}
		src, dst := asFloat32(f.Args[0].Bytes()), asFloat32(f.Rets[0].Bytes())
		for i := range src {
			dst[i] = src[i] * float32(scale)
		}
		return nil
	}, 0))
	xctx, err := cl.NewExecuteContext()
	require.NoError(t, err)
	defer xctx.Close()
	require.NoError(t, xctx.AddFFIUserData(id, 3))
	assert.ErrorIs(t, xctx.AddFFIUserData(id, 4), AlreadyExists)
	got, err := runFFI(t, cl, ffiProgram("halo_scale", "f32[2] -> f32[2]"), xctx, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 6}, got)

	_, err = runFFI(t, cl, ffiProgram("halo_scale", "f32[2] -> f32[2]"), nil, 1, 2)
	require.Error(t, err, "no execute context: no user data")
	assert.Contains(t, err.Error(), "no user data")

	require.NoError(t, xctx.Close())
	assert.ErrorIs(t, xctx.AddFFIUserData(id, 1), ErrClosed)
	_, err = p.RegisterFFIType("")
	assert.ErrorIs(t, err, InvalidArgument)
}

// TestFFIOlderExtension registers through a plugin built before the FFI
// extension could register handlers (minor 70): halo falls back to the GPU
// custom-call extension, and sends user data in the older 48-byte layout.
func TestFFIOlderExtension(t *testing.T) {
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_PJRT_MINOR", "70")
	c := &conformance{t: t, path: path}
	lib, err := loadLib(path)
	require.NoError(t, err)
	c.lib = lib
	cl := c.client(t)
	p := cl.Plugin()
	require.NoError(t, p.RegisterFFIHandler("halo_old_negate", "CUDA", func(f *FFICallFrame) error {
		src, dst := asFloat32(f.Args[0].Bytes()), asFloat32(f.Rets[0].Bytes())
		for i := range src {
			dst[i] = -src[i]
		}
		return nil
	}, 0))
	assert.Equal(t, "halo_old_negate:1", c.text("conformance_gpu_custom_calls"), "registered through the GPU extension")
	assert.Equal(t, "halo_old_negate:v2:execute", c.record("gpu_custom_call_handlers"))
	assert.Contains(t, c.text("conformance_ffi_handlers"), "halo_old_negate@CUDA:api=0.3")
	got, err := runFFI(t, cl, ffiProgram("halo_old_negate", "f32[2] -> f32[2]"), nil, 1, -2)
	require.NoError(t, err)
	assert.Equal(t, []float32{-1, 2}, got)

	id, err := p.RegisterFFIType("halo_old_type")
	require.NoError(t, err)
	xctx, err := cl.NewExecuteContext()
	require.NoError(t, err)
	require.NoError(t, xctx.AddFFIUserData(id, 5), "the 48-byte UserData_Add args of older plugins")
	require.NoError(t, xctx.Close())
}

func TestGPUCustomCalls(t *testing.T) {
	c := openConformance(t)
	p, err := LoadPlugin(c.path)
	require.NoError(t, err)
	fn := ffiTrampoline() // a valid XLA_FFI_Handler to hand to the plugin
	require.NoError(t, p.RegisterGPUCustomCall("halo_gpu_legacy", 0, GPUCustomCallHandlers{Execute: fn}))
	require.NoError(t, p.RegisterGPUCustomCall("halo_gpu_typed", 1, GPUCustomCallHandlers{Instantiate: fn, Prepare: fn, Initialize: fn, Execute: fn}))
	calls := c.text("conformance_gpu_custom_calls")
	assert.Contains(t, calls, "halo_gpu_legacy:0")
	assert.Contains(t, calls, "halo_gpu_typed:1")
	rec := c.record("gpu_custom_call_handlers")
	assert.Contains(t, rec, "halo_gpu_legacy:v2:execute")
	assert.Contains(t, rec, "halo_gpu_typed:v2:instantiate+prepare+initialize+execute")
	assert.ErrorIs(t, p.RegisterGPUCustomCall("x", 2, GPUCustomCallHandlers{Execute: fn}), InvalidArgument)
	assert.ErrorIs(t, p.RegisterGPUCustomCall("x", 1, GPUCustomCallHandlers{}), InvalidArgument)
	assert.ErrorIs(t, p.RegisterGPUCustomCall("", 1, GPUCustomCallHandlers{Execute: fn}), InvalidArgument)

	// A plugin older than PJRT 0.55 has version 1 of the extension.
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_PJRT_MINOR", "50")
	old, err := LoadPlugin(path)
	require.NoError(t, err)
	lib, err := loadLib(path)
	require.NoError(t, err)
	oc := &conformance{t: t, path: path, lib: lib}
	err = old.RegisterGPUCustomCall("halo_v1", 1, GPUCustomCallHandlers{Prepare: fn, Execute: fn})
	assert.ErrorIs(t, err, InvalidArgument)
	assert.Contains(t, err.Error(), "only an execute handler")
	require.NoError(t, old.RegisterGPUCustomCall("halo_v1", 1, GPUCustomCallHandlers{Execute: fn}))
	assert.Equal(t, "halo_v1:1", oc.text("conformance_gpu_custom_calls"))
	assert.Equal(t, "halo_v1:v1:execute", oc.record("gpu_custom_call_handlers"))
	assert.Contains(t, oc.text("conformance_ffi_handlers"), "halo_v1@CUDA:api=0.3", "the typed handler was registered with its metadata call")
}

// XLA gives a type name an id once (a second PJRT_FFI_Type_Register of the
// name is an error naming the id; the conformance plugin does the same):
// RegisterFFIType asks the plugin once per name, and takes the id from
// that error when other code of the process registered the name first.
func TestFFITypeRegisteredOnce(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	p := cl.Plugin()
	// The plugin stays loaded across runs of the test (-count): new names each run.
	once, elsewhere := uniqueName("halo_once_type"), uniqueName("halo_elsewhere_type")
	before := c.counter("ffi_type_registrations")
	id, err := p.RegisterFFIType(once)
	require.NoError(t, err)
	for range 3 {
		again, err := p.RegisterFFIType(once)
		require.NoError(t, err)
		assert.Equal(t, id, again)
	}
	assert.Equal(t, int64(1), c.counter("ffi_type_registrations")-before)

	cp := p.b.(*cPlugin)
	other, err := cp.registerFFIType(elsewhere) // as other code would
	require.NoError(t, err)
	_, err = cp.registerFFIType(elsewhere)
	require.ErrorContains(t, err, "already registered with type id")
	got, err := p.RegisterFFIType(elsewhere)
	require.NoError(t, err)
	assert.Equal(t, other, got)
}

// TestCloseInsideHandler closes the client from a Go FFI handler that
// the plugin runs before Execute returns (the conformance plugin's inline
// execution, as XLA's CPU client runs cheap computations): Close cannot
// wait for that Execute, which waits for the handler. It returns, the
// Execute completes, and the client is released once Execute has
// returned.
func TestCloseInsideHandler(t *testing.T) {
	c := openConformance(t)
	inline := func(on bool) {
		v := 0
		if on {
			v = 1
		}
		purego.SyscallN(c.sym("conformance_set_inline"), uintptr(v))
	}
	inline(true)
	defer inline(false)
	cl := c.client(t)
	clientsBefore, buffersBefore := c.live("client"), c.live("buffer")
	callsBefore := c.counter("ffi_handler_calls")
	closed := make(chan error, 1)
	require.NoError(t, cl.Plugin().RegisterFFIHandler("halo_close_client", "conformance", func(f *FFICallFrame) error {
		closed <- cl.Close()
		copy(f.Rets[0].Bytes(), f.Args[0].Bytes())
		return nil
	}, 0))
	exe, err := cl.Compile(MLIRText(ffiProgram("halo_close_client", "f32[1] -> f32[1]")), nil)
	require.NoError(t, err)
	x, err := BufferFrom(cl, []float32{1}, []int64{1}, CopyDuringCall())
	require.NoError(t, err)
	x.Await(ctxT(t)) // ready, so that the computation runs inline
	executeClosingClient(t, exe, x, closed)
	assert.EqualValues(t, 1, c.counter("ffi_handler_calls")-callsBefore, "the handler ran")
	// The release follows the Execute, on another goroutine.
	deadline := time.Now().Add(time.Minute)
	for c.live("client") >= clientsBefore && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Less(t, c.live("client"), clientsBefore, "the client was released")
	assert.Equal(t, buffersBefore, c.live("buffer"), "buffers left")
	_, err = cl.Compile(MLIRText(ffiProgram("halo_close_client", "f32[1] -> f32[1]")), nil)
	assert.ErrorIs(t, err, ErrClosed)
}

// Close inside a handler whose target is registered with a second plugin
// too (as effects does for every plugin it runs on) does not wait for the
// Execute running the handler either: the count of running handlers was
// the last registering plugin's, so Close, seeing none on its own,
// deadlocked.
func TestCloseInsideHandlerSharedByTwoPlugins(t *testing.T) {
	a := openConformance(t)
	inline := func(on uintptr) { purego.SyscallN(a.sym("conformance_set_inline"), on) }
	inline(1)
	defer inline(0)
	clA := a.client(t)
	clB, err := Open(testplugin.Copy(t, testplugin.Build(t)))
	require.NoError(t, err)
	defer clB.Close()
	target := uniqueName("halo_shared_close")
	closed := make(chan error, 1)
	h := func(f *FFICallFrame) error {
		closed <- clA.Close()
		copy(f.Rets[0].Bytes(), f.Args[0].Bytes())
		return nil
	}
	require.NoError(t, clA.Plugin().RegisterFFIHandler(target, "conformance", h, 0))
	require.NoError(t, clB.Plugin().RegisterFFIHandler(target, "conformance", h, 0))
	exe, err := clA.Compile(MLIRText(ffiProgram(target, "f32[1] -> f32[1]")), nil)
	require.NoError(t, err)
	x, err := BufferFrom(clA, []float32{1}, []int64{1}, CopyDuringCall())
	require.NoError(t, err)
	require.NoError(t, x.Await(ctxT(t)))
	executeClosingClient(t, exe, x, closed)
}

// executeClosingClient runs exe on x, whose handler closes the client and
// sends Close's error on closed: Execute returns (with ErrClosed, or
// nothing, the outputs released with the client), and Close succeeded.
func executeClosingClient(t *testing.T, exe *Executable, x *Buffer, closed chan error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := exe.Execute([][]*Buffer{{x}}, ExecuteOptions{}); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			require.ErrorIs(t, err, ErrClosed)
		}
	case <-time.After(time.Minute):
		t.Fatal("Execute did not return: Close inside the handler waits for it")
	}
	require.NoError(t, <-closed)
}

// A duplicate user data type is AlreadyExists on the interpreter, as on
// a C plugin.
func TestFFIUserDataDuplicateOnInterpreter(t *testing.T) {
	cl := openInterpreter(t)
	xctx, err := cl.NewExecuteContext()
	require.NoError(t, err)
	defer xctx.Close()
	id, err := cl.Plugin().RegisterFFIType(uniqueName("halo_dup_type"))
	require.NoError(t, err)
	require.NoError(t, xctx.AddFFIUserData(id, 7))
	assert.ErrorIs(t, xctx.AddFFIUserData(id, 8), AlreadyExists)
}

// TestHandlerGoexit: a Go handler that calls runtime.Goexit (as t.FailNow
// does) fails its computation, on a C plugin (whose thread is not Go's:
// the process died) and on the interpreter (whose worker ended: the
// computation never finished).
func TestHandlerGoexit(t *testing.T) {
	goexit := func(*FFICallFrame) error {
		runtime.Goexit()
		return nil
	}
	t.Run("conformance", func(t *testing.T) {
		c := openConformance(t)
		cl := c.client(t)
		require.NoError(t, cl.Plugin().RegisterFFIHandler("halo_goexit", "conformance", goexit, 0))
		_, err := runFFI(t, cl, ffiProgram("halo_goexit", "f32[1] -> f32[1]"), nil, 1)
		assert.ErrorIs(t, err, Internal)
		assert.ErrorContains(t, err, `the Go handler for "halo_goexit" called runtime.Goexit`)
	})
	t.Run("interpreter", func(t *testing.T) {
		cl := openInterpreter(t)
		require.NoError(t, cl.Plugin().RegisterFFIHandler("halo_goexit", "Host", goexit, 0))
		exe, err := cl.Compile(MLIRText(fmt.Sprintf(`func.func @main(%%x: tensor<1xf32>) -> tensor<1xf32> {
  %%0 = stablehlo.custom_call @halo_goexit(%%x) {api_version = 4 : i32, has_side_effect = true, backend_config = {halo.callback_id = %d : i64}} : (tensor<1xf32>) -> tensor<1xf32>
  return %%0 : tensor<1xf32>
}`, FFICallbackID("halo_goexit"))), nil)
		require.NoError(t, err)
		x, err := BufferFrom(cl, []float32{1}, []int64{1})
		require.NoError(t, err)
		res, err := exe.Execute([][]*Buffer{{x}}, ExecuteOptions{})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err = res.Outputs[0][0].Await(ctx)
		require.NotErrorIs(t, err, context.DeadlineExceeded, "the computation never finished")
		assert.ErrorContains(t, err, "called runtime.Goexit")
	})
}

// TestExecuteContextLifetime: an execute context is released when it is
// dropped (a runtime cleanup, as buffers have: 100 dropped ones stayed
// until Client.Close), and a context closed while a computation that uses
// it has not finished is released only once it has (the plugin reads it
// until then).
func TestExecuteContextLifetime(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	waitLive := func(want int64) int64 {
		deadline := time.Now().Add(10 * time.Second)
		for c.live("execute_context") != want && time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		return c.live("execute_context")
	}
	base := c.live("execute_context")
	for range 100 {
		_, err := cl.NewExecuteContext()
		require.NoError(t, err)
	}
	assert.Equal(t, base, waitLive(base), "dropped contexts are released")

	// A computation waiting for its input (an alias buffer not yet
	// fulfilled) holds its context past Close.
	exe, err := cl.Compile(MLIRText(addProgram), nil)
	require.NoError(t, err)
	xctx, err := cl.NewExecuteContext()
	require.NoError(t, err)
	alias, f, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Float32, 4))
	require.NoError(t, err)
	b, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, CopyDuringCall())
	require.NoError(t, err)
	res, err := exe.Execute([][]*Buffer{{alias, b}}, ExecuteOptions{Context: xctx})
	require.NoError(t, err)
	assert.Nil(t, res.Completion, "no completion events unless asked for")
	require.NoError(t, xctx.Close())
	_, err = exe.Execute([][]*Buffer{{b, b}}, ExecuteOptions{Context: xctx})
	assert.ErrorIs(t, err, ErrClosed, "a closed context is not used again")
	for range 3 {
		runtime.GC()
	}
	assert.Equal(t, base+1, c.live("execute_context"), "released while its computation waits")
	require.NoError(t, f.Fulfill(b))
	got, err := ToSlice[float32](ctxT(t), res.Outputs[0][0])
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, got)
	assert.Equal(t, base, waitLive(base), "released once the computation finished")
}

// uniqueNames numbers the names uniqueName makes.
var uniqueNames atomic.Int64

// uniqueName is base with a number no earlier call in this process got:
// names registered with a plugin stay registered while it is loaded.
func uniqueName(base string) string {
	return fmt.Sprintf("%s_%d", base, uniqueNames.Add(1))
}

// TestDeclaredFFIHandler: Compile registers a declared handler with the
// client's plugin when the program calls it, once per plugin, and not for
// programs that do not call it.
func TestDeclaredFFIHandler(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	prog := ffiProgram("halo_declared_triple", "f32[2] -> f32[2]")
	_, err := runFFI(t, cl, prog, nil, 1, 2)
	require.Error(t, err, "neither declared nor registered: the call finds no handler")

	DeclareFFIHandler("halo_declared_triple", func(f *FFICallFrame) error {
		src, dst := asFloat32(f.Args[0].Bytes()), asFloat32(f.Rets[0].Bytes())
		for i := range src {
			dst[i] = 3 * src[i]
		}
		return nil
	}, 0)
	meta := c.counter("ffi_metadata_calls")
	other := ffiProgram("halo_not_declared", "f32[2] -> f32[2]")
	exe, err := cl.Compile(MLIRText(other), nil)
	if err == nil {
		exe.Close()
	}
	assert.Equal(t, meta, c.counter("ffi_metadata_calls"), "a program that does not call it registers nothing")
	for i := 0; i < 2; i++ {
		got, err := runFFI(t, cl, prog, nil, 1, 2)
		require.NoError(t, err)
		assert.Equal(t, []float32{3, 6}, got)
	}
	assert.Equal(t, meta+1, c.counter("ffi_metadata_calls"), "registered once")
	assert.Contains(t, c.text("conformance_ffi_handlers"), "halo_declared_triple@"+FFIPlatform(cl.PlatformName()))
	assert.Equal(t, "CUDA", FFIPlatform("cuda"))
	assert.Equal(t, "Host", FFIPlatform("cpu"))
	assert.Panics(t, func() { DeclareFFIHandler("", nil, 0) })
}

// A declared handler is registered by the other ways a program reaches a
// client too: an executable loaded from Serialize's bytes in a fresh
// plugin instance (as from an executable cache in a new process), and one
// compiled ahead of time (Topology.Compile, then Client.Load). Before,
// only Client.Compile registered it and such programs found no handler.
func TestDeclaredFFIHandlerAfterDeserializeAndLoad(t *testing.T) {
	const target = "halo_declared_times3"
	DeclareFFIHandler(target, func(f *FFICallFrame) error {
		src, dst := asFloat32(f.Args[0].Bytes()), asFloat32(f.Rets[0].Bytes())
		for i := range src {
			dst[i] = 3 * src[i]
		}
		return nil
	}, 0)
	DeclareFFIHandler("halo_declared_unused", func(*FFICallFrame) error { return nil }, 0)
	prog := MLIRText(ffiProgram(target, "f32[2] -> f32[2]"))
	run := func(cl *Client, exe *Executable) []float32 {
		t.Helper()
		defer exe.Close()
		x, err := BufferFrom(cl, []float32{1, 2}, []int64{2}, CopyDuringCall())
		require.NoError(t, err)
		defer x.Close()
		outs, err := exe.Run(x)
		require.NoError(t, err)
		defer outs[0].Close()
		got, err := ToSlice[float32](ctxT(t), outs[0])
		require.NoError(t, err)
		return got
	}
	fresh := func() *Client { // a plugin instance no earlier test registered with
		cl, err := Open(testplugin.Copy(t, testplugin.Build(t)))
		require.NoError(t, err)
		t.Cleanup(func() { cl.Close() })
		return cl
	}

	a := fresh()
	exe, err := a.Compile(prog, nil)
	require.NoError(t, err)
	data, err := exe.Serialize()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 6}, run(a, exe))

	b := fresh()
	exe, err = b.DeserializeAndLoad(data, nil)
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 6}, run(b, exe), "DeserializeAndLoad")
	// Loading registers every declared handler, called or not: a plugin's
	// serialized form need not hold the targets' names as written (XLA's
	// CUDA plugin's did not, 2026-11-27), so it cannot tell which.
	for _, target := range []string{target, "halo_declared_unused"} {
		_, ok := b.plugin.ffi.Load(target + "\x00" + FFIPlatform(b.PlatformName()))
		assert.True(t, ok, "%s registered by DeserializeAndLoad", target)
	}

	c := fresh()
	topo, err := c.Plugin().NewTopology("")
	require.NoError(t, err)
	defer topo.Close()
	u, err := topo.Compile(prog, nil)
	require.NoError(t, err)
	defer u.Close()
	exe, err = c.Load(u, nil)
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 6}, run(c, exe), "Topology.Compile, then Load")
}

func TestContainsName(t *testing.T) {
	code := []byte(`%0 = stablehlo.custom_call @halo.pallas.check(%x) {backend_config = {halo.callback_id = 7 : i64}}
  %1 = "stablehlo.custom_call"(%y) {call_target_name = "zz_sub_x"} : (tensor<f32>) -> tensor<f32>`)
	for name, want := range map[string]bool{
		"halo.pallas.check": true, "zz_sub_x": true, "halo.pallas": false, "pallas.check": false, "zz_sub": false, "sub_x": false,
	} {
		assert.Equal(t, want, containsName(code, name), name)
	}
	assert.True(t, containsName([]byte("t"), "t"))
	assert.False(t, containsName([]byte("tt"), "t"))
}

// A plugin without FFI support still loads serialized executables that
// call no Go handler while handlers are declared: DeserializeAndLoad's
// registration of every declared handler is best effort (before, the
// load failed saying the program called a handler it did not; found in
// review).
func TestDeserializeAndLoadWithoutFFISupport(t *testing.T) {
	registerNoFFI.Do(func() {
		Register("halo-test-no-ffi", func() (backend.Plugin, error) {
			p, err := interpreter.OpenBackend()
			return noFFIPlugin{p}, err
		})
	})
	DeclareFFIHandler("halo_declared_not_called", func(*FFICallFrame) error { return nil }, 0)
	c, err := Open("halo-test-no-ffi")
	require.NoError(t, err)
	defer c.Close()
	_, ok := c.Plugin().b.(backend.FFIRegistrar)
	require.False(t, ok, "the test plugin must lack FFI support")
	exe, err := c.Compile(MLIRText(`func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}`), nil)
	require.NoError(t, err)
	data, err := exe.Serialize()
	require.NoError(t, err)
	require.NoError(t, exe.Close())
	for range 2 { // the refusal is remembered, and still not an error
		exe, err = c.DeserializeAndLoad(data, nil)
		require.NoError(t, err)
		x, err := BufferFrom(c, []float32{1, 2}, []int64{2})
		require.NoError(t, err)
		outs, err := exe.Run(x)
		require.NoError(t, err)
		got, err := ToSlice[float32](ctxT(t), outs[0])
		require.NoError(t, err)
		assert.Equal(t, []float32{2, 4}, got)
		x.Close()
		outs[0].Close()
		exe.Close()
	}
}

var registerNoFFI sync.Once

// noFFIPlugin is the interpreter's backend without its FFI registrar.
type noFFIPlugin struct{ backend.Plugin }
