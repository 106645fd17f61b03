package pjrt

import (
	"errors"
	"fmt"

	"github.com/halo-ml/halo/pjrt/backend"
)

// Built-in backends (which cannot import pjrt) make their errors with
// backend.Errorf; this makes those *Error values.
func init() {
	backend.SetErrorConstructor(func(code int, op, msg string, cause error) error {
		return &Error{Code: Code(code), Op: op, Msg: msg, cause: cause}
	})
}

// PJRTCode returns e's code as an int (backend.CodedError).
func (e *Error) PJRTCode() int { return int(e.Code) }

// Code is a PJRT error code (the absl status codes). A Code is itself an
// error, so errors.Is(err, pjrt.InvalidArgument) tests an error's code.
type Code int

// The PJRT error codes.
const (
	OK                 Code = 0
	Cancelled          Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// String returns the code's name, e.g. "INVALID_ARGUMENT".
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Error makes a Code usable as an errors.Is target.
func (c Code) Error() string { return "pjrt: " + c.String() }

// PJRTCode returns c as an int (backend.CodedError), so that a Code
// returned as an error keeps its code through a backend.
func (c Code) PJRTCode() int { return int(c) }

// Error is an error reported by a backend: its code, its message (copied
// out of the plugin before the C error is destroyed) and the PJRT call
// that returned it.
type Error struct {
	Code Code
	Msg  string
	Op   string // e.g. "PJRT_Client_Compile"
	// Payloads are the error's key/value payloads (absl::Status payloads,
	// read with PJRT_Error_ForEachPayload); nil when there are none.
	Payloads map[string]string

	cause error // a Go backend's own error behind it (Unwrap)
}

// Unwrap returns the Go error behind e when a Go backend (the built-in
// interpreter) made it from one, such as a kernel's bounds error; nil for
// errors from C plugins.
func (e *Error) Unwrap() error { return e.cause }

// Error formats the error as "pjrt: OP: CODE: message".
func (e *Error) Error() string {
	if e.Op == "" {
		return fmt.Sprintf("pjrt: %s: %s", e.Code.String(), e.Msg)
	}
	return fmt.Sprintf("pjrt: %s: %s: %s", e.Op, e.Code.String(), e.Msg)
}

// Is reports whether target is e's Code.
func (e *Error) Is(target error) bool {
	c, ok := target.(Code)
	return ok && c == e.Code
}

// ErrClosed is returned by every method of an object used after Close (and
// by objects whose client was closed).
var ErrClosed = errors.New("pjrt: use of closed object")

// errorf returns an *Error with a formatted message.
func errorf(code Code, op, format string, args ...any) *Error {
	return &Error{Code: code, Op: op, Msg: fmt.Sprintf(format, args...)}
}
