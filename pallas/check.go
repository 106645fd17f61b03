package pallas

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/halo-ml/halo/effects"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// checkConfigJSON is the backend_config of the check custom call.
type checkConfigJSON struct {
	Kernel string          `json:"kernel"`
	Grid   []int64         `json:"grid"`
	Sites  []checkSiteJSON `json:"sites"`
}

type checkSiteJSON struct {
	What string  `json:"what"`
	Kind string  `json:"kind"`
	Dims []int64 `json:"dims"`
}

func (l *interp) checkConfig() string {
	c := checkConfigJSON{Kernel: l.p.Name, Grid: l.p.Grid}
	for _, s := range l.sites {
		c.Sites = append(c.Sites, checkSiteJSON{What: s.what, Kind: s.kind, Dims: s.dims})
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// BoundsError is the run-time error of interpret mode's bounds checks: the
// kernel, the grid point, the access (op, ref, source line) and the index.
type BoundsError struct {
	Kernel    string  // the kernel's name (CallSpec.Name)
	GridPoint []int64 // the program's grid indices
	Access    string  // "load from input 0 (f32[2] block of f32[8]) at k.go:12"
	Kind      string  // "element index", "block index", "slice of size [2] starting at"
	Index     []int64 // the index that left the bounds
	Bounds    []int64 // the ref's shape (or the number of blocks)
}

// Error names the kernel, the grid point, the access, the index and the
// bounds it left.
func (e *BoundsError) Error() string {
	if strings.HasPrefix(e.Kind, "slice") {
		return fmt.Sprintf("pallas: kernel %q: grid point %s: %s: %s %s does not fit in %s",
			e.Kernel, tuple(e.GridPoint), e.Access, e.Kind, tuple(e.Index), tuple(e.Bounds))
	}
	ranges := make([]string, len(e.Bounds))
	for i, b := range e.Bounds {
		ranges[i] = fmt.Sprintf("[0, %d)", b)
	}
	return fmt.Sprintf("pallas: kernel %q: grid point %s: %s: %s %s outside %s",
		e.Kernel, tuple(e.GridPoint), e.Access, e.Kind, tuple(e.Index), strings.Join(ranges, " x "))
}

func tuple(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// decodeCheck turns the check state and config into an error (nil when no
// check failed).
func decodeCheck(config string, state []int32) error {
	if len(state) < 2 || state[0] == 0 {
		return nil
	}
	var c checkConfigJSON
	if err := json.Unmarshal([]byte(config), &c); err != nil {
		return fmt.Errorf("pallas: bad %s config: %v", CheckTarget, err)
	}
	site := int(state[0]) - 1
	if site < 0 || site >= len(c.Sites) {
		return fmt.Errorf("pallas: kernel %q: bounds check failed at unknown site %d", c.Kernel, site)
	}
	s := c.Sites[site]
	step := int64(state[1])
	point := make([]int64, len(c.Grid))
	for d := len(c.Grid) - 1; d >= 0; d-- {
		point[d] = step % c.Grid[d]
		step /= c.Grid[d]
	}
	e := &BoundsError{Kernel: c.Kernel, GridPoint: point, Access: s.What, Kind: s.Kind, Bounds: s.Dims}
	for d := range s.Dims {
		if 2+d < len(state) {
			e.Index = append(e.Index, int64(state[2+d]))
		}
	}
	return e
}

// checkConfigAttr is the attribute of the check's backend_config that
// holds its JSON config (checkConfigJSON).
const checkConfigAttr = "halo.pallas.check"

// checkCallConfig is the custom call of a check: a typed-FFI call
// (api_version 4) with side effects, routed by pjrt.FFICallbackAttr to the
// Go handler Register installs on a plugin.
func checkCallConfig(config string) stablehlo.CustomCallConfig {
	return stablehlo.CustomCallConfig{
		HasSideEffect: true,
		APIVersion:    4,
		BackendConfig: stablehlo.DictAttr{
			{Name: pjrt.FFICallbackAttr, Value: stablehlo.I64Attr(pjrt.FFICallbackID(CheckTarget))},
			{Name: checkConfigAttr, Value: stablehlo.StringAttr(config)},
		},
	}
}

// checkState decodes the check's operand: a little-endian i32 vector.
func checkState(b []byte) []int32 {
	s := make([]int32, len(b)/4)
	for i := range s {
		s[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s
}

// handleCheck is the typed-FFI handler of CheckTarget.
func handleCheck(frame *pjrt.FFICallFrame) error {
	if frame.Stage != pjrt.FFIStageExecute {
		return nil
	}
	if len(frame.Args) != 1 || frame.Args[0].DType != xla.Int32 {
		return fmt.Errorf("pallas: %s takes one i32 operand", CheckTarget)
	}
	cfg, ok := frame.Attrs[checkConfigAttr].(string)
	if !ok {
		return fmt.Errorf("pallas: %s has no string attribute %s", CheckTarget, checkConfigAttr)
	}
	b, err := effects.OperandBytes(frame, 0)
	if err != nil {
		return fmt.Errorf("pallas: reading the bounds check state: %w", err)
	}
	return decodeCheck(cfg, checkState(b))
}

// Register installs the Go handler of interpret mode's bounds check
// (CheckTarget) with c's plugin, for the platform XLA knows it by. A
// failed check then fails the execution with the *BoundsError's message.
// pjrt.Client.Compile does this itself for a program that calls the check
// (the handler is declared with pjrt.DeclareFFIHandler), so Register is
// only needed to learn early whether the plugin takes the handler. It is
// idempotent. A kernel compiled with CompilerParams.NoBoundsChecks has no
// checks; the built-in interpreter runs them with or without a handler.
func Register(c *pjrt.Client) error {
	if c == nil {
		return errors.New("pallas: Register: nil client")
	}
	if err := effects.RegisterHandler(c, CheckTarget, handleCheck); err != nil {
		return fmt.Errorf("pallas: %w", err)
	}
	return nil
}

func init() {
	pjrt.DeclareFFIHandler(CheckTarget, handleCheck, 0)
	interpreter.RegisterCustomCall(CheckTarget, func(c *interpreter.CustomCall) ([]*interpreter.Tensor, error) {
		if len(c.Operands) != 1 {
			return nil, fmt.Errorf("pallas: %s takes 1 operand, got %d", CheckTarget, len(c.Operands))
		}
		state, ok := c.Operands[0].Data.([]int32)
		if !ok {
			return nil, fmt.Errorf("pallas: %s operand is %v, want i32", CheckTarget, c.Operands[0].Shape)
		}
		var cfg string
		switch a := c.BackendConfig.(type) {
		case stablehlo.StringAttr: // programs lowered before the config became a dictionary
			cfg = string(a)
		case stablehlo.DictAttr:
			s, _ := a.Get(checkConfigAttr).(stablehlo.StringAttr)
			cfg = string(s)
		}
		return nil, decodeCheck(cfg, state)
	})
}
