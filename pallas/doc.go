// Package pallas writes accelerator kernels in Go, in the style of JAX
// Pallas, and embeds them in StableHLO programs built with the stablehlo
// builder.
//
// A kernel is a Go function over refs (KernelFunc): it reads blocks from
// refs (Ref.Load, Load with masks), computes on block values (Value's
// arithmetic, comparisons, math functions, reductions, Dot, Where) and
// writes blocks back (Ref.Store, Store), or updates elements atomically
// (AtomicAdd and the other Atomic functions: programs of a GPU grid may
// add into the same elements). ProgramID and NumPrograms say
// where in the grid a step runs; When, ForLoop and While are control flow
// on traced values, while Go's own control flow and closures template the
// kernel at trace time (an activation passed in, block sizes as Go ints).
//
// Call traces the kernel once into the kernel IR (Program, see ir.go),
// then a backend lowers it: Interpret (the default) emits StableHLO that
// runs the grid as one while loop, on the built-in interpreter or any XLA
// backend (with its bounds checks, a custom call: see Register); other
// backends (Triton) register themselves with
// RegisterBackend. Errors of tracing name the kernel, the op and the
// user's file:line and are recorded on the builder like the builder's own.
//
// Interpret mode checks unmasked loads and stores against the ref bounds at
// run time (CompilerParams.NoBoundsChecks turns it off); a failed check
// fails the run with an error wrapping a *BoundsError (errors.As finds it)
// naming the kernel, the grid point, the access and the index. The check
// calls a Go handler, which pjrt.Client.Compile registers with a plugin
// when a program calls it (Register does it ahead of time).
//
// Vmap batches a call: a leading grid axis over the batch and block specs
// rewritten to pick each batch element.
//
// The package's examples show a first kernel (Example), the traced IR
// (ExampleTrace), masked loads and stores, scalar prefetch driving index
// maps, Vmap, bounds-check errors, atomic updates (ExampleAtomicAdd, a
// hash table's slots claimed with ExampleAtomicCas), joins and splits,
// scans of one's own (ExampleAssociativeScan), Cond and
// the Triton lowering.
//
// docs/pallas.md in the repository is the guide: the kernel language next
// to JAX Pallas, what each lowering guarantees, and the two forms of a
// block-sparse kernel.
package pallas
