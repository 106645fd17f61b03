package interpreter

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// convolution and dynamic_conv.
//
// Semantics (StableHLO spec, convolution): the input is padded (zeros;
// negative padding removes elements) and dilated (lhs_dilation-1 zeros
// between elements); a window of the kernel's spatial size, its elements
// rhs_dilation apart, slides by window_strides; each output element is the
// dot product of the window (reversed along dimensions with window_reversal)
// with the kernel over the spatial and input-feature dimensions. With
// feature_group_count G the input features and the output features are
// split into G groups and group g of the output only sees group g of the
// input; with batch_group_count G the input batch is split into G groups
// and output feature group g is computed from input batch group g.
//
// Implementation: operands are transposed once into [batch, feature,
// spatial...] and [out feature, in feature, spatial...]; for every output
// batch element and group, windows of the input are gathered into a column
// matrix (im2col: one row per input feature and kernel position, one column
// per output position, in tiles of output positions, and in parts of its
// rows when a tile would still be large) and multiplied by the group's
// kernel rows with laGemm (internal/gemm for float32/float64). The input
// index a kernel position and an output position read along a spatial
// dimension comes from a table when kernel size x output size is small,
// else it is computed as needed. The [batch, feature, spatial...] result
// is transposed to the result layout.

func init() {
	registerKernel("stablehlo.convolution", convolutionKernel)
	registerKernel("stablehlo.dynamic_conv", dynamicConvKernel)
}

func convolutionKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := laTensorArgs(args, 2)
	if err != nil {
		return nil, err
	}
	var padding []int64
	switch a := op.Attr("padding").(type) {
	case nil:
	case stablehlo.DenseElementsAttr:
		if padding, err = denseInts(a); err != nil {
			return nil, fmt.Errorf("attribute padding: %w", err)
		}
	default:
		return nil, fmt.Errorf("attribute padding is %T, want dense<...> : tensor<Nx2xi64>", a)
	}
	return convolutionOp(op, ts[0], ts[1], padding, x.stopFlag())
}

// dynamicConvKernel is convolution with the padding given as an operand.
func dynamicConvKernel(x *Exec, op *stablehlo.Op, args []Value) (out []Value, err error) {
	defer laRecover(&err)
	ts, err := laTensorArgs(args, 3)
	if err != nil {
		return nil, err
	}
	padding, err := laTensorInts(ts[2])
	if err != nil {
		return nil, fmt.Errorf("padding: %w", err)
	}
	if r := ts[2].Shape.Rank(); r != 2 || (ts[2].Shape.Dims[1] != 2 && ts[2].Len() > 0) {
		return nil, fmt.Errorf("padding operand is %v, want [spatial dims, 2]", ts[2].Shape)
	}
	return convolutionOp(op, ts[0], ts[1], padding, x.stopFlag())
}

func convolutionOp(op *stablehlo.Op, lhs, rhs *Tensor, padding []int64, stop *atomic.Bool) ([]Value, error) {
	dn, ok := op.Attr("dimension_numbers").(stablehlo.ConvDimensionNumbers)
	if !ok {
		return nil, fmt.Errorf("dimension_numbers is %T, want a #stablehlo.conv attribute", op.Attr("dimension_numbers"))
	}
	rt, err := ResultTensorType(op, 0)
	if err != nil {
		return nil, err
	}
	switch {
	case rt.Size() >= 0 || op.Name != "stablehlo.dynamic_conv":
		if rt, err = laResultType(op, 0); err != nil {
			return nil, err
		}
	case StorageOf(rt.DType) == StorageInvalid:
		return nil, fmt.Errorf("result element type %v is not supported", rt.DType)
	}
	// (dynamic_conv's ? result dims are the ones its run-time padding
	// gives: planConv works them out.)
	s := lhs.Shape.Rank() - 2
	if s < 0 {
		return nil, fmt.Errorf("lhs %v has rank < 2", lhs.Shape)
	}
	ones := make([]int64, s)
	for i := range ones {
		ones[i] = 1
	}
	cp := convParams{dn: dn, stop: stop}
	if cp.strides, err = laI64Array(op, "window_strides", ones); err != nil {
		return nil, err
	}
	if cp.lhsDil, err = laI64Array(op, "lhs_dilation", ones); err != nil {
		return nil, err
	}
	if cp.rhsDil, err = laI64Array(op, "rhs_dilation", ones); err != nil {
		return nil, err
	}
	rev, err := laI64Array(op, "window_reversal", make([]int64, s))
	if err != nil {
		return nil, err
	}
	cp.reversal = make([]bool, len(rev))
	for i, v := range rev {
		cp.reversal[i] = v != 0
	}
	if padding == nil {
		padding = make([]int64, 2*s)
	}
	if len(padding) != 2*s {
		return nil, fmt.Errorf("padding has %d values, want %d ([%d, 2])", len(padding), 2*s, s)
	}
	cp.padLo, cp.padHi = make([]int64, s), make([]int64, s)
	for i := 0; i < s; i++ {
		cp.padLo[i], cp.padHi[i] = padding[2*i], padding[2*i+1]
	}
	if cp.fgc, err = laInt(op, "feature_group_count", 1); err != nil {
		return nil, err
	}
	if cp.bgc, err = laInt(op, "batch_group_count", 1); err != nil {
		return nil, err
	}
	t, err := convolution(lhs, rhs, &cp, rt.Shape())
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// convParams are a convolution's attributes.
type convParams struct {
	dn                                    stablehlo.ConvDimensionNumbers
	strides, padLo, padHi, lhsDil, rhsDil []int64
	reversal                              []bool
	fgc, bgc                              int64
	stop                                  *atomic.Bool // ends the products early (see Exec.stopFlag)
}

// convPlan is a checked convolution in canonical layouts.
type convPlan struct {
	lhsPerm, rhsPerm, outPerm []int
	nb, c, o, ci              int       // input batch, input features, output features, kernel input features
	nbOut                     int       // output batch (nb / batch_group_count)
	groups, og                int       // groups (feature or batch) and output features per group
	in, k, out                []int64   // spatial sizes
	canonOut                  []int64   // [nbOut, o, out...]
	result                    xla.Shape // the result's shape, ? dims worked out
}

func planConv(lhs, rhs xla.Shape, p *convParams, result xla.Shape) (*convPlan, error) {
	n := lhs.Rank()
	s := n - 2
	dn := p.dn
	if rhs.Rank() != n {
		return nil, fmt.Errorf("lhs %v and rhs %v have different ranks", lhs, rhs)
	}
	if result.Rank() != n {
		return nil, fmt.Errorf("result %v does not have rank %d", result, n)
	}
	if len(dn.InputSpatialDims) != s || len(dn.KernelSpatialDims) != s || len(dn.OutputSpatialDims) != s {
		return nil, fmt.Errorf("dimension_numbers name %d/%d/%d spatial dimensions, want %d",
			len(dn.InputSpatialDims), len(dn.KernelSpatialDims), len(dn.OutputSpatialDims), s)
	}
	for name, v := range map[string][]int64{"window_strides": p.strides, "lhs_dilation": p.lhsDil, "rhs_dilation": p.rhsDil} {
		if len(v) != s {
			return nil, fmt.Errorf("%s has %d values, want %d", name, len(v), s)
		}
		for _, x := range v {
			if x < 1 {
				return nil, fmt.Errorf("%s must be positive, got %v", name, v)
			}
		}
	}
	if len(p.reversal) != s {
		return nil, fmt.Errorf("window_reversal has %d values, want %d", len(p.reversal), s)
	}
	cat := func(a, b int64, rest []int64) []int64 { return append([]int64{a, b}, rest...) }
	axes := func(what string, dims []int64) ([]int, error) {
		seen := make([]bool, n)
		if err := laCheckAxes(what, dims, n, seen); err != nil {
			return nil, err
		}
		out := make([]int, n)
		for i, d := range dims {
			out[i] = int(d)
		}
		return out, nil
	}
	cp := &convPlan{}
	var err error
	if cp.lhsPerm, err = axes("input dimensions", cat(dn.InputBatchDim, dn.InputFeatureDim, dn.InputSpatialDims)); err != nil {
		return nil, err
	}
	if cp.rhsPerm, err = axes("kernel dimensions", cat(dn.KernelOutputFeature, dn.KernelInputFeatureDim, dn.KernelSpatialDims)); err != nil {
		return nil, err
	}
	outAxes, err := axes("output dimensions", cat(dn.OutputBatchDim, dn.OutputFeatureDim, dn.OutputSpatialDims))
	if err != nil {
		return nil, err
	}
	// Result axis outAxes[i] holds canonical axis i.
	cp.outPerm = make([]int, n)
	for i, a := range outAxes {
		cp.outPerm[a] = i
	}
	if p.fgc < 1 || p.bgc < 1 {
		return nil, fmt.Errorf("feature_group_count %d and batch_group_count %d must be positive", p.fgc, p.bgc)
	}
	if p.fgc > 1 && p.bgc > 1 {
		return nil, fmt.Errorf("feature_group_count %d and batch_group_count %d cannot both exceed 1", p.fgc, p.bgc)
	}
	cp.nb, cp.c = int(lhs.Dims[dn.InputBatchDim]), int(lhs.Dims[dn.InputFeatureDim])
	cp.o, cp.ci = int(rhs.Dims[dn.KernelOutputFeature]), int(rhs.Dims[dn.KernelInputFeatureDim])
	fgc, bgc := int(p.fgc), int(p.bgc)
	if cp.c%fgc != 0 || cp.ci != cp.c/fgc {
		return nil, fmt.Errorf("input features %d with feature_group_count %d need %d kernel input features, got %d", cp.c, fgc, cp.c/fgc, cp.ci)
	}
	if cp.o%fgc != 0 || cp.o%bgc != 0 {
		return nil, fmt.Errorf("kernel output features %d not divisible by feature_group_count %d and batch_group_count %d", cp.o, fgc, bgc)
	}
	if cp.nb%bgc != 0 {
		return nil, fmt.Errorf("input batch %d not divisible by batch_group_count %d", cp.nb, bgc)
	}
	cp.nbOut = cp.nb / bgc
	cp.groups = fgc * bgc
	cp.og = cp.o / cp.groups
	cp.in, cp.k, cp.out = make([]int64, s), make([]int64, s), make([]int64, s)
	for i := 0; i < s; i++ {
		in, k := lhs.Dims[dn.InputSpatialDims[i]], rhs.Dims[dn.KernelSpatialDims[i]]
		cp.in[i], cp.k[i] = in, k
		dilIn := int64(0)
		if in > 1 && p.lhsDil[i] > (math.MaxInt64-1)/(in-1) {
			return nil, fmt.Errorf("spatial dimension %d: lhs dilation %d of %d elements overflows int64", i, p.lhsDil[i], in)
		}
		if in > 0 {
			dilIn = (in-1)*p.lhsDil[i] + 1
		}
		// dynamic_conv's padding comes at run time: checked here.
		pads, ok1 := addInt64(p.padLo[i], p.padHi[i])
		padded, ok2 := addInt64(pads, dilIn)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("spatial dimension %d: padding %d/%d around %d elements overflows int64", i, p.padLo[i], p.padHi[i], dilIn)
		}
		dilK := int64(0)
		if k > 1 && p.rhsDil[i] > (math.MaxInt64-1)/(k-1) {
			return nil, fmt.Errorf("spatial dimension %d: rhs dilation %d of a %d-element window overflows int64", i, p.rhsDil[i], k)
		}
		if k > 0 {
			dilK = (k-1)*p.rhsDil[i] + 1
		}
		if padded > 0 && dilK <= padded {
			cp.out[i] = (padded-dilK)/p.strides[i] + 1
		}
	}
	cp.canonOut = cat(int64(cp.nbOut), int64(cp.o), cp.out)
	want := make([]int64, n)
	for i, a := range outAxes {
		want[a] = cp.canonOut[i]
	}
	cp.result = xla.MakeShape(result.DType, want...)
	if !stablehlo.TypesCompatible(stablehlo.TensorOf(cp.result), stablehlo.TensorOf(result)) { // a ? takes any size
		return nil, fmt.Errorf("result type %v does not match the operands (want dimensions %v)", stablehlo.TensorOf(result), want)
	}
	return cp, nil
}

func convolution(lhs, rhs *Tensor, p *convParams, result xla.Shape) (*Tensor, error) {
	cp, err := planConv(lhs.Shape, rhs.Shape, p, result)
	if err != nil {
		return nil, err
	}
	result = cp.result
	c, err := laComputeFor(result.DType, lhs.Shape.DType, rhs.Shape.DType)
	if err != nil {
		return nil, err
	}
	switch c {
	case laF32:
		return convT[float32](lhs, rhs, p, cp, result)
	case laF64:
		return convT[float64](lhs, rhs, p, cp, result)
	case laI64:
		return convT[int64](lhs, rhs, p, cp, result)
	case laC64:
		return convT[complex64](lhs, rhs, p, cp, result)
	default:
		return convT[complex128](lhs, rhs, p, cp, result)
	}
}

// convColsLimit bounds the elements of one im2col tile (and of its table
// of input offsets); a var for tests.
var convColsLimit = 1 << 20

// convTabLimit bounds the entries of the table of input indices of one
// spatial dimension (kernel size x output size); beyond it the indices are
// computed as they are needed. A var for tests.
var convTabLimit int64 = 1 << 20

// convInIndex is the input index along spatial dimension d that kernel
// position kk and output position oo read, or -1 where the window is in
// padding or between dilated elements.
func convInIndex(p *convParams, cp *convPlan, d int, kk, oo int64) int64 {
	wk := kk
	if p.reversal[d] {
		wk = cp.k[d] - 1 - kk
	}
	pos := oo*p.strides[d] + wk*p.rhsDil[d] - p.padLo[d]
	if pos < 0 {
		return -1
	}
	if dil := p.lhsDil[d]; dil != 1 {
		if pos%dil != 0 {
			return -1
		}
		pos /= dil
	}
	if pos >= cp.in[d] {
		return -1
	}
	return pos
}

// convOutElems is the number of elements of the canonical output, -1 when
// it overflows.
func convOutElems(dims []int64) int64 {
	if slices.Contains(dims, 0) {
		return 0
	}
	n := int64(1)
	for _, d := range dims {
		if d < 0 || n > math.MaxInt64/d {
			return -1
		}
		n *= d
	}
	return n
}

func convT[T laNum](lhs, rhs *Tensor, p *convParams, cp *convPlan, result xla.Shape) (*Tensor, error) {
	a, _, err := laSlice[T](lhs)
	if err != nil {
		return nil, err
	}
	w, _, err := laSlice[T](rhs)
	if err != nil {
		return nil, err
	}
	out := makeChecked[T](convOutElems(cp.canonOut), result)
	s := len(cp.in)
	inSize, kSize, outSize := int64(1), int64(1), int64(1)
	for i := 0; i < s; i++ {
		inSize *= cp.in[i]
		kSize *= cp.k[i]
		outSize *= cp.out[i]
	}
	is, ks, os := int(inSize), int(kSize), int(outSize)
	rows := cp.ci * ks // rows of the column matrix
	// With no rows (no input features or an empty kernel) every output
	// is an empty sum: the zeros out holds. The operands then hold no
	// elements and may have any spatial sizes.
	if len(out) > 0 && rows > 0 {
		a = laPermute(a, lhs.Shape.Dims, cp.lhsPerm) // [nb, c, in...]
		w = laPermute(w, rhs.Shape.Dims, cp.rhsPerm) // [o, ci, k...]
		// Per spatial dimension d, the input index read by kernel position
		// kk and output position oo (convInIndex), as a table when it is
		// small enough, else nil.
		dimTab := make([][]int64, s)
		for d := 0; d < s; d++ {
			k, o := cp.k[d], cp.out[d]
			if k > convTabLimit/o { // o > 0: the output has elements
				continue
			}
			tab := make([]int64, k*o)
			for kk := int64(0); kk < k; kk++ {
				for oo := int64(0); oo < o; oo++ {
					tab[kk*o+oo] = convInIndex(p, cp, d, kk, oo)
				}
			}
			dimTab[d] = tab
		}
		inStrides := Strides(cp.in)
		// The column matrix of a tile of tl output positions has rows rows;
		// when that is more than convColsLimit elements it is made and
		// multiplied in parts: of cc input features (all kernel positions)
		// or, for a kernel of more than convColsLimit positions, of kc
		// kernel positions of one input feature. The rows of a part are
		// consecutive rows of the group's kernel matrix either way.
		limit := max(convColsLimit, 1)
		tl := os
		if os > limit/rows {
			tl = max(1, limit/rows)
		}
		kc, cc := ks, cp.ci
		if ks > limit/tl {
			kc, cc = max(1, limit/tl), 1
		} else if rows > limit/tl {
			cc = max(1, limit/(ks*tl))
		}
		items := cp.nbOut * cp.groups
		work := int64(len(out)) * int64(rows)
		laParallelFor(items, work, func(lo, hi int) {
			cols := make([]T, cc*kc*tl)
			offs := make([]int64, kc*tl)
			kk := make([]int64, s)
			oo := make([]int64, s)
			for item := lo; item < hi; item++ {
				nOut, g := item/cp.groups, item%cp.groups
				nIn, cOff := nOut, 0
				if p.bgc > 1 {
					nIn = g*cp.nbOut + nOut
				} else {
					cOff = g * cp.ci
				}
				for s0 := 0; s0 < os; s0 += tl {
					if stopped(p.stop) {
						return // the run ended: the result is not used
					}
					n := min(tl, os-s0)
					for k0 := 0; k0 < ks; k0 += kc {
						nk := min(kc, ks-k0)
						// offs[kpos*n + j]: input spatial offset for kernel
						// position k0+kpos and output position s0+j, or -1.
						laUnflatten(kk, int64(k0), cp.k)
						for kpos := 0; kpos < nk; kpos++ {
							laUnflatten(oo, int64(s0), cp.out)
							row := offs[kpos*n : kpos*n+n]
							for j := range row {
								off := int64(0)
								for d := 0; d < s; d++ {
									var q int64
									if t := dimTab[d]; t != nil {
										q = t[kk[d]*cp.out[d]+oo[d]]
									} else {
										q = convInIndex(p, cp, d, kk[d], oo[d])
									}
									if q < 0 {
										off = -1
										break
									}
									off += q * inStrides[d]
								}
								row[j] = off
								NextIndex(oo, cp.out)
							}
							NextIndex(kk, cp.k)
						}
						for c0 := 0; c0 < cp.ci; c0 += cc {
							nc := min(cc, cp.ci-c0)
							for c := 0; c < nc; c++ {
								ch := nIn*cp.c + cOff + c0 + c
								img := a[ch*is : (ch+1)*is]
								for kpos := 0; kpos < nk; kpos++ {
									dst := cols[(c*nk+kpos)*n : (c*nk+kpos+1)*n]
									for j, off := range offs[kpos*n : kpos*n+n] {
										if off < 0 {
											dst[j] = 0
										} else {
											dst[j] = img[off]
										}
									}
								}
							}
							// Rows c0*ks+k0 ... of the group's kernel matrix.
							laGemm(false, false, cp.og, n, nc*nk,
								w[g*cp.og*rows+c0*ks+k0:], rows,
								cols, n,
								out[(nOut*cp.o+g*cp.og)*os+s0:], os, k0 > 0 || c0 > 0, p.stop)
						}
					}
				}
			}
		})
	}
	return laStore(result, laPermute(out, cp.canonOut, cp.outPerm))
}

// laUnflatten sets idx to the row-major multi-index of flat position f in
// dims.
func laUnflatten(idx []int64, f int64, dims []int64) {
	for d := len(dims) - 1; d >= 0; d-- {
		if dims[d] > 0 {
			idx[d] = f % dims[d]
			f /= dims[d]
		}
	}
}

// addInt64 is a + b, and false when that overflows int64.
func addInt64(a, b int64) (int64, bool) {
	sum := a + b
	return sum, (sum > a) == (b > 0)
}
