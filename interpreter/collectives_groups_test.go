package interpreter

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
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

// Shardy's partitioner names the mesh of replica_group_mesh_axes by
// symbol (an sdy.mesh of the module), in either spelling of its axis
// references, with or without device_ids.
func TestMeshAxesReplicaGroupsBySymbol(t *testing.T) {
	for _, c := range []struct {
		name, mesh, axes string
		want             []float32
	}{
		// Axis "y" of a 2x2 mesh groups {0,1} and {2,3}.
		{"stablehlo axis_ref", `<["x"=2, "y"=2]>`, `[#stablehlo.axis_ref<name = "y">]`, []float32{30, 30, 70, 70}},
		{"sdy axis_ref", `<["x"=2, "y"=2]>`, `[#sdy<axis_ref"y">]`, []float32{30, 30, 70, 70}},
		// Axis "x" groups {0,2} and {1,3}.
		{"other axis", `<["x"=2, "y"=2]>`, `[#stablehlo.axis_ref<name = "x">]`, []float32{40, 60, 40, 60}},
		// Devices in the mesh's order 3,2,1,0: axis "y" groups {3,2}, {1,0}.
		{"device_ids", `<["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>`, `[#stablehlo.axis_ref<name = "y">]`, []float32{30, 30, 70, 70}},
		// Axis "x" of that mesh groups {3,1} and {2,0}.
		{"device_ids other axis", `<["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>`, `[#stablehlo.axis_ref<name = "x">]`, []float32{40, 60, 40, 60}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := compileText(t, moduleHeader(1, 4)+`
  sdy.mesh @mesh_2_2 = `+c.mesh+`
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %0 = "stablehlo.all_reduce"(%x) `+addRegion+` {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_2_2, axes = `+c.axes+`>, use_global_device_ids} : (tensor<1xf32>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}`)
			args := make([][]Value, 4)
			for d := range args {
				args[d] = []Value{f32Tensor([]float32{float32(10 * (d + 1))}, 1)}
			}
			got := runGrid(t, p, args)
			for d := range got {
				assert.Equal(t, []float32{c.want[d]}, got[d], "device %d", d)
			}
			require.NoError(t, p.Module.Verify(), "Verify accepts the mesh-axes form")
		})
	}
	// A mesh symbol the module does not define.
	rtTestKernels(t)
	m, err := stablehlo.Parse([]byte(moduleHeader(1, 2) + `
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %0 = "stablehlo.all_reduce"(%x) ` + addRegion + ` {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @nowhere, axes = [#stablehlo.axis_ref<name = "y">]>, use_global_device_ids} : (tensor<1xf32>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}`))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	one := []Value{f32Tensor([]float32{1}, 1)}
	_, err = p.RunSPMD(context.Background(), [][]Value{one, one}, SPMDOptions{Timeout: 5 * time.Second})
	require.ErrorContains(t, err, "the module has no sdy.mesh @nowhere")
}

// Compile refuses a collective whose declared result type is not the one
// its operands give: the kernel would hand its value on under the
// declared type (an f32 sum read as i32 bits, a shorter tensor as a
// longer one).
func TestCollectiveDeclaredResultTypes(t *testing.T) {
	f64 := `({
    ^bb0(%a: tensor<f64>, %b: tensor<f64>):
      %s = stablehlo.add %a, %b : tensor<f64>
      stablehlo.return %s : tensor<f64>
  })`
	for _, c := range []struct{ name, op, result, want string }{
		{"all_reduce shape", `"stablehlo.all_reduce"(%x) ` + addRegion + ` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}`, "tensor<4xf32>", "result 0 is declared tensor<4xf32>, its operands give tensor<2xf32>"},
		{"all_reduce dtype", `"stablehlo.all_reduce"(%x) ` + addRegion + ` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}`, "tensor<2xi32>", "result 0 is declared tensor<2xi32>, its operands give tensor<2xf32>"},
		{"all_reduce promoted", `"stablehlo.all_reduce"(%x) ` + f64 + ` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}`, "tensor<2xf32>", "result 0 is declared tensor<2xf32>, its operands give tensor<2xf64>"},
		{"collective_reduce", `"stablehlo.collective_reduce"(%x) ` + addRegion + ` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}`, "tensor<2xi32>", "declared tensor<2xi32>"},
		{"collective_permute", `"stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}`, "tensor<3xf32>", "declared tensor<3xf32>"},
		{"collective_broadcast", `"stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}`, "tensor<2xi32>", "declared tensor<2xi32>"},
		{"all_gather", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}`, "tensor<6xf32>", "declared tensor<6xf32>, its operands give tensor<4xf32>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rtTestKernels(t)
			m, err := stablehlo.Parse([]byte(moduleHeader(2, 1) + `
  func.func @main(%x: tensor<2xf32>) -> ` + c.result + ` {
    %0 = ` + c.op + ` : (tensor<2xf32>) -> ` + c.result + `
    return %0 : ` + c.result + `
  }
}`))
			require.NoError(t, err)
			_, err = Compile(m, "")
			require.ErrorContains(t, err, c.want)
			name, _, _ := strings.Cut(c.op[1:], `"`)
			require.ErrorContains(t, err, name+" (line ", "the error names the op and its line")
		})
	}
}
