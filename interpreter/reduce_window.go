package interpreter

import (
	"math"
	"sync/atomic"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func init() {
	shpRegister("stablehlo.reduce_window", shpReduceWindow)
}

// shpWindow is the geometry of reduce_window (and select_and_scatter): for
// every output position and window position of each dimension, the input
// index it reads, or -1 when it falls on padding or between base-dilated
// elements (where the padded input holds the init value).
type shpWindow struct {
	outDims []int64
	winDims []int64
	// tab[d][o*winDims[d]+w] is the input index along d, or -1; nil for a
	// dimension whose table would have more than shpWinTabLimit entries,
	// where index computes it.
	tab [][]int64
	// The geometry index computes from, per dimension.
	in, stride, baseDil, winDil, lo []int64
	// stop, when set, ends the walks over the windows early (the run's
	// context ended; see Exec.stopFlag).
	stop *atomic.Bool
}

// shpWinTabLimit bounds the entries of the table of one dimension (output
// size x window size); a var for tests.
var shpWinTabLimit int64 = 1 << 20

// stopped reports whether the run this geometry is computed for ended.
func (w *shpWindow) stopped() bool { return stopped(w.stop) }

// index is the input index along d of output position o and window
// position k, or -1 on padding or between base-dilated elements.
func (w *shpWindow) index(d int, o, k int64) int64 {
	if t := w.tab[d]; t != nil {
		return t[o*w.winDims[d]+k]
	}
	return w.compute(d, o, k)
}

func (w *shpWindow) compute(d int, o, k int64) int64 {
	p := o*w.stride[d] + k*w.winDil[d] - w.lo[d] // position in the dilated input
	if b := w.baseDil[d]; b != 1 {
		if p%b != 0 {
			return -1
		}
		p /= b
	}
	if p < 0 || p >= w.in[d] {
		return -1
	}
	return p
}

// shpNewWindow computes the window geometry and the output shape (spec C15):
// padded = lo + dilated_input + hi; num_windows = 0 when the padded size is
// 0 or less (negative padding may crop past the input) or the dilated
// window is larger, else floor((padded - dilated_win)/stride)+1.
// The tables are made for the dimensions where they are small (at most
// shpWinTabLimit entries); stop is the run's stop flag (or nil).
func shpNewWindow(in, win, stride, baseDil, winDil, lo, hi []int64, stop *atomic.Bool) (*shpWindow, error) {
	r := len(in)
	w := &shpWindow{outDims: make([]int64, r), winDims: win, tab: make([][]int64, r),
		in: in, stride: stride, baseDil: baseDil, winDil: winDil, lo: lo, stop: stop}
	for d := 0; d < r; d++ {
		if win[d] < 0 || stride[d] <= 0 || baseDil[d] <= 0 || winDil[d] <= 0 {
			return nil, shpErrf("dimension %d: window %d, stride %d, base dilation %d and window dilation %d must be positive",
				d, win[d], stride[d], baseDil[d], winDil[d])
		}
		if max(win[d], stride[d], baseDil[d], winDil[d], lo[d], -lo[d], hi[d], -hi[d]) > 1<<31 {
			return nil, shpErrf("dimension %d: window geometry too large", d)
		}
		dilIn := int64(0)
		if in[d] > 1 && baseDil[d] > (math.MaxInt64/4)/(in[d]-1) {
			return nil, shpErrf("dimension %d: base dilation %d of %d elements is too large", d, baseDil[d], in[d])
		}
		if in[d] > 0 {
			dilIn = (in[d]-1)*baseDil[d] + 1
		}
		padded := lo[d] + dilIn + hi[d]
		dilWin := int64(0)
		if win[d] > 0 {
			dilWin = (win[d]-1)*winDil[d] + 1
		}
		var nout int64
		if padded > 0 && dilWin <= padded {
			nout = (padded-dilWin)/stride[d] + 1
		}
		w.outDims[d] = nout
		if win[d] > 0 && nout > math.MaxInt64/win[d] {
			return nil, shpErrf("dimension %d: %d windows of %d elements are too many", d, nout, win[d])
		}
	}
	if shpCumulative && w.cumulativeDim() >= 0 {
		// A cumulative window (a cumsum) runs in one pass that reads no
		// table: one of n x n entries would cost more than the pass (found
		// in review: a 1024-long cumsum built an 8 MB table each run).
		return w, nil
	}
	for d := 0; d < r; d++ {
		nout := w.outDims[d]
		if nout*win[d] > shpWinTabLimit {
			continue // index computes it
		}
		t := make([]int64, nout*win[d])
		for o := int64(0); o < nout; o++ {
			for k := int64(0); k < win[d]; k++ {
				t[o*win[d]+k] = w.compute(d, o, k)
			}
		}
		w.tab[d] = t
	}
	return w, nil
}

// shpReduceWindow is stablehlo.reduce_window.
func shpReduceWindow(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, shpErrf("reduce_window takes inputs and as many init values, got %d operands", len(args))
	}
	n := len(args) / 2
	ts, err := shpTensorArgs(args)
	if err != nil {
		return nil, err
	}
	ins, inits := ts[:n], ts[n:]
	shape := ins[0].Shape
	r := shape.Rank()
	dts := make([]xla.DType, n)
	for k := range ins {
		if !ins[k].Shape.Equal(xla.MakeShape(ins[k].Shape.DType, shape.Dims...)) {
			return nil, shpErrf("inputs have different shapes (%v and %v)", shape, ins[k].Shape)
		}
		if inits[k].Shape.Rank() != 0 || inits[k].Shape.DType != ins[k].Shape.DType {
			return nil, shpErrf("init value %d is %v, want a rank-0 %v", k, inits[k].Shape, ins[k].Shape.DType)
		}
		dts[k] = ins[k].Shape.DType
	}
	if ins, inits, dts, err = shpPromote(op, ins, inits, dts); err != nil {
		return nil, err
	}
	win, ok, err := shpAttrInts(op, "window_dimensions")
	if err != nil {
		return nil, err
	}
	if !ok || len(win) != r {
		return nil, shpErrf("window_dimensions must have %d entries", r)
	}
	stride, err := shpAttrIntsDefault(op, "window_strides", r, 1)
	if err != nil {
		return nil, err
	}
	baseDil, err := shpAttrIntsDefault(op, "base_dilations", r, 1)
	if err != nil {
		return nil, err
	}
	winDil, err := shpAttrIntsDefault(op, "window_dilations", r, 1)
	if err != nil {
		return nil, err
	}
	lo, hi, err := shpPadding(op, "padding", r)
	if err != nil {
		return nil, err
	}
	for d := range win {
		if win[d] <= 0 {
			return nil, shpErrf("window_dimensions[%d] = %d must be positive", d, win[d])
		}
	}
	geo, err := shpNewWindow(shape.Dims, win, stride, baseDil, winDil, lo, hi, x.stopFlag())
	if err != nil {
		return nil, err
	}
	if len(op.Results) != n || len(op.Regions) != 1 {
		return nil, shpErrf("reduce_window has %d results and %d regions, want %d and 1", len(op.Results), len(op.Regions), n)
	}
	outs := make([]*Tensor, n)
	for k := range outs {
		sh, err := shpCheckShape(op, k, dts[k], geo.outDims)
		if err != nil {
			return nil, err
		}
		outs[k] = NewTensor(sh)
	}
	inStr := Strides(shape.Dims)
	if bops := shpRegionBinops(op.Regions[0], dts); bops != nil && shpAllSupported(bops, dts) {
		for k := range outs {
			shpReduceWindowFast(ins[k], outs[k], inits[k], bops[k], geo, inStr)
		}
	} else if err := shpReduceWindowGeneral(x, op.Regions[0], ins, inits, outs, geo, inStr); err != nil {
		if err == errStopped {
			err = x.Ctx.Err()
		}
		return nil, err
	}
	res := make([]Value, n)
	for k := range outs {
		res[k] = outs[k]
	}
	return res, nil
}

// shpWinWalk visits, for one output index, every window position in
// row-major order and reports the input offset (or -1 for padding).
type shpWinWalk struct {
	geo   *shpWindow
	str   []int64
	outIx []int64
	winIx []int64
	poll  stopCounter // looks at geo.stop now and then
}

func (w *shpWinWalk) offset() int64 {
	var off int64
	for d, k := range w.winIx {
		i := w.geo.index(d, w.outIx[d], k)
		if i < 0 {
			return -1
		}
		off += i * w.str[d]
	}
	return off
}

// each calls f for every window position of the current output index.
func (w *shpWinWalk) each(f func(off int64) error) error {
	w.poll.stop = w.geo.stop
	for d := range w.winIx {
		w.winIx[d] = 0
		if w.geo.winDims[d] == 0 {
			return nil
		}
	}
	for {
		if w.poll.add(1) {
			return errStopped
		}
		if err := f(w.offset()); err != nil {
			return err
		}
		d := len(w.winIx) - 1
		for ; d >= 0; d-- {
			w.winIx[d]++
			if w.winIx[d] < w.geo.winDims[d] {
				break
			}
			w.winIx[d] = 0
		}
		if d < 0 {
			return nil
		}
	}
}

// shpWinOffsets returns, for every output position (row-major) and the
// window position winIx, the input offset or -1 for padding.
func shpWinOffsets(geo *shpWindow, inStr []int64, outIx [][]int64, winIx []int64, idx []int) {
	for o, oi := range outIx {
		off := 0
		for d, k := range winIx {
			i := geo.index(d, oi[d], k)
			if i < 0 {
				off = -1
				break
			}
			off += int(i * inStr[d])
		}
		idx[o] = off
	}
}

// shpOutIndices lists the multi-indices of dims in row-major order.
func shpOutIndices(dims []int64) [][]int64 {
	var out [][]int64
	for o := shpNewOdo(dims, make([]int64, len(dims)), 0); !o.done; o.next() {
		out = append(out, append([]int64(nil), o.idx...))
	}
	return out
}

// shpReduceWindowVector folds every window position into vectors of all
// outputs, window positions in row-major order as the per-element path.
func shpReduceWindowVector(x *Exec, v *shpVecRegion, ins, inits, outs []*Tensor, geo *shpWindow, inStr []int64) error {
	n := len(ins)
	nOut := outs[0].Len()
	dts := make([]xla.DType, n)
	for k := range ins {
		dts[k] = ins[k].Shape.DType
	}
	outIx := shpOutIndices(geo.outDims)
	args := make([]*Tensor, 2*n)
	for k := range ins {
		acc, err := shpDoBroadcast(inits[k], nil, []int64{int64(nOut)})
		if err != nil {
			return err
		}
		args[k] = acc
	}
	idx := make([]int, nOut)
	for w := shpNewOdo(geo.winDims, make([]int64, len(geo.winDims)), 0); !w.done; w.next() {
		if err := x.Ctx.Err(); err != nil {
			return err
		}
		shpWinOffsets(geo, inStr, outIx, w.idx, idx)
		for k := range ins {
			xk := shpVecTensor(dts[k], int64(nOut))
			if err := shpTakeOr(xk, ins[k], inits[k], idx); err != nil {
				return err
			}
			args[n+k] = xk
		}
		res, err := v.run(x, args)
		if err != nil {
			return err
		}
		if err := shpVecResults(res, dts); err != nil {
			return err
		}
		copy(args, res)
	}
	for k := range outs {
		if err := shpCopy(outs[k], args[k], []int64{int64(nOut)}, 0, []int64{1}, 0, []int64{1}); err != nil {
			return err
		}
	}
	return nil
}

func shpReduceWindowGeneral(x *Exec, body *stablehlo.Region, ins, inits, outs []*Tensor, geo *shpWindow, inStr []int64) error {
	if nOut := int64(outs[0].Len()); nOut >= 2 {
		if v := shpVectorize(x, body, nOut); v != nil {
			return shpReduceWindowVector(x, v, ins, inits, outs, geo, inStr)
		}
	}
	n := len(ins)
	dts := make([]xla.DType, n)
	for k := range ins {
		dts[k] = ins[k].Shape.DType
	}
	acc, xs := shpScalars(dts), shpScalars(dts)
	args := make([]Value, 2*n)
	for k := 0; k < n; k++ {
		args[k], args[n+k] = acc[k], xs[k]
	}
	walk := &shpWinWalk{geo: geo, str: inStr, winIx: make([]int64, len(geo.winDims))}
	o := 0
	for out := shpNewOdo(geo.outDims, make([]int64, len(geo.outDims)), 0); !out.done; out.next() {
		walk.outIx = out.idx
		for k := 0; k < n; k++ {
			if err := shpSetElem(acc[k], 0, inits[k], 0); err != nil {
				return err
			}
		}
		err := walk.each(func(off int64) error {
			for k := 0; k < n; k++ {
				var err error
				if off < 0 {
					err = shpSetElem(xs[k], 0, inits[k], 0)
				} else {
					err = shpSetElem(xs[k], 0, ins[k], int(off))
				}
				if err != nil {
					return err
				}
			}
			return shpRunScalarRegion(x, body, args, acc)
		})
		if err != nil {
			return err
		}
		for k := 0; k < n; k++ {
			if err := shpSetElem(outs[k], o, acc[k], 0); err != nil {
				return err
			}
		}
		o++
	}
	return nil
}

func shpReduceWindowFast(in, out, init *Tensor, op shpBinop, geo *shpWindow, inStr []int64) {
	dt := in.Shape.DType
	switch d := in.Data.(type) {
	case []float32:
		f, _ := shpBinF32(op, dt)
		shpReduceWindowT(d, out.Data.([]float32), init.Data.([]float32)[0], f, geo, inStr)
	case []float64:
		f, _ := shpBinF64(op)
		shpReduceWindowT(d, out.Data.([]float64), init.Data.([]float64)[0], f, geo, inStr)
	case []bool:
		f, _ := shpBinBool(op)
		shpReduceWindowT(d, out.Data.([]bool), init.Data.([]bool)[0], f, geo, inStr)
	case []int8:
		f, _ := shpBinInt[int8](op)
		shpReduceWindowT(d, out.Data.([]int8), init.Data.([]int8)[0], f, geo, inStr)
	case []int16:
		f, _ := shpBinInt[int16](op)
		shpReduceWindowT(d, out.Data.([]int16), init.Data.([]int16)[0], f, geo, inStr)
	case []int32:
		f, _ := shpBinInt[int32](op)
		shpReduceWindowT(d, out.Data.([]int32), init.Data.([]int32)[0], f, geo, inStr)
	case []int64:
		f, _ := shpBinInt[int64](op)
		shpReduceWindowT(d, out.Data.([]int64), init.Data.([]int64)[0], f, geo, inStr)
	case []uint8:
		f, _ := shpBinInt[uint8](op)
		shpReduceWindowT(d, out.Data.([]uint8), init.Data.([]uint8)[0], f, geo, inStr)
	case []uint16:
		f, _ := shpBinInt[uint16](op)
		shpReduceWindowT(d, out.Data.([]uint16), init.Data.([]uint16)[0], f, geo, inStr)
	case []uint32:
		f, _ := shpBinInt[uint32](op)
		shpReduceWindowT(d, out.Data.([]uint32), init.Data.([]uint32)[0], f, geo, inStr)
	case []uint64:
		f, _ := shpBinInt[uint64](op)
		shpReduceWindowT(d, out.Data.([]uint64), init.Data.([]uint64)[0], f, geo, inStr)
	case []complex64:
		f, _ := shpBinArith[complex64](op)
		shpReduceWindowT(d, out.Data.([]complex64), init.Data.([]complex64)[0], f, geo, inStr)
	case []complex128:
		f, _ := shpBinArith[complex128](op)
		shpReduceWindowT(d, out.Data.([]complex128), init.Data.([]complex128)[0], f, geo, inStr)
	}
	shpRewrap(out)
}

func shpReduceWindowT[T any](in, out []T, init T, f func(a, b T) T, geo *shpWindow, inStr []int64) {
	if d := geo.cumulativeDim(); d >= 0 && shpCumulative && shpBitsEqual(f(init, init), init) {
		shpCumulativeT(in, out, init, f, geo, inStr, d)
		return
	}
	r := len(geo.winDims)
	winIx := make([]int64, r)
	o, poll := 0, stopCounter{stop: geo.stop}
	for oi := shpNewOdo(geo.outDims, make([]int64, r), 0); !oi.done; oi.next() {
		acc := init
		empty := false
		for d := range winIx {
			winIx[d] = 0
			if geo.winDims[d] == 0 {
				empty = true
			}
		}
		for !empty {
			if poll.add(1) {
				return // the run ended: the result is not used
			}
			var off int64
			pad := false
			for d, k := range winIx {
				i := geo.index(d, oi.idx[d], k)
				if i < 0 {
					pad = true
					break
				}
				off += i * inStr[d]
			}
			if pad {
				acc = f(acc, init)
			} else {
				acc = f(acc, in[off])
			}
			d := r - 1
			for ; d >= 0; d-- {
				winIx[d]++
				if winIx[d] < geo.winDims[d] {
					break
				}
				winIx[d] = 0
			}
			if d < 0 {
				break
			}
		}
		out[o] = acc
		o++
	}
}

// shpCumulative turns on the one-pass form of cumulative windows (a var
// for benchmarks to compare it with the window walk).
var shpCumulative = true

// cumulativeDim returns the dimension along which w is a cumulative
// reduction, as TPU programs write cumsum, cumprod, cummax and cummin: a
// window of the whole dimension with all but one element of low padding
// (output i covers inputs 0..i), and windows of one element, unpadded,
// along every other dimension; -1 when w is not one.
func (w *shpWindow) cumulativeDim() int {
	d := -1
	for e, n := range w.in {
		if w.stride[e] != 1 || w.baseDil[e] != 1 || w.winDil[e] != 1 || w.outDims[e] != n {
			return -1
		}
		switch {
		case w.winDims[e] == 1 && w.lo[e] == 0:
		case d < 0 && n > 1 && w.winDims[e] == n && w.lo[e] == n-1:
			d = e
		default:
			return -1
		}
	}
	return d
}

// shpCumulativeT is shpReduceWindowT for a cumulative window along d
// (see cumulativeDim), in one pass: output i is f(output i-1, input i),
// the first f(init, input 0). That is the window's own fold, operation
// for operation, when f(init, init) is init bit for bit: the padding
// steps before the first element then leave init as it was.
func shpCumulativeT[T any](in, out []T, init T, f func(a, b T) T, geo *shpWindow, inStr []int64, d int) {
	n, st := geo.in[d], inStr[d]
	lines := geo.in[:d:d]
	lines = append(lines, 1)
	lines = append(lines, geo.in[d+1:]...)
	poll := stopCounter{stop: geo.stop}
	for l := shpNewOdo(lines, inStr, 0); !l.done; l.next() {
		if poll.add(n) {
			return // the run ended: the result is not used
		}
		acc := init
		for i, off := int64(0), l.off; i < n; i, off = i+1, off+st {
			acc = f(acc, in[off])
			out[off] = acc
		}
	}
}

// shpBitsEqual reports whether a and b are the same value bit for bit
// (+0 and -0 differ, a NaN equals the same NaN).
func shpBitsEqual[T any](a, b T) bool {
	switch a := any(a).(type) {
	case float32:
		return math.Float32bits(a) == math.Float32bits(any(b).(float32))
	case float64:
		return math.Float64bits(a) == math.Float64bits(any(b).(float64))
	case complex64:
		c := any(b).(complex64)
		return shpBitsEqual(real(a), real(c)) && shpBitsEqual(imag(a), imag(c))
	case complex128:
		c := any(b).(complex128)
		return shpBitsEqual(real(a), real(c)) && shpBitsEqual(imag(a), imag(c))
	}
	return any(a) == any(b)
}
