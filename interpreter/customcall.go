package interpreter

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/halo-ml/halo/stablehlo"
)

// CustomCall is one call of a stablehlo.custom_call target: what a
// CustomCallFunc sees. Token operands are left out of Operands and token
// results are produced by the interpreter, so a target deals in tensors
// only; tokens still order the call among other side effects, because the
// interpreter runs a function's ops in program order.
type CustomCall struct {
	// Target is the call_target_name.
	Target string
	// Op is the custom_call op (its attributes: backend_config,
	// api_version, called_computations ...).
	Op *stablehlo.Op
	// Exec is the run the call belongs to: its context and device
	// (Exec.Ctx, Exec.Device).
	Exec *Exec
	// Operands are the tensor operands, in order (a tuple operand's
	// tensors in its order; tokens are left out).
	Operands []*Tensor
	// Results are the types of the tensor results the call must return,
	// in order (a tuple result's tensors in its order; tokens are left
	// out).
	Results []stablehlo.TensorType
	// HasSideEffect is the op's has_side_effect attribute.
	HasSideEffect bool
	// BackendConfig is the op's backend_config (StringAttr or DictAttr),
	// or nil.
	BackendConfig stablehlo.Attribute
}

// CustomCallFunc implements a custom_call target: it returns one tensor
// per entry of c.Results, of that type and valid (Tensor.Validate). An
// error fails the call, and the run, with the error.
type CustomCallFunc func(c *CustomCall) ([]*Tensor, error)

var (
	customCallsMu sync.RWMutex
	customCalls   = map[string]CustomCallFunc{}
)

// RegisterCustomCall makes fn the implementation of the custom_call
// target (call_target_name) for every program; registering a target again
// replaces it. A nil fn removes the target. The interpreter registers the
// check targets (check.expect_eq, check.expect_almost_eq,
// check.expect_close, check.eq) itself.
func RegisterCustomCall(target string, fn CustomCallFunc) {
	customCallsMu.Lock()
	defer customCallsMu.Unlock()
	if fn == nil {
		delete(customCalls, target)
		return
	}
	customCalls[target] = fn
}

// CustomCallTargets lists the registered targets, sorted.
func CustomCallTargets() []string {
	customCallsMu.RLock()
	defer customCallsMu.RUnlock()
	out := make([]string, 0, len(customCalls))
	for k := range customCalls {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func customCallFor(target string) CustomCallFunc {
	customCallsMu.RLock()
	defer customCallsMu.RUnlock()
	return customCalls[target]
}

// CheckCustomCallTargets reports the first custom_call of m whose target
// is not registered, naming the target, function and location. Compilers
// that want unknown targets to fail before a run call it (the pjrt backend
// does); a run reports them too, when the call is reached.
func CheckCustomCallTargets(m *stablehlo.Module) error {
	if m == nil {
		return nil
	}
	var err error
	for _, f := range m.Funcs {
		f.Walk(func(op *stablehlo.Op) bool {
			if err != nil {
				return false
			}
			if op.Name != "stablehlo.custom_call" {
				return true
			}
			target, terr := callTarget(op)
			if terr != nil {
				err = opError(f, op, terr)
				return false
			}
			if customCallFor(target) == nil {
				err = opError(f, op, unknownTarget(target))
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func unknownTarget(target string) error {
	if strings.HasPrefix(target, "__gpu$") {
		// XLA's GPU backend's own targets (a Triton kernel: pallas's
		// Triton backend emits one).
		return fmt.Errorf("custom_call target %q is a kernel for XLA's GPU backend: it runs on a CUDA or ROCm PJRT plugin, not on the interpreter (a pallas kernel: build it with Backend: pallas.Interpret, or pallas.BackendFor(the platform))", target)
	}
	if target == "halo.effects.callback" {
		// effects' host callbacks (effects.Print, pallas's DebugPrint)
		// run through a PJRT client, which routes them to Go.
		return fmt.Errorf("custom_call target %q is a host callback of package effects: compile the program with effects.Compile (on the interpreter plugin, pjrt.Open(\"interpreter\"), or any other), which runs its callbacks", target)
	}
	return fmt.Errorf("custom_call target %q is not registered with the interpreter (interpreter.RegisterCustomCall); registered: %s",
		target, strings.Join(CustomCallTargets(), ", "))
}

func callTarget(op *stablehlo.Op) (string, error) {
	switch a := op.Attr("call_target_name").(type) {
	case stablehlo.StringAttr:
		return string(a), nil
	case nil:
		return "", fmt.Errorf("missing call_target_name")
	default:
		return "", fmt.Errorf("call_target_name is %T, want a string", a)
	}
}

func init() {
	registerKernel("stablehlo.custom_call", kernelCustomCall)
	// @Sharding annotates a value with its sharding (mhlo.sharding); for
	// the interpreter, which runs every device's program as written, it
	// is the identity. (Programs that rely on XLA's SPMD partitioner to
	// split a global program into per-device shards are not partitioned:
	// @SPMDFullToShardShape and @SPMDShardToFullShape are not registered.)
	RegisterCustomCall("Sharding", func(c *CustomCall) ([]*Tensor, error) {
		if len(c.Operands) != 1 || len(c.Results) != 1 || !stablehlo.TypesCompatible(stablehlo.TensorOf(c.Operands[0].Shape), c.Results[0]) {
			return nil, fmt.Errorf("@Sharding takes one tensor and returns it")
		}
		return []*Tensor{c.Operands[0]}, nil
	})
	RegisterCustomCall("shape_assertion", shapeAssertion)
}

// shapeAssertion is @shape_assertion, which jax.export adds to modules
// with symbolic shapes: operands (pred, dims...), attribute error_message
// with {0}, {1}, ... for the dims. A false pred fails the run with the
// message, the dims filled in.
func shapeAssertion(c *CustomCall) ([]*Tensor, error) {
	if len(c.Operands) == 0 || len(c.Results) != 0 {
		return nil, fmt.Errorf("@shape_assertion takes a predicate and dimension values and returns nothing")
	}
	pred, ok := c.Operands[0].Data.([]bool)
	if !ok || len(pred) != 1 {
		return nil, fmt.Errorf("@shape_assertion's first operand is %v, want tensor<i1>", stablehlo.TensorOf(c.Operands[0].Shape))
	}
	if pred[0] {
		return nil, nil
	}
	msg := "shape assertion failed"
	if c.Op != nil {
		if m, ok := c.Op.Attr("error_message").(stablehlo.StringAttr); ok {
			msg = string(m)
		}
	}
	for i, t := range c.Operands[1:] {
		v, err := shpScalarInt(t)
		if err != nil {
			return nil, fmt.Errorf("@shape_assertion operand %d: %w", i+1, err)
		}
		msg = strings.ReplaceAll(msg, fmt.Sprintf("{%d}", i), strconv.FormatInt(v, 10))
	}
	return nil, errors.New(msg)
}

// runCustomCall calls fn, turning its panic into an error (an allocation
// refused by the interpreter's checks into that *AllocError), so that the
// error names the target.
func runCustomCall(fn CustomCallFunc, c *CustomCall) (res []*Tensor, err error) {
	defer func() {
		if v := recover(); v != nil {
			if e := allocErrorOf(v); e != nil {
				err = e
				return
			}
			err = fmt.Errorf("panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return fn(c)
}

func kernelCustomCall(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	target, err := callTarget(op)
	if err != nil {
		return nil, err
	}
	fn := customCallFor(target)
	if fn == nil {
		return nil, unknownTarget(target)
	}
	c := &CustomCall{Target: target, Op: op, Exec: x, BackendConfig: op.Attr("backend_config")}
	switch a := op.Attr("has_side_effect").(type) {
	case stablehlo.BoolAttr:
		c.HasSideEffect = bool(a)
	case stablehlo.UnitAttr:
		c.HasSideEffect = true
	}
	// Tuples (the older custom-call forms pass and return them) are
	// flattened: the handler sees their tensors in order.
	var operand func(i int, a Value) error
	operand = func(i int, a Value) error {
		switch v := a.(type) {
		case Token:
		case *Tensor:
			if v == nil {
				return fmt.Errorf("operand %d is nil", i)
			}
			c.Operands = append(c.Operands, v)
		case Tuple:
			for _, e := range v {
				if err := operand(i, e); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("operand %d is %T; custom calls take tensors, tuples and tokens", i, a)
		}
		return nil
	}
	for i, a := range args {
		if err := operand(i, a); err != nil {
			return nil, err
		}
	}
	var result func(i int, t stablehlo.Type) error
	result = func(i int, t stablehlo.Type) error {
		switch t := t.(type) {
		case stablehlo.TokenType:
		case stablehlo.TensorType:
			c.Results = append(c.Results, t)
		case stablehlo.TupleType:
			for _, e := range t.Elems {
				if err := result(i, e); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("result %d has type %v; custom calls return tensors, tuples and tokens", i, t)
		}
		return nil
	}
	for i, r := range op.Results {
		if err := result(i, r.Type); err != nil {
			return nil, err
		}
	}
	res, err := runCustomCall(fn, c)
	if err != nil {
		return nil, fmt.Errorf("custom call %q: %w", target, err)
	}
	if len(res) != len(c.Results) {
		return nil, fmt.Errorf("custom call %q returned %d tensors for %d tensor results", target, len(res), len(c.Results))
	}
	k := 0
	var build func(i int, t stablehlo.Type) (Value, error)
	build = func(i int, t stablehlo.Type) (Value, error) {
		switch t := t.(type) {
		case stablehlo.TokenType:
			return Token{}, nil
		case stablehlo.TupleType:
			tup := make(Tuple, len(t.Elems))
			for j, e := range t.Elems {
				v, err := build(i, e)
				if err != nil {
					return nil, err
				}
				tup[j] = v
			}
			return tup, nil
		}
		r := res[k]
		where := func() string {
			if _, ok := op.Results[i].Type.(stablehlo.TupleType); ok {
				return fmt.Sprintf("tensor %d (in tuple result %d)", k, i)
			}
			return fmt.Sprintf("result %d", i)
		}
		// A ? dim of the declared type takes any size.
		if r == nil || !stablehlo.TypesCompatible(stablehlo.TensorOf(r.Shape), c.Results[k]) {
			got := "nil"
			if r != nil {
				got = stablehlo.TensorOf(r.Shape).String()
			}
			return nil, fmt.Errorf("custom call %q returned %s for %s of type %v", target, got, where(), c.Results[k])
		}
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("custom call %q returned a malformed tensor for %s: %w", target, where(), err)
		}
		k++
		return withStorage(r), nil // an empty result may have a nil Data
	}
	out := make([]Value, len(op.Results))
	for i, r := range op.Results {
		v, err := build(i, r.Type)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
