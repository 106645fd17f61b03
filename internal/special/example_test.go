package special_test

import (
	"fmt"
	"math"

	"github.com/halo-ml/halo/internal/special"
)

// Digamma at 1 is minus the Euler-Mascheroni constant, and the complex
// inverse sine takes the side of its branch cut from the sign of zero.
func Example() {
	fmt.Printf("%.15f\n", special.Digamma(1))
	fmt.Printf("%.15f\n", special.Zeta(2, 1)*6/(math.Pi*math.Pi))
	fmt.Printf("%.4f\n", special.Asin(complex(2, 0)))
	fmt.Printf("%.4f\n", special.Asin(complex(2, math.Copysign(0, -1))))
	// Output:
	// -0.577215664901533
	// 1.000000000000000
	// (1.5708+1.3170i)
	// (1.5708-1.3170i)
}
