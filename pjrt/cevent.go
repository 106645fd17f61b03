package pjrt

import (
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/capi"
)

// cEvent is a PJRT_Event turned into a Go channel. The C event is handed an
// OnReady callback at once and destroyed right after (the plugin keeps the
// callback alive), so no C handle outlives the call that produced it.
type cEvent struct {
	done    chan struct{}
	err     error
	onReady func(error) // run once, before done is closed (may be nil)
}

func (e *cEvent) Done() <-chan struct{} { return e.done }
func (e *cEvent) Err() error            { return e.err }

// The OnReady trampoline: one purego callback for the C signature
// void (*)(PJRT_Error* error, void* user_arg); user_arg is a handle into
// this table, never a Go pointer.
var (
	onReadyOnce sync.Once
	onReadyFn   uintptr
	handlesMu   sync.Mutex
	handles     = map[uintptr]*pendingEvent{}
	nextHandle  uintptr
)

type pendingEvent struct {
	ev *cEvent
	p  *cPlugin
	op string
}

func onReadyTrampoline() uintptr {
	onReadyOnce.Do(func() {
		onReadyFn = purego.NewCallback(func(errPtr uintptr, userArg uintptr) uintptr {
			handlesMu.Lock()
			pe := handles[userArg]
			delete(handles, userArg)
			handlesMu.Unlock()
			if pe == nil {
				return 0
			}
			var err error
			if errPtr != 0 {
				err = pe.p.takeError(errPtr, pe.op, "", 0)
			}
			pe.ev.complete(err)
			return 0
		})
	})
	return onReadyFn
}

func (e *cEvent) complete(err error) {
	e.err = err
	if e.onReady != nil {
		e.onReady(err)
	}
	close(e.done)
}

// pendingEvents is the number of events whose callback has not arrived.
func pendingEvents() int {
	handlesMu.Lock()
	defer handlesMu.Unlock()
	return len(handles)
}

// watchEvent turns a PJRT_Event* into a cEvent and destroys the C event.
// A zero event is already complete. onReady (may be nil) runs when the
// event completes, before Done is closed.
func (p *cPlugin) watchEvent(ev uintptr, op string, onReady func(error)) *cEvent {
	e, err := p.register(ev, op, onReady)
	if err == nil {
		if ev != 0 {
			p.destroyEvent(ev)
		}
		return e
	}
	// The plugin took no callback: the event may still be pending (a copy
	// still writing into memory onReady would release), so poll it.
	go p.pollEvent(ev, op, e, err)
	return e
}

// pollEvent completes e when ev is ready, asking PJRT_Event_IsReady with
// growing pauses, then destroys ev; it is the fallback of a plugin that
// refused the OnReady callback (cause). When the plugin cannot say either,
// e fails with cause and what its onReady would release is kept forever:
// memory the plugin may still write must not be reused.
func (p *cPlugin) pollEvent(ev uintptr, op string, e *cEvent, cause error) {
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		ready, err := p.eventReady(ev)
		if err != nil {
			leaked.Lock()
			leaked.kept = append(leaked.kept, e.onReady)
			leaked.Unlock()
			e.onReady = nil
			e.complete(cause)
			return
		}
		if ready {
			err := p.eventError(ev, op)
			p.destroyEvent(ev)
			e.complete(err)
			return
		}
		time.Sleep(pause)
	}
}

// leaked keeps what the completion of an event of unknown state would
// have released (pinned host memory and the pins themselves).
var leaked struct {
	sync.Mutex
	kept []any
}

// eventReady is PJRT_Event_IsReady.
func (p *cPlugin) eventReady(ev uintptr) (bool, error) {
	a := &capi.PJRT_Event_IsReady_Args{StructSize: capi.PJRT_Event_IsReady_Args_STRUCT_SIZE, Event: ev}
	if err := p.call(capi.SlotPJRT_Event_IsReady, unsafe.Pointer(a), nil); err != nil {
		return false, err
	}
	return a.IsReady, nil
}

// eventError is the error of ready event ev (PJRT_Event_Error), named
// after op, the call that made the event.
func (p *cPlugin) eventError(ev uintptr, op string) error {
	a := &capi.PJRT_Event_Error_Args{StructSize: capi.PJRT_Event_Error_Args_STRUCT_SIZE, Event: ev}
	err := p.call(capi.SlotPJRT_Event_Error, unsafe.Pointer(a), nil)
	if e, ok := err.(*Error); ok {
		e.Op = op
	}
	return err
}

// onReady registers the OnReady trampoline on a PJRT_Event and returns its
// Go view; the caller keeps (and later destroys) the C event.
func (p *cPlugin) onReady(ev uintptr, op string, onReady func(error)) *cEvent {
	e, err := p.register(ev, op, onReady)
	if err != nil {
		e.complete(err)
	}
	return e
}

// register is onReady, except that when the plugin refuses the callback
// it returns the error and leaves e pending.
func (p *cPlugin) register(ev uintptr, op string, onReady func(error)) (*cEvent, error) {
	e := &cEvent{done: make(chan struct{}), onReady: onReady}
	if ev == 0 {
		e.complete(nil)
		return e, nil
	}
	handlesMu.Lock()
	nextHandle++
	h := nextHandle
	handles[h] = &pendingEvent{ev: e, p: p, op: op}
	handlesMu.Unlock()
	args := &capi.PJRT_Event_OnReady_Args{
		StructSize: capi.PJRT_Event_OnReady_Args_STRUCT_SIZE,
		Event:      ev,
		Callback:   onReadyTrampoline(),
		UserArg:    h,
	}
	if err := p.call(capi.SlotPJRT_Event_OnReady, unsafe.Pointer(args), nil); err != nil {
		handlesMu.Lock()
		delete(handles, h)
		handlesMu.Unlock()
		return e, err
	}
	return e, nil
}

func (p *cPlugin) destroyEvent(ev uintptr) {
	args := &capi.PJRT_Event_Destroy_Args{StructSize: capi.PJRT_Event_Destroy_Args_STRUCT_SIZE, Event: ev}
	_ = p.call(capi.SlotPJRT_Event_Destroy, unsafe.Pointer(args), nil)
}
