package stablehlo

import "errors"

// Fail records err as the module builder's sticky error, unless an error is
// recorded already: packages that emit ops through the builder (pallas) use
// it so their own errors come out of Build like the builder's. op names
// what failed ("pallas.call"); the location is the caller's. A nil err is
// ignored. errors.As and errors.Is see err through the *BuildError. An err
// that wraps the recorded error (errors.Is) takes its place: it explains
// in the caller's terms an op of theirs that failed. A nil FuncBuilder has
// no builder to record err in (its Err reports the nil FuncBuilder).
//
// operands, when given, are the values op was given: the error names
// their types as it does for the builder's own ops,
// "stablehlo: effects.print(tensor<3xf32>) at f.go:12: msg". err's text is
// the message after that prefix, so it should not repeat the op or a
// package prefix of its own.
func (fb *FuncBuilder) Fail(op string, err error, operands ...*Value) {
	if !fb.live() || err == nil {
		return
	}
	if cur := fb.s.b.err; cur != nil {
		if err == error(cur) || !errors.Is(err, cur) {
			return // the recorded error itself, or one unrelated to it
		}
		fb.s.b.err = nil
	}
	fb.s.b.fail(fb.s, op, operands, "%s", err.Error())
	if fb.s.b.err != nil {
		fb.s.b.err.Err = err
	}
}

// Unwrap returns the underlying error recorded with FuncBuilder.Fail.
func (e *BuildError) Unwrap() error { return e.Err }
