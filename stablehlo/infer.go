package stablehlo

import (
	"fmt"
	"math"
	"slices"

	"github.com/halo-ml/halo/xla"
)

// Shape inference, as the StableHLO spec defines it for each op. The
// functions take operand types and attributes and return the result type
// or an error that says which constraint failed (without the op name: the
// builder adds it). A dimension of DynamicDim is accepted where the spec
// allows it and propagated.

// checkAxes checks that every entry of dims is an axis of a rank-rank
// tensor and, if unique, that no axis repeats.
func checkAxes(what string, dims []int64, rank int, unique bool) error {
	var seen uint64
	var seenMap map[int64]bool
	for _, d := range dims {
		if d < 0 || d >= int64(rank) {
			return fmt.Errorf("%s: dimension %d out of range [0, %d)", what, d, rank)
		}
		if !unique {
			continue
		}
		if d < 64 {
			if seen&(1<<d) != 0 {
				return fmt.Errorf("%s: dimension %d repeated", what, d)
			}
			seen |= 1 << d
		} else {
			if seenMap == nil {
				seenMap = map[int64]bool{}
			}
			if seenMap[d] {
				return fmt.Errorf("%s: dimension %d repeated", what, d)
			}
			seenMap[d] = true
		}
	}
	return nil
}

func checkSorted(what string, dims []int64) error {
	for i := 1; i < len(dims); i++ {
		if dims[i] <= dims[i-1] {
			return fmt.Errorf("%s must be sorted and unique, got %v", what, dims)
		}
	}
	return nil
}

func dimEq(a, b int64) bool { return a == b || a == DynamicDim || b == DynamicDim }

func inferBitcastConvert(t TensorType, dt xla.DType) (TensorType, error) {
	if !dt.Valid() {
		return TensorType{}, fmt.Errorf("invalid element type %v", dt)
	}
	if !t.DType.Valid() {
		return TensorType{}, fmt.Errorf("operand of invalid element type %v", t.DType)
	}
	if t.DType.IsComplex() != dt.IsComplex() {
		return TensorType{}, fmt.Errorf("cannot bitcast %s to %s: complex only to complex", t.DType, dt)
	}
	ib, ob := t.DType.Bits(), dt.Bits()
	switch {
	case ib == ob:
		return TensorType{DType: dt, Dims: t.Dims}, nil
	case ib > ob:
		if ib%ob != 0 {
			return TensorType{}, fmt.Errorf("cannot bitcast %d-bit %s to %d-bit %s", ib, t.DType, ob, dt)
		}
		return Tensor(dt, append(slices.Clone(t.Dims), int64(ib/ob))...), nil
	default:
		if ob%ib != 0 || t.Rank() == 0 || !dimEq(t.Dims[t.Rank()-1], int64(ob/ib)) {
			return TensorType{}, fmt.Errorf("bitcast from %s to wider %s needs a last dimension of %d", t.DType, dt, ob/max(ib, 1))
		}
		return Tensor(dt, t.Dims[:t.Rank()-1]...), nil
	}
}

// inferBroadcast is the result type of the deprecated stablehlo.broadcast
// of an operand of type t: sizes (each >= 0: broadcast_sizes are sizes,
// never dynamic) prepended to t's dimensions.
func inferBroadcast(t TensorType, sizes []int64) (TensorType, error) {
	rt := Tensor(t.DType, append(slices.Clone(sizes), t.Dims...)...)
	if err := checkSizedType("broadcast size", sizes, rt); err != nil {
		return TensorType{}, err
	}
	return rt, nil
}

func inferBroadcastInDim(operand TensorType, shape, bdims []int64) error {
	if len(bdims) != operand.Rank() {
		return fmt.Errorf("broadcast_dimensions has %d entries, operand rank is %d", len(bdims), operand.Rank())
	}
	if err := checkAxes("broadcast_dimensions", bdims, len(shape), true); err != nil {
		return err
	}
	if err := checkDims(TensorType{DType: operand.DType, Dims: shape}); err != nil {
		return err
	}
	for i, d := range bdims {
		if od := operand.Dims[i]; od != 1 && !dimEq(od, shape[d]) {
			return fmt.Errorf("operand dimension %d (%d) cannot broadcast to result dimension %d (%d)", i, od, d, shape[d])
		}
	}
	return nil
}

// inferIota checks an iota of type t counting along dim.
func inferIota(t TensorType, dim int64) error {
	if dtypeClasses[t.DType]&clsNumeric == 0 {
		return fmt.Errorf("element type %s is not numeric", t.DType)
	}
	if dim < 0 || dim >= int64(t.Rank()) {
		return fmt.Errorf("iota_dimension %d out of range for %s", dim, t)
	}
	return nil
}

func inferReshape(operand TensorType, dims []int64) error {
	for i, d := range dims {
		if d == DynamicDim {
			return fmt.Errorf("result dimension %d is dynamic (?): reshape's result dimensions are static (dynamic_reshape takes dynamic ones)", i)
		}
	}
	rt := TensorType{DType: operand.DType, Dims: dims}
	if err := checkDims(rt); err != nil {
		return err
	}
	if s, n := operand.Size(), rt.Size(); s >= 0 && s != n {
		return fmt.Errorf("cannot reshape %d elements into %v", s, dims)
	}
	return nil
}

func inferTranspose(t TensorType, perm []int64) (TensorType, error) {
	if len(perm) != t.Rank() {
		return TensorType{}, fmt.Errorf("permutation %v does not match rank %d", perm, t.Rank())
	}
	if err := checkAxes("permutation", perm, t.Rank(), true); err != nil {
		return TensorType{}, err
	}
	dims := make([]int64, len(perm))
	for i, p := range perm {
		dims[i] = t.Dims[p]
	}
	return TensorType{DType: t.DType, Dims: dims}, nil
}

func inferSlice(t TensorType, start, limit, strides []int64) (TensorType, error) {
	r := t.Rank()
	if len(start) != r || len(limit) != r || len(strides) != r {
		return TensorType{}, fmt.Errorf("start_indices, limit_indices and strides need %d entries, got %d, %d, %d", r, len(start), len(limit), len(strides))
	}
	dims := make([]int64, r)
	for i := range r {
		if start[i] < 0 || limit[i] < start[i] || (t.Dims[i] != DynamicDim && limit[i] > t.Dims[i]) {
			return TensorType{}, fmt.Errorf("dimension %d: need 0 <= start (%d) <= limit (%d) <= size (%d)", i, start[i], limit[i], t.Dims[i])
		}
		if strides[i] <= 0 {
			return TensorType{}, fmt.Errorf("dimension %d: stride %d must be > 0", i, strides[i])
		}
		if limit[i] > start[i] { // ceil((limit-start)/stride), without overflow
			dims[i] = (limit[i]-start[i]-1)/strides[i] + 1
		}
	}
	return TensorType{DType: t.DType, Dims: dims}, nil
}

func checkScalarIndices(idx []*Value, n int) error {
	if len(idx) != n {
		return fmt.Errorf("need %d start indices, got %d", n, len(idx))
	}
	var dt xla.DType
	for i, v := range idx {
		it, ok := v.TensorType()
		if !ok || it.Rank() != 0 || !it.DType.IsInt() {
			return fmt.Errorf("start index %d must be an integer scalar, got %s", i, v.Type)
		}
		if i == 0 {
			dt = it.DType
		} else if it.DType != dt {
			return fmt.Errorf("start indices must share one element type")
		}
	}
	return nil
}

func inferDynamicSlice(t TensorType, idx []*Value, sizes []int64) (TensorType, error) {
	if err := checkScalarIndices(idx, t.Rank()); err != nil {
		return TensorType{}, err
	}
	if len(sizes) != t.Rank() {
		return TensorType{}, fmt.Errorf("slice_sizes has %d entries, operand rank is %d", len(sizes), t.Rank())
	}
	for i, s := range sizes {
		if s < 0 || (t.Dims[i] != DynamicDim && s > t.Dims[i]) {
			return TensorType{}, fmt.Errorf("slice size %d out of range [0, %d] in dimension %d", s, t.Dims[i], i)
		}
	}
	return Tensor(t.DType, sizes...), nil
}

func inferDynamicUpdateSlice(t, u TensorType, idx []*Value) error {
	if u.DType != t.DType || u.Rank() != t.Rank() {
		return fmt.Errorf("update must have the operand's element type and rank")
	}
	for i := range t.Dims {
		if t.Dims[i] != DynamicDim && u.Dims[i] > t.Dims[i] {
			return fmt.Errorf("update dimension %d (%d) exceeds operand (%d)", i, u.Dims[i], t.Dims[i])
		}
	}
	return checkScalarIndices(idx, t.Rank())
}

// dimOverflow marks an inferred dimension whose size overflows int64;
// checkInferredDims turns it into an error.
const dimOverflow = math.MinInt64

// dimCalc does dimension arithmetic, remembering an overflow of int64.
type dimCalc struct{ overflow bool }

func (c *dimCalc) add(a, b int64) int64 {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		c.overflow = true
		return 0
	}
	return a + b
}

func (c *dimCalc) mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		c.overflow = true
		return 0
	}
	return p
}

// checkInferredDims reports inferred dimensions of which one overflowed,
// or whose element count is beyond int64.
func checkInferredDims(dims []int64) error {
	if slices.Contains(dims, dimOverflow) {
		return fmt.Errorf("a dimension of the result overflows int64")
	}
	if (TensorType{Dims: dims}).Size() == -1 && !slices.Contains(dims, DynamicDim) {
		return fmt.Errorf("the result's dimensions %v hold more than 2^63 elements", dims)
	}
	return nil
}

func inferConcatenate(ts []TensorType, dim int64) (TensorType, error) {
	if len(ts) == 0 {
		return TensorType{}, fmt.Errorf("needs at least one input")
	}
	r := ts[0].Rank()
	if dim < 0 || dim >= int64(r) {
		return TensorType{}, fmt.Errorf("dimension %d out of range [0, %d)", dim, r)
	}
	dims := slices.Clone(ts[0].Dims)
	for i, t := range ts[1:] {
		if t.DType != ts[0].DType || t.Rank() != r {
			return TensorType{}, fmt.Errorf("input %d must have the element type and rank of input 0", i+1)
		}
		for d := range r {
			if int64(d) == dim {
				if dims[d] == DynamicDim || t.Dims[d] == DynamicDim {
					dims[d] = DynamicDim
				} else {
					var c dimCalc
					if dims[d] = c.add(dims[d], t.Dims[d]); c.overflow {
						return TensorType{}, fmt.Errorf("dimension %d of the result overflows int64", d)
					}
				}
			} else if !dimEq(dims[d], t.Dims[d]) {
				return TensorType{}, fmt.Errorf("input %d differs from input 0 in dimension %d", i+1, d)
			}
		}
	}
	return TensorType{DType: ts[0].DType, Dims: dims}, nil
}

// inferPad is the result of padding t with the scalar value v.
func inferPad(t, v TensorType, lo, hi, interior []int64) (TensorType, error) {
	if v.Rank() != 0 || v.DType != t.DType {
		return TensorType{}, fmt.Errorf("padding_value must be a scalar of the operand's element type")
	}
	r := t.Rank()
	if len(lo) != r || len(hi) != r || len(interior) != r {
		return TensorType{}, fmt.Errorf("edge_padding_low, edge_padding_high and interior_padding need %d entries", r)
	}
	dims := make([]int64, r)
	for i, d := range t.Dims {
		if interior[i] < 0 {
			return TensorType{}, fmt.Errorf("interior padding %d must be >= 0", interior[i])
		}
		if d == DynamicDim {
			dims[i] = DynamicDim
			continue
		}
		var c dimCalc
		n := c.add(c.add(lo[i], hi[i]), c.add(d, c.mul(max(d-1, 0), interior[i])))
		if c.overflow {
			return TensorType{}, fmt.Errorf("dimension %d of the result overflows int64", i)
		}
		if n < 0 {
			return TensorType{}, fmt.Errorf("dimension %d would have negative size %d", i, n)
		}
		dims[i] = n
	}
	return TensorType{DType: t.DType, Dims: dims}, nil
}

// inferGather checks a gather of operand at indices by the dimension
// numbers dn and slice sizes (gather's slice_sizes, or the value of
// dynamic_gather's constant slice_sizes operand) and gives its result
// type. With sizesKnown false (dynamic_gather's slice_sizes operand is not
// a constant) sliceSizes is ignored: the rules of dn that do not depend on
// the sizes are checked, and the result's offset dimensions are dynamic.
func inferGather(operand, indices TensorType, dn GatherDimensionNumbers, sliceSizes []int64, sizesKnown bool) (TensorType, error) {
	var zero TensorType
	if !indices.DType.IsInt() {
		return zero, fmt.Errorf("start_indices must be integers")
	}
	ivd := dn.IndexVectorDim
	if ivd < 0 || ivd > int64(indices.Rank()) {
		return zero, fmt.Errorf("index_vector_dim %d out of range [0, %d]", ivd, indices.Rank())
	}
	if sizesKnown {
		if len(sliceSizes) != operand.Rank() {
			return zero, fmt.Errorf("slice_sizes has %d entries, operand rank is %d", len(sliceSizes), operand.Rank())
		}
		for i, s := range sliceSizes {
			if s < 0 || (operand.Dims[i] != DynamicDim && s > operand.Dims[i]) {
				return zero, fmt.Errorf("slice size %d out of range [0, %d] in dimension %d", s, operand.Dims[i], i)
			}
		}
	} else {
		// Unknown sizes are DynamicDim: the checks below that compare a
		// size pass (DynamicDim is not above 1), and the result's offset
		// dimensions are dynamic.
		sliceSizes = slices.Repeat([]int64{DynamicDim}, operand.Rank())
	}
	if err := checkSorted("offset_dims", dn.OffsetDims); err != nil {
		return zero, err
	}
	if err := checkSorted("collapsed_slice_dims", dn.CollapsedSliceDims); err != nil {
		return zero, err
	}
	if err := checkSorted("operand_batching_dims", dn.OperandBatchingDims); err != nil {
		return zero, err
	}
	if err := checkAxes("collapsed_slice_dims", dn.CollapsedSliceDims, operand.Rank(), true); err != nil {
		return zero, err
	}
	if err := checkAxes("operand_batching_dims", dn.OperandBatchingDims, operand.Rank(), true); err != nil {
		return zero, err
	}
	for _, d := range dn.CollapsedSliceDims {
		if slices.Contains(dn.OperandBatchingDims, d) {
			return zero, fmt.Errorf("dimension %d is both collapsed and batching", d)
		}
		if sliceSizes[d] > 1 {
			return zero, fmt.Errorf("collapsed dimension %d has slice size %d > 1", d, sliceSizes[d])
		}
	}
	for _, d := range dn.OperandBatchingDims {
		if sliceSizes[d] > 1 {
			return zero, fmt.Errorf("batching dimension %d has slice size %d > 1", d, sliceSizes[d])
		}
	}
	if err := checkAxes("start_indices_batching_dims", dn.StartIndicesBatchingDims, indices.Rank(), true); err != nil {
		return zero, err
	}
	if slices.Contains(dn.StartIndicesBatchingDims, ivd) {
		return zero, fmt.Errorf("start_indices_batching_dims contains index_vector_dim %d", ivd)
	}
	if len(dn.OperandBatchingDims) != len(dn.StartIndicesBatchingDims) {
		return zero, fmt.Errorf("operand_batching_dims and start_indices_batching_dims differ in length")
	}
	for i, d := range dn.OperandBatchingDims {
		if !dimEq(operand.Dims[d], indices.Dims[dn.StartIndicesBatchingDims[i]]) {
			return zero, fmt.Errorf("batching dimension sizes differ: operand %d, start_indices %d", operand.Dims[d], indices.Dims[dn.StartIndicesBatchingDims[i]])
		}
	}
	indexSize := int64(1)
	if ivd < int64(indices.Rank()) {
		indexSize = indices.Dims[ivd]
	}
	if indexSize != DynamicDim && int64(len(dn.StartIndexMap)) != indexSize {
		return zero, fmt.Errorf("start_index_map has %d entries, index vectors have %d", len(dn.StartIndexMap), indexSize)
	}
	if err := checkAxes("start_index_map", dn.StartIndexMap, operand.Rank(), true); err != nil {
		return zero, err
	}
	for _, d := range dn.StartIndexMap {
		if slices.Contains(dn.OperandBatchingDims, d) {
			return zero, fmt.Errorf("start_index_map contains batching dimension %d", d)
		}
	}
	// Offset dims: slice sizes without collapsed and batching dims.
	var offsetSizes []int64
	for i, s := range sliceSizes {
		if !slices.Contains(dn.CollapsedSliceDims, int64(i)) && !slices.Contains(dn.OperandBatchingDims, int64(i)) {
			offsetSizes = append(offsetSizes, s)
		}
	}
	if len(offsetSizes) != len(dn.OffsetDims) {
		return zero, fmt.Errorf("offset_dims has %d entries, want %d (operand rank - collapsed - batching)", len(dn.OffsetDims), len(offsetSizes))
	}
	var batchSizes []int64
	for i, d := range indices.Dims {
		if int64(i) != ivd {
			batchSizes = append(batchSizes, d)
		}
	}
	rank := len(offsetSizes) + len(batchSizes)
	if err := checkAxes("offset_dims", dn.OffsetDims, rank, true); err != nil {
		return zero, err
	}
	dims := make([]int64, rank)
	oi, bi := 0, 0
	for d := range rank {
		if oi < len(dn.OffsetDims) && dn.OffsetDims[oi] == int64(d) {
			dims[d] = offsetSizes[oi]
			oi++
		} else {
			dims[d] = batchSizes[bi]
			bi++
		}
	}
	return TensorType{DType: operand.DType, Dims: dims}, nil
}

// inferDynamicGather checks dynamic_gather, a gather whose slice sizes
// are its operand of type sizesType: a 1-D integer tensor of one entry
// per operand dimension. sizes is that operand's value where a constant
// defines it (known); otherwise only the rules that do not depend on the
// sizes are checked (see inferGather).
func inferDynamicGather(operand, indices, sizesType TensorType, dn GatherDimensionNumbers, sizes []int64, known bool) (TensorType, error) {
	if sizesType.Rank() != 1 || !sizesType.DType.IsInt() || !dimEq(sizesType.Dims[0], int64(operand.Rank())) {
		return TensorType{}, fmt.Errorf("slice_sizes must be a 1-D integer tensor of %d elements, got %s", operand.Rank(), sizesType)
	}
	return inferGather(operand, indices, dn, sizes, known)
}

// inferTorchIndexSelect gives the result type of torch_index_select:
// operand.shape[:dim] + index.shape[batch_dims:] + operand.shape[dim+1:],
// with result[p, q, s] = operand[p, index[p[:batch_dims], q], s]. A
// negative dim or batch_dims counts from the end of the operand's or the
// index's dimensions (as in PyTorch). The first batch_dims dimensions of
// operand and index must agree, and a non-empty result cannot select from
// an empty dimension dim.
func inferTorchIndexSelect(operand, index TensorType, dim, batchDims int64) (TensorType, error) {
	var zero TensorType
	if !index.DType.IsInt() {
		return zero, fmt.Errorf("index must be an integer tensor, got %s", index)
	}
	r, ir := int64(operand.Rank()), int64(index.Rank())
	d, bd := dim, batchDims
	if d < 0 {
		d += r
	}
	if bd < 0 {
		bd += ir
	}
	if bd < 0 || bd > ir || d < bd || d >= r {
		return zero, fmt.Errorf("dim %d and batch_dims %d out of range: want 0 <= batch_dims <= dim < %d (the operand's rank) and batch_dims <= %d (the index's rank)", dim, batchDims, r, ir)
	}
	for i := range bd {
		if !dimEq(operand.Dims[i], index.Dims[i]) {
			return zero, fmt.Errorf("batch dimension %d differs: operand %s, index %s", i, operand, index)
		}
	}
	dims := append(slices.Clone(operand.Dims[:d]), index.Dims[bd:]...)
	dims = append(dims, operand.Dims[d+1:]...)
	rt := TensorType{DType: operand.DType, Dims: dims}
	if operand.Dims[d] == 0 && rt.Size() != 0 && !slices.Contains(dims, DynamicDim) {
		return zero, fmt.Errorf("cannot select from dimension %d of %s: it is empty, and the result %s is not", d, operand, rt)
	}
	return rt, nil
}

// checkRng checks rng's a and b: scalars of one integer, boolean or float
// type, floats for a NORMAL distribution.
func checkRng(a, b TensorType, distribution string) error {
	if a.Rank() != 0 || !TypesEqual(a, b) {
		return fmt.Errorf("a and b must be scalars of one type, got %s and %s", a, b)
	}
	if dtypeClasses[a.DType]&(clsIntOrBool|clsFloat) == 0 {
		return fmt.Errorf("a and b must be integer, boolean or float, got %s", a.DType)
	}
	if distribution == string(RngNormal) && !a.DType.IsFloat() {
		return fmt.Errorf("NORMAL needs float operands, got %s", a.DType)
	}
	return nil
}

// inferRng checks rng's operands and gives its result type: a's element
// type, of the shape the shape operand (of type shapeType) holds. dims is
// that operand's value where a constant defines it (known); otherwise the
// result has as many dynamic dimensions as shapeType has elements (false
// when that number is not known either, or is past maxExpandedSplat).
func inferRng(a, b, shapeType TensorType, distribution string, dims []int64, known bool) (TensorType, bool, error) {
	if err := checkRng(a, b, distribution); err != nil {
		return TensorType{}, true, err
	}
	if shapeType.Rank() != 1 || !shapeType.DType.IsInt() {
		return TensorType{}, true, fmt.Errorf("shape must be a 1-D integer tensor, got %s", shapeType)
	}
	if known {
		rt := TensorType{DType: a.DType, Dims: dims}
		if err := checkSizedType("dimension", dims, rt); err != nil {
			return TensorType{}, true, err
		}
		return rt, true, nil
	}
	n := shapeType.Dims[0]
	if n == DynamicDim || n > maxExpandedSplat {
		return TensorType{}, false, nil
	}
	return TensorType{DType: a.DType, Dims: slices.Repeat([]int64{DynamicDim}, int(n))}, true, nil
}

func inferScatter(inputs []TensorType, indices TensorType, updates []TensorType, dn ScatterDimensionNumbers) error {
	if len(inputs) == 0 || len(inputs) != len(updates) {
		return fmt.Errorf("needs as many updates as inputs (at least one), got %d and %d", len(inputs), len(updates))
	}
	in, up := inputs[0], updates[0]
	for i := range inputs {
		if !sameDims(inputs[i].Dims, in.Dims) || !sameDims(updates[i].Dims, up.Dims) {
			return fmt.Errorf("inputs must share one shape, and updates another")
		}
		if inputs[i].DType != updates[i].DType {
			return fmt.Errorf("input %d and update %d differ in element type", i, i)
		}
	}
	if !indices.DType.IsInt() {
		return fmt.Errorf("scatter_indices must be integers")
	}
	ivd := dn.IndexVectorDim
	if ivd < 0 || ivd > int64(indices.Rank()) {
		return fmt.Errorf("index_vector_dim %d out of range [0, %d]", ivd, indices.Rank())
	}
	if err := checkSorted("update_window_dims", dn.UpdateWindowDims); err != nil {
		return err
	}
	if err := checkAxes("update_window_dims", dn.UpdateWindowDims, up.Rank(), true); err != nil {
		return err
	}
	if err := checkSorted("inserted_window_dims", dn.InsertedWindowDims); err != nil {
		return err
	}
	if err := checkAxes("inserted_window_dims", dn.InsertedWindowDims, in.Rank(), true); err != nil {
		return err
	}
	if err := checkSorted("input_batching_dims", dn.InputBatchingDims); err != nil {
		return err
	}
	if err := checkAxes("input_batching_dims", dn.InputBatchingDims, in.Rank(), true); err != nil {
		return err
	}
	if err := checkAxes("scatter_indices_batching_dims", dn.ScatterIndicesBatchingDims, indices.Rank(), true); err != nil {
		return err
	}
	for _, d := range dn.InsertedWindowDims {
		if slices.Contains(dn.InputBatchingDims, d) {
			return fmt.Errorf("dimension %d is both an inserted window and a batching dimension", d)
		}
	}
	if slices.Contains(dn.ScatterIndicesBatchingDims, ivd) {
		return fmt.Errorf("scatter_indices_batching_dims contains index_vector_dim %d", ivd)
	}
	if len(dn.InputBatchingDims) != len(dn.ScatterIndicesBatchingDims) {
		return fmt.Errorf("input_batching_dims and scatter_indices_batching_dims differ in length")
	}
	for i, d := range dn.InputBatchingDims {
		if !dimEq(in.Dims[d], indices.Dims[dn.ScatterIndicesBatchingDims[i]]) {
			return fmt.Errorf("batching dimension sizes differ: input %d, scatter_indices %d", in.Dims[d], indices.Dims[dn.ScatterIndicesBatchingDims[i]])
		}
	}
	if in.Rank() != len(dn.UpdateWindowDims)+len(dn.InsertedWindowDims)+len(dn.InputBatchingDims) {
		return fmt.Errorf("input rank %d != update_window_dims + inserted_window_dims + input_batching_dims (%d)", in.Rank(), len(dn.UpdateWindowDims)+len(dn.InsertedWindowDims)+len(dn.InputBatchingDims))
	}
	indexSize := int64(1)
	if ivd < int64(indices.Rank()) {
		indexSize = indices.Dims[ivd]
	}
	if indexSize != DynamicDim && int64(len(dn.ScatterDimsToOperandDims)) != indexSize {
		return fmt.Errorf("scatter_dims_to_operand_dims has %d entries, index vectors have %d", len(dn.ScatterDimsToOperandDims), indexSize)
	}
	if err := checkAxes("scatter_dims_to_operand_dims", dn.ScatterDimsToOperandDims, in.Rank(), true); err != nil {
		return err
	}
	for _, d := range dn.ScatterDimsToOperandDims {
		if slices.Contains(dn.InputBatchingDims, d) {
			return fmt.Errorf("scatter_dims_to_operand_dims names batching dimension %d", d)
		}
	}
	// Update scatter dims must match the indices' batch dims.
	var scatterSizes []int64
	for i, d := range indices.Dims {
		if int64(i) != ivd {
			scatterSizes = append(scatterSizes, d)
		}
	}
	var updScatter []int64
	for i, d := range up.Dims {
		if !slices.Contains(dn.UpdateWindowDims, int64(i)) {
			updScatter = append(updScatter, d)
		}
	}
	if len(updScatter) != len(scatterSizes) {
		return fmt.Errorf("updates have %d scatter dimensions, scatter_indices %d", len(updScatter), len(scatterSizes))
	}
	for i := range updScatter {
		if !dimEq(updScatter[i], scatterSizes[i]) {
			return fmt.Errorf("update scatter dimension %d is %d, scatter_indices have %d", i, updScatter[i], scatterSizes[i])
		}
	}
	// Window sizes fit in the input.
	wi := 0
	for d := range in.Rank() {
		if slices.Contains(dn.InsertedWindowDims, int64(d)) || slices.Contains(dn.InputBatchingDims, int64(d)) {
			continue
		}
		ws := up.Dims[dn.UpdateWindowDims[wi]]
		if ws != DynamicDim && in.Dims[d] != DynamicDim && ws > in.Dims[d] {
			return fmt.Errorf("update window dimension %d (%d) exceeds input dimension %d (%d)", dn.UpdateWindowDims[wi], ws, d, in.Dims[d])
		}
		wi++
	}
	return nil
}

// productDType is the result element type of a product of lhs and rhs
// elements (dot_general, convolution) asked to give result (Invalid: the
// operands' common type): floats or complex numbers cannot give integers
// or booleans, nor complex numbers reals.
func productDType(lhs, rhs, result xla.DType) (xla.DType, error) {
	if result == xla.Invalid {
		if lhs != rhs {
			return xla.Invalid, fmt.Errorf("lhs and rhs element types differ: give a result element type")
		}
		return lhs, nil
	}
	for _, in := range []xla.DType{lhs, rhs} {
		switch {
		case (result.IsInt() || result.IsBool()) && (in.IsFloat() || in.IsComplex()):
			return xla.Invalid, fmt.Errorf("%v operands cannot give %v results", in, result)
		case result.IsFloat() && in.IsComplex():
			return xla.Invalid, fmt.Errorf("%v operands cannot give real %v results", in, result)
		}
	}
	return result, nil
}

func inferDotGeneral(lhs, rhs TensorType, dn DotDimensionNumbers, resultDType xla.DType) (TensorType, error) {
	var zero TensorType
	if len(dn.LhsBatchingDims) != len(dn.RhsBatchingDims) {
		return zero, fmt.Errorf("lhs and rhs batching dims differ in length")
	}
	if len(dn.LhsContractingDims) != len(dn.RhsContractingDims) {
		return zero, fmt.Errorf("lhs and rhs contracting dims differ in length")
	}
	if err := checkAxes2("lhs batching and contracting dims", dn.LhsBatchingDims, dn.LhsContractingDims, lhs.Rank()); err != nil {
		return zero, err
	}
	if err := checkAxes2("rhs batching and contracting dims", dn.RhsBatchingDims, dn.RhsContractingDims, rhs.Rank()); err != nil {
		return zero, err
	}
	for i := range dn.LhsBatchingDims {
		if l, r := lhs.Dims[dn.LhsBatchingDims[i]], rhs.Dims[dn.RhsBatchingDims[i]]; !dimEq(l, r) {
			return zero, fmt.Errorf("batching dimension sizes differ: %d vs %d", l, r)
		}
	}
	for i := range dn.LhsContractingDims {
		if l, r := lhs.Dims[dn.LhsContractingDims[i]], rhs.Dims[dn.RhsContractingDims[i]]; !dimEq(l, r) {
			return zero, fmt.Errorf("contracting dimension sizes differ: %d vs %d", l, r)
		}
	}
	nb, nc := len(dn.LhsBatchingDims), len(dn.LhsContractingDims)
	dims := make([]int64, 0, lhs.Rank()+rhs.Rank()-nb-2*nc)
	for _, d := range dn.LhsBatchingDims {
		dims = append(dims, lhs.Dims[d])
	}
	for i, d := range lhs.Dims {
		if !slices.Contains(dn.LhsBatchingDims, int64(i)) && !slices.Contains(dn.LhsContractingDims, int64(i)) {
			dims = append(dims, d)
		}
	}
	for i, d := range rhs.Dims {
		if !slices.Contains(dn.RhsBatchingDims, int64(i)) && !slices.Contains(dn.RhsContractingDims, int64(i)) {
			dims = append(dims, d)
		}
	}
	resultDType, err := productDType(lhs.DType, rhs.DType, resultDType)
	if err != nil {
		return zero, err
	}
	return TensorType{DType: resultDType, Dims: dims}, nil
}

// checkAxes2 is checkAxes on the concatenation of a and b.
func checkAxes2(what string, a, b []int64, rank int) error {
	if err := checkAxes(what, a, rank, true); err != nil {
		return err
	}
	if err := checkAxes(what, b, rank, true); err != nil {
		return err
	}
	for _, d := range b {
		if slices.Contains(a, d) {
			return fmt.Errorf("%s: dimension %d repeated", what, d)
		}
	}
	return nil
}

// windowOutput is the number of window positions along one dimension.
func windowOutput(in, window, stride, baseDil, winDil, lo, hi int64) int64 {
	if in == DynamicDim {
		return DynamicDim
	}
	var c dimCalc
	padded := c.add(lo, hi)
	if in > 0 {
		padded = c.add(padded, c.add(c.mul(in-1, baseDil), 1))
	}
	if window == DynamicDim {
		return DynamicDim
	}
	dw := int64(0)
	if window > 0 {
		dw = c.add(c.mul(window-1, winDil), 1)
	}
	if c.overflow {
		return dimOverflow
	}
	if padded < dw || padded <= 0 {
		return 0
	}
	return (padded-dw)/stride + 1
}

// convParams are a convolution's attributes with defaults filled in.
type convParams struct {
	strides, lhsDil, rhsDil []int64
	padding                 [][2]int64
	reversal                []bool
	dn                      ConvDimensionNumbers
	fgc, bgc                int64
}

func inferConvolution(lhs, rhs TensorType, p convParams, resultDType xla.DType) (TensorType, error) {
	var zero TensorType
	dn := p.dn
	n := len(dn.InputSpatialDims)
	if lhs.Rank() != n+2 || rhs.Rank() != n+2 {
		return zero, fmt.Errorf("lhs and rhs must have rank %d (%d spatial dims + 2)", n+2, n)
	}
	if len(dn.KernelSpatialDims) != n || len(dn.OutputSpatialDims) != n {
		return zero, fmt.Errorf("input, kernel and output spatial dims differ in count")
	}
	in := append([]int64{dn.InputBatchDim, dn.InputFeatureDim}, dn.InputSpatialDims...)
	if err := checkAxes("input dimensions", in, n+2, true); err != nil {
		return zero, err
	}
	k := append([]int64{dn.KernelInputFeatureDim, dn.KernelOutputFeature}, dn.KernelSpatialDims...)
	if err := checkAxes("kernel dimensions", k, n+2, true); err != nil {
		return zero, err
	}
	out := append([]int64{dn.OutputBatchDim, dn.OutputFeatureDim}, dn.OutputSpatialDims...)
	if err := checkAxes("output dimensions", out, n+2, true); err != nil {
		return zero, err
	}
	if len(p.strides) != n || len(p.lhsDil) != n || len(p.rhsDil) != n || len(p.padding) != n {
		return zero, fmt.Errorf("window_strides, padding, lhs_dilation and rhs_dilation need %d entries", n)
	}
	if p.reversal != nil && len(p.reversal) != n {
		return zero, fmt.Errorf("window_reversal needs %d entries", n)
	}
	for i := range n {
		if p.strides[i] <= 0 || p.lhsDil[i] <= 0 || p.rhsDil[i] <= 0 {
			return zero, fmt.Errorf("window strides and dilations must be > 0")
		}
	}
	if p.fgc <= 0 || p.bgc <= 0 {
		return zero, fmt.Errorf("feature_group_count and batch_group_count must be > 0")
	}
	if p.fgc != 1 && p.bgc != 1 {
		return zero, fmt.Errorf("feature_group_count and batch_group_count cannot both be > 1")
	}
	inBatch, inFeat := lhs.Dims[dn.InputBatchDim], lhs.Dims[dn.InputFeatureDim]
	kIn, kOut := rhs.Dims[dn.KernelInputFeatureDim], rhs.Dims[dn.KernelOutputFeature]
	if inBatch != DynamicDim && inBatch%p.bgc != 0 {
		return zero, fmt.Errorf("input batch %d not divisible by batch_group_count %d", inBatch, p.bgc)
	}
	if inFeat != DynamicDim && inFeat%p.fgc != 0 {
		return zero, fmt.Errorf("input features %d not divisible by feature_group_count %d", inFeat, p.fgc)
	}
	if inFeat != DynamicDim && kIn != DynamicDim && inFeat/p.fgc != kIn {
		return zero, fmt.Errorf("input features / feature_group_count (%d) != kernel input features (%d)", inFeat/p.fgc, kIn)
	}
	if kOut != DynamicDim && (kOut%p.bgc != 0 || kOut%p.fgc != 0) {
		return zero, fmt.Errorf("kernel output features %d not divisible by the group counts", kOut)
	}
	dims := make([]int64, n+2)
	if inBatch == DynamicDim {
		dims[dn.OutputBatchDim] = DynamicDim
	} else {
		dims[dn.OutputBatchDim] = inBatch / p.bgc
	}
	dims[dn.OutputFeatureDim] = kOut
	for i := range n {
		dims[dn.OutputSpatialDims[i]] = windowOutput(lhs.Dims[dn.InputSpatialDims[i]], rhs.Dims[dn.KernelSpatialDims[i]],
			p.strides[i], p.lhsDil[i], p.rhsDil[i], p.padding[i][0], p.padding[i][1])
	}
	if err := checkInferredDims(dims); err != nil {
		return zero, err
	}
	resultDType, err := productDType(lhs.DType, rhs.DType, resultDType)
	if err != nil {
		return zero, err
	}
	return TensorType{DType: resultDType, Dims: dims}, nil
}

// Promotable reports whether a reduction's body may work in element type
// to on values of element type from (StableHLO's is_promotable): both
// integers (i1 among them, as in MLIR), both floats or both complex, to
// at least as wide. Such a body's element types are the reduction's
// result types.
func Promotable(from, to xla.DType) bool {
	kind := func(d xla.DType) byte {
		switch {
		case d.IsInt() || d.IsBool():
			return 'i'
		case d.IsFloat():
			return 'f'
		case d.IsComplex():
			return 'c'
		}
		return 0
	}
	k := kind(from)
	return k != 0 && k == kind(to) && from.Bits() <= to.Bits()
}

// reductionTypes are the element types a reduction's body works in: body
// (its block's first len(inputs) arguments' element types, nil when
// unknown: the inputs' own) checked to be promotable from the inputs'.
func reductionTypes(inputs []TensorType, body []xla.DType) ([]xla.DType, error) {
	out := make([]xla.DType, len(inputs))
	for i, t := range inputs {
		out[i] = t.DType
		if body == nil {
			continue
		}
		if i >= len(body) {
			return nil, fmt.Errorf("the body takes %d values of each kind, for %d inputs", len(body), len(inputs))
		}
		if !Promotable(t.DType, body[i]) {
			return nil, fmt.Errorf("the body's element type %v for input %d (%v) is not a promotion of it (same kind, at least as wide)", body[i], i, t.DType)
		}
		out[i] = body[i]
	}
	return out, nil
}

// inferReduce: the results of reducing inputs over dims with init values
// of the inputs' element types, in the body's element types bodyTypes
// (nil: the inputs').
func inferReduce(inputs, inits []TensorType, dims []int64, bodyTypes []xla.DType) ([]Type, error) {
	if len(inputs) == 0 || len(inputs) != len(inits) {
		return nil, fmt.Errorf("needs as many init values as inputs (at least one), got %d and %d", len(inputs), len(inits))
	}
	for i := range inputs {
		if !sameDims(inputs[i].Dims, inputs[0].Dims) {
			return nil, fmt.Errorf("inputs must share one shape")
		}
		if inits[i].Rank() != 0 || inits[i].DType != inputs[i].DType {
			return nil, fmt.Errorf("init value %d must be a scalar of the input's element type", i)
		}
	}
	if err := checkAxes("dimensions", dims, inputs[0].Rank(), true); err != nil {
		return nil, err
	}
	dts, err := reductionTypes(inputs, bodyTypes)
	if err != nil {
		return nil, err
	}
	out := make([]Type, len(inputs))
	for i, t := range inputs {
		var rd []int64
		for d, s := range t.Dims {
			if !slices.Contains(dims, int64(d)) {
				rd = append(rd, s)
			}
		}
		out[i] = TensorType{DType: dts[i], Dims: rd}
	}
	return out, nil
}

// windowParams are reduce_window / select_and_scatter attributes with
// defaults filled in.
type windowParams struct {
	dims, strides, baseDil, winDil []int64
	padding                        [][2]int64
}

// inferReduceWindow: as inferReduce, over windows.
func inferReduceWindow(inputs, inits []TensorType, w windowParams, bodyTypes []xla.DType) ([]Type, error) {
	if len(inputs) == 0 || len(inputs) != len(inits) {
		return nil, fmt.Errorf("needs as many init values as inputs (at least one), got %d and %d", len(inputs), len(inits))
	}
	r := inputs[0].Rank()
	for i := range inputs {
		if !sameDims(inputs[i].Dims, inputs[0].Dims) {
			return nil, fmt.Errorf("inputs must share one shape")
		}
		if inits[i].Rank() != 0 || inits[i].DType != inputs[i].DType {
			return nil, fmt.Errorf("init value %d must be a scalar of the input's element type", i)
		}
	}
	if err := checkWindow(w, r); err != nil {
		return nil, err
	}
	dims := make([]int64, r)
	for d := range r {
		dims[d] = windowOutput(inputs[0].Dims[d], w.dims[d], w.strides[d], w.baseDil[d], w.winDil[d], w.padding[d][0], w.padding[d][1])
	}
	if err := checkInferredDims(dims); err != nil {
		return nil, err
	}
	dts, err := reductionTypes(inputs, bodyTypes)
	if err != nil {
		return nil, err
	}
	out := make([]Type, len(inputs))
	for i := range inputs {
		out[i] = TensorType{DType: dts[i], Dims: dims}
	}
	return out, nil
}

func checkWindow(w windowParams, r int) error {
	if len(w.dims) != r || len(w.strides) != r || len(w.baseDil) != r || len(w.winDil) != r || len(w.padding) != r {
		return fmt.Errorf("window dimensions, strides, dilations and padding need %d entries (the operand rank)", r)
	}
	for d := range r {
		if w.dims[d] <= 0 || w.strides[d] <= 0 || w.baseDil[d] <= 0 || w.winDil[d] <= 0 {
			return fmt.Errorf("window dimensions, strides and dilations must be > 0")
		}
	}
	return nil
}

func inferFft(t TensorType, ft FftType, length []int64) (TensorType, error) {
	var zero TensorType
	l := len(length)
	if l < 1 || l > 3 {
		return zero, fmt.Errorf("fft_length must have 1 to 3 entries")
	}
	if err := checkSizes("fft_length", length); err != nil {
		return zero, err
	}
	if t.Rank() < l {
		return zero, fmt.Errorf("operand rank %d < fft_length size %d", t.Rank(), l)
	}
	dims := slices.Clone(t.Dims)
	tail := t.Dims[t.Rank()-l:]
	half := length[l-1]/2 + 1 // the complex side's last dimension (spec C5: 0 for a length of 0)
	if length[l-1] == 0 {
		half = 0
	}
	switch ft {
	case FftForward, FftInverse:
		if !t.DType.IsComplex() {
			return zero, fmt.Errorf("%s needs a complex operand", ft)
		}
		if !sameDims(tail, length) {
			return zero, fmt.Errorf("trailing dimensions %v != fft_length %v", tail, length)
		}
		return TensorType{DType: t.DType, Dims: dims}, nil
	case FftRealForward:
		var ct xla.DType
		switch t.DType {
		case xla.Float32:
			ct = xla.Complex64
		case xla.Float64:
			ct = xla.Complex128
		default:
			return zero, fmt.Errorf("RFFT needs an f32 or f64 operand")
		}
		if !sameDims(tail, length) {
			return zero, fmt.Errorf("trailing dimensions %v != fft_length %v", tail, length)
		}
		dims[len(dims)-1] = half
		return TensorType{DType: ct, Dims: dims}, nil
	case FftInverseToReal:
		if !t.DType.IsComplex() {
			return zero, fmt.Errorf("IRFFT needs a complex operand")
		}
		want := slices.Clone(length)
		want[l-1] = half
		if !sameDims(tail, want) {
			return zero, fmt.Errorf("trailing dimensions %v != %v", tail, want)
		}
		dims[len(dims)-1] = length[l-1]
		return TensorType{DType: t.DType.ComplexElem(), Dims: dims}, nil
	}
	return zero, fmt.Errorf("invalid fft_type %q", ft)
}

func checkBatchedSquare(what string, t TensorType) error {
	r := t.Rank()
	if r < 2 || !dimEq(t.Dims[r-1], t.Dims[r-2]) {
		return fmt.Errorf("%s must be a batch of square matrices, got %s", what, t)
	}
	if dtypeClasses[t.DType]&clsFloatCplx == 0 {
		return fmt.Errorf("%s must be float or complex", what)
	}
	return nil
}

func inferTriangularSolve(a, b TensorType, leftSide bool) error {
	if err := checkBatchedSquare("a", a); err != nil {
		return err
	}
	r := a.Rank()
	if b.Rank() != r || b.DType != a.DType {
		return fmt.Errorf("b must have a's rank and element type")
	}
	if !sameDims(a.Dims[:r-2], b.Dims[:r-2]) {
		return fmt.Errorf("a and b batch dimensions differ")
	}
	k := b.Dims[r-2]
	if !leftSide {
		k = b.Dims[r-1]
	}
	if !dimEq(a.Dims[r-1], k) {
		return fmt.Errorf("a is %dx%d, b's matching dimension is %d", a.Dims[r-1], a.Dims[r-1], k)
	}
	return nil
}

// groupSize returns the size of each replica group.
func groupSize(groups [][]int64) (int64, error) {
	if len(groups) == 0 || len(groups[0]) == 0 {
		return 0, fmt.Errorf("replica_groups must be non-empty to infer the result shape")
	}
	n := len(groups[0])
	seen := map[int64]bool{}
	for _, g := range groups {
		if len(g) != n {
			return 0, fmt.Errorf("replica groups must all have the same size")
		}
		for _, id := range g {
			if id < 0 || seen[id] {
				return 0, fmt.Errorf("replica id %d negative or repeated", id)
			}
			seen[id] = true
		}
	}
	return int64(n), nil
}

func checkGroups(groups [][]int64) error {
	seen := map[int64]bool{}
	for _, g := range groups {
		for _, id := range g {
			if id < -1 || (id >= 0 && seen[id]) {
				return fmt.Errorf("replica id %d invalid or repeated", id)
			}
			seen[id] = true
		}
	}
	return nil
}

// inferSelect checks select's operands: pred an i1 tensor, a scalar or of
// the branches' shape, and the two branches of one type.
func inferSelect(pred, onTrue, onFalse Type) error {
	pt, ok := pred.(TensorType)
	if !ok || pt.DType != xla.Bool {
		return fmt.Errorf("pred must be an i1 tensor")
	}
	if !TypesCompatible(onTrue, onFalse) {
		return fmt.Errorf("on_true and on_false must have the same type")
	}
	if tt, ok := onTrue.(TensorType); ok && pt.Rank() != 0 && !sameDims(pt.Dims, tt.Dims) {
		return fmt.Errorf("pred must be a scalar or have the shape of on_true")
	}
	return nil
}

// inferClamp checks clamp's operands: min and max scalars or of x's type.
func inferClamp(min, x, max Type) error {
	xt, ok := x.(TensorType)
	if !ok {
		return fmt.Errorf("operand must be a tensor")
	}
	for i, b := range []Type{min, max} {
		bt, ok := b.(TensorType)
		if !ok || bt.DType != xt.DType || (bt.Rank() != 0 && !sameDims(bt.Dims, xt.Dims)) {
			return fmt.Errorf("%s must be a scalar or have the operand's type", []string{"min", "max"}[i])
		}
	}
	return nil
}

// inferRealImag is the result of real or imag: the element type of a
// complex operand, a float operand unchanged.
func inferRealImag(t TensorType) (TensorType, error) {
	if dtypeClasses[t.DType]&clsFloatCplx == 0 {
		return TensorType{}, fmt.Errorf("operand must be a float or complex tensor")
	}
	if t.DType.IsComplex() {
		return TensorType{DType: t.DType.ComplexElem(), Dims: t.Dims}, nil
	}
	return t, nil
}

// inferAbs is the result of abs: real for a complex operand; signed
// integers and floats keep their type.
func inferAbs(t TensorType) (TensorType, error) {
	if t.DType.IsComplex() {
		return TensorType{DType: t.DType.ComplexElem(), Dims: t.Dims}, nil
	}
	if dtypeClasses[t.DType]&clsSignedNum == 0 {
		return TensorType{}, fmt.Errorf("element type %s is not %s", t.DType, clsSignedNum)
	}
	return t, nil
}

// inferReducePrecision checks reduce_precision's operand and bit counts.
func inferReducePrecision(t TensorType, exponentBits, mantissaBits int64) error {
	if !t.DType.IsFloat() {
		return fmt.Errorf("operand must be a float tensor")
	}
	if exponentBits < 1 || mantissaBits < 0 {
		return fmt.Errorf("exponent_bits must be >= 1 and mantissa_bits >= 0, got %d and %d", exponentBits, mantissaBits)
	}
	return nil
}

// inferDimensionSize checks get_dimension_size's dimension.
func inferDimensionSize(t Type, dim int64) error {
	tt, ok := t.(TensorType)
	if !ok || dim < 0 || dim >= int64(tt.Rank()) {
		return fmt.Errorf("dimension %d out of range for %s", dim, t)
	}
	return nil
}

// inferSort checks sort's inputs (at least one, of one shape) and its
// dimension (negative counts from the end).
func inferSort(ts []TensorType, dimension int64) error {
	if len(ts) == 0 {
		return fmt.Errorf("needs at least one input")
	}
	for _, t := range ts {
		if !sameDims(t.Dims, ts[0].Dims) {
			return fmt.Errorf("inputs must share one shape")
		}
	}
	r := int64(ts[0].Rank())
	if dimension < -r || dimension >= r {
		return fmt.Errorf("dimension %d out of range [%d, %d)", dimension, -r, r)
	}
	return nil
}

// inferMap checks map's inputs (at least one, of one shape) and its
// dimensions (all of them, in order).
func inferMap(ts []TensorType, dims []int64) error {
	if len(ts) == 0 {
		return fmt.Errorf("needs at least one input")
	}
	for _, t := range ts {
		if !sameDims(t.Dims, ts[0].Dims) {
			return fmt.Errorf("inputs must share one shape")
		}
	}
	if len(dims) != ts[0].Rank() {
		return fmt.Errorf("dimensions must be [0, ..., rank-1], got %v", dims)
	}
	for i, d := range dims {
		if d != int64(i) {
			return fmt.Errorf("dimensions must be [0, ..., rank-1], got %v", dims)
		}
	}
	return nil
}

// inferSelectAndScatter checks select_and_scatter's operands: source
// holds one element per window of x, init is a scalar of x's element type.
func inferSelectAndScatter(x, source, init TensorType, p windowParams) error {
	rts, err := inferReduceWindow([]TensorType{x}, []TensorType{{DType: x.DType}}, p, nil)
	if err != nil {
		return err
	}
	if source.DType != x.DType || !sameDims(source.Dims, rts[0].(TensorType).Dims) {
		return fmt.Errorf("source must be %s (one element per window)", rts[0])
	}
	if init.Rank() != 0 || init.DType != x.DType {
		return fmt.Errorf("init_value must be a scalar of the operand's element type")
	}
	return nil
}
