package pallas

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
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
	Kernel    string
	GridPoint []int64
	Access    string // "load from input 0 (f32[2] block of f32[8]) at k.go:12"
	Kind      string // "element index", "block index", "slice of size [2] starting at"
	Index     []int64
	Bounds    []int64 // the ref's shape (or the number of blocks)
}

// Error names the kernel, the grid point, the access, the index and the
// bounds it left.
func (e *BoundsError) Error() string {
	return fmt.Sprintf("pallas: kernel %q: grid point %s: %s: %s %s outside %s",
		e.Kernel, tuple(e.GridPoint), e.Access, e.Kind, tuple(e.Index), tuple(e.Bounds))
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

func init() {
	interpreter.RegisterCustomCall(CheckTarget, func(c *interpreter.CustomCall) ([]*interpreter.Tensor, error) {
		if len(c.Operands) != 1 {
			return nil, fmt.Errorf("pallas: %s takes 1 operand, got %d", CheckTarget, len(c.Operands))
		}
		state, ok := c.Operands[0].Data.([]int32)
		if !ok {
			return nil, fmt.Errorf("pallas: %s operand is %v, want i32", CheckTarget, c.Operands[0].Shape)
		}
		cfg, _ := c.BackendConfig.(stablehlo.StringAttr)
		return nil, decodeCheck(string(cfg), state)
	})
}
