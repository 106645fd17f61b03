package interpreter

import (
	"reflect"
	"unsafe"

	"github.com/halo-ml/halo/internal/pool"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Spare storage: the buffers of dead values, reused within a run.
//
// A loop over blocks, as pallas interpret mode emits, makes a few
// block-sized values at every step (a slice of an operand, a product, the
// block written back) and drops them a step later. Without reuse each
// step allocates new buffers for the garbage collector to clear and
// collect; with it the loop cycles through a few buffers that stay in
// cache.
//
// The run records the storage it allocated for the results of its own
// kernels (Exec.newTensor, Exec.adopt): only such storage is ever reused,
// never an argument of the run, a constant, or a custom call's result.
// When a value dies (opPlan.free) and its storage is the run's own, the
// storage becomes a spare unless a live value still refers to it: any slot
// of a running function's frame (a slice view in a slot refers to its
// source's storage), or an argument a running kernel handed to one of its
// regions (Exec.held). The next kernel that needs a result
// buffer of the same element storage and length takes the spare instead of
// allocating, and writes every element of it.
//
// Storage handed to an op that may keep it (a custom call, a transfer, a
// collective, an op whose kernel was registered from outside this package)
// stops being the run's own. Runs with several devices reuse
// nothing: their collectives pass values between goroutines.
//
// When a run ends, its spares go to process-wide pools (sparePools, one
// sync.Pool per storage type and length, emptied by the garbage
// collector, for at most pool.DefaultMax lengths), where the next runs
// find them: a program run many times
// writes its temporaries, and its large splat constants, into memory that
// is mapped and warm rather than into new pages.

const (
	// spareMinBytes: smaller buffers come from the allocator, which is
	// quicker for them than checking that nothing refers to them (a scan
	// of the frames).
	spareMinBytes = 64 << 10
	// sparesPerSize bounds the spares kept for one storage and length.
	sparesPerSize = 4
)

type spareKey struct {
	typ reflect.Type // the Data slice's type
	n   int
}

// spareState is an Exec's record of its own storage and its spares.
type spareState struct {
	// own holds the storage (by address) that this run allocated for
	// results of its kernels and that nothing outside the run refers to.
	own map[uintptr]struct{}
	// spares are dead buffers of own storage, by slice type and length.
	spares map[spareKey][]any
	// held are the argument lists of the regions running kernels have
	// handed values to (a while condition, a reduction body ...): those
	// values stay alive after the region, whatever it does with them.
	held [][]Value
	// off disables reuse (a run with several devices).
	off bool
}

// mayKeepOperands are the ops whose kernels may keep a reference to an
// operand after they return, or return storage someone else keeps.
var mayKeepOperands = map[string]bool{
	"stablehlo.custom_call": true, "stablehlo.outfeed": true, "stablehlo.infeed": true,
	"stablehlo.send": true, "stablehlo.recv": true,
	"stablehlo.all_reduce": true, "stablehlo.all_gather": true, "stablehlo.all_to_all": true,
	"stablehlo.reduce_scatter": true, "stablehlo.collective_permute": true, "stablehlo.collective_broadcast": true,
	"stablehlo.cross-replica-sum": true, "stablehlo.collective_reduce": true,
}

// mayKeepsOperands reports whether the kernel of the op name may keep
// its operands: a transfer, a collective or a custom call, or a kernel
// registered from outside this package.
func mayKeepsOperands(name string) bool {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	return mayKeepOperands[name] || externalKernels[name]
}

// storagePtr returns the address of a tensor's first element and the
// storage's size in bytes (0, 0 for an empty or unknown one).
func storagePtr(t *Tensor) (uintptr, int) {
	switch d := t.Data.(type) {
	case []float32:
		if len(d) > 0 {
			return uintptr(unsafe.Pointer(unsafe.SliceData(d))), 4 * len(d)
		}
	case []float64:
		if len(d) > 0 {
			return uintptr(unsafe.Pointer(unsafe.SliceData(d))), 8 * len(d)
		}
	case []int32:
		if len(d) > 0 {
			return uintptr(unsafe.Pointer(unsafe.SliceData(d))), 4 * len(d)
		}
	case []bool, []int8, []int16, []int64, []uint8, []uint16, []uint32, []uint64, []complex64, []complex128:
		v := reflect.ValueOf(d)
		if v.Len() > 0 {
			return v.Pointer(), v.Len() * int(v.Type().Elem().Size())
		}
	}
	return 0, 0
}

// adopt records t's storage as the run's own: t is a kernel's result in
// storage it just allocated (or took from the spares).
func (x *Exec) adopt(t *Tensor) {
	if x == nil || x.sp.off {
		return
	}
	p, n := storagePtr(t)
	if n < spareMinBytes {
		return
	}
	if x.sp.own == nil {
		x.sp.own = map[uintptr]struct{}{}
	}
	x.sp.own[p] = struct{}{}
}

// disown forgets the storage of the tensors in vals (an op may keep them,
// or made them elsewhere).
func (x *Exec) disown(vals []Value) {
	if len(x.sp.own) == 0 {
		return
	}
	for _, v := range vals {
		switch v := v.(type) {
		case *Tensor:
			if v != nil {
				p, _ := storagePtr(v)
				delete(x.sp.own, p)
			}
		case Tuple:
			x.disown(v)
		}
	}
}

// released is called with a value that just died: its storage becomes a
// spare when it is the run's own and no live value refers to it. A slice
// view (dot_view.go) refers to its source's storage: the source may have
// died before it, so the view's death may free that storage.
func (x *Exec) released(v Value) {
	if sv, ok := v.(*sliceView); ok && sv != nil {
		v = sv.src
	}
	t, ok := v.(*Tensor)
	if !ok || t == nil || len(x.sp.own) == 0 {
		return
	}
	p, n := storagePtr(t)
	if n < spareMinBytes {
		return
	}
	if _, mine := x.sp.own[p]; !mine || x.referenced(p) {
		return
	}
	delete(x.sp.own, p)
	k := spareKey{reflect.TypeOf(t.Data), reflect.ValueOf(t.Data).Len()}
	if x.sp.spares == nil {
		x.sp.spares = map[spareKey][]any{}
	}
	if len(x.sp.spares[k]) < sparesPerSize {
		x.sp.spares[k] = append(x.sp.spares[k], t.Data)
	}
}

// soleReference reports whether t is the only live value of the run with
// its storage.
func (x *Exec) soleReference(t *Tensor) bool {
	p, _ := storagePtr(t)
	return p != 0 && x.references(p, 2) == 1
}

// references counts the live values of the run (frame slots and the
// arguments running kernels handed to regions; a slice view counts as its
// source) whose storage is p, stopping at limit.
func (x *Exec) references(p uintptr, limit int) int {
	n := 0
	for _, fr := range x.frames {
		if n = valuesUsing(fr.vals, p, n, limit); n >= limit {
			return n
		}
	}
	for _, vals := range x.sp.held {
		if n = valuesUsing(vals, p, n, limit); n >= limit {
			return n
		}
	}
	return n
}

// valuesUsing adds to n the values of vals with storage p, up to limit.
func valuesUsing(vals []Value, p uintptr, n, limit int) int {
	for _, v := range vals {
		if n >= limit {
			return n
		}
		if sv, ok := v.(*sliceView); ok && sv != nil {
			v = sv.src
		}
		switch v := v.(type) {
		case *Tensor:
			if v != nil {
				if q, _ := storagePtr(v); q == p {
					n++
				}
			}
		case Tuple:
			n = valuesUsing(v, p, n, limit)
		}
	}
	return n
}

// referenced reports whether a live value of the run has storage p.
func (x *Exec) referenced(p uintptr) bool { return x.references(p, 1) > 0 }

// takeSpare returns a spare slice of type typ and length n, or nil.
func (x *Exec) takeSpare(typ reflect.Type, n int) any {
	if x == nil || x.sp.off || n*int(typ.Elem().Size()) < spareMinBytes {
		return nil
	}
	k := spareKey{typ, n}
	s := x.sp.spares[k]
	if len(s) == 0 {
		return pooledSpare(k)
	}
	d := s[len(s)-1]
	s[len(s)-1] = nil
	x.sp.spares[k] = s[:len(s)-1]
	return d
}

// spareSlice returns a []T of length n for a result the caller writes in
// full: a spare of x when there is one, else a new (zeroed) slice. The
// caller adopts the tensor it makes of it.
func spareSlice[T any](x *Exec, n int) []T {
	if d, ok := x.takeSpare(reflect.TypeFor[[]T](), n).([]T); ok {
		return d
	}
	var z T
	var d []T
	x.allocating(func() {
		checkBytes(xla.MakeShape(xla.Invalid, int64(n)), int64(n), int64(unsafe.Sizeof(z)))
		d = make([]T, n)
	})
	return d
}

// allocating runs alloc, which allocates and may panic with an
// *AllocError (checkAlloc): when it does and x holds spares, x drops
// them, so that the collection checkBytes runs before refusing can take
// them back, and alloc runs once more.
func (x *Exec) allocating(alloc func()) {
	if x == nil || len(x.sp.spares) == 0 {
		alloc()
		return
	}
	refused := func() (refused bool) {
		defer func() {
			if r := recover(); r != nil {
				if allocErrorOf(r) == nil {
					panic(r)
				}
				refused = true
			}
		}()
		alloc()
		return false
	}()
	if refused {
		x.sp.spares = nil
		alloc()
	}
}

// newTensor is NewTensor for a result the kernel writes in full: its
// storage may be a spare of x (x may be nil), so its contents are
// arbitrary until written. The storage is the run's own.
func (x *Exec) newTensor(s xla.Shape) *Tensor {
	t := x.spareTensor(s)
	if t == nil {
		x.allocating(func() { t = NewTensor(s) })
	}
	x.adopt(t)
	return t
}

// newZeroTensor is NewTensor for a result that must start as zeros: a
// cleared spare of x when there is one.
func (x *Exec) newZeroTensor(s xla.Shape) *Tensor {
	t := x.spareTensor(s)
	if t != nil {
		d := reflect.ValueOf(t.Data)
		n := int64(d.Len())
		shpSplitFrom(n, n, shpCopyParMin, func(lo, hi int64) { d.Slice(int(lo), int(hi)).Clear() })
	} else {
		x.allocating(func() { t = NewTensor(s) })
	}
	x.adopt(t)
	return t
}

// spareTensor returns a tensor of shape s in a spare of x (contents
// arbitrary), or nil when there is none.
func (x *Exec) spareTensor(s xla.Shape) *Tensor {
	if x == nil || x.sp.off {
		return nil
	}
	typ := storageType(StorageOf(s.DType))
	if typ == nil {
		return nil
	}
	if d := x.takeSpare(typ, int(s.Size())); d != nil {
		return &Tensor{Shape: s.Clone(), Data: d}
	}
	return nil
}

// spareSized reports whether v's storage may reach spareMinBytes (so that
// a run may own it): not for a value of a static type smaller than that.
func spareSized(v *stablehlo.Value) bool {
	tt, ok := v.Type.(stablehlo.TensorType)
	if !ok {
		return false
	}
	n := tt.Size()
	typ := storageType(StorageOf(tt.DType))
	return n < 0 || typ == nil || n*int64(typ.Elem().Size()) >= spareMinBytes
}

// storageType is the Go slice type of a storage kind (nil if none).
func storageType(st Storage) reflect.Type {
	switch st {
	case StorageBool:
		return reflect.TypeFor[[]bool]()
	case StorageI8:
		return reflect.TypeFor[[]int8]()
	case StorageI16:
		return reflect.TypeFor[[]int16]()
	case StorageI32:
		return reflect.TypeFor[[]int32]()
	case StorageI64:
		return reflect.TypeFor[[]int64]()
	case StorageU8:
		return reflect.TypeFor[[]uint8]()
	case StorageU16:
		return reflect.TypeFor[[]uint16]()
	case StorageU32:
		return reflect.TypeFor[[]uint32]()
	case StorageU64:
		return reflect.TypeFor[[]uint64]()
	case StorageF32:
		return reflect.TypeFor[[]float32]()
	case StorageF64:
		return reflect.TypeFor[[]float64]()
	case StorageC64:
		return reflect.TypeFor[[]complex64]()
	case StorageC128:
		return reflect.TypeFor[[]complex128]()
	}
	return nil
}

// sparePools hold the spares a finished run left (poolSpares), one
// sync.Pool per storage type and length (the slices themselves), for the
// runs after it: a program run again and again then writes its
// temporaries into memory that is mapped and warm instead of new pages,
// which the operating system maps one fault at a time. The least recently
// used lengths go when there are too many.
var sparePools pool.Keyed[spareKey]

// pooledSpare takes a buffer of key k from the pools, or returns nil.
func pooledSpare(k spareKey) any { return sparePools.Get(k) }

// poolSpares gives the run's spares to the pools when the run ends: they
// are dead, and no value of the run or of its caller refers to them.
func (x *Exec) poolSpares() {
	for k, s := range x.sp.spares {
		for _, d := range s {
			sparePools.Put(k, d)
		}
	}
	x.sp.spares = nil
	// The run is over: what it made is the caller's, who may hand it to
	// another Call of this Exec as an argument, never to be written.
	x.sp.own = nil
}
