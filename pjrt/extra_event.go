package pjrt

import (
	"runtime"
	"sync"

	"github.com/halo-ml/halo/pjrt/backend"
)

// UserEvent is an event the caller completes (PJRT_Event_Create and
// PJRT_Event_Set), for handing to a plugin API that waits on a PJRT_Event.
// Its Event fires when Set is called.
//
// The plugin's own events (transfers, executions) are exposed as *Event,
// completed by a PJRT_Event_OnReady callback; waits that cannot be
// cancelled block in PJRT_Event_Await, and PJRT_Event_IsReady polls where
// a plugin's OnReady fails (see the package documentation).
type UserEvent struct {
	b  backend.UserEvent
	ev *Event

	mu     sync.Mutex
	closed bool
}

// NewUserEvent creates an event to be completed with Set.
func (p *Plugin) NewUserEvent() (*UserEvent, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	x, ok := p.b.(backend.EventCreator)
	if !ok {
		return nil, notSupported("PJRT_Event_Create", "user events", p)
	}
	b, err := x.NewUserEvent()
	if err != nil {
		return nil, err
	}
	u := &UserEvent{b: b, ev: newEvent(nil, b)}
	runtime.AddCleanup(u, func(b backend.UserEvent) { b.Close() }, b)
	return u, nil
}

// Event fires when Set is called, with Set's error. A nil user event's is
// a nil *Event: its Done channel is closed, and Err and Await report the
// nil event.
func (u *UserEvent) Event() *Event {
	if u == nil {
		return nil
	}
	return u.ev
}

// Set completes the event, successfully when err is nil. It may be called
// once.
func (u *UserEvent) Set(err error) error {
	if u == nil {
		return errorf(InvalidArgument, "UserEvent", "user event is nil")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return ErrClosed
	}
	code, msg := errorCode(err)
	return u.b.Set(code, msg)
}

// Handle is the plugin's PJRT_Event* of the event, valid until Close; 0
// after Close (and for a nil event).
func (u *UserEvent) Handle() uintptr {
	if u == nil {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return 0
	}
	return u.b.Handle()
}

// Close releases the event; an event not yet set completes with Cancelled.
// It is idempotent, and a nil event closes without error.
func (u *UserEvent) Close() error {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return nil
	}
	u.closed = true
	return u.b.Close()
}
