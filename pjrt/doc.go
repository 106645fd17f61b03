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
// # Discovery
//
// Open and LoadPlugin take an explicit .so path or a short name (cpu, cuda,
// tpu) searched in PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/halo,
// /usr/local/lib/halo, LD_LIBRARY_PATH and Python site-packages (see
// Plugins). The empty name picks the best plugin found.
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
// Every C call goes through one helper (cPlugin.call) that pins the args
// struct for the call; Go memory the plugin keeps past the call (host
// data of an asynchronous transfer, a ToHost destination) stays pinned
// until the plugin's event says it is done. Events are delivered through
// one purego callback for the PJRT_Event_OnReady signature with an integer
// handle, never one callback per call; callbacks may arrive on the
// plugin's own threads. Client, Executable and Buffer are safe for
// concurrent use. Everything with a C handle has an idempotent Close and a
// runtime cleanup; Client.Close releases what is still open, and later
// use returns ErrClosed.
package pjrt
