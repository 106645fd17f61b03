// Package special holds float64 special functions that Go's math package
// lacks (digamma, polygamma, Hurwitz zeta, regularized incomplete gamma,
// the exponentially scaled modified Bessel function I1e, a full-precision
// inverse error function, nextafter with C semantics), and complex
// elementary functions with the special values and branch-cut sides of
// C99 Annex G, which math/cmplx does not always give.
//
// The interpreter evaluates the CHLO ops with them: narrow floats and
// float32 are computed in float64 and rounded once.
//
// The algorithms are the classical ones: recurrences and reflection,
// asymptotic (Stirling-type and Euler-Maclaurin) expansions with Bernoulli
// numbers, power series and Lentz's continued fraction, and Kahan's
// formulas for the complex inverse functions ("Branch cuts for complex
// elementary functions", 1987).
package special
