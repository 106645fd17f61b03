package pjrt

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/capi"
	"github.com/halo-ml/halo/pjrt/backend"
)

// cUserEvent is a PJRT_Event made by PJRT_Event_Create. Its Go view is fed
// by the OnReady trampoline; the C handle lives until Close.
type cUserEvent struct {
	*cEvent
	p         *cPlugin
	h         uintptr
	mu        sync.Mutex
	set       bool
	closeOnce sync.Once
}

// NewUserEvent implements backend.EventCreator.
func (p *cPlugin) NewUserEvent() (backend.UserEvent, error) {
	a := &capi.PJRT_Event_Create_Args{StructSize: capi.PJRT_Event_Create_Args_STRUCT_SIZE}
	if err := p.call(capi.SlotPJRT_Event_Create, unsafe.Pointer(a), nil); err != nil {
		return nil, err
	}
	u := &cUserEvent{p: p, h: a.Event}
	u.cEvent = p.onReady(a.Event, "PJRT_Event_Set", nil)
	return u, nil
}

func (u *cUserEvent) Handle() uintptr { return u.h }

func (u *cUserEvent) Set(code int, msg string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.set {
		return errorf(FailedPrecondition, "PJRT_Event_Set", "the event was already set")
	}
	var pin runtime.Pinner
	m, mp := bytesArg(msg, &pin)
	a := &capi.PJRT_Event_Set_Args{
		StructSize:       capi.PJRT_Event_Set_Args_STRUCT_SIZE,
		Event:            u.h,
		ErrorCode:        capi.PJRT_Error_Code(code),
		ErrorMessage:     mp,
		ErrorMessageSize: uint64(len(msg)),
	}
	err := u.p.call(capi.SlotPJRT_Event_Set, unsafe.Pointer(a), &pin)
	runtime.KeepAlive(m)
	if err == nil {
		u.set = true
	}
	return err
}

func (u *cUserEvent) Close() error {
	var err error
	u.closeOnce.Do(func() {
		u.mu.Lock()
		set := u.set
		u.mu.Unlock()
		if !set {
			_ = u.Set(int(Cancelled), "the user event was closed before it was set")
		}
		u.p.destroyEvent(u.h)
	})
	return err
}

// The payload visitor trampoline of PJRT_Error_ForEachPayload: one purego
// callback for void (*)(const char *key, size_t key_size, const char *value,
// size_t value_size, void *user_arg); user_arg is a handle into
// payloadSinks. The visitor runs during the ForEachPayload call.
var (
	payloadOnce  sync.Once
	payloadFn    uintptr
	payloadMu    sync.Mutex
	payloadSinks = map[uintptr]map[string]string{}
	payloadNext  uintptr
)

func payloadTrampoline() uintptr {
	payloadOnce.Do(func() {
		payloadFn = purego.NewCallback(func(key, keySize, value, valueSize, userArg uintptr) uintptr {
			k := goStringN(key, int(keySize))
			v := goStringN(value, int(valueSize))
			payloadMu.Lock()
			if m := payloadSinks[userArg]; m != nil {
				m[k] = v
			}
			payloadMu.Unlock()
			return 0
		})
	})
	return payloadFn
}

// errorPayloads returns the payloads of a PJRT_Error (nil when it has none
// or the plugin predates PJRT_Error_ForEachPayload).
func (p *cPlugin) errorPayloads(e uintptr) map[string]string {
	fn := p.slots[capi.SlotPJRT_Error_ForEachPayload]
	if fn == 0 {
		return nil
	}
	payloadMu.Lock()
	payloadNext++
	h := payloadNext
	sink := map[string]string{}
	payloadSinks[h] = sink
	payloadMu.Unlock()
	a := &capi.PJRT_Error_ForEachPayload_Args{
		StructSize: capi.PJRT_Error_ForEachPayload_Args_STRUCT_SIZE,
		Error:      e,
		Visitor:    payloadTrampoline(),
		UserArg:    h,
	}
	var pin runtime.Pinner
	pin.Pin(a)
	r, _, _ := purego.SyscallN(fn, uintptr(unsafe.Pointer(a)))
	pin.Unpin()
	payloadMu.Lock()
	delete(payloadSinks, h)
	payloadMu.Unlock()
	if r != 0 {
		// An error about the error: drop it without asking for payloads.
		p.destroyError(r)
	}
	if len(sink) == 0 {
		return nil
	}
	return sink
}

// destroyError destroys a PJRT_Error without reading it.
func (p *cPlugin) destroyError(e uintptr) {
	d := &capi.PJRT_Error_Destroy_Args{StructSize: capi.PJRT_Error_Destroy_Args_STRUCT_SIZE, Error: e}
	var pin runtime.Pinner
	pin.Pin(d)
	purego.SyscallN(p.slots[capi.SlotPJRT_Error_Destroy], uintptr(unsafe.Pointer(d)))
	pin.Unpin()
}
