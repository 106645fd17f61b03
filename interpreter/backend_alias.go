package interpreter

import (
	"sync/atomic"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// Alias buffers (PJRT_Client_CreateAliasBuffer): a buffer that exists at
// once and takes its value later from another buffer, or an error.
// Executions that consume it wait for it like for any buffer that is not
// ready yet. The shape may be a token's (xla.Invalid, no dims), so that a
// token can be handed on before the execution that makes it has finished.

// CreateAliasBuffer makes a buffer whose value is provided later by the
// returned fulfiller (backend.AliasBufferCreator).
func (c *client) CreateAliasBuffer(shape xla.Shape, mem backend.Memory) (backend.Buffer, backend.AliasFulfiller, error) {
	const op = "PJRT_Client_CreateAliasBuffer"
	if c.closed.Load() {
		return nil, nil, backend.Errorf(codeFailedPrecondition, op, "client is closed")
	}
	if !isTokenShape(shape) {
		if err := shape.Validate(); err != nil {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "%v", err)
		}
		if StorageOf(shape.DType) == StorageInvalid {
			return nil, nil, backend.Errorf(codeUnimplemented, op, "element type %v is not supported by the interpreter", shape.DType)
		}
	}
	d, m, err := c.place(nil, mem, op)
	if err != nil {
		return nil, nil, err
	}
	b := &buffer{c: c, dev: d, mem: m, shape: shape.Clone(), ready: newEvent()}
	return b, &aliasFulfiller{b: b}, nil
}

// isTokenShape reports whether shape is a token's as Outputs reports it.
func isTokenShape(shape xla.Shape) bool { return shape.DType == xla.Invalid && len(shape.Dims) == 0 }

// aliasFulfiller completes one alias buffer once.
type aliasFulfiller struct {
	b    *buffer
	done atomic.Bool
}

// Fulfill gives the alias buffer src's value (shared: the interpreter never
// writes into an argument) once src is ready, or the error code/msg when
// code is not 0.
func (f *aliasFulfiller) Fulfill(src backend.Buffer, code int, msg string) error {
	const op = "PJRT_Client_FulfillAliasBuffer"
	if code != 0 {
		if !f.done.CompareAndSwap(false, true) {
			return backend.Errorf(codeFailedPrecondition, op, "the alias buffer was already fulfilled")
		}
		f.b.ready.set(backend.Errorf(code, op, "%s", msg))
		return nil
	}
	s, ok := src.(*buffer)
	if !ok || s == nil || s.c != f.b.c {
		return backend.Errorf(codeInvalidArgument, op, "the source buffer belongs to another client")
	}
	if !s.shape.Equal(f.b.shape) {
		return backend.Errorf(codeInvalidArgument, op, "the source buffer is %v, the alias buffer %v", s.shape, f.b.shape)
	}
	// The alias holds src until it has taken src's value: closing src
	// right after Fulfill is allowed.
	if !s.hold() {
		return backend.Errorf(codeFailedPrecondition, op, "the source buffer was deleted")
	}
	if !f.done.CompareAndSwap(false, true) {
		s.unhold()
		return backend.Errorf(codeFailedPrecondition, op, "the alias buffer was already fulfilled")
	}
	if s.ready.fired() {
		f.take(s)
		return nil
	}
	go f.take(s)
	return nil
}

func (f *aliasFulfiller) take(s *buffer) {
	v, err := s.takeHeld()
	f.b.mu.Lock()
	if !f.b.deleted || f.b.holds > 0 {
		f.b.val = v
	}
	f.b.mu.Unlock()
	f.b.ready.set(err)
}
