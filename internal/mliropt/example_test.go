package mliropt_test

import (
	"fmt"

	"github.com/halo-ml/halo/internal/mliropt"
)

// Check a fragment of MLIR where mlir-opt is installed.
func Example() {
	opt := mliropt.Path()
	if opt == "" {
		fmt.Println(mliropt.Missing)
		return
	}
	_, err := mliropt.Run(opt, "%0 = \"tt.get_program_id\"() {axis = 0 : i32} : () -> i32\n")
	fmt.Println("accepted:", err == nil)
}
