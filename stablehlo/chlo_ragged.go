package stablehlo

import (
	"fmt"
	"slices"

	"github.com/halo-ml/halo/xla"
)

// RaggedDotDimensionNumbers is #chlo.ragged_dot<...>, the dimension
// numbers of chlo.ragged_dot: dot_general's batching and contracting
// dimensions, the one lhs dimension cut into groups (lhs_ragged_dimensions)
// and the rhs dimension indexed by group (rhs_group_dimensions, one in the
// ragged non-contracting mode, none otherwise). It prints as MLIR does,
// every field present:
//
//	#chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1],
//	  lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2],
//	  lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>
type RaggedDotDimensionNumbers struct {
	LhsBatchingDims, RhsBatchingDims       []int64
	LhsContractingDims, RhsContractingDims []int64
	LhsRaggedDims                          []int64
	RhsGroupDims                           []int64
}

func (RaggedDotDimensionNumbers) isAttribute() {}

// RaggedDotMode is the kind of chlo.ragged_dot, given by the role of the
// lhs ragged dimension.
type RaggedDotMode int

// The three modes (shape signatures with b batching, m lhs free, k
// contracting, n rhs free dimensions and g groups):
const (
	// RaggedNonContracting: [b,m,k], [g,b,k,n], [b,g] -> [b,m,n]; rows of
	// group i of m multiply rhs group i.
	RaggedNonContracting RaggedDotMode = iota
	// RaggedContracting: [b,m,k], [b,k,n], [b,g] -> [g,b,m,n]; result
	// group i contracts over group i's slice of k only.
	RaggedContracting
	// RaggedBatch: [b,m,k], [b,k,n], [g] -> [b,m,n]; an ordinary batched
	// dot (batch entries past the groups are zero).
	RaggedBatch
)

// String names the mode.
func (m RaggedDotMode) String() string {
	switch m {
	case RaggedNonContracting:
		return "ragged non-contracting"
	case RaggedContracting:
		return "ragged contracting"
	case RaggedBatch:
		return "ragged batch"
	}
	return fmt.Sprintf("RaggedDotMode(%d)", int(m))
}

// RaggedDotPlan is a checked chlo.ragged_dot: its mode, the shape
// group_sizes must have when it is not the broadcast [g] form, and the
// result dimensions.
type RaggedDotPlan struct {
	Mode RaggedDotMode
	// Ragged is the lhs ragged dimension.
	Ragged int64
	// NumGroups is the last dimension of group_sizes.
	NumGroups int64
	// GroupPrefix lists the lhs dimensions group_sizes's leading
	// dimensions match (group_sizes of rank > 1 has shape [lhs sizes of
	// GroupPrefix..., g]): the lhs batching dimensions before the ragged
	// one, then (ragged non-contracting) the lhs free dimensions before
	// it, or (ragged contracting) the lhs contracting dimensions listed
	// before it.
	GroupPrefix []int64
	// LhsFree and RhsFree are the dimensions that are neither batching,
	// contracting nor group dimensions, in order.
	LhsFree, RhsFree []int64
	// Dims are the result dimensions: [g] in the ragged contracting mode,
	// then the batching, lhs free and rhs free dimensions.
	Dims []int64
}

// PlanRaggedDot checks chlo.ragged_dot's operand types against d (the
// rules of upstream CHLO's verifier) and returns the plan. Errors name the
// problem: dimension lists out of range or repeated, batching or
// contracting sizes that differ, a wrong count of ragged or group
// dimensions for the mode, or a group_sizes shape other than [g] or the
// expected [prefix..., g].
func PlanRaggedDot(lhs, rhs, groupSizes TensorType, d RaggedDotDimensionNumbers) (*RaggedDotPlan, error) {
	lr, rr := int64(lhs.Rank()), int64(rhs.Rank())
	inRange := func(what string, v []int64, rank int64) error {
		for i, x := range v {
			if x < 0 || x >= rank {
				return fmt.Errorf("%s %v: %d is out of range for rank %d", what, v, x, rank)
			}
			if slices.Contains(v[:i], x) {
				return fmt.Errorf("%s %v repeats %d", what, v, x)
			}
		}
		return nil
	}
	for _, c := range []struct {
		what string
		v    []int64
		rank int64
	}{{"lhs_batching_dimensions", d.LhsBatchingDims, lr}, {"rhs_batching_dimensions", d.RhsBatchingDims, rr},
		{"lhs_contracting_dimensions", d.LhsContractingDims, lr}, {"rhs_contracting_dimensions", d.RhsContractingDims, rr},
		{"lhs_ragged_dimensions", d.LhsRaggedDims, lr}, {"rhs_group_dimensions", d.RhsGroupDims, rr}} {
		if err := inRange(c.what, c.v, c.rank); err != nil {
			return nil, err
		}
	}
	overlap := func(an string, a []int64, bn string, b []int64) error {
		for _, x := range a {
			if slices.Contains(b, x) {
				return fmt.Errorf("dimension %d is in both %s and %s", x, an, bn)
			}
		}
		return nil
	}
	for _, c := range [][4]any{
		{"lhs_batching_dimensions", d.LhsBatchingDims, "lhs_contracting_dimensions", d.LhsContractingDims},
		{"rhs_batching_dimensions", d.RhsBatchingDims, "rhs_contracting_dimensions", d.RhsContractingDims},
		{"rhs_group_dimensions", d.RhsGroupDims, "rhs_batching_dimensions", d.RhsBatchingDims},
		{"rhs_group_dimensions", d.RhsGroupDims, "rhs_contracting_dimensions", d.RhsContractingDims},
	} {
		if err := overlap(c[0].(string), c[1].([]int64), c[2].(string), c[3].([]int64)); err != nil {
			return nil, err
		}
	}
	if len(d.LhsBatchingDims) != len(d.RhsBatchingDims) {
		return nil, fmt.Errorf("lhs_batching_dimensions %v and rhs_batching_dimensions %v differ in length", d.LhsBatchingDims, d.RhsBatchingDims)
	}
	if len(d.LhsContractingDims) != len(d.RhsContractingDims) {
		return nil, fmt.Errorf("lhs_contracting_dimensions %v and rhs_contracting_dimensions %v differ in length", d.LhsContractingDims, d.RhsContractingDims)
	}
	compatible := func(a, b int64) bool { return a == b || a == DynamicDim || b == DynamicDim }
	for i := range d.LhsBatchingDims {
		if a, b := lhs.Dims[d.LhsBatchingDims[i]], rhs.Dims[d.RhsBatchingDims[i]]; !compatible(a, b) {
			return nil, fmt.Errorf("batching dimension sizes must match: lhs dimension %d is %d, rhs dimension %d is %d", d.LhsBatchingDims[i], a, d.RhsBatchingDims[i], b)
		}
	}
	for i := range d.LhsContractingDims {
		if a, b := lhs.Dims[d.LhsContractingDims[i]], rhs.Dims[d.RhsContractingDims[i]]; !compatible(a, b) {
			return nil, fmt.Errorf("contracting dimension sizes must match: lhs dimension %d is %d, rhs dimension %d is %d", d.LhsContractingDims[i], a, d.RhsContractingDims[i], b)
		}
	}
	if len(d.LhsRaggedDims) != 1 {
		return nil, fmt.Errorf("lhs_ragged_dimensions %v must hold exactly one dimension", d.LhsRaggedDims)
	}
	p := &RaggedDotPlan{Ragged: d.LhsRaggedDims[0]}
	switch {
	case slices.Contains(d.LhsBatchingDims, p.Ragged):
		p.Mode = RaggedBatch
	case slices.Contains(d.LhsContractingDims, p.Ragged):
		p.Mode = RaggedContracting
	default:
		p.Mode = RaggedNonContracting
	}
	// group_sizes: [g], or [prefix..., g].
	if groupSizes.Rank() == 0 {
		return nil, fmt.Errorf("group_sizes %s must have rank >= 1", groupSizes)
	}
	if dtypeClasses[groupSizes.DType]&clsInt == 0 {
		return nil, fmt.Errorf("group_sizes %s must have an integer element type", groupSizes)
	}
	switch p.Mode {
	case RaggedBatch:
		i := slices.Index(d.LhsBatchingDims, p.Ragged)
		p.GroupPrefix = slices.Clone(d.LhsBatchingDims[:i])
	case RaggedContracting:
		i := slices.Index(d.LhsContractingDims, p.Ragged)
		p.GroupPrefix = append(slices.Clone(d.LhsBatchingDims), d.LhsContractingDims[:i]...)
	default:
		p.GroupPrefix = slices.Clone(d.LhsBatchingDims)
		for i := int64(0); i < p.Ragged; i++ {
			if !slices.Contains(d.LhsBatchingDims, i) && !slices.Contains(d.LhsContractingDims, i) {
				p.GroupPrefix = append(p.GroupPrefix, i)
			}
		}
	}
	p.NumGroups = groupSizes.Dims[groupSizes.Rank()-1]
	if groupSizes.Rank() != 1 {
		want := make([]int64, 0, len(p.GroupPrefix)+1)
		for _, i := range p.GroupPrefix {
			want = append(want, lhs.Dims[i])
		}
		want = append(want, p.NumGroups)
		if groupSizes.Rank() != len(want) {
			return nil, fmt.Errorf("group_sizes %s must have rank 1 or %d (shape %v)", groupSizes, len(want), want)
		}
		for i := range want {
			if !compatible(want[i], groupSizes.Dims[i]) {
				return nil, fmt.Errorf("group_sizes is expected to have shape %v, got %v", want, groupSizes.Dims)
			}
		}
	}
	switch p.Mode {
	case RaggedNonContracting:
		if len(d.RhsGroupDims) != 1 {
			return nil, fmt.Errorf("the ragged non-contracting mode needs exactly one rhs group dimension, got rhs_group_dimensions %v", d.RhsGroupDims)
		}
		if g := rhs.Dims[d.RhsGroupDims[0]]; !compatible(g, p.NumGroups) {
			return nil, fmt.Errorf("rhs group dimension %d has size %d, want %d (the number of groups)", d.RhsGroupDims[0], g, p.NumGroups)
		}
	default:
		if len(d.RhsGroupDims) != 0 {
			return nil, fmt.Errorf("the %s mode takes no rhs group dimension, got rhs_group_dimensions %v", p.Mode, d.RhsGroupDims)
		}
	}
	for i := int64(0); i < lr; i++ {
		if !slices.Contains(d.LhsBatchingDims, i) && !slices.Contains(d.LhsContractingDims, i) {
			p.LhsFree = append(p.LhsFree, i)
		}
	}
	for i := int64(0); i < rr; i++ {
		if !slices.Contains(d.RhsBatchingDims, i) && !slices.Contains(d.RhsContractingDims, i) && !slices.Contains(d.RhsGroupDims, i) {
			p.RhsFree = append(p.RhsFree, i)
		}
	}
	if p.Mode == RaggedContracting {
		p.Dims = append(p.Dims, p.NumGroups)
	}
	for _, i := range d.LhsBatchingDims {
		p.Dims = append(p.Dims, lhs.Dims[i])
	}
	for _, i := range p.LhsFree {
		p.Dims = append(p.Dims, lhs.Dims[i])
	}
	for _, i := range p.RhsFree {
		p.Dims = append(p.Dims, rhs.Dims[i])
	}
	return p, nil
}

// InferRaggedDot returns chlo.ragged_dot's result type: the plan's
// dimensions, of element type resultDType (Invalid: lhs's). lhs, rhs and
// the result have numeric element types (float, integer or complex, as
// dot_general's; i8 x i8 -> i32 included), not bool.
func InferRaggedDot(lhs, rhs, groupSizes TensorType, d RaggedDotDimensionNumbers, resultDType xla.DType) (TensorType, error) {
	numeric := func(dt xla.DType) bool { return dt.IsFloat() || dt.IsComplex() || dt.IsInt() && !dt.IsBool() }
	if !numeric(lhs.DType) || !numeric(rhs.DType) {
		return TensorType{}, fmt.Errorf("lhs and rhs must have numeric element types, got %s and %s", lhs.DType, rhs.DType)
	}
	if resultDType == xla.Invalid {
		resultDType = lhs.DType
	}
	if !numeric(resultDType) {
		return TensorType{}, fmt.Errorf("result element type %s is not numeric", resultDType)
	}
	p, err := PlanRaggedDot(lhs, rhs, groupSizes, d)
	if err != nil {
		return TensorType{}, err
	}
	return TensorType{DType: resultDType, Dims: p.Dims}, nil
}

// inferChloRaggedDot is inferChlo for chlo.ragged_dot: the result element
// type is the op's own (a preferred element type) when it has a result,
// else lhs's.
func inferChloRaggedDot(op *Op, ts []TensorType) ([]Type, bool, error) {
	d, ok := op.Attr("ragged_dot_dimension_numbers").(RaggedDotDimensionNumbers)
	if !ok {
		return nil, true, fmt.Errorf("ragged_dot_dimension_numbers must be #chlo.ragged_dot<...>, got %v", op.Attr("ragged_dot_dimension_numbers"))
	}
	if err := checkChloPrecision(op.Attr("precision_config")); err != nil {
		return nil, true, err
	}
	dt := xla.Invalid
	if len(op.Results) == 1 && op.Results[0] != nil {
		if rt, ok := op.Results[0].Type.(TensorType); ok {
			dt = rt.DType
		}
	}
	t, err := InferRaggedDot(ts[0], ts[1], ts[2], d, dt)
	if err != nil {
		return nil, true, err
	}
	return []Type{t}, true, nil
}

// checkChloPrecision checks an optional precision_config of two entries.
func checkChloPrecision(a Attribute) error {
	if a == nil {
		return nil
	}
	arr, ok := a.(ArrayAttr)
	if !ok || (len(arr) != 0 && len(arr) != 2) {
		return fmt.Errorf("precision_config %v must be empty or hold two precisions (lhs, rhs)", a)
	}
	for _, e := range arr {
		en, ok := e.(EnumAttr)
		if !ok || en.Enum != "precision" {
			return fmt.Errorf("precision_config entry %v is not a precision", e)
		}
		switch Precision(en.Value) {
		case PrecisionDefault, PrecisionHigh, PrecisionHighest:
		default:
			return fmt.Errorf("precision_config entry %s is not DEFAULT, HIGH or HIGHEST", en.Value)
		}
	}
	return nil
}

// ChloPrecisionConfig returns chlo.ragged_dot's precision_config attribute
// for the given precisions (#chlo<precision DEFAULT> ...).
func ChloPrecisionConfig(ps ...Precision) ArrayAttr {
	out := make(ArrayAttr, len(ps))
	for i, p := range ps {
		out[i] = EnumAttr{Dialect: "chlo", Enum: "precision", Value: string(p)}
	}
	return out
}

// mlirForm is the field form of #chlo.ragged_dot<...>: MLIR prints all
// six fields; a missing one parses as an empty list.
func (d *RaggedDotDimensionNumbers) mlirForm() mlirStructForm {
	return mlirStructForm{what: "ragged_dot", nilEmpty: true, fields: []mlirStructField{
		{name: "lhs_batching_dimensions", list: &d.LhsBatchingDims},
		{name: "rhs_batching_dimensions", list: &d.RhsBatchingDims},
		{name: "lhs_contracting_dimensions", list: &d.LhsContractingDims},
		{name: "rhs_contracting_dimensions", list: &d.RhsContractingDims},
		{name: "lhs_ragged_dimensions", list: &d.LhsRaggedDims},
		{name: "rhs_group_dimensions", list: &d.RhsGroupDims},
	}}
}

// mlirAppendRaggedDot prints d with every field, as MLIR does.
func mlirAppendRaggedDot(b []byte, d RaggedDotDimensionNumbers) []byte {
	return mlirAppendStructAttr(b, "#chlo.ragged_dot<", d.mlirForm())
}

// String is the attribute's MLIR text.
func (d RaggedDotDimensionNumbers) String() string {
	return string(mlirAppendRaggedDot(nil, d))
}
