// Package interpreter evaluates StableHLO programs in pure Go. It is the
// engine behind halo's built-in PJRT backend "interpreter": it runs on any
// machine, simulates several devices for SPMD programs and collectives, and
// runs Pallas kernels in interpret mode.
//
// Use: Compile a *stablehlo.Module (built with stablehlo's Builder or
// parsed from MLIR text) into a Program, checked, every op bound to its
// kernel and every value given a slot; then Program.Run it on Tensors
// (TensorFrom a Go slice, or NewTensor, whose Data is a typed slice such
// as []float32; ToSlice reads a result back), as often and as
// concurrently as needed, or RunSPMD for a program of several
// replicas and partitions with its collectives. RegisterCustomCall adds
// Go implementations of custom-call targets. Through pjrt, the same
// engine is the "interpreter" backend: pjrt.Open("interpreter").
//
// Values are immutable, but a run reuses memory where nothing can tell:
// an elementwise result may be written into a dying operand, a loop may
// update the tensor it alone carries, the storage of a dead value of the
// run's own becomes the next result of its size, and a dot reads windows
// of its operands where they lie and may add its product into a dying
// accumulator. A run never writes into its arguments, nor into storage an
// op that may keep its operands has seen.
//
// A run ends with its context: between ops, and inside the long kernels
// (products, convolutions, factorizations), which poll a flag the context
// sets. A result the machine has no memory for fails its op with an
// *AllocError (memory.go), where Go's allocator would end the process.
package interpreter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// Value is what an SSA value holds at run time: *Tensor, Token or Tuple.
type Value any

// Token is the run-time value of !stablehlo.token.
type Token struct{}

// Tuple is the run-time value of a tuple type.
type Tuple []Value

// Kernel evaluates one op. args are the op's operand values; it returns one
// value per result. Kernels of ops with regions run them with x.RunRegion.
type Kernel func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error)

var (
	kernelsMu sync.RWMutex
	kernels   = map[string]Kernel{}
)

// RegisterKernel binds an op name ("stablehlo.add", or an op of a
// dialect of your own) to its kernel, for every program compiled after;
// registering a name again replaces its kernel. The kernel may keep its
// operands: the run never reuses storage that such an op has seen. An
// empty name or a nil kernel is an error and changes nothing: unlike a
// custom-call target (RegisterCustomCall), an op's kernel is never
// removed, as a built-in one would be gone for the whole process.
func RegisterKernel(name string, k Kernel) error {
	if err := checkRegistration("RegisterKernel", "kernel", name, k == nil); err != nil {
		return err
	}
	setKernel(name, k, true, false)
	return nil
}

// setKernel binds name to kernel k (checked already): external when
// registered from outside this package, inPlace as RegisterInPlaceKernel
// says.
func setKernel(name string, k Kernel, external, inPlace bool) {
	kernelsMu.Lock()
	defer kernelsMu.Unlock()
	kernels[name] = k
	if external {
		externalKernels[name] = true
	} else {
		delete(externalKernels, name)
	}
	if inPlace {
		inPlaceOps[name] = true
	}
}

// checkRegistration is the error of registering, with function fn, a nil
// what (isNil: "kernel", "check") or one under an empty name.
func checkRegistration(fn, what, name string, isNil bool) error {
	switch {
	case name == "":
		return fmt.Errorf("interpreter: %s: empty op name", fn)
	case isNil:
		return fmt.Errorf("interpreter: %s(%q): nil %s (an op's %s cannot be removed)", fn, name, what, what)
	}
	return nil
}

// RegisterInPlaceKernel registers a kernel that only reads its operands
// and allocates a new result of the same shape: it may instead write the
// result into a dying operand from Exec.TakeDead, which the compiler plans.
// Its errors are RegisterKernel's.
func RegisterInPlaceKernel(name string, k Kernel) error {
	if err := checkRegistration("RegisterInPlaceKernel", "kernel", name, k == nil); err != nil {
		return err
	}
	setKernel(name, k, true, true)
	return nil
}

// externalKernels are the ops whose kernels were registered from outside
// this package.
var externalKernels = map[string]bool{}

// mustRegister panics with err, the error of a registration (of a
// kernel, an op check) made by init code of this package or its tests:
// such a failure, a nil kernel say, is a bug of this package, and init has
// no caller to return an error to. Anywhere else a registration's error is
// returned or handled.
func mustRegister(err error) {
	if err != nil {
		panic(err)
	}
}

// registerKernel is RegisterKernel for this package's kernel files, which
// call it from init (a nil kernel or an empty name panics: mustRegister).
// Their kernels must not keep the operand slice they are given past their
// return (runBlock reuses its memory), unless the op is in
// mayKeepOperands.
func registerKernel(name string, k Kernel) {
	mustRegister(checkRegistration("registerKernel", "kernel", name, k == nil))
	setKernel(name, k, false, false)
}

// registerInPlaceKernel is RegisterInPlaceKernel for this package's
// kernel files.
func registerInPlaceKernel(name string, k Kernel) {
	mustRegister(checkRegistration("registerInPlaceKernel", "kernel", name, k == nil))
	setKernel(name, k, false, true)
}

// OpCheck validates an op's types and attributes when a program is
// compiled, so that a malformed op is a Compile error rather than a run
// error.
type OpCheck func(op *stablehlo.Op) error

var opChecks = map[string]OpCheck{}

// RegisterOpCheck binds a compile-time check to an op name, replacing
// any check it had. Kernel files call it from init. As with
// RegisterKernel, an empty name or a nil check is an error and changes
// nothing.
func RegisterOpCheck(name string, c OpCheck) error {
	if err := checkRegistration("RegisterOpCheck", "check", name, c == nil); err != nil {
		return err
	}
	kernelsMu.Lock()
	defer kernelsMu.Unlock()
	opChecks[name] = c
	return nil
}

func opCheckFor(name string) OpCheck {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	return opChecks[name]
}

func kernelFor(name string) Kernel {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	return kernels[name]
}

// SupportedOps lists the op names the interpreter has kernels for.
func SupportedOps() []string {
	kernelsMu.RLock()
	defer kernelsMu.RUnlock()
	out := make([]string, 0, len(kernels))
	for k := range kernels {
		out = append(out, k)
	}
	return out
}

// Program is a compiled module.
type Program struct {
	Module *stablehlo.Module
	Main   *stablehlo.Func
	funcs  map[string]*funcPlan
	// NumReplicas and NumPartitions come from the module attributes
	// (mhlo.num_replicas / mhlo.num_partitions), default 1.
	NumReplicas, NumPartitions int
	// constStorage holds the storage of the constants decoded at compile
	// time (opPlan.konst): results that share it are copied before they
	// leave Run, so no caller ever writes into them.
	constStorage map[uintptr]bool
	// unshared turns off every way a run shares or reuses storage (planned
	// in-place ops, loop-owned updates, spare buffers, slice views, packed
	// windows, shared constants, reshapes sharing their operand): tests
	// compare programs compiled with and without it (compileProgram).
	unshared bool
	// vecRegions holds the regions compiled for vectors of lanes
	// (shpVectorizeFor), by shpVecKey: built at a run's first need, and
	// shared by copies of the program (a pointer, so that a copy with
	// another Main is no copy of a lock).
	vecRegions *sync.Map
}

// funcPlan gives every value of a function (including values inside its
// regions) a slot in one frame, and binds every op to its kernel.
type funcPlan struct {
	fn     *stablehlo.Func
	slots  map[*stablehlo.Value]int
	ops    map[*stablehlo.Op]*opPlan
	blocks map[*stablehlo.Block][]*opPlan // each block's ops in order
	// unusedArgs marks the block arguments nothing in their block reads:
	// they are not stored in the frame.
	unusedArgs map[*stablehlo.Block][]bool
	// dead are the ops that are not run (dce.go).
	dead map[*stablehlo.Op]bool
	// operands is, per block, the length of the operand lists of its ops
	// that keep nothing (runBlock takes them from one allocation).
	operands map[*stablehlo.Block]int
	size     int
}

type opPlan struct {
	op     *stablehlo.Op
	kernel Kernel
	// konst is a small constant's value, decoded once at compile time and
	// shared (read-only) by every run instead of calling the kernel.
	konst *Tensor
	// scalar is the fast path of an op on one-element values (scalar.go),
	// run instead of the kernel when the operands fit their static types.
	scalar scalarOp
	in     []int
	out    []int
	// free lists the slots of values of this op's block whose last use is
	// this op (directly or inside its regions), and of its results nothing
	// uses: they are dropped after it runs, so a long program holds only
	// its live values. A terminator's are the values of its block it hands
	// over, dropped from the frame once handed.
	free []int
	// reuse lists operand positions whose tensor the kernel may overwrite
	// with its result: the value dies here, was made by an elementwise op
	// and was only ever read by elementwise ops, so nothing else refers to
	// its storage (see planReuse). For a while op they are the operands
	// the loop owns alone from its first iteration (so its first in-place
	// update needs no copy): a fresh result (a constant decoded at run
	// time, a dot product) read by nothing else but ops before it that keep
	// nothing of it.
	reuse []int
	// overwrite lists the other operand positions of an in-place op whose
	// values nothing reads after it (see planConsume): a carried value of
	// a loop, a value from outside an if's branch. The kernel may
	// overwrite one when the run owns its storage and no other live value
	// refers to it (Exec.overwritable), which only the run can tell.
	overwrite []int
	// keeps is set on an op whose kernel may keep its operands or return
	// storage kept elsewhere (see mayKeepOperands).
	keeps bool
	// refine is set on an op with a dynamic result its kernel runs on a
	// copy refined to the run-time operand types (refine.go).
	refine bool
	// consume is set on a dynamic_update_slice whose operand is needed by
	// nothing that runs after it (see planConsume): when the operand is a
	// loop-carried tensor the running while loop owns alone (no other
	// value or slice view of the run refers to its storage, and no op that
	// may keep its operands has seen it: Exec.kept), the update is written
	// into it in place.
	consume bool
	// sumInto, on a dot whose product the next op adds to a value that
	// nothing reads after that add, is the value's slot + 1 (0: none):
	// the dot may add its product into the value's storage (see
	// dot_add.go); addsDot is then, on the add, 1 + the position of the
	// dot's result among its operands.
	sumInto int
	addsDot int
	// sumBranch, when not 0, is 1 + the branch of the if after the dot
	// that opens with the add, and sumCond the slot of that if's
	// condition.
	sumBranch, sumCond int
}

// Compile checks a module and prepares it to run. main names the entry
// function ("" means "main", or the only public function).
func Compile(m *stablehlo.Module, main string) (*Program, error) {
	return compileProgram(m, main, true)
}

// checkTypesFlow checks what the kernels take on trust: that each
// function returns (with func.return) the types it declares and that the
// regions of if, case and while return their op's types. A value of
// another type would be handed on under the wrong one (i32 bits read as
// f32). The rest of Verify is not asked for: the interpreter runs some
// forms it refuses (mesh-axis replica groups, older attribute forms).
func checkTypesFlow(m *stablehlo.Module) error {
	for _, f := range m.Funcs {
		if f == nil || f.Body == nil || len(f.Body.Blocks) == 0 || f.Body.Blocks[0] == nil {
			continue
		}
		if t := f.Body.Blocks[0].Terminator(); t == nil || t.Name != "func.return" {
			name := "nothing"
			if t != nil {
				name = t.Name
			}
			return fmt.Errorf("interpreter: @%s: the body ends with %s, want func.return", f.Name, name)
		} else if len(t.Operands) != len(f.ResultTypes) {
			return fmt.Errorf("interpreter: @%s returns %d values, declares %d results", f.Name, len(t.Operands), len(f.ResultTypes))
		} else {
			for i, v := range t.Operands {
				if v == nil {
					return fmt.Errorf("interpreter: @%s returns nil as result %d", f.Name, i)
				}
				if !stablehlo.TypesEqual(v.Type, f.ResultTypes[i]) {
					return fmt.Errorf("interpreter: @%s result %d: returns %v, declares %v", f.Name, i, v.Type, f.ResultTypes[i])
				}
			}
		}
		for i, t := range f.ArgTypes() {
			if tooLarge(t) {
				return fmt.Errorf("interpreter: @%s: argument %d of type %v has more than 2^63 bytes", f.Name, i, t)
			}
		}
		for i, t := range f.ResultTypes {
			if tooLarge(t) {
				return fmt.Errorf("interpreter: @%s: result %d of type %v has more than 2^63 bytes", f.Name, i, t)
			}
		}
		var err error
		f.Walk(func(op *stablehlo.Op) bool {
			for _, r := range op.Results {
				if err == nil && r != nil && tooLarge(r.Type) {
					err = opError(f, op, fmt.Errorf("its result of type %v has more than 2^63 bytes", r.Type))
				}
			}
			if err == nil && op.Name == "stablehlo.constant" {
				if e := constantValueError(op.Attr("value")); e != nil {
					err = opError(f, op, e)
				}
			}
			if err == nil {
				if e := stablehlo.CheckRegionTypes(op); e != nil {
					err = opError(f, op, e)
				} else if e := checkCallTypes(m, op); e != nil {
					err = opError(f, op, e)
				}
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkResultTypes checks every op's declared result types against those
// its operands and attributes give (stablehlo.InferResultTypes): a kernel
// makes its results from its operands, so a program that declares other
// types would hand values on under the wrong ones (an all_reduce declared
// i32 passing its f32 bits on). Operands and attributes the inference
// refuses are left to the op's kernel, whose message is the more specific
// (and the rest of Verify is not asked for, see checkTypesFlow).
func checkResultTypes(m *stablehlo.Module) error {
	for _, f := range m.Funcs {
		if f == nil || f.Body == nil {
			continue
		}
		var err error
		f.Walk(func(op *stablehlo.Op) bool {
			types, known, e := stablehlo.InferResultTypes(op)
			if !known || e != nil {
				return true
			}
			if len(types) != len(op.Results) {
				err = opError(f, op, fmt.Errorf("has %d results, its operands give %d", len(op.Results), len(types)))
				return false
			}
			for i, t := range types {
				if r := op.Results[i]; r != nil && !stablehlo.TypesCompatible(t, r.Type) {
					err = opError(f, op, fmt.Errorf("result %d is declared %v, its operands give %v", i, r.Type, t))
					return false
				}
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// tooLarge reports whether a value of type t (a static tensor, or a
// tuple holding one) has more bytes than an int64 counts: no memory holds
// it, and its size would wrap.
func tooLarge(t stablehlo.Type) bool {
	switch t := t.(type) {
	case stablehlo.TensorType:
		for _, d := range t.Dims {
			if d < 0 {
				return false // dynamic: checked when it has a size
			}
		}
		n := t.Size()
		return n < 0 || n > math.MaxInt64/int64(max(t.DType.HostBytes(), 1))
	case stablehlo.TupleType:
		for _, e := range t.Elems {
			if tooLarge(e) {
				return true
			}
		}
	}
	return false
}

// checkCallTypes checks the results of func.call and stablehlo.composite
// against what the called function declares (a dynamic dimension matching
// any size).
func checkCallTypes(m *stablehlo.Module, op *stablehlo.Op) error {
	sym := op.Callee()
	if sym == "" {
		return nil // not a call, or no symbol: the kernel reports it
	}
	f := m.Func(sym)
	if f == nil {
		return nil // the kernel reports it
	}
	if len(op.Results) != len(f.ResultTypes) {
		return fmt.Errorf("has %d results, @%s returns %d", len(op.Results), sym, len(f.ResultTypes))
	}
	for i, r := range op.Results {
		if !stablehlo.TypesCompatible(r.Type, f.ResultTypes[i]) {
			return fmt.Errorf("result %d is %v, @%s returns %v", i, r.Type, sym, f.ResultTypes[i])
		}
	}
	return nil
}

// compileProgram is Compile; share false compiles the program with every
// storage-sharing optimisation off (Program.unshared), for tests.
func compileProgram(m *stablehlo.Module, main string, share bool) (*Program, error) {
	if m == nil {
		return nil, fmt.Errorf("interpreter: nil module")
	}
	if err := checkTypesFlow(m); err != nil {
		return nil, err
	}
	p := &Program{Module: m, funcs: map[string]*funcPlan{}, NumReplicas: 1, NumPartitions: 1, unshared: !share, vecRegions: new(sync.Map)}
	for _, c := range []struct {
		name string
		to   *int
	}{{"mhlo.num_replicas", &p.NumReplicas}, {"mhlo.num_partitions", &p.NumPartitions}} {
		if a, ok := m.Attr(c.name).(stablehlo.IntAttr); ok {
			if a.Value < 1 || a.Value > maxDevices {
				return nil, fmt.Errorf("interpreter: %s is %d, want 1 to %d", c.name, a.Value, maxDevices)
			}
			*c.to = int(a.Value)
		}
	}
	if n := p.NumReplicas * p.NumPartitions; n > maxDevices {
		return nil, fmt.Errorf("interpreter: %d replicas x %d partitions is %d devices, more than the %d the interpreter simulates", p.NumReplicas, p.NumPartitions, n, maxDevices)
	}
	for _, f := range m.Funcs {
		fp, err := planFunc(f, share)
		if err != nil {
			return nil, err
		}
		p.funcs[f.Name] = fp
		for _, pl := range fp.ops {
			if pl.konst != nil {
				if p.constStorage == nil {
					p.constStorage = map[uintptr]bool{}
				}
				p.constStorage[pl.konst.dataPointer()] = true
			}
		}
	}
	if err := checkResultTypes(m); err != nil {
		return nil, err
	}
	if main == "" {
		main = m.EntryName()
	}
	p.Main = m.Func(main)
	if p.Main == nil || p.Main.Body == nil {
		for _, g := range m.Globals {
			if g.Name == "builtin.module" {
				return nil, fmt.Errorf("interpreter: module has no function @%s to run at its top level (it holds a module inside it, or modules written one after another, whose functions the interpreter does not look into)", main)
			}
		}
		return nil, fmt.Errorf("interpreter: module has no function @%s to run", main)
	}
	if c := m.CallCycle(main); c != nil {
		return nil, fmt.Errorf("interpreter: recursive call @%s: StableHLO functions cannot call themselves, directly or through others (XLA rejects call cycles)", strings.Join(c, " -> @"))
	}
	return p, nil
}

// maxSharedConstant is the largest constant (in elements) decoded once at
// compile time; larger ones are decoded when they run, so a program holds
// no expanded copies of its big splats.
const maxSharedConstant = 4096

// decodeSmallConstant returns the value of a constant op of at most
// maxSharedConstant elements, or nil (also for a malformed one, which the
// kernel then reports when it runs).
func decodeSmallConstant(op *stablehlo.Op) *Tensor {
	if len(op.Results) != 1 {
		return nil
	}
	if tt, ok := op.Results[0].Type.(stablehlo.TensorType); !ok || tt.Size() < 1 || tt.Size() > maxSharedConstant {
		return nil
	}
	out, err := constantKernel(nil, op, nil)
	if err != nil {
		return nil
	}
	return out[0].(*Tensor)
}

func planFunc(f *stablehlo.Func, share bool) (*funcPlan, error) {
	fp := &funcPlan{fn: f, slots: map[*stablehlo.Value]int{}, ops: map[*stablehlo.Op]*opPlan{}, blocks: map[*stablehlo.Block][]*opPlan{},
		operands: map[*stablehlo.Block]int{}}
	if f.Body == nil {
		return fp, nil
	}
	slot := func(v *stablehlo.Value) int {
		if i, ok := fp.slots[v]; ok {
			return i
		}
		fp.slots[v] = fp.size
		fp.size++
		return fp.size - 1
	}
	fp.dead = deadOps(f)
	dead := fp.dead
	var planRegion func(r *stablehlo.Region) error
	planRegion = func(r *stablehlo.Region) error {
		for _, b := range r.Blocks {
			for _, a := range b.Args {
				slot(a)
			}
			for _, op := range b.Ops {
				k := kernelFor(op.Name)
				if k == nil && !isTerminator(op.Name) {
					return opError(f, op, fmt.Errorf("op %s is not supported by the interpreter", op.Name))
				}
				if c := opCheckFor(op.Name); c != nil {
					if err := c(op); err != nil {
						return opError(f, op, err)
					}
				}
				if dead[op] {
					continue
				}
				pl := &opPlan{op: op, kernel: k, keeps: mayKeepsOperands(op.Name), refine: refinable(op)}
				if op.Name == "stablehlo.constant" && share {
					pl.konst = decodeSmallConstant(op)
				}
				if share {
					pl.scalar = planScalar(op)
				}
				for _, v := range op.Operands {
					i, ok := fp.slots[v]
					if !ok {
						return opError(f, op, fmt.Errorf("operand is used before it is defined"))
					}
					pl.in = append(pl.in, i)
				}
				for _, rg := range op.Regions {
					if err := planRegion(rg); err != nil {
						return err
					}
				}
				for _, v := range op.Results {
					pl.out = append(pl.out, slot(v))
				}
				fp.ops[op] = pl
				fp.blocks[b] = append(fp.blocks[b], pl)
				if !pl.keeps {
					fp.operands[b] += len(pl.in)
				}
			}
			planFrees(fp, b)
			if share {
				planReuse(fp, fp.blocks[b])
			}
		}
		return nil
	}
	if err := planRegion(f.Body); err != nil {
		return nil, err
	}
	if !share {
		return fp, nil
	}
	planConsume(fp)
	uses := map[*stablehlo.Value]int{}
	for _, b := range f.Body.Blocks {
		countUses(b.Ops, uses)
	}
	for b := range fp.blocks {
		planSliceViews(fp, b, uses)
	}
	return fp, nil
}

// planConsume marks each dynamic_update_slice whose operand is not read by
// anything that can run after it: later ops of its block (with their
// regions), whatever runs after the ops enclosing it, and, inside a region
// that runs repeatedly (a while body, a reduction's computation ...), every
// value the region reads from outside. if and case branches run at most
// once per execution of their op. With the same knowledge it marks the
// operands in-place ops may overwrite (opPlan.overwrite) and the dots that
// may add into a value (planDotAdd).
func planConsume(fp *funcPlan) {
	// uses adds the slots op reads, in its regions too.
	var uses func(op *stablehlo.Op, into map[int]bool)
	uses = func(op *stablehlo.Op, into map[int]bool) {
		for _, v := range op.Operands {
			if s, ok := fp.slots[v]; ok {
				into[s] = true
			}
		}
		for _, r := range op.Regions {
			for _, b := range r.Blocks {
				for _, inner := range b.Ops {
					uses(inner, into)
				}
			}
		}
	}
	var walk func(b *stablehlo.Block, liveAfter map[int]bool)
	walk = func(b *stablehlo.Block, liveAfter map[int]bool) {
		plans := fp.blocks[b]
		live := maps.Clone(liveAfter)
		for i := len(plans) - 1; i >= 0; i-- {
			pl := plans[i]
			if pl.op.Name == "stablehlo.dynamic_update_slice" && len(pl.in) > 0 && !live[pl.in[0]] &&
				!slices.Contains(pl.in[1:], pl.in[0]) {
				pl.consume = true
			}
			if j := prevOp(plans, i); j >= 0 {
				planDotAdd(fp, plans[j], pl, live)
			}
			if inPlaceOps[pl.op.Name] && len(pl.op.Regions) == 0 && !pl.keeps {
				for j, s := range pl.in {
					if !live[s] && spareSized(pl.op.Operands[j]) && !slices.Contains(pl.reuse, j) &&
						!slices.Contains(pl.in[j+1:], s) && !slices.Contains(pl.in[:j], s) {
						pl.overwrite = append(pl.overwrite, j)
					}
				}
			}
			if len(pl.op.Regions) > 0 {
				inner := maps.Clone(live)
				once := pl.op.Name == "stablehlo.if" || pl.op.Name == "stablehlo.case"
				multiBlock := false
				for _, r := range pl.op.Regions {
					multiBlock = multiBlock || len(r.Blocks) > 1
				}
				if !once || multiBlock {
					// Values the regions read from outside them stay live
					// through every run of the regions.
					read, defined := map[int]bool{}, map[int]bool{}
					var inside func(op *stablehlo.Op)
					inside = func(op *stablehlo.Op) {
						for _, r := range op.Regions {
							for _, b := range r.Blocks {
								for _, a := range b.Args {
									defined[fp.slots[a]] = true
								}
								for _, innerOp := range b.Ops {
									uses(innerOp, read)
									for _, v := range innerOp.Results {
										defined[fp.slots[v]] = true
									}
									inside(innerOp)
								}
							}
						}
					}
					inside(pl.op)
					for s := range read {
						if !defined[s] {
							inner[s] = true
						}
					}
				}
				for _, r := range pl.op.Regions {
					for _, rb := range r.Blocks {
						walk(rb, inner)
					}
				}
			}
			uses(pl.op, live)
		}
	}
	for _, b := range fp.fn.Body.Blocks {
		walk(b, map[int]bool{})
	}
}

// prevOp is the index of the op before plans[i] in its block, small
// constants (decoded at compile time, nothing run) aside; -1 when none.
func prevOp(plans []*opPlan, i int) int {
	for j := i - 1; j >= 0; j-- {
		if plans[j].konst == nil {
			return j
		}
	}
	return -1
}

// planFrees records, for each op of b, the values of b that die there.
func planFrees(fp *funcPlan, b *stablehlo.Block) {
	plans := fp.blocks[b]
	last := map[int]int{} // slot -> index of the last op of b using it
	var uses func(op *stablehlo.Op, i int)
	uses = func(op *stablehlo.Op, i int) {
		for _, v := range op.Operands {
			if s, ok := fp.slots[v]; ok {
				last[s] = i
			}
		}
		for _, r := range op.Regions {
			for _, rb := range r.Blocks {
				for _, inner := range rb.Ops {
					uses(inner, i)
				}
			}
		}
	}
	for i, pl := range plans {
		uses(pl.op, i)
	}
	defined := map[int]bool{}
	for i, a := range b.Args {
		defined[fp.slots[a]] = true
		if _, used := last[fp.slots[a]]; !used {
			if fp.unusedArgs == nil {
				fp.unusedArgs = map[*stablehlo.Block][]bool{}
			}
			if fp.unusedArgs[b] == nil {
				fp.unusedArgs[b] = make([]bool, len(b.Args))
			}
			fp.unusedArgs[b][i] = true
		}
	}
	for _, pl := range plans {
		for _, s := range pl.out {
			defined[s] = true
		}
	}
	for s, i := range last {
		if defined[s] {
			plans[i].free = append(plans[i].free, s)
		}
	}
	for _, pl := range plans {
		for _, s := range pl.out {
			if _, used := last[s]; !used {
				pl.free = append(pl.free, s)
			}
		}
	}
	for _, pl := range plans {
		sort.Ints(pl.free)
	}
}

// inPlaceOps are the ops whose kernels only read their operands and
// return a freshly allocated result of the same shape: their results can
// be written into a dead operand of the same type.
var inPlaceOps = map[string]bool{}

// freshResultOps are other ops whose kernels always return newly allocated
// results that nothing else refers to: an in-place op may write into them
// when they die there.
var freshResultOps = map[string]bool{"stablehlo.dot_general": true, "stablehlo.dot": true}

// planReuse marks, for each in-place op, the operands it may overwrite,
// and for each while op, the operands its loop may own from the start.
func planReuse(fp *funcPlan, plans []*opPlan) {
	producer := map[int]*opPlan{}
	for _, pl := range plans {
		for _, s := range pl.out {
			producer[s] = pl
		}
	}
	// Every user of a value, anywhere in the function, must be an in-place
	// op: then no kernel ever kept or aliased its storage.
	onlyReadByInPlace := map[int]bool{}
	useCount := map[int]int{}
	var visit func(ops []*stablehlo.Op)
	visit = func(ops []*stablehlo.Op) {
		for _, op := range ops {
			if fp.dead[op] {
				continue
			}
			for _, v := range op.Operands {
				s, ok := fp.slots[v]
				if !ok {
					continue
				}
				useCount[s]++
				if _, seen := onlyReadByInPlace[s]; !seen {
					onlyReadByInPlace[s] = true
				}
				if !inPlaceOps[op.Name] {
					onlyReadByInPlace[s] = false
				}
			}
			for _, r := range op.Regions {
				for _, b := range r.Blocks {
					visit(b.Ops)
				}
			}
		}
	}
	for _, b := range fp.fn.Body.Blocks {
		visit(b.Ops)
	}
	dies := func(pl *opPlan, s int) bool {
		i := sort.SearchInts(pl.free, s)
		return i < len(pl.free) && pl.free[i] == s
	}
	// earlierReads counts, for each value, its readers so far in this
	// block that keep nothing of it (elementwise ops, dynamic_slice: a
	// slice read in place by a dot is read before any op with regions).
	earlierReads := map[int]int{}
	for _, pl := range plans {
		if pl.op.Name == "stablehlo.while" {
			for j, s := range pl.in {
				prod := producer[s]
				fresh := prod != nil && (freshResultOps[prod.op.Name] || prod.op.Name == "stablehlo.constant" && prod.konst == nil)
				if fresh && useCount[s] == 1+earlierReads[s] && dies(pl, s) {
					pl.reuse = append(pl.reuse, j)
				}
			}
		}
		if (inPlaceOps[pl.op.Name] || pl.op.Name == "stablehlo.dynamic_slice") && len(pl.op.Regions) == 0 {
			for _, s := range pl.in {
				earlierReads[s]++
			}
		}
		if !inPlaceOps[pl.op.Name] {
			continue
		}
		for j, s := range pl.in {
			prod := producer[s]
			if prod == nil || !(inPlaceOps[prod.op.Name] || freshResultOps[prod.op.Name]) || !onlyReadByInPlace[s] {
				continue
			}
			if dies(pl, s) {
				pl.reuse = append(pl.reuse, j)
			}
		}
	}
}

func isTerminator(name string) bool {
	return name == "func.return" || name == "stablehlo.return"
}

// opError wraps err with the function, op and location.
func opError(f *stablehlo.Func, op *stablehlo.Op, err error) error {
	loc := ""
	if lname, file, line, _ := op.Loc.Where(); file != "" {
		loc = fmt.Sprintf(" at %s:%d", file, line)
	} else if lname != "" {
		loc = fmt.Sprintf(" (%s)", lname)
	}
	if op.Line > 0 { // its line in the module's text
		loc += fmt.Sprintf(" (line %d)", op.Line)
	}
	name := "?"
	if f != nil {
		name = f.Name
	}
	return fmt.Errorf("interpreter: @%s: %s%s: %w", name, op.Name, loc, err)
}

// Device identifies the simulated device a computation runs on.
type Device struct {
	Replica, Partition int
	// Rendezvous connects the devices of one execution for collectives;
	// nil when the execution has one device.
	Rendezvous *Rendezvous
}

// Exec is the state of one run of a program on one device.
type Exec struct {
	Ctx     context.Context
	Program *Program
	Device  Device
	frames  []*frame
	// dead holds the operands the current kernel may overwrite, or a while
	// loop own (see opPlan.reuse); TakeDead hands them out.
	dead []*Tensor
	// sp is the storage this run allocated and may reuse (see spare.go).
	sp spareState
	// packs are the packed windows of arguments kept for reuse (see
	// dot_pack.go).
	packs packCache
	// owners is a stack with one entry per running while body (nil for
	// any other region or function with arguments): the loop-carried
	// tensors that loop alone refers to.
	owners []*loopOwner
	// kept is the storage of the operands of ops that may keep them
	// (opPlan.keeps) in this run: a loop never updates it in place.
	kept map[uintptr]bool
	// sumInto is the tensor the running dot may add its product into
	// (see dot_add.go), or nil.
	sumInto *Tensor
	sums    int // dots that did so in this run (for tests)
	// overwrites counts the operands opPlan.overwrite offered to kernels
	// in this run (for tests).
	overwrites int
	// stop is set when the run's context ends (see stopFlag).
	stop atomic.Bool
	// prof is the run's Profile (WithProfile), or nil; nested is the
	// time of the ops run inside the regions of the op running now.
	prof   *Profile
	nested time.Duration
}

// loopOwner is what a running while loop knows of its carried tensors.
type loopOwner struct {
	// excl are the carried tensors of this iteration that nothing outside
	// the loop, and no other carried value, refers to.
	excl map[*Tensor]bool
	// fresh are the tensors this iteration allocated as the result of a
	// dynamic_update_slice (nil until there is one).
	fresh map[*Tensor]bool
}

// owner returns the loop owner of the innermost region, or nil.
func (x *Exec) owner() *loopOwner {
	if len(x.owners) == 0 {
		return nil
	}
	return x.owners[len(x.owners)-1]
}

// MarkFresh records that t was just allocated by a kernel of the running
// loop body (so the loop may own it from the next iteration on).
func (x *Exec) markFresh(t *Tensor) {
	if o := x.owner(); o != nil {
		if o.fresh == nil {
			o.fresh = map[*Tensor]bool{}
		}
		o.fresh[t] = true
	}
}

// TakeDead returns an operand of the running op that dies at it and has
// exactly shape s, for the kernel to write its result into, or nil. Only
// kernels of in-place ops (registered with RegisterInPlaceKernel) get any.
func (x *Exec) TakeDead(s xla.Shape) *Tensor {
	for i, t := range x.dead {
		if t != nil && t.Shape.Equal(s) {
			x.dead[i] = nil
			return t
		}
	}
	return nil
}

type frame struct {
	plan *funcPlan
	vals []Value
}

// RunModule compiles m's function main (as Compile) and runs it once on
// args on the default device (as Program.Run): the two steps of a
// program that runs once.
func RunModule(ctx context.Context, m *stablehlo.Module, main string, args ...Value) ([]Value, error) {
	p, err := Compile(m, main)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, Device{}, args)
}

// Run executes the program's main function on one device. It returns
// ctx's error soon after ctx ends, also in the middle of a long op: the
// kernels that can take long (loops, products, convolutions, sorts,
// transforms, reductions, windows, gathers and scatters, random numbers,
// factorizations) stop as they go; what still finishes first is an op
// that moves each element once (elementwise, copies, reshapes). A nil ctx
// is context.Background. Each argument must be valid (Tensor.Validate) and
// of its parameter's type: an argument that is not is an error naming it.
func (p *Program) Run(ctx context.Context, dev Device, args []Value) ([]Value, error) {
	if err := p.runnable(); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background() // as a run that cannot be stopped
	}
	if rv := dev.Rendezvous; rv != nil && (dev.Replica < 0 || dev.Replica >= rv.replicas || dev.Partition < 0 || dev.Partition >= rv.partitions) {
		return nil, fmt.Errorf("interpreter: device (replica %d, partition %d) is outside its Rendezvous's %d x %d grid", dev.Replica, dev.Partition, rv.replicas, rv.partitions)
	}
	x := &Exec{Ctx: ctx, Program: p, Device: dev}
	return x.Call(p.Main, args)
}

// runnable is the error of running p: nil, or not made by Compile.
func (p *Program) runnable() error {
	if p == nil {
		return errors.New("interpreter: run of a nil *Program")
	}
	if p.Main == nil || p.funcs == nil {
		return errors.New("interpreter: run of a Program not made by Compile")
	}
	return nil
}

// Call runs function f with args. The arguments of the outermost call (a
// run's) are checked to be valid tensors (Tensor.Validate); inner calls
// take values the kernels made.
func (x *Exec) Call(f *stablehlo.Func, args []Value) ([]Value, error) {
	if x.Program == nil || f == nil {
		return nil, errors.New("interpreter: Call needs a program and a function")
	}
	fp := x.Program.funcs[f.Name]
	if fp == nil || f.Body == nil || len(f.Body.Blocks) == 0 {
		return nil, fmt.Errorf("interpreter: function @%s has no body", f.Name)
	}
	entry := f.Body.Blocks[0]
	if len(args) != len(entry.Args) {
		return nil, fmt.Errorf("interpreter: @%s takes %d arguments, got %d", f.Name, len(entry.Args), len(args))
	}
	outermost := len(x.frames) == 0
	copied := false
	for i, a := range entry.Args {
		if outermost {
			// An empty tensor may have a nil Data: the kernels get its
			// typed empty slice (in a copy: the caller's tensor and args
			// are not changed).
			v, changed, err := prepareValue(args[i])
			if err != nil {
				return nil, fmt.Errorf("interpreter: @%s argument %d: %w", f.Name, i, err)
			}
			if changed {
				if !copied {
					args, copied = slices.Clone(args), true
				}
				args[i] = v
			}
		}
		if err := checkValue(a.Type, args[i]); err != nil {
			return nil, fmt.Errorf("interpreter: @%s argument %d: %w", f.Name, i, err)
		}
	}
	if outermost {
		if x.Ctx == nil { // as Program.Run: the kernels and loops ask it
			x.Ctx = context.Background()
		}
		x.prof = profileOf(x.Ctx)
		x.stop.Store(false) // an Exec run again
		if x.Ctx != nil && x.Ctx.Done() != nil {
			// Long kernels (products, factorizations) stop when the run's
			// context ends, not only between ops.
			x.stop.Store(x.Ctx.Err() != nil)
			done := make(chan struct{})
			stopf := context.AfterFunc(x.Ctx, func() { x.stop.Store(true); close(done) })
			defer func() {
				if !stopf() {
					<-done // a started callback must not set the next run's flag
				}
			}()
		}
	}
	if outermost && (x.Device.Rendezvous != nil || x.Program.unshared) {
		x.sp.off = true // collectives pass values between devices
	}
	if outermost && !x.Program.unshared {
		x.noteArgs(args)
		defer x.packs.done() // the kept windows' memory, for later runs
	}
	if outermost {
		defer x.poolSpares()
	}
	fr := &frame{plan: fp, vals: make([]Value, fp.size)}
	x.frames = append(x.frames, fr)
	x.owners = append(x.owners, nil) // the caller's loop does not own the callee's values
	defer func() {
		x.frames = x.frames[:len(x.frames)-1]
		x.owners = x.owners[:len(x.owners)-1]
	}()
	out, err := x.runBlock(entry, args)
	if err == nil && outermost && len(x.Program.constStorage) > 0 {
		// A result sharing a compile-time constant's storage leaves as a
		// copy: the caller (or a backend buffer) may write into it.
		x.Program.copyConstants(out)
	}
	return out, err
}

// copyConstants replaces the tensors of vals (in tuples too) that share a
// compile-time constant's storage by copies. A tuple holding one is
// copied, not changed: other values may hold it.
func (p *Program) copyConstants(vals []Value) bool {
	changed := false
	for i, v := range vals {
		switch v := v.(type) {
		case *Tensor:
			if v != nil && p.constStorage[v.dataPointer()] {
				vals[i], changed = v.Clone(), true
			}
		case Tuple:
			c := slices.Clone(v)
			if p.copyConstants(c) {
				vals[i], changed = c, true
			}
		}
	}
	return changed
}

// RunRegion runs the entry block of region r (of the current function) with
// the given block arguments and returns the terminator's operands.
func (x *Exec) RunRegion(r *stablehlo.Region, args []Value) ([]Value, error) {
	if r == nil || len(r.Blocks) == 0 {
		return nil, fmt.Errorf("interpreter: empty region")
	}
	b := r.Blocks[0]
	if len(args) != len(b.Args) {
		return nil, fmt.Errorf("interpreter: region takes %d arguments, got %d", len(b.Args), len(args))
	}
	if len(args) > 0 {
		// Its arguments are other values' tensors: no loop owns them here,
		// and the kernel running the region may still use them after it.
		x.owners = append(x.owners, nil)
		x.sp.held = append(x.sp.held, args)
		defer func() {
			x.owners = x.owners[:len(x.owners)-1]
			x.sp.held = x.sp.held[:len(x.sp.held)-1]
		}()
	}
	return x.runBlock(b, args)
}

// runLoopBody runs a while body whose carried tensors in excl the loop
// owns alone, and returns its results and the results the loop owns alone
// after this iteration: those it owned or this iteration allocated by a
// dynamic_update_slice, unless another result shares their storage.
func (x *Exec) runLoopBody(r *stablehlo.Region, args []Value, excl map[*Tensor]bool) ([]Value, map[*Tensor]bool, error) {
	if r == nil || len(r.Blocks) == 0 {
		return nil, nil, fmt.Errorf("interpreter: empty region")
	}
	b := r.Blocks[0]
	if len(args) != len(b.Args) {
		return nil, nil, fmt.Errorf("interpreter: region takes %d arguments, got %d", len(b.Args), len(args))
	}
	if unused := x.frames[len(x.frames)-1].plan.unusedArgs[b]; unused != nil && len(x.sp.own) > 0 {
		// A carried value the body does not read dies as the iteration
		// starts (a pallas kernel's accumulator that a step overwrites
		// without reading): its storage may serve this iteration's
		// results. The condition, which may read it, has run; another
		// carried value may share its storage.
		for i, u := range unused {
			if t, ok := args[i].(*Tensor); ok && u && t != nil {
				if p, _ := storagePtr(t); valuesUsing(args, p, 0, 2) == 1 {
					x.released(t)
				}
			}
		}
	}
	o := &loopOwner{excl: excl}
	x.owners = append(x.owners, o)
	res, err := x.runBlock(b, args)
	x.owners = x.owners[:len(x.owners)-1]
	if err != nil {
		return nil, nil, err
	}
	if len(o.fresh) == 0 && len(excl) == 0 {
		return res, nil, nil // nothing owned: the common loop pays no more
	}
	storage := map[uintptr]int{}
	for _, v := range res {
		if t, ok := v.(*Tensor); ok && t != nil {
			storage[t.dataPointer()]++
		}
	}
	next := map[*Tensor]bool{}
	for _, v := range res {
		t, ok := v.(*Tensor)
		if !ok || t == nil || t.Len() == 0 || storage[t.dataPointer()] != 1 {
			continue
		}
		if o.fresh[t] || excl[t] {
			next[t] = true
		}
	}
	return res, next, nil
}

func (x *Exec) runBlock(b *stablehlo.Block, args []Value) ([]Value, error) {
	fr := x.frames[len(x.frames)-1]
	unused := fr.plan.unusedArgs[b]
	for i, a := range b.Args {
		if unused == nil || !unused[i] {
			fr.vals[fr.plan.slots[a]] = args[i]
		}
	}
	plans := fr.plan.blocks[b]
	// The operands of every op come from one allocation; each op's part
	// is cleared once the op is done, so the block holds no value longer
	// than the frame does. Ops that may keep their operands (collectives,
	// whose peers read the slice after the op returns; custom calls) get
	// a slice of their own.
	arena := make([]Value, fr.plan.operands[b])
	var prev []Value
	for _, pl := range plans {
		clear(prev)
		prev = nil
		if pl.konst != nil {
			fr.vals[pl.out[0]] = pl.konst
			for _, s := range pl.free {
				fr.vals[s] = nil
			}
			continue
		}
		var in []Value
		if pl.keeps {
			in = make([]Value, len(pl.in))
		} else {
			in = arena[:len(pl.in):len(pl.in)]
			arena = arena[len(pl.in):]
			prev = in
		}
		for i, s := range pl.in {
			in[i] = fr.vals[s]
		}
		if isTerminator(pl.op.Name) {
			for _, s := range pl.free {
				fr.vals[s] = nil
			}
			return in, nil // the caller's now: not cleared
		}
		if x.Ctx.Err() != nil {
			return nil, context.Cause(x.Ctx)
		}
		if pl.scalar != nil {
			if t, ok := x.runScalar(pl, in); ok {
				fr.vals[pl.out[0]] = t
				x.drop(fr, pl)
				continue
			}
		}
		if pl.addsDot > 0 && sameStorage(in[0], in[1]) {
			// The dot before added its product into the other operand.
			fr.vals[pl.out[0]] = in[pl.addsDot-1]
			for _, s := range pl.free {
				fr.vals[s] = nil
			}
			continue
		}
		x.dead = x.dead[:0]
		for _, j := range pl.reuse {
			if t, ok := in[j].(*Tensor); ok {
				x.dead = append(x.dead, t)
				if pl.op.Name == "stablehlo.while" {
					// The value dies here and the loop owns its tensor
					// from the start: its slot no longer refers to it.
					fr.vals[pl.in[j]] = nil
				}
			}
		}
		for _, j := range pl.overwrite {
			if t := x.overwritable(in[j]); t != nil {
				x.dead = append(x.dead, t)
				x.overwrites++
			}
		}
		if pl.consume {
			if t, ok := in[0].(*Tensor); ok {
				// The loop owns t, and no other value of the run refers to
				// it: an if, case or tuple op inside the body may have
				// handed the same tensor to another live value (or a slice
				// view of it may wait for its dot). Nor has an op that may
				// keep it seen it: a custom call may have kept it, a
				// collective's peers may still be reading it.
				if o := x.owner(); o != nil && o.excl[t] && !x.isKept(t) && x.soleReference(t) {
					x.dead = append(x.dead, t)
				}
			}
		}
		if pl.sumInto > 0 && sumTaken(pl, fr.vals) {
			x.sumInto = x.overwritable(fr.vals[pl.sumInto-1])
		}
		keeps := pl.keeps
		if keeps {
			x.disown(in)
			x.noteKept(in)
		}
		var out []Value
		var err error
		out, err = x.runKernel(pl, in)
		x.dead = x.dead[:0]
		x.sumInto = nil
		if keeps {
			x.disown(out)
		}
		if err != nil {
			return nil, opError(fr.plan.fn, pl.op, err)
		}
		if len(out) != len(pl.out) {
			return nil, opError(fr.plan.fn, pl.op, fmt.Errorf("kernel returned %d values for %d results", len(out), len(pl.out)))
		}
		for i, s := range pl.out {
			fr.vals[s] = out[i]
		}
		x.drop(fr, pl)
	}
	return nil, fmt.Errorf("interpreter: block has no terminator")
}

// drop clears the slots of the values whose last use was pl and offers
// their storage for reuse.
func (x *Exec) drop(fr *frame, pl *opPlan) {
	if len(x.sp.own) == 0 {
		for _, s := range pl.free {
			fr.vals[s] = nil
		}
		return
	}
	// Drop every dying value first, then offer each one's storage for
	// reuse: one of them may share another's.
	var buf [4]Value
	dying := buf[:0]
	for _, s := range pl.free {
		if v := fr.vals[s]; v != nil {
			dying = append(dying, v)
			fr.vals[s] = nil
		}
	}
	for _, v := range dying {
		x.released(v)
	}
}

// stopFlag is the flag long kernels poll to end early when the run's
// context ends (nil for a nil x).
func (x *Exec) stopFlag() *atomic.Bool {
	if x == nil {
		return nil
	}
	return &x.stop
}

// runKernel runs pl's kernel (profiled when asked), its allocation
// failures (an *AllocError) made its error.
func (x *Exec) runKernel(pl *opPlan, in []Value) (out []Value, err error) {
	defer catchAlloc(&err)
	op := pl.op
	if pl.refine {
		if op, err = refineOp(op, in); err != nil {
			return nil, err
		}
	}
	if x.prof != nil {
		out, err = x.profiled(pl, op, in)
	} else {
		out, err = pl.kernel(x, op, in)
	}
	if (err == nil || errors.Is(err, errStopped)) && x.stop.Load() && x.Ctx != nil {
		// The kernel may have ended early, its result unfinished.
		if x.Ctx.Err() != nil {
			return nil, context.Cause(x.Ctx)
		}
	}
	return out, err
}

// profiled runs pl's kernel and adds its own time (less that of the ops
// its regions ran) to the profile.
func (x *Exec) profiled(pl *opPlan, op *stablehlo.Op, in []Value) ([]Value, error) {
	outer := x.nested
	x.nested = 0
	t0 := time.Now()
	out, err := pl.kernel(x, op, in)
	d := time.Since(t0)
	x.prof.add(pl.op.Name, d-x.nested)
	x.nested = outer + d
	return out, err
}

// noteKept records the storage of the tensors in vals (an op may keep
// them: a custom call, a collective whose peers read them after it
// returns ...).
func (x *Exec) noteKept(vals []Value) {
	for _, v := range vals {
		switch v := v.(type) {
		case *Tensor:
			if v == nil {
				continue
			}
			if p, _ := storagePtr(v); p != 0 {
				if x.kept == nil {
					x.kept = map[uintptr]bool{}
				}
				x.kept[p] = true
			}
		case Tuple:
			x.noteKept(v)
		}
	}
}

// isKept reports whether an op that may keep its operands has seen t's
// storage.
func (x *Exec) isKept(t *Tensor) bool {
	if len(x.kept) == 0 {
		return false
	}
	p, _ := storagePtr(t)
	return x.kept[p]
}

// prepareValue checks the tensors of v (in tuples too) with
// Tensor.Validate and returns v with withStorage applied to them, and
// whether that changed any.
func prepareValue(v Value) (Value, bool, error) {
	switch v := v.(type) {
	case *Tensor:
		if err := v.Validate(); err != nil {
			return nil, false, err
		}
		w := withStorage(v)
		return w, w != v, nil
	case Tuple:
		var out Tuple
		for i, e := range v {
			w, changed, err := prepareValue(e)
			if err != nil {
				return nil, false, fmt.Errorf("tuple element %d: %w", i, err)
			}
			if changed && out == nil {
				out = slices.Clone(v)
			}
			if out != nil {
				out[i] = w
			}
		}
		if out != nil {
			return out, true, nil
		}
	}
	return v, false, nil
}

// checkValue reports whether v fits type t.
func checkValue(t stablehlo.Type, v Value) error {
	switch t := t.(type) {
	case stablehlo.TensorType:
		tv, ok := v.(*Tensor)
		if ok && tv == nil {
			return fmt.Errorf("want %v, got a nil *Tensor", t)
		}
		if !ok {
			return fmt.Errorf("want %v, got %T", t, v)
		}
		if !stablehlo.TypesCompatible(t, stablehlo.TensorOf(tv.Shape)) {
			return fmt.Errorf("want %v, got %v", t, stablehlo.TensorOf(tv.Shape))
		}
	case stablehlo.TokenType:
		if _, ok := v.(Token); !ok {
			return fmt.Errorf("want a token, got %T", v)
		}
	case stablehlo.TupleType:
		tv, ok := v.(Tuple)
		if !ok || len(tv) != len(t.Elems) {
			return fmt.Errorf("want %v, got %T", t, v)
		}
		for i := range tv {
			if err := checkValue(t.Elems[i], tv[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResultTensorType returns result i's tensor type, or an error.
func ResultTensorType(op *stablehlo.Op, i int) (stablehlo.TensorType, error) {
	if i >= len(op.Results) {
		return stablehlo.TensorType{}, fmt.Errorf("op has no result %d", i)
	}
	t, ok := op.Results[i].Type.(stablehlo.TensorType)
	if !ok {
		return stablehlo.TensorType{}, fmt.Errorf("result %d is %v, not a tensor", i, op.Results[i].Type)
	}
	return t, nil
}
