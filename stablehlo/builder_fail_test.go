package stablehlo

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// Fail keeps the first error, but an error that wraps it (a package
// explaining in its own terms an op of its that failed) takes its place.
func TestFailKeepsFirstErrorUnlessWrapped(t *testing.T) {
	build := func(second func(fb *FuncBuilder, first error)) error {
		b := NewBuilder("m")
		fb := b.NewFunction("main", Tensor(xla.Float32, 2))
		fb.Add(fb.Arg(0), fb.Zero(Tensor(xla.Float32, 3))) // shapes differ
		first := fb.Err()
		require.Error(t, first)
		second(fb, first)
		fb.Return(fb.Arg(0))
		_, err := b.Build()
		return err
	}
	unrelated := errors.New("unrelated")
	err := build(func(fb *FuncBuilder, _ error) { fb.Fail("pkg.op", unrelated) })
	assert.NotErrorIs(t, err, unrelated, "a later unrelated error does not replace the first")

	var explained error
	err = build(func(fb *FuncBuilder, first error) {
		explained = fmt.Errorf("kernel k, op abs at k.go:3: %w", first)
		fb.Fail("pkg.op", explained)
	})
	assert.ErrorIs(t, err, explained, "an error wrapping the first takes its place")
	assert.Contains(t, err.Error(), "kernel k, op abs at k.go:3")

	plain := build(func(*FuncBuilder, error) {})
	err = build(func(fb *FuncBuilder, first error) { fb.Fail("pkg.op", first) })
	assert.Equal(t, plain.Error(), err.Error(), "failing with the recorded error itself changes nothing")

	err = build(func(fb *FuncBuilder, _ error) { fb.Fail("pkg.op", nil) })
	require.Error(t, err)
}
