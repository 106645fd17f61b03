package interpreter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/halo-ml/halo/stablehlo"
)

// The ops of the StableHLO reference interpreter's "interpreter" dialect
// that its collective tests use:
//
//	%r:2 = "interpreter.run_parallel"(%x0, %x1) {programs = [[@f], [@f]]}
//	    : (tensor<4xi64>, tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>)
//
// runs a grid of len(programs) replicas by len(programs[0]) partitions,
// process (r, p) running function programs[r][p]; the operands are the
// processes' arguments and the results their results, process after
// process in row-major order. "interpreter.probe" passes its operand
// through (the reference interpreter also writes it to a file).

func init() {
	registerKernel("interpreter.run_parallel", kernelRunParallel)
	registerKernel("interpreter.probe", func(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("want one operand, have %d", len(args))
		}
		return []Value{args[0]}, nil
	})
}

func kernelRunParallel(x *Exec, op *stablehlo.Op, args []Value) ([]Value, error) {
	if x.Program == nil || x.Program.Module == nil {
		return nil, fmt.Errorf("no module to find the programs in")
	}
	if a := op.Attr("infeed"); a != nil {
		return nil, fmt.Errorf("infeed is not supported")
	}
	rows, ok := op.Attr("programs").(stablehlo.ArrayAttr)
	if !ok || len(rows) == 0 {
		return nil, fmt.Errorf("programs must be a non-empty array of arrays of function symbols, is %T", op.Attr("programs"))
	}
	var grid [][]*stablehlo.Func
	for r, row := range rows {
		cols, ok := row.(stablehlo.ArrayAttr)
		if !ok || len(cols) == 0 {
			return nil, fmt.Errorf("programs[%d] must be a non-empty array of function symbols", r)
		}
		if r > 0 && len(cols) != len(grid[0]) {
			return nil, fmt.Errorf("programs[%d] has %d partitions, programs[0] has %d", r, len(cols), len(grid[0]))
		}
		var fs []*stablehlo.Func
		for p, c := range cols {
			sym, ok := c.(stablehlo.SymbolRefAttr)
			if !ok {
				return nil, fmt.Errorf("programs[%d][%d] is %T, want a function symbol", r, p, c)
			}
			name := strings.TrimPrefix(string(sym), "@")
			f := x.Program.Module.Func(name)
			if f == nil || f.Body == nil {
				return nil, fmt.Errorf("programs[%d][%d]: no function @%s", r, p, name)
			}
			fs = append(fs, f)
		}
		grid = append(grid, fs)
	}
	R, P := len(grid), len(grid[0])
	// Split the operands among the processes.
	inputs := make([][]Value, 0, R*P)
	off := 0
	for _, row := range grid {
		for _, f := range row {
			n := len(f.Args())
			if off+n > len(args) {
				return nil, fmt.Errorf("the programs take more than the %d operands", len(args))
			}
			inputs = append(inputs, args[off:off+n])
			off += n
		}
	}
	if off != len(args) {
		return nil, fmt.Errorf("the programs take %d operands, the op has %d", off, len(args))
	}
	timeout := DefaultCollectiveTimeout
	if x.Device.Rendezvous != nil {
		timeout = x.Device.Rendezvous.timeout
	}
	ctx := x.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rv := NewRendezvous(R, P, timeout)
	for _, row := range grid {
		for _, f := range row {
			rv.byKind = rv.byKind || f != grid[0][0]
		}
	}
	outs := make([][]Value, R*P)
	errs := make([]error, R*P)
	var wg sync.WaitGroup
	for d := 0; d < R*P; d++ {
		wg.Add(1)
		go func(d int) {
			defer wg.Done()
			proc := ProcessID{Replica: d / P, Partition: d % P}
			defer func() {
				if v := recover(); v != nil {
					errs[d] = fmt.Errorf("process %v: interpreter panic: %v", proc, v)
					if e := allocErrorOf(v); e != nil {
						errs[d] = fmt.Errorf("process %v: %w", proc, e)
					}
					rv.Fail(proc, errs[d])
					cancel()
				}
			}()
			sub := &Exec{Ctx: ctx, Program: x.Program, Device: Device{Replica: proc.Replica, Partition: proc.Partition, Rendezvous: rv}}
			out, err := sub.Call(grid[proc.Replica][proc.Partition], inputs[d])
			if err != nil {
				errs[d] = fmt.Errorf("process %v: %w", proc, err)
				rv.Fail(proc, err)
				cancel()
				return
			}
			rv.Done(proc)
			outs[d] = out
		}(d)
	}
	wg.Wait()
	if err := firstFailure(errs); err != nil {
		return nil, err
	}
	var res []Value
	for _, o := range outs {
		res = append(res, o...)
	}
	if len(res) != len(op.Results) {
		return nil, fmt.Errorf("the programs return %d values, the op has %d results", len(res), len(op.Results))
	}
	return res, nil
}

// firstFailure joins the errors of failed devices, the one that failed
// first (not cancelled by another) first.
func firstFailure(errs []error) error {
	var first, rest []error
	for _, err := range errs {
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "cancelled") || errors.Is(err, context.Canceled):
			rest = append(rest, err)
		default:
			first = append(first, err)
		}
	}
	all := append(first, rest...)
	if len(all) == 0 {
		return nil
	}
	return errors.Join(all...)
}
