package pjrt

import (
	"runtime"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// Topology describes the devices of a platform: a client's (Client.Topology)
// or one made without a client (Plugin.NewTopology, DeserializeTopology),
// for ahead-of-time compilation with Topology.Compile.
type Topology struct {
	plugin *Plugin
	client *Client // nil for standalone topologies
	b      backend.Topology
	g      guard // Close releases a standalone b after the calls in progress
}

// DeviceDescription describes one device of a topology.
type DeviceDescription struct {
	ID           int
	ProcessIndex int
	Kind         string
	DebugString  string
	String       string
	Attributes   map[string]any
	// Memories are the device's memory spaces (nil when the plugin lacks
	// the MemoryDescriptions extension).
	Memories []MemoryDescription
}

// Topology returns the client's topology. It belongs to the client: its
// Close ends this value's use (later calls return ErrClosed) without
// destroying the topology, and it is unusable once the client is closed.
func (c *Client) Topology() (*Topology, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	x, ok := c.b.(backend.TopologyGetter)
	if !ok {
		return nil, notSupported("PJRT_Client_TopologyDescription", "topologies", c.plugin)
	}
	t, err := x.Topology()
	if err != nil {
		return nil, err
	}
	return &Topology{plugin: c.plugin, client: c, b: t, g: guard{c: c}}, nil
}

func (p *Plugin) topologyCreator(op string) (backend.TopologyCreator, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	x, ok := p.b.(backend.TopologyCreator)
	if !ok {
		return nil, notSupported(op, "standalone topologies", p)
	}
	return x, nil
}

func (p *Plugin) newTopology(b backend.Topology) *Topology {
	t := &Topology{plugin: p, b: b, g: guard{x: b}}
	runtime.AddCleanup(t, func(b backend.Topology) { b.Close() }, b)
	return t
}

// NewTopology describes a topology by name (plugin-specific, e.g. a TPU
// slice "v5e:2x2"; "" for the plugin's default) without creating a client.
// Close releases it.
func (p *Plugin) NewTopology(name string, options ...Option) (*Topology, error) {
	const op = "PJRT_TopologyDescription_Create"
	x, err := p.topologyCreator(op)
	if err != nil {
		return nil, err
	}
	nvs, err := optionValues(options)
	if err != nil {
		return nil, err
	}
	b, err := x.NewTopology(name, nvs)
	if err != nil {
		return nil, err
	}
	return p.newTopology(b), nil
}

// DeserializeTopology rebuilds a topology from Topology.Serialize's bytes.
func (p *Plugin) DeserializeTopology(data []byte) (*Topology, error) {
	const op = "PJRT_TopologyDescription_Deserialize"
	x, err := p.topologyCreator(op)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, errorf(InvalidArgument, op, "empty serialized topology")
	}
	b, err := x.DeserializeTopology(data)
	if err != nil {
		return nil, err
	}
	return p.newTopology(b), nil
}

// enter begins a call on the topology (ErrClosed once it or its client is
// closed; a client's Close waits for the call); exit must follow.
func (t *Topology) enter() error {
	if t == nil {
		return errorf(InvalidArgument, "Topology", "topology is nil")
	}
	return t.g.enter()
}

// exit ends a call begun by enter.
func (t *Topology) exit() { t.g.exit() }

// PlatformName is the topology's platform, e.g. "cuda", "tpu".
func (t *Topology) PlatformName() (string, error) {
	if err := t.enter(); err != nil {
		return "", err
	}
	defer t.exit()
	return t.b.PlatformName()
}

// PlatformVersion is the platform's version string.
func (t *Topology) PlatformVersion() (string, error) {
	if err := t.enter(); err != nil {
		return "", err
	}
	defer t.exit()
	return t.b.PlatformVersion()
}

// DeviceDescriptions describes every device of the topology.
func (t *Topology) DeviceDescriptions() ([]DeviceDescription, error) {
	if err := t.enter(); err != nil {
		return nil, err
	}
	defer t.exit()
	ds, err := t.b.DeviceDescriptions()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceDescription, len(ds))
	for i, d := range ds {
		out[i] = DeviceDescription{ID: d.ID, ProcessIndex: d.ProcessIndex, Kind: d.Kind, DebugString: d.DebugString,
			String: d.String, Attributes: namedValueMap(d.Attributes), Memories: d.Memories}
	}
	return out, nil
}

// Attributes are the topology's attributes.
func (t *Topology) Attributes() (map[string]any, error) {
	if err := t.enter(); err != nil {
		return nil, err
	}
	defer t.exit()
	a, err := t.b.Attributes()
	if err != nil {
		return nil, err
	}
	return namedValueMap(a), nil
}

// Serialize returns bytes Plugin.DeserializeTopology accepts.
func (t *Topology) Serialize() ([]byte, error) {
	if err := t.enter(); err != nil {
		return nil, err
	}
	defer t.exit()
	return t.b.Serialize()
}

// Fingerprint identifies the topology (equal topologies, equal fingerprints).
func (t *Topology) Fingerprint() (uint64, error) {
	if err := t.enter(); err != nil {
		return 0, err
	}
	defer t.exit()
	return t.b.Fingerprint()
}

// MemoryKindIDs are the ids of the memory space kinds of the topology.
func (t *Topology) MemoryKindIDs() ([]int, error) {
	if err := t.enter(); err != nil {
		return nil, err
	}
	defer t.exit()
	return t.b.MemoryKindIDs()
}

// CanonicalShape returns the serialized xla.ShapeProto of shape as it is
// laid out in the memory space of the given kind id.
func (t *Topology) CanonicalShape(kindID int, shape xla.Shape) ([]byte, error) {
	if err := t.enter(); err != nil {
		return nil, err
	}
	defer t.exit()
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, "PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace", "%v", err)
	}
	return t.b.CanonicalShape(kindID, shape)
}

// DefaultLayout is the serialized default layout of shape on this
// topology (Layouts extension).
func (t *Topology) DefaultLayout(shape xla.Shape) ([]byte, error) {
	if err := t.enter(); err != nil {
		return nil, err
	}
	defer t.exit()
	if err := shape.Validate(); err != nil {
		return nil, errorf(InvalidArgument, "PJRT_Layouts_PJRT_Topology_GetDefaultLayout", "%v", err)
	}
	return t.b.DefaultLayout(shape)
}

// Close releases a standalone topology; a client's it only marks closed
// (the topology goes with its client). It is idempotent.
func (t *Topology) Close() error {
	if t == nil {
		return nil
	}
	return t.g.close()
}

// UnloadedExecutable is a program compiled for a topology but not loaded
// on a client (PJRT_Compile): serialize it for later, inspect it, or load
// it with Client.Load. Close releases it.
type UnloadedExecutable struct {
	plugin   *Plugin
	b        backend.CompiledProgram
	compiled compiledDetails // queries of the compiled program (see details)
	g        guard           // Close releases b after the calls in progress
}

// Compile compiles a program for the topology without loading it (ahead of
// time). A client's topology compiles with its client. opts may be nil.
// As Client.Compile, it first registers with the topology's plugin the
// declared Go FFI handlers the program calls, so that a client of the
// same plugin runs it after Load.
func (t *Topology) Compile(p Program, opts *xla.CompileOptions) (*UnloadedExecutable, error) {
	const op = "PJRT_Compile"
	if err := t.enter(); err != nil {
		return nil, err
	}
	defer t.exit()
	raw, err := compileInput(op, p, opts)
	if err != nil {
		return nil, err
	}
	platform, err := t.b.PlatformName()
	if err != nil {
		return nil, err
	}
	if err := registerDeclared(t.plugin, FFIPlatform(platform), p.Code); err != nil {
		return nil, err
	}
	var bc backend.Client
	if t.client != nil {
		bc = t.client.b
	}
	b, err := t.b.Compile(p.Code, p.Format, raw, bc)
	if err != nil {
		return nil, err
	}
	u := &UnloadedExecutable{plugin: t.plugin, b: b, g: guard{x: b}}
	u.compiled = compiledDetails{enter: u.enter, exit: u.exit, prog: b, plugin: t.plugin}
	runtime.AddCleanup(u, func(b backend.CompiledProgram) { b.Close() }, b)
	return u, nil
}

// enter begins a call on the executable (ErrClosed once closed); exit
// must follow.
func (u *UnloadedExecutable) enter() error {
	if u == nil {
		return errorf(InvalidArgument, "UnloadedExecutable", "unloaded executable is nil")
	}
	return u.g.enter()
}

// exit ends a call begun by enter.
func (u *UnloadedExecutable) exit() { u.g.exit() }

// Outputs describes the outputs each device produces.
func (u *UnloadedExecutable) Outputs() ([]Output, error) {
	if err := u.enter(); err != nil {
		return nil, err
	}
	defer u.exit()
	outs, err := u.b.Outputs()
	if err != nil {
		return nil, err
	}
	return outputsOf(outs), nil
}

// Close releases the executable. It is idempotent, and a nil one (a
// failed Compile's) closes without error.
func (u *UnloadedExecutable) Close() error {
	if u == nil {
		return nil
	}
	return u.g.close()
}

// Load loads an executable compiled by Topology.Compile on the client's
// devices. opts (may be nil) override its compile options.
func (c *Client) Load(u *UnloadedExecutable, opts *xla.CompileOptions) (*Executable, error) {
	const op = "PJRT_Client_Load"
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if u == nil {
		return nil, errorf(InvalidArgument, op, "executable is nil")
	}
	if err := u.enter(); err != nil {
		return nil, err
	}
	defer u.exit()
	x, ok := c.b.(backend.ProgramLoader)
	if !ok {
		return nil, notSupported(op, "loading compiled executables", c.plugin)
	}
	var raw []byte
	if opts != nil {
		var err error
		if raw, err = opts.Marshal(); err != nil {
			return nil, errorf(InvalidArgument, op, "%v", err)
		}
	}
	b, err := x.Load(u.b, raw)
	if err != nil {
		return nil, err
	}
	return c.newExecutable(b)
}

// optionValues checks and converts client/topology options.
func optionValues(options []Option) ([]backend.NamedValue, error) {
	nvs := make([]backend.NamedValue, len(options))
	for i, o := range options {
		switch o.Value.(type) {
		case string, int64, []int64, float32, bool, int, []int, float64:
		default:
			return nil, errorf(InvalidArgument, "", "option %q has type %T; options are string, int64, []int64, float32 or bool", o.Name, o.Value)
		}
		nvs[i] = backend.NamedValue{Name: o.Name, Value: o.Value}
	}
	return nvs, nil
}
