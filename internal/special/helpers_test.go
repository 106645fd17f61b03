package special

import "math/cmplx"

// Forward functions from math/cmplx (independent of this package) used to
// check the inverses.
var (
	sinC  = cmplx.Sin
	cosC  = cmplx.Cos
	tanC  = cmplx.Tan
	sinhC = cmplx.Sinh
	coshC = cmplx.Cosh
	tanhC = cmplx.Tanh
	expC  = cmplx.Exp
	absC  = cmplx.Abs
)
