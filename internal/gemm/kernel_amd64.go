//go:build amd64 && !purego

package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:generate go run gen_kernels.go

// kernelF32AVX2 is kernelGo for float32 with AVX2 and FMA: it computes the
// 6×16 product of the A rows at a (element (r, p) at a[r*rsA+p*csA]) and
// the B sliver b (element (p, j) at b[p*rsB+j]) over kc ≥ 1 steps,
// and stores it into the 6×16 block of c (row stride ldc), or adds it to
// that block when acc is not 0. Strides are in elements.
//
//go:noescape
func kernelF32AVX2(kc int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, acc int)

// kernelF64AVX2 is kernelF32AVX2 for float64 with a 6×8 block.
//
//go:noescape
func kernelF64AVX2(kc int, a *float64, rsA, csA int, b *float64, rsB int, c *float64, ldc int, acc int)

// copyRows64 copies rows 64-byte rows, row r from src + r*stride to
// dst + r*64 (stride in bytes), with AVX moves.
//
//go:noescape
func copyRows64(dst, src unsafe.Pointer, stride, rows int)

// hasAVX2 reports whether this processor (and its operating system) runs
// the assembly kernels.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAVX2 {
		asmKernels = true
		copyRows, copyRowsFast = copyRows64, copyRows64
		kernelF32 = func(kc int, a []float32, rsA, csA int, b []float32, rsB int, c []float32, ldc int, acc bool) {
			kernelF32AVX2(kc, &a[0], rsA, csA, &b[0], rsB, &c[0], ldc, boolInt(acc))
		}
		kernelF64 = func(kc int, a []float64, rsA, csA int, b []float64, rsB int, c []float64, ldc int, acc bool) {
			kernelF64AVX2(kc, &a[0], rsA, csA, &b[0], rsB, &c[0], ldc, boolInt(acc))
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
