// Package stablehlo builds, prints, parses and rewrites StableHLO programs.
//
// The IR is generic (Module, Func, Op, Value, Block, Region, Attribute):
// every op of every dialect is an *Op, so programs with ops halo does not
// know still round-trip. The Builder adds typed constructors with shape
// inference and sticky errors; Print writes MLIR text (pretty or generic
// form) and Parse reads it back.
package stablehlo
