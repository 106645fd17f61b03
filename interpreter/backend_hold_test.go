package interpreter

import (
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/pjrt/backend"
	"github.com/halo-ml/halo/xla"
)

// openBackend opens an interpreter backend client with n devices.
func openBackend(t *testing.T, n int) *client {
	t.Helper()
	c, err := thePlugin.NewClient([]backend.NamedValue{{Name: "device_count", Value: int64(n)}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.(*client)
}

func compileBackend(t *testing.T, c *client, text string) *executable {
	t.Helper()
	e, err := c.Compile([]byte(text), "mlir", nil)
	require.NoError(t, err)
	return e.(*executable)
}

var f32x2 = xla.MakeShape(xla.Float32, 2)

func f32Buffer(t *testing.T, c *client, v ...float32) *buffer {
	t.Helper()
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	b, _, err := c.BufferFromHost(backend.HostBuffer{Data: raw, Shape: xla.MakeShape(xla.Float32, int64(len(v)))}, nil, nil)
	require.NoError(t, err)
	return b.(*buffer)
}

// await waits for ev without a timing assertion: a minute only turns a
// hang into a failure.
func await(t *testing.T, ev backend.Event) error {
	t.Helper()
	select {
	case <-ev.Done():
		return ev.Err()
	case <-time.After(time.Minute):
		t.Fatal("event did not fire")
		return nil
	}
}

func readF32(t *testing.T, b backend.Buffer) []float32 {
	t.Helper()
	n, err := b.HostSize()
	require.NoError(t, err)
	raw := make([]byte, n)
	ev, err := b.ToHost(raw)
	require.NoError(t, err)
	require.NoError(t, await(t, ev))
	out := make([]float32, n/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// dropped reports whether a deleted buffer has let go of its value.
func dropped(b *buffer) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.deleted && b.val == nil && b.holds == 0
}

const (
	// addProgram is cheap (runs inline when its arguments are ready).
	addProgram = `func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %y : tensor<2xf32>
  return %0 : tensor<2xf32>
}`
	// addLoopProgram is not cheap (a while loop): it always runs in a
	// goroutine.
	addLoopProgram = `func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<2xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %c1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i32>
      %s = stablehlo.add %acc, %y : tensor<2xf32>
      stablehlo.return %n, %s : tensor<i32>, tensor<2xf32>
    }
  return %r#1 : tensor<2xf32>
}`
)

// An execution holds its arguments until it has read them: closing or
// deleting them right after Execute (PJRT semantics) does not fail it,
// whether the arguments are ready, pending alias buffers or pending
// outputs of another execution; the values are dropped once read.
func TestBackendExecuteHoldsArguments(t *testing.T) {
	release := map[string]func(backend.Buffer) error{
		"Close":  func(b backend.Buffer) error { return b.Close() },
		"Delete": func(b backend.Buffer) error { return b.Delete() },
	}
	for _, tc := range []struct {
		name    string
		program string
		pending bool // the first argument is an alias buffer given after Execute
	}{
		{"ready, inline", addProgram, false},
		{"ready, goroutine", addLoopProgram, false},
		{"pending alias", addProgram, true},
		{"pending alias, goroutine", addLoopProgram, true},
	} {
		for how, rel := range release {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				c := openBackend(t, 1)
				e := compileBackend(t, c, tc.program)
				x, y := f32Buffer(t, c, 1, 2), f32Buffer(t, c, 10, 20)
				arg := x
				var fill backend.AliasFulfiller
				if tc.pending {
					a, f, err := c.CreateAliasBuffer(f32x2, nil)
					require.NoError(t, err)
					arg, fill = a.(*buffer), f
				}
				outs, _, err := e.Execute([][]backend.Buffer{{arg, y}}, backend.ExecuteOptions{})
				require.NoError(t, err)
				require.NoError(t, rel(arg))
				require.NoError(t, rel(y))
				assert.True(t, arg.IsDeleted(), "the caller's view: deleted at once")
				if fill != nil {
					require.NoError(t, fill.Fulfill(x, 0, ""))
					require.NoError(t, x.Close())
				}
				assert.Equal(t, []float32{11, 22}, readF32(t, outs[0][0]))
				assert.True(t, dropped(arg), "the value is dropped once the execution has read it")
				assert.True(t, dropped(y))
				_, _, err = e.Execute([][]backend.Buffer{{arg, y}}, backend.ExecuteOptions{})
				require.Error(t, err, "a buffer deleted before Execute is still an error")
				assert.Contains(t, err.Error(), "was deleted")
			})
		}
	}
}

// Closing the output of a pending execution that a second pending
// execution takes: the second still reads it.
func TestBackendExecuteHoldsPendingOutputs(t *testing.T) {
	c := openBackend(t, 1)
	e := compileBackend(t, c, addLoopProgram)
	gate, fill, err := c.CreateAliasBuffer(f32x2, nil)
	require.NoError(t, err)
	y := f32Buffer(t, c, 1, 1)
	first, _, err := e.Execute([][]backend.Buffer{{gate, y}}, backend.ExecuteOptions{})
	require.NoError(t, err)
	second, _, err := e.Execute([][]backend.Buffer{{first[0][0], y}}, backend.ExecuteOptions{})
	require.NoError(t, err)
	require.NoError(t, first[0][0].Close())
	require.NoError(t, gate.Close())
	require.NoError(t, y.Close())
	require.NoError(t, fill.Fulfill(f32Buffer(t, c, 5, 6), 0, ""))
	assert.Equal(t, []float32{7, 8}, readF32(t, second[0][0]))
	assert.True(t, dropped(first[0][0].(*buffer)))
}

// Copies, transfers to the host and alias fulfilments of a pending buffer
// hold it too.
func TestBackendPendingUsesHoldTheirSource(t *testing.T) {
	for _, tc := range []struct {
		name string
		use  func(t *testing.T, c *client, src backend.Buffer) func() []float32
	}{
		{"CopyToDevice", func(t *testing.T, c *client, src backend.Buffer) func() []float32 {
			cp, err := src.CopyToDevice(c.devs[1])
			require.NoError(t, err)
			return func() []float32 { return readF32(t, cp) }
		}},
		{"CopyToMemory", func(t *testing.T, c *client, src backend.Buffer) func() []float32 {
			cp, err := src.CopyToMemory(c.host)
			require.NoError(t, err)
			return func() []float32 { return readF32(t, cp) }
		}},
		{"ToHost", func(t *testing.T, c *client, src backend.Buffer) func() []float32 {
			raw := make([]byte, 8)
			ev, err := src.ToHost(raw)
			require.NoError(t, err)
			return func() []float32 {
				require.NoError(t, await(t, ev))
				return []float32{math.Float32frombits(binary.LittleEndian.Uint32(raw)), math.Float32frombits(binary.LittleEndian.Uint32(raw[4:]))}
			}
		}},
		{"Fulfill", func(t *testing.T, c *client, src backend.Buffer) func() []float32 {
			a, f, err := c.CreateAliasBuffer(f32x2, nil)
			require.NoError(t, err)
			require.NoError(t, f.Fulfill(src, 0, ""))
			return func() []float32 { return readF32(t, a) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openBackend(t, 2)
			src, fill, err := c.CreateAliasBuffer(f32x2, nil)
			require.NoError(t, err)
			read := tc.use(t, c, src)
			require.NoError(t, src.Delete())
			require.NoError(t, fill.Fulfill(f32Buffer(t, c, 3, 4), 0, ""))
			assert.Equal(t, []float32{3, 4}, read())
			assert.True(t, dropped(src.(*buffer)))
			_, err = src.CopyToDevice(c.devs[1])
			assert.Error(t, err, "a deleted buffer cannot be copied")
		})
	}
}

// A !stablehlo.token argument whose producer failed orders the execution
// but does not fail it; a failed array argument fails it.
func TestBackendFailedTokenArgument(t *testing.T) {
	c := openBackend(t, 1)
	e := compileBackend(t, c, `func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> (!stablehlo.token, tensor<2xf32>) {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %t, %0 : !stablehlo.token, tensor<2xf32>
}`)
	failedTok, err := c.CreateErrorBuffer(xla.Shape{DType: xla.Invalid}, nil, codeInternal, "producer failed")
	require.NoError(t, err)
	failedX, err := c.CreateErrorBuffer(f32x2, nil, codeInternal, "producer failed")
	require.NoError(t, err)
	okTok, err := c.CreateErrorBuffer(xla.Shape{DType: xla.Invalid}, nil, 0, "")
	require.NoError(t, err)
	okTok.(*buffer).ready = okEvent
	for _, tc := range []struct {
		name    string
		tok, x  backend.Buffer
		wantErr string
	}{
		{"failed token", failedTok, f32Buffer(t, c, 1, 2), ""},
		{"failed array", okTok, failedX, "producer failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outs, events, err := e.Execute([][]backend.Buffer{{tc.tok, tc.x}}, backend.ExecuteOptions{WantCompletionEvents: true})
			require.NoError(t, err)
			err = await(t, events[0])
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []float32{2, 4}, readF32(t, outs[0][1]))
			require.NoError(t, await(t, outs[0][0].(*buffer).ready), "the token result is ready and not failed")
		})
	}
	// The token argument still orders: the execution waits for it.
	gate, fill, err := c.CreateAliasBuffer(xla.Shape{DType: xla.Invalid}, nil)
	require.NoError(t, err)
	outs, _, err := e.Execute([][]backend.Buffer{{gate, f32Buffer(t, c, 1, 2)}}, backend.ExecuteOptions{})
	require.NoError(t, err)
	assert.False(t, outs[0][1].(*buffer).ready.fired(), "ran before its token was ready")
	require.NoError(t, fill.Fulfill(nil, codeInternal, "the token's producer failed"))
	assert.Equal(t, []float32{2, 4}, readF32(t, outs[0][1]))
}

// An Execute that fails on a deleted argument gives up the holds it took
// on the arguments before it.
func TestBackendExecuteDeletedArgumentReleasesHolds(t *testing.T) {
	c := openBackend(t, 2)
	e := compileBackend(t, c, addProgram)
	x, y := f32Buffer(t, c, 1, 2), f32Buffer(t, c, 3, 4)
	require.NoError(t, y.Delete())
	_, _, err := e.Execute([][]backend.Buffer{{x, y}}, backend.ExecuteOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "argument 1 of device 0 was deleted")
	require.NoError(t, x.Delete())
	assert.True(t, dropped(x), "no hold left on the first argument")
}

// TestBuffersTooLargeForMemory: a buffer that cannot be allocated is an
// error of the buffer call (the AllocError panic escaped to the caller).
func TestBuffersTooLargeForMemory(t *testing.T) {
	defer func(f func() (int64, bool)) { availableMemory = f }(availableMemory)
	availableMemory = func() (int64, bool) { return 1 << 30, true }
	c := openBackend(t, 1)
	s := xla.MakeShape(xla.Float64, 1<<28) // 2 GiB
	_, err := c.CreateUninitializedBuffer(s, nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tensor<268435456xf64> needs 2.0 GiB, more than the 1.0 GiB")
}

// Closing the client stops the computations still running on it (a loop
// that never ends here): their events fire with ErrClientClosed, and no
// goroutine goes on computing for a closed client.
func TestCloseStopsRunningComputations(t *testing.T) {
	for _, devices := range []int{1, 2} {
		c, err := thePlugin.NewClient([]backend.NamedValue{{Name: "device_count", Value: int64(devices)}})
		require.NoError(t, err)
		partitions := ""
		if devices == 2 {
			partitions = ` attributes {mhlo.num_partitions = 2 : i32}`
		}
		e := compileBackend(t, c.(*client), `module @forever`+partitions+` {
  func.func @main() -> tensor<i32> {
    %0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.while(%i = %0) : tensor<i32>
     cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
    return %1 : tensor<i32>
  }
}`)
		args := make([][]backend.Buffer, devices)
		outs, events, err := e.Execute(args, backend.ExecuteOptions{WantCompletionEvents: true})
		require.NoError(t, err)
		// A read of a result started before the Close ends Cancelled, as
		// the events do.
		read, err := outs[0][0].ToHost(make([]byte, 4))
		require.NoError(t, err)
		require.Len(t, events, devices)
		select {
		case <-events[0].Done():
			t.Fatalf("a loop that never ends ended: %v", events[0].Err())
		default:
		}
		require.NoError(t, c.Close())
		for _, ev := range events {
			err := await(t, ev)
			require.ErrorIs(t, err, ErrClientClosed, "%d devices", devices)
		}
		err = await(t, read)
		require.ErrorIs(t, err, ErrClientClosed)
		var coded backend.CodedError
		require.ErrorAs(t, err, &coded)
		assert.Equal(t, codeCancelled, coded.PJRTCode(), "%v", err)
	}
}

// A type with more bytes than an int64 counts is refused when compiling,
// wherever it stands: no memory holds it, and its size would wrap.
func TestCompileRefusesTypesOverInt64Bytes(t *testing.T) {
	c := openBackend(t, 1)
	huge := "tensor<3000000000000000000xf32>"
	for _, tc := range []struct{ text, want string }{
		{`func.func @main() -> ` + huge + ` {
    %0 = stablehlo.constant dense<1.0> : ` + huge + `
    return %0 : ` + huge + `
  }`, "@main: result 0 of type " + huge + " has more than 2^63 bytes"},
		{`func.func @main(%a: ` + huge + `) -> tensor<f32> {
    %0 = stablehlo.constant dense<1.0> : tensor<f32>
    return %0 : tensor<f32>
  }`, "@main: argument 0 of type " + huge + " has more than 2^63 bytes"},
		{`func.func @main() -> tensor<f32> {
    %0 = stablehlo.constant dense<1.0> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> ` + huge + `
    %2 = stablehlo.slice %1 [0:1] : (` + huge + `) -> tensor<1xf32>
    %3 = stablehlo.reshape %2 : (tensor<1xf32>) -> tensor<f32>
    return %3 : tensor<f32>
  }`, "@main: stablehlo.broadcast_in_dim (line 4): its result of type " + huge + " has more than 2^63 bytes"},
	} {
		_, err := c.Compile([]byte("module {\n  "+tc.text+"\n}"), "mlir", nil)
		require.ErrorContains(t, err, tc.want)
	}
}

// A constant whose data the module does not hold (dense_resource printed
// with its resources elided) is a compile error saying so; one whose blob
// the module holds runs.
func TestCompileDenseResources(t *testing.T) {
	c := openBackend(t, 1)
	const prog = `module {
  func.func @main() -> tensor<2xf32> {
    %a = stablehlo.constant dense_resource<KEY> : tensor<2xf32>
    return %a : tensor<2xf32>
  }
}
{-# dialect_resources: { builtin: { blob: "0x040000000000803F00004040" } } #-}`
	_, err := c.Compile([]byte(strings.ReplaceAll(prog, "KEY", "__elided__")), "mlir", nil)
	require.ErrorContains(t, err, "stablehlo.constant (line 3): value dense_resource<__elided__> : tensor<2xf32>: the module holds no data for this resource")
	e, err := c.Compile([]byte(strings.ReplaceAll(prog, "KEY", "blob")), "mlir", nil)
	require.NoError(t, err)
	outs, _, err := e.Execute([][]backend.Buffer{{}}, backend.ExecuteOptions{})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 3}, readF32(t, outs[0][0]))
}

// An alias buffer fulfilled with a result computed from itself is never
// ready (as on any runtime); closing the client ends the wait of the
// execution, the fulfilment and a copy to the host, with ErrClientClosed.
func TestCloseEndsWaitsForBuffersNeverReady(t *testing.T) {
	bc, err := thePlugin.NewClient(nil)
	require.NoError(t, err)
	c := bc.(*client)
	e := compileBackend(t, c, addLoopProgram)
	alias, fill, err := c.CreateAliasBuffer(f32x2, nil)
	require.NoError(t, err)
	y := f32Buffer(t, c, 1, 1)
	outs, events, err := e.Execute([][]backend.Buffer{{alias, y}}, backend.ExecuteOptions{WantCompletionEvents: true})
	require.NoError(t, err)
	require.NoError(t, fill.Fulfill(outs[0][0], 0, ""))
	toHost, err := outs[0][0].ToHost(make([]byte, 8))
	require.NoError(t, err)
	aliasReady, err := alias.ReadyEvent()
	require.NoError(t, err)
	select {
	case <-events[0].Done():
		t.Fatalf("the execution ended: %v", events[0].Err())
	default:
	}
	require.NoError(t, c.Close())
	for _, ev := range []backend.Event{events[0], toHost, aliasReady} {
		require.ErrorIs(t, await(t, ev), ErrClientClosed)
	}
}

// A collective timeout longer than a Duration holds (what a caller may
// pass for "never") is the longest one: the product in nanoseconds
// wrapped around to 1 ms, or to a negative duration that became the 30 s
// default (found in review).
func TestCollectiveTimeoutDoesNotWrap(t *testing.T) {
	for _, ms := range []int64{1<<58 + 1, math.MaxInt64, 1500} {
		bc, err := thePlugin.NewClient([]backend.NamedValue{{Name: "collective_timeout_ms", Value: ms}})
		require.NoError(t, err)
		c := bc.(*client)
		want := time.Duration(math.MaxInt64)
		if ms == 1500 {
			want = 1500 * time.Millisecond
		}
		assert.Equal(t, want, c.timeout, "%d ms", ms)
		assert.Equal(t, want, NewRendezvous(2, 1, c.timeout).timeout, "%d ms", ms)
		c.Close()
	}
}

// After an execution that failed on one of its arguments, its (failed)
// output buffers do not keep the other arguments' values alive: once the
// caller closes those argument buffers their memory is garbage (the run
// cleared its argument list only after a run; found in review).
func TestFailedRunDoesNotKeepArguments(t *testing.T) {
	for _, fail := range []bool{false, true} {
		c := newClient(1, DefaultCollectiveTimeout)
		exe, err := c.Compile([]byte(`func.func @main(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = stablehlo.add %a, %b : tensor<1024xf32>
  return %0 : tensor<1024xf32>
}`), "mlir", nil)
		if err != nil {
			t.Fatal(err)
		}
		shape := xla.MakeShape(xla.Float32, 1024)
		ab, _, err := c.BufferFromHost(backend.HostBuffer{Data: make([]byte, 4096), Shape: shape}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		wp := weak.Make(ab.(*buffer).val.(*Tensor))
		var bb backend.Buffer
		if fail {
			bb, err = c.CreateErrorBuffer(shape, nil, codeInternal, "upstream failed")
		} else {
			bb, _, err = c.BufferFromHost(backend.HostBuffer{Data: make([]byte, 4096), Shape: shape}, nil, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		outs, _, err := exe.Execute([][]backend.Buffer{{ab, bb}}, backend.ExecuteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ev, _ := outs[0][0].ReadyEvent()
		<-ev.Done()
		t.Logf("fail=%v: run error: %v", fail, ev.Err())
		ab.Close()
		bb.Close()
		ab, bb = nil, nil
		for i := 0; i < 5; i++ {
			runtime.GC()
		}
		if wp.Value() != nil {
			t.Errorf("fail=%v: argument 0's tensor is still reachable after its buffer was closed (the failed outputs hold it)", fail)
		}
		runtime.KeepAlive(outs)
		c.Close()
	}
}
