package effects

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/xla"
)

// Stream is a sequence of dispatches whose ordered effects happen in
// dispatch order: it holds the current runtime token of each ordered
// effect (per client) and the output tokens (completion events) of the
// computations with unordered effects. Go has no thread-local storage, so
// where JAX keeps this state per Python thread, halo keeps it per Stream:
// Default for everyone, NewStream for a goroutine that wants its own
// order. A Stream is safe for concurrent use; dispatches from several
// goroutines are ordered as they take the Stream's lock.
type Stream struct {
	id uintptr // the handle callbacks find the stream by

	mu      sync.Mutex
	chains  map[chainKey]*chain
	pending events // completion events not yet seen by Barrier
	// watching: a goroutine holds the stream until its pending
	// computations have finished (watch).
	watching bool
	ctxs     map[*pjrt.Client]*pjrt.ExecuteContext
	// inflight counts dispatches between taking their tokens and their
	// Execute returning (they use an execute context outside mu); retired
	// are the contexts Close dropped meanwhile, closed by the last of
	// them.
	inflight int
	// chainFree (on mu) is signalled when a direct dispatch releases its
	// chains (chain.busy).
	chainFree sync.Cond
	retired   []*pjrt.ExecuteContext
	// relayIdle, when not nil, is closed (and cleared, with mu) when a
	// chain's relay goroutine has handed on its last token and released
	// what it held.
	relayIdle chan struct{}

	// callbacks are the goroutines running this stream's callbacks now
	// (goroutine id -> how many), apart from mu (a callback may run while
	// a dispatch holds mu): a Barrier or Close from one of them would
	// wait for the computation that runs it.
	cbMu      sync.Mutex
	callbacks map[uint64]int

	// errs holds the first error since the last Barrier, apart from mu:
	// callbacks record errors while a dispatch may hold mu (a backend may
	// run a computation inside Execute); its lock is taken after mu, never
	// before. A stream collected with an error left hands it to the next
	// BarrierAll (orphaned).
	errs *errBox
}

// errBox is a stream's first unreported error.
type errBox struct {
	mu  sync.Mutex
	err error
	// callbacks counts, by message, the callback failures recorded whose
	// computations' own failures (which carry the message) are still to
	// come: those echo a failure already recorded and are not reported
	// again.
	callbacks map[string]int
}

// orphaned holds the errors of streams collected before a Barrier took
// them; BarrierAll reports them.
var orphaned struct {
	mu   sync.Mutex
	errs []error
}

type chainKey struct {
	c      *pjrt.Client
	effect string
}

// chain is one ordered effect's runtime token on one client.
type chain struct {
	cur *pjrt.Buffer // the token the next computation of the effect takes
	// src makes its tokens: every executable it serves passes tokens of
	// one kind (buffers or arrays).
	src *tokenSource
	// relays in token order (see relay), and whether a goroutine is
	// working through them.
	queue   []*relay
	running bool
	// queued counts the relays ever queued, finished those the goroutine
	// is done with (what they held released): Close waits for the relays
	// queued before it, not for later ones.
	queued, finished uint64
	// busy: a direct dispatch (executeDirect) took cur and has not yet
	// made its computation's token current; the chain's next dispatch
	// waits for it (Stream.chainFree).
	busy bool
}

// relay hands a computation's token on: next (the chain's current token
// once the computation was dispatched) gets the computation's token result
// out when it is ready, or, when the computation failed (or was never
// dispatched: out nil), the token in that the computation took, so that a
// failed callback does not poison the chain. The relay then closes in and
// out. A relay joins its chain's queue when its computation takes the
// chain's token, before the dispatch: the queue is in token order, which
// concurrent dispatches may finish in another. dispatched is closed once
// out is set (or left nil).
type relay struct {
	out, in    *pjrt.Buffer
	next       *pjrt.AliasFulfillment
	dispatched chan struct{}
}

var registry struct {
	mu      sync.Mutex
	next    uintptr
	streams map[uintptr]streamEntry
}

// streamEntry is a stream in the registry: the stream while it lives, and
// its error box, which outlives it (a collected stream whose cleanup has
// not run yet still hands its error to BarrierAll).
type streamEntry struct {
	s    weak.Pointer[Stream]
	errs *errBox
}

// NewStream returns a stream with its own token chains.
func NewStream() *Stream {
	s := &Stream{chains: map[chainKey]*chain{}, ctxs: map[*pjrt.Client]*pjrt.ExecuteContext{}, errs: &errBox{}}
	s.chainFree.L = &s.mu
	registry.mu.Lock()
	registry.next++
	s.id = registry.next
	if registry.streams == nil {
		registry.streams = map[uintptr]streamEntry{}
	}
	registry.streams[s.id] = streamEntry{weak.Make(s), s.errs}
	registry.mu.Unlock()
	runtime.AddCleanup(s, func(g streamGone) {
		registry.mu.Lock()
		delete(registry.streams, g.id)
		registry.mu.Unlock()
		if err := g.errs.take(); err != nil {
			orphaned.mu.Lock()
			orphaned.errs = append(orphaned.errs, err)
			orphaned.mu.Unlock()
		}
	}, streamGone{s.id, s.errs})
	return s
}

// streamGone is what a collected stream leaves: its id and its error.
type streamGone struct {
	id   uintptr
	errs *errBox
}

var defaultStream = sync.OnceValue(NewStream)

// Default is the stream of Execute, Barrier and of goroutines that do not
// make their own.
func Default() *Stream { return defaultStream() }

// lookupStream returns the live stream with the given id, or nil.
func lookupStream(id uintptr) *Stream {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.streams[id].s.Value()
}

// liveStreams returns every stream not yet collected, and the error boxes
// of those collected whose cleanup has not run yet.
func liveStreams() ([]*Stream, []*errBox) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	out := make([]*Stream, 0, len(registry.streams))
	var gone []*errBox
	for _, e := range registry.streams {
		if s := e.s.Value(); s != nil {
			out = append(out, s)
		} else {
			gone = append(gone, e.errs)
		}
	}
	return out, gone
}

// take returns the box's error and clears it.
func (b *errBox) take() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.err
	b.err = nil
	return err
}

// streamOf returns the stream whose execution made the call, found
// through the FFI user data of the execution's context.
func streamOf(frame *pjrt.FFICallFrame) *Stream {
	if frame.Context == nil {
		return nil
	}
	for _, t := range streamTypeIDs() {
		if id, err := frame.UserData(t); err == nil {
			return lookupStream(id)
		}
	}
	return nil
}

// check reports a nil stream or one not made by NewStream.
func (s *Stream) check(op string) error {
	if s == nil {
		return fmt.Errorf("effects: %s: nil Stream", op)
	}
	if s.id == 0 {
		return fmt.Errorf("effects: %s: the Stream was not made by NewStream (use NewStream or Default)", op)
	}
	return nil
}

// record keeps err if it is the first since the last Barrier. Callbacks
// record their errors while their computation runs, so a computation's
// own error (seen when it has finished) never replaces its callback's.
func (s *Stream) record(err error) {
	s.errs.mu.Lock()
	if s.errs.err == nil {
		s.errs.err = err
	}
	s.errs.mu.Unlock()
}

// recordCallback records a callback's failure, which also fails its
// computation: that computation's error, when a Barrier takes it, is not
// reported a second time (see recordComputation).
func (s *Stream) recordCallback(cerr *CallbackError) {
	s.errs.mu.Lock()
	if s.errs.err == nil {
		s.errs.err = cerr
	}
	if s.errs.callbacks == nil {
		s.errs.callbacks = map[string]int{}
	}
	s.errs.callbacks[cerr.Error()]++
	s.errs.mu.Unlock()
}

// recordComputation records the error of a computation (computationErr),
// unless it is the echo of a callback failure recordCallback recorded.
func (s *Stream) recordComputation(err error) {
	if err == nil {
		return
	}
	msg := err.Error()
	s.errs.mu.Lock()
	defer s.errs.mu.Unlock()
	for m, n := range s.errs.callbacks {
		if strings.Contains(msg, m) {
			if n <= 1 {
				delete(s.errs.callbacks, m)
			} else {
				s.errs.callbacks[m] = n - 1
			}
			return
		}
	}
	if s.errs.err == nil {
		s.errs.err = err
	}
}

// Execute runs exe through the default stream (see Stream.Execute).
func Execute(exe *Executable, args ...*pjrt.Buffer) ([]*pjrt.Buffer, error) {
	return Default().Execute(exe, args...)
}

// Barrier waits for the effects of the default stream (see
// Stream.Barrier).
func Barrier(ctx context.Context) error { return Default().Barrier(ctx) }

// BarrierAll waits for the effects of every stream and returns the first
// callback error of any (each stream's is cleared), streams their
// goroutines dropped while work dispatched on them ran included. Called
// by a callback, it would wait for the callback's own computation: it
// returns an error saying so at once, before waiting for any stream or
// clearing its error (as Stream.Barrier and Stream.Close do).
func BarrierAll(ctx context.Context) error {
	var first error
	live, gone := liveStreams()
	for _, s := range live {
		if err := s.notFromOwnCallback("BarrierAll"); err != nil {
			return err
		}
	}
	for _, s := range live {
		if err := s.Barrier(ctx); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first // the collected streams' errors wait for the next call
	}
	// The collected streams' errors, cleared as the live streams' are:
	// those handed on by their cleanups, then those whose cleanups have
	// not run yet.
	orphaned.mu.Lock()
	if len(orphaned.errs) > 0 {
		first = orphaned.errs[0]
	}
	orphaned.errs = nil
	orphaned.mu.Unlock()
	for _, b := range gone {
		if err := b.take(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Execute runs exe on its first addressable device; see ExecuteOn.
func (s *Stream) Execute(exe *Executable, args ...*pjrt.Buffer) ([]*pjrt.Buffer, error) {
	return s.ExecuteOn(nil, exe, args...)
}

// ExecuteOn runs exe on device dev (nil: exe's first addressable device)
// with args (its own parameters, without tokens) and returns its own
// results, which become ready asynchronously. It never waits for the
// computation nor for earlier ones: for each ordered effect of exe it
// passes the stream's current runtime token (copied to dev if it lives on
// another device) and makes a new token current that is ready when this
// computation has finished, successfully or not; the backend starts the
// computation once its token is ready. A computation with effects leaves
// its completion event for Barrier. A callback that fails fails this
// computation (its outputs carry the *CallbackError's text) and is
// returned by the next Barrier; later computations still run, in order.
// The arguments may be closed as soon as ExecuteOn returns.
func (s *Stream) ExecuteOn(dev *pjrt.Device, exe *Executable, args ...*pjrt.Buffer) ([]*pjrt.Buffer, error) {
	if err := s.check("Execute"); err != nil {
		return nil, err
	}
	if exe == nil || exe.exe == nil {
		return nil, errors.New("effects: Execute: nil executable")
	}
	c := exe.client
	if dev == nil {
		devs := exe.exe.AddressableDevices()
		if len(devs) == 0 {
			return nil, errors.New("effects: Execute: the executable has no addressable device")
		}
		dev = devs[0]
	} else if dev.Client() != c {
		return nil, fmt.Errorf("effects: Execute: device %d belongs to another client", dev.ID())
	}
	if err := exe.checkArgs(args); err != nil {
		return nil, err
	}
	if !exe.lowered.HasEffects() {
		x, err := exe.exe.Execute([][]*pjrt.Buffer{args}, pjrt.ExecuteOptions{Device: dev})
		if err != nil {
			return nil, exe.explain(err, args, dev)
		}
		return x.Outputs[0], nil
	}
	// Close of exe waits for this dispatch to be tracked (or to fail).
	if !exe.begin() {
		return nil, closedError(pjrt.ErrClosed)
	}
	defer exe.end()
	// A program without ordered effects has no token to wait for: its
	// dispatch does not hold the stream's lock either (a callback it runs
	// inside Execute, as a synchronous backend does, may dispatch onto
	// this stream).
	if len(exe.lowered.Ordered) == 0 || exe.tokens.relay {
		return s.executeRelayed(dev, exe, args)
	}
	return s.executeDirect(dev, exe, args)
}

// executeDirect dispatches exe passing the chains' tokens and makes its
// token results current. Its chains are busy from taking their tokens
// until the results are current (the new tokens exist only once Execute
// has returned): a dispatch of the same effects waits, but the stream's
// lock is not held through Execute, so that a callback of a computation
// run inside Execute (a synchronous backend) may dispatch programs of
// other effects onto its own stream. (One of the same effect would wait
// for the computation that runs the callback: a callback must not do
// that.)
func (s *Stream) executeDirect(dev *pjrt.Device, exe *Executable, args []*pjrt.Buffer) ([]*pjrt.Buffer, error) {
	c, t := exe.client, exe.tokens
	n := len(exe.lowered.Ordered)
	full := make([]*pjrt.Buffer, n, n+len(args))
	full = append(full, args...)
	chains := make([]*chain, n)
	s.mu.Lock()
	xctx, err := s.context(c)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	// Every chain at once, when none is busy: a dispatch never holds some
	// of its chains while waiting for others.
	for {
		free := true
		for i, e := range exe.lowered.Ordered {
			ch, err := s.chain(c, e, t)
			if err != nil {
				s.mu.Unlock()
				return nil, err
			}
			chains[i] = ch
			free = free && !ch.busy
		}
		if free {
			break
		}
		s.chainFree.Wait()
	}
	for i, ch := range chains {
		in, err := t.take(ch, dev)
		if err != nil {
			closeTaken(chains[:i], full)
			s.mu.Unlock()
			return nil, fmt.Errorf("effects: Execute: runtime token of effect %q: %w", exe.lowered.Ordered[i], err)
		}
		full[i] = in
	}
	for _, ch := range chains {
		ch.busy = true
	}
	s.inflight++
	s.mu.Unlock()
	x, err := exe.exe.Execute([][]*pjrt.Buffer{full}, pjrt.ExecuteOptions{Device: dev, Context: xctx, CompletionEvents: true})
	s.mu.Lock()
	for _, ch := range chains {
		ch.busy = false
	}
	s.chainFree.Broadcast()
	var outs []*pjrt.Buffer
	var dropped []*pjrt.Buffer // tokens of chains Close dropped meanwhile
	if err != nil {
		closeTaken(chains, full)
	} else {
		outs = x.Outputs[0]
		for i, ch := range chains {
			// The computation holds what it takes: the tokens it replaced
			// can be closed now.
			if ch.cur != nil && ch.cur != full[i] {
				ch.cur.Close()
			}
			full[i].Close()
			ch.cur = outs[i]
			if s.chains[chainKey{c, exe.lowered.Ordered[i]}] != ch {
				dropped = append(dropped, outs[i])
				ch.cur = nil
			}
		}
		s.addPending(x.Completion[0])
		exe.track(x.Completion[0])
	}
	retired := s.endInflight()
	s.mu.Unlock()
	closeAll(dropped)
	closeContexts(retired)
	if err != nil {
		return nil, exe.explain(err, args, dev)
	}
	return outs[n:], nil
}

// closeTaken closes the tokens taken for a dispatch that failed (one per
// chain), except the chains' current ones.
func closeTaken(chains []*chain, taken []*pjrt.Buffer) {
	for i, ch := range chains {
		if taken[i] != ch.cur {
			taken[i].Close()
		}
	}
}

// executeRelayed dispatches exe passing the chains' tokens; each chain's
// new token is an alias buffer that the chain's relay goroutine fulfils
// when the computation has finished (see relay), so the lock is not held
// through the dispatch.
func (s *Stream) executeRelayed(dev *pjrt.Device, exe *Executable, args []*pjrt.Buffer) ([]*pjrt.Buffer, error) {
	c, t := exe.client, exe.tokens
	n := len(exe.lowered.Ordered)
	full := make([]*pjrt.Buffer, n, n+len(args))
	full = append(full, args...)
	relays := make([]*relay, 0, n)
	var replaced []*pjrt.Buffer // current tokens read by a copy
	s.mu.Lock()
	xctx, err := s.context(c)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	for i, e := range exe.lowered.Ordered {
		ch, err := s.chain(c, e, t)
		if err != nil {
			s.mu.Unlock()
			dispatchDone(relays)
			closeAll(replaced)
			return nil, err
		}
		old := ch.cur
		in, err := t.take(ch, dev)
		if err == nil {
			r := &relay{in: in, dispatched: make(chan struct{})}
			var next *pjrt.Buffer
			next, r.next, err = t.c.CreateAliasBuffer(t.shape, pjrt.OnDevice(dev))
			if err == nil {
				ch.cur = next
				if old != nil && old != in {
					replaced = append(replaced, old)
				}
				// In token order: the relay of the computation that takes
				// next comes after this one.
				relays = append(relays, r)
				ch.queue = append(ch.queue, r)
				ch.queued++
				if !ch.running {
					ch.running = true
					go s.relayLoop(ch)
				}
			} else if in != old {
				in.Close()
			}
		}
		if err != nil {
			s.mu.Unlock()
			dispatchDone(relays)
			closeAll(replaced)
			return nil, fmt.Errorf("effects: Execute: runtime token of effect %q: %w", e, err)
		}
		full[i] = in
	}
	s.inflight++
	s.mu.Unlock()
	// Every computation with effects leaves its completion event, so that
	// Barrier waits for it even when Close dropped its chains meanwhile.
	x, err := exe.exe.Execute([][]*pjrt.Buffer{full}, pjrt.ExecuteOptions{
		Device: dev, Context: xctx, CompletionEvents: true,
	})
	closeAll(replaced)
	if err == nil {
		for i, r := range relays {
			r.out = x.Outputs[0][i]
		}
	}
	dispatchDone(relays) // out set: dispatched; nil: never
	s.mu.Lock()
	if err == nil {
		s.addPending(x.Completion[0])
		exe.track(x.Completion[0])
	}
	retired := s.endInflight()
	s.mu.Unlock()
	closeContexts(retired)
	if err != nil {
		return nil, exe.explain(err, args, dev)
	}
	return x.Outputs[0][n:], nil
}

// endInflight ends a dispatch counted in inflight (s.mu held) and returns
// the contexts Close retired meanwhile when it was the last one.
func (s *Stream) endInflight() []*pjrt.ExecuteContext {
	if s.inflight--; s.inflight > 0 {
		return nil
	}
	retired := s.retired
	s.retired = nil
	return retired
}

func closeContexts(xs []*pjrt.ExecuteContext) {
	for _, x := range xs {
		if x != nil {
			x.Close()
		}
	}
}

func closeAll(bufs []*pjrt.Buffer) {
	for _, b := range bufs {
		b.Close()
	}
}

// chain returns the chain of effect e on c for tokens of t, making it
// (s.mu held). Executables whose tokens differ in kind cannot share one.
func (s *Stream) chain(c *pjrt.Client, e string, t *tokenSource) (*chain, error) {
	ch := s.chains[chainKey{c, e}]
	if ch == nil {
		ch = &chain{src: t}
		s.chains[chainKey{c, e}] = ch
	} else if ch.src != t {
		return nil, fmt.Errorf("effects: Execute: effect %q runs on this client with %s, and this executable passes %s: lower the programs of an effect alike (Lower's TokenArrays)", e, ch.src.kind(), t.kind())
	}
	return ch, nil
}

// kind names the runtime tokens of t.
func (t *tokenSource) kind() string {
	if t.arrays {
		return "token arrays (tensor<0xi1>)"
	}
	return "token buffers (!stablehlo.token)"
}

// dispatchDone tells the relays of a dispatch that its Execute returned
// (with their out set) or that it failed before its computation started
// (out nil: they hand the tokens taken on unchanged).
func dispatchDone(relays []*relay) {
	for _, r := range relays {
		close(r.dispatched)
	}
}

// addPending keeps a completion event for Barrier, dropping the fired
// ones (and keeping their errors) whenever the list has doubled (s.mu
// held).
func (s *Stream) addPending(ev *pjrt.Event) {
	s.pending.add(ev, func(p *pjrt.Event) { s.recordComputation(computationErr(p)) })
	if !s.watching && !fired(ev) {
		s.watching = true
		go s.watch()
	}
}

// watch keeps s reachable while computations it dispatched run: a stream
// a goroutine dropped with work in flight is still found by that work's
// callbacks (their errors recorded) and by BarrierAll, which waits for it
// and reports them. It exits when every pending computation has finished.
func (s *Stream) watch() {
	for {
		s.mu.Lock()
		var next *pjrt.Event
		for _, ev := range s.pending.list {
			if !fired(ev) {
				next = ev
				break
			}
		}
		if next == nil {
			s.watching = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		<-next.Done()
	}
}

// relayLoop works through a chain's relays in order, then exits.
func (s *Stream) relayLoop(ch *chain) {
	for {
		s.mu.Lock()
		if len(ch.queue) == 0 {
			ch.queue = nil
			ch.running = false
			if s.relayIdle != nil {
				close(s.relayIdle)
				s.relayIdle = nil
			}
			s.mu.Unlock()
			return
		}
		r := ch.queue[0]
		ch.queue[0] = nil
		ch.queue = ch.queue[1:]
		s.mu.Unlock()
		<-r.dispatched
		src := r.in // not dispatched, or failed: hand on the token it took
		// A failure is not recorded here: the computation's completion
		// event, which its dispatch left for Barrier, reports it once.
		if r.out != nil && r.out.Await(context.Background()) == nil {
			src = r.out
		}
		if err := r.next.Fulfill(src); err != nil {
			r.next.Fail(err)
		}
		r.in.Close()
		if r.out != nil {
			r.out.Close()
		}
		s.mu.Lock()
		ch.finished++
		if s.relayIdle != nil { // a Close waits for this relay
			close(s.relayIdle)
			s.relayIdle = nil
		}
		s.mu.Unlock()
	}
}

// forget drops the stream's chains and execute context on a closed client.
func (s *Stream) forget(c *pjrt.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.chains {
		if k.c == c {
			delete(s.chains, k)
		}
	}
	delete(s.ctxs, c)
}

// context returns the stream's execute context on c, which carries the
// stream's id to callbacks (s.mu held). Backends without execute contexts
// get nil: callbacks still run, and their errors still fail their
// computation, but Barrier cannot report them.
func (s *Stream) context(c *pjrt.Client) (*pjrt.ExecuteContext, error) {
	if x, ok := s.ctxs[c]; ok {
		return x, nil
	}
	var x *pjrt.ExecuteContext
	if id, err := c.Plugin().RegisterFFIType(streamTypeName); err == nil {
		xc, err := c.NewExecuteContext()
		switch {
		case errors.Is(err, pjrt.ErrClosed):
			// Nothing is kept for a closed client (forgetClient has run).
			return nil, closedError(err)
		case err == nil:
			if err := xc.AddFFIUserData(id, s.id); err != nil {
				xc.Close()
				return nil, fmt.Errorf("effects: Execute: %w", err)
			}
			x = xc
		}
	}
	s.ctxs[c] = x
	return x, nil
}

// closedError is the error of a dispatch that found the executable or
// its client closed.
func closedError(err error) error {
	return fmt.Errorf("effects: Execute: the executable or its client is closed: %w", err)
}

// Barrier waits until every computation dispatched through s with
// effects has finished (the runtime token of each ordered effect and the
// output token of each computation with effects), then returns the first
// error since the last Barrier and clears it: a *CallbackError when a
// callback failed, else the error of a computation with effects that
// failed (not one cut short by closing its client: its effects are not
// coming). Barriers of several goroutines each wait for all of it (one of
// them returns an error). It returns ctx's error if ctx ends first.
// Called by a callback of a computation of s (on the callback's own
// goroutine), it would wait for that computation, so for itself: it
// returns an error saying so at once.
func (s *Stream) Barrier(ctx context.Context) error {
	if err := s.check("Barrier"); err != nil {
		return err
	}
	if ctx == nil {
		return errors.New("effects: Barrier: nil context")
	}
	if err := s.notFromOwnCallback("Barrier"); err != nil {
		return err
	}
	s.mu.Lock()
	var wait []*pjrt.Event
	for _, ch := range s.chains {
		if ch.cur != nil {
			// The event, not the buffer: a dispatch may close the buffer.
			if ev, err := ch.cur.Ready(); err == nil {
				wait = append(wait, ev)
			}
		}
	}
	// Another Barrier may be waiting for the same computations: each
	// waits for them all, and the first to see one fired takes it (and
	// its error) off the list.
	seen := slices.Clone(s.pending.list)
	s.mu.Unlock()
	for _, ev := range wait {
		if err := ev.Await(ctx); err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, ev := range seen {
		if err := ev.Await(ctx); err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	s.takeFired(seen)
	s.errs.mu.Lock()
	err := s.errs.err
	s.errs.err = nil
	s.errs.mu.Unlock()
	return err
}

// computationErr is the error a fired completion event reports, but for
// a computation cut short by closing its client (ErrClosed): the caller
// ended it, and its effects are not coming; a Barrier, and a BarrierAll
// over other clients' streams, does not report it.
func computationErr(ev *pjrt.Event) error {
	if err := ev.Err(); err != nil && !errors.Is(err, pjrt.ErrClosed) {
		return err
	}
	return nil
}

// takeFired takes the events of fired (all fired) still pending off the
// list, recording their errors in the list's order.
func (s *Stream) takeFired(fired []*pjrt.Event) {
	set := make(map[*pjrt.Event]bool, len(fired))
	for _, ev := range fired {
		set[ev] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending.list = slices.DeleteFunc(s.pending.list, func(ev *pjrt.Event) bool {
		if !set[ev] {
			return false
		}
		s.recordComputation(computationErr(ev))
		return true
	})
}

// Close waits for the stream's effects as Barrier does and returns what
// Barrier returns, then releases the stream's runtime tokens and execute
// contexts. The stream stays usable: its next computation of an effect
// starts a new chain (every earlier one has finished). If ctx ends first
// it returns ctx's error and releases nothing. Computations dispatched
// while Close runs are not waited for (they finish, their callbacks run),
// nor ordered against the later ones. Called by a callback of a
// computation of s, it is an error, as Barrier is.
func (s *Stream) Close(ctx context.Context) error {
	// The relays of the computations dispatched before Close: Barrier
	// waits for those computations, and then for the relays to release
	// the tokens they hand on; relays of dispatches racing Close are not
	// waited for.
	var before map[*chain]uint64
	if s.check("Close") == nil {
		if err := s.notFromOwnCallback("Close"); err != nil {
			return err
		}
		s.mu.Lock()
		before = make(map[*chain]uint64, len(s.chains))
		for _, ch := range s.chains {
			before[ch] = ch.queued
		}
		s.mu.Unlock()
	}
	err := s.Barrier(ctx)
	if s.check("Close") != nil || ctx == nil {
		return err
	}
	if err != nil && ctx.Err() != nil && (errors.Is(err, ctx.Err()) || errors.Is(err, context.Cause(ctx))) {
		return err // ctx ended before the effects did: release nothing
	}
	// The effects are done (even if ctx has ended since): release, waiting
	// only for relays still handing tokens on.
	s.mu.Lock()
	for relaysBefore(before) {
		if s.relayIdle == nil {
			s.relayIdle = make(chan struct{})
		}
		idle := s.relayIdle
		s.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			// The Barrier's error (a callback's), taken from the stream,
			// is not lost with the context's.
			return errors.Join(err, ctx.Err())
		}
		s.mu.Lock()
	}
	chains, ctxs := s.chains, s.ctxs
	s.chains = map[chainKey]*chain{}
	s.ctxs = map[*pjrt.Client]*pjrt.ExecuteContext{}
	var idle []*pjrt.Buffer
	for _, ch := range chains {
		// A chain with relays not finished, or busy, belongs to a
		// dispatch that raced Close: its token is left to that dispatch
		// (a direct one closes its results) or to the garbage collector.
		if ch.cur != nil && ch.finished == ch.queued && !ch.busy {
			idle = append(idle, ch.cur)
		}
	}
	if s.inflight > 0 {
		// Dispatches racing Close still use them: the last one closes them.
		s.retired = append(s.retired, slices.Collect(maps.Values(ctxs))...)
		ctxs = nil
	}
	s.mu.Unlock()
	closeAll(idle)
	for _, x := range ctxs {
		if x != nil {
			x.Close()
		}
	}
	return err
}

// relaysBefore reports whether a chain has not finished the relays it
// had queued when Close began (before; s.mu held).
func relaysBefore(before map[*chain]uint64) bool {
	for ch, n := range before {
		if ch.finished < n {
			return true
		}
	}
	return false
}

// tokenSource makes the runtime tokens of one client.
type tokenSource struct {
	c      *pjrt.Client
	arrays bool
	shape  xla.Shape

	once  sync.Once
	err   error
	maker *pjrt.Executable // returns one fresh token (token mode)

	// relay: chains hand tokens on through alias buffers and relays (see
	// relay); otherwise a computation's token results become the chain's
	// tokens themselves (see tokensFor).
	relay bool
}

// take returns the chain's current token on dev, making the chain's first
// one or copying it from another device (s.mu held).
func (t *tokenSource) take(ch *chain, dev *pjrt.Device) (*pjrt.Buffer, error) {
	if ch.cur == nil {
		return t.fresh(dev)
	}
	d, err := ch.cur.Device()
	if err != nil {
		return nil, err
	}
	if d == dev {
		return ch.cur, nil
	}
	return ch.cur.CopyToDevice(dev)
}

// fresh makes a new ready token on dev (nil: the default device).
func (t *tokenSource) fresh(dev *pjrt.Device) (*pjrt.Buffer, error) {
	if t.arrays {
		return t.c.BufferFromHost(nil, t.shape, pjrt.OnDevice(dev), pjrt.CopyDuringCall())
	}
	t.once.Do(func() {
		t.maker, t.err = t.c.Compile(pjrt.MLIRText("func.func @main() -> !stablehlo.token {\n  %0 = stablehlo.after_all : !stablehlo.token\n  return %0 : !stablehlo.token\n}\n"), nil)
	})
	if t.err != nil {
		return nil, t.err
	}
	x, err := t.maker.Execute([][]*pjrt.Buffer{{}}, pjrt.ExecuteOptions{Device: dev})
	if err != nil {
		return nil, err
	}
	return x.Outputs[0][0], nil
}

// callbackStarted and callbackEnded bracket a callback of s running on
// goroutine g.
func (s *Stream) callbackStarted(g uint64) {
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	if s.callbacks == nil {
		s.callbacks = map[uint64]int{}
	}
	s.callbacks[g]++
}

func (s *Stream) callbackEnded(g uint64) {
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	if s.callbacks[g]--; s.callbacks[g] == 0 {
		delete(s.callbacks, g)
	}
}

// notFromOwnCallback refuses op (Barrier, Close) called by a callback of
// s: it would wait for the computation that runs the callback, so for
// itself, until its context ended (for ever with context.Background).
func (s *Stream) notFromOwnCallback(op string) error {
	s.cbMu.Lock()
	n := len(s.callbacks)
	s.cbMu.Unlock()
	if n == 0 {
		return nil // the common case costs no goroutine id
	}
	g := goroutineID()
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	if s.callbacks[g] > 0 {
		return fmt.Errorf("effects: %s called by a callback of a computation of this stream: it would wait for that computation, so for itself (call it after the computation, from outside its callbacks)", op)
	}
	return nil
}

// goroutineID is the running goroutine's id, as its stack trace's first
// line ("goroutine 42 [running]:") gives it; 0 if that cannot be read.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if !ok {
		return 0
	}
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
