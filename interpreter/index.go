package interpreter

// Strides returns the row-major element strides of dims.
func Strides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	n := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = n
		n *= dims[i]
	}
	return s
}

// NextIndex advances a multi-dimensional index in row-major order and
// reports whether it wrapped around (the iteration is over).
func NextIndex(idx, dims []int64) bool {
	for i := len(idx) - 1; i >= 0; i-- {
		idx[i]++
		if idx[i] < dims[i] {
			return false
		}
		idx[i] = 0
	}
	return true
}

// Offset is the row-major position of idx given strides.
func Offset(idx, strides []int64) int64 {
	var o int64
	for i, x := range idx {
		o += x * strides[i]
	}
	return o
}
