package interpreter

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

var rtTestKernelsOnce sync.Once

// rtTestKernels registers minimal kernels for ops the runtime tests use in
// regions, unless the real kernels are linked in (they win). A
// registration that fails fails the test that made it.
func rtTestKernels(t testing.TB) {
	t.Helper()
	rtTestKernelsOnce.Do(func() {
		if kernelFor("stablehlo.add") == nil {
			require.NoError(t, RegisterKernel("stablehlo.add", func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
				a, b := args[0].(*Tensor), args[1].(*Tensor)
				out := a.Clone()
				switch d := out.Data.(type) {
				case []float32:
					for i := range d {
						d[i] += b.Data.([]float32)[i]
					}
				case []int32:
					for i := range d {
						d[i] += b.Data.([]int32)[i]
					}
				default:
					return nil, fmt.Errorf("test add: %v", a.Shape)
				}
				return []Value{out}, nil
			}))
		}
		for _, name := range []string{"stablehlo.maximum", "stablehlo.minimum", "stablehlo.multiply", "stablehlo.and", "stablehlo.or", "stablehlo.xor"} {
			if kernelFor(name) == nil {
				n := name
				require.NoError(t, RegisterKernel(n, func(*Exec, *stablehlo.Op, []Value) ([]Value, error) {
					return nil, fmt.Errorf("test kernel %s does not run", n)
				}))
			}
		}
	})
}

func f32Tensor(vals []float32, dims ...int64) *Tensor {
	t := NewTensor(xla.MakeShape(xla.Float32, dims...))
	copy(t.Data.([]float32), vals)
	return t
}

func compileText(t *testing.T, text string) *Program {
	t.Helper()
	rtTestKernels(t)
	m, err := stablehlo.Parse([]byte(text))
	require.NoError(t, err)
	p, err := Compile(m, "")
	require.NoError(t, err)
	return p
}

// runGrid runs p on every device with args[d] and returns each device's
// first result as float32s.
func runGrid(t *testing.T, p *Program, args [][]Value) [][]float32 {
	t.Helper()
	outs, err := p.RunSPMD(context.Background(), args, SPMDOptions{Timeout: 5 * time.Second})
	require.NoError(t, err)
	res := make([][]float32, len(outs))
	for d, o := range outs {
		res[d] = o[0].(*Tensor).Data.([]float32)
	}
	return res
}

func moduleHeader(replicas, partitions int) string {
	return fmt.Sprintf("module @m attributes {mhlo.num_replicas = %d : i32, mhlo.num_partitions = %d : i32} {\n", replicas, partitions)
}

const addRegion = `({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  })`

func TestAllReduceGroups(t *testing.T) {
	tests := []struct {
		name      string
		r, p      int
		attrs     string
		want      func(d int) float32 // device d contributes d+1
		groupSize int
	}{
		{"2 replicas", 2, 1, `replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>`, func(int) float32 { return 3 }, 2},
		{"4 replicas in pairs", 4, 1, `replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`,
			func(d int) float32 { return [...]float32{3, 3, 7, 7}[d] }, 2},
		{"8 replicas", 8, 1, `replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>`, func(int) float32 { return 36 }, 8},
		{"empty groups mean all", 4, 1, `replica_groups = dense<> : tensor<0x0xi64>`, func(int) float32 { return 10 }, 4},
		// 2 replicas x 2 partitions, device d = replica*2 + partition.
		{"cross_replica per partition", 2, 2, `replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>`,
			func(d int) float32 { return [...]float32{1 + 3, 2 + 4, 1 + 3, 2 + 4}[d] }, 2},
		{"cross_replica_and_partition", 2, 2,
			`replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>`,
			func(int) float32 { return 10 }, 4},
		{"flattened ids", 2, 2,
			`replica_groups = dense<[[0, 3], [1, 2]]> : tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids`,
			func(d int) float32 { return [...]float32{5, 5, 5, 5}[d] }, 2},
		{"flattened ids uneven padding", 4, 1,
			`replica_groups = dense<[[0, 1, 2], [3, -1, -1]]> : tensor<2x3xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids`,
			func(d int) float32 { return [...]float32{6, 6, 6, 4}[d] }, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := compileText(t, moduleHeader(tc.r, tc.p)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.all_reduce"(%x) `+addRegion+` {`+tc.attrs+`} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`)
			n := tc.r * tc.p
			args := make([][]Value, n)
			for d := range args {
				args[d] = []Value{f32Tensor([]float32{float32(d + 1), 10 * float32(d+1)}, 2)}
			}
			got := runGrid(t, p, args)
			for d := range got {
				assert.Equal(t, []float32{tc.want(d), 10 * tc.want(d)}, got[d], "device %d", d)
			}
		})
	}
}

func TestAllReduceFastPathsAndRegions(t *testing.T) {
	body := func(op, ty string) string {
		return fmt.Sprintf(`({
    ^bb0(%%a: tensor<%[2]s>, %%b: tensor<%[2]s>):
      %%s = %[1]s %%b, %%a : tensor<%[2]s>
      stablehlo.return %%s : tensor<%[2]s>
  })`, op, ty)
	}
	prog := func(region, ty string) string {
		return moduleHeader(2, 1) + fmt.Sprintf(`
  func.func @main(%%x: tensor<3x%[2]s>) -> tensor<3x%[2]s> {
    %%0 = "stablehlo.all_reduce"(%%x) %[1]s {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3x%[2]s>) -> tensor<3x%[2]s>
    return %%0 : tensor<3x%[2]s>
  }
}`, region, ty)
	}
	negZero := float32(math.Copysign(0, -1))
	nan := float32(math.NaN())
	tests := []struct {
		name   string
		region string
		ty     string
		a, b   any
		check  func(t *testing.T, got any)
	}{
		{"max NaN and signed zero", body("stablehlo.maximum", "f32"), "f32",
			[]float32{nan, negZero, 1}, []float32{1, 0, 2},
			func(t *testing.T, got any) {
				g := got.([]float32)
				assert.True(t, math.IsNaN(float64(g[0])))
				assert.False(t, math.Signbit(float64(g[1])))
				assert.Equal(t, float32(2), g[2])
			}},
		{"min signed zero", body("stablehlo.minimum", "f32"), "f32",
			[]float32{0, negZero, 1}, []float32{negZero, 0, nan},
			func(t *testing.T, got any) {
				g := got.([]float32)
				assert.True(t, math.Signbit(float64(g[0])))
				assert.True(t, math.Signbit(float64(g[1])))
				assert.True(t, math.IsNaN(float64(g[2])))
			}},
		{"i4 wraps", body("stablehlo.add", "i4"), "i4",
			[]int8{7, -8, 3}, []int8{1, -1, 2},
			func(t *testing.T, got any) { assert.Equal(t, []int8{-8, 7, 5}, got) }},
		{"ui8 multiply wraps", body("stablehlo.multiply", "ui8"), "ui8",
			[]uint8{16, 3, 255}, []uint8{16, 5, 2},
			func(t *testing.T, got any) { assert.Equal(t, []uint8{0, 15, 254}, got) }},
		{"bool xor", body("stablehlo.xor", "i1"), "i1",
			[]bool{true, true, false}, []bool{true, false, false},
			func(t *testing.T, got any) { assert.Equal(t, []bool{false, true, false}, got) }},
		{"bf16 rounds", body("stablehlo.add", "bf16"), "bf16",
			[]float32{1, 256, 0.5}, []float32{1.0 / 256, 1, 0.25},
			func(t *testing.T, got any) { assert.Equal(t, []float32{1, 256, 0.75}, got) }},
		{"complex add", body("stablehlo.add", "complex<f32>"), "complex<f32>",
			[]complex64{1 + 2i, 0, 3i}, []complex64{1i, 5, 1},
			func(t *testing.T, got any) { assert.Equal(t, []complex64{1 + 3i, 5, 1 + 3i}, got) }},
		{"region runs per element", `({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      %t = stablehlo.add %s, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
  })`, "f32",
			[]float32{1, 2, 3}, []float32{10, 20, 30},
			func(t *testing.T, got any) { assert.Equal(t, []float32{21, 42, 63}, got) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := compileText(t, prog(tc.region, tc.ty))
			dt, err := xla.ParseDType(tc.ty)
			require.NoError(t, err)
			mk := func(v any) *Tensor {
				x := NewTensor(xla.MakeShape(dt, 3))
				switch d := x.Data.(type) {
				case []float32:
					copy(d, v.([]float32))
				case []int8:
					copy(d, v.([]int8))
				case []uint8:
					copy(d, v.([]uint8))
				case []bool:
					copy(d, v.([]bool))
				case []complex64:
					copy(d, v.([]complex64))
				}
				return x
			}
			outs, err := p.RunSPMD(context.Background(), [][]Value{{mk(tc.a)}, {mk(tc.b)}}, SPMDOptions{})
			require.NoError(t, err)
			tc.check(t, outs[0][0].(*Tensor).Data)
			tc.check(t, outs[1][0].(*Tensor).Data)
		})
	}
}

func TestAllGatherReduceScatterAllToAll(t *testing.T) {
	t.Run("all_gather", func(t *testing.T) {
		p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2x2xf32>) -> tensor<2x4xf32> {
    %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x2xf32>) -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}`)
		got := runGrid(t, p, [][]Value{{f32Tensor([]float32{1, 2, 3, 4}, 2, 2)}, {f32Tensor([]float32{5, 6, 7, 8}, 2, 2)}})
		want := []float32{1, 2, 5, 6, 3, 4, 7, 8}
		assert.Equal(t, want, got[0])
		assert.Equal(t, want, got[1])
	})
	t.Run("reduce_scatter over 4", func(t *testing.T) {
		p := compileText(t, moduleHeader(4, 1)+`
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x1xf32> {
    %0 = "stablehlo.reduce_scatter"(%x) `+addRegion+` {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<2x4xf32>) -> tensor<2x1xf32>
    return %0 : tensor<2x1xf32>
  }
}`)
		args := make([][]Value, 4)
		for d := range args {
			v := make([]float32, 8)
			for i := range v {
				v[i] = float32(i + 100*d)
			}
			args[d] = []Value{f32Tensor(v, 2, 4)}
		}
		got := runGrid(t, p, args)
		// sum over devices of i + 100d = 4i + 600; device d keeps column d.
		for d := range got {
			assert.Equal(t, []float32{float32(4*d + 600), float32(4*(d+4) + 600)}, got[d], "device %d", d)
		}
	})
	t.Run("all_to_all", func(t *testing.T) {
		p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
    %0 = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
    return %0 : tensor<4x2xf32>
  }
}`)
		got := runGrid(t, p, [][]Value{
			{f32Tensor([]float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)},
			{f32Tensor([]float32{9, 10, 11, 12, 13, 14, 15, 16}, 2, 4)},
		})
		assert.Equal(t, []float32{1, 2, 5, 6, 9, 10, 13, 14}, got[0])
		assert.Equal(t, []float32{3, 4, 7, 8, 11, 12, 15, 16}, got[1])
	})
	t.Run("all_to_all across partitions", func(t *testing.T) {
		p := compileText(t, moduleHeader(1, 4)+`
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}`)
		args := make([][]Value, 4)
		for d := range args {
			args[d] = []Value{f32Tensor([]float32{float32(10 * d), float32(10*d + 1), float32(10*d + 2), float32(10*d + 3)}, 4)}
		}
		got := runGrid(t, p, args)
		for d := range got {
			assert.Equal(t, []float32{float32(d), float32(10 + d), float32(20 + d), float32(30 + d)}, got[d])
		}
	})
}

func TestPermuteBroadcastAndIDs(t *testing.T) {
	t.Run("collective_permute ring of 8", func(t *testing.T) {
		p := compileText(t, moduleHeader(8, 1)+`
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7]]> : tensor<7x2xi64>} : (tensor<1xf32>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}`)
		args := make([][]Value, 8)
		for d := range args {
			args[d] = []Value{f32Tensor([]float32{float32(d + 1)}, 1)}
		}
		got := runGrid(t, p, args)
		assert.Equal(t, []float32{0}, got[0], "device 0 is no target: zeros")
		for d := 1; d < 8; d++ {
			assert.Equal(t, []float32{float32(d)}, got[d])
		}
	})
	t.Run("collective_permute across partitions", func(t *testing.T) {
		p := compileText(t, moduleHeader(2, 2)+`
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %0 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<1xf32>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}`)
		args := make([][]Value, 4)
		for d := range args {
			args[d] = []Value{f32Tensor([]float32{float32(d)}, 1)}
		}
		got := runGrid(t, p, args)
		assert.Equal(t, [][]float32{{1}, {0}, {3}, {2}}, got)
	})
	t.Run("collective_broadcast", func(t *testing.T) {
		p := compileText(t, moduleHeader(4, 1)+`
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %0 = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>} : (tensor<1xf32>) -> tensor<1xf32>
    return %0 : tensor<1xf32>
  }
}`)
		args := make([][]Value, 4)
		for d := range args {
			args[d] = []Value{f32Tensor([]float32{float32(d + 1)}, 1)}
		}
		got := runGrid(t, p, args)
		assert.Equal(t, [][]float32{{0}, {3}, {3}, {0}}, got)
	})
	t.Run("replica_id and partition_id", func(t *testing.T) {
		p := compileText(t, moduleHeader(2, 4)+`
  func.func @main() -> (tensor<ui32>, tensor<ui32>) {
    %0 = stablehlo.replica_id : tensor<ui32>
    %1 = stablehlo.partition_id : tensor<ui32>
    return %0, %1 : tensor<ui32>, tensor<ui32>
  }
}`)
		outs, err := p.RunSPMD(context.Background(), make([][]Value, 8), SPMDOptions{})
		require.NoError(t, err)
		for d, o := range outs {
			assert.Equal(t, []uint32{uint32(d / 4)}, o[0].(*Tensor).Data)
			assert.Equal(t, []uint32{uint32(d % 4)}, o[1].(*Tensor).Data)
		}
	})
}

const twoReplicaSum = `module @m attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.all_reduce"(%x) ` + addRegion + ` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`

func TestCollectiveMissingPeerIsAnError(t *testing.T) {
	p := compileText(t, twoReplicaSum)
	rv := NewRendezvous(2, 1, 50*time.Millisecond)
	start := time.Now()
	_, err := p.Run(context.Background(), Device{Replica: 0, Rendezvous: rv}, []Value{f32Tensor([]float32{1, 2}, 2)})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	for _, want := range []string{"stablehlo.all_reduce", "(1, 0)", "never arrived"} {
		assert.Contains(t, err.Error(), want)
	}
	var timeout *CollectiveTimeoutError
	assert.ErrorAs(t, err, &timeout, "a timeout says so (pjrt: DEADLINE_EXCEEDED, not CANCELLED)")
	assert.Error(t, rv.Err(), "a timeout fails the whole execution")
}

// cross-replica-sum (the legacy spelling of an all_reduce sum) keeps its
// operand for its peers, as the other collectives: the next op of the
// device done first once cleared the storage its peers were still reading.
func TestCrossReplicaSum(t *testing.T) {
	p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %s = "stablehlo.cross-replica-sum"(%x) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %z = stablehlo.add %s, %s : tensor<2xf32>
    return %z : tensor<2xf32>
  }
}`)
	for range 20 {
		outs, err := p.RunSPMD(context.Background(), [][]Value{{f32Tensor([]float32{1, 2}, 2)}, {f32Tensor([]float32{10, 20}, 2)}}, SPMDOptions{Timeout: time.Minute})
		require.NoError(t, err)
		for _, o := range outs {
			assert.Equal(t, []float32{22, 44}, o[0].(*Tensor).Data)
		}
	}
}

func TestFailingDeviceCancelsPeers(t *testing.T) {
	p := compileText(t, twoReplicaSum)
	// Device 1 gets an argument of the wrong shape and fails at once; device
	// 0 must not wait for it until the timeout.
	start := time.Now()
	_, err := p.RunSPMD(context.Background(), [][]Value{
		{f32Tensor([]float32{1, 2}, 2)},
		{f32Tensor([]float32{1, 2, 3}, 3)},
	}, SPMDOptions{Timeout: time.Minute})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	msg := err.Error()
	assert.Contains(t, msg, "device 1 (1, 0)")
	assert.Contains(t, msg, "argument 0")
	assert.Contains(t, msg, "device 0 (0, 0)")
	assert.Contains(t, msg, "cancel") // its context, or the rendezvous
	assert.True(t, strings.Index(msg, "argument 0") < strings.Index(msg, "cancel"), "the failing device is reported first: %s", msg)
}

// TestFailingDeviceStopsBusyPeers: a device that fails stops the others
// where they are, not only at their next collective: replica 1 runs a loop
// of 10^9 steps before the all_reduce (it ran to the end, then failed at
// the collective).
func TestFailingDeviceStopsBusyPeers(t *testing.T) {
	p := compileText(t, `module @m attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = stablehlo.replica_id : tensor<ui32>
    %ri = stablehlo.convert %r : (tensor<ui32>) -> tensor<i64>
    %big = stablehlo.constant dense<1000000000> : tensor<i64>
    %n = stablehlo.multiply %ri, %big : tensor<i64>
    `+spinLoop("tensor<2xf32>")+`
    %0 = "stablehlo.all_reduce"(%w#1) `+addRegion+` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`)
	_, err := p.RunSPMD(context.Background(), [][]Value{
		{f32Tensor([]float32{1, 2, 3}, 3)}, // the wrong shape: device 0 fails at once
		{f32Tensor([]float32{1, 2}, 2)},
	}, SPMDOptions{Timeout: time.Hour})
	require.Error(t, err)
	var dev1 string
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(line, "device 1 (1, 0)") {
			dev1 = line
		}
	}
	// Stopped where it was (in its loop, or before it), not at the
	// all_reduce after 10^9 steps (the test's deadline, before).
	assert.True(t, strings.HasSuffix(dev1, "context canceled"), err.Error())
	assert.NotContains(t, dev1, "all_reduce", err.Error())
}

func TestRendezvousMeetsOncePerIteration(t *testing.T) {
	p := compileText(t, twoReplicaSum)
	rv := NewRendezvous(2, 1, 5*time.Second)
	var wg sync.WaitGroup
	res := make([][]float32, 2)
	errs := make([]error, 2)
	for d := 0; d < 2; d++ {
		wg.Add(1)
		go func(d int) {
			defer wg.Done()
			x := f32Tensor([]float32{float32(d + 1), 0}, 2)
			for it := 0; it < 3; it++ {
				out, err := p.Run(context.Background(), Device{Replica: d, Rendezvous: rv}, []Value{x})
				if err != nil {
					errs[d] = err
					return
				}
				x = out[0].(*Tensor)
			}
			res[d] = x.Data.([]float32)
		}(d)
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	// 3 -> 6 -> 12 on both devices.
	assert.Equal(t, []float32{12, 0}, res[0])
	assert.Equal(t, []float32{12, 0}, res[1])
}

func TestCollectiveAttributeErrors(t *testing.T) {
	tests := []struct{ name, op, ty, want string }{
		{"group id out of range", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 5]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<4xf32>`, "tensor<4xf32>", "out of range"},
		{"global ids need channel", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids} : (tensor<2xf32>) -> tensor<4xf32>`, "tensor<4xf32>", "positive channel_id"},
		{"split count", `"stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>`, "tensor<2xf32>", "split_count 1 differs"},
		{"negative id", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, -2], [1, -1]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>`, "tensor<2xf32>", "holds -2: ids are non-negative"},
		{"repeated target", `"stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 1]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>`, "tensor<2xf32>", "repeat"},
		{"rank-1 groups", `"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[0, 1]> : tensor<2xi64>} : (tensor<2xf32>) -> tensor<4xf32>`, "tensor<4xf32>",
			"replica_groups must be rank 2 (groups x members, e.g. dense<[[0, 1]]>), is tensor<2xi64>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xf32>) -> `+tc.ty+` {
    %0 = `+tc.op+`
    return %0 : `+tc.ty+`
  }
}`)
			_, err := p.RunSPMD(context.Background(), [][]Value{{f32Tensor([]float32{1, 2}, 2)}, {f32Tensor([]float32{3, 4}, 2)}}, SPMDOptions{Timeout: time.Second})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestReductionsPromote: an all_reduce or reduce_scatter whose body works
// in a wider type than its operand (i8 summed as i32, as the spec allows)
// converts the operand first (it was an error for groups of two, and
// groups of one returned the i8 tensor for an i32 result).
func TestReductionsPromote(t *testing.T) {
	i8 := func(vals ...int8) *Tensor {
		x := NewTensor(xla.MakeShape(xla.Int8, int64(len(vals))))
		copy(x.Data.([]int8), vals)
		return x
	}
	args := [][]Value{{i8(100, 127)}, {i8(100, 127)}}
	const body = `({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %s = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %s : tensor<i32>
    })`
	for _, c := range []struct {
		name, op, ty string
		want         [][]int32
	}{
		{"all_reduce", `"stablehlo.all_reduce"(%x) ` + body + ` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi8>) -> tensor<2xi32>`,
			"tensor<2xi32>", [][]int32{{200, 254}, {200, 254}}},
		{"all_reduce, groups of one", `"stablehlo.all_reduce"(%x) ` + body + ` {replica_groups = dense<[[0], [1]]> : tensor<2x1xi64>} : (tensor<2xi8>) -> tensor<2xi32>`,
			"tensor<2xi32>", [][]int32{{100, 127}, {100, 127}}},
		{"reduce_scatter", `"stablehlo.reduce_scatter"(%x) ` + body + ` {scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi8>) -> tensor<1xi32>`,
			"tensor<1xi32>", [][]int32{{200}, {254}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xi8>) -> `+c.ty+` {
    %0 = `+c.op+`
    return %0 : `+c.ty+`
  }
}`)
			outs, err := p.RunSPMD(context.Background(), args, SPMDOptions{Timeout: 30 * time.Second})
			require.NoError(t, err)
			for d := range outs {
				assert.Equal(t, c.want[d], outs[d][0].(*Tensor).Data, "device %d", d)
			}
		})
	}
}

func TestRunParallelGrid(t *testing.T) {
	tests := []struct {
		name  string
		op    string
		types string // of the process function
		want  [][]float32
	}{
		{"broadcast across replicas of each partition", `%r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<1xf32>) -> tensor<1xf32>`,
			"", [][]float32{{3}, {4}, {3}, {4}}},
		{"broadcast across partitions", `%r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1]]> : tensor<1x1xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<1xf32>) -> tensor<1xf32>`,
			"", [][]float32{{0}, {2}, {0}, {4}}},
		{"all_gather flattened ids", `%r = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[3, 0, 1, 2]]> : tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids} : (tensor<1xf32>) -> tensor<4xf32>`,
			"tensor<4xf32>", [][]float32{{4, 1, 2, 3}, {4, 1, 2, 3}, {4, 1, 2, 3}, {4, 1, 2, 3}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := tc.types
			if rt == "" {
				rt = "tensor<1xf32>"
			}
			p := compileText(t, `module {
  func.func private @proc(%x: tensor<1xf32>) -> `+rt+` {
    `+tc.op+`
    return %r : `+rt+`
  }
  func.func @main(%a: tensor<1xf32>, %b: tensor<1xf32>, %c: tensor<1xf32>, %d: tensor<1xf32>) -> (`+rt+`, `+rt+`, `+rt+`, `+rt+`) {
    %r:4 = "interpreter.run_parallel"(%a, %b, %c, %d) {programs = [[@proc, @proc], [@proc, @proc]]} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (`+rt+`, `+rt+`, `+rt+`, `+rt+`)
    return %r#0, %r#1, %r#2, %r#3 : `+rt+`, `+rt+`, `+rt+`, `+rt+`
  }
}`)
			args := []Value{f32Tensor([]float32{1}, 1), f32Tensor([]float32{2}, 1), f32Tensor([]float32{3}, 1), f32Tensor([]float32{4}, 1)}
			out, err := p.Run(context.Background(), Device{}, args)
			require.NoError(t, err)
			for i, o := range out {
				assert.Equal(t, tc.want[i], o.(*Tensor).Data, "process %d", i)
			}
		})
	}
}

func TestCollectiveBroadcastDynamicRoot(t *testing.T) {
	p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<1xf32>, %y: tensor<1xf32>, %root: tensor<2xi32>) -> (tensor<1xf32>, tensor<1xf32>) {
    %r:2 = "stablehlo.collective_broadcast"(%x, %y, %root) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, has_dynamic_root} : (tensor<1xf32>, tensor<1xf32>, tensor<2xi32>) -> (tensor<1xf32>, tensor<1xf32>)
    return %r#0, %r#1 : tensor<1xf32>, tensor<1xf32>
  }
}`)
	root := tensorOf(t, xla.Int32, []int32{0, 1}, 2)
	outs, err := p.RunSPMD(context.Background(), [][]Value{
		{f32Tensor([]float32{1}, 1), f32Tensor([]float32{5}, 1), root},
		{f32Tensor([]float32{3}, 1), f32Tensor([]float32{7}, 1), root},
	}, SPMDOptions{})
	require.NoError(t, err)
	for _, o := range outs {
		assert.Equal(t, []float32{1}, o[0].(*Tensor).Data)
		assert.Equal(t, []float32{7}, o[1].(*Tensor).Data)
	}
}

// Processes running different functions (MPMD) meet at their collectives
// of the same kind and channel, in the order each reaches them: a sum
// over both, then a permute, though the ops are not the same.
func TestRunParallelDifferentPrograms(t *testing.T) {
	sum := `%s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%l: tensor<f32>, %r: tensor<f32>):
        %t = stablehlo.add %l, %r : tensor<f32>
        stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %p = "stablehlo.collective_permute"(%s) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>`
	p := compileText(t, `module {
  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    `+sum+`
    return %p : tensor<2xf32>
  }
  func.func private @g(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = stablehlo.negate %x : tensor<2xf32>
    %x2 = stablehlo.negate %y : tensor<2xf32>
    `+strings.ReplaceAll(sum, "%x)", "%x2)")+`
    %q = stablehlo.multiply %p, %p : tensor<2xf32>
    return %q : tensor<2xf32>
  }
  func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@f], [@g]]} : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    return %r#0, %r#1 : tensor<2xf32>, tensor<2xf32>
  }
}`)
	out, err := p.Run(context.Background(), Device{}, []Value{f32Tensor([]float32{1, 2}, 2), f32Tensor([]float32{10, 20}, 2)})
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 22}, out[0].(*Tensor).Data)
	assert.Equal(t, []float32{121, 484}, out[1].(*Tensor).Data)
}

// collective_permute's pairs are (source, target) rows of non-negative
// process ids: anything else is an error naming it.
func TestCollectivePermutePairsChecked(t *testing.T) {
	for _, c := range []struct{ pairs, want string }{
		{`dense<[[0, 1], [-1, -1]]> : tensor<2x2xi64>`, "source_target_pairs holds [-1 -1]: process ids are non-negative"},
		{`dense<[[1, -1]]> : tensor<1x2xi64>`, "source_target_pairs holds [1 -1]"},
		{`dense<[0, 1]> : tensor<2xi64>`, "source_target_pairs must be a tensor<Nx2xi64> of (source, target) rows, is tensor<2xi64>"},
		{`dense<[[0, 1, 1]]> : tensor<1x3xi64>`, "is tensor<1x3xi64>"},
	} {
		p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
    %r = "stablehlo.collective_permute"(%x) {source_target_pairs = `+c.pairs+`} : (tensor<1xf32>) -> tensor<1xf32>
    return %r : tensor<1xf32>
  }
}`)
		_, err := p.RunSPMD(context.Background(), [][]Value{{f32Tensor([]float32{1}, 1)}, {f32Tensor([]float32{2}, 1)}}, SPMDOptions{})
		require.ErrorContains(t, err, c.want, c.pairs)
	}
}

// A device that finishes its run without reaching a collective its group
// waits at (another branch, fewer loop iterations) fails that group at
// once, naming it and the op; it was waited for until the collective
// timeout (an hour here; the context's 30 s only catches that hang) and
// reported as "never arrived".
func TestFinishedDeviceFailsItsGroup(t *testing.T) {
	branch := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = stablehlo.replica_id : tensor<ui32>
    %z = stablehlo.constant dense<0> : tensor<ui32>
    %first = stablehlo.compare EQ, %r, %z : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %0 = "stablehlo.if"(%first) ({
      %s = "stablehlo.all_reduce"(%x) `+addRegion+` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
      stablehlo.return %s : tensor<2xf32>
    }, {
      stablehlo.return %x : tensor<2xf32>
    }) : (tensor<i1>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`)
	loop := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = stablehlo.replica_id : tensor<ui32>
    %one = stablehlo.constant dense<1> : tensor<ui32>
    %n = stablehlo.add %r, %one : tensor<ui32>
    %z = stablehlo.constant dense<0> : tensor<ui32>
    %w:2 = stablehlo.while(%i = %z, %v = %x) : tensor<ui32>, tensor<2xf32>
      cond {
        %c = stablehlo.compare LT, %i, %n : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %s = "stablehlo.all_reduce"(%v) `+addRegion+` {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
        %j = stablehlo.add %i, %one : tensor<ui32>
        stablehlo.return %j, %s : tensor<ui32>, tensor<2xf32>
      }
    return %w#1 : tensor<2xf32>
  }
}`)
	for _, c := range []struct {
		name string
		p    *Program
		who  string
	}{{"branch", branch, "device (1, 0) finished without reaching stablehlo.all_reduce (line 8), where device(s) (0, 0) wait"},
		{"loop", loop, "device (0, 0) finished without reaching stablehlo.all_reduce (line 13), where device(s) (1, 0) wait"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := c.p.RunSPMD(ctx, [][]Value{{f32Tensor([]float32{1, 2}, 2)}, {f32Tensor([]float32{10, 20}, 2)}}, SPMDOptions{Timeout: time.Hour})
		cancel()
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.who, c.name)
		assert.NotContains(t, err.Error(), "never arrived", c.name)
	}
}

// A Device outside its Rendezvous's grid is an error from Run, not an
// index out of range in collective_permute (or a wait for devices that do
// not exist).
func TestDeviceOutsideGrid(t *testing.T) {
	p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %r : tensor<2xf32>
  }
}`)
	for _, dev := range []Device{{Replica: 5}, {Replica: -1}, {Partition: 3}} {
		dev.Rendezvous = NewRendezvous(2, 1, time.Hour)
		_, err := p.Run(context.Background(), dev, []Value{f32Tensor([]float32{1, 2}, 2)})
		assert.ErrorContains(t, err, fmt.Sprintf("device (replica %d, partition %d) is outside its Rendezvous's 2 x 1 grid", dev.Replica, dev.Partition))
	}
}

// collective_broadcast between processes that pass different numbers of
// operands (run_parallel runs different functions) is an error naming
// them, not an index out of range; the process still looping in its own
// group is cancelled (30 s only catches a hang).
func TestCollectiveBroadcastOperandCounts(t *testing.T) {
	p := compileText(t, `module @m {
  func.func private @f(%x: tensor<1xf32>) -> tensor<1xf32> {
    %r = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>} : (tensor<1xf32>) -> tensor<1xf32>
    return %r : tensor<1xf32>
  }
  func.func private @g(%x: tensor<1xf32>) -> tensor<1xf32> {
    %r:2 = "stablehlo.collective_broadcast"(%x, %x) {replica_groups = dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>} : (tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
    return %r#1 : tensor<1xf32>
  }
  func.func private @h(%x: tensor<1xf32>) -> tensor<1xf32> {
    %n = stablehlo.constant dense<10000000000> : tensor<i64>
    `+spinLoop("tensor<1xf32>")+`
    return %w#1 : tensor<1xf32>
  }
  func.func @main(%a: tensor<1xf32>, %b: tensor<1xf32>, %c: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
    %r:3 = "interpreter.run_parallel"(%a, %b, %c) {programs = [[@f], [@g], [@h]]} : (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
    return %r#0, %r#1, %r#2 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
  }
}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.Run(ctx, Device{}, []Value{f32Tensor([]float32{1}, 1), f32Tensor([]float32{2}, 1), f32Tensor([]float32{3}, 1)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has 1 operands, this device 2")
	assert.NotContains(t, err.Error(), "deadline exceeded")
}

// spinLoop is a while loop that counts %i from 0 to %n (an i64 the caller
// defines) carrying %x (of type typ) unchanged to %w#1: a device kept
// busy.
func spinLoop(typ string) string {
	return strings.ReplaceAll(`%zero = stablehlo.constant dense<0> : tensor<i64>
    %w:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i64>, TYP
      cond {
        %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i64>
        %j = stablehlo.add %i, %one : tensor<i64>
        stablehlo.return %j, %v : tensor<i64>, TYP
      }`, "TYP", typ)
}

// Found in review: a mesh whose device_ids hold a negative id named a
// process that does not exist, and the others waited for it until the
// timeout (it is an error at once now); and all_gather, reduce_scatter
// and all_to_all refused a declared `?` result (it takes any size).
func TestCollectivesReviewFindings(t *testing.T) {
	p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "stablehlo.all_reduce"(%x) `+addRegion+` {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 3>], device_ids = [0, -2, 1]>, axes = [#stablehlo.axis_ref<name = "x">]>} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}`)
	_, err := p.RunSPMD(context.Background(), [][]Value{{f32Tensor([]float32{1, 2}, 2)}, {f32Tensor([]float32{3, 4}, 2)}}, SPMDOptions{Timeout: time.Minute})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "device_ids holds -2")
	assert.NotContains(t, err.Error(), "never arrived")

	for _, c := range []struct {
		op   string
		want []float32 // device 0's
	}{
		{`"stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<?xf32>`, []float32{1, 2, 3, 4}},
		{`"stablehlo.reduce_scatter"(%x) ` + addRegion + ` {scatter_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<?xf32>`, []float32{4}},
		{`"stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<?xf32>`, []float32{1, 3}},
	} {
		p := compileText(t, moduleHeader(2, 1)+`
  func.func @main(%x: tensor<2xf32>) -> tensor<?xf32> {
    %0 = `+c.op+`
    return %0 : tensor<?xf32>
  }
}`)
		outs, err := p.RunSPMD(context.Background(), [][]Value{{f32Tensor([]float32{1, 2}, 2)}, {f32Tensor([]float32{3, 4}, 2)}}, SPMDOptions{})
		require.NoError(t, err, c.op)
		assert.Equal(t, c.want, outs[0][0].(*Tensor).Data, c.op)
	}
}
