package pallas

import (
	"fmt"

	"github.com/halo-ml/halo/xla"
)

// Vmap batches a call, as vmap of pallas_call does in JAX: the batched
// operands (batched[i] for operand i, prefetch operands included) carry a
// leading batch dim of size batch, and every output gets one. The result is
// a kernel and spec for Call with a new leading grid axis over the batch:
// block specs of batched operands and of outputs gain a leading Squeezed
// dim indexed by that axis, unbatched operands keep their blocks, index
// maps receive the original grid indices, and ProgramID/NumPrograms in the
// kernel keep their axis numbers, as Ref.Info keeps the shapes the kernel
// was written for. A batched scalar-prefetch operand shows the kernel and
// the index maps the element of the batch being run, with the shape it
// was written for (a batch of block-sparse matrices, each with its own
// block indices, runs as one call). An unbatched operand may not be
// aliased to an output (InputOutputAliases: batch it, as every output is
// batched). batched has one flag per operand: a
// call of the result with another number of operands, or with a batched
// operand whose leading dim is not batch, is an error.
func Vmap(kernel KernelFunc, spec CallSpec, batch int64, batched []bool) (KernelFunc, CallSpec, error) {
	name := kernelName(spec.Name, kernel)
	fail := func(format string, args ...any) (KernelFunc, CallSpec, error) {
		return nil, CallSpec{}, &Error{Kernel: name, Op: "vmap", Msg: fmt.Sprintf(format, args...)}
	}
	if kernel == nil {
		return fail("kernel function is nil")
	}
	if batch <= 0 {
		return fail("batch size %d is not positive", batch)
	}
	if spec.vmapped && spec.vmapOperands != len(batched) {
		return fail("%d batched flags for the %d operands of the inner Vmap", len(batched), spec.vmapOperands)
	}
	np := spec.NumScalarPrefetch
	if np < 0 {
		return fail("NumScalarPrefetch %d is negative", np)
	}
	if np > len(batched) {
		return fail("%d batched flags (one per operand) for NumScalarPrefetch %d: fewer than the prefetch operands", len(batched), np)
	}
	for in, out := range spec.InputOutputAliases {
		if in >= 0 && in < len(batched) && !batched[in] {
			return fail("operand %d is aliased to output %d (InputOutputAliases) but not batched: every output gains the batch dim, so batch the operand too", in, out)
		}
	}
	nin := len(batched) - np
	if len(spec.InSpecs) != 0 && len(spec.InSpecs) != nin {
		return fail("%d batched flags (one per operand) for a call of %d (%d scalar-prefetch, %d InSpecs)", len(batched), np+len(spec.InSpecs), np, len(spec.InSpecs))
	}
	if len(spec.OutSpecs) != 0 && len(spec.OutSpecs) != len(spec.OutShapes) {
		return fail("%d OutSpecs for %d outputs", len(spec.OutSpecs), len(spec.OutShapes))
	}
	out := spec
	out.Name = name
	out.vmapped, out.vmapOperands, out.vmapLevels = true, len(batched), spec.vmapLevels+1
	out.Grid = append([]int64{batch}, spec.Grid...)
	// A batched prefetch array is indexed by this batch axis first, then
	// by those of inner Vmaps, their grid axes moved up by one.
	out.prefetchBatchAxes = make([][]int, np)
	for i := 0; i < np; i++ {
		var axes []int
		if batched[i] {
			axes = append(axes, 0)
		}
		if i < len(spec.prefetchBatchAxes) {
			for _, a := range spec.prefetchBatchAxes[i] {
				axes = append(axes, a+1)
			}
		}
		out.prefetchBatchAxes[i] = axes
	}
	wrap := func(bs *BlockSpec, shape []int64, isBatched bool) *BlockSpec {
		block := shape
		if bs != nil && bs.BlockShape != nil {
			block = bs.BlockShape
		}
		orig, user := mapsOf(bs)
		if !isBatched {
			if orig == nil {
				return &BlockSpec{BlockShape: block}
			}
			return &BlockSpec{BlockShape: block, userMap: user, IndexMap: func(g []*Value, pf []*Ref) []any { return orig(g[1:], pf) }}
		}
		nb := append([]int64{Squeezed}, block...)
		rank := len(block)
		return &BlockSpec{BlockShape: nb, userMap: user, IndexMap: func(g []*Value, pf []*Ref) []any {
			idx := []any{g[0]}
			if orig == nil {
				for i := 0; i < rank; i++ {
					idx = append(idx, 0)
				}
				return idx
			}
			return append(idx, orig(g[1:], pf)...)
		}}
	}
	// Input shapes are not known here: Trace checks the batch dims of
	// batched inputs (batchAxes) and resolves a batched input without a
	// block spec (whole array per batch element).
	out.InSpecs = make([]*BlockSpec, nin)
	for i := 0; i < nin; i++ {
		var bs *BlockSpec
		if len(spec.InSpecs) > 0 {
			bs = spec.InSpecs[i]
		}
		// This batch dim comes first; those of inner Vmaps follow, their
		// grid axes moved up by one.
		var axes []int
		if batched[np+i] {
			axes = append(axes, 0)
		}
		if bs != nil {
			for _, a := range bs.batchAxes {
				axes = append(axes, a+1)
			}
		}
		if bs == nil || bs.BlockShape == nil {
			// The whole array (per batch element): Trace resolves it. A
			// map the user gave is still traced, for its checks.
			orig, user := mapsOf(bs)
			if axes != nil || orig != nil {
				out.InSpecs[i] = &BlockSpec{batchAxes: axes, userMap: user}
			}
			if orig != nil {
				out.InSpecs[i].IndexMap = func(g []*Value, pf []*Ref) []any { return orig(g[1:], pf) }
			}
			continue
		}
		out.InSpecs[i] = wrap(bs, nil, batched[np+i])
		out.InSpecs[i].batchAxes = axes
	}
	out.OutShapes = make([]xla.Shape, len(spec.OutShapes))
	out.OutSpecs = make([]*BlockSpec, len(spec.OutShapes))
	for i, s := range spec.OutShapes {
		out.OutShapes[i] = xla.MakeShape(s.DType, append([]int64{batch}, s.Dims...)...)
		var bs *BlockSpec
		if len(spec.OutSpecs) > 0 {
			bs = spec.OutSpecs[i]
		}
		out.OutSpecs[i] = wrap(bs, s.Dims, true)
	}
	inner := kernel
	wrapped := func(k *Kernel, refs []*Ref) {
		k.axisOffset++
		defer func() { k.axisOffset-- }()
		inner(k, refs)
	}
	return wrapped, out, nil
}

// mapsOf is bs's index map (nil for none) and the map the user wrote that
// it wraps, if any, for errors to point at.
func mapsOf(bs *BlockSpec) (m, user IndexMapFunc) {
	if bs == nil || bs.IndexMap == nil {
		return nil, nil
	}
	if bs.userMap != nil {
		return bs.IndexMap, bs.userMap
	}
	return bs.IndexMap, bs.IndexMap
}
