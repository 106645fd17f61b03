package interpreter

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/halo-ml/halo/internal/workers"
	"github.com/halo-ml/halo/xla"
)

// AllocError is the error of a tensor that cannot be allocated: its shape
// overflows, or it needs more memory than the machine has available. Go
// cannot recover from a failed allocation, so the interpreter checks
// large ones first and fails the op instead.
type AllocError struct {
	Shape     xla.Shape
	Bytes     int64 // -1 when the size overflows
	Available int64 // bytes available, when known
}

// Error says which shape or how many bytes could not be allocated.
func (e *AllocError) Error() string {
	if e.Shape.DType == xla.Invalid && e.Bytes >= 0 {
		return fmt.Sprintf("working storage of %d elements needs %s, more than the %s of memory available", e.Shape.Size(), byteSize(e.Bytes), byteSize(e.Available))
	}
	if slices.ContainsFunc(e.Shape.Dims, func(d int64) bool { return d < 0 }) {
		return fmt.Sprintf("%v has a negative dimension", e.Shape)
	}
	if e.Bytes < 0 {
		return fmt.Sprintf("%v is too large to hold", e.Shape)
	}
	return fmt.Sprintf("%v needs %s, more than the %s of memory available", e.Shape, byteSize(e.Bytes), byteSize(e.Available))
}

// byteSize writes n in the largest binary unit it reaches.
func byteSize(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	v, u := float64(n)/1024, 0
	for v >= 1024 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	return fmt.Sprintf("%.1f %ciB", v, units[u])
}

// checkAllocMin is the size from which an allocation is checked against
// the memory available (smaller ones are left to the runtime).
var checkAllocMin int64 = 1 << 30

// checkAlloc panics with an *AllocError when a tensor of shape s cannot be
// allocated (see catchAlloc).
func checkAlloc(s xla.Shape) {
	if !slices.ContainsFunc(s.Dims, func(d int64) bool { return d < 0 }) && slices.Contains(s.Dims, 0) {
		return // no elements, however large the other dims
	}
	n := int64(1)
	for _, d := range s.Dims {
		if d < 0 || (d > 0 && n > math.MaxInt64/d) {
			panic(&AllocError{Shape: s.Clone(), Bytes: -1})
		}
		n *= d
	}
	checkBytes(s, n, int64(rtElemSize(StorageOf(s.DType))))
}

// checkBytes panics with an *AllocError when n elements of w bytes (the
// storage of shape s) overflow or exceed the memory available
// (bytesError).
func checkBytes(s xla.Shape, n, w int64) {
	if e := bytesError(s, n, w); e != nil {
		panic(e)
	}
}

// CheckAlloc reports whether bytes of memory, to hold a value of the given
// shape (which the error names), can be allocated: nil, or the
// *AllocError the interpreter fails an op with, when they exceed the
// memory available (bytes < 0 stands for a size that overflows). Go
// cannot recover from a failed allocation: callers that make a large
// slice, a host copy of a device buffer, say, check it first. Allocations
// under 1 GiB are left to the runtime and always pass.
func CheckAlloc(shape xla.Shape, bytes int64) error {
	if e := bytesError(shape, bytes, 1); e != nil {
		return e
	}
	return nil
}

// bytesError is the *AllocError of n elements of w bytes (the storage of
// shape s) when they overflow or exceed the memory available, else nil;
// the runtime's garbage is collected first when that decides it.
func bytesError(s xla.Shape, n, w int64) *AllocError {
	if n < 0 || (w > 0 && n > math.MaxInt64/w) {
		return &AllocError{Shape: s.Clone(), Bytes: -1}
	}
	bytes := n * w
	if bytes < checkAllocMin {
		return nil
	}
	avail, ok := availableMemory()
	for i := 0; i < 2 && ok && bytes > avail; i++ {
		runtime.GC() // dead tensors the heap still counts (pools need two)
		avail, ok = availableMemory()
	}
	if ok && bytes > avail {
		return &AllocError{Shape: s.Clone(), Bytes: bytes, Available: avail}
	}
	return nil
}

// makeChecked is make([]T, n) for a kernel's working storage of n
// elements (what shape s, for the error, stands for), checked as
// NewTensor checks a tensor.
func makeChecked[T any](n int64, s xla.Shape) []T {
	var z T
	checkBytes(s, n, int64(unsafe.Sizeof(z)))
	return make([]T, n)
}

// catchAlloc turns the *AllocError panic of checkAlloc into *err (also
// when it comes through a parallel part, as a *workers.Panic).
func catchAlloc(err *error) {
	if r := recover(); r != nil {
		e := allocErrorOf(r)
		if e == nil {
			panic(r)
		}
		*err = e
	}
}

// canAllocate is checkAlloc as an error: nil when a tensor of shape s can
// be allocated.
func canAllocate(s xla.Shape) (err error) {
	defer catchAlloc(&err)
	checkAlloc(s)
	return nil
}

// allocErrorOf is the *AllocError a recovered value is or wraps, or nil.
func allocErrorOf(r any) *AllocError {
	switch v := r.(type) {
	case *AllocError:
		return v
	case *workers.Panic:
		return allocErrorOf(v.Value)
	}
	return nil
}

// availableMemory is memoryAvailable, replaced by tests.
var availableMemory = memoryAvailable

// memoryAvailable is the memory a new allocation may take: what the
// system has available (Linux's MemAvailable, within the cgroup's
// memory.max in a container) plus what the Go heap holds free. GOMEMLIMIT
// is a soft limit the runtime may pass, so it does not count. ok is false
// when it cannot be told.
func memoryAvailable() (avail int64, ok bool) {
	sys, ok := systemMemAvailable()
	if !ok {
		return 0, false
	}
	if c, ok := cgroupMemAvailable(); ok {
		sys = min(sys, c)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sys + int64(ms.HeapIdle-ms.HeapReleased), true
}

// cgroupMemAvailable is what the process's memory cgroup lets it still
// take, when the cgroup has a limit (cgroupMemAvailableAt on this
// system's files).
func cgroupMemAvailable() (int64, bool) {
	self, _ := os.ReadFile("/proc/self/cgroup")
	return cgroupMemAvailableAt("/sys/fs/cgroup", self)
}

// cgroupMemAvailableAt is the limit less the usage of the memory cgroup
// that self (the text of /proc/self/cgroup) names under the cgroup mount
// root, the usage without the page cache the kernel can drop
// (inactive_file): cgroup v2 (memory.max, memory.current), else v1
// (memory/memory.limit_in_bytes, memory.usage_in_bytes). ok is false when
// there is no limit or the files cannot be read.
func cgroupMemAvailableAt(root string, self []byte) (int64, bool) {
	read := func(path string) (int64, bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil // "max" (no limit) does not parse
	}
	// stat reads one counter of a memory.stat file (0 when absent).
	stat := func(path, key string) int64 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, key+" "); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n
			}
		}
		return 0
	}
	avail := func(limit, used, cache int64) (int64, bool) {
		if limit <= 0 || limit >= 1<<62 { // v1 writes a huge number for none
			return 0, false
		}
		return max(0, limit-max(0, used-cache)), true
	}
	// The cgroup's directory: the path its line names (v2: "0::/path",
	// v1: "N:memory:/path" or with other controllers beside memory), if
	// it is there, else the root's.
	v2, v1 := root, filepath.Join(root, "memory")
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			if d := filepath.Join(root, parts[2]); isFile(filepath.Join(d, "memory.max")) {
				v2 = d
			}
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			if d := filepath.Join(root, "memory", parts[2]); isFile(filepath.Join(d, "memory.limit_in_bytes")) {
				v1 = d
			}
		}
	}
	if limit, ok := read(filepath.Join(v2, "memory.max")); ok {
		if used, ok := read(filepath.Join(v2, "memory.current")); ok {
			return avail(limit, used, stat(filepath.Join(v2, "memory.stat"), "inactive_file"))
		}
		return 0, false
	}
	if limit, ok := read(filepath.Join(v1, "memory.limit_in_bytes")); ok {
		if used, ok := read(filepath.Join(v1, "memory.usage_in_bytes")); ok {
			return avail(limit, used, stat(filepath.Join(v1, "memory.stat"), "total_inactive_file"))
		}
	}
	return 0, false
}

// systemMemAvailable reads MemAvailable from /proc/meminfo.
func systemMemAvailable() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !found {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// maxDevices is the most devices the interpreter simulates (a client's
// device count, a program's replicas times partitions).
const maxDevices = 4096

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
