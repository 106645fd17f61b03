package pjrt

import (
	"sync"
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
	e := p.onReady(ev, op, onReady)
	if ev != 0 {
		p.destroyEvent(ev)
	}
	return e
}

// onReady registers the OnReady trampoline on a PJRT_Event and returns its
// Go view; the caller keeps (and later destroys) the C event.
func (p *cPlugin) onReady(ev uintptr, op string, onReady func(error)) *cEvent {
	e := &cEvent{done: make(chan struct{}), onReady: onReady}
	if ev == 0 {
		e.complete(nil)
		return e
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
		e.complete(err)
	}
	return e
}

func (p *cPlugin) destroyEvent(ev uintptr) {
	args := &capi.PJRT_Event_Destroy_Args{StructSize: capi.PJRT_Event_Destroy_Args_STRUCT_SIZE, Event: ev}
	_ = p.call(capi.SlotPJRT_Event_Destroy, unsafe.Pointer(args), nil)
}
