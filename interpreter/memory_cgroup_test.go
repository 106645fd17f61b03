package interpreter

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCgroupMemAvailable(t *testing.T) {
	write := func(root, rel, text string) {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	// cgroup v2, the process in /app: limit less usage, the droppable
	// page cache not counted as used.
	v2 := t.TempDir()
	write(v2, "app/memory.max", "1000000\n")
	write(v2, "app/memory.current", "700000\n")
	write(v2, "app/memory.stat", "anon 400000\nfile 300000\ninactive_file 250000\nactive_file 50000\n")
	write(v2, "memory.max", "5\n") // the root's, not the process's
	got, ok := cgroupMemAvailableAt(v2, []byte("0::/app\n"))
	assert.True(t, ok)
	assert.Equal(t, int64(1000000-(700000-250000)), got)
	// Without memory.stat: the whole usage.
	require.NoError(t, os.Remove(filepath.Join(v2, "app/memory.stat")))
	got, ok = cgroupMemAvailableAt(v2, []byte("0::/app\n"))
	assert.True(t, ok)
	assert.Equal(t, int64(300000), got)
	// No limit.
	write(v2, "app/memory.max", "max\n")
	_, ok = cgroupMemAvailableAt(v2, []byte("0::/app\n"))
	assert.False(t, ok)
	// A path that is not there: the root's files.
	got, ok = cgroupMemAvailableAt(v2, []byte("0::/elsewhere\n"))
	assert.False(t, ok, "the root has memory.max but no memory.current: %d", got)

	// cgroup v1, memory beside another controller.
	v1 := t.TempDir()
	write(v1, "memory/job/memory.limit_in_bytes", "2000000\n")
	write(v1, "memory/job/memory.usage_in_bytes", "1500000\n")
	write(v1, "memory/job/memory.stat", "cache 600000\ntotal_inactive_file 500000\n")
	got, ok = cgroupMemAvailableAt(v1, []byte("12:cpu,cpuacct:/job\n11:memory,hugetlb:/job\n"))
	assert.True(t, ok)
	assert.Equal(t, int64(2000000-(1500000-500000)), got)
	// v1 without a limit writes a huge number.
	write(v1, "memory/job/memory.limit_in_bytes", "9223372036854771712\n")
	_, ok = cgroupMemAvailableAt(v1, []byte("11:memory:/job\n"))
	assert.False(t, ok)
	// Usage above the limit: nothing left, not a negative amount.
	write(v1, "memory/job/memory.limit_in_bytes", "1000\n")
	got, ok = cgroupMemAvailableAt(v1, []byte("11:memory:/job\n"))
	assert.True(t, ok)
	assert.Equal(t, int64(0), got)
	// Nothing readable.
	_, ok = cgroupMemAvailableAt(t.TempDir(), nil)
	assert.False(t, ok)
}
