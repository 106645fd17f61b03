package xla

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// wireField is one field of a message as read by a hand-written decoder,
// independent of the package's own decoder.
type wireField struct {
	num protowire.Number
	typ protowire.Type
	u   uint64 // varint, fixed32 and fixed64 values
	b   []byte // length-delimited payload
}

func decodeWire(t *testing.T, b []byte) []wireField {
	t.Helper()
	var out []wireField
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		require.GreaterOrEqual(t, n, 0, "bad tag")
		b = b[n:]
		f := wireField{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.u = uint64(v)
		case protowire.Fixed64Type:
			f.u, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(b)
		default:
			t.Fatalf("unexpected wire type %d for field %d", typ, num)
		}
		require.GreaterOrEqual(t, n, 0, "bad value of field %d", num)
		b = b[n:]
		out = append(out, f)
	}
	return out
}

func fieldNums(fs []wireField) []protowire.Number {
	var ns []protowire.Number
	for _, f := range fs {
		ns = append(ns, f.num)
	}
	return ns
}

// only returns the single field numbered num, failing if there is not
// exactly one.
func only(t *testing.T, fs []wireField, num protowire.Number, typ protowire.Type) wireField {
	t.Helper()
	var got []wireField
	for _, f := range fs {
		if f.num == num {
			got = append(got, f)
		}
	}
	require.Len(t, got, 1, "field %d", num)
	require.Equal(t, typ, got[0].typ, "wire type of field %d", num)
	return got[0]
}

func all(fs []wireField, num protowire.Number) []wireField {
	var got []wireField
	for _, f := range fs {
		if f.num == num {
			got = append(got, f)
		}
	}
	return got
}

func packedVarints(t *testing.T, b []byte) []uint64 {
	t.Helper()
	var out []uint64
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		require.GreaterOrEqual(t, n, 0)
		out = append(out, v)
		b = b[n:]
	}
	return out
}

func TestMarshalDefaultsExactBytes(t *testing.T) {
	b, err := DefaultCompileOptions().Marshal()
	require.NoError(t, err)
	// executable_build_options (3, bytes) { device_ordinal (1) = -1 as a
	// 10-byte varint, num_replicas (4) = 1, num_partitions (5) = 1 }.
	inner := []byte{
		0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		0x20, 0x01,
		0x28, 0x01,
	}
	want := append([]byte{0x1a, byte(len(inner))}, inner...)
	assert.Equal(t, want, b)

	top := decodeWire(t, b)
	require.Equal(t, []protowire.Number{3}, fieldNums(top))
	eb := decodeWire(t, only(t, top, 3, protowire.BytesType).b)
	require.Equal(t, []protowire.Number{1, 4, 5}, fieldNums(eb))
	assert.Equal(t, int64(-1), int64(only(t, eb, 1, protowire.VarintType).u))
	assert.Equal(t, uint64(1), only(t, eb, 4, protowire.VarintType).u)
	assert.Equal(t, uint64(1), only(t, eb, 5, protowire.VarintType).u)
}

func fullOptions() CompileOptions {
	o := DefaultCompileOptions()
	o.NumReplicas = 2
	o.NumPartitions = 3
	o.DeviceOrdinal = 0
	o.UseSPMDPartitioning = true
	o.UseShardyPartitioner = true
	o.UseAutoSPMDPartitioning = true
	o.AutoSPMDPartitioningMeshShape = []int64{2, 3}
	o.AutoSPMDPartitioningMeshIDs = []int64{0, 1, 2, 3, 4, 5}
	o.DeviceAssignment = DeviceAssignment{{0, 2, 4}, {1, 3, 5}}
	o.AllowSPMDShardingPropagationToParameters = []bool{false, true}
	o.AllowSPMDShardingPropagationToOutput = []bool{true}
	o.DeduplicateHLO = true
	o.AliasPassthroughParams = true
	o.DeviceMemorySize = 1 << 34
	o.ExecTimeOptimizationEffort = -0.5
	o.MemoryFittingEffort = 0.25
	o.ProcessIndex = 1
	o.ProcessCount = 2
	o.ParameterIsTupledArguments = true
	o.ProfileVersion = 7
	o.AllowInPlaceMLIRModification = true
	o.EnvOptionOverrides = map[string]any{
		"xla_gpu_autotune_level":     int64(0),
		"xla_dump_to":                "/tmp/dump",
		"xla_gpu_enable_triton_gemm": false,
		"xla_some_fraction":          0.75,
	}
	return o
}

func TestMarshalEveryField(t *testing.T) {
	b, err := fullOptions().Marshal()
	require.NoError(t, err)

	top := decodeWire(t, b)
	assert.Equal(t, []protowire.Number{2, 3, 5, 7, 7, 7, 7, 9}, fieldNums(top), "top-level fields in field-number order")
	assert.Equal(t, uint64(1), only(t, top, 2, protowire.VarintType).u, "parameter_is_tupled_arguments")
	assert.Equal(t, uint64(7), only(t, top, 5, protowire.VarintType).u, "profile_version")
	assert.Equal(t, uint64(1), only(t, top, 9, protowire.VarintType).u, "allow_in_place_mlir_modification")

	eb := decodeWire(t, only(t, top, 3, protowire.BytesType).b)
	assert.Equal(t, []protowire.Number{1, 4, 5, 6, 7, 8, 9, 10, 12, 15, 16, 17, 18, 19, 20, 21, 22, 23}, fieldNums(eb))
	assert.Equal(t, uint64(0), only(t, eb, 1, protowire.VarintType).u, "device_ordinal 0 is still sent")
	assert.Equal(t, uint64(2), only(t, eb, 4, protowire.VarintType).u, "num_replicas")
	assert.Equal(t, uint64(3), only(t, eb, 5, protowire.VarintType).u, "num_partitions")
	for _, n := range []protowire.Number{6, 7, 8, 10, 19} {
		assert.Equal(t, uint64(1), only(t, eb, n, protowire.VarintType).u, "bool field %d", n)
	}
	assert.Equal(t, []uint64{1}, packedVarints(t, only(t, eb, 12, protowire.BytesType).b), "allow_spmd_sharding_propagation_to_output")
	assert.Equal(t, uint64(1<<34), only(t, eb, 15, protowire.VarintType).u, "device_memory_size")
	assert.Equal(t, []uint64{2, 3}, packedVarints(t, only(t, eb, 16, protowire.BytesType).b), "auto_spmd_partitioning_mesh_shape")
	assert.Equal(t, []uint64{0, 1, 2, 3, 4, 5}, packedVarints(t, only(t, eb, 17, protowire.BytesType).b), "auto_spmd_partitioning_mesh_ids")
	assert.Equal(t, []uint64{0, 1}, packedVarints(t, only(t, eb, 18, protowire.BytesType).b), "allow_spmd_sharding_propagation_to_parameters")
	assert.Equal(t, float32(-0.5), math.Float32frombits(uint32(only(t, eb, 20, protowire.Fixed32Type).u)), "exec_time_optimization_effort")
	assert.Equal(t, float32(0.25), math.Float32frombits(uint32(only(t, eb, 21, protowire.Fixed32Type).u)), "memory_fitting_effort")
	assert.Equal(t, uint64(1), only(t, eb, 22, protowire.VarintType).u, "process_index")
	assert.Equal(t, uint64(2), only(t, eb, 23, protowire.VarintType).u, "process_count")

	// DeviceAssignmentProto: replica_count 1, computation_count 2, one
	// ComputationDevice (3) per computation listing its replicas' devices.
	da := decodeWire(t, only(t, eb, 9, protowire.BytesType).b)
	assert.Equal(t, []protowire.Number{1, 2, 3, 3, 3}, fieldNums(da))
	assert.Equal(t, uint64(2), only(t, da, 1, protowire.VarintType).u, "replica_count")
	assert.Equal(t, uint64(3), only(t, da, 2, protowire.VarintType).u, "computation_count")
	wantCols := [][]uint64{{0, 1}, {2, 3}, {4, 5}}
	for c, cd := range all(da, 3) {
		require.Equal(t, protowire.BytesType, cd.typ)
		ids := decodeWire(t, cd.b)
		assert.Equal(t, wantCols[c], packedVarints(t, only(t, ids, 1, protowire.BytesType).b), "computation %d", c)
	}
}

func TestMarshalOverridesSortedAndTyped(t *testing.T) {
	o := DefaultCompileOptions()
	o.EnvOptionOverrides = map[string]any{
		"d_double": 2.5,
		"b_bool":   true,
		"c_int":    int64(-3),
		"a_string": "x",
		"e_int":    4,          // int is accepted and sent as int64
		"f_float":  float32(1), // float32 is sent as double
	}
	b, err := o.Marshal()
	require.NoError(t, err)
	type want struct {
		key string
		num protowire.Number
		typ protowire.Type
		u   uint64
		s   string
	}
	wants := []want{
		{"a_string", 1, protowire.BytesType, 0, "x"},
		{"b_bool", 2, protowire.VarintType, 1, ""},
		{"c_int", 3, protowire.VarintType, uint64(math.MaxUint64 - 2), ""},
		{"d_double", 4, protowire.Fixed64Type, math.Float64bits(2.5), ""},
		{"e_int", 3, protowire.VarintType, 4, ""},
		{"f_float", 4, protowire.Fixed64Type, math.Float64bits(1), ""},
	}
	entries := all(decodeWire(t, b), 7)
	require.Len(t, entries, len(wants))
	for i, e := range entries {
		w := wants[i]
		require.Equal(t, protowire.BytesType, e.typ)
		kv := decodeWire(t, e.b)
		require.Equal(t, []protowire.Number{1, 2}, fieldNums(kv), "map entry is key then value")
		assert.Equal(t, w.key, string(only(t, kv, 1, protowire.BytesType).b))
		val := decodeWire(t, only(t, kv, 2, protowire.BytesType).b)
		require.Equal(t, []protowire.Number{w.num}, fieldNums(val), "OptionOverrideProto of %s", w.key)
		f := only(t, val, w.num, w.typ)
		if w.typ == protowire.BytesType {
			assert.Equal(t, w.s, string(f.b))
		} else {
			assert.Equal(t, w.u, f.u, w.key)
		}
	}
}

func TestMarshalDeterministic(t *testing.T) {
	a := DefaultCompileOptions()
	a.EnvOptionOverrides = map[string]any{}
	bOpts := DefaultCompileOptions()
	bOpts.EnvOptionOverrides = map[string]any{}
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"}
	for i, k := range keys {
		a.EnvOptionOverrides[k] = int64(i)
	}
	for i := len(keys) - 1; i >= 0; i-- {
		bOpts.EnvOptionOverrides[keys[i]] = int64(i)
	}
	first, err := a.Marshal()
	require.NoError(t, err)
	for range 50 {
		again, err := a.Marshal()
		require.NoError(t, err)
		require.Equal(t, first, again)
		other, err := bOpts.Marshal()
		require.NoError(t, err)
		require.Equal(t, first, other)
	}
}

func TestMarshalErrors(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*CompileOptions)
		wantErr string
	}{
		{"zero value", func(o *CompileOptions) { *o = CompileOptions{} }, "NumReplicas is 0"},
		{"replicas", func(o *CompileOptions) { o.NumReplicas = -1 }, "NumReplicas is -1"},
		{"partitions", func(o *CompileOptions) { o.NumPartitions = 0 }, "NumPartitions is 0"},
		{"ordinal", func(o *CompileOptions) { o.DeviceOrdinal = -2 }, "DeviceOrdinal is -2"},
		{"effort", func(o *CompileOptions) { o.ExecTimeOptimizationEffort = 1.5 }, "ExecTimeOptimizationEffort"},
		{"effort NaN", func(o *CompileOptions) { o.MemoryFittingEffort = float32(math.NaN()) }, "MemoryFittingEffort"},
		{"process", func(o *CompileOptions) { o.ProcessCount = -1 }, "must not be negative"},
		{"assignment rows", func(o *CompileOptions) {
			o.NumPartitions = 2
			o.DeviceAssignment = DeviceAssignment{{0, 1}, {2, 3}}
		}, "device assignment is 2 replicas x 2 computations, want NumReplicas x NumPartitions = 1 x 2"},
		{"assignment cols", func(o *CompileOptions) {
			o.NumReplicas = 2
			o.DeviceAssignment = DeviceAssignment{{0, 1}, {2, 3}}
		}, "want NumReplicas x NumPartitions = 2 x 1"},
		{"assignment empty", func(o *CompileOptions) { o.DeviceAssignment = DeviceAssignment{} }, "empty"},
		{"assignment ragged", func(o *CompileOptions) {
			o.NumReplicas = 2
			o.NumPartitions = 2
			o.DeviceAssignment = DeviceAssignment{{0, 1}, {2}}
		}, "ragged"},
		{"assignment negative", func(o *CompileOptions) { o.DeviceAssignment = DeviceAssignment{{-1}} }, "negative device id -1"},
		{"assignment duplicate", func(o *CompileOptions) {
			o.NumReplicas = 2
			o.DeviceAssignment = DeviceAssignment{{3}, {3}}
		}, "uses device 3 twice"},
		{"portable multi-device", func(o *CompileOptions) {
			o.NumPartitions = 2
			o.CompilePortableExecutable = true
		}, "CompilePortableExecutable needs 1 replica"},
		{"portable with assignment", func(o *CompileOptions) {
			o.DeviceAssignment = DeviceAssignment{{0}}
			o.CompilePortableExecutable = true
		}, "no DeviceAssignment"},
		{"override type", func(o *CompileOptions) { o.EnvOptionOverrides = map[string]any{"xla_x": []int{1}} }, `EnvOptionOverrides["xla_x"]: unsupported type []int`},
		{"override uint64", func(o *CompileOptions) { o.EnvOptionOverrides = map[string]any{"xla_x": uint64(1)} }, "unsupported type uint64"},
		{"override nil", func(o *CompileOptions) { o.EnvOptionOverrides = map[string]any{"xla_x": nil} }, "unsupported type <nil>"},
		{"several bad overrides: the first by name", func(o *CompileOptions) {
			o.EnvOptionOverrides = map[string]any{"d": nil, "b": int8(2), "a": uint64(1), "c": []int{1}}
		}, `EnvOptionOverrides["a"]: unsupported type uint64`},
		{"override empty name", func(o *CompileOptions) { o.EnvOptionOverrides = map[string]any{"": true} }, "empty option name"},
		{"override name not UTF-8", func(o *CompileOptions) { o.EnvOptionOverrides = map[string]any{"\xff": true} }, "is not UTF-8"},
		{"override value not UTF-8", func(o *CompileOptions) { o.EnvOptionOverrides = map[string]any{"xla_x": "\xfe"} }, `EnvOptionOverrides["xla_x"] = "\xfe" is not UTF-8`},
		{"process index past count", func(o *CompileOptions) { o.ProcessIndex, o.ProcessCount = 3, 2 }, "ProcessIndex 3 is not below ProcessCount 2"},
		{"process index without count", func(o *CompileOptions) { o.ProcessIndex = 1 }, "ProcessIndex 1 is not below ProcessCount 0"},
		{"device memory size", func(o *CompileOptions) { o.DeviceMemorySize = -1 }, "DeviceMemorySize is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultCompileOptions()
			tt.edit(&o)
			b, err := o.Marshal()
			require.Error(t, err)
			assert.Nil(t, b)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Contains(t, err.Error(), "xla: compile options: ")
			assert.Equal(t, err.Error(), o.Validate().Error())
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for name, o := range map[string]CompileOptions{
		"default": DefaultCompileOptions(),
		"full":    fullOptions(),
		"portable": func() CompileOptions {
			o := DefaultCompileOptions()
			o.CompilePortableExecutable = true
			o.DeviceOrdinal = 3
			return o
		}(),
		"spmd 1x8": func() CompileOptions {
			o := DefaultCompileOptions()
			o.NumPartitions = 8
			o.UseSPMDPartitioning = true
			o.DeviceAssignment = DefaultDeviceAssignment(1, 8)
			return o
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			b, err := o.Marshal()
			require.NoError(t, err)
			got, err := UnmarshalCompileOptions(b)
			require.NoError(t, err)
			assert.Equal(t, o, got)
			again, err := got.Marshal()
			require.NoError(t, err)
			assert.Equal(t, b, again)
		})
	}
}

func TestRoundTripNormalizesOverrideTypes(t *testing.T) {
	o := DefaultCompileOptions()
	o.EnvOptionOverrides = map[string]any{"i": 5, "i32": int32(-6), "u32": uint32(7), "f": float32(0.5)}
	b, err := o.Marshal()
	require.NoError(t, err)
	got, err := UnmarshalCompileOptions(b)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"i": int64(5), "i32": int64(-6), "u32": int64(7), "f": 0.5}, got.EnvOptionOverrides)
}

func TestUnmarshalSkipsUnknownAndAcceptsUnpacked(t *testing.T) {
	// Executable build options written the way another encoder might: unknown
	// fields of every wire type, repeated scalars unpacked, fields out of order.
	var eb []byte
	eb = protowire.AppendTag(eb, 2, protowire.BytesType) // result_layout: not modelled
	eb = protowire.AppendBytes(eb, []byte{0x10, 0x0b})
	eb = protowire.AppendTag(eb, 5, protowire.VarintType)
	eb = protowire.AppendVarint(eb, 4)
	eb = protowire.AppendTag(eb, 4, protowire.VarintType)
	eb = protowire.AppendVarint(eb, 1)
	eb = protowire.AppendTag(eb, 16, protowire.VarintType) // unpacked mesh shape
	eb = protowire.AppendVarint(eb, 2)
	eb = protowire.AppendTag(eb, 16, protowire.VarintType)
	eb = protowire.AppendVarint(eb, 2)
	eb = protowire.AppendTag(eb, 12, protowire.VarintType) // unpacked repeated bool
	eb = protowire.AppendVarint(eb, 1)
	eb = protowire.AppendTag(eb, 12, protowire.BytesType) // then a packed run
	eb = protowire.AppendBytes(eb, []byte{0, 1})
	eb = protowire.AppendTag(eb, 999, protowire.Fixed64Type)
	eb = protowire.AppendFixed64(eb, 42)
	eb = protowire.AppendTag(eb, 998, protowire.Fixed32Type)
	eb = protowire.AppendFixed32(eb, 42)
	eb = protowire.AppendTag(eb, 997, protowire.StartGroupType)
	eb = protowire.AppendTag(eb, 1, protowire.VarintType)
	eb = protowire.AppendVarint(eb, 1)
	eb = protowire.AppendTag(eb, 997, protowire.EndGroupType)
	eb = protowire.AppendTag(eb, 26, protowire.VarintType) // slice_size: not modelled
	eb = protowire.AppendVarint(eb, 4)

	var b []byte
	b = protowire.AppendTag(b, 8, protowire.BytesType) // target_config: not modelled
	b = protowire.AppendBytes(b, []byte("opaque"))
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, eb)
	b = protowire.AppendTag(b, 11, protowire.BytesType) // compiler_variant
	b = protowire.AppendString(b, "x")

	got, err := UnmarshalCompileOptions(b)
	require.NoError(t, err)
	want := CompileOptions{
		NumReplicas:                          1,
		NumPartitions:                        4,
		DeviceOrdinal:                        0, // absent: proto3 zero
		AutoSPMDPartitioningMeshShape:        []int64{2, 2},
		AllowSPMDShardingPropagationToOutput: []bool{true, false, true},
	}
	assert.Equal(t, want, got)
}

func TestUnmarshalEmpty(t *testing.T) {
	got, err := UnmarshalCompileOptions(nil)
	require.NoError(t, err)
	assert.Equal(t, CompileOptions{}, got)
}

func TestUnmarshalErrors(t *testing.T) {
	good, err := fullOptions().Marshal()
	require.NoError(t, err)

	wrongType := protowire.AppendTag(nil, 3, protowire.VarintType)
	wrongType = protowire.AppendVarint(wrongType, 1)

	wrongInner := protowire.AppendTag(nil, 3, protowire.BytesType)
	wrongInner = protowire.AppendBytes(wrongInner, protowire.AppendFixed32(protowire.AppendTag(nil, 4, protowire.Fixed32Type), 1))

	var badDA []byte // computation_count 2 but one ComputationDevice
	badDA = protowire.AppendTag(badDA, 1, protowire.VarintType)
	badDA = protowire.AppendVarint(badDA, 1)
	badDA = protowire.AppendTag(badDA, 2, protowire.VarintType)
	badDA = protowire.AppendVarint(badDA, 2)
	badDA = protowire.AppendTag(badDA, 3, protowire.BytesType)
	badDA = protowire.AppendBytes(badDA, []byte{0x0a, 0x01, 0x00})
	badDAOpts := protowire.AppendTag(nil, 3, protowire.BytesType)
	badDAOpts = protowire.AppendBytes(badDAOpts, protowire.AppendBytes(protowire.AppendTag(nil, 9, protowire.BytesType), badDA))

	var emptyDA []byte // replica_count 0, computation_count 0
	emptyDA = protowire.AppendTag(emptyDA, 1, protowire.VarintType)
	emptyDA = protowire.AppendVarint(emptyDA, 0)
	emptyDAOpts := protowire.AppendTag(nil, 3, protowire.BytesType)
	emptyDAOpts = protowire.AppendBytes(emptyDAOpts, protowire.AppendBytes(protowire.AppendTag(nil, 9, protowire.BytesType), emptyDA))

	var entry []byte // an override with a value and no key
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendBytes(entry, protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1))
	noKey := protowire.AppendBytes(protowire.AppendTag(nil, 7, protowire.BytesType), entry)

	noValue := protowire.AppendTag(nil, 7, protowire.BytesType)
	noValue = protowire.AppendBytes(noValue, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k"))

	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"truncated", good[:len(good)-3], "malformed"},
		{"bad tag", []byte{0xff}, "malformed"},
		{"wrong wire type", wrongType, "CompileOptionsProto field 3: wire type 0, want length-delimited"},
		{"wrong inner wire type", wrongInner, "ExecutableBuildOptionsProto field 4: wire type 5, want varint"},
		{"device assignment count", badDAOpts, "computation_count is 2 but 1 computation_devices"},
		{"override without value", noValue, `env_option_overrides["k"] has no value`},
		{"empty device assignment", emptyDAOpts, "replica_count 0 and computation_count 0, want both in [1, 2^31)"},
		{"override without key", noKey, "entry has no option name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := UnmarshalCompileOptions(tt.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Contains(t, err.Error(), "xla: decoding compile options: ")
		})
	}
}

func TestDeviceAssignment(t *testing.T) {
	d := DefaultDeviceAssignment(2, 3)
	assert.Equal(t, DeviceAssignment{{0, 2, 4}, {1, 3, 5}}, d, "replica r of computation c on device c*replicas + r")
	assert.Equal(t, 2, d.Replicas())
	assert.Equal(t, 3, d.Computations())
	require.NoError(t, d.Validate())
	assert.Equal(t, 0, DeviceAssignment(nil).Computations())
	assert.Nil(t, DefaultDeviceAssignment(-1, 2))

	// A ragged grid is refused before anything is sized for the whole
	// grid: 1,500 rows under a first row of 1,500 made a map for 2.25
	// million ids, about 100 MB, for 2,999 (found in review).
	const n = 1500
	ragged := make(DeviceAssignment, n)
	ragged[0] = make([]int64, n)
	for i := range ragged[0] {
		ragged[0][i] = int64(i)
	}
	for r := 1; r < n; r++ {
		ragged[r] = []int64{int64(n + r)}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := ragged.Validate()
	runtime.ReadMemStats(&after)
	assert.ErrorContains(t, err, "ragged")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated")

	// Nor for a square one of one repeated row: its duplicate is the
	// second id (a map for 8192^2 ids took 3.4 GB: review).
	row := make([]int64, 8192)
	for i := range row {
		row[i] = int64(i)
	}
	square := make(DeviceAssignment, len(row))
	for r := range square {
		square[r] = row
	}
	runtime.ReadMemStats(&before)
	err = square.Validate()
	runtime.ReadMemStats(&after)
	assert.ErrorContains(t, err, "uses device 0 twice")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated")

	// A default assignment too large for memory is nil, as a negative one
	// (it crashed the process: review).
	for _, c := range [][2]int{{math.MaxInt64, 2}, {1 << 40, 1}, {1 << 32, 1 << 32}, {3, 3037000500}, {MaxDefaultDevices + 1, 1}, {1 << 40, 0}, {0, 1 << 40}} {
		assert.Nil(t, DefaultDeviceAssignment(c[0], c[1]), "%d x %d", c[0], c[1])
	}
	assert.Len(t, DefaultDeviceAssignment(1<<10, 1<<4), 1<<10)
}

func FuzzUnmarshalCompileOptions(f *testing.F) {
	for _, o := range []CompileOptions{DefaultCompileOptions(), fullOptions()} {
		b, err := o.Marshal()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x1a, 0x02, 0x4a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := UnmarshalCompileOptions(data)
		if err != nil {
			return
		}
		b, err := o.Marshal()
		if err != nil {
			return // decodable but not valid options
		}
		back, err := UnmarshalCompileOptions(b)
		require.NoError(t, err)
		again, err := back.Marshal()
		require.NoError(t, err)
		require.Equal(t, b, again)
	})
}

// Override keys and string values are proto3 strings: invalid UTF-8 is
// refused when decoding, as when encoding.
func TestUnmarshalRefusesInvalidUTF8(t *testing.T) {
	entry := func(key, val string) []byte {
		ov := protowire.AppendTag(nil, 1, protowire.BytesType) // OptionOverrideProto.string_field
		ov = protowire.AppendString(ov, val)
		e := protowire.AppendTag(nil, 1, protowire.BytesType) // map key
		e = protowire.AppendString(e, key)
		e = protowire.AppendTag(e, 2, protowire.BytesType) // map value
		e = protowire.AppendBytes(e, ov)
		b := protowire.AppendTag(nil, 7, protowire.BytesType) // env_option_overrides
		return protowire.AppendBytes(b, e)
	}
	o, err := UnmarshalCompileOptions(entry("xla_dump_to", "/tmp/x"))
	require.NoError(t, err)
	require.Equal(t, "/tmp/x", o.EnvOptionOverrides["xla_dump_to"])
	_, err = UnmarshalCompileOptions(entry("k\xff", "v"))
	require.ErrorContains(t, err, "not UTF-8")
	_, err = UnmarshalCompileOptions(entry("k", "v\xfe"))
	require.ErrorContains(t, err, "not UTF-8")
}

// TestCompileOptionsAssignmentErrorPrefix: a bad device assignment's error
// says "xla:" once.
func TestCompileOptionsAssignmentErrorPrefix(t *testing.T) {
	o := DefaultCompileOptions()
	o.DeviceAssignment = DeviceAssignment{}
	_, err := o.Marshal()
	if err == nil || strings.Count(err.Error(), "xla:") != 1 || !strings.Contains(err.Error(), "device assignment is empty") {
		t.Errorf("err = %v", err)
	}
}
