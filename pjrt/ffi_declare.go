package pjrt

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Declared FFI handlers: packages whose programs call Go handlers (pallas's
// bounds checks, effects' callbacks) declare them once, in init, and
// Client.Compile registers the ones a program calls with the client's
// plugin, so that their users need no registration step of their own.

// declaredHandler is a handler DeclareFFIHandler declared.
type declaredHandler struct {
	h      FFIHandler
	traits FFITraits
}

var (
	declaredMu sync.Mutex
	declared   = map[string]declaredHandler{}
)

// DeclareFFIHandler declares h as the Go handler of custom-call target
// for every client of this process: Client.Compile registers it with the
// client's plugin, for the client's platform (FFIPlatform), before it
// compiles a program that calls target through FFICallbackAttr, and
// Client.DeserializeAndLoad before it loads any executable (once per
// plugin; see EnsureFFIHandler). Declaring a target again replaces its
// handler for the plugins that have not registered it yet: a plugin
// registers a target once.
func DeclareFFIHandler(target string, h FFIHandler, traits FFITraits) {
	if target == "" || h == nil {
		panic("pjrt: DeclareFFIHandler needs a target and a handler")
	}
	declaredMu.Lock()
	defer declaredMu.Unlock()
	declared[target] = declaredHandler{h, traits}
}

// FFIPlatform is the platform name XLA registers FFI handlers under for a
// client's PlatformName: "Host" for cpu, "CUDA" for cuda or gpu, "ROCM"
// for rocm; other names unchanged.
func FFIPlatform(platform string) string {
	switch strings.ToLower(platform) {
	case "cuda", "gpu":
		return "CUDA"
	case "rocm":
		return "ROCM"
	case "cpu", "host":
		return "Host"
	}
	return platform
}

// ffiRegistration is the outcome of registering one target with a plugin
// for one platform.
type ffiRegistration struct {
	once sync.Once
	err  error
}

// EnsureFFIHandler registers h as the handler of target for platform with
// p (RegisterFFIHandler) once: later calls for the same target and
// platform, from any package or from Client.Compile's registration of
// declared handlers, return the first call's result and register nothing.
func (p *Plugin) EnsureFFIHandler(target, platform string, h FFIHandler, traits FFITraits) error {
	if err := p.check(); err != nil {
		return err
	}
	r, _ := p.ffi.LoadOrStore(target+"\x00"+platform, &ffiRegistration{})
	reg := r.(*ffiRegistration)
	reg.once.Do(func() { reg.err = p.RegisterFFIHandler(target, platform, h, traits) })
	return reg.err
}

// containsName reports whether code holds name as a whole symbol: not
// as part of a longer one ("t" is not in "@t_x" nor in "@x.t").
func containsName(code []byte, name string) bool {
	symbol := func(c byte) bool {
		return c == '_' || c == '.' || c == '$' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for from := 0; ; {
		i := bytes.Index(code[from:], []byte(name))
		if i < 0 {
			return false
		}
		at, end := from+i, from+i+len(name)
		if (at == 0 || !symbol(code[at-1])) && (end == len(code) || !symbol(code[end])) {
			return true
		}
		from = at + 1
	}
}

// registerDeclared registers with c's plugin the declared handlers that
// code (a program about to be compiled) calls: those whose target it
// names, when it carries FFICallbackAttr at all. A nil code (a serialized
// executable about to be loaded, whose bytes are the plugin's own and
// need not hold the names as written: XLA's CUDA plugin's do not) stands
// for every declared handler, registered as far as the plugin takes them:
// one it refuses (a plugin without FFI support refuses all) fails only an
// executable that calls it, when that is loaded or run, naming the target.
func (c *Client) registerDeclared(code []byte) error {
	return registerDeclared(c.plugin, FFIPlatform(c.PlatformName()), code)
}

// registerDeclared registers with plugin p, for platform, the declared
// handlers code calls (all of them, as far as p takes them, for a nil
// code).
func registerDeclared(p *Plugin, platform string, code []byte) error {
	if code != nil && !bytes.Contains(code, []byte(FFICallbackAttr)) {
		return nil
	}
	declaredMu.Lock()
	called := map[string]declaredHandler{}
	for t, d := range declared {
		if code == nil || containsName(code, t) {
			called[t] = d
		}
	}
	declaredMu.Unlock()
	for _, t := range slices.Sorted(maps.Keys(called)) { // registrations in a fixed order
		d := called[t]
		if err := p.EnsureFFIHandler(t, platform, d.h, d.traits); err != nil && code != nil {
			return fmt.Errorf("pjrt: the program calls the Go handler of %s, which plugin %s did not take: %w", t, p.Name(), err)
		}
	}
	return nil
}
