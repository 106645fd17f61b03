package pjrt

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
)

// Plugin is a loaded backend: a PJRT C plugin or a built-in backend such as
// the interpreter. Plugins are loaded once per process and never unloaded.
// Besides clients, a Plugin makes what needs no client: topologies for
// ahead-of-time compilation (NewTopology), user events (NewUserEvent), and
// registrations of FFI handlers, FFI types and GPU custom calls, which
// hold for every client of the plugin.
type Plugin struct {
	name string
	path string
	b    backend.Plugin
	ffi  sync.Map // target + "\x00" + platform -> *ffiRegistration (EnsureFFIHandler)
}

// handlersRunning counts the Go FFI handlers running now, in every plugin
// (a target registered with several plugins has one handler, whichever
// plugin calls it). A plugin may run one inside a call into it (a
// computation run before Execute returns), so Client.Close does not wait
// for calls in progress while one runs.
var handlersRunning atomic.Int64

// check returns the error of a call on a nil plugin.
func (p *Plugin) check() error {
	if p == nil {
		return errorf(InvalidArgument, "Plugin", "plugin is nil")
	}
	return nil
}

// Name is the plugin's short name ("cpu", "cuda", "interpreter") or the
// base name of its file ("" for a nil plugin).
func (p *Plugin) Name() string {
	if p == nil {
		return ""
	}
	return p.name
}

// Path is the shared library the plugin was loaded from ("" for built-ins
// and a nil plugin).
func (p *Plugin) Path() string {
	if p == nil {
		return ""
	}
	return p.path
}

// Version is the PJRT C API version the plugin implements (0.0 for a nil
// plugin).
func (p *Plugin) Version() (major, minor int) {
	if p == nil {
		return 0, 0
	}
	return p.b.Version()
}

// Attributes returns the plugin attributes (xla_version,
// stablehlo_current_version, stablehlo_minimum_version ...). Values are
// string, int64, []int64, float32 or bool. A nil plugin has none.
func (p *Plugin) Attributes() map[string]any {
	out := map[string]any{}
	if p == nil {
		return out
	}
	for _, a := range p.b.Attributes() {
		out[a.Name] = a.Value
	}
	return out
}

// String describes the plugin: name, PJRT version and path ("Plugin(nil)"
// for a nil plugin).
func (p *Plugin) String() string {
	if p == nil {
		return "Plugin(nil)"
	}
	ma, mi := p.Version()
	if p.path == "" {
		return fmt.Sprintf("%s (PJRT %d.%d, built in)", p.name, ma, mi)
	}
	return fmt.Sprintf("%s (PJRT %d.%d, %s)", p.name, ma, mi, p.path)
}

var (
	builtinMu sync.Mutex
	builtins  = map[string]backend.Opener{}
	pluginsMu sync.Mutex
	plugins   = map[string]*Plugin{}
)

// Register makes a built-in backend available under name (the interpreter
// registers as "interpreter"). It panics if name is taken, like
// database/sql.Register.
func Register(name string, open backend.Opener) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if _, dup := builtins[name]; dup || open == nil {
		panic("pjrt: Register called twice or with nil opener for " + name)
	}
	builtins[name] = open
}

// LoadPlugin loads a plugin by short name ("cpu", "cuda", "tpu", or a
// registered built-in such as "interpreter"), by path to a .so file, or,
// for "", the first of Candidates that loads (a plugin that fails to load
// is passed over: load each of Candidates to learn why).
func LoadPlugin(nameOrPath string) (*Plugin, error) {
	if nameOrPath == "" {
		return firstOf(Candidates(), "no plugin loads and no built-in interpreter is registered",
			func(p *Plugin) (*Plugin, error) { return p, nil })
	}
	builtinMu.Lock()
	open, isBuiltin := builtins[nameOrPath]
	builtinMu.Unlock()
	pluginsMu.Lock()
	defer pluginsMu.Unlock()
	if p := plugins[nameOrPath]; p != nil {
		return p, nil
	}
	if isBuiltin {
		b, err := open()
		if err != nil {
			return nil, fmt.Errorf("pjrt: built-in backend %q: %w", nameOrPath, err)
		}
		p := &Plugin{name: nameOrPath, b: b}
		plugins[nameOrPath] = p
		return p, nil
	}
	info, err := findPlugin(nameOrPath)
	if err != nil {
		return nil, err
	}
	key := realPath(info.Path) // one library under two names loads once
	if p := plugins[key]; p != nil {
		return p, nil
	}
	if info.Name == "cuda" {
		if dirs := nvidiaLibraryDirs(info.Path); len(dirs) > 0 {
			// Best effort: the plugin's own dlopen reports what is missing.
			_, _ = preloadNVIDIALibraries(dirs)
		}
	}
	cp, err := loadCPlugin(info.Path)
	if err != nil {
		return nil, err
	}
	p := &Plugin{name: info.Name, path: info.Path, b: cp}
	plugins[key] = p
	plugins[nameOrPath] = p
	return p, nil
}

// Candidates lists, best first and without loading any, the backends
// LoadPlugin("") tries: a CUDA plugin when an NVIDIA GPU is present, a TPU
// plugin, the other plugin files named in $PJRT_PLUGIN_LIBRARY_PATH (named
// there, so asked for), a CPU plugin, then the built-in interpreter (Path
// "") when it is registered. Each may still fail to load or to run here.
func Candidates() []PluginInfo { return defaultSearchEnv().candidates() }

func (e searchEnv) candidates() []PluginInfo {
	found := map[string]PluginInfo{}
	var extra []PluginInfo
	for _, info := range e.plugins() {
		switch {
		case !info.Found || info.Note != "":
		case slices.Contains(knownPlugins, info.Name):
			found[info.Name] = info
		default:
			extra = append(extra, info)
		}
	}
	var out []PluginInfo
	for _, name := range []string{"cuda", "tpu"} {
		if info, ok := found[name]; ok {
			out = append(out, info)
		}
	}
	out = append(out, extra...)
	if info, ok := found["cpu"]; ok {
		out = append(out, info)
	}
	builtinMu.Lock()
	_, ok := builtins["interpreter"]
	builtinMu.Unlock()
	if ok {
		out = append(out, PluginInfo{Name: "interpreter", Found: true})
	}
	return out
}

// NameOrPath is what LoadPlugin takes for the plugin: its file's path, or
// the name of a built-in.
func (i PluginInfo) NameOrPath() string {
	if i.Path == "" {
		return i.Name
	}
	return i.Path
}

// loadCandidate loads one of Candidates, naming it in its error.
func loadCandidate(info PluginInfo) (*Plugin, error) {
	p, err := LoadPlugin(info.NameOrPath())
	if err != nil && info.Path != "" {
		return nil, fmt.Errorf("%s plugin %s: %w", info.Name, info.Path, err)
	}
	return p, err
}

// searchedReport lists, per short name, where discovery looked.
func searchedReport() string {
	var b strings.Builder
	for _, info := range Plugins() {
		if info.Found {
			continue
		}
		fmt.Fprintf(&b, "  %s: not found in %s\n", info.Name, strings.Join(info.Searched, ", "))
	}
	return b.String()
}

// Option configures a client created by Open or Plugin.NewClient. Options
// become PJRT_NamedValue create options.
type Option struct {
	Name  string // the option's name, as the plugin knows it
	Value any    // string, int64, []int64, float32 or bool (int, []int and float64 are converted)
}

// WithOption passes a create option to the plugin by name.
func WithOption(name string, value any) Option { return Option{Name: name, Value: value} }

// CPUDeviceCount sets the number of devices of the CPU plugin and of the
// interpreter ("cpu_device_count").
func CPUDeviceCount(n int) Option { return Option{"cpu_device_count", int64(n)} }

// DeviceCount sets the number of simulated devices of the interpreter and
// the conformance plugin ("device_count").
func DeviceCount(n int) Option { return Option{"device_count", int64(n)} }

// MemoryFraction sets the fraction of GPU memory the CUDA plugin may use
// ("memory_fraction").
func MemoryFraction(f float32) Option { return Option{"memory_fraction", f} }

// Preallocate says whether the CUDA plugin reserves its memory up front
// ("preallocate").
func Preallocate(b bool) Option { return Option{"preallocate", b} }

// VisibleDevices restricts the CUDA plugin to the given device ordinals
// ("visible_devices").
func VisibleDevices(ids ...int64) Option {
	return Option{"visible_devices", append([]int64(nil), ids...)}
}

// Open loads a plugin (see LoadPlugin for nameOrPath) and creates a
// client. With "", each of Candidates in turn until one gives a client: a
// plugin that loads but cannot start one (a CUDA plugin on a machine
// without a GPU, options it refuses) is passed over, so the built-in
// interpreter, last, is the fallback; Client.Plugin says which was
// chosen, and the error when none is lists why each was passed over.
func Open(nameOrPath string, options ...Option) (*Client, error) {
	if nameOrPath == "" {
		return openFirst(Candidates(), options)
	}
	p, err := LoadPlugin(nameOrPath)
	if err != nil {
		return nil, err
	}
	return p.NewClient(options...)
}

// openFirst returns a client of the first of cands that loads and
// creates one with options.
func openFirst(cands []PluginInfo, options []Option) (*Client, error) {
	return firstOf(cands, "no plugin gives a client", func(p *Plugin) (*Client, error) {
		c, err := p.NewClient(options...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return c, nil
	})
}

// firstOf returns use's result for the first of cands that loads and that
// use accepts; else an error saying none did (none), why each was passed
// over, and where discovery looked.
func firstOf[T any](cands []PluginInfo, none string, use func(*Plugin) (T, error)) (T, error) {
	var tried []string
	for _, info := range cands {
		p, err := loadCandidate(info)
		if err == nil {
			var v T
			if v, err = use(p); err == nil {
				return v, nil
			}
		}
		tried = append(tried, err.Error())
	}
	var zero T
	return zero, fmt.Errorf("pjrt: %s%s; searched:\n%s", none, strings.Join(append([]string{""}, tried...), "\n  "), searchedReport())
}

// NewClient creates a client of the plugin.
func (p *Plugin) NewClient(options ...Option) (*Client, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	nvs := make([]backend.NamedValue, len(options))
	for i, o := range options {
		switch o.Value.(type) {
		case string, int64, []int64, float32, bool, int, []int, float64:
		default:
			return nil, fmt.Errorf("pjrt: option %q has type %T; options are string, int64, []int64, float32 or bool (or int, []int, float64)", o.Name, o.Value)
		}
		nvs[i] = backend.NamedValue{Name: o.Name, Value: o.Value}
	}
	b, err := p.b.NewClient(nvs)
	if err != nil {
		return nil, err
	}
	return newClient(p, b), nil
}

// APIVersion is the PJRT C API version halo's mirrors were generated from.
func APIVersion() (major, minor int) { return capi.APIMajor, capi.APIMinor }

// sortedAttrNames returns the keys of m in order.
func sortedAttrNames(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// guard is the open/closed state of an object with a plugin handle and
// the count of its calls in progress, so that Close releases the handle
// only after the last of them: a call that began before Close still uses
// a valid handle, one that begins after it gets ErrClosed. Calls on a
// client's objects are calls on the client too (Client.Close waits for
// them).
type guard struct {
	c *Client   // the client the calls join (nil: none)
	x io.Closer // the backend object: c.release(x), or x.Close() without c (nil: nothing to release)

	mu       sync.Mutex
	closed   bool
	users    int
	released bool
}

// enter begins a call (ErrClosed once the object or its client is
// closed); exit must follow.
func (g *guard) enter() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	g.users++
	g.mu.Unlock()
	if g.c != nil {
		if err := g.c.enter(); err != nil {
			g.leave()
			return err
		}
	}
	return nil
}

// exit ends a call begun by enter; the last call after a Close releases
// the handle.
// hold keeps the handle from being released, by Close or a cleanup, until
// leave, without a call on the client (so Client.Close does not wait for
// it); false once the object is closed.
func (g *guard) hold() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.users++
	return true
}

func (g *guard) exit() {
	if g.c != nil {
		g.c.exit()
	}
	g.leave()
}

func (g *guard) leave() {
	g.mu.Lock()
	g.users--
	release := g.releasable()
	g.mu.Unlock()
	if release {
		g.release()
	}
}

// release releases the handle: through the client that tracks it, else
// directly.
func (g *guard) release() error {
	if g.c != nil {
		return g.c.release(g.x)
	}
	return g.x.Close()
}

// close marks the object closed and releases the handle when no call is
// in progress (else the last call does). It is idempotent.
func (g *guard) close() error {
	g.mu.Lock()
	g.closed = true
	release := g.releasable()
	g.mu.Unlock()
	if release {
		return g.release()
	}
	return nil
}

// releasable reports, once, that the handle is to be released now (g.mu
// held).
func (g *guard) releasable() bool {
	if !g.closed || g.users > 0 || g.released || g.x == nil {
		return false
	}
	g.released = true
	return true
}
