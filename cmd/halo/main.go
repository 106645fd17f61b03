// Command halo is halo's command-line tool.
//
//	halo devices [-plugin NAME|PATH]   plugins found (and where missing ones were looked for), their devices and memories
//	halo demo    [-plugin NAME|PATH]   build a small StableHLO program and run it on the best backend found
//	halo run     [-plugin NAME|PATH] [-timeout D] FILE.mlir   compile a StableHLO file and run its main function (no arguments)
//	halo bench   [-plugin NAME|PATH] [-time D] [-n N] [-timeout D] FILE.mlir   time compiling a StableHLO file and running its main function on pseudo-random inputs
//	halo check   [-run REGEXP] [-timeout D] [-j N] FILE.mlir...   run StableHLO conformance tests (check dialect) on the interpreter
//
// Without -plugin, demo, run and bench use the best backend found
// (pjrt.Candidates: a CUDA plugin when there is a GPU, TPU, plugins named
// in $PJRT_PLUGIN_LIBRARY_PATH, CPU, then the built-in interpreter),
// saying on stderr why they passed over any that failed; devices lists
// and describes every plugin found.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	// Programs with pallas kernels in interpret mode call its bounds
	// check, a custom call whose Go handler the package's init declares
	// (for PJRT plugins) and registers (for the built-in interpreter).
	_ "github.com/halo-ml/halo/pallas"
)

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: halo <command> [flags]

commands:
  devices   list PJRT plugins found, their versions, attributes, devices and memories
  demo      build a small StableHLO program and run it on the best backend found
            (passing over, with a note, a backend that fails to load or run it)
  run FILE  compile a StableHLO MLIR file of one module and run its main function
            (@main, or the only public function when there is no @main, as in a
            JAX export), which must take no arguments, on every device the program
            asks for, printing the first 16 elements of each output (flags: -timeout D)
  bench FILE
            compile a StableHLO MLIR file and time runs of its main function on
            pseudo-random inputs: compile, first run, then the median, min and max
            of steady runs (flags: -time D, -n N, -timeout D)
  check FILE.mlir...
            run every public function without arguments of each module of each
            file on the interpreter, with check.* ops and @check.* custom calls
            as assertions; one PASS/FAIL line per function, then "N passed, N failed"
            (flags: -run REGEXP, -timeout D, -j N)

flags (devices, demo, run, bench):
  -plugin NAME|PATH   cpu, cuda, tpu, interpreter, or a path to a PJRT plugin .so
                      (default: demo, run and bench use the best backend found,
                      devices lists every plugin found)

"halo <command> -h" describes a command's flags.`)
}

func main() {
	os.Exit(runChecked(os.Args[1:], os.Stdout, os.Stderr))
}

// runChecked is run whose output that did not arrive (a full disk, a
// closed pipe) makes a success a failure.
func runChecked(args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	code := run(args, out, stderr)
	if out.err != nil && code == 0 {
		fmt.Fprintf(stderr, "halo: writing the output: %v\n", out.err)
		code = 1
	}
	return code
}

// checkedWriter keeps the first error of the writes to w.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

var commands = map[string]command{
	"devices": {"devices", "[-plugin NAME|PATH]", "Lists the PJRT plugins found (and where missing ones were looked for) and, for each that loads, its version, attributes, devices and memories."},
	"demo":    {"demo", "[-plugin NAME|PATH]", "Builds a small StableHLO program (an MLP), runs it on the best backend found and checks the results against plain Go."},
	"run": {"run", "[-plugin NAME|PATH] [-timeout D] FILE.mlir", "Compiles a StableHLO MLIR file of one module and runs its main function (@main, or the only public function when there is none),\n" +
		"which must take no arguments, printing the first 16 elements of every output (reading back only those where the backend can)."},
	"bench": {"bench", "[-plugin NAME|PATH] [-time D] [-n N] [-timeout D] FILE.mlir", "Compiles a StableHLO MLIR file and times runs of its main function (@main, or the only public function when there is none) on pseudo-random inputs\n" +
		"(floats in [-1, 1), integers in [-4, 4) or [0, 8), booleans alternating), each run from Execute until every output is ready;\n" +
		"-timeout stops it after that long from the start, the first run included (a compile in progress ends first)."},
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "check":
		return checkCommand(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && name == "help" && !isHelpFlag(rest[0]) {
			_, ok := commands[rest[0]]
			switch {
			case !ok && rest[0] != "check" && rest[0] != "help":
				fmt.Fprintf(stderr, "halo help: unknown command %q\n", rest[0])
				usage(stderr)
				return 2
			case len(rest) > 1:
				fmt.Fprintf(stderr, "halo help: one command at a time, not %q\n", strings.Join(rest, " "))
				return 2
			case rest[0] != "help":
				// halo help CMD: that command's own help, as halo CMD -h.
				return run([]string{rest[0], "-h"}, stdout, stderr)
			}
		}
		usage(stdout)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		if strings.HasPrefix(name, "-") {
			fmt.Fprintf(stderr, "halo: %s before a command: flags go after it (halo run -plugin cpu FILE.mlir)\n", name)
		} else {
			fmt.Fprintf(stderr, "halo: unknown command %q\n", name)
		}
		usage(stderr)
		return 2
	}
	// wrongCount says a command got too many or too few arguments, and
	// how it is used.
	wrongCount := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "halo %s: %s\n", name, fmt.Sprintf(format, args...))
		fmt.Fprintf(stderr, "usage: halo %s %s\n", cmd.name, cmd.synopsis)
		return 2
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	pluginHelp := "plugin short name or .so path (default: the best backend found)"
	if name == "devices" {
		pluginHelp = "plugin short name or .so path (default: every plugin found)"
	}
	plugin := fs.String("plugin", "", pluginHelp)
	var timeout, budget *time.Duration
	var runs *int
	switch name {
	case "run":
		timeout = fs.Duration("timeout", 0, "stop the run after this long (0: no limit)")
	case "bench":
		budget = fs.Duration("time", time.Second, "how long to run steady runs (at least one)")
		runs = fs.Int("n", 0, "run exactly this many steady runs instead (0: use -time)")
		timeout = fs.Duration("timeout", 0, "stop after this long from the start, the first run included (a compile in progress ends first; 0: no limit)")
	}
	files, code := parseArgs(fs, cmd, rest, stdout, stderr)
	if code >= 0 {
		return code
	}
	var err error
	switch name {
	case "devices", "demo":
		if len(files) > 0 {
			return wrongCount("takes no arguments, got %q", files)
		}
		if name == "devices" {
			err = devices(stdout, *plugin)
		} else {
			err = demo(stdout, stderr, *plugin)
		}
	case "run":
		if len(files) != 1 {
			return wrongCount("want exactly one FILE.mlir, got %d arguments", len(files))
		}
		if *timeout < 0 {
			fmt.Fprintf(stderr, "halo run: -timeout %v is negative\n", *timeout)
			return 2
		}
		err = runFile(stdout, stderr, *plugin, files[0], *timeout)
	case "bench":
		if len(files) != 1 {
			return wrongCount("want exactly one FILE.mlir, got %d arguments", len(files))
		}
		if *runs < 0 || *budget < 0 || *timeout < 0 {
			fmt.Fprintln(stderr, "halo bench: -n, -time and -timeout must not be negative")
			return 2
		}
		err = benchFile(stdout, stderr, *plugin, files[0], *budget, *runs, *timeout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "halo "+name+":", err)
		return 1
	}
	return 0
}

// isHelpFlag reports whether a is one of the spellings of -h.
func isHelpFlag(a string) bool {
	switch a {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}
