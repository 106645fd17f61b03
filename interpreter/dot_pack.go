package interpreter

import (
	"runtime"
	"sync/atomic"

	"github.com/halo-ml/halo/internal/gemm"
)

// Packed windows of the run's arguments.
//
// A block-sparse kernel lowered by pallas multiplies the same window of an
// argument (a block column of y) at many grid steps. When the product
// packs its right operand (gemm.Packs: a window of a wide matrix), the
// packed window is kept for the rest of the run, keyed by where it lies in
// which argument, and later products with that window skip the packing.
// A window multiplied only once costs no more than before: it is packed
// into memory freed by an earlier run of a program (gemm's pools) instead
// of the product's pooled buffer, and the run gives all its windows back
// when it ends.
// A run never writes into its arguments, so a kept window stays valid.
// The windows kept take at most as many bytes as the arguments themselves,
// and at most packCacheMax; past that the cache starts over.

// packCacheMax bounds the bytes of the windows one run keeps.
const packCacheMax = 256 << 20

type packKey struct {
	src            uintptr
	off, ldb, k, n int
	transB, f64    bool
}

// packed is a *gemm.Packed[float32] or [float64].
type packed interface{ Free() }

type packCache struct {
	args map[uintptr]bool // storage of the outermost call's arguments
	// argVals holds those arguments for the run: the windows are known by
	// where they lie, so an argument must not be collected (and its memory
	// given to a new value) before the run ends, even where the caller
	// holds it nowhere else and the program's last use of it is past.
	argVals []Value
	limit   int // their bytes
	m       map[packKey]packed
	bytes   int
	made    int // windows packed in this run (for tests)
}

// noteArgs records the arguments of the outermost call.
func (x *Exec) noteArgs(args []Value) {
	x.packs.argVals = args
	for _, v := range args {
		t, ok := v.(*Tensor)
		if !ok || t == nil {
			continue
		}
		p, n := storagePtr(t)
		if n == 0 {
			continue
		}
		if x.packs.args == nil {
			x.packs.args = map[uintptr]bool{}
		}
		x.packs.args[p] = true
		x.packs.limit = min(x.packs.limit+n, packCacheMax)
	}
}

// packedWindow returns the packed form of op(B) for a product whose right
// operand is a window (offset off, row stride ldb) of src, packing and
// keeping it when src is an argument of the run; nil when it is not, or
// when the product would not pack B.
func packedWindow[T laNum](x *Exec, src *Tensor, b []T, off int, transB bool, k, n, ldb int) any {
	if x == nil || len(x.packs.args) == 0 {
		return nil
	}
	p, _ := storagePtr(src)
	if !x.packs.args[p] {
		return nil
	}
	key := packKey{src: p, off: off, ldb: ldb, k: k, n: n, transB: transB}
	switch b := any(b).(type) {
	case []float32:
		return keepPacked(x, key, b)
	case []float64:
		key.f64 = true
		return keepPacked(x, key, b)
	}
	return nil
}

// keepPacked is packedWindow for a float element type: the kept window of
// key, else a new one, kept; nil for a window over the limit by itself.
func keepPacked[E float32 | float64](x *Exec, key packKey, b []E) any {
	if !gemm.Packs[E](key.transB, key.ldb) {
		return nil
	}
	c := &x.packs
	if pb, ok := c.m[key]; ok {
		return pb
	}
	size := gemm.PackedBytes[E](key.k, key.n)
	if size > c.limit {
		return nil
	}
	if c.bytes+size > c.limit {
		c.free()
	}
	pb := gemm.Pack(key.transB, key.k, key.n, b, key.ldb, runtime.GOMAXPROCS(0))
	c.made++
	if c.m == nil {
		c.m = map[packKey]packed{}
	}
	c.m[key] = pb
	c.bytes += size
	return pb
}

// free gives the memory of every kept window back and empties the cache.
func (c *packCache) free() {
	for _, pb := range c.m {
		pb.Free()
	}
	c.m, c.bytes = nil, 0
}

// done ends the run's use of the cache: free, and the arguments are no
// longer held.
func (c *packCache) done() {
	c.free()
	c.argVals = nil
}

// mulPacked is laGemm with op(B) packed by packedWindow.
func mulPacked[T laNum](transA bool, m int, a []T, lda int, pb any, c []T, ldc int, add bool, stop *atomic.Bool) {
	o := gemm.Options{Workers: runtime.GOMAXPROCS(0), Add: add, Stop: stop}
	switch pb := pb.(type) {
	case *gemm.Packed[float32]:
		gemm.MulPackedWith(transA, m, any(a).([]float32), lda, pb, any(c).([]float32), ldc, o)
	case *gemm.Packed[float64]:
		gemm.MulPackedWith(transA, m, any(a).([]float64), lda, pb, any(c).([]float64), ldc, o)
	}
}
