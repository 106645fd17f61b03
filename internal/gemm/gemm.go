// Package gemm multiplies dense float32 and float64 matrices, C = op(A)·op(B),
// for the interpreter's dot_general and convolution.
//
// It reads A in place (any row and column stride, so a transposed A costs
// nothing) and B in 64-byte-wide column slivers: in place when B's rows
// are close together, else (a transposed B, rows 16 slivers or more apart,
// a last sliver narrower than 64 bytes) packed into that shape first. It
// runs a 6-row register-blocked kernel: AVX2 and FMA assembly on amd64
// processors that have them (which also pack B's rows with 32-byte moves),
// plain Go elsewhere (or with the purego build tag). Work is split across
// goroutines by blocks of C.
//
// Every product is computed: unlike gonum's BLAS, no zero element of A is
// skipped, so 0×Inf and 0×NaN give NaN as IEEE arithmetic says, and a
// product takes the same time whatever its values. The assembly kernels
// fuse each multiply-add (one rounding), as XLA's CPU backend does.
package gemm

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/halo-ml/halo/internal/pool"
	"github.com/halo-ml/halo/internal/workers"
)

const (
	// kcBlock is how many steps of K one kernel call takes before its
	// block of C is written (and read back for the next steps).
	kcBlock = 256
	// mcTiles is how many 6-row tiles of A a sliver of packed B meets
	// while it stays in the first-level cache.
	mcTiles = 16
	// ncBytes is the width in bytes of the B panel packed at a time.
	ncBytes = 4096
	// packStride is the row stride of a k×n B, in sliver widths, from
	// which B is packed rather than read in place: rows that far apart
	// each sit on their own memory page and in few cache sets, so the
	// kernel's walk down a sliver misses the TLB and the cache at every
	// step, while packing reads each row once, front to back.
	packStride = 16
	// minWork is how many multiply-adds make one more goroutine worth
	// starting.
	minWork = 1 << 18
)

// Mul sets C = op(A)·op(B), where op(A) is m×k and op(B) is k×n. A is stored
// row-major m×k with row stride lda, or k×m when transA is set; B is k×n
// with row stride ldb, or n×k when transB is set; C is m×n with row stride
// ldc. Elements of C outside its m×n block are not touched. Mul uses at most
// workers goroutines (the caller's among them), fewer for small products.
// It panics, naming the matrix, when a slice is too short for its shape or
// a stride is smaller than its row, as a BLAS routine does.
func Mul[T float32 | float64](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, workers int) {
	mul(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, workers, nil, false, nil)
}

// MulAdd is Mul that adds the product to C: C += op(A)·op(B). When k is
// at most KBlock, each element of C is C + (its product as Mul computes
// it), rounded once: the same numbers as Mul into a temporary and an add
// (but for which payload the sum of two NaNs keeps).
func MulAdd[T float32 | float64](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, workers int) {
	mul(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, workers, nil, true, nil)
}

// Options are the settings of MulWith and MulPackedWith.
type Options struct {
	// Workers is how many goroutines the product may use at most (the
	// caller's among them).
	Workers int
	// Add adds the product to C, as MulAdd.
	Add bool
	// Stop, when set by another goroutine, ends the product early (some
	// milliseconds later), leaving C partly written.
	Stop *atomic.Bool
}

// MulWith is Mul (or MulAdd) with options.
func MulWith[T float32 | float64](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, o Options) {
	mul(transA, transB, m, n, k, a, lda, b, ldb, c, ldc, o.Workers, nil, o.Add, o.Stop)
}

// MulPackedWith is MulPacked (or MulPackedAdd) with options.
func MulPackedWith[T float32 | float64](transA bool, m int, a []T, lda int, pb *Packed[T], c []T, ldc int, o Options) {
	if pb.data == nil && pb.k > 0 && pb.n > 0 {
		panic("gemm: MulPackedWith with a freed Packed operand")
	}
	mul(transA, false, m, pb.n, pb.k, a, lda, nil, 0, c, ldc, o.Workers, pb, o.Add, o.Stop)
}

// KBlock is how many steps of K Mul sums in registers before it writes C;
// MulAdd over more steps adds partial sums to C, one block at a time.
const KBlock = kcBlock

// Packed is a B operand packed once, in the layout Mul's kernels read, for
// several products with the same B (Pack, MulPacked).
type Packed[T float32 | float64] struct {
	k, n int
	data []T // panel jc at jc*k: its slivers, each k rows of nr
}

// Bytes is the memory the packed operand holds.
func (pb *Packed[T]) Bytes() int {
	var z T
	return len(pb.data) * int(unsafe.Sizeof(z))
}

// Packs reports whether Mul packs op(B) (transposed, or rows 16 slivers
// or more apart) before multiplying: then a B used in several products
// is worth packing once with Pack.
func Packs[T float32 | float64](transB bool, ldb int) bool {
	return transB || ldb >= packStride*nrOf[T]()
}

// PackedBytes is the memory Pack takes for a k×n op(B).
func PackedBytes[T float32 | float64](k, n int) int {
	var z T
	return packedLen[T](k, n) * int(unsafe.Sizeof(z))
}

// packedLen is the length of a k×n op(B) packed: whole slivers of k rows.
func packedLen[T float32 | float64](k, n int) int {
	nr := nrOf[T]()
	return (n + nr - 1) / nr * nr * k
}

// Pack packs op(B), k×n (stored as for Mul), for MulPacked, using at most
// workers goroutines. It panics as Mul does on a slice too short.
func Pack[T float32 | float64](transB bool, k, n int, b []T, ldb int, workers int) *Packed[T] {
	if k < 0 || n < 0 {
		panic(fmt.Sprintf("gemm: negative dimension in %d×%d", k, n))
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	checkMatrix("B", rb, cb, ldb, len(b))
	nr := nrOf[T]()
	pb := &Packed[T]{k: k, n: n, data: packStorage[T](packedLen[T](k, n))}
	var z T
	ncMax := ncBytes / int(unsafe.Sizeof(z))
	for jc := 0; jc < n && k > 0; jc += ncMax { // k = 0: nothing to pack
		slivers := (min(ncMax, n-jc) + nr - 1) / nr
		dst := pb.data[jc*k : jc*k+slivers*nr*k]
		w := max(1, min(workers, slivers))
		parallel(w, func(i int) {
			s0, s1 := share(slivers, w, i)
			packB(transB, b, ldb, k, n, jc, nr, s0, s1, dst)
		})
	}
	return pb
}

// Free gives the packed operand's memory back for later Packs of the
// same size; pb must not be used after.
func (pb *Packed[T]) Free() {
	if pb.data == nil {
		return
	}
	d := pb.data
	pb.data = nil
	packPools.Put(packPoolKey{unsafe.Sizeof(d[0]), len(d)}, &d)
}

// packPools hold the memory of freed Packed operands, a pool for each
// element size and length (of the most recently used lengths): a program
// that packs the same windows at every run packs them into memory already
// mapped and in cache.
var packPools pool.Keyed[packPoolKey] // of *[]T

type packPoolKey struct {
	elem uintptr
	n    int
}

// packStorage returns a slice of length n for Pack, freed memory when
// there is some (Pack writes every element).
func packStorage[T float32 | float64](n int) []T {
	var z T
	if v, ok := packPools.Get(packPoolKey{unsafe.Sizeof(z), n}).(*[]T); ok {
		return *v
	}
	return make([]T, n)
}

// MulPacked is Mul with a B packed by Pack: C = op(A)·B, op(A) m×k. It
// panics when pb was freed.
func MulPacked[T float32 | float64](transA bool, m int, a []T, lda int, pb *Packed[T], c []T, ldc int, workers int) {
	if pb.data == nil && pb.k > 0 && pb.n > 0 {
		panic("gemm: MulPacked with a freed Packed operand")
	}
	mul(transA, false, m, pb.n, pb.k, a, lda, nil, 0, c, ldc, workers, pb, false, nil)
}

// MulPackedAdd is MulPacked that adds the product to C, as MulAdd does.
func MulPackedAdd[T float32 | float64](transA bool, m int, a []T, lda int, pb *Packed[T], c []T, ldc int, workers int) {
	if pb.data == nil && pb.k > 0 && pb.n > 0 {
		panic("gemm: MulPackedAdd with a freed Packed operand")
	}
	mul(transA, false, m, pb.n, pb.k, a, lda, nil, 0, c, ldc, workers, pb, true, nil)
}

// mul is Mul, with B packed already when pre is not nil, adding to C
// when add is set.
func mul[T float32 | float64](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, workers int, pre *Packed[T], add bool, stop *atomic.Bool) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension in %d×%d×%d", m, n, k))
	}
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	checkMatrix("A", ra, ca, lda, len(a))
	if pre == nil {
		checkMatrix("B", rb, cb, ldb, len(b))
	}
	checkMatrix("C", m, n, ldc, len(c))
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if add {
			return
		}
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	work := int64(m) * int64(n) * int64(k)
	workers = int(min(int64(max(workers, 1)), max(work/minWork, 1)))
	nr := nrOf[T]()
	if pre == nil && n < nr && Packs[T](transB, ldb) {
		// Packing pads B to whole slivers of nr columns: nr/n times its
		// size for a B narrower than one sliver (a vector). Copied k×n
		// with rows close together instead, it is read in place.
		dense := getBuffer[T](k * n)
		defer putBuffer(dense)
		for p := 0; p < k; p++ {
			for j := 0; j < n; j++ {
				if transB {
					(*dense)[p*n+j] = b[j*ldb+p]
				} else {
					(*dense)[p*n+j] = b[p*ldb+j]
				}
			}
		}
		b, ldb, transB = *dense, n, false
	}
	var z T
	ncMax := ncBytes / int(unsafe.Sizeof(z))
	rsA, csA := lda, 1
	if transA {
		rsA, csA = 1, lda
	}
	p := product[T]{
		m: m, n: n, k: k,
		a: a, rsA: rsA, csA: csA,
		b: b, ldb: ldb, inPlace: pre == nil && !Packs[T](transB, ldb),
		c: c, ldc: ldc,
		nr:   nr,
		kern: kernelOf[T](),
		add:  add,
		stop: stop,
	}
	// A B stored k×n with rows close together is read in place, but for a
	// last sliver narrower than nr; any other B is packed a panel at a
	// time.
	bufLen := ((min(ncMax, n) + nr - 1) / nr) * nr * k
	if pre != nil {
		bufLen = 0
	}
	if p.inPlace {
		bufLen = 0 // a narrow last sliver is packed kcBlock rows at a time (blockOf)
	}
	buf := getBuffer[T](bufLen)
	defer putBuffer(buf)
	rowTiles := (m + mr - 1) / mr
	for jc := 0; jc < n; jc += ncMax {
		if p.stopped() {
			return
		}
		nc := min(ncMax, n-jc)
		slivers := (nc + nr - 1) / nr
		p.jc = jc
		switch {
		case pre != nil:
			p.packed = pre.data[jc*k : jc*k+slivers*nr*k]
		case !p.inPlace:
			// Pack this panel of B first, split across the workers.
			p.packed = (*buf)[:slivers*nr*k]
			w := min(workers, slivers)
			parallel(w, func(i int) {
				s0, s1 := share(slivers, w, i)
				packB(transB, b, ldb, k, n, jc, nr, s0, s1, p.packed)
			})
		}
		rowParts := min(workers, rowTiles)
		colParts := min(max(workers/rowParts, 1), slivers)
		if colParts == 1 && rowTiles%rowParts != 0 {
			// Whole row tiles would leave one part a tile more than
			// another (22 and 21 of a 256-row block's 43: 2.3% over the
			// mean); cutting the (tile, sliver) units instead gives a
			// boundary tile's slivers to two parts.
			n := rowTiles * slivers
			parallel(rowParts, func(i int) {
				u0, u1 := share(n, rowParts, i)
				p.blockUnits(u0, u1, slivers)
			})
			continue
		}
		parallel(rowParts*colParts, func(i int) {
			t0, t1 := share(rowTiles, rowParts, i/colParts)
			s0, s1 := share(slivers, colParts, i%colParts)
			p.block(t0, t1, s0, s1)
		})
	}
}

// checkMatrix panics unless a rows×cols matrix with row stride ld fits in
// a slice of length n.
func checkMatrix(name string, rows, cols, ld, n int) {
	if rows == 0 || cols == 0 {
		return
	}
	if ld < cols {
		panic(fmt.Sprintf("gemm: %s is %d×%d but its row stride is %d", name, rows, cols, ld))
	}
	if rows > 1 && ld > (math.MaxInt-cols)/(rows-1) {
		// (rows-1)*ld + cols would wrap around: no slice is that long.
		panic(fmt.Sprintf("gemm: %s is %d×%d with row stride %d, which needs more elements than an int counts", name, rows, cols, ld))
	}
	if need := (rows-1)*ld + cols; n < need {
		panic(fmt.Sprintf("gemm: %s is %d×%d with row stride %d, which needs %d elements; the slice has %d", name, rows, cols, ld, need, n))
	}
}

// product is one call of Mul, with B's current panel packed.
type product[T float32 | float64] struct {
	m, n, k  int
	a        []T
	rsA, csA int // A's element (i, p) is a[i*rsA+p*csA]
	b        []T
	ldb      int
	inPlace  bool // B is read where it is (but for a narrow last sliver)
	c        []T
	ldc      int
	nr       int
	kern     kernelFunc[T]
	jc       int // first column of C of the current panel
	// packed holds the panel's slivers (sliver s: B's columns jc+s*nr..,
	// as k rows of nr) or, when inPlace, only the narrow last one.
	packed []T
	add    bool // C += A·B rather than C = A·B
	stop   *atomic.Bool
}

// stopped reports whether the caller asked the product to stop (checked
// between groups of row tiles: some milliseconds of work apart).
func (p *product[T]) stopped() bool { return p.stop != nil && p.stop.Load() }

// sliver returns rows [pc, pc+kc) of sliver s of the current panel (B's
// columns jc+s*nr..), and their row stride.
func (p *product[T]) sliver(s, pc, kc int) ([]T, int) {
	nr := p.nr
	j := p.jc + s*nr
	switch {
	case !p.inPlace:
		return p.packed[s*p.k*nr+pc*nr : s*p.k*nr+(pc+kc)*nr], nr
	case j+nr > p.n:
		panic("gemm: the narrow sliver is packed by blockOf")
	}
	return p.b[pc*p.ldb+j : (pc+kc-1)*p.ldb+j+nr], p.ldb
}

// blockUnits computes units [u0, u1) of the panel, unit u being row tile
// u/slivers and sliver u%slivers, in one pass over K (a boundary tile's
// slivers done in a pass of their own would read their part of B again).
func (p *product[T]) blockUnits(u0, u1, slivers int) {
	if u0 >= u1 {
		return
	}
	p.blockOf(u0/slivers, (u1+slivers-1)/slivers, 0, slivers, units{u0, u1, slivers})
}

// units restricts block to the (tile, sliver) units [lo, hi), unit u
// being tile u/n and sliver u%n; the zero value restricts nothing.
type units struct{ lo, hi, n int }

func (u units) skip(t, s int) bool {
	if u.n == 0 {
		return false
	}
	i := t*u.n + s
	return i < u.lo || i >= u.hi
}

// block computes C's rows of tiles [t0, t1) (tile t is rows t*mr..) and
// columns of slivers [s0, s1) of the packed panel.
func (p *product[T]) block(t0, t1, s0, s1 int) { p.blockOf(t0, t1, s0, s1, units{}) }

// blockOf is block, computing only the units of only.
func (p *product[T]) blockOf(t0, t1, s0, s1 int, only units) {
	if t0 >= t1 || s0 >= s1 {
		return
	}
	nr := p.nr
	lastTile := (p.m + mr - 1) / mr
	edgeRows := t1 == lastTile && p.m%mr != 0
	// tileC takes a kernel's block at C's right and bottom edges; edgeA
	// the last tile's rows of A when it has fewer than mr.
	tileC := make([]T, mr*nr)
	var edgeA []T
	if edgeRows {
		edgeA = make([]T, mr*min(kcBlock, p.k))
	}
	// B read in place with a last sliver narrower than nr: that sliver is
	// packed (zero-padded) kcBlock rows at a time, as the kernel reads nr
	// columns (for a matrix-vector product, all of B padded at once took
	// nr times B's memory).
	narrow := -1
	var narrowB []T
	if last := s1 - 1; p.inPlace && p.jc+s1*nr > p.n {
		narrow, narrowB = last, make([]T, nr*min(kcBlock, p.k))
	}
	for pc := 0; pc < p.k; pc += kcBlock {
		kc := min(kcBlock, p.k-pc)
		acc := pc > 0 || p.add
		if narrow >= 0 {
			packB(false, p.b[pc*p.ldb:], p.ldb, kc, p.n, p.jc+narrow*nr, nr, 0, 1, narrowB)
		}
		if edgeRows {
			// The last tile has fewer than mr rows: copy them, and zeros,
			// so that the kernel reads only what is there.
			i0 := (t1 - 1) * mr
			clear(edgeA[:mr*kc])
			for r := 0; i0+r < p.m; r++ {
				for q := 0; q < kc; q++ {
					edgeA[r*kc+q] = p.a[(i0+r)*p.rsA+(pc+q)*p.csA]
				}
			}
		}
		for tb := t0; tb < t1; tb += mcTiles {
			if p.stopped() {
				return
			}
			te := min(tb+mcTiles, t1)
			for s := s0; s < s1; s++ {
				var bs []T
				var rsB int
				if s == narrow {
					bs, rsB = narrowB[:kc*nr], nr
				} else {
					bs, rsB = p.sliver(s, pc, kc)
				}
				j := p.jc + s*nr
				nv := min(nr, p.n-j)
				for t := tb; t < te; t++ {
					if only.skip(t, s) {
						continue
					}
					i := t * mr
					mv := min(mr, p.m-i)
					as, rs, cs := p.a[i*p.rsA+pc*p.csA:], p.rsA, p.csA
					if mv < mr {
						as, rs, cs = edgeA, kc, 1
					}
					if mv == mr && nv == nr {
						p.kern(kc, as, rs, cs, bs, rsB, p.c[i*p.ldc+j:], p.ldc, acc)
						continue
					}
					p.kern(kc, as, rs, cs, bs, rsB, tileC, nr, false)
					for r := 0; r < mv; r++ {
						storeRow(p.c[(i+r)*p.ldc+j:(i+r)*p.ldc+j+nv], tileC[r*nr:r*nr+nv], acc)
					}
				}
			}
		}
	}
}

// packB copies slivers [s0, s1) of the panel of op(B) starting at column
// jc into dst: sliver s holds columns jc+s*nr.. as k rows of nr elements,
// zero past column n.
func packB[T float32 | float64](transB bool, b []T, ldb, k, n, jc, nr, s0, s1 int, dst []T) {
	if s0 >= s1 {
		return
	}
	// The last sliver may stop short of nr columns.
	full := s1
	if jc+s1*nr > n {
		full = s1 - 1
	}
	if !transB {
		// Rows in chunks: the chunk of B stays in cache while each sliver
		// gets a contiguous run of rows.
		const chunk = 16
		var z T
		stride := ldb * int(unsafe.Sizeof(z)) // in bytes, for copyRows
		for q0 := 0; q0 < k; q0 += chunk {
			q1 := min(q0+chunk, k)
			for s := s0; s < full; s++ {
				j0 := jc + s*nr
				// The chunk's rows of the sliver, bounds checked once.
				_, _ = dst[s*k*nr+(q1-1)*nr+nr-1], b[(q1-1)*ldb+j0+nr-1]
				copyRows(unsafe.Pointer(&dst[s*k*nr+q0*nr]), unsafe.Pointer(&b[q0*ldb+j0]), stride, q1-q0)
			}
			if full < s1 {
				j0 := jc + full*nr
				for q := q0; q < q1; q++ {
					row := dst[full*k*nr+q*nr : full*k*nr+q*nr+nr]
					nv := copy(row, b[q*ldb+j0:q*ldb+n])
					clear(row[nv:])
				}
			}
		}
		return
	}
	for s := s0; s < s1; s++ {
		j0 := jc + s*nr
		nv := min(nr, n-j0)
		d := dst[s*k*nr : (s+1)*k*nr]
		for j := 0; j < nv; j++ {
			col := b[(j0+j)*ldb : (j0+j)*ldb+k]
			for q, v := range col {
				d[q*nr+j] = v
			}
		}
		if nv < nr {
			for q := 0; q < k; q++ {
				clear(d[q*nr+nv : q*nr+nr])
			}
		}
	}
}

// share returns part i of [0, n) cut into parts nearly equal ranges.
func share(n, parts, i int) (lo, hi int) {
	return n * i / parts, n * (i + 1) / parts
}

// Packed panels are reused across calls, one pool per element type.
var bufferPools [2]sync.Pool

func poolOf[T float32 | float64]() *sync.Pool {
	var z T
	if _, ok := any(z).(float32); ok {
		return &bufferPools[0]
	}
	return &bufferPools[1]
}

// getBuffer returns a pooled slice of length n.
func getBuffer[T float32 | float64](n int) *[]T {
	if v, ok := poolOf[T]().Get().(*[]T); ok && cap(*v) >= n {
		*v = (*v)[:n]
		return v
	}
	s := make([]T, n)
	return &s
}

// putBuffer gives a slice from getBuffer back.
func putBuffer[T float32 | float64](b *[]T) {
	poolOf[T]().Put(b)
}

// parallel runs fn(0), ..., fn(n-1) in parallel (workers.Run: fn(0) on the
// caller's goroutine, the rest on goroutines already running).
func parallel(n int, fn func(i int)) { workers.Run(n, fn) }
