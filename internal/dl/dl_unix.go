//go:build !windows

package dl

import (
	"fmt"

	"github.com/ebitengine/purego"
)

func open(path string, global bool) (uintptr, error) {
	mode := purego.RTLD_NOW | purego.RTLD_LOCAL
	if global {
		mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	}
	return purego.Dlopen(path, mode)
}

func sym(lib uintptr, name string) (uintptr, error) {
	p, err := purego.Dlsym(lib, name)
	if err == nil && p == 0 {
		err = fmt.Errorf("symbol %s is NULL", name)
	}
	return p, err
}
