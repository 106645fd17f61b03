package interpreter

import (
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// gather, dynamic_gather, scatter and torch_index_select, with every
// dimension-number combination of the spec, batching dimensions included.
//
// Gather clamps each start index to [0, dim - slice_size] (spec), so every
// window is in bounds. Scatter follows the spec too: an update whose
// result_index is out of bounds is skipped, element by element (XLA skips
// the whole update window when any part of it is out of bounds; the two
// agree whenever windows are entirely in or out of bounds).
// indices_are_sorted and unique_indices are hints and are not checked.

func init() {
	shpRegister("stablehlo.gather", shpGather)
	shpRegister("stablehlo.dynamic_gather", shpDynamicGather)
	shpRegister("stablehlo.scatter", shpScatter)
	shpRegister("stablehlo.torch_index_select", shpTorchIndexSelect)
}

func shpGather(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, shpErrf("gather takes 2 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	sizes, ok, err := shpAttrInts(op, "slice_sizes")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, shpErrf("missing attribute slice_sizes")
	}
	return shpGatherWith(op, ts[0], ts[1], sizes, x.stopFlag())
}

// shpDynamicGather is gather with slice_sizes given as an operand.
func shpDynamicGather(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 3 {
		return nil, shpErrf("dynamic_gather takes 3 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	if ts[2].Shape.Rank() != 1 {
		return nil, shpErrf("slice_sizes must be a 1-D tensor, got %v", ts[2].Shape)
	}
	sizes, err := shpInts(ts[2])
	if err != nil {
		return nil, shpErrf("slice_sizes: %w", err)
	}
	return shpGatherWith(op, ts[0], ts[1], sizes, x.stopFlag())
}

func shpGatherWith(op *stablehlo.Op, operand, indices *Tensor, sizes []int64, stop *atomic.Bool) ([]Value, error) {
	dn, ok := op.Attr("dimension_numbers").(stablehlo.GatherDimensionNumbers)
	if !ok {
		return nil, shpErrf("dimension_numbers must be #stablehlo.gather<...>, got %T", op.Attr("dimension_numbers"))
	}
	if _, err := shpAttrBool(op, "indices_are_sorted"); err != nil {
		return nil, err
	}
	g, err := shpNewGather(operand.Shape.Dims, indices.Shape.Dims, dn, sizes)
	if err != nil {
		return nil, err
	}
	sh, err := shpCheckShape(op, 0, operand.Shape.DType, g.outDims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if err := g.run(out, operand, indices, stop); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}

// shpGatherGeom is a checked gather: output shape and the strided geometry
// of the copy of one window.
type shpGatherGeom struct {
	dn                 stablehlo.GatherDimensionNumbers
	opDims, sizes      []int64
	outDims            []int64
	batchDims          []int64 // index space: start_indices dims without index_vector_dim
	idxBatchStr        []int64 // strides in start_indices of each batch dim
	outBatchStr        []int64 // strides in the result of each batch dim
	ivdStr             int64   // stride of index_vector_dim in start_indices (0 if absent)
	winDims            []int64 // window, coalesced
	winDst, winSrc     []int64
	emptyWindow        bool // a collapsed/batching dimension of size 0 has slice size 0
	idxRank, numStarts int
}

func shpNewGather(opDims, idxDims []int64, dn stablehlo.GatherDimensionNumbers, sizes []int64) (*shpGatherGeom, error) {
	r, ir := len(opDims), len(idxDims)
	g := &shpGatherGeom{dn: dn, opDims: opDims, sizes: sizes, idxRank: ir}
	if len(sizes) != r {
		return nil, shpErrf("slice_sizes has %d entries for an operand of rank %d", len(sizes), r)
	}
	for d, s := range sizes {
		if s < 0 || s > opDims[d] {
			return nil, shpErrf("slice_sizes[%d] = %d is out of range for size %d", d, s, opDims[d])
		}
	}
	ivd := dn.IndexVectorDim
	if ivd < 0 || ivd > int64(ir) {
		return nil, shpErrf("index_vector_dim %d is out of range for start_indices of rank %d", ivd, ir)
	}
	g.numStarts = 1
	if ivd < int64(ir) {
		g.numStarts = int(idxDims[ivd])
	}
	if len(dn.StartIndexMap) != g.numStarts {
		return nil, shpErrf("start_index_map %v must have %d entries", dn.StartIndexMap, g.numStarts)
	}
	if err := shpDimsIn("start_index_map", dn.StartIndexMap, r); err != nil {
		return nil, err
	}
	both := append(append([]int64(nil), dn.CollapsedSliceDims...), dn.OperandBatchingDims...)
	if err := shpDimsIn("collapsed_slice_dims and operand_batching_dims", both, r); err != nil {
		return nil, err
	}
	ownSizes := false
	for _, d := range both {
		if sizes[d] > 1 {
			return nil, shpErrf("slice_sizes[%d] = %d must be at most 1 for a collapsed or batching dimension", d, sizes[d])
		}
		if sizes[d] == 0 {
			if opDims[d] == 0 {
				g.emptyWindow = true // nothing to read: zeros
				continue
			}
			// As the spec's reference interpreter: the collapsed dimension
			// reads the element at the start (clamped into the operand),
			// the one position a window of 0 or 1 there adds.
			if !ownSizes {
				g.sizes, ownSizes = append([]int64(nil), sizes...), true // not the attribute's slice
			}
			g.sizes[d] = 1
		}
	}
	sizes = g.sizes
	for _, d := range dn.StartIndexMap {
		if shpContains(dn.OperandBatchingDims, d) {
			return nil, shpErrf("start_index_map and operand_batching_dims share dimension %d", d)
		}
	}
	if len(dn.StartIndicesBatchingDims) != len(dn.OperandBatchingDims) {
		return nil, shpErrf("operand_batching_dims %v and start_indices_batching_dims %v differ in length",
			dn.OperandBatchingDims, dn.StartIndicesBatchingDims)
	}
	if err := shpDimsIn("start_indices_batching_dims", dn.StartIndicesBatchingDims, ir); err != nil {
		return nil, err
	}
	for i, sd := range dn.StartIndicesBatchingDims {
		if sd == ivd {
			return nil, shpErrf("start_indices_batching_dims contains index_vector_dim %d", ivd)
		}
		if od := dn.OperandBatchingDims[i]; opDims[od] != idxDims[sd] {
			return nil, shpErrf("operand batching dimension %d (size %d) and start indices batching dimension %d (size %d) differ",
				od, opDims[od], sd, idxDims[sd])
		}
	}
	// Window: the operand dims that are neither collapsed nor batching.
	var winOpDims []int64
	for d := 0; d < r; d++ {
		if !shpContains(both, int64(d)) {
			winOpDims = append(winOpDims, int64(d))
		}
	}
	if len(dn.OffsetDims) != len(winOpDims) {
		return nil, shpErrf("offset_dims %v must have %d entries (rank %d minus collapsed and batching dims)",
			dn.OffsetDims, len(winOpDims), r)
	}
	idxStr := Strides(idxDims)
	for d := 0; d < ir; d++ {
		if int64(d) != ivd {
			g.batchDims = append(g.batchDims, idxDims[d])
			g.idxBatchStr = append(g.idxBatchStr, idxStr[d])
		}
	}
	if ivd < int64(ir) {
		g.ivdStr = idxStr[ivd]
	}
	outRank := len(g.batchDims) + len(dn.OffsetDims)
	for i, d := range dn.OffsetDims {
		if d < 0 || d >= int64(outRank) || (i > 0 && d <= dn.OffsetDims[i-1]) {
			return nil, shpErrf("offset_dims %v must be sorted, unique and below the result rank %d", dn.OffsetDims, outRank)
		}
	}
	g.outDims = make([]int64, outRank)
	var resBatch []int64
	for d, j := 0, 0; d < outRank; d++ {
		if shpContains(dn.OffsetDims, int64(d)) {
			continue
		}
		g.outDims[d] = g.batchDims[j]
		resBatch = append(resBatch, int64(d))
		j++
	}
	for j, d := range dn.OffsetDims {
		g.outDims[d] = sizes[winOpDims[j]]
	}
	outStr := Strides(g.outDims)
	for _, d := range resBatch {
		g.outBatchStr = append(g.outBatchStr, outStr[d])
	}
	opStr := Strides(opDims)
	wd := make([]int64, len(winOpDims))
	ws := make([]int64, len(winOpDims))
	wt := make([]int64, len(winOpDims))
	for j, d := range winOpDims {
		wd[j] = sizes[d]
		ws[j] = opStr[d]
		wt[j] = outStr[dn.OffsetDims[j]]
	}
	g.winDims, g.winDst, g.winSrc = shpCoalesce(wd, wt, ws)
	return g, nil
}

// run copies every window of the gather into out; it ends early with
// errStopped once stop is set.
func (g *shpGatherGeom) run(out, operand, indices *Tensor, stop *atomic.Bool) error {
	if out.Len() == 0 || g.emptyWindow {
		return nil
	}
	idx, err := shpInts(indices)
	if err != nil {
		return shpErrf("start_indices: %w", err)
	}
	dn := g.dn
	ivd := int(dn.IndexVectorDim)
	opStr := Strides(g.opDims)
	start := make([]int64, len(g.opDims))
	window := int64(1) // elements a window copies
	for _, d := range g.winDims {
		window *= d
	}
	poll := stopCounter{stop: stop}
	for b := shpNewOdo(g.batchDims, g.idxBatchStr, 0); !b.done; b.next() {
		if poll.add(max(window, 1)) {
			return errStopped
		}
		for d := range start {
			start[d] = 0
		}
		for ds, d := range dn.StartIndexMap {
			v := idx[b.off+int64(ds)*g.ivdStr]
			start[d] = shpClamp(0, v, g.opDims[d]-g.sizes[d])
		}
		for i, d := range dn.OperandBatchingDims {
			sd := int(dn.StartIndicesBatchingDims[i])
			if sd > ivd {
				sd--
			}
			start[d] += b.idx[sd]
		}
		src := shpOffset(start, opStr)
		dst := shpOffset(b.idx, g.outBatchStr)
		if err := shpCopyRaw(out, operand, g.winDims, dst, g.winDst, src, g.winSrc); err != nil {
			return err
		}
	}
	return nil
}

// --- scatter ----------------------------------------------------------------

func shpScatter(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) < 3 || len(args)%2 != 1 {
		return nil, shpErrf("scatter takes inputs, scatter_indices and as many updates as inputs, got %d operands", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	n := len(args) / 2
	ins, indices, upds := ts[:n], ts[n], ts[n+1:]
	dn, ok := op.Attr("scatter_dimension_numbers").(stablehlo.ScatterDimensionNumbers)
	if !ok {
		return nil, shpErrf("scatter_dimension_numbers must be #stablehlo.scatter<...>, got %T", op.Attr("scatter_dimension_numbers"))
	}
	for _, name := range []string{"indices_are_sorted", "unique_indices"} {
		if _, err := shpAttrBool(op, name); err != nil {
			return nil, err
		}
	}
	dts := make([]xla.DType, n)
	for k := 0; k < n; k++ {
		if !ins[k].Shape.Equal(xla.MakeShape(ins[k].Shape.DType, ins[0].Shape.Dims...)) {
			return nil, shpErrf("inputs have different shapes (%v and %v)", ins[0].Shape, ins[k].Shape)
		}
		if !upds[k].Shape.Equal(xla.MakeShape(upds[k].Shape.DType, upds[0].Shape.Dims...)) {
			return nil, shpErrf("updates have different shapes (%v and %v)", upds[0].Shape, upds[k].Shape)
		}
		if upds[k].Shape.DType != ins[k].Shape.DType {
			return nil, shpErrf("update %d has element type %v, input %v", k, upds[k].Shape.DType, ins[k].Shape.DType)
		}
		dts[k] = ins[k].Shape.DType
	}
	g, err := shpNewScatter(ins[0].Shape.Dims, indices.Shape.Dims, upds[0].Shape.Dims, dn)
	if err != nil {
		return nil, err
	}
	if len(op.Results) != n || len(op.Regions) != 1 {
		return nil, shpErrf("scatter has %d results and %d regions, want %d and 1", len(op.Results), len(op.Regions), n)
	}
	if ins, upds, dts, err = shpPromote(op, ins, upds, dts); err != nil {
		return nil, err
	}
	outs := make([]*Tensor, n)
	for k := range outs {
		if _, err := shpCheckShape(op, k, dts[k], ins[k].Shape.Dims); err != nil {
			return nil, err
		}
		outs[k] = ins[k].Clone()
	}
	idx, err := shpInts(indices)
	if err != nil {
		return nil, shpErrf("scatter_indices: %w", err)
	}
	bops := shpRegionBinops(op.Regions[0], dts)
	if bops != nil && !shpAllSupported(bops, dts) {
		bops = nil
	}
	var general *shpScatterGeneral
	if bops == nil {
		general = newShpScatterGeneral(x, op.Regions[0], outs, upds)
	}
	err = g.each(idx, x.stopFlag(), func(dims []int64, dst, dstStr []int64, src int64, srcStr []int64) error {
		if general != nil {
			return general.apply(dims, dst, dstStr, src, srcStr)
		}
		for k := range outs {
			if err := shpScatterFast(outs[k], upds[k], bops[k], dims, dst[0], dstStr, src, srcStr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, o := range outs {
		shpRewrap(o)
	}
	return shpValues(outs), nil
}

// shpScatterGeom is a checked scatter.
type shpScatterGeom struct {
	dn            stablehlo.ScatterDimensionNumbers
	inDims        []int64
	inStr         []int64
	scatDims      []int64 // update_scatter_dims sizes (index space)
	updScatStr    []int64 // their strides in updates
	idxScatStr    []int64 // strides in scatter_indices of the matching dims
	ivdStr        int64
	winInDims     []int64 // input dim of each update window dim
	winSizes      []int64
	winUpdStr     []int64
	pointInDims   []int64 // inserted and batching input dims (window size 1)
	numStarts     int
	batchScatters []int // for each input batching dim, its position in the scatter index space
}

func shpNewScatter(inDims, idxDims, updDims []int64, dn stablehlo.ScatterDimensionNumbers) (*shpScatterGeom, error) {
	r, ir, ur := len(inDims), len(idxDims), len(updDims)
	g := &shpScatterGeom{dn: dn, inDims: inDims, inStr: Strides(inDims)}
	ivd := dn.IndexVectorDim
	if ivd < 0 || ivd > int64(ir) {
		return nil, shpErrf("index_vector_dim %d is out of range for scatter_indices of rank %d", ivd, ir)
	}
	g.numStarts = 1
	if ivd < int64(ir) {
		g.numStarts = int(idxDims[ivd])
	}
	if len(dn.ScatterDimsToOperandDims) != g.numStarts {
		return nil, shpErrf("scatter_dims_to_operand_dims %v must have %d entries", dn.ScatterDimsToOperandDims, g.numStarts)
	}
	if err := shpDimsIn("scatter_dims_to_operand_dims", dn.ScatterDimsToOperandDims, r); err != nil {
		return nil, err
	}
	both := append(append([]int64(nil), dn.InsertedWindowDims...), dn.InputBatchingDims...)
	if err := shpDimsIn("inserted_window_dims and input_batching_dims", both, r); err != nil {
		return nil, err
	}
	for _, d := range dn.ScatterDimsToOperandDims {
		if shpContains(dn.InputBatchingDims, d) {
			return nil, shpErrf("scatter_dims_to_operand_dims and input_batching_dims share dimension %d", d)
		}
	}
	if err := shpDimsIn("update_window_dims", dn.UpdateWindowDims, ur); err != nil {
		return nil, err
	}
	for i := 1; i < len(dn.UpdateWindowDims); i++ {
		if dn.UpdateWindowDims[i] <= dn.UpdateWindowDims[i-1] {
			return nil, shpErrf("update_window_dims %v must be sorted", dn.UpdateWindowDims)
		}
	}
	if len(dn.UpdateWindowDims)+len(both) != r {
		return nil, shpErrf("update_window_dims %v, inserted_window_dims %v and input_batching_dims %v do not add up to the input rank %d",
			dn.UpdateWindowDims, dn.InsertedWindowDims, dn.InputBatchingDims, r)
	}
	if len(dn.ScatterIndicesBatchingDims) != len(dn.InputBatchingDims) {
		return nil, shpErrf("input_batching_dims %v and scatter_indices_batching_dims %v differ in length",
			dn.InputBatchingDims, dn.ScatterIndicesBatchingDims)
	}
	if err := shpDimsIn("scatter_indices_batching_dims", dn.ScatterIndicesBatchingDims, ir); err != nil {
		return nil, err
	}
	for i, sd := range dn.ScatterIndicesBatchingDims {
		if sd == ivd {
			return nil, shpErrf("scatter_indices_batching_dims contains index_vector_dim %d", ivd)
		}
		if d := dn.InputBatchingDims[i]; inDims[d] != idxDims[sd] {
			return nil, shpErrf("input batching dimension %d (size %d) and scatter indices batching dimension %d (size %d) differ",
				d, inDims[d], sd, idxDims[sd])
		}
		p := int(sd)
		if sd > ivd {
			p--
		}
		g.batchScatters = append(g.batchScatters, p)
	}
	// The scatter index space: scatter_indices dims without index_vector_dim,
	// which must match the update dims that are not window dims, in order.
	idxStr, updStr := Strides(idxDims), Strides(updDims)
	var idxBatch []int64
	for d := 0; d < ir; d++ {
		if int64(d) != ivd {
			idxBatch = append(idxBatch, int64(d))
		}
	}
	j := 0
	for d := 0; d < ur; d++ {
		if shpContains(dn.UpdateWindowDims, int64(d)) {
			continue
		}
		if j >= len(idxBatch) || updDims[d] != idxDims[idxBatch[j]] {
			return nil, shpErrf("updates %v do not match scatter_indices %v (index_vector_dim %d, update_window_dims %v)",
				updDims, idxDims, ivd, dn.UpdateWindowDims)
		}
		g.scatDims = append(g.scatDims, updDims[d])
		g.updScatStr = append(g.updScatStr, updStr[d])
		g.idxScatStr = append(g.idxScatStr, idxStr[idxBatch[j]])
		j++
	}
	if j != len(idxBatch) {
		return nil, shpErrf("updates %v do not match scatter_indices %v (index_vector_dim %d, update_window_dims %v)",
			updDims, idxDims, ivd, dn.UpdateWindowDims)
	}
	if ivd < int64(ir) {
		g.ivdStr = idxStr[ivd]
	}
	for d, k := 0, 0; d < r; d++ {
		if shpContains(both, int64(d)) {
			g.pointInDims = append(g.pointInDims, int64(d))
			continue
		}
		ud := dn.UpdateWindowDims[k]
		if updDims[ud] > inDims[d] {
			return nil, shpErrf("update window dimension %d (size %d) is larger than input dimension %d (size %d)",
				ud, updDims[ud], d, inDims[d])
		}
		g.winInDims = append(g.winInDims, int64(d))
		g.winSizes = append(g.winSizes, updDims[ud])
		g.winUpdStr = append(g.winUpdStr, updStr[ud])
		k++
	}
	return g, nil
}

// each calls f for the in-bounds part of every update window: dims is the
// sub-window, dst[0] its offset in the inputs and src its offset in the
// updates. It ends early with errStopped once stop is set.
func (g *shpScatterGeom) each(idx []int64, stop *atomic.Bool, f func(dims []int64, dst, dstStr []int64, src int64, srcStr []int64) error) error {
	dn := g.dn
	r := len(g.inDims)
	start := make([]int64, r)
	nw := len(g.winInDims)
	sub := make([]int64, nw)
	dstStr := make([]int64, nw)
	for j, d := range g.winInDims {
		dstStr[j] = g.inStr[d]
	}
	dst := make([]int64, 1)
	// Positions in the scatter index space walk both the updates (upd
	// offset) and scatter_indices (idx offset).
	si := shpNewOdo(g.scatDims, g.idxScatStr, 0)
	window := int64(1) // elements of a whole update window
	for _, w := range g.winSizes {
		window *= w
	}
	poll := stopCounter{stop: stop}
	for us := shpNewOdo(g.scatDims, g.updScatStr, 0); !us.done; us.next() {
		if poll.add(max(window, 1)) {
			return errStopped
		}
		for d := range start {
			start[d] = 0
		}
		for ds, d := range dn.ScatterDimsToOperandDims {
			start[d] = idx[si.off+int64(ds)*g.ivdStr]
		}
		for i, d := range dn.InputBatchingDims {
			start[d] += us.idx[g.batchScatters[i]]
		}
		si.next()
		skip := false
		for _, d := range g.pointInDims {
			if start[d] < 0 || start[d] >= g.inDims[d] {
				skip = true
				break
			}
		}
		if skip {
			continue
		}
		off := shpOffset(start, g.inStr)
		src := us.off
		for j, d := range g.winInDims {
			s, w := start[d], g.winSizes[j]
			if s >= g.inDims[d] || s <= -w {
				skip = true
				break
			}
			lo := max(0, -s)
			hi := min(w, g.inDims[d]-s)
			sub[j] = hi - lo
			off += lo * g.inStr[d]
			src += lo * g.winUpdStr[j]
		}
		if skip {
			continue
		}
		dst[0] = off
		if err := f(sub, dst, dstStr, src, g.winUpdStr); err != nil {
			return err
		}
	}
	return nil
}

func shpScatterFast(out, upd *Tensor, op shpBinop, dims []int64, dst int64, dstStr []int64, src int64, srcStr []int64) error {
	if op == shpBinReplace {
		return shpCopy(out, upd, dims, dst, dstStr, src, srcStr)
	}
	dt := out.Shape.DType
	switch d := out.Data.(type) {
	case []float32:
		f, _ := shpBinF32(op, dt)
		shpApplyT(d, upd.Data.([]float32), f, dims, dst, dstStr, src, srcStr)
	case []float64:
		f, _ := shpBinF64(op)
		shpApplyT(d, upd.Data.([]float64), f, dims, dst, dstStr, src, srcStr)
	case []bool:
		f, _ := shpBinBool(op)
		shpApplyT(d, upd.Data.([]bool), f, dims, dst, dstStr, src, srcStr)
	case []int8:
		f, _ := shpBinInt[int8](op)
		shpApplyT(d, upd.Data.([]int8), f, dims, dst, dstStr, src, srcStr)
	case []int16:
		f, _ := shpBinInt[int16](op)
		shpApplyT(d, upd.Data.([]int16), f, dims, dst, dstStr, src, srcStr)
	case []int32:
		f, _ := shpBinInt[int32](op)
		shpApplyT(d, upd.Data.([]int32), f, dims, dst, dstStr, src, srcStr)
	case []int64:
		f, _ := shpBinInt[int64](op)
		shpApplyT(d, upd.Data.([]int64), f, dims, dst, dstStr, src, srcStr)
	case []uint8:
		f, _ := shpBinInt[uint8](op)
		shpApplyT(d, upd.Data.([]uint8), f, dims, dst, dstStr, src, srcStr)
	case []uint16:
		f, _ := shpBinInt[uint16](op)
		shpApplyT(d, upd.Data.([]uint16), f, dims, dst, dstStr, src, srcStr)
	case []uint32:
		f, _ := shpBinInt[uint32](op)
		shpApplyT(d, upd.Data.([]uint32), f, dims, dst, dstStr, src, srcStr)
	case []uint64:
		f, _ := shpBinInt[uint64](op)
		shpApplyT(d, upd.Data.([]uint64), f, dims, dst, dstStr, src, srcStr)
	case []complex64:
		f, _ := shpBinArith[complex64](op)
		shpApplyT(d, upd.Data.([]complex64), f, dims, dst, dstStr, src, srcStr)
	case []complex128:
		f, _ := shpBinArith[complex128](op)
		shpApplyT(d, upd.Data.([]complex128), f, dims, dst, dstStr, src, srcStr)
	default:
		return shpErrf("scatter: unsupported element type %v", dt)
	}
	return nil
}

// shpApplyT sets d[i] = f(d[i], s[j]) over matching strided views.
func shpApplyT[T any](d, s []T, f func(a, b T) T, dims []int64, doff int64, dstr []int64, soff int64, sstr []int64) {
	dims, dstr, sstr = shpCoalesce(dims, dstr, sstr)
	r := len(dims)
	if r == 0 {
		d[doff] = f(d[doff], s[soff])
		return
	}
	n, ds, ss := dims[r-1], dstr[r-1], sstr[r-1]
	if r == 1 {
		di, si := doff, soff
		for i := int64(0); i < n; i++ {
			d[di] = f(d[di], s[si])
			di += ds
			si += ss
		}
		return
	}
	for o := shpNewOdo2(dims[:r-1], dstr[:r-1], sstr[:r-1], doff, soff); !o.done; o.next() {
		if ds == 1 && ss == 1 {
			dd, sd := d[o.a:o.a+n], s[o.b:o.b+n]
			for i := range dd {
				dd[i] = f(dd[i], sd[i])
			}
			continue
		}
		di, si := o.a, o.b
		for i := int64(0); i < n; i++ {
			d[di] = f(d[di], s[si])
			di += ds
			si += ss
		}
	}
}

// shpOdo2 walks two strided views at once.
type shpOdo2 struct {
	dims, sa, sb, idx []int64
	a, b              int64
	done              bool
}

func shpNewOdo2(dims, sa, sb []int64, a, b int64) *shpOdo2 {
	o := &shpOdo2{dims: dims, sa: sa, sb: sb, idx: make([]int64, len(dims)), a: a, b: b}
	for _, n := range dims {
		if n == 0 {
			o.done = true
		}
	}
	return o
}

func (o *shpOdo2) next() {
	for k := len(o.dims) - 1; k >= 0; k-- {
		o.idx[k]++
		o.a += o.sa[k]
		o.b += o.sb[k]
		if o.idx[k] < o.dims[k] {
			return
		}
		o.a -= o.sa[k] * o.dims[k]
		o.b -= o.sb[k] * o.dims[k]
		o.idx[k] = 0
	}
	o.done = true
}

// shpScatterGeneral runs update_computation per updated element.
type shpScatterGeneral struct {
	x          *Exec
	r          *stablehlo.Region
	outs, upds []*Tensor
	acc, xs    []*Tensor
	args       []Value
}

func newShpScatterGeneral(x *Exec, r *stablehlo.Region, outs, upds []*Tensor) *shpScatterGeneral {
	n := len(outs)
	dts := make([]xla.DType, n)
	for k := range outs {
		dts[k] = outs[k].Shape.DType
	}
	s := &shpScatterGeneral{x: x, r: r, outs: outs, upds: upds, acc: shpScalars(dts), xs: shpScalars(dts), args: make([]Value, 2*n)}
	for k := 0; k < n; k++ {
		s.args[k], s.args[n+k] = s.acc[k], s.xs[k]
	}
	return s
}

func (s *shpScatterGeneral) apply(dims []int64, dst, dstStr []int64, src int64, srcStr []int64) error {
	for o := shpNewOdo2(dims, dstStr, srcStr, dst[0], src); !o.done; o.next() {
		for k := range s.outs {
			if err := shpSetElem(s.acc[k], 0, s.outs[k], int(o.a)); err != nil {
				return err
			}
			if err := shpSetElem(s.xs[k], 0, s.upds[k], int(o.b)); err != nil {
				return err
			}
		}
		if err := shpRunScalarRegion(s.x, s.r, s.args, s.acc); err != nil {
			return err
		}
		for k := range s.outs {
			if err := shpSetElem(s.outs[k], int(o.a), s.acc[k], 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// --- torch_index_select -------------------------------------------------------

// shpTorchIndexSelect (deprecated op): result = operand.shape[:dim] +
// index.shape[batch_dims:] + operand.shape[dim+1:], with
// result[p, q, s] = operand[p, index[p[:batch_dims], q], s]. Indices are
// clamped into range like gather's.
func shpTorchIndexSelect(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) != 2 {
		return nil, shpErrf("torch_index_select takes 2 operands, got %d", len(args))
	}
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	operand, index := ts[0], ts[1]
	dim, ok1, err := shpAttrInt(op, "dim")
	if err != nil {
		return nil, err
	}
	bd, ok2, err := shpAttrInt(op, "batch_dims")
	if err != nil {
		return nil, err
	}
	r, ir := int64(operand.Shape.Rank()), int64(index.Shape.Rank())
	if dim < 0 { // negative: counted from the end, as in PyTorch
		dim += r
	}
	if bd < 0 {
		bd += ir
	}
	if !ok1 || !ok2 || dim < 0 || dim >= r || bd < 0 || bd > dim || bd > ir {
		return nil, shpErrf("dim %d and batch_dims %d are out of range for operand %v and index %v", dim, bd, operand.Shape, index.Shape)
	}
	for d := int64(0); d < bd; d++ {
		if operand.Shape.Dims[d] != index.Shape.Dims[d] {
			return nil, shpErrf("batch dimension %d differs: operand %v, index %v", d, operand.Shape, index.Shape)
		}
	}
	var outDims []int64
	outDims = append(outDims, operand.Shape.Dims[:dim]...)
	outDims = append(outDims, index.Shape.Dims[bd:]...)
	outDims = append(outDims, operand.Shape.Dims[dim+1:]...)
	sh, err := shpCheckShape(op, 0, operand.Shape.DType, outDims)
	if err != nil {
		return nil, err
	}
	out := NewTensor(sh)
	if out.Len() == 0 {
		return []Value{out}, nil
	}
	if operand.Shape.Dims[dim] == 0 {
		return nil, shpErrf("cannot select from the empty dimension %d of %v", dim, operand.Shape)
	}
	idx, err := shpInts(index)
	if err != nil {
		return nil, shpErrf("index: %w", err)
	}
	opStr, idxStr := Strides(operand.Shape.Dims), Strides(index.Shape.Dims)
	nq := ir - bd
	src := makeChecked[int](int64(out.Len()), out.Shape)
	i := 0
	poll := stopCounter{stop: x.stopFlag()}
	for o := shpNewOdo(outDims, make([]int64, len(outDims)), 0); !o.done; o.next() {
		if poll.add(1) {
			return nil, errStopped
		}
		// o.idx = p (dim entries), q (nq entries), s (rest).
		var ioff int64
		for d := int64(0); d < bd; d++ {
			ioff += o.idx[d] * idxStr[d]
		}
		for d := int64(0); d < nq; d++ {
			ioff += o.idx[dim+d] * idxStr[bd+d]
		}
		v := shpClamp(0, idx[ioff], operand.Shape.Dims[dim]-1)
		var off int64
		for d := int64(0); d < dim; d++ {
			off += o.idx[d] * opStr[d]
		}
		off += v * opStr[dim]
		for d := dim + 1; d < r; d++ {
			off += o.idx[d-1+nq] * opStr[d]
		}
		src[i] = int(off)
		i++
	}
	if err := shpTake(out, operand, src); err != nil {
		return nil, err
	}
	return []Value{out}, nil
}
