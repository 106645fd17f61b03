package interpreter

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

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

func (e *AllocError) Error() string {
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
const checkAllocMin = 1 << 30

// storageBytes is the size of one element of storage st.
func storageBytes(st Storage) int64 {
	switch st {
	case StorageBool, StorageI8, StorageU8:
		return 1
	case StorageI16, StorageU16:
		return 2
	case StorageI32, StorageU32, StorageF32:
		return 4
	case StorageI64, StorageU64, StorageF64, StorageC64:
		return 8
	case StorageC128:
		return 16
	}
	return 0
}

// checkAlloc panics with an *AllocError when a tensor of shape s cannot be
// allocated (see catchAlloc).
func checkAlloc(s xla.Shape) {
	n := int64(1)
	for _, d := range s.Dims {
		if d < 0 || (d > 0 && n > math.MaxInt64/d) {
			panic(&AllocError{Shape: s.Clone(), Bytes: -1})
		}
		n *= d
	}
	w := storageBytes(StorageOf(s.DType))
	if w > 0 && n > math.MaxInt64/w {
		panic(&AllocError{Shape: s.Clone(), Bytes: -1})
	}
	if bytes := n * w; bytes >= checkAllocMin {
		if avail, ok := memoryAvailable(); ok && bytes > avail {
			panic(&AllocError{Shape: s.Clone(), Bytes: bytes, Available: avail})
		}
	}
}

// catchAlloc turns the *AllocError panic of checkAlloc into *err.
func catchAlloc(err *error) {
	if r := recover(); r != nil {
		e, ok := r.(*AllocError)
		if !ok {
			panic(r)
		}
		*err = e
	}
}

// memoryAvailable is the memory a new allocation may take: what the
// system has available (Linux's MemAvailable) plus what the Go heap holds
// free, within the process's memory limit (GOMEMLIMIT). ok is false when
// it cannot be told.
func memoryAvailable() (avail int64, ok bool) {
	sys, ok := systemMemAvailable()
	if !ok {
		return 0, false
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	avail = sys + int64(ms.HeapIdle-ms.HeapReleased)
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 {
		avail = min(avail, max(0, limit-int64(ms.Sys-ms.HeapReleased)))
	}
	return avail, true
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
