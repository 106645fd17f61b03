// Package effects runs host callbacks from compiled programs with the
// ordering a single-threaded Go program would give them, although
// dispatch is asynchronous and the compiler may reorder side effects.
//
// It follows JAX's design for serialized side effects: compiler tokens
// order the effects inside a computation, runtime tokens order
// computations of the same effect across asynchronous dispatch (also on
// different devices), and output tokens let a caller wait for
// computations that have effects but no outputs.
//
// # Programs
//
// Build with the stablehlo builder and add callbacks:
//
//	fb := b.NewFunction("main", stablehlo.Scalar(xla.Float32))
//	effects.Print(fb, "x = %v", fb.Arg(0))          // ordered, effect "print"
//	res, err := effects.Callback(fb, effects.HostFunc{Name: "f", Fn: f,
//		Results: []xla.Shape{xla.MakeShape(xla.Float32)}}, effects.Ordered("log"), fb.Arg(0))
//
// A callback is a stablehlo.custom_call to Target with has_side_effect =
// true and api_version = 4 (typed FFI); its backend_config carries
// pjrt.FFICallbackAttr (which routes the call to the Go handler), the id
// of the Go function in the process's callback table (FuncAttr), its name
// and, for an ordered callback, its effect's name. Ordered effects are
// identified by name (Ordered("log")); each has its own token chain.
// Unordered callbacks are not ordered against anything but still awaited
// by Barrier.
//
// Lower (called by Compile) threads the tokens: every function that holds
// ordered callbacks, directly or through calls, takes and returns one
// !stablehlo.token per ordered effect (sorted by name) before its own
// values; an ordered callback takes its effect's token as operand 0 and
// returns the next as result 0, so the callbacks of an effect form one
// data-dependency chain in program order; calls (a stablehlo.composite
// whose decomposition has ordered effects becomes a call of it),
// stablehlo.while (as
// loop-carried values), if and case (as extra results of every branch)
// carry the tokens of the effects used inside them. Ordered callbacks in
// a while condition or in other regions (reduce, sort, map ...) are an
// error: those regions cannot return a token.
//
// # Runtime tokens and devices
//
// The entry function's leading token parameters and results are the
// runtime tokens. On the interpreter they are token buffers
// (!stablehlo.token parameters on main). PJRT plugins may not create
// token buffers, so for every other backend Compile lowers with
// TokenArrays, as JAX does: main takes and returns a tensor<0xi1> per
// effect, starts each compiler chain with stablehlo.after_all, and
// returns a constant; the runtime token is then a zero-size array that is
// ready when the computation has finished (strict execution: a
// computation starts when all its inputs are ready and its outputs are
// ready together), so data dependency still orders the computations.
// TokenArraysFor says which a client gets; Lower takes the choice
// explicitly. Errors Execute returns name the caller's arguments; an
// error the backend reports later, while the computation runs (an input
// that failed after it was dispatched, seen by Barrier or on the
// outputs), counts the runtime tokens too: its argument k is the
// caller's argument k - len(Executable.Ordered()).
//
// # Streams
//
// Go has no thread-local storage, so where JAX keeps the runtime tokens
// per Python thread, halo keeps them per Stream: Default, used by Execute
// and Barrier, and NewStream for a goroutine that wants its own order.
// Stream.Execute passes the current runtime token of each of the
// executable's ordered effects (copied to the target device when it lives
// on another one) and makes a new one current. The caller never waits:
// the backend starts a computation when its inputs are ready, and holds
// its arguments until it has read them, so they may be closed as soon as
// Execute returns.
//
// How the new token is made depends on the backend. On the interpreter
// the computation's token result becomes the chain's token directly: the
// interpreter runs a computation whose token argument's producer failed
// (a token carries order, not data), so a failed callback does not poison
// the chain, and no per-call alias buffer or goroutine is needed. On other
// backends the new token is an alias buffer (pjrt.Client.CreateAliasBuffer)
// that a small per-chain relay goroutine fulfils with the computation's
// token result when it is ready, or, if the computation failed, with the
// token the computation took: later computations of the effect still run,
// in order. Backends without alias buffers get the token results
// themselves (a failure then fails the later computations of that effect
// too).
//
// Every computation with effects leaves its completion event (its output
// token) with the stream. Stream.Barrier waits for every runtime and
// output token of the stream and returns the first error since the last
// Barrier (then clears it): a *CallbackError when a callback failed or
// panicked, naming the callback. BarrierAll does that for every stream.
// Streams do not wait for each other. Stream.Close waits like Barrier and
// then releases the stream's runtime tokens and execute contexts (the
// stream stays usable; its next computations start new chains).
//
// # Lifetimes
//
// A program names its callbacks by id in the process's callback table. An
// entry lives while a module that calls it is reachable (the one Callback
// built into, or Lower's copy) or an Executable compiled from one is open
// (Executable.Close, or its collection when dropped unclosed, once what it
// dispatched has finished), and is removed after that; compiling a program whose
// callbacks were removed (e.g. parsed from text later) is an error. What
// the package keeps per client (token sources, the streams' chains and
// execute contexts) is dropped when the client is closed
// (pjrt.Client.OnClose).
//
// # Transport: typed FFI
//
// Callbacks reach Go through one typed-FFI handler registered with
// pjrt.Plugin.RegisterFFIHandler (Register; Compile calls it once per
// plugin), on the interpreter (registered custom-call targets) and on the
// CUDA plugin's FFI extension alike, rather than through host send/recv
// transfers: the handler gets typed buffers with their shapes and the
// custom call's attributes, needs no host-transfer channels, rendezvous or
// PJRT_ExecuteOptions send/recv callbacks, and the program text is the same
// on every backend. The handler finds the Stream that ran the computation
// through FFI user data of the Stream's execute context, records callback
// errors there, and turns errors and panics into a failed execution. On
// GPU plugins the operands and results are device memory: the handler
// copies them with the CUDA driver (cuMemcpy*Async on the call's stream,
// then cuStreamSynchronize), loaded with purego on first use.
//
// # Limits
//
// Programs with effects run on one device (one replica, one partition).
// The CUDA path (callbacks reading device arrays, ordered prints, the relay
// of runtime tokens through alias buffers) ran on an H100 through XLA's
// CUDA plugin (docs/gpu-validation.md); on the interpreter the relay is
// tested with token arrays (LowerOptions.TokenArrays).
package effects
