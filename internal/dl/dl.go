// Package dl loads shared libraries and looks up their symbols without
// cgo: dlopen and dlsym on Unix (through purego), LoadLibrary and
// GetProcAddress on Windows. pjrt loads plugins through it; tests load
// their test plugins' inspection functions.
package dl

// Open loads the shared library at path, resolving its symbols now. With
// global its symbols also resolve the libraries loaded after it (Unix's
// RTLD_GLOBAL; on Windows a loaded DLL is found by name anyway); without
// it they stay its own. The library is never unloaded.
func Open(path string, global bool) (uintptr, error) { return open(path, global) }

// Sym is the address of the symbol name of lib, a library Open loaded; an
// error when lib has no such symbol.
func Sym(lib uintptr, name string) (uintptr, error) { return sym(lib, name) }
