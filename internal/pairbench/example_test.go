package pairbench_test

import (
	"fmt"

	"github.com/halo-ml/halo/internal/pairbench"
)

func ExampleMedian() {
	fmt.Println(pairbench.Median([]float64{1.4, 1.9, 1.6, 1.2, 1.7}))
	// Output: 1.6
}
