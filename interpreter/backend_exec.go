package interpreter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// mlirBytecodeMagic starts MLIR bytecode files ("ML\xefR").
var mlirBytecodeMagic = []byte("ML\xefR")

// serializedMagic starts Executable.Serialize's bytes.
const serializedMagic = "halo-interpreter-executable/1\n"

func (c *client) Compile(code []byte, format string, options []byte) (backend.Executable, error) {
	return c.compile(code, format, options, "PJRT_Client_Compile")
}

func (c *client) compile(code []byte, format string, options []byte, op string) (backend.Executable, error) {
	if c.closed.Load() {
		return nil, backend.Errorf(codeFailedPrecondition, op, "client is closed")
	}
	switch format {
	case "mlir":
	case "hlo":
		return nil, backend.Errorf(codeInvalidArgument, op, "the interpreter reads StableHLO MLIR text (format \"mlir\"), not serialized HLO")
	default:
		return nil, backend.Errorf(codeInvalidArgument, op, "program format %q: the interpreter reads StableHLO MLIR text (format \"mlir\")", format)
	}
	if bytes.HasPrefix(code, mlirBytecodeMagic) {
		return nil, backend.Errorf(codeInvalidArgument, op, "the program is MLIR bytecode; the interpreter reads StableHLO MLIR text (print the module, or deserialize it with stablehlo-translate --deserialize)")
	}
	opts := xla.DefaultCompileOptions()
	if len(options) > 0 {
		o, err := xla.UnmarshalCompileOptions(options)
		if err != nil {
			return nil, backend.Errorf(codeInvalidArgument, op, "compile options: %v", err)
		}
		opts = o
	}
	m, err := stablehlo.Parse(code)
	if err != nil {
		return nil, backend.Errorf(codeInvalidArgument, op, "parsing the program: %v", err)
	}
	if err := m.Verify(); err != nil {
		return nil, backend.Errorf(codeInvalidArgument, op, "%v", err)
	}
	if err := partitionerOp(m); err != nil {
		return nil, backend.Errorf(codeUnimplemented, op, "%v", err)
	}
	if err := unsupportedOp(m); err != nil {
		return nil, backend.Errorf(codeUnimplemented, op, "%v", err)
	}
	if err := CheckCustomCallTargets(m); err != nil {
		return nil, backend.Errorf(codeNotFound, op, "%v", err)
	}
	p, err := Compile(m, "")
	if err != nil {
		return nil, backend.Errorf(codeInvalidArgument, op, "%v", err)
	}
	e := &executable{c: c, prog: p, text: append([]byte(nil), code...), options: append([]byte(nil), options...)}
	if err := e.place(opts, op); err != nil {
		return nil, err
	}
	if opts.UseSPMDPartitioning && e.partitions > 1 {
		if err := shardedMain(p.Main); err != nil {
			return nil, backend.Errorf(codeUnimplemented, op, "%v", err)
		}
	}
	for _, t := range p.Main.ResultTypes {
		if err := e.addOutputs(t); err != nil {
			return nil, backend.Errorf(codeInvalidArgument, op, "@%s result: %v", p.Main.Name, err)
		}
	}
	for i, t := range p.Main.ArgTypes() {
		if _, ok := t.(stablehlo.TupleType); ok {
			return nil, backend.Errorf(codeUnimplemented, op, "parameter %d of @%s is %v: a buffer cannot be a tuple (pass its elements as parameters of their own)", i, p.Main.Name, t)
		}
		_, tok := t.(stablehlo.TokenType)
		e.tokenArgs = append(e.tokenArgs, tok)
	}
	e.cheap = e.replicas*e.partitions == 1 && isCheap(m)
	e.name = m.Name
	if e.name == "" {
		e.name = p.Main.Name
	}
	// The program and where it runs: the same code compiled for other
	// replicas, partitions or devices is another executable.
	h := sha256.New()
	h.Write(code)
	fmt.Fprintf(h, "\x00%d %d %v", e.replicas, e.partitions, e.assignment)
	e.fingerprint = hex.EncodeToString(h.Sum(nil)[:16])
	return e, nil
}

// Limits of a cheap program (see executable.cheap).
const (
	cheapMaxOps      = 32
	cheapMaxElements = 1 << 12
)

// isCheap reports whether every function of m is a short list of ops
// without regions, calls, custom calls or collectives, on small tensors.
func isCheap(m *stablehlo.Module) bool {
	ops := 0
	cheap := true
	for _, f := range m.Funcs {
		f.Walk(func(op *stablehlo.Op) bool {
			ops++
			if ops > cheapMaxOps || len(op.Regions) > 0 {
				cheap = false
				return false
			}
			switch op.Name {
			case "func.call", "stablehlo.custom_call", "stablehlo.while", "stablehlo.case", "stablehlo.if",
				"stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter", "stablehlo.all_to_all",
				"stablehlo.collective_permute", "stablehlo.collective_broadcast", "stablehlo.infeed", "stablehlo.outfeed",
				"stablehlo.send", "stablehlo.recv", "interpreter.run_parallel":
				cheap = false
				return false
			}
			for _, r := range op.Results {
				if t, ok := r.Type.(stablehlo.TensorType); ok && (t.Size() < 0 || t.Size() > cheapMaxElements) {
					cheap = false
					return false
				}
			}
			return true
		})
		if !cheap {
			return false
		}
	}
	return cheap
}

// noPartitioner explains why programs written for XLA's SPMD partitioner
// cannot run on the interpreter.
const noPartitioner = "the interpreter does not run XLA's SPMD partitioner (GSPMD, Shardy), which would turn this global program into each device's part: run a program written per device (what the partitioner gives, or shard_map's body with its collectives), or compile for one partition"

// partitionerOp reports an op only XLA's SPMD partitioner can lower: the
// sdy dialect's, and the custom calls that move a value between its
// global and per-device shapes (a shard_map lowered for GSPMD).
func partitionerOp(m *stablehlo.Module) error {
	var err error
	for _, f := range m.Funcs {
		f.Walk(func(op *stablehlo.Op) bool {
			var target string
			if op.Name == "stablehlo.custom_call" {
				target, _ = callTarget(op)
			}
			switch {
			case err != nil:
			case strings.HasPrefix(op.Name, "sdy.") && kernelFor(op.Name) == nil,
				op.Name == "stablehlo.custom_call" && (target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape"):
				name := op.Name
				if target != "" {
					name += " @" + target
				}
				err = opError(f, op, fmt.Errorf("%s: %s", name, noPartitioner))
			}
			return err == nil
		})
	}
	return err
}

// shardedMain reports an argument or result of main sharded across the
// partitions (mhlo.sharding other than replicated or manual, or an
// sdy.sharding naming mesh axes), which XLA's partitioner would split.
func shardedMain(f *stablehlo.Func) error {
	check := func(what string, i int, d stablehlo.DictAttr) error {
		var text string
		switch a := d.Get("mhlo.sharding").(type) {
		case stablehlo.StringAttr:
			if s := strings.TrimSpace(string(a)); s != "{replicated}" && s != "{manual}" {
				text = s
			}
		}
		if a := d.Get("sdy.sharding"); a != nil && text == "" {
			if s := fmt.Sprint(a); strings.Contains(s, "{\"") {
				text = s
			}
		}
		if text == "" {
			return nil
		}
		return fmt.Errorf("@%s %s %d is sharded %s: %s", f.Name, what, i, text, noPartitioner)
	}
	for i, d := range f.ArgAttrs {
		if err := check("argument", i, d); err != nil {
			return err
		}
	}
	for i, d := range f.ResultAttrs {
		if err := check("result", i, d); err != nil {
			return err
		}
	}
	return nil
}

// unsupportedOp reports the first op without a kernel.
func unsupportedOp(m *stablehlo.Module) error {
	var err error
	for _, f := range m.Funcs {
		f.Walk(func(op *stablehlo.Op) bool {
			if err == nil && kernelFor(op.Name) == nil && !isTerminator(op.Name) {
				err = opError(f, op, fmt.Errorf("op %s is not supported by the interpreter", op.Name))
			}
			return err == nil
		})
	}
	return err
}

// place sets the replica and partition counts (compile options, else the
// module's mhlo.num_replicas / mhlo.num_partitions) and the devices.
func (e *executable) place(o xla.CompileOptions, op string) error {
	R, P := e.prog.NumReplicas, e.prog.NumPartitions
	if o.NumReplicas > 1 {
		if R > 1 && R != o.NumReplicas {
			return backend.Errorf(codeInvalidArgument, op, "compile options ask for %d replicas, the module's mhlo.num_replicas is %d", o.NumReplicas, R)
		}
		R = o.NumReplicas
	}
	if o.NumPartitions > 1 {
		if P > 1 && P != o.NumPartitions {
			return backend.Errorf(codeInvalidArgument, op, "compile options ask for %d partitions, the module's mhlo.num_partitions is %d", o.NumPartitions, P)
		}
		P = o.NumPartitions
	}
	if R < 1 || P < 1 {
		return backend.Errorf(codeInvalidArgument, op, "%d replicas x %d partitions", R, P)
	}
	n := len(e.c.devs)
	if R > n || P > n || R*P > n {
		if R > n || P > n {
			return backend.Errorf(codeInvalidArgument, op, "the program needs %d replicas x %d partitions; the interpreter client has %d devices", R, P, n)
		}
		return backend.Errorf(codeInvalidArgument, op, "the program needs %d replicas x %d partitions = %d devices; the interpreter client has %d (open it with pjrt.DeviceCount(%d))", R, P, R*P, n, R*P)
	}
	e.prog.NumReplicas, e.prog.NumPartitions = R, P
	e.replicas, e.partitions = R, P
	da := o.DeviceAssignment
	if da == nil {
		da = xla.DefaultDeviceAssignment(R, P)
	} else if da.Replicas() != R || da.Computations() != P {
		return backend.Errorf(codeInvalidArgument, op, "device assignment is %d x %d, the program has %d replicas x %d partitions", da.Replicas(), da.Computations(), R, P)
	}
	e.assignment = da
	seen := map[int64]bool{}
	for r := 0; r < R; r++ {
		for p := 0; p < P; p++ {
			id := da[r][p]
			if id < 0 || id >= int64(n) || seen[id] {
				return backend.Errorf(codeInvalidArgument, op, "device assignment names device %d for replica %d partition %d: the client has devices 0 to %d, each used once", id, r, p, n-1)
			}
			seen[id] = true
			e.devs = append(e.devs, e.c.devs[id])
			e.devices = append(e.devices, e.c.devs[id])
			e.logical = append(e.logical, backend.LogicalDeviceID{Replica: r, Partition: p})
		}
	}
	return nil
}

func (e *executable) addOutputs(t stablehlo.Type) error {
	switch t := t.(type) {
	case stablehlo.TensorType:
		if t.Size() < 0 {
			return fmt.Errorf("dynamic shape %v", t)
		}
		e.outputs = append(e.outputs, backend.OutputInfo{Shape: t.Shape(), MemoryKind: "device"})
	case stablehlo.TokenType:
		e.outputs = append(e.outputs, backend.OutputInfo{Shape: xla.Shape{DType: xla.Invalid}, MemoryKind: "device"})
	case stablehlo.TupleType:
		for _, el := range t.Elems {
			if err := e.addOutputs(el); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("type %v cannot be an output", t)
	}
	return nil
}

// executable is a compiled program with its placement.
type executable struct {
	c           *client
	prog        *Program
	text        []byte
	options     []byte
	name        string
	fingerprint string

	replicas, partitions int
	assignment           xla.DeviceAssignment
	devs                 []*device        // by logical id, replica-major
	devices              []backend.Device // the same
	logical              []backend.LogicalDeviceID
	outputs              []backend.OutputInfo
	// tokenArgs[i]: parameter i of main is a !stablehlo.token. An
	// execution takes such an argument once it is ready, even when its
	// producer failed (a token carries order, not data).
	tokenArgs []bool
	// cheap programs (a few small element-wise or shape ops on one device)
	// run inside Execute when their arguments are ready: a goroutine
	// hand-off would cost more than the program.
	cheap bool

	deleted atomic.Bool

	// ffiAttrs caches the FFI attributes of the program's custom calls
	// (*stablehlo.Op -> map[string]any), decoded on their first call.
	ffiAttrs sync.Map
}

func (e *executable) Name() (string, error)                  { return e.name, nil }
func (e *executable) NumReplicas() (int, error)              { return e.replicas, nil }
func (e *executable) NumPartitions() (int, error)            { return e.partitions, nil }
func (e *executable) Outputs() ([]backend.OutputInfo, error) { return e.outputs, nil }
func (e *executable) AddressableDevices() []backend.Device   { return e.devices }
func (e *executable) Fingerprint() (string, error)           { return e.fingerprint, nil }

// Serialize returns the program text and the compile options.
func (e *executable) Serialize() ([]byte, error) {
	out := []byte(serializedMagic)
	out = binary.AppendUvarint(out, uint64(len(e.text)))
	out = append(out, e.text...)
	out = binary.AppendUvarint(out, uint64(len(e.options)))
	out = append(out, e.options...)
	return out, nil
}

func (c *client) DeserializeAndLoad(data []byte, options []byte) (backend.Executable, error) {
	const op = "PJRT_Executable_DeserializeAndLoad"
	bad := backend.Errorf(codeInvalidArgument, op, "not an interpreter executable (Serialize of the interpreter backend)")
	if !bytes.HasPrefix(data, []byte(serializedMagic)) {
		return nil, bad
	}
	rest := data[len(serializedMagic):]
	n, k := binary.Uvarint(rest)
	if k <= 0 || uint64(len(rest)-k) < n {
		return nil, bad
	}
	text := rest[k : k+int(n)]
	rest = rest[k+int(n):]
	n, k = binary.Uvarint(rest)
	if k <= 0 || uint64(len(rest)-k) != n {
		return nil, bad
	}
	if options == nil {
		options = rest[k:]
	}
	return c.compile(text, "mlir", options, op)
}

func (e *executable) Close() error { return e.Delete() }

// Delete releases the executable (backend.LoadedExecutableDetails);
// running executions finish.
func (e *executable) Delete() error {
	e.deleted.Store(true)
	return nil
}

func (e *executable) IsDeleted() (bool, error) { return e.deleted.Load(), nil }

// DeviceAssignment is the serialized DeviceAssignmentProto.
func (e *executable) DeviceAssignment() ([]byte, error) {
	o := xla.DefaultCompileOptions()
	o.NumReplicas, o.NumPartitions, o.DeviceAssignment = e.replicas, e.partitions, e.assignment
	raw, err := o.Marshal()
	if err != nil {
		return nil, err
	}
	build := protoField(raw, 3)
	return protoField(build, 9), nil
}

// protoField returns the bytes of the first length-delimited field num.
func protoField(b []byte, num protowire.Number) []byte {
	for len(b) > 0 {
		n, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil
		}
		b = b[k:]
		if n == num && typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return nil
			}
			return v
		}
		k = protowire.ConsumeFieldValue(n, typ, b)
		if k < 0 {
			return nil
		}
		b = b[k:]
	}
	return nil
}

func (e *executable) LogicalDeviceIDs() ([]backend.LogicalDeviceID, error) {
	return append([]backend.LogicalDeviceID(nil), e.logical...), nil
}

// ---- ExecutableDetails ----

func (e *executable) SizeOfGeneratedCode() (int64, error) { return int64(len(e.text)), nil }
func (e *executable) CostAnalysis() ([]backend.NamedValue, error) {
	return nil, nil
}
func (e *executable) CompiledMemoryStats() (backend.CompiledMemoryStats, error) {
	var s backend.CompiledMemoryStats
	for _, a := range e.prog.Main.ArgTypes() {
		if t, ok := a.(stablehlo.TensorType); ok && t.Size() > 0 {
			s.ArgumentSizeInBytes += t.Size() * int64(rtElemSize(StorageOf(t.DType)))
		}
	}
	for _, o := range e.outputs {
		if o.Shape.DType != xla.Invalid {
			s.OutputSizeInBytes += o.Shape.Size() * int64(rtElemSize(StorageOf(o.Shape.DType)))
		}
	}
	s.GeneratedCodeSizeInBytes = int64(len(e.text))
	return s, nil
}

// OptimizedProgram is the program as compiled: the interpreter runs the
// text it was given.
func (e *executable) OptimizedProgram() ([]byte, string, error) {
	return append([]byte(nil), e.text...), "mlir", nil
}
func (e *executable) CompileOptions() ([]byte, error) {
	return append([]byte(nil), e.options...), nil
}
func (e *executable) ParameterMemoryKinds() ([]string, error) {
	out := make([]string, len(e.prog.Main.ArgTypes()))
	for i := range out {
		out[i] = "device"
	}
	return out, nil
}
func (e *executable) OutputLayouts() ([][]byte, error) {
	return nil, backend.Errorf(codeUnimplemented, "PJRT_Executable_GetOutputLayouts", "the interpreter has no device layouts (buffers are dense row-major)")
}
func (e *executable) ParameterLayouts() ([][]byte, error) {
	return nil, backend.Errorf(codeUnimplemented, "PJRT_Executable_GetParameterLayouts", "the interpreter has no device layouts (buffers are dense row-major)")
}

// ---- Execute ----

// devRun is the state of one device's part of an execution: its context
// (which carries what FFI handlers may ask), completion event and output
// buffers, allocated together.
type devRun struct {
	runCtx
	ev   event
	bufs []buffer
	outs []backend.Buffer
	vals []Value
	// bufArr and outArr hold bufs and outs when there are few outputs.
	bufArr [2]buffer
	outArr [2]backend.Buffer
}

// oneRun is what Execute allocates for a single-device run.
type oneRun struct {
	runs       [1]devRun
	outs       [1][]backend.Buffer
	completion [1]backend.Event
}

// runCtx is a context that carries a runInfo.
type runCtx struct {
	context.Context
	info runInfo
}

func (c *runCtx) Value(key any) any {
	if key == (runInfoKey{}) {
		return &c.info
	}
	return c.Context.Value(key)
}

// Execute starts the program on its devices and returns at once. Each
// device runs in its own goroutine, after waiting for its argument
// buffers; its output buffers and completion event fire when it is done.
// A device that fails fails the others' collectives at once (not after
// the timeout). Cheap single-device programs whose arguments are ready run
// before Execute returns (see executable.cheap).
func (e *executable) Execute(args [][]backend.Buffer, opts backend.ExecuteOptions) ([][]backend.Buffer, []backend.Event, error) {
	const op = "PJRT_LoadedExecutable_Execute"
	if e.deleted.Load() {
		return nil, nil, backend.Errorf(codeFailedPrecondition, op, "executable was deleted")
	}
	if e.c.closed.Load() {
		return nil, nil, backend.Errorf(codeFailedPrecondition, op, "client is closed")
	}
	devs := e.devs
	if opts.ExecuteDevice != nil {
		d, ok := opts.ExecuteDevice.(*device)
		if !ok || d.c != e.c {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "execute device belongs to another client")
		}
		if e.replicas*e.partitions != 1 {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "an executable of %d replicas x %d partitions runs on all its devices, not on one", e.replicas, e.partitions)
		}
		devs = []*device{d}
	}
	if len(args) != len(devs) {
		return nil, nil, backend.Errorf(codeInvalidArgument, op, "%d argument lists for %d devices", len(args), len(devs))
	}
	params := e.prog.Main.Args()
	for d, list := range args {
		if len(list) != len(params) {
			return nil, nil, backend.Errorf(codeInvalidArgument, op, "device %d: @%s takes %d arguments, got %d", d, e.prog.Main.Name, len(params), len(list))
		}
		for i, b := range list {
			bb, ok := b.(*buffer)
			if !ok || bb.c != e.c {
				return nil, nil, backend.Errorf(codeInvalidArgument, op, "argument %d of device %d belongs to another client", i, d)
			}
			if bb.dev != devs[d] {
				return nil, nil, backend.Errorf(codeInvalidArgument, op, "argument %d for device %d is on device %d", i, devs[d].id, bb.dev.id)
			}
			if !argFits(bb.shape, params[i].Type) {
				what := any(bb.shape)
				if isTokenShape(bb.shape) {
					what = "a token"
				}
				return nil, nil, backend.Errorf(codeInvalidArgument, op, "argument %d of device %d is %v, @%s takes %v", i, d, what, e.prog.Main.Name, params[i].Type)
			}
		}
	}
	xctx, _ := opts.Context.(*execContext)
	if opts.Context != nil && xctx == nil {
		return nil, nil, backend.Errorf(codeInvalidArgument, op, "the execute context is not the interpreter's")
	}
	// Hold every argument until its device has read it (runDevice), as a
	// PJRT runtime does: the caller may close them right after Execute.
	for d, list := range args {
		for i, b := range list {
			if !b.(*buffer).hold() {
				unholdArgs(args, d, i)
				return nil, nil, backend.Errorf(codeInvalidArgument, op, "argument %d of device %d was deleted", i, d)
			}
		}
	}
	launchID := int64(opts.LaunchID)
	if launchID == 0 {
		launchID = runIDs.Add(1)
	}
	inline := len(devs) == 1 && e.cheap && argsReady(args[0])
	var runs []devRun
	var outs [][]backend.Buffer
	var completion []backend.Event
	if len(devs) == 1 {
		// One allocation for a single-device run with few outputs.
		one := &oneRun{}
		runs, outs, completion = one.runs[:], one.outs[:], one.completion[:]
	} else {
		runs = make([]devRun, len(devs))
		outs = make([][]backend.Buffer, len(devs))
		completion = make([]backend.Event, len(devs))
	}
	for d, dev := range devs {
		r := &runs[d]
		r.info = runInfo{xctx: xctx, device: dev.id, launchID: launchID, exe: e}
		if !inline {
			r.ev.done = make(chan struct{})
		}
		if n := len(e.outputs); n <= len(r.bufArr) {
			r.bufs, r.outs = r.bufArr[:n], r.outArr[:n]
		} else {
			r.bufs = make([]buffer, n)
			r.outs = make([]backend.Buffer, n)
		}
		for i, o := range e.outputs {
			r.bufs[i] = buffer{c: e.c, dev: dev, mem: dev.mem, shape: o.Shape, ready: &r.ev}
			r.outs[i] = &r.bufs[i]
		}
		outs[d] = r.outs
	}
	if opts.WantCompletionEvents {
		for d := range runs {
			completion[d] = &runs[d].ev
		}
	} else {
		completion = nil
	}
	if inline {
		r := &runs[0]
		r.Context = e.c.ctx
		r.ev.done = closedChan
		r.ev.err = e.runDevice(r, nil, 0, args[0])
		return outs, completion, nil
	}
	e.launch(args, runs)
	return outs, completion, nil
}

// launch runs every device in a goroutine of its own (pooled: goWork).
func (e *executable) launch(args [][]backend.Buffer, runs []devRun) {
	n := len(runs)
	if n == 1 {
		r := &runs[0]
		r.Context = e.c.ctx
		goWork(func() { r.ev.set(e.runDevice(r, nil, 0, args[0])) })
		return
	}
	ctx, cancel := context.WithCancelCause(e.c.ctx)
	rv := NewRendezvous(e.replicas, e.partitions, e.c.timeout)
	var wg sync.WaitGroup
	wg.Add(n)
	for d := 0; d < n; d++ {
		r := &runs[d]
		r.Context = ctx
		goWork(func() {
			defer wg.Done()
			err := e.runDevice(r, rv, d, args[d])
			if err != nil {
				// The other devices stop too, not only at their next
				// collective, and say why.
				cancel(&peerFailedError{err})
			}
			r.ev.set(err)
		})
	}
	go func() {
		wg.Wait()
		cancel(nil)
	}()
}

// peerFailedError is why a device of a run stopped when another failed:
// a cancellation (errors.Is context.Canceled) that names the failure.
type peerFailedError struct{ err error }

func (e *peerFailedError) Error() string { return "stopped: " + e.err.Error() }

func (e *peerFailedError) Is(target error) bool { return target == context.Canceled }

// unholdArgs gives up the holds Execute took on the arguments before
// argument i of device d.
func unholdArgs(args [][]backend.Buffer, d, i int) {
	for dd := 0; dd <= d; dd++ {
		n := len(args[dd])
		if dd == d {
			n = i
		}
		for _, b := range args[dd][:n] {
			b.(*buffer).unhold()
		}
	}
}

func argsReady(args []backend.Buffer) bool {
	for _, b := range args {
		if !b.(*buffer).ready.fired() {
			return false
		}
	}
	return true
}

// runDevice runs logical device d: waits for its arguments, runs the
// program and fills its output buffers. It returns the device's error
// (after failing the rendezvous with it); the caller completes the event.
// argFits reports whether a buffer of shape can be an argument of type t:
// a token for a token, else a tensor of t's element type and rank whose
// dims match t's static ones (a dynamic one takes any size). Other types
// (tuples) are left to the run.
func argFits(shape xla.Shape, t stablehlo.Type) bool {
	switch t := t.(type) {
	case stablehlo.TokenType:
		return isTokenShape(shape)
	case stablehlo.TensorType:
		return !isTokenShape(shape) && stablehlo.TypesCompatible(stablehlo.TensorOf(shape), t)
	}
	return true
}

func (e *executable) runDevice(run *devRun, rv *Rendezvous, d int, args []backend.Buffer) (err error) {
	r, p := d/e.partitions, d%e.partitions
	defer func() {
		// The outputs keep run alive (failed ones too): not the arguments.
		run.vals = nil
		if v := recover(); v != nil {
			if e := allocErrorOf(v); e != nil {
				err = backend.Errorf(codeResourceExhausted, "PJRT_LoadedExecutable_Execute", "device %d (replica %d, partition %d): %v", run.info.device, r, p, e)
			} else {
				err = backend.Errorf(codeInternal, "PJRT_LoadedExecutable_Execute", "device %d (replica %d, partition %d): interpreter panic: %v", run.info.device, r, p, v)
			}
		}
		if err != nil {
			rv.Fail(ProcessID{r, p}, err)
		}
	}()
	run.vals = make([]Value, len(args))
	var argErr error
	for i, b := range args {
		bb := b.(*buffer)
		if argErr != nil {
			bb.unhold()
			continue
		}
		v, err := bb.takeHeld()
		if err != nil && i < len(e.tokenArgs) && e.tokenArgs[i] {
			// A token carries order, not data: its producer's failure is
			// that execution's error, not this one's.
			v, err = nil, nil
		}
		if err != nil {
			// The producer's failure passes through with its code.
			code := codeInvalidArgument
			var ce backend.CodedError
			if errors.As(err, &ce) && ce.PJRTCode() != 0 {
				code = ce.PJRTCode()
			}
			argErr = backend.Wrapf(code, "PJRT_LoadedExecutable_Execute", err, "argument %d of device %d: %v", i, run.info.device, err)
			continue
		}
		if v == nil {
			v = Token{}
		}
		run.vals[i] = v
	}
	if argErr != nil {
		return argErr
	}
	res, err := e.prog.Run(run, Device{Replica: r, Partition: p, Rendezvous: rv}, run.vals)
	run.vals = nil
	if err == nil {
		rv.Done(ProcessID{r, p})
	}
	if err != nil {
		code := codeInternal
		var alloc *AllocError
		var timeout *CollectiveTimeoutError
		var unreached *CollectiveUnreachedError
		var coded backend.CodedError
		switch {
		case errors.As(err, &alloc):
			code = codeResourceExhausted
		case errors.As(err, &timeout):
			code = codeDeadlineExceeded
		case errors.As(err, &unreached):
			code = codeFailedPrecondition
		case run.Err() != nil || rv.Err() != nil:
			code = codeCancelled
		case errors.As(err, &coded) && coded.PJRTCode() != 0:
			code = coded.PJRTCode() // an FFI handler's (or a custom call's) own code
		}
		return backend.Wrapf(code, "PJRT_LoadedExecutable_Execute", err, "device %d (replica %d, partition %d): %v", run.info.device, r, p, err)
	}
	flat := res
	for _, v := range res {
		if _, ok := v.(Tuple); ok {
			flat = nil
			for _, v := range res {
				flat = flattenValue(flat, v)
			}
			break
		}
	}
	if len(flat) != len(run.bufs) {
		return backend.Errorf(codeInternal, "PJRT_LoadedExecutable_Execute", "device %d: %d results for %d outputs", run.info.device, len(flat), len(run.bufs))
	}
	for i := range run.bufs {
		b := &run.bufs[i]
		b.mu.Lock()
		if !b.deleted || b.holds > 0 {
			b.val = flat[i]
		}
		b.mu.Unlock()
	}
	return nil
}

func flattenValue(out []Value, v Value) []Value {
	if t, ok := v.(Tuple); ok {
		for _, el := range t {
			out = flattenValue(out, el)
		}
		return out
	}
	return append(out, v)
}
