// Package stablehlo builds, prints, parses and rewrites StableHLO programs.
//
// The IR is generic (Module, Func, Op, Value, Block, Region, Attribute):
// every op of every dialect is an *Op, so programs with ops halo does not
// know still round-trip. The Builder adds typed constructors with shape
// inference and sticky errors; Print writes MLIR text (pretty or generic
// form) and Parse reads it back.
//
// Building a program: NewBuilder names the module; Builder.NewFunction
// adds a function with its argument types and returns a *FuncBuilder,
// whose methods (Add, DotGeneral, Reduce, While, CustomCall, ...) add ops
// and return their result Values; FuncBuilder.Return ends the function;
// Builder.Build returns the Module, or the first error any op met, naming
// the op and the Go file:line that built it. Reading one: Parse, then
// Module.Verify checks every op's operand and result types. Module.Walk
// visits the ops for rewriting.
package stablehlo
