package dl

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOpenAndSym loads the system's C library and finds a function in it;
// a missing file and a missing symbol are errors.
func TestOpenAndSym(t *testing.T) {
	var path string
	switch runtime.GOOS {
	case "windows":
		path = "kernel32.dll"
	case "darwin":
		path = "/usr/lib/libSystem.B.dylib"
	default:
		for _, dir := range []string{"/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/lib", "/usr/lib"} {
			if p := filepath.Join(dir, "libc.so.6"); fileExists(p) {
				path = p
				break
			}
		}
	}
	if path == "" {
		t.Skip("no C library found at the usual paths of " + runtime.GOOS)
	}
	lib, err := Open(path, false)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	name := "strlen"
	if runtime.GOOS == "windows" {
		name = "GetTickCount"
	}
	if p, err := Sym(lib, name); err != nil || p == 0 {
		t.Fatalf("Sym(%s) = %#x, %v", name, p, err)
	}
	if _, err := Sym(lib, "halo_no_such_symbol"); err == nil {
		t.Error("Sym of a missing symbol: no error")
	}
	missing := filepath.Join(t.TempDir(), "missing.so")
	if _, err := Open(missing, true); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Open of a missing file: %v", err)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
