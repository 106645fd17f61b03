package gemm_test

import (
	"fmt"

	"github.com/halo-ml/halo/internal/gemm"
)

func ExampleMul() {
	// [1 2 3]   [1 0]   [ 4  2]
	// [4 5 6] · [0 1] = [10  5]
	//           [1 0]
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 0, 0, 1, 1, 0}
	c := make([]float32, 4)
	gemm.Mul(false, false, 2, 2, 3, a, 3, b, 2, c, 2, 1)
	fmt.Println(c)

	// The same product with A given transposed (stored 3×2).
	at := []float32{1, 4, 2, 5, 3, 6}
	gemm.Mul(true, false, 2, 2, 3, at, 2, b, 2, c, 2, 1)
	fmt.Println(c)
	// Output:
	// [4 2 10 5]
	// [4 2 10 5]
}
