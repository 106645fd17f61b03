package capi_test

import (
	"fmt"
	"unsafe"

	"github.com/halo-ml/halo/internal/capi"
)

// Look up a slot of the PJRT_Api function table and a struct's sizes: the
// Go mirror's layout, the STRUCT_SIZE a caller stores, and what an older
// plugin expects.
func Example() {
	s, ok := capi.SlotByName("PJRT_Client_Create")
	fmt.Println(ok, s.PresentAt(29))
	var args capi.PJRT_Client_Create_Args
	fmt.Println(unsafe.Sizeof(args), capi.PJRT_Client_Create_Args_STRUCT_SIZE)
	_, known := capi.StructSizeAt("PJRT_Client_Create_Args", 10)
	fmt.Println(known)
	// Output:
	// true true
	// 88 88
	// false
}
