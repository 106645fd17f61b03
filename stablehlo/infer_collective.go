package stablehlo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Process-group sizes that collectiveGroupSize cannot give as a number.
const (
	// groupsAll: no groups (every process of the op's kind is one group)
	// or groups over a mesh named by symbol: the size depends on the
	// number of processes, known when the program runs.
	groupsAll = -1
	// groupsUneven: groups of different sizes (allowed where the result
	// shape does not depend on the size).
	groupsUneven = -2
)

// collectiveGroupSize checks a collective's replica_groups (each process
// in at most one group, no negative id other than the -1 that pads
// shorter groups) and use_global_device_ids (only with a channel_handle
// whose handle is positive), and returns the size of its process groups,
// or groupsAll or groupsUneven. kind is the op name without "stablehlo.".
func collectiveGroupSize(op *Op, kind string) (int64, error) {
	ch, _ := op.Attr("channel_handle").(ChannelHandle)
	_, global := op.Attr("use_global_device_ids").(UnitAttr)
	if global && ch.Handle <= 0 {
		return 0, fmt.Errorf("use_global_device_ids needs a channel_handle with a positive handle")
	}
	// With a channel and replica ids (cross_replica_and_partition), each
	// process group is a replica group times every partition: its size
	// depends on the number of partitions. all_to_all and
	// collective_broadcast with a channel group partitions instead.
	perPartition := ch.Handle > 0 && !global && kind != "all_to_all" && kind != "collective_broadcast"
	a := op.Attr("replica_groups")
	if o, ok := a.(OpaqueAttr); ok && meshBySymbol(string(o)) {
		return groupsAll, nil
	}
	if d, ok := a.(DenseElementsAttr); ok {
		vals, err := d.Int64s()
		if err != nil {
			return 0, fmt.Errorf("replica_groups: %w", err)
		}
		for _, v := range vals {
			if v < -1 {
				return 0, fmt.Errorf("replica_groups holds %d (ids are non-negative; -1 pads a shorter group)", v)
			}
		}
	}
	groups, err := ReplicaGroups(a)
	if err != nil {
		return 0, err
	}
	if len(groups) == 0 {
		return groupsAll, nil
	}
	seen := map[int64]bool{}
	size := int64(len(groups[0]))
	for _, g := range groups {
		if int64(len(g)) != size {
			size = groupsUneven
		}
		for _, id := range g {
			if seen[id] {
				return 0, fmt.Errorf("replica_groups name process %d twice", id)
			}
			seen[id] = true
		}
	}
	if perPartition && size >= 0 {
		return groupsAll, nil
	}
	return size, nil
}

// meshBySymbol reports whether text is a replica_group_mesh_axes over a
// mesh named by symbol (mesh = @name): its groups depend on a module's
// sdy.mesh, which an op alone does not have.
func meshBySymbol(text string) bool {
	body, ok := strings.CutPrefix(text, "#stablehlo.replica_group_mesh_axes<")
	if !ok {
		return false
	}
	v, ok := attrScanner{s: body}.value("mesh")
	return ok && strings.HasPrefix(v, "@")
}

// reductionElem is the element type E a collective reduction's
// computation works in (its first argument's; the operands' when the
// region is not there to say), checked to be a promotion of every
// operand's element type.
func reductionElem(op *Op, ts []TensorType) (xla.DType, error) {
	e := ts[0].DType
	if body := bodyElemTypes(op, 1); body != nil {
		e = body[0]
	}
	for i, t := range ts {
		if !Promotable(t.DType, e) {
			return xla.Invalid, fmt.Errorf("the computation's element type %v is not a promotion of operand %d's %v (same kind, at least as wide)", e, i, t.DType)
		}
	}
	return e, nil
}

// inferCollective checks a collective op's attributes and infers its
// result types by StableHLO's constraints for it. kind is the op name
// without "stablehlo.".
func inferCollective(op *Op, kind string, ts []TensorType) ([]Type, bool, error) {
	if kind == "collective_permute" {
		return inferCollectivePermute(op, ts)
	}
	g, err := collectiveGroupSize(op, kind)
	if err != nil {
		return nil, true, err
	}
	if len(ts) == 0 {
		return nil, true, fmt.Errorf("needs at least one operand")
	}
	intAttr := func(name string) (int64, error) {
		a, ok := op.Attr(name).(IntAttr)
		if !ok {
			return 0, fmt.Errorf("%s is missing", name)
		}
		return a.Value, nil
	}
	dimAttr := func(name string) (int64, error) {
		d, err := intAttr(name)
		if err != nil {
			return 0, err
		}
		for i, t := range ts {
			if d < 0 || d >= int64(t.Rank()) {
				return 0, fmt.Errorf("%s %d is outside operand %d of rank %d", name, d, i, t.Rank())
			}
		}
		return d, nil
	}
	// result is result i's type: dims (the operand's, dim d resized by
	// the group size), dim d taken as declared when the group size is not
	// known.
	result := func(i int, dt xla.DType, dims []int64, d int64) TensorType {
		if g < 0 && i < len(op.Results) {
			if rt, ok := op.Results[i].Type.(TensorType); ok && rt.Rank() == len(dims) {
				dims[d] = rt.Dims[d]
			}
		}
		return TensorType{DType: dt, Dims: dims}
	}
	out := make([]Type, len(ts))
	switch kind {
	case "all_reduce", "collective_reduce":
		e, err := reductionElem(op, ts)
		if err != nil {
			return nil, true, err
		}
		for i, t := range ts {
			out[i] = TensorType{DType: e, Dims: t.Dims}
		}
	case "cross-replica-sum", "collective_broadcast":
		if _, ok := op.Attr("has_dynamic_root").(UnitAttr); ok && kind == "collective_broadcast" {
			// halo's extension: a trailing operand names each operand's root.
			return valueTypes(op.Operands[:len(op.Operands)-1]), true, nil
		}
		return valueTypes(op.Operands), true, nil
	case "all_gather":
		d, err := dimAttr("all_gather_dim")
		if err != nil {
			return nil, true, err
		}
		if g == groupsUneven {
			return nil, true, fmt.Errorf("replica_groups are of different sizes: the gathered size is not one number")
		}
		for i, t := range ts {
			dims := slices.Clone(t.Dims)
			if g >= 0 && dims[d] != DynamicDim {
				var c dimCalc
				if dims[d] = c.mul(dims[d], g); c.overflow {
					return nil, true, fmt.Errorf("all_gather_dim %d of operand %d times %d processes overflows int64", d, i, g)
				}
			}
			rt := result(i, t.DType, dims, d)
			if g < 0 && t.Dims[d] > 0 && rt.Dims[d] != DynamicDim && rt.Dims[d]%t.Dims[d] != 0 {
				return nil, true, fmt.Errorf("result %d's dim %d (%d) is not a multiple of the operand's (%d)", i, d, rt.Dims[d], t.Dims[d])
			}
			out[i] = rt
		}
	case "reduce_scatter":
		d, err := dimAttr("scatter_dimension")
		if err != nil {
			return nil, true, err
		}
		if g == groupsUneven {
			return nil, true, fmt.Errorf("replica_groups are of different sizes: the scattered size is not one number")
		}
		e, err := reductionElem(op, ts)
		if err != nil {
			return nil, true, err
		}
		for i, t := range ts {
			dims := slices.Clone(t.Dims)
			if g > 0 && dims[d] != DynamicDim {
				if dims[d]%g != 0 {
					return nil, true, fmt.Errorf("scatter_dimension %d of operand %d (%d) is not divisible by the group size %d", d, i, dims[d], g)
				}
				dims[d] /= g
			}
			rt := result(i, e, dims, d)
			if g < 0 && rt.Dims[d] > 0 && t.Dims[d] != DynamicDim && t.Dims[d]%rt.Dims[d] != 0 {
				return nil, true, fmt.Errorf("result %d's dim %d (%d) does not divide the operand's (%d)", i, d, rt.Dims[d], t.Dims[d])
			}
			out[i] = rt
		}
	case "all_to_all":
		sd, err := dimAttr("split_dimension")
		if err != nil {
			return nil, true, err
		}
		cd, err := dimAttr("concat_dimension")
		if err != nil {
			return nil, true, err
		}
		n, err := intAttr("split_count")
		if err != nil {
			return nil, true, err
		}
		if n <= 0 {
			return nil, true, fmt.Errorf("split_count %d is not positive", n)
		}
		if g == groupsUneven || g >= 0 && g != n {
			return nil, true, fmt.Errorf("split_count %d is not the size of every replica group", n)
		}
		for i, t := range ts {
			dims := slices.Clone(t.Dims)
			if dims[sd] != DynamicDim {
				if dims[sd]%n != 0 {
					return nil, true, fmt.Errorf("split_dimension %d of operand %d (%d) is not divisible by split_count %d", sd, i, dims[sd], n)
				}
				dims[sd] /= n
			}
			if dims[cd] != DynamicDim {
				var c dimCalc
				if dims[cd] = c.mul(dims[cd], n); c.overflow {
					return nil, true, fmt.Errorf("concat_dimension %d of operand %d times split_count %d overflows int64", cd, i, n)
				}
			}
			out[i] = TensorType{DType: t.DType, Dims: dims}
		}
	default:
		return nil, false, nil
	}
	return out, true, nil
}

// inferCollectivePermute checks source_target_pairs (an Nx2 tensor of
// non-negative ids, each source and each target at most once); the result
// is the operand's type.
func inferCollectivePermute(op *Op, ts []TensorType) ([]Type, bool, error) {
	d, ok := op.Attr("source_target_pairs").(DenseElementsAttr)
	if !ok {
		return nil, true, fmt.Errorf("source_target_pairs is missing")
	}
	if len(d.Type.Dims) != 2 || d.Type.Dims[1] != 2 {
		return nil, true, fmt.Errorf("source_target_pairs is %s, want Nx2", d.Type)
	}
	vals, err := d.Int64s()
	if err != nil {
		return nil, true, fmt.Errorf("source_target_pairs: %w", err)
	}
	srcs, dsts := map[int64]bool{}, map[int64]bool{}
	for i := 0; i+1 < len(vals); i += 2 {
		s, t := vals[i], vals[i+1]
		switch {
		case s < 0 || t < 0:
			return nil, true, fmt.Errorf("source_target_pairs hold a negative id: [%d, %d]", s, t)
		case srcs[s]:
			return nil, true, fmt.Errorf("source_target_pairs name source %d twice", s)
		case dsts[t]:
			return nil, true, fmt.Errorf("source_target_pairs name target %d twice", t)
		}
		srcs[s], dsts[t] = true, true
	}
	return valueTypes(op.Operands), true, nil
}
