package interpreter

import (
	"fmt"
	"math/bits"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// chlo.scan and chlo.mulhi.
//
// chlo.scan(inputs...) inits(carries...) dimension=d runs its body once per
// index along dimension d of the inputs (from the end when is_reverse):
// the body takes the inputs' slices at that index (dimension d removed) and
// the carries, and returns the outputs' slices, then the new carries. The
// results are the outputs (the slices stacked along d) then the final
// carries. The split of the operands is the op's operandSegmentSizes
// (array<i32: #inputs, #inits>), which the pretty form writes.
//
// chlo.mulhi(x, y) is the high half of the double-width product of two
// integers of one type (signed or unsigned).

func init() {
	registerKernel("chlo.scan", kernelScan)
	registerKernel("chlo.mulhi", kernelMulhi)
}

// ScanSegments returns how many operands of a chlo.scan are inputs and how
// many are initial carries.
func scanSegments(op *stablehlo.Op) (inputs, inits int, err error) {
	a, ok := op.Attr("operandSegmentSizes").(stablehlo.DenseArrayAttr)
	if !ok || len(a.Values) != 2 || a.Values[0] < 0 || a.Values[1] < 0 || int(a.Values[0]+a.Values[1]) != len(op.Operands) {
		return 0, 0, fmt.Errorf("needs operandSegmentSizes = array<i32: inputs, inits> summing to its %d operands", len(op.Operands))
	}
	return int(a.Values[0]), int(a.Values[1]), nil
}

func kernelScan(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	nIn, nInit, err := scanSegments(op)
	if err != nil {
		return nil, err
	}
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	if len(op.Regions) != 1 {
		return nil, fmt.Errorf("needs one body region, has %d", len(op.Regions))
	}
	nOut := len(op.Results) - nInit
	if nOut < 0 {
		return nil, fmt.Errorf("has %d results for %d carries", len(op.Results), nInit)
	}
	dim, present, err := shpAttrInt(op, "dimension")
	if err != nil || !present {
		return nil, fmt.Errorf("needs an integer dimension attribute")
	}
	reverse, err := shpAttrBool(op, "is_reverse")
	if err != nil {
		return nil, err
	}
	// n is the scan length: the inputs' (and outputs') size along dim.
	n := int64(-1)
	var outShapes []xla.Shape
	for i := 0; i < nOut; i++ {
		rt, err := ResultTensorType(op, i)
		if err != nil {
			return nil, err
		}
		outShapes = append(outShapes, rt.Shape())
	}
	for _, s := range append(inputShapes(ts[:nIn]), outShapes...) {
		if dim < 0 || int(dim) >= len(s.Dims) {
			return nil, fmt.Errorf("dimension %d is out of range for %v", dim, s)
		}
		if n >= 0 && s.Dims[dim] != n {
			return nil, fmt.Errorf("inputs and outputs disagree on the size of dimension %d (%d and %d)", dim, n, s.Dims[dim])
		}
		n = s.Dims[dim]
	}
	if n < 0 {
		return nil, fmt.Errorf("has neither inputs nor outputs to scan")
	}
	inBytes := make([][]byte, nIn)
	for i, t := range ts[:nIn] {
		inBytes[i] = t.Host()
	}
	outBytes := make([][]byte, nOut)
	for i, s := range outShapes {
		if err := canAllocate(s); err != nil {
			return nil, err
		}
		outBytes[i] = make([]byte, int(s.Size())*s.DType.HostBytes())
	}
	carries := make([]Value, nInit)
	for i := range carries {
		carries[i] = ts[nIn+i]
	}
	for step := int64(0); step < n; step++ {
		k := step
		if reverse {
			k = n - 1 - step
		}
		bodyArgs := make([]Value, 0, nIn+nInit)
		for i, t := range ts[:nIn] {
			s, err := scanSlice(t.Shape, inBytes[i], dim, k)
			if err != nil {
				return nil, err
			}
			bodyArgs = append(bodyArgs, s)
		}
		bodyArgs = append(bodyArgs, carries...)
		res, err := x.RunRegion(op.Regions[0], bodyArgs)
		if err != nil {
			return nil, err
		}
		if len(res) != nOut+nInit {
			return nil, fmt.Errorf("body returns %d values, want %d outputs and %d carries", len(res), nOut, nInit)
		}
		for i := 0; i < nOut; i++ {
			t, ok := res[i].(*Tensor)
			if !ok || t == nil {
				return nil, fmt.Errorf("body output %d is %T, want a tensor", i, res[i])
			}
			if err := scanPlace(outShapes[i], outBytes[i], dim, k, t); err != nil {
				return nil, fmt.Errorf("body output %d: %w", i, err)
			}
		}
		copy(carries, res[nOut:])
	}
	out := make([]Value, 0, nOut+nInit)
	for i, s := range outShapes {
		t, err := TensorFromHost(s, outBytes[i])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return append(out, carries...), nil
}

func inputShapes(ts []*Tensor) []xla.Shape {
	out := make([]xla.Shape, len(ts))
	for i, t := range ts {
		out[i] = t.Shape
	}
	return out
}

// scanGeometry returns how many runs of inner bytes precede dim (outer),
// and the bytes of one index along dim (inner).
func scanGeometry(s xla.Shape, dim int64) (outer, inner int) {
	outer, inner = 1, s.DType.HostBytes()
	for i, d := range s.Dims {
		switch {
		case int64(i) < dim:
			outer *= int(d)
		case int64(i) > dim:
			inner *= int(d)
		}
	}
	return outer, inner
}

// scanSlice returns index k along dim of the tensor held in host bytes,
// with dim removed.
func scanSlice(s xla.Shape, data []byte, dim, k int64) (*Tensor, error) {
	outer, inner := scanGeometry(s, dim)
	n := int(s.Dims[dim])
	buf := make([]byte, outer*inner)
	for o := 0; o < outer; o++ {
		src := (o*n + int(k)) * inner
		copy(buf[o*inner:(o+1)*inner], data[src:src+inner])
	}
	dims := append(append([]int64{}, s.Dims[:dim]...), s.Dims[dim+1:]...)
	return TensorFromHost(xla.Shape{DType: s.DType, Dims: dims}, buf)
}

// scanPlace writes t as index k along dim of the host bytes of shape s.
func scanPlace(s xla.Shape, data []byte, dim, k int64, t *Tensor) error {
	want := append(append([]int64{}, s.Dims[:dim]...), s.Dims[dim+1:]...)
	if t.Shape.DType != s.DType || !(xla.Shape{DType: s.DType, Dims: want}).Equal(t.Shape) {
		return fmt.Errorf("is %v, want %v", t.Shape, xla.Shape{DType: s.DType, Dims: want})
	}
	outer, inner := scanGeometry(s, dim)
	n := int(s.Dims[dim])
	src := t.Host()
	for o := 0; o < outer; o++ {
		dst := (o*n + int(k)) * inner
		copy(data[dst:dst+inner], src[o*inner:(o+1)*inner])
	}
	return nil
}

func kernelMulhi(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	ts, err := tensorArgs(args)
	if err != nil {
		return nil, err
	}
	if len(ts) != 2 {
		return nil, fmt.Errorf("takes 2 operands, got %d", len(ts))
	}
	a, b := ts[0], ts[1]
	dt := a.Shape.DType
	if !a.Shape.Equal(b.Shape) {
		return nil, fmt.Errorf("operands %v and %v differ", a.Shape, b.Shape)
	}
	if !dt.IsInt() {
		return nil, fmt.Errorf("needs integer operands, got %v", dt)
	}
	out := NewTensor(a.Shape)
	w := uint(dt.Bits())
	av, bv := a.Host(), b.Host()
	eb := dt.HostBytes()
	res := make([]byte, len(av))
	for i := 0; i < a.Len(); i++ {
		x, y := hostInt(av[i*eb:(i+1)*eb], w, dt.IsUnsigned()), hostInt(bv[i*eb:(i+1)*eb], w, dt.IsUnsigned())
		var hi uint64
		switch {
		case w == 64 && dt.IsUnsigned():
			hi, _ = bits.Mul64(x, y)
		case w == 64:
			// Signed high word from the unsigned one: subtract y when x < 0
			// and x when y < 0.
			hi, _ = bits.Mul64(x, y)
			if int64(x) < 0 {
				hi -= y
			}
			if int64(y) < 0 {
				hi -= x
			}
		case dt.IsUnsigned():
			hi = (x * y) >> w // the product of two w-bit values fits in 64 bits
		default:
			hi = uint64((int64(x) * int64(y)) >> w)
		}
		for k := 0; k < eb; k++ {
			res[i*eb+k] = byte(hi >> (8 * k))
		}
	}
	t, err := TensorFromHost(out.Shape, res)
	if err != nil {
		return nil, err
	}
	return []Value{t}, nil
}

// hostInt reads a little-endian integer of w bits (sign-extended when
// signed) from host bytes.
func hostInt(b []byte, w uint, unsigned bool) uint64 {
	var u uint64
	for k := range b {
		u |= uint64(b[k]) << (8 * k)
	}
	if w < 64 {
		u &= 1<<w - 1
		if !unsigned && u>>(w-1) != 0 {
			u |= ^uint64(0) << w
		}
	}
	return u
}
