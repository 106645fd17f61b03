package gemm

import "unsafe"

// mr is the number of rows of C one kernel call computes.
const mr = 6

// nrOf is the number of columns of C one kernel call computes: one
// 64-byte row of packed B, 16 float32 or 8 float64.
func nrOf[T float32 | float64]() int {
	var z T
	if _, ok := any(z).(float32); ok {
		return 16
	}
	return 8
}

// kernelFunc computes the mr×nr product of the A rows at a (element (r, p)
// at a[r*rsA+p*csA]) and the B sliver b (element (p, j) at b[p*rsB+j]: nr
// contiguous elements per row, packed or in place) over kc ≥ 1 steps, and stores it into the mr×nr block at the
// start of c (row stride ldc), or adds it to that block when acc is set.
// Strides are in elements; the caller guarantees every element read or
// written lies inside the slices.
type kernelFunc[T float32 | float64] func(kc int, a []T, rsA, csA int, b []T, rsB int, c []T, ldc int, acc bool)

// The kernels Mul uses: the assembly ones where the processor has them
// (set by kernel_amd64.go), else kernelGo.
var (
	kernelF32 kernelFunc[float32] = kernelGo[float32]
	kernelF64 kernelFunc[float64] = kernelGo[float64]
	// asmKernels reports whether kernelF32 and kernelF64 are assembly.
	asmKernels bool
)

// kernelGo is the portable kernel: the same blocking as the assembly ones,
// with the accumulators in a local array.
func kernelGo[T float32 | float64](kc int, a []T, rsA, csA int, b []T, rsB int, c []T, ldc int, acc bool) {
	nr := nrOf[T]()
	var t [mr * 16]T
	for p := 0; p < kc; p++ {
		bp := b[p*rsB : p*rsB+nr]
		for r := 0; r < mr; r++ {
			av := a[r*rsA+p*csA]
			row := t[r*nr : r*nr+nr]
			for j, bv := range bp {
				row[j] += av * bv
			}
		}
	}
	for r := 0; r < mr; r++ {
		storeRow(c[r*ldc:r*ldc+nr], t[r*nr:r*nr+nr], acc)
	}
}

// storeRow copies src to dst, or adds it to dst when acc is set.
func storeRow[T float32 | float64](dst, src []T, acc bool) {
	if !acc {
		copy(dst, src)
		return
	}
	for j, v := range src {
		dst[j] += v
	}
}

// kernelOf returns the kernel Mul uses for T.
func kernelOf[T float32 | float64]() kernelFunc[T] {
	var k any
	var z T
	if _, ok := any(z).(float32); ok {
		k = kernelF32
	} else {
		k = kernelF64
	}
	return k.(kernelFunc[T])
}

// copyRows copies rows 64-byte rows, row r from src + r*stride to
// dst + r*64 (stride in bytes): packB's inner loop. The assembly one
// where the processor has AVX2 (kernel_amd64.go), else copyRowsGo.
var copyRows = copyRowsGo

// copyRowsFast is the assembly copyRows, or nil where there is none.
var copyRowsFast func(dst, src unsafe.Pointer, stride, rows int)

// copyRowsGo is copyRows in Go: eight word moves a row.
func copyRowsGo(dst, src unsafe.Pointer, stride, rows int) {
	// Each row's address from the start: a pointer stepped past the last
	// row would point outside B (invalid, and caught by -race's checkptr).
	for r := range rows {
		d := (*[8]uint64)(unsafe.Add(dst, r*64))
		s := (*[8]uint64)(unsafe.Add(src, r*stride))
		d[0], d[1], d[2], d[3] = s[0], s[1], s[2], s[3]
		d[4], d[5], d[6], d[7] = s[4], s[5], s[6], s[7]
	}
}
