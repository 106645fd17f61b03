package pallas

import (
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/halo-ml/halo/effects"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// KernelFunc is a kernel: it receives the tracing context and its refs
// (scalar-prefetch refs, inputs, outputs, scratch, in that order) and
// describes one grid step by reading and writing refs. It runs once, at
// trace time; Go control flow and closures template the kernel.
type KernelFunc func(k *Kernel, refs []*Ref)

// IndexMapFunc maps grid indices (i32 scalars, one per grid axis) and the
// scalar-prefetch refs to one block index per array dim: Go ints or integer
// scalar Values.
type IndexMapFunc func(grid []*Value, prefetch []*Ref) []any

// Error is a tracing or lowering error: the kernel, the op and the user's
// source line.
type Error struct {
	Kernel string // the kernel's name
	Op     string // the op, spec or lowering step that failed ("load", "triton", "index map of input 0 ...")
	Loc    Loc    // the user's file:line, when known
	Msg    string // what is wrong
	// Err is the error behind Msg when there is one (the stablehlo
	// builder's, for an op the interpret lowering could not emit).
	Err error

	outside bool // the Triton check's: an access outside its block or array (not a race)
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Error is "pallas: kernel "name": op at file.go:12: message".
func (e *Error) Error() string {
	s := fmt.Sprintf("pallas: kernel %q", e.Kernel)
	if e.Op != "" {
		s += ": " + e.Op
	}
	if e.Loc.File != "" {
		s += " at " + e.Loc.String()
	}
	return s + ": " + e.Msg
}

// traceState is shared by the traces of one call (body and index maps).
type traceState struct {
	name   string
	err    *Error
	nextID int
	// abandoned is where a When, Cond, ForLoop or While body panicked (a panic
	// the kernel itself recovered leaves the trace unusable: its region
	// never closed).
	abandoned Loc
}

// Kernel is the tracing context of a kernel body (or an index map): it
// makes constants, program ids and control flow. Errors are sticky: the
// first one is kept (kernel, op, file:line) and later ops do nothing. A
// Kernel and its Values and Refs are used only while its trace runs: an op
// on them in another kernel's trace is an error of that trace, and one
// after Call has returned, outside any trace, panics (there is no trace
// to record the error in).
type Kernel struct {
	st      *traceState
	stack   []*Region // open regions, innermost last
	gridLen int
	// axisOffset shifts ProgramID/NumPrograms axes (Vmap's leading axis).
	axisOffset int
	// grid holds an index map's grid indices (nil in a kernel body, which
	// reads them with program_id).
	grid []*Value
	// inCond counts the While conditions being traced: a condition only
	// reads, so a store in one is an error (on every backend).
	inCond int
	// done is set when the trace has ended: its Kernel, Values and Refs
	// may not make ops any more (see misuse).
	done bool
	// via names the function the user called whose ops are being traced
	// (TopK, a Bitcast of another width), when it is built of other ops:
	// errors say "concatenate in top_k" (Op.Via).
	via string
}

// within makes the ops traced until the returned func runs parts of
// name (Op.Via), unless an outer function already names them: the
// function the user called is the one errors name.
func (k *Kernel) within(name string) func() {
	if k.via != "" {
		return func() {}
	}
	k.via = name
	return func() { k.via = "" }
}

// Ref is a kernel argument that can be read and written: a block of an
// input or output, a scalar-prefetch array or a scratch buffer.
type Ref struct {
	v *Value
	k *Kernel
	// batch are the grid axes that pick the batch element of a
	// scalar-prefetch array Vmap batched: the ref shows the kernel one
	// element, and every access is prefixed with those grid indices.
	batch []int
}

// Shape is the ref's (block) shape.
func (r *Ref) Shape() []int64 { return append([]int64(nil), r.v.Type.Shape[len(r.batch):]...) }

// DType is the ref's element type.
func (r *Ref) DType() xla.DType { return r.v.Type.DType }

// Info describes the ref (kind, position, shapes). In a kernel batched by
// Vmap it describes the ref as the kernel was written for: without the
// batch dims Vmap adds to the array and its block.
func (r *Ref) Info() RefInfo {
	info := *r.v.Ref
	n := info.batchDims
	info.ArrayShape, info.Block, info.BlockShape = clone(info.ArrayShape[n:]), clone(info.Block[n:]), clone(info.BlockShape[len(r.batch):])
	info.batchDims, info.batchAxes = 0, nil
	return info
}

var pkgPrefix = reflect.TypeFor[Kernel]().PkgPath() + "."

// callerLoc is the first frame outside this package's non-test files.
func callerLoc() Loc {
	var pcs [32]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		internal := strings.HasPrefix(f.Function, pkgPrefix) && !strings.HasSuffix(f.File, "_test.go")
		if !internal && f.File != "" && !strings.HasPrefix(f.Function, "runtime.") {
			return Loc{File: filepath.Base(f.File), Line: f.Line}
		}
		if !more {
			return Loc{}
		}
	}
}

// Err returns the first tracing error, or nil.
func (k *Kernel) Err() error {
	if k.st.err == nil {
		return nil
	}
	return k.st.err
}

func (k *Kernel) failf(op string, format string, args ...any) {
	k.live(op)
	if k.st.err != nil {
		return
	}
	if k.via != "" && k.via != op {
		op += " in " + k.via
	}
	k.st.err = &Error{Kernel: k.st.name, Op: op, Loc: callerLoc(), Msg: fmt.Sprintf(format, args...)}
}

// misuse is the panic value of an op that has no live trace to record its
// error in: a nil *Value or *Ref where the op takes its trace from, or a
// Kernel, Value or Ref of a trace that has ended. The trace that is running
// (runTraced) turns it into the op's error at the user's line.
type misuse struct{ op, msg string }

func (m misuse) Error() string { return "pallas: " + m.op + ": " + m.msg }

// live panics with a misuse when k's trace has ended.
func (k *Kernel) live(op string) {
	if k.done {
		panic(misuse{op, "uses a Value, Ref or Kernel of a kernel or index map whose trace has ended"})
	}
}

// kernelOf is the trace of v, an operand the op takes its trace from.
func kernelOf(op, what string, v *Value) *Kernel {
	if v == nil {
		panic(misuse{op, what + " is nil"})
	}
	if v.k == nil {
		panic(misuse{op, what + " is not a value of a kernel trace"})
	}
	return v.k
}

func (k *Kernel) region() *Region { return k.stack[len(k.stack)-1] }

func (k *Kernel) newValue(t Type, def *Op) *Value {
	k.st.nextID++
	return &Value{Type: Type{DType: t.DType, Shape: append([]int64{}, t.Shape...)}, Def: def, ID: k.st.nextID, k: k}
}

// emit appends an op with the given result types to the current region.
func (k *Kernel) emit(name string, operands []*Value, results []Type, attrs Attrs, regions ...*Region) *Op {
	k.live(name)
	op := &Op{Name: name, Operands: operands, Attrs: attrs, Regions: regions, Loc: callerLoc(), Via: k.via}
	for _, t := range results {
		// Every result shape (indexed, broadcast, dot) fits int64: the
		// lowerings count elements (found in review: a masked slice of
		// 2^32 by 2^32 counted 0).
		k.checkDims(name, t.Shape)
		op.Results = append(op.Results, k.newValue(t, op))
	}
	r := k.region()
	op.region = r
	r.Ops = append(r.Ops, op)
	return op
}

// placeholder is what ops return after an error.
func (k *Kernel) placeholder(t Type) *Value {
	if !t.DType.Valid() {
		t.DType = xla.Float32
	}
	return k.newValue(t, nil)
}

// visible reports whether v belongs to this trace and to an open region.
func (k *Kernel) check(op string, vs ...*Value) bool {
	if k.st.err != nil {
		return false
	}
	for i, v := range vs {
		if v == nil {
			k.failf(op, "operand %d is nil", i)
			return false
		}
		if v.k == nil || v.k.st != k.st || !k.inScope(v) {
			k.failf(op, "operand %d (%s) comes from another kernel, index map or a closed region", i, v.Type)
			return false
		}
	}
	return true
}

func (k *Kernel) inScope(v *Value) bool {
	var owner *Region
	if v.Def != nil {
		owner = v.Def.region
	} else {
		owner = v.argOf
	}
	for _, r := range k.stack {
		if r == owner {
			return true
		}
	}
	return false
}

// ProgramID is the index of the current grid step along axis (i32 scalar).
func (k *Kernel) ProgramID(axis int) *Value {
	return k.gridOp("program_id", axis)
}

// NumPrograms is the grid size along axis (i32 scalar).
func (k *Kernel) NumPrograms(axis int) *Value {
	return k.gridOp("num_programs", axis)
}

func (k *Kernel) gridOp(name string, axis int) *Value {
	t := Type{DType: xla.Int32}
	if k.st.err != nil {
		return k.placeholder(t)
	}
	if axis < 0 || axis+k.axisOffset >= k.gridLen {
		k.failf(name, "axis %d outside the grid of rank %d", axis, k.gridLen-k.axisOffset)
		return k.placeholder(t)
	}
	return k.emit(name, nil, []Type{t}, Attrs{Axis: axis + k.axisOffset}).Results[0]
}

// Const is a scalar constant of dtype (v is a Go number or bool): Full
// with no shape.
func (k *Kernel) Const(dtype xla.DType, v any) *Value {
	return k.Full(dtype, v)
}

// Full is a block of shape filled with v.
func (k *Kernel) Full(dtype xla.DType, v any, shape ...int64) *Value {
	t := Type{DType: dtype, Shape: shape}
	if k.st.err != nil {
		return k.placeholder(t)
	}
	if !dtype.Valid() || dtype.IsComplex() {
		k.failf("const", "unsupported dtype %v", dtype)
		return k.placeholder(t)
	}
	if !k.checkDims("const", shape) {
		return k.placeholder(t)
	}
	c, err := constValue(v, dtype)
	if err != nil {
		k.failf("const", "%v", err)
		return k.placeholder(t)
	}
	return k.emit("const", nil, []Type{t}, Attrs{Value: c}).Results[0]
}

// checkDims fails op when shape has a negative dim.
func (k *Kernel) checkDims(op string, shape []int64) bool {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			k.failf(op, "negative dim in shape %v", shape)
			return false
		}
		if d > 0 && n > math.MaxInt64/d {
			k.failf(op, "shape %v has more than 2^63 elements", shape)
			return false
		}
		n *= d
	}
	return true
}

// Zeros is a block of zeros.
func (k *Kernel) Zeros(dtype xla.DType, shape ...int64) *Value { return k.Full(dtype, 0, shape...) }

// Iota is an integer (or float) block counting along dim.
func (k *Kernel) Iota(dtype xla.DType, dim int, shape ...int64) *Value {
	t := Type{DType: dtype, Shape: shape}
	if k.st.err != nil {
		return k.placeholder(t)
	}
	if dim < 0 || dim >= len(shape) {
		k.failf("iota", "dim %d outside shape %v", dim, shape)
		return k.placeholder(t)
	}
	if !k.checkDims("iota", shape) {
		return k.placeholder(t)
	}
	if !(dtype.IsInt() || dtype.IsFloat()) {
		k.failf("iota", "dtype %v is not a number type", dtype)
		return k.placeholder(t)
	}
	return k.emit("iota", nil, []Type{t}, Attrs{Dim: dim}).Results[0]
}

// Arange is the i32 vector 0, 1, ..., n-1.
func (k *Kernel) Arange(n int64) *Value { return k.Iota(xla.Int32, 0, n) }

// constValue converts a Go constant to the IR's representation for dtype.
func constValue(v any, dtype xla.DType) (any, error) {
	if u, ok := bigUnsigned(v); ok {
		switch {
		case dtype == xla.Uint64:
			return int64(u), nil // its bits, as the lowerings take them
		case dtype.IsFloat():
			return roundInt(new(big.Float).SetUint64(u), dtype), nil
		}
		return nil, fmt.Errorf("constant %d overflows %v", u, dtype)
	}
	var f float64
	i, isInt, err := staticInt(v)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case float32:
		f = float64(x)
	case float64:
		f = x
	case bool:
		if dtype.IsBool() {
			return x, nil
		}
		if x {
			i, isInt = 1, true
		} else {
			isInt = true
		}
	default:
		if !isInt {
			return nil, fmt.Errorf("constant of Go type %T (want a Go number, or a bool where a bool is wanted)", v)
		}
	}
	switch {
	case dtype.IsBool():
		if isInt {
			f = float64(i)
		}
		if f != 0 && f != 1 {
			return nil, fmt.Errorf("constant %v is not a bool (use 0 or 1, true or false)", f)
		}
		return f != 0, nil
	case dtype.IsFloat():
		if isInt {
			return roundInt(new(big.Float).SetInt64(i), dtype), nil
		}
		return f, nil
	case dtype.IsInt():
		if !isInt {
			switch {
			case f != math.Trunc(f) || math.IsInf(f, 0):
				return nil, fmt.Errorf("constant %v is not an integer (dtype %v)", f, dtype)
			case dtype == xla.Uint64 && f >= 0 && f < 1<<64:
				return int64(uint64(f)), nil // its bits, as the lowerings take them
			case f < -1<<63 || f >= 1<<63:
				return nil, fmt.Errorf("constant %v overflows %v", f, dtype)
			}
			i = int64(f)
		}
		if lo, hi := intRange(dtype); i < lo || i > hi {
			return nil, fmt.Errorf("constant %d overflows %v (range [%d, %d])", i, dtype, lo, hi)
		}
		return i, nil
	}
	return nil, fmt.Errorf("unsupported dtype %v", dtype)
}

// roundInt rounds the integer n once (to nearest, ties to even) to the
// precision of float dtype and returns it as a float64, which holds it
// exactly: the lowerings' rounding of that float64 to dtype is then exact
// (float64(n) first would round twice above 2^53).
func roundInt(n *big.Float, dtype xla.DType) float64 {
	prec := uint(53)
	switch dtype {
	case xla.Float32:
		prec = 24
	case xla.Float64:
	default:
		if nf := xla.NarrowFloatOf(dtype); nf != nil {
			_, _, mant := nf.Layout()
			prec = uint(mant + 1)
		}
	}
	f, _ := new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven).Set(n).Float64()
	return f
}

// bigUnsigned returns v when it is a Go unsigned integer above
// math.MaxInt64 (which only u64 values and floats hold).
func bigUnsigned(v any) (uint64, bool) {
	u, ok := wideUnsigned(v)
	return u, ok && u > math.MaxInt64
}

// intRange is the range of an integer dtype, clipped to int64.

func intRange(dt xla.DType) (lo, hi int64) {
	b := dt.Bits()
	switch {
	case b >= 64 && dt.IsUnsigned():
		return 0, math.MaxInt64
	case b >= 64:
		return math.MinInt64, math.MaxInt64
	case dt.IsUnsigned():
		return 0, 1<<b - 1
	}
	return -1 << (b - 1), 1<<(b-1) - 1
}

// asValue turns an operand (a *Value or a Go scalar) into a Value; Go
// scalars take like's dtype (weak typing) and are scalars.
func (k *Kernel) asValue(op string, x any, like xla.DType) (*Value, bool) {
	return k.asValueOf(op, "operand", x, like)
}

// asValueOf is asValue naming the operand what in its errors.
func (k *Kernel) asValueOf(op, what string, x any, like xla.DType) (*Value, bool) {
	switch v := x.(type) {
	case *Value:
		if k.st.err != nil {
			return nil, false
		}
		if v == nil {
			k.failf(op, "%s is nil", what)
			return nil, false
		}
		if v.k == nil || v.k.st != k.st || !k.inScope(v) {
			k.failf(op, "%s (%s) comes from another kernel, index map or a closed region", what, v.Type)
			return nil, false
		}
		return v, true
	case *Ref:
		k.failf(op, "%s: a Ref is not a value; read it with Load", what)
		return nil, false
	case nil:
		k.failf(op, "%s is nil", what)
		return nil, false
	}
	if k.st.err != nil {
		return nil, false
	}
	if !like.Valid() {
		switch x.(type) {
		case float32, float64:
			like = xla.Float32
		case bool:
			like = xla.Bool
		default:
			like = xla.Int32
		}
	}
	c, err := constValue(x, like)
	if err != nil {
		k.failf(op, "%v", err)
		return nil, false
	}
	return k.emit("const", nil, []Type{{DType: like}}, Attrs{Value: c}).Results[0], true
}

// broadcastShapes is NumPy broadcasting of two shapes.
func broadcastShapes(a, b []int64) ([]int64, bool) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		da, db := int64(1), int64(1)
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// broadcastTo broadcasts v (NumPy rules) to shape, emitting
// broadcast_in_dim when the shape changes.
func (k *Kernel) broadcastTo(op string, v *Value, shape []int64) *Value {
	if sameShape(v.Type.Shape, shape) {
		return v
	}
	r := len(v.Type.Shape)
	if r > len(shape) {
		k.failf(op, "cannot broadcast %s to shape %v", v.Type, shape)
		return k.placeholder(Type{DType: v.Type.DType, Shape: shape})
	}
	dims := make([]int64, r)
	for i := 0; i < r; i++ {
		j := len(shape) - r + i
		if d := v.Type.Shape[i]; d != shape[j] && d != 1 {
			k.failf(op, "cannot broadcast %s to shape %v%s", v.Type, shape, expandHint(v.Type.Shape, shape))
			return k.placeholder(Type{DType: v.Type.DType, Shape: shape})
		}
		dims[i] = int64(j)
	}
	return k.emit("broadcast_in_dim", []*Value{v}, []Type{{DType: v.Type.DType, Shape: shape}}, Attrs{Dims: dims}).Results[0]
}

// expandHint is a hint for a shape that does not broadcast to shape (its
// dims line up with shape's last ones) but would with size-1 dims after
// it, as a reduction that dropped its axis leaves: "" otherwise.
func expandHint(from, shape []int64) string {
	if len(from) == 0 || len(from) >= len(shape) {
		return ""
	}
	for i, d := range from {
		if d != shape[i] && d != 1 {
			return ""
		}
	}
	axes := make([]string, 0, len(shape)-len(from))
	for a := len(from); a < len(shape); a++ {
		axes = append(axes, fmt.Sprint(a))
	}
	return fmt.Sprintf(" (dims line up from the last, as in NumPy: ExpandDims(%s) on the %v operand lines them up from the first, as keepdims would after a reduction)", strings.Join(axes, ", "), from)
}

// binaryOperands converts and broadcasts x and y to one type.
func (k *Kernel) binaryOperands(op string, x, y any, xName, yName string) (*Value, *Value, bool) {
	var like xla.DType
	if v, ok := x.(*Value); ok && v != nil {
		like = v.Type.DType
	} else if v, ok := y.(*Value); ok && v != nil {
		like = v.Type.DType
	} else if isGoFloat(x) || isGoFloat(y) {
		like = xla.Float32 // two Go numbers: Where(c, 1, 2.5) is f32
	}
	a, ok := k.asValueOf(op, xName, x, like)
	if !ok {
		return nil, nil, false
	}
	b, ok := k.asValueOf(op, yName, y, like)
	if !ok {
		return nil, nil, false
	}
	if a.Type.DType != b.Type.DType {
		k.failf(op, "operand dtypes differ: %s and %s (convert one with Astype)", a.Type, b.Type)
		return nil, nil, false
	}
	shape, ok := broadcastShapes(a.Type.Shape, b.Type.Shape)
	if !ok {
		hint := expandHint(b.Type.Shape, a.Type.Shape) + expandHint(a.Type.Shape, b.Type.Shape)
		k.failf(op, "shapes %v and %v do not broadcast%s", a.Type.Shape, b.Type.Shape, hint)
		return nil, nil, false
	}
	return k.broadcastTo(op, a, shape), k.broadcastTo(op, b, shape), k.st.err == nil
}

func isGoFloat(x any) bool {
	switch x.(type) {
	case float32, float64:
		return true
	}
	return false
}

func (v *Value) binary(name string, y any, bad func(xla.DType) bool) *Value {
	k := kernelOf(name, "operand 0", v)
	a, b, ok := k.typedOperands(name, v, y, bad)
	if !ok {
		return k.placeholder(a.Type)
	}
	return k.emit(name, []*Value{a, b}, []Type{a.Type}, Attrs{}).Results[0]
}

// typedOperands is binaryOperands (the operands broadcast to one shape and
// dtype) that also refuses a dtype bad says the op is not defined on,
// naming op; a is v where it fails.
func (k *Kernel) typedOperands(op string, v *Value, y any, bad func(xla.DType) bool) (a, b *Value, ok bool) {
	a, b, ok = k.binaryOperands(op, v, y, "operand 0", "operand 1")
	if !ok {
		return v, nil, false
	}
	if bad != nil && bad(a.Type.DType) {
		k.failf(op, "%s", notDefinedOn(a.Type.DType, bad))
		return a, nil, false
	}
	return a, b, true
}

// notDefinedOn is the message of an op that bad refuses on dtype dt, with
// the conversion that would make it work.
func notDefinedOn(dt xla.DType, bad func(xla.DType) bool) string {
	ints, floats := !bad(xla.Int32), !bad(xla.Float32)
	to := ""
	switch {
	case ints && floats:
		to = "an integer or float type"
	case ints:
		to = "an integer type"
	case floats:
		to = "a float type"
	}
	switch {
	case dt.IsBool() && to != "":
		return fmt.Sprintf("not defined on bool values (convert with Astype to %s first)", to)
	case dt.IsInt() && !ints && floats:
		return fmt.Sprintf("not defined on %v (integer) values (convert with Astype to a float type first)", dt)
	case dt.IsFloat() && ints && !floats:
		return fmt.Sprintf("not defined on %v (float) values (convert with Astype to an integer type first)", dt)
	}
	return fmt.Sprintf("not defined on %v", dt)
}

func notNumber(d xla.DType) bool   { return !(d.IsInt() || d.IsFloat()) }
func notFloat(d xla.DType) bool    { return !d.IsFloat() }
func notIntegral(d xla.DType) bool { return !(d.IsInt() || d.IsBool()) }
func notInt(d xla.DType) bool      { return !d.IsInt() }

// Shl is v shifted left by y bits (integers; an amount y outside [0,
// bits), read as unsigned, gives 0, as XLA's shift_left).
func (v *Value) Shl(y any) *Value { return v.binary("shl", y, notInt) }

// Shr is v shifted right by y bits: arithmetic (filling with the sign)
// for signed integers, logical for unsigned ones, as Go's >> and
// jnp.right_shift. An amount outside [0, bits), read as unsigned, gives
// the sign fill (signed: 0 or -1) or 0 (unsigned), as XLA's shifts.
func (v *Value) Shr(y any) *Value { return v.binary("shr", y, notInt) }

// Add is v + y (y a Value or Go scalar; NumPy broadcasting).
func (v *Value) Add(y any) *Value { return v.binary("add", y, notNumber) }

// Sub is v - y.
func (v *Value) Sub(y any) *Value { return v.binary("sub", y, notNumber) }

// Mul is v * y.
func (v *Value) Mul(y any) *Value { return v.binary("mul", y, notNumber) }

// Div is v / y (integer division truncates).
func (v *Value) Div(y any) *Value { return v.binary("div", y, notNumber) }

// Rem is the remainder of v / y (sign of v).
func (v *Value) Rem(y any) *Value { return v.binary("rem", y, notNumber) }

// FloorDiv is v / y rounded toward minus infinity, Python's v // y
// (jnp.floor_divide): Div where the operands' signs agree or the division
// is exact, one less where they differ. Divided by zero, a float gives
// v / y (±Inf, NaN for 0/0) and an integer what jnp gives on XLA: -2, or
// -1 for 0.
func (v *Value) FloorDiv(y any) *Value { return v.floorDivMod("floordiv", y) }

// Mod is the remainder of FloorDiv, of y's sign, Python's v % y
// (jnp.remainder): Rem plus y where the two signs differ; an integer
// modulo zero is 0, as jnp.remainder gives (a float's is NaN).
func (v *Value) Mod(y any) *Value { return v.floorDivMod("mod", y) }

// floorDivMod builds FloorDiv ("floordiv") and Mod ("mod") from Div and
// Rem, as jnp.floor_divide and jnp.remainder do from lax.div and lax.rem.
func (v *Value) floorDivMod(name string, y any) *Value {
	k := kernelOf(name, "operand 0", v)
	defer k.within(name)()
	x, d, ok := k.typedOperands(name, v, y, notNumber)
	if !ok {
		return k.placeholder(x.Type)
	}
	rem := x.Rem(d)
	isInt := !x.Type.DType.IsFloat()
	if x.Type.DType.IsUnsigned() {
		if name == "mod" {
			return Where(d.Eq(0), 0, rem) // x % 0 is 0 (jnp.remainder)
		}
		return x.Div(d)
	}
	// The remainder is off by y where it is not zero and its sign is not
	// y's (then the truncated quotient is one more than the floor).
	fix := rem.Ne(0).And(rem.Sign().Ne(d.Sign()))
	if name == "mod" {
		m := Where(fix, rem.Add(d), rem)
		if isInt {
			m = Where(d.Eq(0), 0, m) // x % 0 is 0 (jnp.remainder)
		}
		return m
	}
	if !isInt {
		// The quotient of the exact multiple x - rem, then one less where
		// fixed, rounded to the integer it is (jnp's float floor_divide);
		// divided by zero, v / y (±Inf).
		q := x.Sub(rem).Div(d)
		return Where(d.Eq(0), x.Div(d), Where(fix, q.Sub(1), q).Round())
	}
	q := x.Div(d)
	return Where(fix, q.Sub(1), q)
}

// Max is the elementwise maximum.
func (v *Value) Max(y any) *Value { return v.binary("max", y, notNumber) }

// Min is the elementwise minimum.
func (v *Value) Min(y any) *Value { return v.binary("min", y, notNumber) }

// Pow is v ** y (floats).
func (v *Value) Pow(y any) *Value { return v.binary("pow", y, notFloat) }

// And is logical/bitwise and (bool or integers).
func (v *Value) And(y any) *Value { return v.binary("and", y, notIntegral) }

// Or is logical/bitwise or.
func (v *Value) Or(y any) *Value { return v.binary("or", y, notIntegral) }

// Xor is logical/bitwise xor.
func (v *Value) Xor(y any) *Value { return v.binary("xor", y, notIntegral) }

// Sub is x - y where x (or y) may be a Go number: 1 - v is Sub(1, v).
// It and the functions after it are the ops whose order matters, for a
// number on the left; the other side must be a kernel value, whose dtype
// the number takes.
func Sub(x, y any) *Value { return numberLeft("sub", x, y, (*Value).Sub) }

// Div is x / y where x may be a Go number (see Sub).
func Div(x, y any) *Value { return numberLeft("div", x, y, (*Value).Div) }

// Rem is the remainder of x / y where x may be a Go number (see Sub).
func Rem(x, y any) *Value { return numberLeft("rem", x, y, (*Value).Rem) }

// FloorDiv is x // y where x may be a Go number (see Sub).
func FloorDiv(x, y any) *Value { return numberLeft("floordiv", x, y, (*Value).FloorDiv) }

// Mod is x % y, Python's, where x may be a Go number (see Sub).
func Mod(x, y any) *Value { return numberLeft("mod", x, y, (*Value).Mod) }

// Pow is x ** y where x may be a Go number: 2 ** v is Pow(2.0, v).
func Pow(x, y any) *Value { return numberLeft("pow", x, y, (*Value).Pow) }

// Atan2 is the angle of the point (x, y) where y, the first argument, may
// be a Go number (see Sub and Value.Atan2).
func Atan2(y, x any) *Value { return numberLeft("atan2", y, x, (*Value).Atan2) }

// Shl is x << n where x may be a Go number: 1 << n is Shl(1, n).
func Shl(x, n any) *Value { return numberLeft("shl", x, n, (*Value).Shl) }

// Shr is x >> n where x may be a Go number (see Value.Shr).
func Shr(x, n any) *Value { return numberLeft("shr", x, n, (*Value).Shr) }

// numberLeft is method f of x with argument y, x made a constant of y's
// dtype first when it is a Go number.
func numberLeft(op string, x, y any, f func(*Value, any) *Value) *Value {
	if v, ok := x.(*Value); ok {
		return f(v, y)
	}
	w, ok := y.(*Value)
	switch {
	case ok && w == nil:
		panic(misuse{op, "operand 1 is nil"})
	case !ok:
		if _, ref := y.(*Ref); ref {
			panic(misuse{op, "operand 1: a Ref is not a value; read it with Load"})
		}
		panic(misuse{op, "neither operand is a kernel value (*pallas.Value): one side must be"})
	}
	k := kernelOf(op, "operand 1", w)
	k.live(op)
	a, ok := k.asValueOf(op, "operand 0", x, w.Type.DType)
	if !ok {
		return k.placeholder(w.Type)
	}
	return f(a, w)
}

func (v *Value) cmp(dir string, y any) *Value {
	k := kernelOf("cmp", "operand 0", v)
	a, b, ok := k.binaryOperands("cmp", v, y, "operand 0", "operand 1")
	if !ok {
		return k.placeholder(Type{DType: xla.Bool, Shape: v.Type.Shape})
	}
	if a.Type.DType.IsComplex() && dir != "EQ" && dir != "NE" {
		k.failf("cmp", "complex values have no order (%s); compare with Eq or Ne, or their real parts", dir)
		return k.placeholder(Type{DType: xla.Bool, Shape: a.Type.Shape})
	}
	return k.emit("cmp", []*Value{a, b}, []Type{{DType: xla.Bool, Shape: a.Type.Shape}}, Attrs{Dir: dir}).Results[0]
}

// Eq is v == y (a bool block).
func (v *Value) Eq(y any) *Value { return v.cmp("EQ", y) }

// Ne is v != y.
func (v *Value) Ne(y any) *Value { return v.cmp("NE", y) }

// Lt is v < y.
func (v *Value) Lt(y any) *Value { return v.cmp("LT", y) }

// Le is v <= y.
func (v *Value) Le(y any) *Value { return v.cmp("LE", y) }

// Gt is v > y.
func (v *Value) Gt(y any) *Value { return v.cmp("GT", y) }

// Ge is v >= y.
func (v *Value) Ge(y any) *Value { return v.cmp("GE", y) }

func (v *Value) unary(name string, bad func(xla.DType) bool) *Value {
	k := kernelOf(name, "operand 0", v)
	if !k.check(name, v) {
		return v
	}
	if bad(v.Type.DType) {
		k.failf(name, "%s", notDefinedOn(v.Type.DType, bad))
		return k.placeholder(v.Type)
	}
	return k.emit(name, []*Value{v}, []Type{v.Type}, Attrs{}).Results[0]
}

// Neg is -v.
func (v *Value) Neg() *Value { return v.unary("neg", notNumber) }

// Abs is |v| (v itself for unsigned integers).
func (v *Value) Abs() *Value {
	if k := kernelOf("abs", "operand 0", v); v.Type.DType.IsUnsigned() && k.check("abs", v) {
		return v
	}
	return v.unary("abs", notNumber)
}

// Exp is e**v.
func (v *Value) Exp() *Value { return v.unary("exp", notFloat) }

// Log is the natural logarithm.
func (v *Value) Log() *Value { return v.unary("log", notFloat) }

// Tanh is the hyperbolic tangent.
func (v *Value) Tanh() *Value { return v.unary("tanh", notFloat) }

// Erf is the error function.
func (v *Value) Erf() *Value { return v.unary("erf", notFloat) }

// Sqrt is the square root.
func (v *Value) Sqrt() *Value { return v.unary("sqrt", notFloat) }

// Rsqrt is 1/sqrt(v).
func (v *Value) Rsqrt() *Value { return v.unary("rsqrt", notFloat) }

// Floor rounds down.
func (v *Value) Floor() *Value { return v.unary("floor", notFloat) }

// Ceil rounds up.
func (v *Value) Ceil() *Value { return v.unary("ceil", notFloat) }

// Sin is the sine.
func (v *Value) Sin() *Value { return v.unary("sin", notFloat) }

// Cos is the cosine.
func (v *Value) Cos() *Value { return v.unary("cos", notFloat) }

// Sigmoid is the logistic function 1/(1+e**-v).
func (v *Value) Sigmoid() *Value { return v.unary("logistic", notFloat) }

// Log1p is log(1+v), accurate where v is small.
func (v *Value) Log1p() *Value { return v.unary("log1p", notFloat) }

// Expm1 is e**v - 1, accurate where v is small.
func (v *Value) Expm1() *Value { return v.unary("expm1", notFloat) }

// Tan is the tangent.
func (v *Value) Tan() *Value { return v.unary("tan", notFloat) }

// Round rounds to the nearest integer, halves to even (jnp.round).
func (v *Value) Round() *Value { return v.unary("round", notFloat) }

// Sign is -1, 0 or 1 as v is negative, zero or positive; a float zero
// keeps its sign and NaN stays NaN (jnp.sign).
func (v *Value) Sign() *Value { return v.unary("sign", notNumber) }

// Exp2 is 2**v.
func (v *Value) Exp2() *Value { return v.unary("exp2", notFloat) }

// Log2 is the base-2 logarithm of v.
func (v *Value) Log2() *Value { return v.unary("log2", notFloat) }

// Asin is the arcsine of v, in [-π/2, π/2] (NaN outside [-1, 1]).
func (v *Value) Asin() *Value { return v.unary("asin", notFloat) }

// Acos is the arccosine of v, in [0, π] (NaN outside [-1, 1]).
func (v *Value) Acos() *Value { return v.unary("acos", notFloat) }

// Atan is the arctangent of v, in [-π/2, π/2].
func (v *Value) Atan() *Value { return v.unary("atan", notFloat) }

// Atan2 is the angle of the point (x, v), in [-π, π], as jnp.arctan2(v, x):
// v is the y coordinate.
func (v *Value) Atan2(x any) *Value { return v.binary("atan2", x, notFloat) }

// Sinh is the hyperbolic sine of v.
func (v *Value) Sinh() *Value { return v.unary("sinh", notFloat) }

// Cosh is the hyperbolic cosine of v.
func (v *Value) Cosh() *Value { return v.unary("cosh", notFloat) }

// Asinh is the inverse hyperbolic sine of v.
func (v *Value) Asinh() *Value { return v.unary("asinh", notFloat) }

// Acosh is the inverse hyperbolic cosine of v (NaN below 1).
func (v *Value) Acosh() *Value { return v.unary("acosh", notFloat) }

// Atanh is the inverse hyperbolic tangent of v (±inf at ±1, NaN beyond).
func (v *Value) Atanh() *Value { return v.unary("atanh", notFloat) }

// Cbrt is the cube root of v (negative for negative v).
func (v *Value) Cbrt() *Value { return v.unary("cbrt", notFloat) }

// Erfc is 1 - erf(v), accurate where erf(v) is near 1 (large v).
func (v *Value) Erfc() *Value { return v.unary("erfc", notFloat) }

// Lgamma is the logarithm of the absolute value of the gamma function of
// v (lax.lgamma; +inf at 0 and the negative integers).
func (v *Value) Lgamma() *Value { return v.unary("lgamma", notFloat) }

// ErfInv is the inverse of Erf: the x in (-inf, inf) with erf(x) = v, for v
// in [-1, 1] (±inf at ±1, NaN beyond).
func (v *Value) ErfInv() *Value { return v.unary("erf_inv", notFloat) }

// IsFinite is a bool block, true where v is neither infinite nor NaN
// (jnp.isfinite; floats).
func (v *Value) IsFinite() *Value {
	k := kernelOf("is_finite", "operand 0", v)
	t := Type{DType: xla.Bool, Shape: v.Type.Shape}
	if !k.check("is_finite", v) {
		return k.placeholder(t)
	}
	if notFloat(v.Type.DType) {
		k.failf("is_finite", "%s", notDefinedOn(v.Type.DType, notFloat))
		return k.placeholder(t)
	}
	return k.emit("is_finite", []*Value{v}, []Type{t}, Attrs{}).Results[0]
}

// PopCount is the number of bits set in each element of v, of v's dtype
// (lax.population_count; integers).
func (v *Value) PopCount() *Value { return v.unary("popcnt", notInt) }

// CountLeadingZeros is the number of zero bits above the highest set bit
// of each element of v (the width for 0), of v's dtype (lax.clz; integers).
func (v *Value) CountLeadingZeros() *Value { return v.unary("clz", notInt) }

// Clip is v limited to [lo, hi]: Max(lo) then Min(hi), as jnp.clip (a nil
// bound is no limit on that side).
func (v *Value) Clip(lo, hi any) *Value {
	k := kernelOf("clip", "operand 0", v)
	defer k.within("clip")()
	for _, b := range []struct {
		op    string
		bound any
	}{{"max", lo}, {"min", hi}} {
		if b.bound == nil {
			continue
		}
		x, y, ok := k.typedOperands("clip", v, b.bound, notNumber)
		if !ok {
			return k.placeholder(x.Type)
		}
		v = k.emit(b.op, []*Value{x, y}, []Type{x.Type}, Attrs{}).Results[0]
	}
	return v
}

// Bitcast reads v's bits as dtype, as lax.bitcast_convert_type (bools are
// not bits). Types of one width keep the shape; to a narrower type each
// element becomes a new last dim of its parts, lowest bits first (f32 to
// u8: [n] to [n, 4]); to a wider type the last dim, which must hold as
// many parts, joins into one element (the reverse). Types of 8 to 64 bits;
// the parts are shifts, truncations and Stack on every backend.
func (v *Value) Bitcast(dtype xla.DType) *Value {
	k := kernelOf("bitcast", "operand 0", v)
	if !k.check("bitcast", v) {
		return v
	}
	from := v.Type.DType
	switch {
	case !dtype.Valid() || dtype.IsComplex() || dtype.IsBool() || from.IsComplex() || from.IsBool():
		k.failf("bitcast", "bitcast from %s to %s: only integer and float types", dtypeName(from), dtypeName(dtype))
		return k.placeholder(v.Type)
	case dtype.Bits() != from.Bits():
		return k.bitcastWidth(v, dtype)
	case dtype == from:
		return v
	}
	return k.emit("bitcast", []*Value{v}, []Type{{DType: dtype, Shape: v.Type.Shape}}, Attrs{}).Results[0]
}

// bitcastWidth is Bitcast between types of different widths, of
// unsigned integers' shifts: a wide element's parts are its bits shifted
// down and truncated, stacked along a new last dim; narrow parts are
// widened, shifted up and or-ed together.
func (k *Kernel) bitcastWidth(v *Value, dtype xla.DType) *Value {
	defer k.within("bitcast")()
	from := v.Type.DType
	fw, tw := from.Bits(), dtype.Bits()
	uf, okF := unsignedOf[fw]
	ut, okT := unsignedOf[tw]
	shape := slices.Clone(v.Type.Shape)
	if fw > tw {
		shape = append(shape, int64(fw/tw))
	} else if len(shape) > 0 {
		shape = shape[:len(shape)-1]
	}
	bad := Type{DType: dtype, Shape: shape}
	if !okF || !okT {
		k.failf("bitcast", "bitcast from %s (%d bits) to %s (%d bits): types of different widths need 8, 16, 32 or 64 bits", dtypeName(from), fw, dtypeName(dtype), tw)
		return k.placeholder(bad)
	}
	bits := v.Bitcast(uf)
	if fw > tw {
		parts := make([]*Value, fw/tw)
		for j := range parts {
			p := bits
			if j > 0 {
				p = p.Shr(j * tw)
			}
			parts[j] = p.Astype(ut).Bitcast(dtype)
		}
		return Stack(-1, parts...)
	}
	n := int64(tw / fw)
	if r := len(v.Type.Shape); r == 0 || v.Type.Shape[r-1] != n {
		k.failf("bitcast", "bitcast of %s to %s (%d bits) joins the %d parts of its last dim into one element: the last dim must be %d", v.Type, dtypeName(dtype), tw, n, n)
		return k.placeholder(bad)
	}
	var acc *Value
	for j, p := range Split(bits, -1, int(n)) {
		p = p.Reshape(shape...).Astype(ut)
		if j > 0 {
			p = p.Shl(j * fw)
			p = acc.Or(p)
		}
		acc = p
	}
	return acc.Bitcast(dtype)
}

// unsignedOf is the unsigned integer type of each width.
var unsignedOf = map[int]xla.DType{8: xla.Uint8, 16: xla.Uint16, 32: xla.Uint32, 64: xla.Uint64}

// Not is logical (bool) or bitwise (integer) negation.
func (v *Value) Not() *Value { return v.unary("not", notIntegral) }

// Shape is the value's shape.
func (v *Value) Shape() []int64 { return append([]int64(nil), v.Type.Shape...) }

// DType is the value's element type.
func (v *Value) DType() xla.DType { return v.Type.DType }

// Astype converts the elements to dtype.
func (v *Value) Astype(dtype xla.DType) *Value {
	k := kernelOf("convert", "operand 0", v)
	if !k.check("convert", v) {
		return v
	}
	if !dtype.Valid() || dtype.IsComplex() {
		k.failf("convert", "unsupported dtype %v", dtype)
		return k.placeholder(v.Type)
	}
	if dtype == v.Type.DType {
		return v
	}
	return k.emit("convert", []*Value{v}, []Type{{DType: dtype, Shape: v.Type.Shape}}, Attrs{}).Results[0]
}

// BroadcastTo broadcasts v to shape (NumPy rules).
func (v *Value) BroadcastTo(shape ...int64) *Value {
	k := kernelOf("broadcast_in_dim", "operand 0", v)
	if !k.check("broadcast_in_dim", v) || !k.checkDims("broadcast_in_dim", shape) {
		return k.placeholder(Type{DType: v.Type.DType, Shape: shape})
	}
	return k.broadcastTo("broadcast_in_dim", v, shape)
}

// Reshape gives v a new shape with the same number of elements; one dim
// may be -1, the size that leaves the count unchanged (Reshape(-1, 1)).
func (v *Value) Reshape(shape ...int64) *Value {
	k := kernelOf("reshape", "operand 0", v)
	if !k.check("reshape", v) {
		return k.placeholder(Type{DType: v.Type.DType, Shape: shape})
	}
	if i := slices.Index(shape, -1); i >= 0 {
		rest := slices.Clone(shape)
		rest[i] = 1
		if slices.Contains(rest, -1) {
			k.failf("reshape", "more than one -1 dim in shape %v", shape)
			return k.placeholder(Type{DType: v.Type.DType, Shape: rest})
		}
		if !k.checkDims("reshape", rest) {
			return k.placeholder(Type{DType: v.Type.DType, Shape: rest})
		}
		n := (Type{Shape: rest}).Size()
		if n == 0 || v.Type.Size()%n != 0 {
			k.failf("reshape", "cannot reshape %s to %v: no size for the -1 dim", v.Type, shape)
			return k.placeholder(Type{DType: v.Type.DType, Shape: rest})
		}
		rest[i] = v.Type.Size() / n
		shape = rest
	}
	t := Type{DType: v.Type.DType, Shape: shape}
	if !k.checkDims("reshape", shape) {
		return k.placeholder(t)
	}
	if t.Size() != v.Type.Size() {
		k.failf("reshape", "cannot reshape %s to %v", v.Type, shape)
		return k.placeholder(t)
	}
	if sameShape(shape, v.Type.Shape) {
		return v
	}
	return k.emit("reshape", []*Value{v}, []Type{t}, Attrs{}).Results[0]
}

// ExpandDims inserts dims of size 1 at axes, positions in the result
// (negative ones count from its end): x.ReduceMax(1).ExpandDims(1) is the
// rows' maxima as a column, which broadcasts against x.
func (v *Value) ExpandDims(axes ...int) *Value {
	k := kernelOf("expand_dims", "operand 0", v)
	if !k.check("expand_dims", v) {
		return v
	}
	r := len(v.Type.Shape) + len(axes)
	unit := make([]bool, r)
	for _, a := range axes {
		a, ok := oneAxis(a, r)
		if !ok || unit[a] {
			k.failf("expand_dims", "bad axes %v to insert into %s (each in [%d, %d), once)", axes, v.Type, -r, r)
			return k.placeholder(v.Type)
		}
		unit[a] = true
	}
	shape := make([]int64, 0, r)
	rest := v.Type.Shape
	for _, u := range unit {
		if u {
			shape = append(shape, 1)
		} else {
			shape, rest = append(shape, rest[0]), rest[1:]
		}
	}
	return v.Reshape(shape...)
}

// Transpose permutes v's dims: result dim i is v's dim perm[i].
func (v *Value) Transpose(perm ...int64) *Value {
	k := kernelOf("transpose", "operand 0", v)
	if !k.check("transpose", v) {
		return v
	}
	r := len(v.Type.Shape)
	seen := make([]bool, r)
	shape := make([]int64, r)
	if len(perm) != r {
		k.failf("transpose", "permutation %v for rank %d", perm, r)
		return k.placeholder(v.Type)
	}
	for i, p := range perm {
		if p < 0 || int(p) >= r || seen[p] {
			k.failf("transpose", "bad permutation %v", perm)
			return k.placeholder(v.Type)
		}
		seen[p] = true
		shape[i] = v.Type.Shape[p]
	}
	return k.emit("transpose", []*Value{v}, []Type{{DType: v.Type.DType, Shape: shape}}, Attrs{Perm: append([]int64(nil), perm...)}).Results[0]
}

// T is the transpose of a 2-D value.
func (v *Value) T() *Value { return v.Transpose(1, 0) }

func (v *Value) reduce(kind string, axes []int) *Value {
	k := kernelOf("reduce", "operand 0", v)
	if !k.check("reduce", v) {
		return v
	}
	if v.Type.DType.IsBool() {
		// Whether any (max) or all (min) are true, through u8 (whose max
		// starts from 0: any of nothing is false; min from 255: all of
		// nothing is true); a sum counts the trues, in i32 (jnp.sum's).
		if kind == "sum" || kind == "prod" {
			return v.Astype(xla.Int32).reduce(kind, axes)
		}
		return v.Astype(xla.Uint8).reduce(kind, axes).Astype(xla.Bool)
	}
	if notNumber(v.Type.DType) {
		k.failf("reduce", "%s not defined on %v", kind, v.Type.DType)
		return k.placeholder(v.Type)
	}
	r := len(v.Type.Shape)
	drop, ok := reducedAxes(axes, r)
	if !ok {
		k.failf("reduce", "bad axes %v for rank %d", axes, r)
		return k.placeholder(v.Type)
	}
	var sorted, shape []int64
	for i, d := range drop {
		if d {
			sorted = append(sorted, int64(i))
		} else {
			shape = append(shape, v.Type.Shape[i])
		}
	}
	if dt := v.Type.DType; (kind == "sum" || kind == "prod") && (dt == xla.Float16 || dt == xla.BFloat16) {
		// Sums of 16-bit floats run in f32 (as jnp.sum does), rounded
		// once: the same on every backend, whatever its reduction order.
		w := k.emit("convert", []*Value{v}, []Type{{DType: xla.Float32, Shape: v.Type.Shape}}, Attrs{}).Results[0]
		s := k.emit("reduce", []*Value{w}, []Type{{DType: xla.Float32, Shape: shape}}, Attrs{Kind: kind, Axes: sorted}).Results[0]
		return k.emit("convert", []*Value{s}, []Type{{DType: dt, Shape: shape}}, Attrs{}).Results[0]
	}
	return k.emit("reduce", []*Value{v}, []Type{{DType: v.Type.DType, Shape: shape}}, Attrs{Kind: kind, Axes: sorted}).Results[0]
}

// Sum reduces v by addition along axes (all axes when none are given;
// negative axes count from the end); f16 and bf16 sums accumulate in f32.
// The sum of a bool value counts its trues, as an i32 (jnp.sum).
func (v *Value) Sum(axes ...int) *Value { return v.reduce("sum", axes) }

// Prod reduces v by multiplication along axes (all when none; negative
// axes count from the end); f16 and bf16 products accumulate in f32, and a
// bool value's product is an i32 (1 where all are true), as jnp.prod.
func (v *Value) Prod(axes ...int) *Value { return v.reduce("prod", axes) }

// Mean is the mean along axes (all when none; negative axes count from
// the end): the sum divided by the count, in f32 for integers and bools,
// and for f16 and bf16 in f32 rounded once (jnp.mean).
func (v *Value) Mean(axes ...int) *Value { return v.moment("mean", axes) }

// Var is the variance along axes (all when none; negative axes count from
// the end): the mean of the squared differences from the mean (jnp.var,
// ddof 0), in the types Mean computes in.
func (v *Value) Var(axes ...int) *Value { return v.moment("var", axes) }

// moment is Mean ("mean") or Var ("var") of v along axes.
func (v *Value) moment(name string, axes []int) *Value {
	k := kernelOf(name, "operand 0", v)
	defer k.within(name)()
	if !k.check(name, v) {
		return v
	}
	dt := v.Type.DType
	if notNumber(dt) && !dt.IsBool() {
		k.failf(name, "%s not defined on %v", name, dt)
		return k.placeholder(v.Type)
	}
	drop, ok := reducedAxes(axes, len(v.Type.Shape))
	if !ok {
		k.failf(name, "bad axes %v for rank %d", axes, len(v.Type.Shape))
		return k.placeholder(v.Type)
	}
	w := v
	if !dt.IsFloat() || dt.Bits() < 32 {
		w = v.Astype(xla.Float32)
	}
	n := int64(1)
	for i, d := range v.Type.Shape {
		if drop[i] {
			n *= d
		}
	}
	mean := func(x *Value) *Value { return x.Sum(axes...).Div(float64(n)) }
	m := mean(w)
	if name == "var" {
		// The mean spread back over the reduced axes, then the mean of
		// the squared differences from it (two passes, as jnp.var).
		for i, d := range drop {
			if d {
				m = m.ExpandDims(i)
			}
		}
		d := w.Sub(m.BroadcastTo(w.Type.Shape...))
		m = mean(d.Mul(d))
	}
	if dt.IsFloat() && dt.Bits() < 32 {
		m = m.Astype(dt)
	}
	return m
}

// oneAxis is axis of a rank-r value (negative ones count from the end);
// ok is false outside the rank.
func oneAxis(axis, r int) (int, bool) {
	if axis < 0 {
		axis += r
	}
	return axis, axis >= 0 && axis < r
}

// reducedAxes is which axes of a rank-r value axes names (all when none;
// negative ones count from the end); ok is false for an axis outside the
// rank or named twice.
func reducedAxes(axes []int, r int) (drop []bool, ok bool) {
	drop = make([]bool, r)
	if len(axes) == 0 {
		for i := range drop {
			drop[i] = true
		}
	}
	for _, a := range axes {
		a, ok := oneAxis(a, r)
		if !ok || drop[a] {
			return nil, false
		}
		drop[a] = true
	}
	return drop, true
}

// ReduceMax reduces v by maximum along axes (all when none; negative
// axes count from the end); of a bool value, whether any is true.
func (v *Value) ReduceMax(axes ...int) *Value { return v.reduce("max", axes) }

// ReduceMin reduces v by minimum along axes (all when none; negative axes
// count from the end); of a bool value, whether all are true.
func (v *Value) ReduceMin(axes ...int) *Value { return v.reduce("min", axes) }

// ScanOrder is the direction of a scan (Cumsum, Cumprod, Cummax, Cummin).
type ScanOrder int

const (
	// Forward scans from the start of the axis: element i folds elements
	// 0..i (the default).
	Forward ScanOrder = iota
	// Reverse scans from the end: element i folds elements i..n-1, as
	// lax.cumsum(x, axis, reverse=True).
	Reverse
)

// String is "Forward", "Reverse" or, for other values, "ScanOrder(n)".
func (o ScanOrder) String() string {
	switch o {
	case Forward:
		return "Forward"
	case Reverse:
		return "Reverse"
	}
	return fmt.Sprintf("ScanOrder(%d)", int(o))
}

// Cumsum is the running sum of v along axis (negative counts from the
// end), forward unless order is Reverse, as jnp.cumsum: element i along
// the axis is the sum of elements 0..i. The result has v's shape and
// dtype; f16 and bf16 sums accumulate in f32, each element rounded once,
// as Sum does. Of a bool value, the running count of trues, as an i32
// (jnp.cumsum).
func (v *Value) Cumsum(axis int, order ...ScanOrder) *Value { return v.scan("sum", axis, order) }

// Cumprod is the running product of v along axis, as Cumsum (f16 and bf16
// products in f32, each element rounded once); of a bool value, whether
// all so far are true, as an i32 of 0 or 1 (jnp.cumprod).
func (v *Value) Cumprod(axis int, order ...ScanOrder) *Value { return v.scan("prod", axis, order) }

// Cummax is the running maximum of v along axis, as lax.cummax (negative
// axes count from the end; forward unless order is Reverse); floats as
// Max: NaN propagates, -0 is below +0. Of a bool value, whether any so
// far is true.
func (v *Value) Cummax(axis int, order ...ScanOrder) *Value { return v.scan("max", axis, order) }

// Cummin is the running minimum of v along axis, as Cummax; of a bool
// value, whether all so far are true.
func (v *Value) Cummin(axis int, order ...ScanOrder) *Value { return v.scan("min", axis, order) }

// scan builds the cumulative ops: one "scan" op of kind along axis. Bools
// go through i32 (sums and products) or u8 (maxima and minima), as the
// reductions do; 16-bit float sums and products through f32.
func (v *Value) scan(kind string, axis int, order []ScanOrder) *Value {
	name := "cum" + kind
	k := kernelOf(name, "operand 0", v)
	if !k.check(name, v) {
		return v
	}
	r, asked := len(v.Type.Shape), axis
	axis, ok := oneAxis(axis, r)
	if !ok {
		k.failf(name, "bad axis %d for rank %d (a scan runs along an axis of v)", asked, r)
		return k.placeholder(v.Type)
	}
	if len(order) > 1 || len(order) == 1 && order[0] != Forward && order[0] != Reverse {
		k.failf(name, "want one order, pallas.Forward or pallas.Reverse, got %v", order)
		return k.placeholder(v.Type)
	}
	reverse := len(order) == 1 && order[0] == Reverse
	dt := v.Type.DType
	if dt.IsBool() {
		if kind == "sum" || kind == "prod" {
			return v.Astype(xla.Int32).scan(kind, axis, order)
		}
		return v.Astype(xla.Uint8).scan(kind, axis, order).Astype(xla.Bool)
	}
	if notNumber(dt) {
		k.failf(name, "not defined on %v", dt)
		return k.placeholder(v.Type)
	}
	attrs := Attrs{Kind: kind, Axis: axis, Reverse: reverse}
	if (kind == "sum" || kind == "prod") && (dt == xla.Float16 || dt == xla.BFloat16) {
		w := k.emit("convert", []*Value{v}, []Type{{DType: xla.Float32, Shape: v.Type.Shape}}, Attrs{}).Results[0]
		s := k.emit("scan", []*Value{w}, []Type{w.Type}, attrs).Results[0]
		return k.emit("convert", []*Value{s}, []Type{v.Type}, Attrs{}).Results[0]
	}
	return k.emit("scan", []*Value{v}, []Type{v.Type}, attrs).Results[0]
}

// combineOps are the ops an AssociativeScan's combine function may use:
// elementwise arithmetic on its scalars and constants.
var combineOps = map[string]bool{
	"const": true, "convert": true, "bitcast": true, "select": true, "cmp": true,
	"neg": true, "abs": true, "exp": true, "log": true, "tanh": true, "erf": true, "sqrt": true, "rsqrt": true,
	"floor": true, "ceil": true, "sin": true, "cos": true, "logistic": true, "not": true, "log1p": true,
	"expm1": true, "tan": true, "round": true, "sign": true, "exp2": true, "log2": true, "asin": true,
	"acos": true, "atan": true, "sinh": true, "cosh": true, "asinh": true, "acosh": true, "atanh": true,
	"cbrt": true, "erf_inv": true, "is_finite": true, "popcnt": true, "clz": true, "atan2": true,
	"erfc": true, "lgamma": true,
	"add": true, "sub": true, "mul": true, "div": true, "rem": true, "max": true, "min": true, "pow": true,
	"and": true, "or": true, "xor": true, "shl": true, "shr": true,
	"broadcast_in_dim": true, "reshape": true, // of scalars: themselves
}

// AssociativeScan is the running fold of xs (values of one shape) along
// axis (negative counts from the end) by combine, as
// lax.associative_scan(combine, xs, reverse, axis): element i of result j
// is the j-th of the values combine folds elements 0..i of xs into (with
// Reverse, elements i..n-1, from the end). combine gets the values so far
// (a) and the next elements (b) as scalars of xs's dtypes and returns as
// many scalars of those dtypes; it may only compute (arithmetic,
// comparisons, Where, casts on its arguments and constants: no loads,
// stores, control flow or prints, and no values from outside it). It
// must be associative: interpret mode folds in order, a GPU (tt.scan) in
// a tree, so float results may differ in their last bits. Several xs
// make a scan of tuples: (a1·b1, a2·b1 + b2) is a linear recurrence.
func AssociativeScan(axis int, order ScanOrder, combine func(a, b []*Value) []*Value, xs ...*Value) []*Value {
	const name = "associative_scan"
	if len(xs) == 0 {
		panic(misuse{name, "no values to scan"})
	}
	k := kernelOf(name, "operand 0", xs[0])
	placeholders := func() []*Value { return k.placeholders(xs) }
	if !k.check(name, xs...) {
		return placeholders()
	}
	fail := func(format string, args ...any) []*Value {
		k.failf(name, format, args...)
		return placeholders()
	}
	if combine == nil {
		return fail("combine is nil")
	}
	t := xs[0].Type
	r, asked := len(t.Shape), axis
	axis, ok := oneAxis(axis, r)
	if !ok {
		return fail("bad axis %d for rank %d (a scan runs along an axis of its values)", asked, r)
	}
	if order != Forward && order != Reverse {
		return fail("want the order pallas.Forward or pallas.Reverse, got %v", order)
	}
	args := make([]Type, 2*len(xs))
	for i, x := range xs {
		if !sameShape(x.Type.Shape, t.Shape) {
			return fail("operand %d is %s, operand 0 %s: the values scanned together have one shape", i, x.Type, t)
		}
		if notNumber(x.Type.DType) && !x.Type.DType.IsBool() {
			return fail("operand %d is %s: not defined on %v", i, x.Type, x.Type.DType)
		}
		args[i] = Type{DType: x.Type.DType}
		args[len(xs)+i] = Type{DType: x.Type.DType}
	}
	var ys []*Value
	reg := k.runRegion(args, func(a []*Value) []*Value {
		ys = combine(a[:len(xs)], a[len(xs):])
		return ys
	})
	if k.st.err != nil {
		return placeholders()
	}
	if len(ys) != len(xs) {
		return fail("combine returns %d values for %d scanned", len(ys), len(xs))
	}
	for i, y := range ys {
		if y == nil {
			return fail("combine returns nil for value %d", i)
		}
	}
	k.stack = append(k.stack, reg)
	ok = k.check(name, ys...)
	k.stack = k.stack[:len(k.stack)-1]
	if !ok {
		return placeholders()
	}
	for i, y := range ys {
		if y.Type.DType != xs[i].Type.DType || y.Type.Rank() != 0 {
			return fail("combine returns %s for value %d, a scalar of %v", y.Type, i, xs[i].Type.DType)
		}
	}
	inside := map[*Value]bool{}
	for _, a := range reg.Args {
		inside[a] = true
	}
	for _, op := range reg.Ops {
		if !combineOps[op.Name] {
			return fail("combine may only compute on its scalars, not %s (at %s): no loads, stores, control flow or prints", op.Name, op.Loc)
		}
		for _, o := range op.Operands {
			if !inside[o] {
				return fail("combine uses a value from outside it (%s at %s): scan it along, or compute it in combine", o.Type, op.Loc)
			}
		}
		for _, res := range op.Results {
			if res.Type.Rank() != 0 {
				return fail("combine makes %s at %s: it works on scalars", res.Type, op.Loc)
			}
			inside[res] = true
		}
	}
	for i, y := range ys {
		if !inside[y] {
			return fail("combine returns a value from outside it (%s) for value %d: scan it along, or compute it in combine", y.Type, i)
		}
	}
	types := make([]Type, len(xs))
	for i, x := range xs {
		types[i] = x.Type
	}
	op := k.emit("assoc_scan", slices.Clone(xs), types, Attrs{Axis: axis, Reverse: order == Reverse}, reg)
	reg.parent = op
	return op.Results
}

// TopK returns the k largest elements of x along its last axis, largest
// first, and their indices (i32), as lax.top_k: the result dims are x's
// with the last one k. Equal elements come in index order (+0 and -0 are
// equal), and NaNs rank above every number, the first NaN first (as
// Argmax). It is k rounds of a maximum over the elements not yet taken,
// built from the kernel's reductions and selects, so every backend runs
// it alike; on Triton k is a power of two, as every block dim.
func TopK(x *Value, k int) (values, indices *Value) {
	kern := kernelOf("top_k", "operand 0", x)
	defer kern.within("top_k")()
	placeholders := func() (*Value, *Value) {
		shape := slices.Clone(x.Type.Shape)
		if len(shape) > 0 {
			shape[len(shape)-1] = int64(min(max(k, 0), 1<<20))
		}
		return kern.placeholder(Type{DType: x.Type.DType, Shape: shape}), kern.placeholder(Type{DType: xla.Int32, Shape: shape})
	}
	fail := func(format string, args ...any) (*Value, *Value) {
		kern.failf("top_k", format, args...)
		return placeholders()
	}
	if !kern.check("top_k", x) {
		return placeholders()
	}
	r := len(x.Type.Shape)
	dt := x.Type.DType
	switch {
	case r == 0:
		return fail("a scalar has no axis to take the largest elements along")
	case notNumber(dt) || dt.IsBool():
		return fail("not defined on %v", dt)
	case k < 1 || int64(k) > x.Type.Shape[r-1]:
		return fail("k = %d of the %d elements along the last axis of %s (1 to all of them)", k, x.Type.Shape[r-1], x.Type)
	}
	n := x.Type.Shape[r-1]
	var lowest any // at or below every element: what taken ones read as
	switch {
	case dt.IsFloat():
		lowest = lowestFloat(dt)
	case dt.IsUnsigned():
		lowest = 0
	default:
		lowest = int64(-1) << (dt.Bits() - 1)
	}
	pos := kern.Iota(xla.Int32, r-1, x.Type.Shape...)
	taken := kern.Zeros(xla.Bool, x.Type.Shape...)
	vals, idxs := make([]*Value, k), make([]*Value, k)
	for i := range k {
		open := taken.Not()
		m := Where(taken, lowest, x).ReduceMax(r - 1).ExpandDims(r - 1)
		hit := open.And(x.Eq(m))
		if dt.IsFloat() {
			hit = hit.Or(open.And(x.Ne(x)).And(m.Ne(m))) // the largest is a NaN
		}
		at := Where(hit, pos, int(n)).ReduceMin(r - 1).ExpandDims(r - 1) // the first of them
		idxs[i] = at
		vals[i] = TakeAlongAxis(x, at, r-1)
		taken = taken.Or(pos.Eq(at))
	}
	return Concatenate(r-1, vals...), Concatenate(r-1, idxs...)
}

// lowestFloat is the least value of float type dt: -inf, or the least
// finite value of the narrow formats that have no infinities (there -inf
// would round to NaN).
func lowestFloat(dt xla.DType) float64 {
	f := xla.NarrowFloatOf(dt)
	if f == nil || f.HasInf() {
		return math.Inf(-1)
	}
	bits, _, _ := f.Layout()
	low := math.Inf(1)
	for c := uint32(0); c < 1<<bits; c++ {
		if !f.IsNaN(c) {
			low = math.Min(low, f.Decode64(c))
		}
	}
	return low
}

// Argmax is the index (i32) along axis (negative counts from the end) of
// v's largest element, the first of equal ones; for floats, of the first
// NaN where there is one; for bools, of the first true (as jnp.argmax).
// The axis is dropped; it must have elements.
func (v *Value) Argmax(axis int) *Value { return v.argReduce("argmax", axis) }

// Argmin is the index (i32) along axis of v's smallest element, as Argmax.
func (v *Value) Argmin(axis int) *Value { return v.argReduce("argmin", axis) }

// argReduce builds Argmax and Argmin from a reduction and the first index
// where an element meets it (or is NaN), so that every backend runs it.
func (v *Value) argReduce(kind string, axis int) *Value {
	k := kernelOf(kind, "operand 0", v)
	defer k.within(kind)()
	if !k.check(kind, v) {
		return v
	}
	r, asked := len(v.Type.Shape), axis
	axis, ok := oneAxis(axis, r)
	if !ok {
		k.failf(kind, "axis %d for rank %d", asked, r)
		return k.placeholder(Type{DType: xla.Int32})
	}
	if v.Type.DType.IsBool() {
		v = v.Astype(xla.Int8) // the first true (Argmax) or false (Argmin)
	}
	if notNumber(v.Type.DType) {
		k.failf(kind, "not defined on %v", v.Type.DType)
		return k.placeholder(Type{DType: xla.Int32})
	}
	n := v.Type.Shape[axis]
	switch {
	case n == 0:
		k.failf(kind, "axis %d of %s has no elements: no index to give", asked, v.Type)
		return k.placeholder(Type{DType: xla.Int32})
	case n > math.MaxInt32:
		k.failf(kind, "axis %d of %s has more elements than an i32 indexes", asked, v.Type)
		return k.placeholder(Type{DType: xla.Int32})
	}
	shape := v.Type.Shape
	idx := k.Iota(xla.Int32, axis, shape...)
	// The first index where c holds along axis, n where it holds nowhere.
	first := func(c *Value) *Value { return Where(c, idx, int(n)).ReduceMin(axis) }
	best := v.ReduceMax(axis)
	if kind == "argmin" {
		best = v.ReduceMin(axis)
	}
	at := first(v.Eq(best.ExpandDims(axis).BroadcastTo(shape...)))
	if !v.Type.DType.IsFloat() {
		return at
	}
	nan := first(v.Ne(v))
	return Where(nan.Lt(int(n)), nan, at)
}

// Where is cond ? x : y elementwise (x, y Values or Go scalars; all three
// broadcast together). A Go scalar takes the other operand's dtype; two
// Go scalars are f32 if either is a float, else i32 (or bool).
func Where(cond *Value, x, y any) *Value {
	k := kernelOf("select", "condition", cond)
	if !k.check("select", cond) {
		return k.placeholder(cond.Type)
	}
	if !cond.Type.DType.IsBool() {
		k.failf("select", "condition is %s, not bool", cond.Type)
		return k.placeholder(cond.Type)
	}
	a, b, ok := k.binaryOperands("select", x, y, "x", "y")
	if !ok {
		return k.placeholder(cond.Type)
	}
	shape, ok := broadcastShapes(cond.Type.Shape, a.Type.Shape)
	if !ok {
		k.failf("select", "condition shape %v and value shape %v do not broadcast", cond.Type.Shape, a.Type.Shape)
		return k.placeholder(a.Type)
	}
	c := k.broadcastTo("select", cond, shape)
	a = k.broadcastTo("select", a, shape)
	b = k.broadcastTo("select", b, shape)
	return k.emit("select", []*Value{c, a, b}, []Type{a.Type}, Attrs{}).Results[0]
}

// Concatenate joins vs end to end along axis (negative counts from the
// end), as jnp.concatenate: they have one dtype and rank (at least 1)
// and the same dims but along axis. The Triton lowering takes blocks of
// one shape, a power-of-two count of them (it pairs them with tt.join).
func Concatenate(axis int, vs ...*Value) *Value {
	if len(vs) == 0 {
		panic(misuse{"concatenate", "no values to concatenate"})
	}
	k := kernelOf("concatenate", "operand 0", vs[0])
	if !k.check("concatenate", vs...) {
		return k.placeholder(vs[0].Type)
	}
	t := vs[0].Type
	r, asked := len(t.Shape), axis
	axis, ok := oneAxis(axis, r)
	if !ok {
		k.failf("concatenate", "bad axis %d for rank %d (scalars have no axis to join along: ExpandDims them)", asked, r)
		return k.placeholder(t)
	}
	shape := slices.Clone(t.Shape)
	for i, v := range vs[1:] {
		u := v.Type
		same := u.DType == t.DType && len(u.Shape) == r
		for d := 0; same && d < r; d++ {
			same = d == axis || u.Shape[d] == t.Shape[d]
		}
		if !same {
			k.failf("concatenate", "operand %d is %s, operand 0 %s: they must agree but along axis %d", i+1, u, t, axis)
			return k.placeholder(t)
		}
		if u.Shape[axis] > math.MaxInt64-shape[axis] {
			k.failf("concatenate", "the joined axis %d of %d values of %s overflows int64", axis, len(vs), t)
			return k.placeholder(t)
		}
		shape[axis] += u.Shape[axis]
	}
	if len(vs) == 1 {
		return vs[0]
	}
	return k.emit("concatenate", slices.Clone(vs), []Type{{DType: t.DType, Shape: shape}}, Attrs{Axis: axis}).Results[0]
}

// Split cuts v into n equal parts along axis (negative counts from the
// end), as jnp.split(v, n, axis): part i holds elements [i·d/n,
// (i+1)·d/n) of the axis (d its size, which n must divide). Blocks have
// power-of-two dims, so on Triton n is one too; the lowering halves the
// value with tt.split.
func Split(v *Value, axis int, n int) []*Value {
	k := kernelOf("split", "operand 0", v)
	defer k.within("split")()
	placeholders := func() []*Value {
		// After an error: no more than a few (a huge n of parts that do
		// not divide would allocate them all).
		out := make([]*Value, min(max(n, 0), 64))
		for i := range out {
			out[i] = k.placeholder(v.Type)
		}
		return out
	}
	fail := func(format string, args ...any) []*Value {
		k.failf("split", format, args...)
		return placeholders()
	}
	if !k.check("split", v) {
		return placeholders()
	}
	r, asked := len(v.Type.Shape), axis
	axis, ok := oneAxis(axis, r)
	if !ok {
		return fail("bad axis %d for rank %d (a split cuts along an axis of v)", asked, r)
	}
	d := v.Type.Shape[axis]
	if n < 1 || d%int64(n) != 0 {
		return fail("%d parts do not divide axis %d of %s (%d elements) evenly", n, asked, v.Type, d)
	}
	if n == 1 {
		return []*Value{v}
	}
	size := d / int64(n)
	shape := slices.Clone(v.Type.Shape)
	shape[axis] = size
	out := make([]*Value, n)
	for i := range out {
		out[i] = k.emit("slice", []*Value{v}, []Type{{DType: v.Type.DType, Shape: shape}}, Attrs{Axis: axis, Start: int64(i) * size}).Results[0]
	}
	return out
}

// TakeAlongAxis gathers from x along axis (negative counts from the end)
// at the positions idx holds, as jnp.take_along_axis(x, idx, axis) in
// "clip" mode: the result has idx's shape and element i is x at i with
// its coordinate along axis replaced by idx[i]. idx is an integer value
// of x's rank whose dims other than axis are x's; a negative position
// counts from the end (-1 is the last), and positions still outside the
// axis are clamped into it; positions beyond i32 saturate first (JAX
// wraps them into i32). On Triton it is one tt.gather.
func TakeAlongAxis(x, idx *Value, axis int) *Value {
	k := kernelOf("take_along_axis", "operand 0", x)
	defer k.within("take_along_axis")()
	if !k.check("take_along_axis", x, idx) {
		return k.placeholder(x.Type)
	}
	r, asked := len(x.Type.Shape), axis
	axis, ok := oneAxis(axis, r)
	if !ok {
		k.failf("take_along_axis", "bad axis %d for rank %d (a gather runs along an axis of x)", asked, r)
		return k.placeholder(x.Type)
	}
	out := Type{DType: x.Type.DType, Shape: slices.Clone(idx.Type.Shape)}
	if !idx.Type.DType.IsInt() {
		k.failf("take_along_axis", "positions are %s, not integers", idx.Type)
		return k.placeholder(out)
	}
	same := len(idx.Type.Shape) == r
	for d := 0; same && d < r; d++ {
		same = d == axis || idx.Type.Shape[d] == x.Type.Shape[d]
	}
	if !same {
		k.failf("take_along_axis", "positions %s for %s: they need its rank and its dims but along axis %d", idx.Type, x.Type, axis)
		return k.placeholder(out)
	}
	n := x.Type.Shape[axis]
	if n == 0 {
		k.failf("take_along_axis", "axis %d of %s has no elements to take", axis, x.Type)
		return k.placeholder(out)
	}
	if n > math.MaxInt32 {
		k.failf("take_along_axis", "axis %d of %s is longer than i32 positions reach", axis, x.Type)
		return k.placeholder(out)
	}
	// In i32, saturated first (asIndex: no position wraps); a negative
	// one counts from the end, as in JAX (p + n stays in i32), then all
	// are clamped into the axis.
	p := k.asIndex(idx)
	if !idx.Type.DType.IsUnsigned() {
		p = Where(p.Lt(0), p.Add(n), p).Max(0)
	}
	p = p.Min(n - 1)
	return k.emit("gather", []*Value{x, p}, []Type{out}, Attrs{Axis: axis}).Results[0]
}

// SliceAxis is elements [start, stop) of v along axis (negative counts
// from the end; start and stop do not), the other dims whole, as
// v[:, start:stop] (lax.slice_in_dim). On Triton the part must have a
// power-of-two size: an aligned one (at a multiple of its size, as Split's
// parts are) halves v, another is gathered.
func (v *Value) SliceAxis(axis int, start, stop int64) *Value {
	k := kernelOf("slice", "operand 0", v)
	asked := axis
	axis, ok := k.valueAxis("slice", v, axis)
	if !ok {
		return k.placeholder(v.Type)
	}
	if d := v.Type.Shape[axis]; start < 0 || stop < start || stop > d {
		k.failf("slice", "elements [%d, %d) of axis %d of %s (0 <= start <= stop <= %d; no counting from the end)", start, stop, asked, v.Type, d)
		return k.placeholder(v.Type)
	}
	if start == 0 && stop == v.Type.Shape[axis] {
		return v
	}
	shape := slices.Clone(v.Type.Shape)
	shape[axis] = stop - start
	return k.emit("slice", []*Value{v}, []Type{{DType: v.Type.DType, Shape: shape}}, Attrs{Axis: axis, Start: start}).Results[0]
}

// valueAxis is axis of v for op (negative counts from the end), false
// (the error recorded) when v is not a value of the trace or the axis is
// outside its rank.
func (k *Kernel) valueAxis(op string, v *Value, axis int) (int, bool) {
	if !k.check(op, v) {
		return 0, false
	}
	a, ok := oneAxis(axis, len(v.Type.Shape))
	if !ok {
		k.failf(op, "bad axis %d for rank %d", axis, len(v.Type.Shape))
	}
	return a, ok
}

// DynamicSliceAxis is size elements of v along axis (negative counts
// from the end) from start, a scalar that may be computed in the kernel,
// as lax.dynamic_slice_in_dim: a negative start counts from the end of the
// axis (start + n), and the start is then clamped to [0, n-size], so the
// part always lies inside v. A gather of positions start, start+1, ...
// (TakeAlongAxis) on every backend.
func (v *Value) DynamicSliceAxis(axis int, start any, size int64) *Value {
	return v.dynamicSlice("dynamic_slice", axis, start, size)
}

// DynamicIndex is element i of v along axis, that dim dropped, as
// lax.dynamic_index_in_dim(v, i, axis, keepdims=False) (v[i] for axis
// 0): i is a scalar that may be computed in the kernel; a negative i
// counts from the end, and i is then clamped to [0, n-1].
func (v *Value) DynamicIndex(axis int, i any) *Value {
	x := v.dynamicSlice("dynamic_index", axis, i, 1)
	r := len(v.Type.Shape)
	a, ok := oneAxis(axis, r)
	if !ok || len(x.Type.Shape) != r {
		return x // the error is in the trace
	}
	return x.Reshape(slices.Delete(slices.Clone(x.Type.Shape), a, a+1)...)
}

// dynamicSlice is DynamicSliceAxis for op (DynamicIndex names its own).
func (v *Value) dynamicSlice(op string, axis int, start any, size int64) *Value {
	k := kernelOf(op, "operand 0", v)
	defer k.within(op)()
	asked := axis
	axis, ok := k.valueAxis(op, v, axis)
	if !ok {
		return k.placeholder(v.Type)
	}
	shape := slices.Clone(v.Type.Shape)
	n := shape[axis]
	shape[axis] = size
	out := Type{DType: v.Type.DType, Shape: shape}
	switch {
	case n == 0:
		k.failf(op, "axis %d of %s has no elements", asked, v.Type)
	case size < 1 || size > n:
		k.failf(op, "%d elements of axis %d of %s (1 <= size <= %d)", size, asked, v.Type, n)
	case n > math.MaxInt32:
		k.failf(op, "axis %d of %s is longer than i32 positions reach", asked, v.Type)
	}
	if k.st.err != nil {
		return k.placeholder(out)
	}
	// A Go number is known now: counted from the end and clamped here
	// (one outside i32 would not convert).
	if c, known, err := staticInt(start); known {
		if err != nil { // above MaxInt64
			c = n - size
		}
		if c < 0 {
			c += n
		}
		start = min(max(c, 0), n-size)
	}
	s, ok := k.intScalar(op, start)
	if !ok {
		return k.placeholder(out)
	}
	s = Where(s.Lt(0), s.Add(n), s).Max(0).Min(n - size)
	idx := k.Iota(xla.Int32, axis, shape...).Add(s)
	return TakeAlongAxis(v, idx, axis)
}

// Stack joins vs, of one type, along a new axis (negative counts from
// the end of the result's dims), as jnp.stack: each becomes one slice of
// the result along it.
func Stack(axis int, vs ...*Value) *Value {
	if len(vs) == 0 {
		panic(misuse{"stack", "no values to stack"})
	}
	k := kernelOf("stack", "operand 0", vs[0])
	defer k.within("stack")()
	if !k.check("stack", vs...) {
		return k.placeholder(vs[0].Type)
	}
	r, asked := len(vs[0].Type.Shape)+1, axis
	axis, ok := oneAxis(axis, r)
	if !ok {
		k.failf("stack", "bad axis %d for a result of rank %d", asked, r)
		return k.placeholder(vs[0].Type)
	}
	for i, v := range vs[1:] {
		if v.Type.DType != vs[0].Type.DType || !sameShape(v.Type.Shape, vs[0].Type.Shape) {
			k.failf("stack", "operand %d is %s, operand 0 %s: they must have one type", i+1, v.Type, vs[0].Type)
			return k.placeholder(vs[0].Type)
		}
	}
	parts := make([]*Value, len(vs))
	for i, v := range vs {
		parts[i] = v.ExpandDims(axis)
	}
	return Concatenate(axis, parts...)
}

// Dot is the matrix product a[m,k] @ b[k,n] accumulated in preferred
// (xla.Invalid: the operands' dtype), as jnp.dot with
// preferred_element_type; of 3-D operands a[b,m,k] and b[b,k,n], the
// batch of b products r[b,m,n] (jnp.matmul, einsum "bmk,bkn->bmn"); of
// 4-D and more, a product per index of the leading dims ("bhmk,bhkn->bhmn",
// folded into one batch dim).
func Dot(a, b *Value, preferred xla.DType) *Value {
	return DotTransposed(a, b, false, false, preferred)
}

// DotTransposed is Dot with a given as [k,m] (transA) and/or b as [n,k]
// (transB); of batched operands the last two dims are those ([b,k,m],
// [b,n,k]).
func DotTransposed(a, b *Value, transA, transB bool, preferred xla.DType) *Value {
	k := kernelOf("dot", "operand 0", a)
	if !k.check("dot", a, b) {
		return k.placeholder(Type{DType: preferred})
	}
	if preferred.Valid() && notNumber(preferred) {
		k.failf("dot", "preferred type %v is not a number type", preferred)
		return k.placeholder(Type{DType: preferred})
	}
	r := a.Type.Rank()
	if r != b.Type.Rank() || r < 2 {
		k.failf("dot", "operands must be both 2-D (matrices) or both of one rank above 2 (batches of them), got %s and %s", a.Type, b.Type)
		return k.placeholder(Type{DType: preferred})
	}
	batch := a.Type.Shape[:r-2]
	if !slices.Equal(batch, b.Type.Shape[:r-2]) {
		k.failf("dot", "batch dims differ: %s and %s", a.Type, b.Type)
		return k.placeholder(Type{DType: preferred})
	}
	as, bs := a.Type.Shape[r-2:], b.Type.Shape[r-2:]
	if a.Type.DType != b.Type.DType {
		k.failf("dot", "operand dtypes differ: %s and %s (convert one with Astype; the preferred dtype sets the result's)", a.Type, b.Type)
		return k.placeholder(Type{DType: preferred})
	}
	if notNumber(a.Type.DType) {
		k.failf("dot", "not defined on %v", a.Type.DType)
		return k.placeholder(Type{DType: preferred})
	}
	if a.Type.DType.IsFloat() && preferred.Valid() && !preferred.IsFloat() {
		// Backends would round the operands or the sums (JAX rejects it).
		k.failf("dot", "float operands (%v) with integer preferred type %v: convert the operands first", a.Type.DType, preferred)
		return k.placeholder(Type{DType: preferred})
	}
	m, ka := as[0], as[1]
	if transA {
		m, ka = ka, m
	}
	kb, n := bs[0], bs[1]
	if transB {
		kb, n = n, kb
	}
	if !preferred.Valid() {
		preferred = a.Type.DType
	}
	t := Type{DType: preferred, Shape: append(slices.Clone(batch), m, n)}
	if ka != kb {
		k.failf("dot", "contracting dims differ: %s and %s", a.Type, b.Type)
		return k.placeholder(t)
	}
	if r > 3 {
		// Batch dims [b1, b2, ...] fold into one ([b1·b2·..., m, k]): a
		// product per leading index, as jnp.matmul of 4-D operands (the
		// heads of a batch).
		nb := int64(1)
		for _, d := range batch {
			nb *= d
		}
		defer k.within("dot")()
		y := DotTransposed(a.Reshape(append([]int64{nb}, as...)...), b.Reshape(append([]int64{nb}, bs...)...), transA, transB, preferred)
		return y.Reshape(t.Shape...)
	}
	return k.emit("dot", []*Value{a, b}, []Type{t}, Attrs{TransA: transA, TransB: transB}).Results[0]
}

// scalarCond converts a When/While condition.
func (k *Kernel) boolScalar(op string, c any) (*Value, bool) {
	v, ok := k.asValue(op, c, xla.Bool)
	if !ok {
		return nil, false
	}
	if !v.Type.DType.IsBool() || v.Type.Rank() != 0 {
		k.failf(op, "condition must be a bool scalar, got %s", v.Type)
		return nil, false
	}
	return v, true
}

func (k *Kernel) intScalar(op string, x any) (*Value, bool) {
	switch x.(type) {
	case bool, float32, float64:
		k.failf(op, "want an integer, got the Go %T %v", x, x)
		return nil, false
	}
	if n, ok, err := staticInt(x); ok && (err != nil || n < math.MinInt32 || n > math.MaxInt32) {
		// A Go constant is known now: no need to saturate at run time.
		k.failf(op, "the constant %v is outside i32, the type of indices, block indices and loop bounds", x)
		return nil, false
	}
	v, ok := k.asValue(op, x, xla.Int32)
	if !ok {
		return nil, false
	}
	if !v.Type.DType.IsInt() || v.Type.Rank() != 0 {
		k.failf(op, "want an integer scalar, got %s", v.Type)
		return nil, false
	}
	return k.asIndex(v), true
}

// asIndex converts integer v to the i32 that indices, block indices and
// loop bounds are. A value outside i32's range saturates to the nearer
// end, which lies outside every dimension (the bounds checks report it),
// instead of wrapping around to an index that looks valid.
func (k *Kernel) asIndex(v *Value) *Value {
	dt := v.Type.DType
	if dt == xla.Int32 {
		return v
	}
	if dt.Bits() >= 32 {
		if !dt.IsUnsigned() {
			v = v.Max(k.Const(dt, math.MinInt32))
		}
		v = v.Min(k.Const(dt, math.MaxInt32))
	}
	return k.emit("convert", []*Value{v}, []Type{{DType: xla.Int32, Shape: v.Type.Shape}}, Attrs{}).Results[0]
}

// runRegion traces body into a new region with args of the given types.
func (k *Kernel) runRegion(argTypes []Type, body func(args []*Value) []*Value) *Region {
	r := &Region{}
	for _, t := range argTypes {
		a := k.newValue(t, nil)
		a.argOf = r
		r.Args = append(r.Args, a)
	}
	depth := len(k.stack)
	k.stack = append(k.stack, r)
	closed := false
	defer func() {
		if !closed {
			// body panicked: close the region, and remember it in case
			// the kernel recovers (runTraced reports it then).
			k.stack = k.stack[:depth]
			if k.st.abandoned == (Loc{}) {
				_, k.st.abandoned = panicSite()
			}
		}
	}()
	ys := body(r.Args)
	closed = true
	k.stack = k.stack[:depth]
	r.Yield = ys
	return r
}

// DebugPrint prints values each time the kernel reaches it in interpret
// mode, as pl.debug_print: format is applied to them as fmt.Printf does,
// each value an effects.Array (%v prints a block like a Go slice, %d or
// %.3f its elements), and the line, with a newline added, is written to
// CompilerParams.DebugOutput (os.Stdout when nil). Grid steps run in
// order, so the lines come in grid order; the print is ordered under
// effects.PrintEffect, so successive calls' lines come in call order. It
// is a host callback: run the program through effects.Compile (the
// interpreter's plain Compile has no callbacks). In a Triton kernel it is
// the GPU's printf (tt.print): each element prints on its own line, as
// "pid (x, y, z) idx (i, j) text element", the launch's program ids then
// the format's words before the value's verb (the verbs only place the
// values: floats print as %f, integers in decimal), from every thread
// holding it and in any order, to the process's standard output; no text
// may follow the last verb, nor hold a %.
func (k *Kernel) DebugPrint(format string, values ...*Value) {
	k.live("debug_print")
	if !k.check("debug_print", values...) {
		return
	}
	switch {
	case k.grid != nil:
		k.failf("debug_print", "an index map cannot print: print the program ids in the kernel")
		return
	case k.inCond > 0:
		k.failf("debug_print", "a While condition cannot print: print in its body")
		return
	}
	types := make([]stablehlo.Type, len(values))
	for i, v := range values {
		types[i] = stablehlo.Tensor(v.Type.DType, v.Type.Shape...)
	}
	if err := effects.CheckFormat(format, types...); err != nil {
		k.failf("debug_print", "%v", err)
		return
	}
	k.emit("debug_print", values, nil, Attrs{Format: format})
}

// When runs body when cond (a bool scalar Value, or a Go bool decided at
// trace time; a Go 0 or 1 is taken as false or true) is true.
func (k *Kernel) When(cond any, body func()) {
	if body == nil {
		k.failf("when", "body is nil")
		return
	}
	if b, ok := cond.(bool); ok {
		if b && k.st.err == nil {
			body()
		}
		return
	}
	c, ok := k.boolScalar("when", cond)
	if !ok {
		return
	}
	loc := callerLoc()
	r := k.runRegion(nil, func([]*Value) []*Value { body(); return nil })
	op := k.emit("when", []*Value{c}, nil, Attrs{}, r)
	op.Loc = loc
	r.parent = op
}

// Cond runs then where cond holds and els where it does not, and returns
// what the branch that ran returned, as lax.cond: both return as many
// values, of the same shapes and dtypes (either may return none, as a
// When with an else). Each branch may load, store and update refs. cond
// is a bool scalar Value or a Go bool decided at trace time: then only
// the branch it picks is traced, and its values are returned as they are.
func (k *Kernel) Cond(cond any, then, els func() []*Value) []*Value {
	if then == nil || els == nil {
		k.failf("cond", "a branch is nil")
		return nil
	}
	if b, ok := cond.(bool); ok {
		f := els
		if b {
			f = then
		}
		vs := f() // after an error too: its values' types make the placeholders
		if !k.check("cond", vs...) {
			return k.placeholders(vs)
		}
		return vs
	}
	c, ok := k.boolScalar("cond", cond)
	loc := callerLoc()
	var ty, ey []*Value
	rt := k.runRegion(nil, func([]*Value) []*Value { ty = then(); return ty })
	re := k.runRegion(nil, func([]*Value) []*Value { ey = els(); return ey })
	if !ok || k.st.err != nil {
		return k.placeholders(ty)
	}
	if len(ty) != len(ey) {
		k.failf("cond", "the branches return %d and %d values", len(ty), len(ey))
		return k.placeholders(ty)
	}
	for _, br := range []struct {
		r  *Region
		vs []*Value
	}{{rt, ty}, {re, ey}} {
		// A branch may return its own values: check them in its scope.
		k.stack = append(k.stack, br.r)
		ok = k.check("cond", br.vs...)
		k.stack = k.stack[:len(k.stack)-1]
		if !ok {
			return k.placeholders(ty)
		}
	}
	for i := range ty {
		if ty[i].Type.DType != ey[i].Type.DType || !sameShape(ty[i].Type.Shape, ey[i].Type.Shape) {
			k.failf("cond", "value %d is %s in the true branch and %s in the false one", i, ty[i].Type, ey[i].Type)
			return k.placeholders(ty)
		}
	}
	regions := []*Region{rt, re}
	if len(ey) == 0 && len(re.Ops) == 0 {
		regions = regions[:1] // an empty else: a When
	}
	op := k.emit("when", []*Value{c}, typesOf(ty), Attrs{}, regions...)
	op.Loc = loc
	rt.parent, re.parent = op, op
	return op.Results
}

func typesOf(vs []*Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		ts[i] = v.Type
	}
	return ts
}

func (k *Kernel) checkYield(op string, want []Type, got []*Value) bool {
	if k.st.err != nil {
		return false
	}
	if len(got) != len(want) {
		k.failf(op, "body returns %d values, the carry has %d", len(got), len(want))
		return false
	}
	for i, g := range got {
		if !k.check(op, g) {
			return false
		}
		if g.Type.DType != want[i].DType || !sameShape(g.Type.Shape, want[i].Shape) {
			k.failf(op, "body returns %s for carry %d of type %s", g.Type, i, want[i])
			return false
		}
	}
	return true
}

// ForLoop runs body for i = lo, lo+1, ..., hi-1 (lo, hi: Go ints or
// integer scalars of any width, used as i32: a scalar outside i32's range
// saturates, a Go constant outside it is an error), threading the carried
// values: body gets i and the carry and returns the next carry; ForLoop
// returns the final carry.
func (k *Kernel) ForLoop(lo, hi any, init []*Value, body func(i *Value, carry []*Value) []*Value) []*Value {
	if body == nil {
		k.failf("for", "body is nil")
		return k.placeholders(init)
	}
	l, ok1 := k.intScalar("for", lo)
	h, ok2 := k.intScalar("for", hi)
	if !ok1 || !ok2 || !k.check("for", init...) {
		return k.placeholders(init)
	}
	loc := callerLoc()
	ts := append([]Type{{DType: xla.Int32}}, typesOf(init)...)
	var inner []*Value
	r := k.runRegion(ts, func(args []*Value) []*Value {
		inner = body(args[0], args[1:])
		return inner
	})
	// The region yields a scratch slice; check it inside the region's scope.
	k.stack = append(k.stack, r)
	ok := k.checkYield("for", typesOf(init), inner)
	k.stack = k.stack[:len(k.stack)-1]
	if !ok {
		return k.placeholders(init)
	}
	op := k.emit("for", append([]*Value{l, h}, init...), typesOf(init), Attrs{}, r)
	op.Loc = loc
	r.parent = op
	return op.Results
}

// While runs body while cond holds, threading the carry: cond gets the
// carry and returns a bool scalar, body returns the next carry. cond may
// load from refs but not store to them.
func (k *Kernel) While(init []*Value, cond func(carry []*Value) *Value, body func(carry []*Value) []*Value) []*Value {
	if len(init) == 0 {
		k.failf("while", "While needs at least one carried value")
		return nil
	}
	if cond == nil || body == nil {
		k.failf("while", "condition or body is nil")
		return k.placeholders(init)
	}
	if !k.check("while", init...) {
		return k.placeholders(init)
	}
	loc := callerLoc()
	ts := typesOf(init)
	var c *Value
	rc := k.runRegion(ts, func(args []*Value) []*Value {
		c = func() *Value {
			k.inCond++
			defer func() { k.inCond-- }() // also when cond panics
			return cond(args)
		}()
		if c == nil {
			k.failf("while", "condition returned nil")
			return nil
		}
		if k.check("while", c) && (!c.Type.DType.IsBool() || c.Type.Rank() != 0) {
			k.failf("while", "condition must be a bool scalar, got %s", c.Type)
		}
		return []*Value{c}
	})
	var inner []*Value
	rb := k.runRegion(ts, func(args []*Value) []*Value {
		inner = body(args)
		return inner
	})
	k.stack = append(k.stack, rb)
	ok := k.checkYield("while", ts, inner)
	k.stack = k.stack[:len(k.stack)-1]
	if !ok || k.st.err != nil {
		return k.placeholders(init)
	}
	op := k.emit("while", init, ts, Attrs{}, rc, rb)
	op.Loc = loc
	rc.parent, rb.parent = op, op
	return op.Results
}

func (k *Kernel) placeholders(vs []*Value) []*Value {
	out := make([]*Value, len(vs))
	for i, v := range vs {
		if v == nil {
			out[i] = k.placeholder(Type{})
		} else {
			out[i] = k.placeholder(v.Type)
		}
	}
	return out
}
