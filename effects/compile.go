package effects

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Executable is a program with effects compiled for a client: run it
// through a Stream (Stream.Execute, or Execute for the default stream),
// which passes and keeps its runtime tokens.
type Executable struct {
	client  *pjrt.Client
	exe     *pjrt.Executable
	lowered *Lowered
	tokens  *tokenSource

	closeOnce sync.Once
	hold      *callbackHold    // the callbacks it holds in the table
	params    []stablehlo.Type // its own parameters (after the runtime tokens)

	// dispatching counts the Stream.Execute calls in progress (begin,
	// end): the callbacks are released once Close has been called and
	// none is left, so that a dispatch racing Close is tracked first;
	// closing refuses new ones.
	mu          sync.Mutex
	dispatching int
	closing     bool
}

// callbackHold is an executable's hold on its callbacks in the table,
// released by Close or, for an executable dropped without Close, when it
// is collected: once the computations it dispatched (running, whose
// callbacks may still be called) have finished.
type callbackHold struct {
	ids     []int64
	once    sync.Once
	mu      sync.Mutex
	running events
}

// track keeps the completion event of a dispatched computation.
func (h *callbackHold) track(ev *pjrt.Event) {
	if len(h.ids) == 0 || ev == nil {
		return
	}
	h.mu.Lock()
	h.running.add(ev, nil)
	h.mu.Unlock()
}

// release drops the hold once the computations tracked so far have
// finished (at once when they have). Only the first call counts.
func (h *callbackHold) release() {
	h.once.Do(func() {
		h.mu.Lock()
		running := slices.DeleteFunc(h.running.list, fired)
		h.running = events{}
		h.mu.Unlock()
		if len(running) == 0 {
			releaseFuncs(h.ids)
			return
		}
		go func() {
			for _, ev := range running {
				<-ev.Done()
			}
			releaseFuncs(h.ids)
		}()
	})
}

// fired reports whether ev has fired.
func fired(ev *pjrt.Event) bool {
	select {
	case <-ev.Done():
		return true
	default:
		return false
	}
}

// events are completion events of dispatched computations; the fired
// ones are dropped whenever the list has doubled since the last time.
type events struct {
	list    []*pjrt.Event
	pruneAt int // len(list) at which fired events are dropped
}

// add appends ev, first dropping the fired events (handed to onFired,
// when not nil) if the list has doubled.
func (l *events) add(ev *pjrt.Event, onFired func(*pjrt.Event)) {
	if len(l.list) >= max(l.pruneAt, 64) {
		l.list = slices.DeleteFunc(l.list, func(p *pjrt.Event) bool {
			if !fired(p) {
				return false
			}
			if onFired != nil {
				onFired(p)
			}
			return true
		})
		l.pruneAt = 2 * len(l.list)
	}
	l.list = append(l.list, ev)
}

// begin starts a dispatch of e: false once Close has begun.
func (e *Executable) begin() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		return false
	}
	e.dispatching++
	return true
}

// end ends a dispatch started by begin (after track, when it dispatched).
func (e *Executable) end() {
	e.mu.Lock()
	e.dispatching--
	last := e.closing && e.dispatching == 0
	e.mu.Unlock()
	if last { // Close was called meanwhile: it left the release to this
		e.hold.release()
	}
}

// track keeps the completion event of a dispatched computation.
func (e *Executable) track(ev *pjrt.Event) { e.hold.track(ev) }

// PJRT returns the compiled executable; its parameters and results start
// with one runtime token per ordered effect (Ordered).
func (e *Executable) PJRT() *pjrt.Executable {
	if e == nil {
		return nil
	}
	return e.exe
}

// Ordered are the ordered effects of the program, in the order of its
// leading token parameters and results.
func (e *Executable) Ordered() []string {
	if e == nil || e.lowered == nil {
		return nil
	}
	return append([]string(nil), e.lowered.Ordered...)
}

// Unordered reports whether the program has unordered callbacks.
func (e *Executable) Unordered() bool { return e != nil && e.lowered != nil && e.lowered.Unordered }

// Close releases the executable and its hold on its callbacks in the
// callback table (an entry is removed once no open executable and no
// reachable module calls it). Computations already dispatched still run.
// It is idempotent.
func (e *Executable) Close() error {
	if e == nil || e.exe == nil {
		return errors.New("effects: Close: nil executable")
	}
	e.closeOnce.Do(func() {
		// Later dispatches fail; the hold is released once those in
		// progress have tracked their computations: now, or by the last
		// one's end. Close does not wait for them, so that a callback of
		// a computation running inside Execute (a synchronous backend)
		// may close its own executable. Computations already dispatched
		// may still call the callbacks: the table keeps them until those
		// have finished.
		e.mu.Lock()
		e.closing = true
		now := e.dispatching == 0
		e.mu.Unlock()
		if now {
			e.hold.release()
		}
	})
	return e.exe.Close()
}

// TokenArraysFor reports whether Compile lowers for c with TokenArrays:
// false on the interpreter, whose buffers can be tokens, true on every
// other backend (PJRT plugins may not create token buffers; JAX passes
// zero-size bool arrays there too).
func TokenArraysFor(c *pjrt.Client) bool {
	return c != nil && c.PlatformName() != interpreter.BackendName
}

// Compile registers the callback handler with c's plugin, lowers m (with
// TokenArrays as TokenArraysFor(c) says) and compiles it. opts may be nil.
func Compile(c *pjrt.Client, m *stablehlo.Module, opts *xla.CompileOptions) (*Executable, error) {
	if c == nil {
		return nil, errors.New("effects: Compile: nil client")
	}
	l, err := Lower(m, LowerOptions{TokenArrays: TokenArraysFor(c)})
	if err != nil {
		return nil, err
	}
	return CompileLowered(c, l, opts)
}

// CompileLowered compiles a module made by Lower. Programs with ordered
// effects must run on one device (one replica, one partition).
func CompileLowered(c *pjrt.Client, l *Lowered, opts *xla.CompileOptions) (*Executable, error) {
	if c == nil || l == nil || l.Module == nil {
		return nil, errors.New("effects: CompileLowered: nil client or lowered module")
	}
	if err := Register(c); err != nil {
		return nil, err
	}
	exe, err := c.Compile(pjrt.StableHLO(l.Module), opts)
	if err != nil {
		return nil, err
	}
	if l.HasEffects() {
		if n := len(exe.AddressableDevices()); n != 1 {
			exe.Close()
			return nil, fmt.Errorf("effects: a program with effects runs on one device; this one was compiled for %d", n)
		}
	}
	ts, err := tokensFor(c, l.TokenArrays)
	if err != nil {
		exe.Close()
		return nil, err
	}
	funcs, err := acquireFuncs(l.Module)
	if err != nil {
		exe.Close()
		return nil, err
	}
	meta := *l
	meta.Module = nil // the executable holds its callbacks itself (funcs)
	e := &Executable{client: c, exe: exe, lowered: &meta, tokens: ts, hold: &callbackHold{ids: funcs}, params: userParams(l)}
	// Dropped without Close, it still gives its callbacks up, once the
	// compiled program is unreachable too (PJRT hands it out, and a kept
	// one still runs the callbacks).
	runtime.AddCleanup(exe, (*callbackHold).release, e.hold)
	return e, nil
}

// userParams are the parameter types of l's entry function after its
// runtime tokens, or nil when there is no single entry function to tell.
func userParams(l *Lowered) []stablehlo.Type {
	f := l.Module.Func(l.Module.EntryName())
	if f == nil {
		return nil
	}
	args := f.Args()
	if len(args) < len(l.Ordered) {
		return nil
	}
	out := make([]stablehlo.Type, 0, len(args)-len(l.Ordered))
	for _, a := range args[len(l.Ordered):] {
		out = append(out, a.Type)
	}
	return out
}

// checkArgs reports arguments that do not fit the program's own
// parameters (numbered without the runtime tokens).
func (e *Executable) checkArgs(args []*pjrt.Buffer) error {
	if e.params != nil && len(args) != len(e.params) {
		return fmt.Errorf("effects: Execute: the program takes %d arguments, got %d", len(e.params), len(args))
	}
	for i, a := range args {
		if a == nil {
			return fmt.Errorf("effects: Execute: argument %d is nil", i)
		}
		if e.params != nil {
			if t, ok := e.params[i].(stablehlo.TensorType); ok && t.Size() >= 0 && !a.Shape().Equal(t.Shape()) {
				return fmt.Errorf("effects: Execute: argument %d is %v, the program takes %v", i, a.Shape(), t)
			}
		}
	}
	return nil
}

// explain returns err, the error of a dispatch of args on dev, or, when an
// argument explains it (on another client or device, deleted, closed), an
// error naming that argument as the program's own: the backend's errors
// number the runtime tokens the computation takes first too. Checked
// only after a failure, so that dispatches pay nothing for it.
func (e *Executable) explain(err error, args []*pjrt.Buffer, dev *pjrt.Device) error {
	if errors.Is(err, pjrt.ErrClosed) {
		if _, oerr := e.exe.Outputs(); errors.Is(oerr, pjrt.ErrClosed) {
			return closedError(err)
		}
	}
	for i, a := range args {
		d, derr := a.Device()
		switch {
		case derr != nil:
			return fmt.Errorf("effects: Execute: argument %d: %w", i, derr)
		case d.Client() != e.client:
			return fmt.Errorf("effects: Execute: argument %d belongs to another client", i)
		case d != dev:
			return fmt.Errorf("effects: Execute: argument %d is on device %d, the computation runs on device %d", i, d.ID(), dev.ID())
		case a.IsDeleted():
			return fmt.Errorf("effects: Execute: argument %d was deleted", i)
		}
	}
	return err
}

// tokenSources holds the token source of each client (and token kind)
// until the client is closed.
var tokenSources sync.Map // tokenKey -> *tokenSource

type tokenKey struct {
	c      *pjrt.Client
	arrays bool
}

// tokensFor returns the token source of c: on the interpreter with token
// buffers, chains hand token results on directly (the interpreter runs a
// computation whose token argument's producer failed, so a failure does
// not poison the chain); elsewhere through alias-buffer relays, when the
// backend has alias buffers, else directly (a failure then fails the
// later computations of the effect).
func tokensFor(c *pjrt.Client, arrays bool) (*tokenSource, error) {
	k := tokenKey{c, arrays}
	if t, ok := tokenSources.Load(k); ok {
		return t.(*tokenSource), nil
	}
	t := &tokenSource{c: c, arrays: arrays, shape: xla.Shape{DType: xla.Invalid}}
	if arrays {
		t.shape = xla.MakeShape(xla.Bool, 0)
	}
	if arrays || c.PlatformName() != interpreter.BackendName {
		b, f, err := c.CreateAliasBuffer(t.shape)
		switch {
		case err == nil:
			t.settleProbe(b, f)
			t.relay = true
		case errors.Is(err, pjrt.Unimplemented):
		default:
			return nil, fmt.Errorf("effects: runtime token buffers: %w", err)
		}
	}
	got, loaded := tokenSources.LoadOrStore(k, t)
	if !loaded {
		if err := c.OnClose(func() { forgetClient(c) }); err != nil {
			tokenSources.Delete(k)
			return nil, fmt.Errorf("effects: %w", err)
		}
	}
	return got.(*tokenSource), nil
}

// settleProbe fulfils the alias buffer made to learn whether the client
// has them with a fresh token array and releases both. Cancelling it
// instead, as a token-typed probe must be (no host data makes a token),
// makes XLA's plugin log the cancellation as an error.
func (t *tokenSource) settleProbe(b *pjrt.Buffer, f *pjrt.AliasFulfillment) {
	defer b.Close()
	if t.arrays {
		if src, err := t.fresh(nil); err == nil {
			err = f.Fulfill(src)
			src.Close()
			if err == nil {
				return
			}
		}
	}
	f.Close()
}

// forgetClient drops what the package keeps for a closed client: its
// token sources and every stream's chains and execute context on it (the
// client released their buffers).
func forgetClient(c *pjrt.Client) {
	tokenSources.Delete(tokenKey{c, false})
	tokenSources.Delete(tokenKey{c, true})
	live, _ := liveStreams()
	for _, s := range live {
		s.forget(c)
	}
}
