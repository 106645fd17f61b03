package effects

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// syncPlugin wraps the interpreter so that Execute returns only once the
// computation has finished, as a PJRT plugin may (XLA's CPU client runs
// small computations on the calling thread).
type syncPlugin struct{ backend.Plugin }

func (p syncPlugin) NewClient(o []backend.NamedValue) (backend.Client, error) {
	c, err := p.Plugin.NewClient(o)
	if err != nil {
		return nil, err
	}
	return syncClient{c}, nil
}
func (p syncPlugin) RegisterFFIHandler(target, platform string, h backend.FFIHandler, traits uint32) error {
	return p.Plugin.(backend.FFIRegistrar).RegisterFFIHandler(target, platform, h, traits)
}
func (p syncPlugin) RegisterFFIType(name string) (int64, error) {
	return p.Plugin.(backend.FFIRegistrar).RegisterFFIType(name)
}

type syncClient struct{ backend.Client }

func (c syncClient) Compile(code []byte, format string, options []byte) (backend.Executable, error) {
	e, err := c.Client.Compile(code, format, options)
	if err != nil {
		return nil, err
	}
	return syncExe{e}, nil
}
func (c syncClient) NewExecuteContext() (backend.ExecuteContext, error) {
	return c.Client.(interface {
		NewExecuteContext() (backend.ExecuteContext, error)
	}).NewExecuteContext()
}
func (c syncClient) CreateAliasBuffer(shape xla.Shape, mem backend.Memory) (backend.Buffer, backend.AliasFulfiller, error) {
	return c.Client.(backend.AliasBufferCreator).CreateAliasBuffer(shape, mem)
}

type syncExe struct{ backend.Executable }

func (e syncExe) Execute(args [][]backend.Buffer, opts backend.ExecuteOptions) ([][]backend.Buffer, []backend.Event, error) {
	want := opts.WantCompletionEvents
	opts.WantCompletionEvents = true
	outs, evs, err := e.Executable.Execute(args, opts)
	if err != nil {
		return nil, nil, err
	}
	for _, ev := range evs {
		<-ev.Done()
	}
	if !want {
		evs = nil
	}
	return outs, evs, nil
}

var registerSync sync.Once

func openSync(t *testing.T) *pjrt.Client {
	registerSync.Do(func() {
		pjrt.Register("halo-test-sync", func() (backend.Plugin, error) {
			p, err := interpreter.OpenBackend()
			return syncPlugin{p}, err
		})
	})
	c, err := pjrt.Open("halo-test-sync")
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// On a backend whose Execute runs the computation before returning, an
// unordered callback may dispatch another program with effects onto its
// own stream (it deadlocked: the outer dispatch held the stream's lock
// through Execute).
func TestSyncBackendCallbackDispatchesOnItsStream(t *testing.T) {
	c := openSync(t)
	t.Logf("platform %q, token arrays %v", c.PlatformName(), TokenArraysFor(c))
	var out lines
	inner := printIndex(t, c, &out, Unordered, TokenArraysFor(c))
	s := NewStream()
	var nested atomic.Bool
	outer := compileMode(t, c, callbackProgram(t, Unordered, "dispatch", func() error {
		_, err := s.Execute(inner, scalar(t, c, 5, nil))
		nested.Store(err == nil)
		return err
	}), TokenArraysFor(c))
	require.NoError(t, executeOrDeadlock(t, s, outer))
	assert.True(t, nested.Load())
}

// The same through the relay path (token arrays): an ordered callback of
// effect "a" dispatches a program of effect "b" onto its own stream.
func TestSyncBackendRelayedNestedDispatch(t *testing.T) {
	c := openSync(t)
	var out lines
	inner := printIndex(t, c, &out, Ordered("b"), true)
	s := NewStream()
	outer := compileMode(t, c, callbackProgram(t, Ordered("a"), "dispatch", func() error {
		_, err := s.Execute(inner, scalar(t, c, 5, nil))
		return err
	}), true)
	require.NoError(t, executeOrDeadlock(t, s, outer))
	assert.Equal(t, []string{"5"}, out.all())
}

// The same on the direct path (token buffers, what Compile picks on this
// backend): the dispatch held the stream's lock through Execute, so the
// nested one waited for ever (found in review).
func TestSyncBackendDirectNestedDispatch(t *testing.T) {
	c := openSync(t)
	var out lines
	inner := printIndex(t, c, &out, Ordered("b"), false)
	s := NewStream()
	outer := compileMode(t, c, callbackProgram(t, Ordered("a"), "dispatch", func() error {
		_, err := s.Execute(inner, scalar(t, c, 5, nil))
		return err
	}), false)
	require.False(t, outer.tokens.relay, "the direct path")
	require.NoError(t, executeOrDeadlock(t, s, outer))
	assert.Equal(t, []string{"5"}, out.all())
	// The chains go on: a later dispatch of each effect runs.
	_, err := s.Execute(inner, scalar(t, c, 6, nil))
	require.NoError(t, err)
	require.NoError(t, s.Barrier(ctxT(t)))
	assert.Equal(t, []string{"5", "6"}, out.all())
}

// A callback may close its own executable, also when its computation runs
// inside Execute (Close waited for the dispatch in progress, which waited
// for the callback; found in review). The callbacks are released once the
// dispatch is done, and a later dispatch is refused.
func TestSyncBackendCallbackClosesItsExecutable(t *testing.T) {
	c := openSync(t)
	var exe *Executable
	var closed atomic.Bool
	exe = compileMode(t, c, callbackProgram(t, Unordered, "close-self", func() error {
		closed.Store(exe.Close() == nil)
		return nil
	}), TokenArraysFor(c))
	s := NewStream()
	require.NoError(t, executeOrDeadlock(t, s, exe))
	assert.True(t, closed.Load())
	_, err := s.Execute(exe)
	assert.ErrorIs(t, err, pjrt.ErrClosed)
}

// executeOrDeadlock dispatches exe on s and waits for its effects; a
// dispatch still blocked after half a minute (the work takes
// microseconds) fails the test as a deadlock.
func executeOrDeadlock(t *testing.T, s *Stream, exe *Executable) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Execute(exe)
		if err == nil {
			err = s.Barrier(context.Background())
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("deadlock: Stream.Execute from inside a callback never returned")
		return nil
	}
}
