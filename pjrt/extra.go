package pjrt

import (
	"errors"
	"fmt"

	"github.com/halo-ml/halo/pjrt/backend"
)

// notSupported is the error of a public method whose backend object lacks
// the optional interface (see package backend) behind it.
func notSupported(op, feature string, p *Plugin) *Error {
	name := "?"
	if p != nil {
		name = p.Name()
	}
	return &Error{Code: Unimplemented, Op: op, Msg: fmt.Sprintf("backend %s does not support %s", name, feature)}
}

// errorCode splits err into a PJRT error code and message, for the calls
// that hand an error to a backend (a nil error is code 0).
func errorCode(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var pe *Error
	if errors.As(err, &pe) && pe.Code != OK {
		return int(pe.Code), pe.Msg
	}
	var c Code
	if errors.As(err, &c) && c != OK {
		return int(c), err.Error()
	}
	return int(Unknown), err.Error()
}

// namedValueMap turns backend named values into a map.
func namedValueMap(nvs []backend.NamedValue) map[string]any {
	out := make(map[string]any, len(nvs))
	for _, a := range nvs {
		out[a.Name] = a.Value
	}
	return out
}

// Extensions names the PJRT extensions the plugin offers, e.g. "FFI",
// "Gpu_Custom_Call", "Layouts", "MemoryDescriptions" (nil for backends
// without extensions and for a nil plugin).
func (p *Plugin) Extensions() []string {
	if p == nil {
		return nil
	}
	if l, ok := p.b.(backend.ExtensionLister); ok {
		return l.Extensions()
	}
	return nil
}
