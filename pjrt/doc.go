// Package pjrt runs compiled XLA programs on PJRT backends from Go,
// without cgo.
//
// One API, pluggable backends, as in database/sql: PJRT C plugins
// (pjrt_c_api_cpu_plugin.so, the CUDA plugin of the jax-cuda*-pjrt wheels,
// libtpu.so) are loaded with purego; built-in backends such as the
// interpreter register themselves with Register. Callers never branch on
// the backend.
//
//	c, err := pjrt.Open("")                // best plugin found, else the interpreter
//	exe, err := c.Compile(pjrt.MLIRText(text), nil)
//	x, err := pjrt.BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
//	outs, err := exe.Run(x, x)             // returns at once
//	sum, err := pjrt.ToSlice[float32](ctx, outs[0])
//
// A module built with package stablehlo compiles as it is:
// c.Compile(pjrt.StableHLO(mod), nil).
//
// # Discovery
//
// Open and LoadPlugin take an explicit .so path or a short name (cpu, cuda,
// tpu) searched in PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/halo,
// /usr/local/lib/halo, LD_LIBRARY_PATH and Python site-packages (see
// Plugins). The empty name picks the best plugin found (Candidates'
// order): Open passes over one that loads but cannot create a client, so
// the built-in interpreter is the last resort.
//
// # Versions
//
// halo's mirrors of the C structs are generated from the PJRT C API 0.114
// layout tables (third_party/pjrt). A plugin of major version 0 and any
// minor loads: the function slots halo uses are decided from the plugin's
// minor version, a missing one is an Unimplemented error naming it, and a
// plugin that rejects an args struct as too small yields a
// *StructSizeError naming the struct and both versions.
//
// # Memory and threads
//
// Every C call goes through one helper that pins the args struct for the
// call; Go memory the plugin keeps past the call (host
// data of an asynchronous transfer, a ToHost destination) stays pinned
// until the plugin's event says it is done. Events are delivered through
// one purego callback for the PJRT_Event_OnReady signature with an integer
// handle, never one callback per call; callbacks may arrive on the
// plugin's own threads. Buffer.Await and Buffer.ToHost with a context that
// cannot be cancelled (context.Background) skip the callback: the plugin
// blocks the calling thread until the event is ready (PJRT_Event_Await),
// which returns sooner (on an H100, a small program's dispatch and wait
// took 0.07–0.09 ms this way against 0.12–0.15 ms through the callback).
// When a plugin refuses PJRT_Event_Await, the wait takes the callback;
// when it refuses the callback too, the event is polled
// (PJRT_Event_IsReady), so that host memory is never released while the
// plugin may still write it. Client, Executable and Buffer are safe for
// concurrent use. Everything with a C handle has an idempotent Close and a
// runtime cleanup. A Close releases the handle only after the calls on it
// in progress have returned (later calls return ErrClosed); Client.Close
// fails pending alias buffers, waits for the calls into the plugin in
// progress on the client and its objects (waits on events excepted), then
// releases what is still open.
//
// # Optional features
//
// Beyond the core (clients, devices, memories, buffers, compile, execute,
// events), the API offers what PJRT offers where a backend supports it:
// buffer layouts, pointers, external references, raw copies, bitcasts and
// donation with a control dependency; uninitialized, error, view and alias
// buffers; async host-to-device transfers (AsyncTransfer); DMA mappings;
// process info; device memory statistics, poisoning and tracking events;
// executable cost analysis, memory statistics, optimized program, compile
// options, device assignment; topologies and ahead-of-time compilation
// (Topology.Compile, Client.Load); user events; error payloads. Like
// database/sql/driver, each rests on an optional interface of package
// backend; a backend (or a plugin too old for the PJRT function) without it
// answers with an Unimplemented *Error naming the feature or function.
//
// # Extensions
//
// Plugin.Extensions names the PJRT extensions a plugin offers. halo uses:
//
//   - FFI: Plugin.RegisterFFIHandler (Go handlers for typed-FFI custom
//     calls), Plugin.RegisterFFIType, ExecuteContext.AddFFIUserData. Every
//     Go handler is registered with the same C function, one purego
//     trampoline for the XLA_FFI_Handler signature; a call reaches its Go
//     function through the i64 attribute halo.callback_id =
//     FFICallbackID(target) that the custom call must carry. The trampoline
//     answers XLA's metadata call (API version 0.3, or the plugin's lower
//     one, and the registration's traits), decodes buffers and attributes
//     into an FFICallFrame, turns returned errors and recovered panics into
//     XLA_FFI_Errors, and reaches user data, device ordinal, run id and
//     stream through the frame's XLA_FFI_Api. Plugins whose FFI extension
//     predates handler registration get the handler through the GPU
//     custom-call extension; their 48-byte PJRT_FFI_UserData_Add_Args are
//     sent to every plugin (newer ones accept the larger struct).
//   - Gpu_Custom_Call: Plugin.RegisterGPUCustomCall for C handlers, with
//     version 1 of the extension (one function, plugins before PJRT 0.55)
//     and version 2 (instantiate/prepare/initialize/execute handlers).
//   - Layouts: Client.DefaultLayout, Topology.DefaultLayout,
//     Buffer.SerializedLayout, Executable.OutputLayouts/ParameterLayouts.
//   - MemoryDescriptions: Device.MemoryDescriptions and the Memories of
//     Topology.DeviceDescriptions.
//
// # Coverage
//
// 133 of the 138 function slots of the PJRT C API 0.114 (96%) are used by
// this package; coverage_test.go checks that every other slot is listed
// here, with the reason it is left out.
//
// # Left out
//
//   - PJRT_CopyToDeviceStream_Destroy: streams exist only inside the recv callbacks of PJRT_ExecuteOptions, which halo does not expose (host callbacks use the FFI).
//   - PJRT_CopyToDeviceStream_AddChunk: as PJRT_CopyToDeviceStream_Destroy.
//   - PJRT_CopyToDeviceStream_TotalBytes: as PJRT_CopyToDeviceStream_Destroy.
//   - PJRT_CopyToDeviceStream_GranuleSize: as PJRT_CopyToDeviceStream_Destroy.
//   - PJRT_CopyToDeviceStream_CurrentBytes: as PJRT_CopyToDeviceStream_Destroy.
package pjrt
