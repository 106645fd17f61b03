// Package chlo builds and decomposes CHLO ("client HLO") ops: the ops JAX
// emits beside StableHLO, such as chlo.erf, chlo.lgamma, chlo.top_k and
// the chlo.broadcast_* family.
//
// Building: one function per op (Erf, Lgamma, TopK, BroadcastAdd,
// BroadcastCompare, ConstantLike ...) adds it to a stablehlo.FuncBuilder
// with shape inference (numpy broadcasting, or explicit
// broadcast_dimensions; i1 results for the predicates and compare; top_k's
// [..., k] values and i32 indices) and element-type checks (the special
// functions take floats; the trigonometric and hyperbolic ops also
// complex numbers, and bessel_i1e, as upstream CHLO, accepts them too,
// though no backend here evaluates it on them). Errors are sticky like
// every builder op's: the first one, with the op, its operand types and
// the caller's file:line, comes out of Build; nothing panics. The parser,
// the printer and Verify of package stablehlo know the same ops
// (stablehlo.ChloOps lists them); chlo.scan and chlo.mulhi, parsed,
// printed and evaluated, have no function here: build them with
// FuncBuilder.Op.
//
// Evaluating: the built-in interpreter evaluates CHLO ops directly, in
// float64 internally, so programs lowered by JAX run as they are. Real
// PJRT plugins accept CHLO too.
//
// Building also covers chlo.ragged_dot (RaggedDot, RaggedDotWith): the
// typed stablehlo.RaggedDotDimensionNumbers attribute, its three modes
// (ragged non-contracting, contracting, batch; stablehlo.RaggedDotMode),
// group_sizes of shape [g] or batched [prefix..., g], and the result type
// inferred by upstream CHLO's rules. top_k rejects complex operands, as JAX
// does (complex numbers have no order).
//
// Decomposing: Expand rewrites CHLO ops into pure StableHLO, for a backend
// that lacks an op or a user who wants StableHLO only. Every CHLO op of the
// ops JAX emits has a decomposition: the broadcast_* ops (broadcast_in_dim
// and the elementwise op), broadcast_select, constant, constant_like,
// is_inf / is_pos_inf / is_neg_inf, square and conj, tan, sinh and cosh,
// asin, acos, atan, asinh, acosh and atanh (real and complex), next_after
// (bit-pattern arithmetic in the operand's own type), erf, erfc, erf_inv,
// lgamma, digamma, bessel_i1e, zeta, polygamma, igamma and igammac (for
// a >= 100 and |x-a| <= 0.4a Temme's uniform asymptotic expansion
// Q = ½ erfc(η√(a/2)) + R_a(η), P = ½ erfc(-η√(a/2)) - R_a(η), straight-line
// code accurate for any a up to the float64 range; elsewhere a series for
// x < a+1, Lentz's continued fraction otherwise, each a while loop until
// every element has converged, with the prefix x^a e^-x/Γ(a) in a scaled
// form that does not cancel for a >= 100; igammac for a <= 1/4, x < 5/4
// by the small-a form Q = (1 - x^a/Γ(1+a)) - x^a/Γ(1+a)·a·Σ_{n>=1}
// (-x)^n/(n!(a+n)), without the cancellation of 1 - P), top_k (a stable sort with an
// index iota, then a slice) and ragged_dot (group ids from running sums of
// group_sizes; a per-row gather of the rhs group and one dot_general in
// the non-contracting mode, a one-hot group mask in the contracting mode
// — g times the work of the dense dot there, as every result group is a
// full block — and a masked batched dot in the batch mode). The complex
// inverse functions are Kahan's formulas on a square root that keeps the
// sign of a zero part, with the special values of C99 Annex G by selects,
// as the interpreter's kernels: branch cuts take the side the signed zero
// points to. An op Expand cannot rewrite (chlo.scan, chlo.mulhi, dynamic
// shapes, bessel_i1e or the special functions of complex numbers, which
// neither JAX nor the interpreter define) is an error naming the op and
// its type, and the module is left unchanged.
//
// The special functions are computed in float64 (f16, bf16 and f32 inputs
// are widened and the result rounded once) from textbook formulas: erf by
// its all-positive power series below 2 and Laplace's continued fraction
// for erfc above 1.5; erf_inv by Winitzki's closed form refined by three
// Halley steps; lgamma by the Lanczos approximation (g = 7, n = 9) with the
// reflection formula; digamma by a ten-step shift and the asymptotic
// series, with reflection, and -log|x| for subnormal x; zeta by
// Euler–Maclaurin summation (the tail as a^(1-s) times a sum, so that huge
// q does not underflow early); polygamma as (-1)^(n+1) n! ζ(n+1, x),
// through logs with ζ scaled by x^(n+1) where n! overflows or ζ
// underflows; bessel_i1e by its power series below 30 and
// the asymptotic expansion above. Accuracy, measured by the tests over
// dense sweeps (about 2000 points each, plus special values) against
// float64 references (package math, a 256-bit series for bessel_i1e,
// direct summation for zeta): every f32 and bf16 result is the correctly
// rounded value of the reference (0 ulp), but for f32 lgamma within a few
// ulp of its zeros (1, 2, -2.457..., -2.747...), 1 ulp off at 13 of 16,000
// points there in an mpmath survey (2026-11-27), as the f64 computation's
// absolute error shows in those tiny results; f64 results are within 10 ulp
// for erf and bessel_i1e, 70 for erfc, 25 for erf_inv, 3 for sinh, cosh,
// asinh and acosh, 0 for asin and acos (against atan2 of √((1-x)(1+x)),
// accurate near ±1 where math.Acos is not), 170 for atanh on the sweep
// (about 1 against mpmath, also next to -1), and within 1e-14 absolute for
// lgamma and digamma (whose relative error grows near their zeros). An
// mpmath survey (2026-11-27, about 50k points) found the f64 decomposition
// of polygamma up to about 1,200 ulp off for 16 <= n <= 170 (n! as
// exp(lgamma(n+1)), exact only to 15!), and f64 igamma's up to a few
// hundred ulp on tiny results (its prefix uses the Lanczos lgamma); the
// interpreter's kernels are within 12 ulp and about 500 ulp there. A
// review's mpmath survey (2026-11-28) found two more f64 limits, on both
// paths: polygamma for n > 170 about 100-230 ulp off (n! and ζ through
// logs), and tan of huge arguments (beyond 2^29, where Go's math.Tan
// reduces them) up to about 600 ulp off next to a pole, 1.3e-13 relative;
// f32, bf16 and f16 tan were correctly rounded. The special values follow the interpreter: NaN in, NaN out;
// erf_inv(±1) = ±Inf and NaN beyond; lgamma +Inf at the poles; digamma
// -Inf at 0 and NaN at the negative integers. Against the interpreter's
// kernels: igamma and igammac agree to 0 ulp in f32, bf16 and f16 and
// within 2e-13 relative in f64 (a in [1e-3, 150], x in a·[1e-2, 1e2]), and
// for a from 100 to 1e15 both are within 2e-15·(1 + aφ) relative of
// 256-bit references in f64 (aφ ≈ (x-a)²/(2a), the exponent of the
// result) and 1 ulp in f32; the
// complex inverse functions to 0 ulp (complex64) and 1 ulp (complex128)
// over a 1600-point grid with the cuts, signed zeros, infinities and NaN;
// ragged_dot exactly on exactly representable data (integers in their
// own type, wrapping as dot_general; complex numbers in complex).
package chlo
