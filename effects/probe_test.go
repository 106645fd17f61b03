package effects

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/dl"
	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/pjrt"
)

// Learning whether a plugin has alias buffers fulfils the probe buffer
// instead of cancelling it: XLA's plugin logs every alias buffer
// fulfilled with an error ("PJRT_Client_FulfillAliasBuffer: Callback
// returned error: CANCELLED ..."), which users would see at each program's
// first compile. The conformance plugin counts such fulfilments.
func TestAliasBufferProbeIsNotCancelled(t *testing.T) {
	path := testplugin.Build(t)
	lib, err := dl.Open(path, false)
	require.NoError(t, err)
	counter := func(name string) int64 {
		sym, err := dl.Sym(lib, "conformance_counter")
		require.NoError(t, err)
		p := append([]byte(name), 0)
		r, _, _ := purego.SyscallN(sym, uintptr(unsafe.Pointer(&p[0])))
		runtime.KeepAlive(p)
		return int64(r)
	}
	c, err := pjrt.Open(path)
	require.NoError(t, err)
	defer c.Close()
	before := counter("alias_buffers_failed")
	require.GreaterOrEqual(t, before, int64(0), "the conformance plugin counts failed alias buffers")
	ts, err := tokensFor(c, true)
	require.NoError(t, err)
	assert.True(t, ts.relay, "the conformance plugin has alias buffers")
	assert.Equal(t, before, counter("alias_buffers_failed"), "the probe's alias buffer was fulfilled with an error")
}
