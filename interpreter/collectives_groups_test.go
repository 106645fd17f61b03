package interpreter

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// gatherOrder runs an all_gather of each device's id (replica*P +
// partition) and returns what device 0 gathered.
func gatherOrder(t *testing.T, r, p int, attrs string) []float32 {
	t.Helper()
	n := r * p
	prog := compileText(t, moduleHeader(r, p)+`
  func.func @main(%x: tensor<1xf32>) -> tensor<`+itoa(n)+`xf32> {
    %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, `+attrs+`} : (tensor<1xf32>) -> tensor<`+itoa(n)+`xf32>
    return %0 : tensor<`+itoa(n)+`xf32>
  }
}`)
	args := make([][]Value, n)
	for d := range args {
		args[d] = []Value{f32Tensor([]float32{float32(d)}, 1)}
	}
	return runGrid(t, prog, args)[0]
}

func itoa(n int) string {
	return string(rune('0' + n)) // n < 10 in these tests
}

func TestCrossReplicaAndPartitionOrderIsReplicaMajor(t *testing.T) {
	// XLA lists the participants replica by replica, every partition of
	// each: (0,0), (0,1), (1,0), (1,1) = devices 0, 1, 2, 3.
	got := gatherOrder(t, 2, 2, `replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>`)
	assert.Equal(t, []float32{0, 1, 2, 3}, got)
	// Replica groups in another order reorder the replicas, not the
	// partitions inside them.
	got = gatherOrder(t, 2, 2, `replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>`)
	assert.Equal(t, []float32{2, 3, 0, 1}, got)
}

func TestMeshAxesReplicaGroups(t *testing.T) {
	// A 2x4 mesh over 8 replicas; the major half of axis "y" groups devices
	// {0,2}, {1,3}, {4,6}, {5,7}.
	mesh := `#stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 4>]>, axes = [#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>]>`
	p := compileText(t, moduleHeader(8, 1)+`
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %0 = "stablehlo.all_reduce"(%x) `+addRegion+` {replica_groups = `+mesh+`} : (tensor<1xf32>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}`)
	args := make([][]Value, 8)
	for d := range args {
		args[d] = []Value{f32Tensor([]float32{float32(10 * (d + 1))}, 1)}
	}
	got := runGrid(t, p, args)
	want := []float32{40, 60, 40, 60, 120, 140, 120, 140}
	for d := range got {
		assert.Equal(t, []float32{want[d]}, got[d], "device %d", d)
	}
}

func TestCollectiveReduceRootOnly(t *testing.T) {
	p := compileText(t, moduleHeader(4, 1)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.collective_reduce"(%x) `+addRegion+` {replica_groups = dense<[[1, 0], [3, 2]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`)
	args := make([][]Value, 4)
	for d := range args {
		args[d] = []Value{f32Tensor([]float32{float32(d + 1), float32(10 * (d + 1))}, 2)}
	}
	got := runGrid(t, p, args)
	// The first member of each group (1 and 3) gets the sum; 0 and 2 zeros.
	assert.Equal(t, []float32{0, 0}, got[0])
	assert.Equal(t, []float32{3, 30}, got[1])
	assert.Equal(t, []float32{0, 0}, got[2])
	assert.Equal(t, []float32{7, 70}, got[3])
}
