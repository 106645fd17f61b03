package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// runFile compiles a StableHLO file and runs its main function with no
// arguments on each device the program asks for (mhlo.num_replicas times
// mhlo.num_partitions, which the interpreter simulates), printing every
// output. timeout > 0 stops the run after that long.
func runFile(w, errw io.Writer, plugin, path string, timeout time.Duration) error {
	mf, err := readModule("run", path)
	if err != nil {
		return err
	}
	replicas, partitions := 1, 1
	if m := mf.m; m != nil {
		// Checked here to say what halo run can do; text it cannot parse
		// (MLIR bytecode, other dialects) goes to the plugin as it is.
		if err := runnable(path, m); err != nil {
			return err
		}
		replicas, partitions = moduleInt(m, "mhlo.num_replicas"), moduleInt(m, "mhlo.num_partitions")
	}
	_, c, err := loadBackend(errw, "run", plugin, replicas*partitions)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer c.Close()
	exe, err := compileFile(c, mf, replicas, partitions)
	if err != nil {
		return err
	}
	defer exe.Close()
	x, err := exe.Execute(make([][]*pjrt.Buffer, len(exe.AddressableDevices())), pjrt.ExecuteOptions{CompletionEvents: true})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	stopped := func(err error) error {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("stopped after -timeout %v: %w", timeout, err)
		}
		return err
	}
	// The executable's devices run (replica, partition) pairs in that
	// order; with the default device assignment the ids differ from the
	// places when there are several partitions.
	devs := exe.AddressableDevices()
	label := func(d int) string {
		if partitions > 1 {
			return fmt.Sprintf("device %d (replica %d, partition %d)", devs[d].ID(), d/partitions, d%partitions)
		}
		return fmt.Sprintf("device %d", devs[d].ID())
	}
	// The run ends at completion (the outputs may be ready before a
	// failed check or a callback is done). When a device fails, the
	// others stop and report a cancellation: the failure named is the
	// first that is not one.
	var failed error
	for d, ev := range x.Completion {
		err := ev.Await(ctx)
		if err == nil {
			continue
		}
		if len(x.Completion) > 1 {
			err = fmt.Errorf("%s: %w", label(d), err)
		}
		var pe *pjrt.Error
		if failed == nil || errors.As(failed, &pe) && pe.Code == pjrt.Cancelled && !(errors.As(err, &pe) && pe.Code == pjrt.Cancelled) {
			failed = err
		}
	}
	if failed != nil {
		for _, outs := range x.Outputs {
			for _, b := range outs {
				b.Close()
			}
		}
		return fmt.Errorf("%s: %w", path, stopped(failed))
	}
	for d, outs := range x.Outputs {
		prefix := ""
		if len(x.Outputs) > 1 {
			prefix = label(d) + " "
		}
		if err := printOutputs(ctx, w, prefix, outs); err != nil {
			return fmt.Errorf("%s: %w", path, stopped(err))
		}
	}
	if len(x.Outputs) > 0 && len(x.Outputs[0]) == 0 {
		fmt.Fprintln(w, "(no outputs)")
	}
	return nil
}

// compileFile compiles the file's text for replicas x partitions
// devices, naming the file in its error. When halo's parser could not read
// the text either, the error is the parser's, at its position in the file,
// followed by a loaded plugin's (the built-in interpreter parses with
// halo's parser: it has nothing to add).
func compileFile(c *pjrt.Client, mf *moduleFile, replicas, partitions int) (*pjrt.Executable, error) {
	co := xla.DefaultCompileOptions()
	co.NumReplicas, co.NumPartitions = replicas, partitions
	exe, err := c.Compile(pjrt.MLIR(mf.text), &co)
	switch {
	case err == nil:
		return exe, nil
	case mf.parseErr == nil:
		return nil, fmt.Errorf("%s: %w", mf.path, err)
	}
	if c.Plugin().Path() == "" {
		return nil, mf.parseErr // a built-in backend (the interpreter) parses with halo's parser: it says the same
	}
	return nil, fmt.Errorf("%w (%s: %v)", mf.parseErr, c.Plugin().Name(), err)
}

// runnable checks that the module's entry function takes no arguments.
func runnable(path string, m *stablehlo.Module) error {
	f, err := entryFunc(path, m)
	if err != nil {
		return err
	}
	if n := len(f.ArgTypes()); n > 0 {
		return fmt.Errorf("%s: @%s takes %d arguments (%s); halo run runs functions without arguments (pass inputs through the Go API, pjrt.Executable.Run)", path, f.Name, n, typeList(f.ArgTypes()))
	}
	return nil
}

func typeList(ts []stablehlo.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ", ")
}

// moduleInt is the module's integer attribute name, 1 when absent.
func moduleInt(m *stablehlo.Module, name string) int {
	for _, a := range m.Attrs {
		if v, ok := a.Value.(stablehlo.IntAttr); ok && a.Name == name && v.Value > 0 {
			return int(v.Value)
		}
	}
	return 1
}

// printOutputs waits for each buffer and prints its values, reading back
// only the elements printed where the backend can (Buffer.BytesPrefix).
func printOutputs(ctx context.Context, w io.Writer, prefix string, outs []*pjrt.Buffer) error {
	for i, b := range outs {
		data, err := b.BytesPrefix(ctx, (shownElements+1)*int64(b.DType().HostBytes())) // one more says there are more
		b.Close()
		if err != nil {
			return fmt.Errorf("%soutput %d: %w", prefix, i, err)
		}
		if b.DType() == xla.Invalid { // a token has no element type and no data
			fmt.Fprintf(w, "%soutput %d: !stablehlo.token\n", prefix, i)
			continue
		}
		fmt.Fprintf(w, "%soutput %d: %v = %s\n", prefix, i, b.Shape(), formatValues(b.DType(), data))
	}
	return nil
}

// shownElements is how many elements of an output halo run prints.
const shownElements = 16

// formatValues renders host bytes (little-endian, sub-byte types one
// element per byte) as numbers, each as interpreter.FormatHostElement
// prints it, the first shownElements elements then "..." when there are
// more.
func formatValues(dt xla.DType, data []byte) string {
	n := dt.HostBytes()
	if n == 0 {
		return "[]"
	}
	var parts []string
	for off := 0; off+n <= len(data); off += n {
		if len(parts) == shownElements {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, interpreter.FormatHostElement(dt, data[off:off+n]))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
