package pjrt

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// CompiledMemoryStats are the memory sizes of a compiled executable, on
// the device and on the host.
type CompiledMemoryStats = backend.CompiledMemoryStats

// LogicalDeviceID is the replica and partition an addressable device runs.
type LogicalDeviceID = backend.LogicalDeviceID

// compiledDetails gives Executable and UnloadedExecutable the queries of a
// compiled program (PJRT_Executable_*), which the two types export as
// wrappers documented there. It is a field, not embedded: a method
// promoted through a nil *Executable would dereference it before any of
// its code ran, where the wrappers report the nil executable (see
// Executable.details).
type compiledDetails struct {
	enter  func() error // begins a call: ErrClosed once the program (or its client) is closed
	exit   func()       // ends it
	prog   compiledProgram
	plugin *Plugin
}

// compiledProgram is what backend.Executable and backend.CompiledProgram
// have in common.
type compiledProgram interface {
	Name() (string, error)
	NumReplicas() (int, error)
	NumPartitions() (int, error)
	Fingerprint() (string, error)
	Serialize() ([]byte, error)
}

// details begins a call on the program as ExecutableDetails; the caller
// runs done when it has finished with x.
func (d compiledDetails) details(op string) (x backend.ExecutableDetails, done func(), err error) {
	if err := d.enter(); err != nil {
		return nil, nil, err
	}
	x, ok := d.prog.(backend.ExecutableDetails)
	if !ok {
		d.exit()
		return nil, nil, notSupported(op, "executable details", d.plugin)
	}
	return x, d.exit, nil
}

func (d compiledDetails) Name() (string, error) {
	if err := d.enter(); err != nil {
		return "", err
	}
	defer d.exit()
	return d.prog.Name()
}

func (d compiledDetails) NumReplicas() (int, error) {
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.exit()
	return d.prog.NumReplicas()
}

func (d compiledDetails) NumPartitions() (int, error) {
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.exit()
	return d.prog.NumPartitions()
}

func (d compiledDetails) Fingerprint() (string, error) {
	if err := d.enter(); err != nil {
		return "", err
	}
	defer d.exit()
	return d.prog.Fingerprint()
}

func (d compiledDetails) Serialize() ([]byte, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.exit()
	return d.prog.Serialize()
}

// outputsOf copies the backend's output descriptions.
func outputsOf(outs []backend.OutputInfo) []Output {
	res := make([]Output, len(outs))
	for i, o := range outs {
		res[i] = Output{Shape: o.Shape.Clone(), MemoryKind: o.MemoryKind}
	}
	return res
}

func (d compiledDetails) SizeOfGeneratedCode() (int64, error) {
	x, done, err := d.details("PJRT_Executable_SizeOfGeneratedCodeInBytes")
	if err != nil {
		return 0, err
	}
	defer done()
	return x.SizeOfGeneratedCode()
}

func (d compiledDetails) CostAnalysis() (map[string]any, error) {
	x, done, err := d.details("PJRT_Executable_GetCostAnalysis")
	if err != nil {
		return nil, err
	}
	defer done()
	nvs, err := x.CostAnalysis()
	if err != nil {
		return nil, err
	}
	return namedValueMap(nvs), nil
}

func (d compiledDetails) CompiledMemoryStats() (CompiledMemoryStats, error) {
	x, done, err := d.details("PJRT_Executable_GetCompiledMemoryStats")
	if err != nil {
		return CompiledMemoryStats{}, err
	}
	defer done()
	return x.CompiledMemoryStats()
}

func (d compiledDetails) OptimizedProgram() (Program, error) {
	x, done, err := d.details("PJRT_Executable_OptimizedProgram")
	if err != nil {
		return Program{}, err
	}
	defer done()
	code, format, err := x.OptimizedProgram()
	if err != nil {
		return Program{}, err
	}
	return Program{Code: code, Format: format}, nil
}

func (d compiledDetails) CompileOptions() (xla.CompileOptions, error) {
	x, done, err := d.details("PJRT_Executable_GetCompileOptions")
	if err != nil {
		return xla.CompileOptions{}, err
	}
	defer done()
	raw, err := x.CompileOptions()
	if err != nil {
		return xla.CompileOptions{}, err
	}
	return xla.UnmarshalCompileOptions(raw)
}

func (d compiledDetails) ParameterMemoryKinds() ([]string, error) {
	x, done, err := d.details("PJRT_Executable_ParameterMemoryKinds")
	if err != nil {
		return nil, err
	}
	defer done()
	return x.ParameterMemoryKinds()
}

func (d compiledDetails) OutputLayouts() ([][]byte, error) {
	x, done, err := d.details("PJRT_Layouts_PJRT_Executable_GetOutputLayouts")
	if err != nil {
		return nil, err
	}
	defer done()
	return x.OutputLayouts()
}

func (d compiledDetails) ParameterLayouts() ([][]byte, error) {
	x, done, err := d.details("PJRT_Layouts_PJRT_Executable_GetParameterLayouts")
	if err != nil {
		return nil, err
	}
	defer done()
	return x.ParameterLayouts()
}

// details are e's compiled-program queries; a nil e's report the nil
// executable.
func (e *Executable) details() compiledDetails {
	if e == nil {
		return compiledDetails{enter: e.enter}
	}
	return e.compiled
}

// Name is the executable's name (usually the module's).
func (e *Executable) Name() (string, error) { return e.details().Name() }

// NumReplicas is the number of replicas it was compiled for.
func (e *Executable) NumReplicas() (int, error) { return e.details().NumReplicas() }

// NumPartitions is the number of partitions it was compiled for.
func (e *Executable) NumPartitions() (int, error) { return e.details().NumPartitions() }

// Fingerprint identifies the compiled code (for caches).
func (e *Executable) Fingerprint() (string, error) { return e.details().Fingerprint() }

// Serialize returns bytes Client.DeserializeAndLoad accepts.
func (e *Executable) Serialize() ([]byte, error) { return e.details().Serialize() }

// SizeOfGeneratedCode is the size of the compiled code in bytes.
func (e *Executable) SizeOfGeneratedCode() (int64, error) { return e.details().SizeOfGeneratedCode() }

// CostAnalysis returns the compiler's cost estimates, e.g. "flops" and
// "bytes accessed" (values as in Plugin.Attributes).
func (e *Executable) CostAnalysis() (map[string]any, error) { return e.details().CostAnalysis() }

// CompiledMemoryStats returns the memory the program needs.
func (e *Executable) CompiledMemoryStats() (CompiledMemoryStats, error) {
	return e.details().CompiledMemoryStats()
}

// OptimizedProgram returns the program after the compiler's optimizations
// (usually an HloModuleProto, format "hlo").
func (e *Executable) OptimizedProgram() (Program, error) { return e.details().OptimizedProgram() }

// CompileOptions returns the options the program was compiled with,
// decoded (fields halo does not model are dropped).
func (e *Executable) CompileOptions() (xla.CompileOptions, error) {
	return e.details().CompileOptions()
}

// ParameterMemoryKinds are the memory kinds of the program's parameters.
func (e *Executable) ParameterMemoryKinds() ([]string, error) {
	return e.details().ParameterMemoryKinds()
}

// OutputLayouts are the serialized layouts of the outputs (Layouts extension).
func (e *Executable) OutputLayouts() ([][]byte, error) { return e.details().OutputLayouts() }

// ParameterLayouts are the serialized layouts of the parameters (Layouts
// extension).
func (e *Executable) ParameterLayouts() ([][]byte, error) { return e.details().ParameterLayouts() }

// details are u's compiled-program queries; a nil u's report the nil
// executable.
func (u *UnloadedExecutable) details() compiledDetails {
	if u == nil {
		return compiledDetails{enter: u.enter}
	}
	return u.compiled
}

// Name is the executable's name (usually the module's).
func (u *UnloadedExecutable) Name() (string, error) { return u.details().Name() }

// NumReplicas is the number of replicas it was compiled for.
func (u *UnloadedExecutable) NumReplicas() (int, error) { return u.details().NumReplicas() }

// NumPartitions is the number of partitions it was compiled for.
func (u *UnloadedExecutable) NumPartitions() (int, error) { return u.details().NumPartitions() }

// Fingerprint identifies the compiled code (for caches).
func (u *UnloadedExecutable) Fingerprint() (string, error) { return u.details().Fingerprint() }

// Serialize returns bytes Client.DeserializeAndLoad accepts.
func (u *UnloadedExecutable) Serialize() ([]byte, error) { return u.details().Serialize() }

// SizeOfGeneratedCode is the size of the compiled code in bytes.
func (u *UnloadedExecutable) SizeOfGeneratedCode() (int64, error) {
	return u.details().SizeOfGeneratedCode()
}

// CostAnalysis returns the compiler's cost estimates, e.g. "flops" and
// "bytes accessed" (values as in Plugin.Attributes).
func (u *UnloadedExecutable) CostAnalysis() (map[string]any, error) {
	return u.details().CostAnalysis()
}

// CompiledMemoryStats returns the memory the program needs.
func (u *UnloadedExecutable) CompiledMemoryStats() (CompiledMemoryStats, error) {
	return u.details().CompiledMemoryStats()
}

// OptimizedProgram returns the program after the compiler's optimizations
// (usually an HloModuleProto, format "hlo").
func (u *UnloadedExecutable) OptimizedProgram() (Program, error) {
	return u.details().OptimizedProgram()
}

// CompileOptions returns the options the program was compiled with,
// decoded (fields halo does not model are dropped).
func (u *UnloadedExecutable) CompileOptions() (xla.CompileOptions, error) {
	return u.details().CompileOptions()
}

// ParameterMemoryKinds are the memory kinds of the program's parameters.
func (u *UnloadedExecutable) ParameterMemoryKinds() ([]string, error) {
	return u.details().ParameterMemoryKinds()
}

// OutputLayouts are the serialized layouts of the outputs (Layouts extension).
func (u *UnloadedExecutable) OutputLayouts() ([][]byte, error) { return u.details().OutputLayouts() }

// ParameterLayouts are the serialized layouts of the parameters (Layouts
// extension).
func (u *UnloadedExecutable) ParameterLayouts() ([][]byte, error) {
	return u.details().ParameterLayouts()
}

// loaded begins a call on the executable as LoadedExecutableDetails; the
// caller runs done when it has finished with x.
func (e *Executable) loaded(op string) (x backend.LoadedExecutableDetails, done func(), err error) {
	if err := e.enter(); err != nil {
		return nil, nil, err
	}
	x, ok := e.b.(backend.LoadedExecutableDetails)
	if !ok {
		e.exit()
		return nil, nil, notSupported(op, "loaded executable details", e.c.plugin)
	}
	return x, e.exit, nil
}

// Delete frees the executable's device resources now; the Executable stays
// valid (IsDeleted reports true, Execute fails) until Close.
func (e *Executable) Delete() error {
	x, done, err := e.loaded("PJRT_LoadedExecutable_Delete")
	if err != nil {
		return err
	}
	defer done()
	return x.Delete()
}

// IsDeleted reports whether Delete was called.
func (e *Executable) IsDeleted() (bool, error) {
	x, done, err := e.loaded("PJRT_LoadedExecutable_IsDeleted")
	if err != nil {
		return false, err
	}
	defer done()
	return x.IsDeleted()
}

// DeviceAssignment returns the device ids the executable runs on, indexed
// [replica][partition]; nil for a portable executable (compiled without
// one: the plugin reports no assignment).
func (e *Executable) DeviceAssignment() (xla.DeviceAssignment, error) {
	x, done, err := e.loaded("PJRT_LoadedExecutable_GetDeviceAssignment")
	if err != nil {
		return nil, err
	}
	defer done()
	raw, err := x.DeviceAssignment()
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, nil // portable (as XLA's own C API client reads it)
	}
	// Decode the DeviceAssignmentProto through the CompileOptionsProto
	// decoder: executable_build_options (3) { device_assignment (9) }.
	build := protowire.AppendTag(nil, 9, protowire.BytesType)
	build = protowire.AppendBytes(build, raw)
	opts := protowire.AppendTag(nil, 3, protowire.BytesType)
	opts = protowire.AppendBytes(opts, build)
	o, err := xla.UnmarshalCompileOptions(opts)
	if err != nil {
		return nil, errorf(Internal, "PJRT_LoadedExecutable_GetDeviceAssignment", "decoding the plugin's device assignment: %v", err)
	}
	return o.DeviceAssignment, nil
}

// LogicalDeviceIDs are the replica and partition of each addressable
// device, in AddressableDevices order.
func (e *Executable) LogicalDeviceIDs() ([]LogicalDeviceID, error) {
	x, done, err := e.loaded("PJRT_LoadedExecutable_AddressableDeviceLogicalIds")
	if err != nil {
		return nil, err
	}
	defer done()
	return x.LogicalDeviceIDs()
}
