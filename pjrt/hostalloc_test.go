package pjrt

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A small Bytes or ToSlice allocates its result and nothing else beyond
// what asking the size (HostSize) and copying into a caller's slice
// (ToHost) allocate: the memory
// check makes no allocation of its own. Counted, not timed, on the
// interpreter and on a plugin.
func TestSmallHostCopiesAllocateOnlyTheResult(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	for name, c := range map[string]*Client{
		"interpreter": openInterpreter(t),
		"plugin":      openConformance(t).client(t, WithOption("event_delay_us", int64(0))),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			vals := []float32{1, 2, 3, 4}
			b, err := BufferFrom(c, vals, []int64{4}, WaitForTransfer())
			require.NoError(t, err)
			require.NoError(t, b.Await(ctx))
			var errs []error
			keep := func(err error) {
				if err != nil && len(errs) < 10 {
					errs = append(errs, err)
				}
			}
			dst := make([]byte, 16)
			// What Bytes and ToSlice cannot do without: ask the size (Bytes)
			// and copy.
			copyOnly := testing.AllocsPerRun(50, func() { keep(b.ToHost(ctx, dst)) })
			sizeAndCopy := testing.AllocsPerRun(50, func() {
				_, err := b.HostSize()
				keep(err)
				keep(b.ToHost(ctx, dst))
			})
			var got []byte
			bytes := testing.AllocsPerRun(50, func() { got, err = b.Bytes(ctx); keep(err) })
			var f32 []float32
			slice := testing.AllocsPerRun(50, func() { f32, err = ToSlice[float32](ctx, b); keep(err) })
			require.Empty(t, errs)
			assert.Equal(t, asBytes(vals), got)
			assert.Equal(t, vals, f32)
			assert.Equal(t, sizeAndCopy+1, bytes, "Bytes: the size and copy's %v allocations and its result", sizeAndCopy)
			assert.Equal(t, copyOnly+1, slice, "ToSlice: the copy's %v allocations and its result", copyOnly)
		})
	}
}
