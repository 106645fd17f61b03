package pjrt

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/dl"
	"github.com/halo-ml/halo/internal/testplugin"
	"github.com/halo-ml/halo/xla"
)

// openRefusing opens a copy of the conformance plugin that refuses the
// args struct named (it wants 8 bytes more), with its introspection.
func openRefusing(t *testing.T, args string) (*conformance, *Client) {
	t.Helper()
	path := testplugin.Copy(t, testplugin.Build(t))
	t.Setenv("CONFORMANCE_REQUIRE_LARGER", args)
	lib, err := dl.Open(path, false)
	require.NoError(t, err)
	c := &conformance{t: t, path: path, lib: lib}
	return c, c.client(t)
}

// f32Source is a ready f32[4] buffer holding 1, 2, 3, 4.
func f32Source(t *testing.T, cl *Client) *Buffer {
	t.Helper()
	src, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, WaitForTransfer())
	require.NoError(t, err)
	t.Cleanup(func() { src.Close() })
	return src
}

// A plugin that refuses PJRT_Event_Await: ToHost and Await with a context
// that cannot end wait for the event another way, and ToHost returns only
// once the destination is written (it used to return the call's error at
// once and unpin the destination while the copy was still pending).
func TestBlockingWaitsWhenTheAwaitCallFails(t *testing.T) {
	c, cl := openRefusing(t, "PJRT_Event_Await_Args")
	alias, f, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Float32, 4))
	require.NoError(t, err)
	defer alias.Close()
	dst := make([]byte, 16)
	copied, awaited := make(chan error, 1), make(chan error, 1)
	go func() { copied <- alias.ToHost(context.Background(), dst) }()
	go func() { awaited <- alias.Await(context.Background()) }()
	require.Eventually(t, func() bool { return c.counter("struct_size_failures") >= 2 }, 10*time.Second, time.Millisecond,
		"both waits tried PJRT_Event_Await")
	select {
	case err := <-copied:
		t.Fatalf("ToHost returned before the alias buffer had data: %v", err)
	case err := <-awaited:
		t.Fatalf("Await returned before the alias buffer had data: %v", err)
	default:
	}
	require.NoError(t, f.Fulfill(f32Source(t, cl)))
	require.NoError(t, <-copied)
	require.NoError(t, <-awaited)
	got, err := ToSlice[float32](ctxT(t), alias)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3, 4}, got)
	assert.Equal(t, bytesOf([]float32{1, 2, 3, 4}), dst)
}

// A plugin that refuses PJRT_Event_OnReady: events are polled, and a copy's
// destination stays pinned until the copy is done.
func TestEventsArePolledWhenTheCallbackIsRefused(t *testing.T) {
	_, cl := openRefusing(t, "PJRT_Event_OnReady_Args")
	alias, f, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Float32, 4))
	require.NoError(t, err)
	defer alias.Close()
	dst := make([]byte, 16)
	e, err := alias.ToHostAsync(dst)
	require.NoError(t, err)
	select {
	case <-e.Done():
		t.Fatalf("the copy counted as done before the alias buffer had data: %v", e.Err())
	case <-time.After(20 * time.Millisecond):
	}
	require.NoError(t, f.Fulfill(f32Source(t, cl)))
	require.NoError(t, e.Await(ctxT(t)))
	assert.Equal(t, bytesOf([]float32{1, 2, 3, 4}), dst)
}

// At most 64 waits block in the plugin at once (each holds an OS thread;
// Go stops the process past 10,000); the others take the completion
// callback.
func TestBlockingWaitsAreBounded(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	const n = 100
	awaits, callbacks := c.counter("event_awaits"), c.counter("onready_registered")
	fs := make([]*AliasFulfillment, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range fs {
		alias, f, err := cl.CreateAliasBuffer(xla.MakeShape(xla.Float32, 4))
		require.NoError(t, err)
		defer alias.Close()
		fs[i] = f
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- alias.Await(context.Background())
		}()
	}
	require.Eventually(t, func() bool {
		return c.counter("event_awaits")-awaits == 64 && c.counter("onready_registered")-callbacks == n-64
	}, 10*time.Second, time.Millisecond, "64 blocked in the plugin, %d on callbacks", n-64)
	src := f32Source(t, cl)
	for _, f := range fs {
		require.NoError(t, f.Fulfill(src))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int64(64), c.counter("event_awaits")-awaits)
}

// Close while other goroutines use the buffer or the executable: the
// handle is released after the calls in progress, never under them (the
// conformance plugin counts calls on destroyed handles).
func TestCloseWaitsForCallsInProgress(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	exe, err := cl.Compile(MLIRText(addProgram), nil)
	require.NoError(t, err)
	raceWithClose(t, c, cl, func(i int, b *Buffer) {
		switch i % 3 {
		case 0:
			_ = b.Await(context.Background())
		case 1:
			_ = b.ToHost(context.Background(), make([]byte, 16))
		case 2:
			if outs, err := exe.Run(b, b); err == nil {
				for _, o := range outs {
					o.Close()
				}
			}
		}
	})
	assert.EqualValues(t, 0, c.live("buffer"), "buffers left alive")
}

// raceWithClose makes 20,000 buffers and, for each, runs use(i, b) beside
// b.Close() on another goroutine; no call may reach a destroyed handle.
func raceWithClose(t *testing.T, c *conformance, cl *Client, use func(i int, b *Buffer)) {
	t.Helper()
	invalid := c.counter("invalid_handles")
	for i := 0; i < 20000; i++ {
		b, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4})
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); use(i, b) }()
		go func() { defer wg.Done(); b.Close() }()
		wg.Wait()
	}
	assert.Equal(t, invalid, c.counter("invalid_handles"), "calls on destroyed handles")
}

func bytesOf(v []float32) []byte { return asBytes(v) }

// A wait blocked in the plugin does not hold Client.Close: a buffer of an
// unfinished async transfer becomes ready only when Close destroys the
// transfer, which fails the wait.
func TestClientCloseIsNotHeldByBlockedWaits(t *testing.T) {
	c := openConformance(t)
	cl, err := Open(c.path)
	require.NoError(t, err)
	tr, err := cl.NewAsyncTransfer([]xla.Shape{xla.MakeShape(xla.Float32, 4)})
	require.NoError(t, err)
	b, err := tr.Buffer(0)
	require.NoError(t, err)
	awaits := c.counter("event_awaits")
	awaited, copied := make(chan error, 1), make(chan error, 1)
	go func() { awaited <- b.Await(context.Background()) }()
	go func() { copied <- b.ToHost(context.Background(), make([]byte, 16)) }()
	require.Eventually(t, func() bool { return c.counter("event_awaits")-awaits >= 2 }, 10*time.Second, time.Millisecond,
		"both wait in the plugin")
	closed := make(chan error, 1)
	go func() { closed <- cl.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Client.Close waited for the blocked waits")
	}
	// Both name the cause: Cancelled, and ErrClosed (Event.Await's promise).
	err = <-awaited
	assert.ErrorIs(t, err, Cancelled)
	assert.ErrorIs(t, err, ErrClosed)
	err = <-copied
	assert.ErrorIs(t, err, Cancelled)
	assert.ErrorIs(t, err, ErrClosed)
}

// ToHostAsync (and ToHost with a context that can end) count their call:
// a Close beside them never hands the plugin a destroyed buffer.
func TestToHostAsyncBesideClose(t *testing.T) {
	c := openConformance(t)
	cl := c.client(t)
	raceWithClose(t, c, cl, func(_ int, b *Buffer) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.ToHost(ctx, make([]byte, 16))
	})
}

// What the plugin waits for from the caller is cancelled by Client.Close,
// so the work waiting for it ends: a raw copy without a destination, a
// control dependency not marked ready (and a wait blocked on its buffer).
func TestClientCloseCancelsPendingWork(t *testing.T) {
	c := openConformance(t)
	cl, err := Open(c.path)
	require.NoError(t, err)
	b, err := BufferFrom(cl, []float32{1, 2, 3, 4}, []int64{4}, WaitForTransfer())
	require.NoError(t, err)
	rc, err := b.CopyRawToHostLater(0, 4)
	require.NoError(t, err)
	b2, err := BufferFrom(cl, []float32{5, 6, 7, 8}, []int64{4}, WaitForTransfer())
	require.NoError(t, err)
	out, dep, err := b2.DonateWithControlDependency()
	require.NoError(t, err)
	awaits := c.counter("event_awaits")
	awaited := make(chan error, 1)
	go func() { awaited <- out.Await(context.Background()) }()
	require.Eventually(t, func() bool { return c.counter("event_awaits") > awaits }, 10*time.Second, time.Millisecond,
		"the wait is blocked in the plugin")
	require.NoError(t, cl.Close())
	assert.ErrorIs(t, rc.Done().Await(ctxT(t)), Cancelled)
	assert.ErrorIs(t, <-awaited, Cancelled)
	assert.ErrorIs(t, rc.Provide(make([]byte, 4)), ErrClosed)
	assert.ErrorIs(t, dep.Ready(nil), ErrClosed)
	assert.EqualValues(t, 0, c.live("raw_future"))
	assert.EqualValues(t, 0, c.live("donation"))
	assert.ErrorIs(t, cl.OnClose(func() { t.Error("OnClose ran f on a closed client") }), ErrClosed)
}

// Standalone topologies and unloaded executables release their handles
// after the calls in progress too.
func TestStandaloneObjectsBesideClose(t *testing.T) {
	c := openConformance(t)
	p, err := LoadPlugin(c.path)
	require.NoError(t, err)
	invalid := c.counter("invalid_handles")
	for i := 0; i < 2000; i++ {
		topo, err := p.NewTopology("")
		require.NoError(t, err)
		u, err := topo.Compile(MLIRText(addProgram), nil)
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(4)
		go func() { defer wg.Done(); _, _ = topo.Serialize() }()
		go func() { defer wg.Done(); _, _ = u.Serialize() }()
		go func() { defer wg.Done(); topo.Close() }()
		go func() { defer wg.Done(); u.Close() }()
		wg.Wait()
	}
	assert.Equal(t, invalid, c.counter("invalid_handles"), "calls on destroyed handles")
}
