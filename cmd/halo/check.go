package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
)

// halo check runs StableHLO conformance tests on the interpreter: every
// public function without arguments of every module of every file
// (modules are separated by lines "// -----"), with the check dialect
// (check.expect_eq, check.expect_almost_eq, check.expect_close ...) and
// the check custom calls (@check.expect_eq, @check.eq ...) as assertions.
// A function passes when it runs without error (a failed check is an
// error).
//
// Output, one line per function and a summary:
//
//	PASS add.mlir:3 @add_op_test_si4
//	FAIL add.mlir:12 @add_op_test_ui4: check.expect_eq_const: index [1]: expected 7, got 6 (1 of 5 elements differ)
//	FAIL bad.mlir:4:7: unexpected '<' in dense literal
//	2 passed, 2 failed
//
// A parse error is at its FILE:LINE:COL, as halo run and bench say it.

type checkOptions struct {
	run     *regexp.Regexp
	timeout time.Duration
	jobs    int
}

// checkSynopsis is halo check's arguments, for its usage lines.
const checkSynopsis = "[-run REGEXP] [-timeout D] [-j N] FILE.mlir..."

func checkCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	run := fs.String("run", "", "run only functions whose name matches this regular expression")
	timeout := fs.Duration("timeout", time.Minute, "time limit per function")
	jobs := fs.Int("j", 0, "files checked at once (0: GOMAXPROCS)")
	files, code := parseArgs(fs, command{"check", checkSynopsis,
		"Runs every public function without arguments of each module (modules are separated by lines \"// -----\")\n" +
			"of each file on the interpreter, with check.* ops and @check.* custom calls as assertions."}, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "halo check: want one or more FILE.mlir")
		fmt.Fprintln(stderr, "usage: halo check "+checkSynopsis)
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "halo check: -timeout %v: want a positive time limit\n", *timeout)
		return 2
	}
	switch {
	case *jobs < 0:
		fmt.Fprintf(stderr, "halo check: -j %d: want 0 (GOMAXPROCS) or more\n", *jobs)
		return 2
	case *jobs == 0:
		*jobs = runtime.GOMAXPROCS(0)
	}
	opts := checkOptions{timeout: *timeout, jobs: *jobs}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			fmt.Fprintf(stderr, "halo check: -run: %v\n", err)
			return 2
		}
		opts.run = re
	}
	passed, failed := checkFiles(stdout, files, opts)
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if passed+failed == 0 {
		what := "no public function without arguments"
		if opts.run != nil {
			what += " matches -run " + opts.run.String()
		}
		fmt.Fprintf(stderr, "halo check: warning: nothing to check: %s\n", what)
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// checkResult is the outcome of one function (or of a module or file that
// could not be read).
type checkResult struct {
	where string // "file:line @name" or "file (module 2)"
	err   error  // nil: passed
}

// checkFiles checks the files, several at once, and prints the results
// in file order.
func checkFiles(w io.Writer, files []string, opts checkOptions) (passed, failed int) {
	results := make([]chan []checkResult, len(files))
	sem := make(chan struct{}, opts.jobs)
	for i, f := range files {
		results[i] = make(chan []checkResult, 1)
		go func(i int, f string) {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] <- checkFile(f, opts)
		}(i, f)
	}
	for _, ch := range results {
		for _, r := range <-ch {
			if r.err == nil {
				passed++
				fmt.Fprintf(w, "PASS %s\n", r.where)
			} else {
				failed++
				fmt.Fprintf(w, "FAIL %s: %s\n", r.where, describeCheckFailure(r.err))
			}
		}
	}
	return passed, failed
}

// describeCheckFailure prints a failure: for a failed check, the check,
// the first mismatch (index, expected, got) and how many elements differ.
func describeCheckFailure(err error) string {
	timedOut := ""
	var to *checkTimeout
	if errors.As(err, &to) {
		timedOut = fmt.Sprintf("timed out after %v: ", to.after)
		err = to.err
	}
	device := ""
	var de *interpreter.DeviceError
	if errors.As(err, &de) {
		// Only one device of several failed: say which.
		device = fmt.Sprintf("device %d (replica %d, partition %d): ", de.Device, de.Process.Replica, de.Process.Partition)
		err = de.Err
	}
	return timedOut + device + describeOneFailure(err)
}

// checkTimeout is a function's run stopped by -timeout.
type checkTimeout struct {
	after time.Duration
	err   error
}

func (e *checkTimeout) Error() string { return fmt.Sprintf("timed out after %v: %v", e.after, e.err) }
func (e *checkTimeout) Unwrap() error { return e.err }

// describeOneFailure is describeCheckFailure for one device's error.
func describeOneFailure(err error) string {
	var ce *interpreter.CheckError
	if errors.As(err, &ce) {
		if ce.Index == nil {
			return fmt.Sprintf("%s: %s", ce.Check, ce.Reason)
		}
		idx := make([]string, len(ce.Index))
		for i, v := range ce.Index {
			idx[i] = fmt.Sprint(v)
		}
		s := fmt.Sprintf("%s: index [%s]: expected %s, got %s (%d of %d elements differ", ce.Check, strings.Join(idx, ", "), ce.Expected, ce.Got, ce.Mismatches, ce.Elements)
		if ce.Reason != "" {
			s += "; " + ce.Reason
		}
		return s + ")"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// checkFile reads a file's modules and checks each.
func checkFile(path string, opts checkOptions) []checkResult {
	text, err := os.ReadFile(path)
	if err != nil {
		return []checkResult{{where: path, err: err}}
	}
	if bytes.HasPrefix(text, mlirBytecode) {
		return []checkResult{{where: path, err: errors.New("MLIR bytecode: halo check reads StableHLO text (print the module, or deserialize it with stablehlo-translate --deserialize)")}}
	}
	// Nothing to run is a failure of the file, as halo run says it.
	switch {
	case len(bytes.TrimSpace(text)) == 0:
		return []checkResult{{where: path, err: errors.New("the file is empty")}}
	case len(bytes.TrimSpace(stripComments(text))) == 0:
		return []checkResult{{where: path, err: errors.New("the file holds only comments")}}
	}
	var out []checkResult
	chunks, total := splitModules(text)
	for _, c := range chunks {
		m, err := stablehlo.Parse(c.src)
		var se *stablehlo.SyntaxError
		switch {
		case errors.As(err, &se):
			// At its position in the file, as halo run and bench say it.
			out = append(out, checkResult{where: fmt.Sprintf("%s:%d:%d", path, se.Line, se.Col), err: errors.New(se.Msg)})
			continue
		case err != nil:
			where := path
			if total > 1 {
				where = fmt.Sprintf("%s (module %d)", path, c.index)
			}
			out = append(out, checkResult{where: where, err: fmt.Errorf("parse error: %w", err)})
			continue
		}
		if inner := nestedModules(m); len(inner) > 0 {
			// Their functions would go unchecked while the file passes.
			where := path
			if total > 1 {
				where = fmt.Sprintf("%s (module %d)", path, c.index)
			}
			out = append(out, checkResult{where: where, err: fmt.Errorf("holds modules inside it or beside each other (%s), whose functions halo check does not reach: %s", strings.Join(inner, ", "), moduleAdvice)})
		}
		out = append(out, checkModule(path, c.src, m, opts)...)
	}
	return out
}

// checkModule runs the module's public functions without arguments.
func checkModule(path string, src []byte, m *stablehlo.Module, opts checkOptions) []checkResult {
	var funcs []*stablehlo.Func
	for _, f := range m.Funcs {
		if f.Private || f.Body == nil || len(f.Args()) != 0 {
			continue
		}
		if opts.run != nil && !opts.run.MatchString(f.Name) {
			continue
		}
		funcs = append(funcs, f)
	}
	if len(funcs) == 0 {
		return nil
	}
	whole, wholeErr := interpreter.Compile(m, funcs[0].Name)
	var out []checkResult
	for _, f := range funcs {
		where := fmt.Sprintf("%s:%d @%s", path, f.Line, f.Name)
		p := whole
		if wholeErr != nil {
			// Something in the module does not compile: compile the
			// function with only what it calls, so the others still run.
			var err error
			p, err = interpreter.Compile(subModule(m, f), f.Name)
			if err != nil {
				out = append(out, checkResult{where: where, err: err})
				continue
			}
		} else {
			q := *whole
			q.Main = f
			p = &q
		}
		out = append(out, checkResult{where: where, err: runCheck(p, opts.timeout)})
	}
	return out
}

// runCheck runs p's main function on every device of its grid.
func runCheck(p *interpreter.Program, timeout time.Duration) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("interpreter panic: %v", v)
		}
	}()
	if n := max(p.NumReplicas, 1) * max(p.NumPartitions, 1); n > 1 {
		_, err = p.RunSPMD(ctx, make([][]interpreter.Value, n), interpreter.SPMDOptions{Timeout: timeout})
	} else {
		_, err = p.Run(ctx, interpreter.Device{}, nil)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return &checkTimeout{timeout, err}
		}
		return err
	}
	return nil
}

// subModule returns a module of f and the functions it reaches through
// symbol references (calls, custom call computations, composites).
func subModule(m *stablehlo.Module, f *stablehlo.Func) *stablehlo.Module {
	byName := map[string]*stablehlo.Func{}
	for _, g := range m.Funcs {
		byName[g.Name] = g
	}
	keep := map[string]bool{f.Name: true}
	queue := []*stablehlo.Func{f}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		g.Walk(func(op *stablehlo.Op) bool {
			for _, a := range op.Attrs {
				forSymbols(a.Value, func(name string) {
					if h := byName[name]; h != nil && !keep[name] {
						keep[name] = true
						queue = append(queue, h)
					}
				})
			}
			return true
		})
	}
	sub := &stablehlo.Module{Name: m.Name, Attrs: m.Attrs, Globals: m.Globals, Loc: m.Loc}
	for _, g := range m.Funcs {
		if keep[g.Name] {
			sub.Funcs = append(sub.Funcs, g)
		}
	}
	return sub
}

func forSymbols(a stablehlo.Attribute, fn func(string)) {
	switch a := a.(type) {
	case stablehlo.SymbolRefAttr:
		fn(strings.TrimPrefix(string(a), "@"))
	case stablehlo.ArrayAttr:
		for _, e := range a {
			forSymbols(e, fn)
		}
	case stablehlo.DictAttr:
		for _, e := range a {
			forSymbols(e.Value, fn)
		}
	}
}
