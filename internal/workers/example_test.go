package workers_test

import (
	"fmt"

	"github.com/halo-ml/halo/internal/workers"
)

func ExampleSplit() {
	x := make([]float64, 1<<20)
	workers.Split(len(x), 2, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i] = float64(i) * 0.5
		}
	})
	fmt.Println(x[3], x[len(x)-1])
	// Output: 1.5 524287.5
}
