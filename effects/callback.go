package effects

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"
	"weak"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Target is the custom-call target of every host callback: one typed-FFI
// handler, registered once per plugin, that finds the Go function through
// the FuncAttr attribute.
const Target = "halo.effects.callback"

// Attributes of a callback's backend_config dictionary (besides
// pjrt.FFICallbackAttr, which routes the call to the handler).
const (
	// FuncAttr holds the id of the Go function in the callback table (i64).
	FuncAttr = "halo.effects.func"
	// NameAttr holds the callback's name (string), for errors.
	NameAttr = "halo.effects.name"
	// OrderedAttr holds the name of the callback's ordered effect (string);
	// absent for unordered callbacks.
	OrderedAttr = "halo.effects.ordered"
)

// HostFunc is a Go function called from device code.
type HostFunc struct {
	// Name names the callback in errors.
	Name string
	// Fn receives one Array per operand (host copies, valid after the call)
	// and returns one Array per entry of Results, of that shape.
	Fn func(args []Array) ([]Array, error)
	// Results are the shapes of the values the callback returns to the
	// program.
	Results []xla.Shape
}

// hostFunc is an entry of the callback table.
type hostFunc struct {
	HostFunc
	effect Effect
	// refs counts the entry's owners: the modules that hold a call of it
	// (until they are garbage collected) and the executables compiled from
	// them (until Close).
	refs int
}

// The callback table: programs name their callbacks by id (FuncAttr).
// Ids are never reused. An entry lives while a module that calls it
// (the one Callback built into, or Lower's copy of it) is reachable, or an
// Executable compiled from one is open; then it is removed.
var table struct {
	mu     sync.RWMutex
	next   int64
	fns    map[int64]*hostFunc
	owners map[weak.Pointer[stablehlo.Module]]*moduleFuncs
}

// moduleFuncs are the callback ids a module owns a reference to.
type moduleFuncs struct{ ids []int64 }

// addFunc adds f to the table, owned by m, and returns its id.
func addFunc(f *hostFunc, m *stablehlo.Module) int64 {
	table.mu.Lock()
	defer table.mu.Unlock()
	if table.fns == nil {
		table.fns = map[int64]*hostFunc{}
		table.owners = map[weak.Pointer[stablehlo.Module]]*moduleFuncs{}
	}
	table.next++
	id := table.next
	f.refs = 1
	table.fns[id] = f
	ownLocked(m, id)
	return id
}

// ownLocked records that m owns a reference to id (table.mu held); the
// reference is dropped when m is garbage collected.
func ownLocked(m *stablehlo.Module, id int64) {
	w := weak.Make(m)
	o := table.owners[w]
	if o == nil {
		o = &moduleFuncs{}
		table.owners[w] = o
		runtime.AddCleanup(m, releaseModule, w)
	}
	o.ids = append(o.ids, id)
}

// releaseModule drops the references of a collected module.
func releaseModule(w weak.Pointer[stablehlo.Module]) {
	table.mu.Lock()
	defer table.mu.Unlock()
	if o := table.owners[w]; o != nil {
		delete(table.owners, w)
		unrefLocked(o.ids)
	}
}

// shareFuncs makes m (Lower's copy of a module) an owner of the callbacks
// it calls that are in the table.
func shareFuncs(m *stablehlo.Module) {
	ids := callbackIDs(m)
	table.mu.Lock()
	defer table.mu.Unlock()
	for _, id := range ids {
		if f := table.fns[id]; f != nil {
			f.refs++
			ownLocked(m, id)
		}
	}
}

// acquireFuncs takes a reference to each callback m calls, for an
// executable; every one must be in the table.
func acquireFuncs(m *stablehlo.Module) ([]int64, error) {
	ids := callbackIDs(m)
	table.mu.Lock()
	defer table.mu.Unlock()
	for _, id := range ids {
		if table.fns[id] == nil {
			return nil, fmt.Errorf("effects: the program calls callback %d, which is not in this process's callback table (built by another process, or every module and executable that held it is gone)", id)
		}
	}
	for _, id := range ids {
		table.fns[id].refs++
	}
	return ids, nil
}

// releaseFuncs drops an executable's references.
func releaseFuncs(ids []int64) {
	table.mu.Lock()
	defer table.mu.Unlock()
	unrefLocked(ids)
}

func unrefLocked(ids []int64) {
	for _, id := range ids {
		if f := table.fns[id]; f != nil {
			if f.refs--; f.refs <= 0 {
				delete(table.fns, id)
			}
		}
	}
}

func lookupFunc(id int64) *hostFunc {
	table.mu.RLock()
	defer table.mu.RUnlock()
	return table.fns[id]
}

// tableSize is the number of callbacks in the table.
func tableSize() int {
	table.mu.RLock()
	defer table.mu.RUnlock()
	return len(table.fns)
}

// callbackIDs returns the distinct callback ids m calls, in the order
// first seen.
func callbackIDs(m *stablehlo.Module) []int64 {
	var ids []int64
	seen := map[int64]bool{}
	for _, f := range m.Funcs {
		f.Walk(func(op *stablehlo.Op) bool {
			if _, ok := callbackEffect(op); ok {
				cfg, _ := op.Attr("backend_config").(stablehlo.DictAttr)
				if v, ok := cfg.Get(FuncAttr).(stablehlo.IntAttr); ok && !seen[v.Value] {
					seen[v.Value] = true
					ids = append(ids, v.Value)
				}
			}
			return true
		})
	}
	return ids
}

// Callback adds a call of f to the function fb builds: a
// stablehlo.custom_call to Target with has_side_effect = true and
// api_version = 4 (typed FFI), whose backend_config names f's entry in the
// callback table. It returns f's results as values of fb. An ordered
// callback gets its token operand and result from Lower. Bad input (no Fn,
// an ordered effect without a name, a result shape that is not valid, an
// operand that is not a tensor) is an error naming the problem, which is
// also recorded as the builder's error (Build returns it, like the errors
// of the builder's own ops), and nothing is added.
func Callback(fb *stablehlo.FuncBuilder, f HostFunc, kind Effect, operands ...*stablehlo.Value) ([]*stablehlo.Value, error) {
	if fb.Builder() == nil {
		return nil, errors.New("effects: Callback: nil FuncBuilder")
	}
	const op = "effects.callback"
	if f.Fn == nil {
		return nil, fail(fb, op, fmt.Errorf("callback %q has no Fn", f.Name), operands)
	}
	if kind.ordered && kind.name == "" {
		return nil, fail(fb, op, fmt.Errorf("callback %q: an ordered effect needs a name", f.Name), operands)
	}
	for i, v := range operands {
		if v == nil {
			return nil, fail(fb, op, fmt.Errorf("callback %q: operand %d is nil", f.Name, i), operands)
		}
		if _, ok := v.Type.(stablehlo.TensorType); !ok {
			return nil, fail(fb, op, fmt.Errorf("callback %q: operand %d is %v; callbacks take tensors", f.Name, i, v.Type), operands)
		}
	}
	types := make([]stablehlo.Type, len(f.Results))
	for i, s := range f.Results {
		if err := s.Validate(); err != nil {
			return nil, fail(fb, op, fmt.Errorf("callback %q: result %d: %w", f.Name, i, err), operands)
		}
		types[i] = stablehlo.TensorOf(s)
	}
	entry := &hostFunc{HostFunc: f, effect: kind}
	entry.Results = append([]xla.Shape(nil), f.Results...)
	id := addFunc(entry, fb.Builder().Module())
	cfg := stablehlo.DictAttr{
		{Name: pjrt.FFICallbackAttr, Value: stablehlo.I64Attr(pjrt.FFICallbackID(Target))},
		{Name: FuncAttr, Value: stablehlo.I64Attr(id)},
		{Name: NameAttr, Value: stablehlo.StringAttr(f.Name)},
	}
	if kind.ordered {
		cfg = append(cfg, stablehlo.NamedAttr{Name: OrderedAttr, Value: stablehlo.StringAttr(kind.name)})
	}
	out := fb.CustomCall(Target, operands, types, stablehlo.CustomCallConfig{
		BackendConfig: cfg, APIVersion: 4, HasSideEffect: true,
	})
	if err := fb.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// fail records err, bad input to op (given operands), as fb's builder
// error (stablehlo.FuncBuilder.Fail), so that Build reports it even where
// the caller drops it, and returns the error recorded: a
// *stablehlo.BuildError, which names op, the operands' types and the
// caller's file:line before err's text, "stablehlo:
// effects.print(tensor<3xf32>) at f.go:12: print format ...". err's text
// is the message only: no package prefix, no op. When the builder had an
// earlier error, fail returns err with this package's prefix, "effects:
// print format ...".
func fail(fb *stablehlo.FuncBuilder, op string, err error, operands []*stablehlo.Value) error {
	fb.Fail(op, err, operands...)
	if be := fb.Err(); be != nil && errors.Is(be, err) {
		return be
	}
	return fmt.Errorf("effects: %w", err)
}

// PrintEffect is the ordered effect of Print.
var PrintEffect = Ordered("print")

// Print adds an ordered print (effect PrintEffect) to the program: when
// the program runs, format is applied to the values as fmt.Printf does and
// the line is written to os.Stdout, with a newline added unless format
// ends in one. Each value is an Array, whose Format applies the verb to
// its elements: %v prints it like a Go slice, %d the elements of an
// integer array, %.3f those of a float array, and so on. A format that
// does not fit the values (a verb without a value, a value no verb
// formats, a verb the value's element type does not take, a width or
// precision read from a value with *) is an error naming the problems,
// also recorded as the builder's error (Build returns it), and nothing is
// added.
func Print(fb *stablehlo.FuncBuilder, format string, values ...*stablehlo.Value) error {
	return Fprint(fb, nil, PrintEffect, format, values...)
}

// Fprint is Print writing to w (os.Stdout when nil, looked up at each
// call) under the effect kind.
func Fprint(fb *stablehlo.FuncBuilder, w io.Writer, kind Effect, format string, values ...*stablehlo.Value) error {
	if err := checkFormat(format, values); err != nil && fb.Builder() != nil {
		return fail(fb, "effects.print", err, values)
	}
	name := "print " + strings.TrimSpace(format)
	fn := func(args []Array) ([]Array, error) {
		vals := make([]any, len(args))
		for i, a := range args {
			vals[i] = a
		}
		line := fmt.Sprintf(format, vals...)
		if !strings.HasSuffix(line, "\n") {
			line += "\n"
		}
		out := w
		if out == nil {
			out = os.Stdout
		}
		_, err := io.WriteString(out, line)
		return nil, err
	}
	_, err := Callback(fb, HostFunc{Name: name, Fn: fn}, kind, values...)
	return err
}

// CallbackError is the error of a callback that returned an error or
// panicked: the execution that ran it fails with it (its message names the
// callback), and the Stream's Barrier returns it.
type CallbackError struct {
	// Callback is the HostFunc's Name.
	Callback string
	// Err is what the function returned, or a *PanicError.
	Err error
}

// Error names the callback and the cause.
func (e *CallbackError) Error() string {
	return fmt.Sprintf("effects: callback %q: %v", e.Callback, e.Err)
}

// Unwrap returns the callback's error.
func (e *CallbackError) Unwrap() error { return e.Err }

// PanicError is a callback's recovered panic.
type PanicError struct{ Value any }

// Error formats the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// handle is the typed-FFI handler of Target.
func handle(frame *pjrt.FFICallFrame) error {
	if frame.Stage != pjrt.FFIStageExecute {
		return nil
	}
	id, ok := frame.Attrs[FuncAttr].(int64)
	if !ok {
		return fmt.Errorf("effects: custom call %s has no i64 attribute %s", Target, FuncAttr)
	}
	f := lookupFunc(id)
	if f == nil {
		return fmt.Errorf("effects: no callback with id %d in this process (the program was built by another process?)", id)
	}
	dev := deviceMemory(frame)
	args := make([]Array, 0, len(frame.Args))
	for i, b := range frame.Args {
		if b.DType == xla.Invalid { // a token
			continue
		}
		data, err := OperandBytes(frame, i)
		if err != nil {
			return fmt.Errorf("effects: callback %q: operand: %w", f.Name, err)
		}
		args = append(args, Array{DType: b.DType, Dims: append([]int64(nil), b.Dims...), Data: data})
	}
	s := streamOf(frame)
	res, err := call(f, args, s)
	if err == nil {
		err = writeResults(dev, f, frame.Rets, res)
	}
	if err != nil {
		cerr := &CallbackError{Callback: f.Name, Err: err}
		if s != nil {
			s.recordCallback(cerr)
		}
		return cerr
	}
	return nil
}

// call runs f.Fn, turning a panic into a *PanicError. While it runs, its
// goroutine is one of s's callbacks (s nil: of no stream's).
func call(f *hostFunc, args []Array, s *Stream) (res []Array, err error) {
	// The function runs on a goroutine of its own, so that one calling
	// runtime.Goexit (t.FailNow in a test, say) ends that goroutine and
	// fails its call instead of the backend's thread that called the
	// handler (whose computation would then never finish).
	done := make(chan struct{})
	go func() {
		returned := false
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v}
			} else if !returned {
				err = &PanicError{Value: "the callback called runtime.Goexit"}
			}
			close(done)
		}()
		if s != nil { // ended before done is closed, panic or not
			g := goroutineID()
			s.callbackStarted(g)
			defer s.callbackEnded(g)
		}
		res, err = f.Fn(args)
		returned = true
	}()
	<-done
	return res, err
}

// writeResults checks res against the declared results and copies them
// into the call's result buffers.
func writeResults(dev uintptr, f *hostFunc, rets []pjrt.FFIBuffer, res []Array) error {
	k := 0
	for _, r := range rets {
		if r.DType == xla.Invalid {
			continue
		}
		if k >= len(res) {
			break
		}
		want := xla.MakeShape(r.DType, r.Dims...)
		if !res[k].Shape().Equal(want) {
			return fmt.Errorf("result %d is %v, want %v", k, res[k].Shape(), want)
		}
		if int64(len(res[k].Data)) != want.HostBytes() {
			return fmt.Errorf("result %d (%v) has %d data bytes, want %d", k, want, len(res[k].Data), want.HostBytes())
		}
		if err := copyOut(dev, r.Data, res[k].Data); err != nil {
			return fmt.Errorf("result %d: %w", k, err)
		}
		k++
	}
	if k != len(res) || k != len(f.Results) {
		return fmt.Errorf("returned %d arrays for %d results", len(res), len(f.Results))
	}
	return nil
}

// OperandBytes returns a host copy of argument i of a typed-FFI call:
// read where it is on the interpreter and CPU plugins, copied from device
// memory on the call's stream on GPU plugins. For handlers other than
// effects' own that read their operands (pallas's bounds checks).
func OperandBytes(frame *pjrt.FFICallFrame, i int) ([]byte, error) {
	if frame == nil {
		return nil, errors.New("effects: OperandBytes: nil call frame")
	}
	if i < 0 || i >= len(frame.Args) {
		return nil, fmt.Errorf("effects: operand %d of a call with %d", i, len(frame.Args))
	}
	b := frame.Args[i]
	out := make([]byte, xla.Shape{DType: b.DType, Dims: b.Dims}.HostBytes())
	if err := copyIn(deviceMemory(frame), out, b.Data); err != nil {
		return nil, err
	}
	return out, nil
}

// copyIn copies an operand into host memory.
func copyIn(dev uintptr, dst []byte, src unsafe.Pointer) error {
	if len(dst) == 0 {
		return nil
	}
	if dev != 0 {
		return copyFromDevice(dev, dst, src)
	}
	copy(dst, unsafe.Slice((*byte)(src), len(dst)))
	return nil
}

// copyOut copies a result from host memory into the call's result buffer.
func copyOut(dev uintptr, dst unsafe.Pointer, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if dev != 0 {
		return copyToDevice(dev, dst, src)
	}
	copy(unsafe.Slice((*byte)(dst), len(src)), src)
	return nil
}

// deviceMemory returns the device stream of the call when its buffers are
// device memory (GPU plugins give the handler their stream), else 0: the
// interpreter and CPU plugins pass host memory.
func deviceMemory(frame *pjrt.FFICallFrame) uintptr {
	if frame.Context == nil {
		return 0
	}
	s, err := frame.Context.Stream()
	if err != nil {
		return 0
	}
	return s
}

// registration is what Register did for one plugin and user-data type.
type registration struct {
	once sync.Once
	err  error
}

type registrationKey struct {
	plugin *pjrt.Plugin
	target string
}

var (
	registrations sync.Map // registrationKey -> *registration (the stream type)
	streamTypesMu sync.Mutex
	streamTypes   []int64 // FFI user-data type ids of the Stream handle, one per plugin kind
)

// RegisterHandler registers h as the typed-FFI handler of target with c's
// plugin, for the platform XLA knows it by (pjrt.FFIPlatform), once per
// plugin and target (pjrt.Plugin.EnsureFFIHandler): later calls return the
// first one's error. Calls to h must carry pjrt.FFICallbackAttr. A
// handler declared with pjrt.DeclareFFIHandler needs no call: Compile
// registers it.
func RegisterHandler(c *pjrt.Client, target string, h pjrt.FFIHandler) error {
	if c == nil {
		return fmt.Errorf("effects: registering %s: nil client", target)
	}
	p := c.Plugin()
	if err := p.EnsureFFIHandler(target, pjrt.FFIPlatform(c.PlatformName()), h, 0); err != nil {
		return fmt.Errorf("registering the %s handler with %s: %w", target, p.Name(), err)
	}
	return nil
}

// streamTypeName is the FFI user-data type through which a callback finds
// the Stream that ran its execution.
const streamTypeName = "halo.effects.stream"

// Register registers the callback handler (Target) with c's plugin, for
// the platform XLA knows the plugin by ("CUDA" for the CUDA plugin, "Host"
// for the CPU plugin; the interpreter ignores it). It is idempotent and
// Compile calls it.
func Register(c *pjrt.Client) error {
	if c == nil {
		return errors.New("effects: Register: nil client")
	}
	if err := RegisterHandler(c, Target, handle); err != nil {
		return fmt.Errorf("effects: %w", err)
	}
	p := c.Plugin()
	r, _ := registrations.LoadOrStore(registrationKey{p, streamTypeName}, &registration{})
	r.(*registration).once.Do(func() {
		id, err := p.RegisterFFIType(streamTypeName)
		if err != nil {
			return // callbacks still run; Barrier cannot see their errors
		}
		streamTypesMu.Lock()
		defer streamTypesMu.Unlock()
		for _, t := range streamTypes {
			if t == id {
				return
			}
		}
		streamTypes = append(streamTypes, id)
	})
	return nil
}

// streamTypeIDs returns the registered user-data type ids.
func streamTypeIDs() []int64 {
	streamTypesMu.Lock()
	defer streamTypesMu.Unlock()
	return streamTypes
}

func init() {
	// Builder errors of Callback and Print point at the user's line.
	stablehlo.RegisterBuilderPackage("github.com/halo-ml/halo/effects")
}
