package xla

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// CompileOptions are the options a PJRT plugin compiles a program with. They
// are sent to the plugin as a serialized xla.CompileOptionsProto (see
// Marshal). Start from DefaultCompileOptions: the zero value has zero replicas
// and partitions and does not marshal.
//
// Only the fields halo needs are modelled; the plugin applies its own defaults
// to everything else. DebugOptions are deliberately not sent (a present
// debug_options message replaces all of the plugin's defaults); set individual
// DebugOptions fields through EnvOptionOverrides instead.
type CompileOptions struct {
	// NumReplicas is the number of replicas of the program (>= 1). It is always
	// sent, even when it is 1.
	NumReplicas int
	// NumPartitions is the number of partitions (SPMD shards or MPMD
	// computations) of the program (>= 1). It is always sent, even when it is 1.
	NumPartitions int
	// DeviceOrdinal is the device to build for, or -1 (the default) to let the
	// plugin choose. It is always sent.
	DeviceOrdinal int

	// UseSPMDPartitioning asks XLA to partition a program with
	// NumPartitions > 1 with the SPMD partitioner (what shard_map and sharded
	// jit programs need) rather than treating partitions as MPMD computations.
	UseSPMDPartitioning bool
	// UseShardyPartitioner selects the Shardy partitioner (programs written
	// with the sdy dialect) instead of GSPMD sharding propagation.
	UseShardyPartitioner bool
	// UseAutoSPMDPartitioning asks XLA to choose shardings itself, over a mesh
	// of AutoSPMDPartitioningMeshShape with device ids
	// AutoSPMDPartitioningMeshIDs.
	UseAutoSPMDPartitioning       bool
	AutoSPMDPartitioningMeshShape []int64
	AutoSPMDPartitioningMeshIDs   []int64

	// DeviceAssignment, when not nil, fixes which device runs each replica of
	// each partition; its shape must be NumReplicas x NumPartitions. When nil
	// the plugin uses its default assignment.
	DeviceAssignment DeviceAssignment

	// AllowSPMDShardingPropagationToParameters and
	// AllowSPMDShardingPropagationToOutput let sharding propagation choose the
	// sharding of the parameters / outputs. One value applies to all of them;
	// otherwise there is one value per parameter / output tuple element.
	AllowSPMDShardingPropagationToParameters []bool
	AllowSPMDShardingPropagationToOutput     []bool

	// DeduplicateHLO asks XLA to deduplicate identical HLO computations.
	DeduplicateHLO bool
	// AliasPassthroughParams aliases an output with its parameter when the
	// program returns the parameter unchanged.
	AliasPassthroughParams bool
	// DeviceMemorySize, when not 0, overrides the device memory size (bytes)
	// the compiler plans for.
	DeviceMemorySize int64
	// ExecTimeOptimizationEffort and MemoryFittingEffort are in [-1, 1]; 0 is
	// the plugin's baseline. Negative values trade result quality for
	// compile time.
	ExecTimeOptimizationEffort float32
	MemoryFittingEffort        float32
	// ProcessIndex and ProcessCount describe a multi-process (multi-host) job;
	// both are left out when 0.
	ProcessIndex int64
	ProcessCount int64

	// ParameterIsTupledArguments passes the program's arguments as one tuple.
	ParameterIsTupledArguments bool
	// CompilePortableExecutable builds an executable that can run on any
	// device of the compiling client's kind rather than on DeviceOrdinal's
	// device only (requires NumReplicas == NumPartitions == 1 and no
	// DeviceAssignment).
	CompilePortableExecutable bool
	// ProfileVersion identifies the feedback-directed-optimization profile to
	// use; 0 means none.
	ProfileVersion int64
	// AllowInPlaceMLIRModification lets the plugin modify the MLIR module it
	// is given instead of copying it.
	AllowInPlaceMLIRModification bool

	// EnvOptionOverrides sets individual xla.DebugOptions fields by name
	// ("xla_gpu_autotune_level", "xla_dump_to", ...) on top of the plugin's
	// defaults. Values may be string, bool, int64 (int, int32 and uint32 are
	// accepted and sent as int64) or float64 (float32 is accepted). They are
	// encoded in sorted key order, so equal options marshal to equal bytes.
	EnvOptionOverrides map[string]any
}

// DefaultCompileOptions returns options for a single-replica, single-partition
// program on a device of the plugin's choosing: NumReplicas 1, NumPartitions
// 1, DeviceOrdinal -1.
func DefaultCompileOptions() CompileOptions {
	return CompileOptions{NumReplicas: 1, NumPartitions: 1, DeviceOrdinal: -1}
}

// DeviceAssignment maps each replica of each computation (partition) to a
// device id: DeviceAssignment[r][c] is the id of the device that runs replica
// r of computation c. Every row has one entry per computation.
type DeviceAssignment [][]int64

// MaxDefaultDevices is the most devices DefaultDeviceAssignment lays out.
const MaxDefaultDevices = 1 << 24

// DefaultDeviceAssignment returns XLA's default assignment: replica r of
// computation c runs on device c*replicas + r. It is nil for a negative
// count, and for more than MaxDefaultDevices devices in all (far more than
// any machine has; such a table would fill memory).
func DefaultDeviceAssignment(replicas, computations int) DeviceAssignment {
	if replicas < 0 || computations < 0 {
		return nil
	}
	if replicas > MaxDefaultDevices || computations > MaxDefaultDevices ||
		(computations > 0 && replicas > MaxDefaultDevices/computations) {
		return nil
	}
	d := make(DeviceAssignment, replicas)
	for r := range d {
		d[r] = make([]int64, computations)
		for c := range d[r] {
			d[r][c] = int64(c*replicas + r)
		}
	}
	return d
}

// Replicas is the number of rows.
func (d DeviceAssignment) Replicas() int { return len(d) }

// Computations is the number of columns (the length of the first row; 0 when
// there are no rows).
func (d DeviceAssignment) Computations() int {
	if len(d) == 0 {
		return 0
	}
	return len(d[0])
}

// Validate reports an error for an empty or ragged grid, a negative device id,
// or a device id used twice.
func (d DeviceAssignment) Validate() error {
	if len(d) == 0 || len(d[0]) == 0 {
		return errors.New("xla: device assignment is empty")
	}
	if len(d) > math.MaxInt32 || len(d[0]) > math.MaxInt32 {
		return fmt.Errorf("xla: device assignment of %dx%d is too large", len(d), len(d[0]))
	}
	// Every row's length first: a ragged grid is named as such.
	for r, row := range d {
		if len(row) != len(d[0]) {
			return fmt.Errorf("xla: device assignment is ragged: replica %d has %d computations, replica 0 has %d", r, len(row), len(d[0]))
		}
	}
	// Sized for the grid up to a bound: a duplicate in a large grid of one
	// repeated row is found after a few ids, not after a table for all.
	hint := 1 << 12
	if len(d) <= hint/len(d[0]) { // no product that overflows an int
		hint = len(d) * len(d[0])
	}
	seen := make(map[int64][2]int, hint)
	for r, row := range d {
		for c, id := range row {
			if id < 0 {
				return fmt.Errorf("xla: device assignment has negative device id %d at replica %d, computation %d", id, r, c)
			}
			if at, dup := seen[id]; dup {
				return fmt.Errorf("xla: device assignment uses device %d twice (replica %d computation %d, and replica %d computation %d)", id, at[0], at[1], r, c)
			}
			seen[id] = [2]int{r, c}
		}
	}
	return nil
}

// Field numbers of xla.CompileOptionsProto (xla/pjrt/proto/compile_options.proto).
const (
	fieldCOParameterIsTupledArguments   protowire.Number = 2
	fieldCOExecutableBuildOptions       protowire.Number = 3
	fieldCOCompilePortableExecutable    protowire.Number = 4
	fieldCOProfileVersion               protowire.Number = 5
	fieldCOEnvOptionOverrides           protowire.Number = 7
	fieldCOAllowInPlaceMLIRModification protowire.Number = 9
)

// Field numbers of xla.ExecutableBuildOptionsProto (same file).
const (
	fieldEBDeviceOrdinal                protowire.Number = 1
	fieldEBNumReplicas                  protowire.Number = 4
	fieldEBNumPartitions                protowire.Number = 5
	fieldEBUseSPMDPartitioning          protowire.Number = 6
	fieldEBUseAutoSPMDPartitioning      protowire.Number = 7
	fieldEBDeduplicateHLO               protowire.Number = 8
	fieldEBDeviceAssignment             protowire.Number = 9
	fieldEBAliasPassthroughParams       protowire.Number = 10
	fieldEBAllowPropagationToOutput     protowire.Number = 12
	fieldEBDeviceMemorySize             protowire.Number = 15
	fieldEBAutoSPMDMeshShape            protowire.Number = 16
	fieldEBAutoSPMDMeshIDs              protowire.Number = 17
	fieldEBAllowPropagationToParameters protowire.Number = 18
	fieldEBUseShardyPartitioner         protowire.Number = 19
	fieldEBExecTimeOptimizationEffort   protowire.Number = 20
	fieldEBMemoryFittingEffort          protowire.Number = 21
	fieldEBProcessIndex                 protowire.Number = 22
	fieldEBProcessCount                 protowire.Number = 23
)

// Field numbers of xla.DeviceAssignmentProto (xla/xla_data.proto), its nested
// ComputationDevice, proto map entries, and xla.OptionOverrideProto
// (compile_options.proto).
const (
	fieldDAReplicaCount       protowire.Number = 1
	fieldDAComputationCount   protowire.Number = 2
	fieldDAComputationDevices protowire.Number = 3
	fieldDACDReplicaDeviceIDs protowire.Number = 1
	fieldMapKey               protowire.Number = 1
	fieldMapValue             protowire.Number = 2
	fieldOOString             protowire.Number = 1
	fieldOOBool               protowire.Number = 2
	fieldOOInt                protowire.Number = 3
	fieldOODouble             protowire.Number = 4
)

// Validate reports the first invalid value in o: counts below 1, a device
// ordinal below -1, an effort outside [-1, 1], a device assignment that is
// invalid or not NumReplicas x NumPartitions, a portable executable with more
// than one device or a device assignment, or an override of an unsupported
// type or with an empty name.
func (o CompileOptions) Validate() error {
	if o.NumReplicas < 1 {
		return fmt.Errorf("xla: compile options: NumReplicas is %d, want >= 1 (start from DefaultCompileOptions)", o.NumReplicas)
	}
	if o.NumPartitions < 1 {
		return fmt.Errorf("xla: compile options: NumPartitions is %d, want >= 1 (start from DefaultCompileOptions)", o.NumPartitions)
	}
	if o.DeviceOrdinal < -1 {
		return fmt.Errorf("xla: compile options: DeviceOrdinal is %d, want a device ordinal or -1", o.DeviceOrdinal)
	}
	for _, e := range []struct {
		name string
		v    float32
	}{{"ExecTimeOptimizationEffort", o.ExecTimeOptimizationEffort}, {"MemoryFittingEffort", o.MemoryFittingEffort}} {
		if !(e.v >= -1 && e.v <= 1) {
			return fmt.Errorf("xla: compile options: %s is %v, want a value in [-1, 1]", e.name, e.v)
		}
	}
	if o.ProcessIndex < 0 || o.ProcessCount < 0 {
		return fmt.Errorf("xla: compile options: ProcessIndex %d / ProcessCount %d must not be negative", o.ProcessIndex, o.ProcessCount)
	}
	if o.ProcessIndex > 0 && o.ProcessIndex >= o.ProcessCount {
		return fmt.Errorf("xla: compile options: ProcessIndex %d is not below ProcessCount %d", o.ProcessIndex, o.ProcessCount)
	}
	if o.DeviceMemorySize < 0 {
		return fmt.Errorf("xla: compile options: DeviceMemorySize is %d, want a size in bytes (0: the device's)", o.DeviceMemorySize)
	}
	if o.DeviceAssignment != nil {
		if err := o.DeviceAssignment.Validate(); err != nil {
			return fmt.Errorf("xla: compile options: %s", strings.TrimPrefix(err.Error(), "xla: "))
		}
		if o.DeviceAssignment.Replicas() != o.NumReplicas || o.DeviceAssignment.Computations() != o.NumPartitions {
			return fmt.Errorf("xla: compile options: device assignment is %d replicas x %d computations, want NumReplicas x NumPartitions = %d x %d",
				o.DeviceAssignment.Replicas(), o.DeviceAssignment.Computations(), o.NumReplicas, o.NumPartitions)
		}
	}
	if o.CompilePortableExecutable && (o.NumReplicas != 1 || o.NumPartitions != 1 || o.DeviceAssignment != nil) {
		return fmt.Errorf("xla: compile options: CompilePortableExecutable needs 1 replica, 1 partition and no DeviceAssignment, have %d x %d (assignment set: %v)",
			o.NumReplicas, o.NumPartitions, o.DeviceAssignment != nil)
	}
	for _, k := range slices.Sorted(maps.Keys(o.EnvOptionOverrides)) { // the same first error every time
		v := o.EnvOptionOverrides[k]
		if k == "" {
			return errors.New("xla: compile options: EnvOptionOverrides has an empty option name")
		}
		// Both are proto3 strings, which a plugin refuses to parse
		// unless they are UTF-8.
		if !utf8.ValidString(k) {
			return fmt.Errorf("xla: compile options: EnvOptionOverrides name %q is not UTF-8", k)
		}
		if s, ok := v.(string); ok && !utf8.ValidString(s) {
			return fmt.Errorf("xla: compile options: EnvOptionOverrides[%q] = %q is not UTF-8", k, s)
		}
		if _, err := overrideValue(v); err != nil {
			return fmt.Errorf("xla: compile options: EnvOptionOverrides[%q]: %w", k, err)
		}
	}
	return nil
}

// overrideValue normalizes an EnvOptionOverrides value to string, bool,
// int64 or float64.
func overrideValue(v any) (any, error) {
	switch x := v.(type) {
	case string, bool, int64, float64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	}
	return nil, fmt.Errorf("unsupported type %T (want string, bool, int, int32, int64, uint32, float32 or float64)", v)
}

// Marshal encodes o as a serialized xla.CompileOptionsProto, the bytes a PJRT
// plugin's compile call takes. NumReplicas, NumPartitions and DeviceOrdinal
// are always written, even at their defaults; other fields are written when
// they differ from the proto default. Fields are written in field-number
// order and overrides in key order, so equal options give equal bytes.
func (o CompileOptions) Marshal() ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var b []byte
	b = appendBool(b, fieldCOParameterIsTupledArguments, o.ParameterIsTupledArguments)
	b = protowire.AppendTag(b, fieldCOExecutableBuildOptions, protowire.BytesType)
	b = protowire.AppendBytes(b, o.marshalBuildOptions())
	b = appendBool(b, fieldCOCompilePortableExecutable, o.CompilePortableExecutable)
	b = appendInt(b, fieldCOProfileVersion, o.ProfileVersion)
	for _, k := range slices.Sorted(maps.Keys(o.EnvOptionOverrides)) {
		v, _ := overrideValue(o.EnvOptionOverrides[k]) // checked by Validate
		var ov []byte
		switch x := v.(type) {
		case string:
			ov = protowire.AppendTag(ov, fieldOOString, protowire.BytesType)
			ov = protowire.AppendString(ov, x)
		case bool:
			ov = protowire.AppendTag(ov, fieldOOBool, protowire.VarintType)
			ov = protowire.AppendVarint(ov, protowire.EncodeBool(x))
		case int64:
			ov = protowire.AppendTag(ov, fieldOOInt, protowire.VarintType)
			ov = protowire.AppendVarint(ov, uint64(x))
		case float64:
			ov = protowire.AppendTag(ov, fieldOODouble, protowire.Fixed64Type)
			ov = protowire.AppendFixed64(ov, math.Float64bits(x))
		}
		var entry []byte
		entry = protowire.AppendTag(entry, fieldMapKey, protowire.BytesType)
		entry = protowire.AppendString(entry, k)
		entry = protowire.AppendTag(entry, fieldMapValue, protowire.BytesType)
		entry = protowire.AppendBytes(entry, ov)
		b = protowire.AppendTag(b, fieldCOEnvOptionOverrides, protowire.BytesType)
		b = protowire.AppendBytes(b, entry)
	}
	b = appendBool(b, fieldCOAllowInPlaceMLIRModification, o.AllowInPlaceMLIRModification)
	return b, nil
}

// marshalBuildOptions encodes the xla.ExecutableBuildOptionsProto part of o.
func (o CompileOptions) marshalBuildOptions() []byte {
	var b []byte
	// Always present, even at 1 / -1: plugins read an absent count as 0.
	b = protowire.AppendTag(b, fieldEBDeviceOrdinal, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(int64(o.DeviceOrdinal)))
	b = protowire.AppendTag(b, fieldEBNumReplicas, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(o.NumReplicas))
	b = protowire.AppendTag(b, fieldEBNumPartitions, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(o.NumPartitions))

	b = appendBool(b, fieldEBUseSPMDPartitioning, o.UseSPMDPartitioning)
	b = appendBool(b, fieldEBUseAutoSPMDPartitioning, o.UseAutoSPMDPartitioning)
	b = appendBool(b, fieldEBDeduplicateHLO, o.DeduplicateHLO)
	if o.DeviceAssignment != nil {
		b = protowire.AppendTag(b, fieldEBDeviceAssignment, protowire.BytesType)
		b = protowire.AppendBytes(b, o.DeviceAssignment.marshal())
	}
	b = appendBool(b, fieldEBAliasPassthroughParams, o.AliasPassthroughParams)
	b = appendPackedBools(b, fieldEBAllowPropagationToOutput, o.AllowSPMDShardingPropagationToOutput)
	b = appendInt(b, fieldEBDeviceMemorySize, o.DeviceMemorySize)
	b = appendPackedInts(b, fieldEBAutoSPMDMeshShape, o.AutoSPMDPartitioningMeshShape)
	b = appendPackedInts(b, fieldEBAutoSPMDMeshIDs, o.AutoSPMDPartitioningMeshIDs)
	b = appendPackedBools(b, fieldEBAllowPropagationToParameters, o.AllowSPMDShardingPropagationToParameters)
	b = appendBool(b, fieldEBUseShardyPartitioner, o.UseShardyPartitioner)
	b = appendFloat(b, fieldEBExecTimeOptimizationEffort, o.ExecTimeOptimizationEffort)
	b = appendFloat(b, fieldEBMemoryFittingEffort, o.MemoryFittingEffort)
	b = appendInt(b, fieldEBProcessIndex, o.ProcessIndex)
	b = appendInt(b, fieldEBProcessCount, o.ProcessCount)
	return b
}

// marshal encodes d (already validated) as an xla.DeviceAssignmentProto: one
// ComputationDevice per computation, each listing the devices of its replicas.
func (d DeviceAssignment) marshal() []byte {
	var b []byte
	b = protowire.AppendTag(b, fieldDAReplicaCount, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(d.Replicas()))
	b = protowire.AppendTag(b, fieldDAComputationCount, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(d.Computations()))
	ids := make([]int64, len(d))
	for c := range d.Computations() {
		for r := range d {
			ids[r] = d[r][c]
		}
		b = protowire.AppendTag(b, fieldDAComputationDevices, protowire.BytesType)
		b = protowire.AppendBytes(b, appendPackedInts(nil, fieldDACDReplicaDeviceIDs, ids))
	}
	return b
}

func appendBool(b []byte, n protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, 1)
}

func appendInt(b []byte, n protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func appendFloat(b []byte, n protowire.Number, v float32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(v))
}

// appendPackedInts writes a packed repeated int64 field (proto3's default
// encoding for repeated scalars); nothing when vs is empty.
func appendPackedInts(b []byte, n protowire.Number, vs []int64) []byte {
	if len(vs) == 0 {
		return b
	}
	var p []byte
	for _, v := range vs {
		p = protowire.AppendVarint(p, uint64(v))
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

// appendPackedBools writes a packed repeated bool field; nothing when vs is
// empty.
func appendPackedBools(b []byte, n protowire.Number, vs []bool) []byte {
	if len(vs) == 0 {
		return b
	}
	p := make([]byte, 0, len(vs))
	for _, v := range vs {
		p = protowire.AppendVarint(p, protowire.EncodeBool(v))
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

// UnmarshalCompileOptions decodes a serialized xla.CompileOptionsProto (for
// example the options a plugin stored with an executable) into the fields
// CompileOptions models; fields it does not model are skipped.
//
// Decoding follows proto3: a field absent from the bytes reads as its zero
// value, so DeviceOrdinal is 0 (not -1) and the counts are 0 when absent.
// Marshal always writes them, so Marshal then UnmarshalCompileOptions gives
// back equal options. Repeated scalars are accepted packed or unpacked.
// Override values come back as string, bool, int64 or float64. The
// options are decoded, not checked: Marshal (and so a compile) refuses a
// device assignment that DeviceAssignment.Validate refuses, or one whose
// grid is not NumReplicas x NumPartitions.
func UnmarshalCompileOptions(data []byte) (CompileOptions, error) {
	var o CompileOptions
	err := walkFields(data, "CompileOptionsProto", func(n protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		switch n {
		case fieldCOParameterIsTupledArguments:
			o.ParameterIsTupledArguments, err = wantBool(typ, x)
		case fieldCOExecutableBuildOptions:
			if err = wantBytes(typ); err == nil {
				err = o.unmarshalBuildOptions(v)
			}
		case fieldCOCompilePortableExecutable:
			o.CompilePortableExecutable, err = wantBool(typ, x)
		case fieldCOProfileVersion:
			o.ProfileVersion, err = wantInt(typ, x)
		case fieldCOEnvOptionOverrides:
			if err = wantBytes(typ); err == nil {
				var k string
				var val any
				k, val, err = unmarshalOverride(v)
				if err == nil {
					if o.EnvOptionOverrides == nil {
						o.EnvOptionOverrides = map[string]any{}
					}
					o.EnvOptionOverrides[k] = val
				}
			}
		case fieldCOAllowInPlaceMLIRModification:
			o.AllowInPlaceMLIRModification, err = wantBool(typ, x)
		}
		if err != nil {
			return fmt.Errorf("CompileOptionsProto field %d: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return CompileOptions{}, fmt.Errorf("xla: decoding compile options: %w", err)
	}
	return o, nil
}

func (o *CompileOptions) unmarshalBuildOptions(data []byte) error {
	return walkFields(data, "ExecutableBuildOptionsProto", func(n protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		var i int64
		switch n {
		case fieldEBDeviceOrdinal:
			i, err = wantInt(typ, x)
			o.DeviceOrdinal = int(i)
		case fieldEBNumReplicas:
			i, err = wantInt(typ, x)
			o.NumReplicas = int(i)
		case fieldEBNumPartitions:
			i, err = wantInt(typ, x)
			o.NumPartitions = int(i)
		case fieldEBUseSPMDPartitioning:
			o.UseSPMDPartitioning, err = wantBool(typ, x)
		case fieldEBUseAutoSPMDPartitioning:
			o.UseAutoSPMDPartitioning, err = wantBool(typ, x)
		case fieldEBDeduplicateHLO:
			o.DeduplicateHLO, err = wantBool(typ, x)
		case fieldEBDeviceAssignment:
			if err = wantBytes(typ); err == nil {
				o.DeviceAssignment, err = unmarshalDeviceAssignment(v)
			}
		case fieldEBAliasPassthroughParams:
			o.AliasPassthroughParams, err = wantBool(typ, x)
		case fieldEBAllowPropagationToOutput:
			o.AllowSPMDShardingPropagationToOutput, err = appendRepeatedBools(o.AllowSPMDShardingPropagationToOutput, typ, v, x)
		case fieldEBDeviceMemorySize:
			o.DeviceMemorySize, err = wantInt(typ, x)
		case fieldEBAutoSPMDMeshShape:
			o.AutoSPMDPartitioningMeshShape, err = appendRepeatedInts(o.AutoSPMDPartitioningMeshShape, typ, v, x)
		case fieldEBAutoSPMDMeshIDs:
			o.AutoSPMDPartitioningMeshIDs, err = appendRepeatedInts(o.AutoSPMDPartitioningMeshIDs, typ, v, x)
		case fieldEBAllowPropagationToParameters:
			o.AllowSPMDShardingPropagationToParameters, err = appendRepeatedBools(o.AllowSPMDShardingPropagationToParameters, typ, v, x)
		case fieldEBUseShardyPartitioner:
			o.UseShardyPartitioner, err = wantBool(typ, x)
		case fieldEBExecTimeOptimizationEffort:
			o.ExecTimeOptimizationEffort, err = wantFloat(typ, x)
		case fieldEBMemoryFittingEffort:
			o.MemoryFittingEffort, err = wantFloat(typ, x)
		case fieldEBProcessIndex:
			o.ProcessIndex, err = wantInt(typ, x)
		case fieldEBProcessCount:
			o.ProcessCount, err = wantInt(typ, x)
		}
		if err != nil {
			return fmt.Errorf("ExecutableBuildOptionsProto field %d: %w", n, err)
		}
		return nil
	})
}

// unmarshalDeviceAssignment decodes an xla.DeviceAssignmentProto into the
// replicas x computations grid.
func unmarshalDeviceAssignment(data []byte) (DeviceAssignment, error) {
	var replicas, computations int64
	var cols [][]int64
	err := walkFields(data, "DeviceAssignmentProto", func(n protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		var err error
		switch n {
		case fieldDAReplicaCount:
			replicas, err = wantInt(typ, x)
		case fieldDAComputationCount:
			computations, err = wantInt(typ, x)
		case fieldDAComputationDevices:
			if err = wantBytes(typ); err != nil {
				break
			}
			var ids []int64
			err = walkFields(v, "ComputationDevice", func(n protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				var err error
				if n == fieldDACDReplicaDeviceIDs {
					ids, err = appendRepeatedInts(ids, typ, v, x)
				}
				return err
			})
			cols = append(cols, ids)
		}
		if err != nil {
			return fmt.Errorf("DeviceAssignmentProto field %d: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if int64(len(cols)) != computations {
		return nil, fmt.Errorf("DeviceAssignmentProto: computation_count is %d but %d computation_devices are listed", computations, len(cols))
	}
	if replicas < 1 || replicas > math.MaxInt32 || computations < 1 {
		// XLA's own decoding refuses counts below 1 too.
		return nil, fmt.Errorf("DeviceAssignmentProto: replica_count %d and computation_count %d, want both in [1, 2^31)", replicas, computations)
	}
	for c, ids := range cols {
		if int64(len(ids)) != replicas {
			return nil, fmt.Errorf("DeviceAssignmentProto: computation %d lists %d devices, want replica_count = %d", c, len(ids), replicas)
		}
	}
	d := make(DeviceAssignment, replicas)
	for r := range d {
		d[r] = make([]int64, computations)
		for c, ids := range cols {
			d[r][c] = ids[r]
		}
	}
	return d, nil
}

// unmarshalOverride decodes one env_option_overrides map entry.
func unmarshalOverride(data []byte) (string, any, error) {
	var key string
	var val any
	err := walkFields(data, "env_option_overrides entry", func(n protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch n {
		case fieldMapKey:
			if err := wantBytes(typ); err != nil {
				return fmt.Errorf("key: %w", err)
			}
			if !utf8.Valid(v) {
				return fmt.Errorf("key %q is not UTF-8 (a proto3 string)", v)
			}
			key = string(v)
		case fieldMapValue:
			if err := wantBytes(typ); err != nil {
				return fmt.Errorf("value: %w", err)
			}
			return walkFields(v, "OptionOverrideProto", func(n protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				var err error
				switch n {
				case fieldOOString:
					if err = wantBytes(typ); err == nil {
						if !utf8.Valid(v) {
							err = fmt.Errorf("string value %q is not UTF-8 (a proto3 string)", v)
						}
						val = string(v)
					}
				case fieldOOBool:
					val, err = wantBool(typ, x)
				case fieldOOInt:
					val, err = wantInt(typ, x)
				case fieldOODouble:
					if typ != protowire.Fixed64Type {
						err = fmt.Errorf("wire type %d, want fixed64", typ)
					} else {
						val = math.Float64frombits(x)
					}
				}
				if err != nil {
					return fmt.Errorf("OptionOverrideProto field %d: %w", n, err)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if val == nil {
		return "", nil, fmt.Errorf("env_option_overrides[%q] has no value", key)
	}
	if key == "" {
		return "", nil, errors.New("env_option_overrides entry has no option name")
	}
	return key, val, nil
}

// walkFields calls f for each field of a serialized message msg: v holds the
// payload of length-delimited fields, x the value of varint and fixed fields.
// Groups are skipped. Errors from f are returned unchanged.
func walkFields(b []byte, msg string, f func(n protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		n, typ, tl := protowire.ConsumeTag(b)
		if tl < 0 {
			return fmt.Errorf("malformed %s: %w", msg, protowire.ParseError(tl))
		}
		b = b[tl:]
		var v []byte
		var x uint64
		var m int
		switch typ {
		case protowire.VarintType:
			x, m = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, m = protowire.ConsumeFixed32(b)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, m = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, m = protowire.ConsumeBytes(b)
		default:
			m = protowire.ConsumeFieldValue(n, typ, b)
			if m < 0 {
				return fmt.Errorf("malformed %s field %d: %w", msg, n, protowire.ParseError(m))
			}
			b = b[m:]
			continue
		}
		if m < 0 {
			return fmt.Errorf("malformed %s field %d: %w", msg, n, protowire.ParseError(m))
		}
		b = b[m:]
		if err := f(n, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func wantBytes(typ protowire.Type) error {
	if typ != protowire.BytesType {
		return fmt.Errorf("wire type %d, want length-delimited", typ)
	}
	return nil
}

func wantBool(typ protowire.Type, x uint64) (bool, error) {
	if typ != protowire.VarintType {
		return false, fmt.Errorf("wire type %d, want varint", typ)
	}
	return x != 0, nil
}

func wantInt(typ protowire.Type, x uint64) (int64, error) {
	if typ != protowire.VarintType {
		return 0, fmt.Errorf("wire type %d, want varint", typ)
	}
	return int64(x), nil
}

func wantFloat(typ protowire.Type, x uint64) (float32, error) {
	if typ != protowire.Fixed32Type {
		return 0, fmt.Errorf("wire type %d, want fixed32", typ)
	}
	return math.Float32frombits(uint32(x)), nil
}

// appendRepeatedInts decodes one occurrence of a repeated int64 field, packed
// (length-delimited) or not.
func appendRepeatedInts(dst []int64, typ protowire.Type, v []byte, x uint64) ([]int64, error) {
	switch typ {
	case protowire.VarintType:
		return append(dst, int64(x)), nil
	case protowire.BytesType:
		for len(v) > 0 {
			y, m := protowire.ConsumeVarint(v)
			if m < 0 {
				return dst, fmt.Errorf("packed varints: %w", protowire.ParseError(m))
			}
			dst = append(dst, int64(y))
			v = v[m:]
		}
		return dst, nil
	}
	return dst, fmt.Errorf("wire type %d, want varint or packed varints", typ)
}

// appendRepeatedBools is appendRepeatedInts for repeated bool.
func appendRepeatedBools(dst []bool, typ protowire.Type, v []byte, x uint64) ([]bool, error) {
	ints, err := appendRepeatedInts(nil, typ, v, x)
	for _, i := range ints {
		dst = append(dst, i != 0)
	}
	return dst, err
}
