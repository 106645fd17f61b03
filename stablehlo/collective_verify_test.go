package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// collectiveModule is a 4-replica module whose @main applies op (the
// generic form, without its type) to %x (tensor<2xf32>), %x3
// (tensor<3xf32>) or %x4 (tensor<4xf32>) and returns the result.
func collectiveModule(op, result string) string {
	return `module @m attributes {mhlo.num_replicas = 4 : i32, mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%x: tensor<2xf32>, %x3: tensor<3xf32>, %x4: tensor<4xf32>) -> ` + result + ` {
    %0 = ` + op + ` -> ` + result + `
    return %0 : ` + result + `
  }
}`
}

const addRegionText = `({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  })`

// Verify checks collectives by StableHLO's constraints on them: process
// groups, use_global_device_ids, source_target_pairs, and result types
// that follow from the group size.
func TestVerifyCollectives(t *testing.T) {
	groups := `replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`
	bad := []struct{ name, op, result, want string }{
		{"all_gather result not operand times group", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, ` + groups + `} : (tensor<2xf32>)`, "tensor<6xf32>", "result 0 is tensor<6xf32>, want tensor<4xf32>"},
		{"all_gather dim out of range", `"stablehlo.all_gather"(%x) {all_gather_dim = 3 : i64, ` + groups + `} : (tensor<2xf32>)`, "tensor<4xf32>", "all_gather_dim 3 is outside operand 0 of rank 1"},
		{"all_gather uneven groups", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2], [3, -1, -1]]> : tensor<2x3xi64>} : (tensor<2xf32>)`, "tensor<6xf32>", "different sizes"},
		{"all_reduce result shape", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {` + groups + `} : (tensor<2xf32>)`, "tensor<4xf32>", "result 0 is tensor<4xf32>, want tensor<2xf32>"},
		{"all_reduce result type", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {` + groups + `} : (tensor<2xf32>)`, "tensor<2xi32>", "want tensor<2xf32>"},
		{"all_reduce repeated id", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {replica_groups = dense<[[0, 0]]> : tensor<1x2xi64>} : (tensor<2xf32>)`, "tensor<2xf32>", "name process 0 twice"},
		{"all_reduce negative id", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {replica_groups = dense<[[0, -2]]> : tensor<1x2xi64>} : (tensor<2xf32>)`, "tensor<2xf32>", "holds -2"},
		{"global ids without channel", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {` + groups + `, use_global_device_ids} : (tensor<2xf32>)`, "tensor<2xf32>", "use_global_device_ids needs a channel_handle with a positive handle"},
		{"global ids with channel 0", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {` + groups + `, channel_handle = #stablehlo.channel_handle<handle = 0, type = 1>, use_global_device_ids} : (tensor<2xf32>)`, "tensor<2xf32>", "positive handle"},
		{"reduce_scatter not divisible", `"stablehlo.reduce_scatter"(%x3) ` + addRegionText + ` {scatter_dimension = 0 : i64, ` + groups + `} : (tensor<3xf32>)`, "tensor<1xf32>", "(3) is not divisible by the group size 2"},
		{"reduce_scatter result", `"stablehlo.reduce_scatter"(%x4) ` + addRegionText + ` {scatter_dimension = 0 : i64, ` + groups + `} : (tensor<4xf32>)`, "tensor<1xf32>", "want tensor<2xf32>"},
		{"all_to_all split_count not group size", `"stablehlo.all_to_all"(%x4) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, ` + groups + `} : (tensor<4xf32>)`, "tensor<4xf32>", "split_count 4 is not the size of every replica group"},
		{"all_to_all not divisible", `"stablehlo.all_to_all"(%x3) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, ` + groups + `} : (tensor<3xf32>)`, "tensor<3xf32>", "(3) is not divisible by split_count 2"},
		{"collective_permute repeated target", `"stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 1]]> : tensor<2x2xi64>} : (tensor<2xf32>)`, "tensor<2xf32>", "name target 1 twice"},
		{"collective_permute repeated source", `"stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>} : (tensor<2xf32>)`, "tensor<2xf32>", "name source 0 twice"},
		{"collective_permute pairs of three", `"stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1, 1]]> : tensor<1x3xi64>} : (tensor<2xf32>)`, "tensor<2xf32>", "want Nx2"},
		{"collective_permute negative", `"stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, -1]]> : tensor<1x2xi64>} : (tensor<2xf32>)`, "tensor<2xf32>", "negative id"},
		{"collective_broadcast result", `"stablehlo.collective_broadcast"(%x) {` + groups + `} : (tensor<2xf32>)`, "tensor<2xi32>", "want tensor<2xf32>"},
		{"computation narrower than operand", `"stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f16>, %b: tensor<f16>):
      %s = stablehlo.add %a, %b : tensor<f16>
      stablehlo.return %s : tensor<f16>
  }) {` + groups + `} : (tensor<2xf32>)`, "tensor<2xf16>", "is not a promotion of operand 0's f32"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse([]byte(collectiveModule(c.op, c.result)))
			require.NoError(t, err)
			err = m.Verify()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	good := []struct{ name, op, result string }{
		{"all_gather", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, ` + groups + `} : (tensor<2xf32>)`, "tensor<4xf32>"},
		// Every replica in one group: the size is the number of replicas.
		{"all_gather no groups", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<> : tensor<0x0xi64>} : (tensor<2xf32>)`, "tensor<8xf32>"},
		// A channel without global ids: each group spans every partition.
		{"all_gather across partitions", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, ` + groups + `, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<2xf32>)`, "tensor<8xf32>"},
		{"all_gather global ids", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, ` + groups + `, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xf32>)`, "tensor<4xf32>"},
		{"all_gather mesh axes", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 4>]>, axes = [#stablehlo.axis_ref<name = "y">]>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xf32>)`, "tensor<8xf32>"},
		{"all_reduce mesh symbol", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "y">]>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<2xf32>)`, "tensor<2xf32>"},
		{"all_reduce uneven groups", `"stablehlo.all_reduce"(%x) ` + addRegionText + ` {replica_groups = dense<[[0, 1, 2], [3, -1, -1]]> : tensor<2x3xi64>} : (tensor<2xf32>)`, "tensor<2xf32>"},
		{"all_reduce promoted", `"stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f64>, %b: tensor<f64>):
      %s = stablehlo.add %a, %b : tensor<f64>
      stablehlo.return %s : tensor<f64>
  }) {` + groups + `} : (tensor<2xf32>)`, "tensor<2xf64>"},
		{"reduce_scatter", `"stablehlo.reduce_scatter"(%x4) ` + addRegionText + ` {scatter_dimension = 0 : i64, ` + groups + `} : (tensor<4xf32>)`, "tensor<2xf32>"},
		{"all_to_all", `"stablehlo.all_to_all"(%x4) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, ` + groups + `} : (tensor<4xf32>)`, "tensor<4xf32>"},
		{"collective_permute", `"stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<2xf32>)`, "tensor<2xf32>"},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			m, err := Parse([]byte(collectiveModule(c.op, c.result)))
			require.NoError(t, err)
			require.NoError(t, m.Verify())
		})
	}
}

// AllToAll has no use_global_device_ids, and its groups must all have
// split_count members; use_global_device_ids needs a positive channel.
func TestCollectiveBuilderChecks(t *testing.T) {
	ch := &ChannelHandle{Handle: 1, Type: 1}
	build := func(f func(fb *FuncBuilder) *Value) error {
		b := NewBuilder("m")
		fb := b.NewFunction("main", Tensor(xla.Float32, 4, 6))
		fb.Return(f(fb))
		_, err := b.Build()
		return err
	}
	err := build(func(fb *FuncBuilder) *Value {
		return fb.AllToAll([]*Value{fb.Arg(0)}, 0, 1, 2, Collective{ReplicaGroups: [][]int64{{0, 1}, {2, 3}}, Channel: ch, UseGlobalDeviceIDs: true})[0]
	})
	require.ErrorContains(t, err, "all_to_all has no use_global_device_ids")
	err = build(func(fb *FuncBuilder) *Value {
		return fb.AllToAll([]*Value{fb.Arg(0)}, 0, 1, 2, Collective{ReplicaGroups: [][]int64{{0, 1}, {2}}})[0]
	})
	require.ErrorContains(t, err, "same size")
	err = build(func(fb *FuncBuilder) *Value {
		return fb.AllGather([]*Value{fb.Arg(0)}, 0, Collective{ReplicaGroups: [][]int64{{0, 1}}, Channel: &ChannelHandle{}, UseGlobalDeviceIDs: true})[0]
	})
	require.ErrorContains(t, err, "positive handle")
	require.NoError(t, build(func(fb *FuncBuilder) *Value {
		return fb.AllToAll([]*Value{fb.Arg(0)}, 0, 1, 2, Collective{ReplicaGroups: [][]int64{{0, 1}, {2, 3}}, Channel: ch})[0]
	}))
}

// Keys of the mesh-axes text are found outside quoted names: an axis may
// be named "size" or "device_ids".
func TestReplicaGroupsQuotedNames(t *testing.T) {
	axes := `#stablehlo.mesh_axis<name = "batchsize", size = 2>, #stablehlo.mesh_axis<name = "device_ids", size = 2>`
	got, err := ReplicaGroups(meshAttr(axes, `#stablehlo.axis_ref<name = "device_ids">`))
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 1}, {2, 3}}, got)
	got, err = ReplicaGroups(meshAttr(axes, `#stablehlo.axis_ref<name = "batchsize">`))
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 2}, {1, 3}}, got)
}

// A mesh named by symbol needs its module: ReplicaGroupsIn reads the
// module's sdy.mesh, ReplicaGroups says so.
func TestReplicaGroupsIn(t *testing.T) {
	m, err := Parse([]byte(`module @m {
  sdy.mesh @mesh = <["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  func.func @main() {
    return
  }
}`))
	require.NoError(t, err)
	a := OpaqueAttr(`#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "x">]>`)
	got, err := ReplicaGroupsIn(m, a)
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{7, 3}, {6, 2}, {5, 1}, {4, 0}}, got)
	got, err = ReplicaGroupsIn(m, OpaqueAttr(`#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#sdy<axis_ref"y":(2)2>]>`))
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{7, 6}, {5, 4}, {3, 2}, {1, 0}}, got)
	_, err = ReplicaGroups(a)
	require.ErrorContains(t, err, "names its mesh by symbol")
	_, err = ReplicaGroupsIn(m, OpaqueAttr(`#stablehlo.replica_group_mesh_axes<mesh = @other, axes = [#stablehlo.axis_ref<name = "x">]>`))
	require.ErrorContains(t, err, "no sdy.mesh @other")
	// Dense groups need no module.
	got, err = ReplicaGroupsIn(nil, ReplicaGroupsAttr([][]int64{{0, 1}}))
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 1}}, got)
}
