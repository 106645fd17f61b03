package xla_test

import (
	"fmt"

	"github.com/halo-ml/halo/xla"
)

// Element types, shapes, and the compile options a PJRT plugin receives.
func Example() {
	dt, err := xla.ParseDType("bf16")
	if err != nil {
		panic(err)
	}
	fmt.Println(dt, dt.Bits(), "bits, float:", dt.IsFloat())

	s := xla.MakeShape(xla.Float32, 2, 3)
	fmt.Println(s, "elements:", s.Size(), "host bytes:", s.HostBytes())

	// A shard_map program over 4 devices: one replica, 4 SPMD partitions,
	// Shardy, and one XLA debug option set on top of the plugin's defaults.
	opts := xla.DefaultCompileOptions()
	opts.NumPartitions = 4
	opts.UseSPMDPartitioning = true
	opts.UseShardyPartitioner = true
	opts.DeviceAssignment = xla.DefaultDeviceAssignment(1, 4)
	opts.EnvOptionOverrides = map[string]any{"xla_gpu_autotune_level": 0}
	b, err := opts.Marshal()
	if err != nil {
		panic(err)
	}
	back, err := xla.UnmarshalCompileOptions(b)
	if err != nil {
		panic(err)
	}
	fmt.Println("partitions:", back.NumPartitions, "devices:", back.DeviceAssignment,
		"overrides:", back.EnvOptionOverrides)

	// Invalid options are reported by Marshal.
	opts.NumReplicas = 2
	_, err = opts.Marshal()
	fmt.Println(err)
	// Output:
	// bf16 16 bits, float: true
	// tensor<2x3xf32> elements: 6 host bytes: 24
	// partitions: 4 devices: [[0 1 2 3]] overrides: map[xla_gpu_autotune_level:0]
	// xla: compile options: device assignment is 1 replicas x 4 computations, want NumReplicas x NumPartitions = 2 x 4
}
