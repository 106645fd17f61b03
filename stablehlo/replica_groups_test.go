package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func meshAttr(axes, refs string) OpaqueAttr {
	return OpaqueAttr(`#stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [` + axes + `]>, axes = [` + refs + `]>`)
}

func TestReplicaGroupsMeshAxes(t *testing.T) {
	xy := `#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 4>`
	tests := []struct {
		name string
		refs string
		want [][]int64
	}{
		{"whole y", `#stablehlo.axis_ref<name = "y">`, [][]int64{{0, 1, 2, 3}, {4, 5, 6, 7}}},
		{"whole x", `#stablehlo.axis_ref<name = "x">`, [][]int64{{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
		{"major half of y", `#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>`, [][]int64{{0, 2}, {1, 3}, {4, 6}, {5, 7}}},
		{"minor half of y", `#stablehlo.axis_ref<name = "y", sub_axis_info = (2)2>`, [][]int64{{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
		{"y then x", `#stablehlo.axis_ref<name = "y">, #stablehlo.axis_ref<name = "x">`, [][]int64{{0, 4, 1, 5, 2, 6, 3, 7}}},
		{"x then y", `#stablehlo.axis_ref<name = "x">, #stablehlo.axis_ref<name = "y">`, [][]int64{{0, 1, 2, 3, 4, 5, 6, 7}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplicaGroups(meshAttr(xy, tc.refs))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReplicaGroupsErrors(t *testing.T) {
	xy := `#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 4>`
	for _, tc := range []struct {
		a    Attribute
		want string
	}{
		{nil, "missing"},
		{StringAttr("x"), "want a dense integer tensor"},
		{OpaqueAttr("#foo<1>"), "neither"},
		{meshAttr(xy, `#stablehlo.axis_ref<name = "z">`), `axis "z" is not in the mesh`},
		{meshAttr(xy, `#stablehlo.axis_ref<name = "y", sub_axis_info = (3)2>`), "does not divide"},
		{meshAttr(xy, `#stablehlo.axis_ref<name = "y">, #stablehlo.axis_ref<name = "y">`), "named more than once"},
		{meshAttr(xy, ``), "no axes are named"},
		{meshAttr(``, `#stablehlo.axis_ref<name = "y">`), "no axes"},
	} {
		_, err := ReplicaGroups(tc.a)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func TestReplicaGroupsDense(t *testing.T) {
	got, err := ReplicaGroups(ReplicaGroupsAttr([][]int64{{0, 1, 2}, {3, -1, -1}}))
	require.NoError(t, err)
	assert.Equal(t, [][]int64{{0, 1, 2}, {3}}, got)
}
