package backend_test

import (
	"errors"
	"fmt"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/pjrt/backend"
)

// A backend reports an error with a PJRT code; with package pjrt linked
// in, it is a *pjrt.Error that callers test with errors.Is.
func ExampleErrorf() {
	err := backend.Errorf(int(pjrt.InvalidArgument), "PJRT_Client_Compile", "no function %q", "main")
	fmt.Println(err)
	fmt.Println(errors.Is(err, pjrt.InvalidArgument), errors.Is(err, pjrt.NotFound))
	var pe *pjrt.Error
	fmt.Println(errors.As(err, &pe), pe.Op)
	// Output:
	// pjrt: PJRT_Client_Compile: INVALID_ARGUMENT: no function "main"
	// true false
	// true PJRT_Client_Compile
}
