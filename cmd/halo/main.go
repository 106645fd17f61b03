// Command halo is halo's command-line tool.
//
//	halo devices [-plugin NAME|PATH]   plugins found (and where missing ones were looked for), their devices and memories
//	halo demo    [-plugin NAME|PATH]   build a small StableHLO program and run it on the best backend found
//	halo run     [-plugin NAME|PATH] FILE.mlir   compile a StableHLO file and run its main function (no arguments)
//	halo check   [-run REGEXP] [-timeout D] FILE.mlir...   run StableHLO conformance tests (check dialect) on the interpreter
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: halo <command> [flags]

commands:
  devices   list PJRT plugins found, their versions, attributes, devices and memories
  demo      build a small StableHLO program and run it on the best backend found
  run FILE  compile a StableHLO MLIR file and run its main function
  check FILE.mlir...
            run every public function without arguments of each module of each
            file on the interpreter, with check.* ops and @check.* custom calls
            as assertions; one PASS/FAIL line per function, then "N passed, N failed"
            (flags: -run REGEXP, -timeout D, -j N)

flags (devices, demo, run):
  -plugin NAME|PATH   cpu, cuda, tpu, interpreter, or a path to a PJRT plugin .so`)
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	cmd, rest := args[0], args[1:]
	if cmd == "check" {
		return checkCommand(rest, stdout, stderr)
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	plugin := fs.String("plugin", "", "plugin short name or .so path (default: best found)")
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	var err error
	switch cmd {
	case "devices":
		err = devices(stdout, *plugin)
	case "demo":
		err = demo(stdout, *plugin)
	case "run":
		if fs.NArg() != 1 {
			fmt.Fprintln(stderr, "halo run: want exactly one FILE.mlir")
			return 2
		}
		err = runFile(stdout, *plugin, fs.Arg(0))
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "halo: unknown command %q\n", cmd)
		usage(stderr)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "halo "+cmd+":", err)
		return 1
	}
	return 0
}
