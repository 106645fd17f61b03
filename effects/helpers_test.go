package effects

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// openInterpreter opens the interpreter with n simulated devices.
func openInterpreter(t testing.TB, n int) *pjrt.Client {
	t.Helper()
	c, err := pjrt.Open("interpreter", pjrt.DeviceCount(n))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// ctxT bounds a wait so that a broken ordering fails instead of hanging.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// lines collects written lines; each line is also sent to notify when set.
type lines struct {
	mu     sync.Mutex
	got    []string
	notify chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range strings.Split(strings.TrimSuffix(string(p), "\n"), "\n") {
		l.got = append(l.got, s)
		if l.notify != nil {
			l.notify <- s
		}
	}
	return len(p), nil
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// build builds a module whose main takes args and is filled by body.
func build(t testing.TB, body func(fb *stablehlo.FuncBuilder), args ...stablehlo.Type) *stablehlo.Module {
	t.Helper()
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", args...)
	body(fb)
	m, err := b.Build()
	require.NoError(t, err)
	return m
}

func compile(t testing.TB, c *pjrt.Client, m *stablehlo.Module) *Executable {
	t.Helper()
	exe, err := Compile(c, m, nil)
	require.NoError(t, err)
	return exe
}

// tokenModes are the two ways a stream hands runtime tokens on, both run
// on the interpreter: token buffers whose results become the chain's
// tokens directly (what Compile does on the interpreter), and tensor<0xi1>
// runtime tokens through alias buffers and relays (what real plugins get).
var tokenModes = []struct {
	name   string
	arrays bool
}{{"direct", false}, {"relay", true}}

// compileMode compiles m with token buffers (arrays false) or token
// arrays.
func compileMode(t testing.TB, c *pjrt.Client, m *stablehlo.Module, arrays bool) *Executable {
	t.Helper()
	l, err := Lower(m, LowerOptions{TokenArrays: arrays})
	require.NoError(t, err)
	exe, err := CompileLowered(c, l, nil)
	require.NoError(t, err)
	if len(l.Ordered) > 0 && c.PlatformName() == interpreter.BackendName {
		require.Equal(t, arrays, exe.tokens.relay, "token arrays go through relays on the interpreter")
	}
	return exe
}

// scalar makes an i32 scalar buffer on dev (nil: the first device).
func scalar(t testing.TB, c *pjrt.Client, v int32, dev *pjrt.Device) *pjrt.Buffer {
	t.Helper()
	if dev == nil {
		dev = c.AddressableDevices()[0]
	}
	b, err := pjrt.ScalarBuffer(c, v, pjrt.OnDevice(dev))
	require.NoError(t, err)
	return b
}

// late makes an i32 scalar buffer on dev whose value is given later.
func late(t testing.TB, c *pjrt.Client, dev *pjrt.Device) (*pjrt.Buffer, *pjrt.AliasFulfillment) {
	t.Helper()
	if dev == nil {
		dev = c.AddressableDevices()[0]
	}
	b, f, err := c.CreateAliasBuffer(xla.MakeShape(xla.Int32), pjrt.OnDevice(dev))
	require.NoError(t, err)
	return b, f
}

var i32 = stablehlo.Scalar(xla.Int32)
