package dl_test

import (
	"fmt"
	"path/filepath"

	"github.com/halo-ml/halo/internal/dl"
)

// A library that is not there is an error naming the file; a plugin's
// loader says which plugin it could not load.
func ExampleOpen() {
	_, err := dl.Open(filepath.Join("no", "such", "pjrt_plugin.so"), false)
	fmt.Println(err != nil)
	// Output: true
}
