package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/halo-ml/halo/pjrt"
)

// command describes a subcommand for its usage message.
type command struct {
	name     string
	synopsis string // after "halo NAME"
	about    string
}

// parseArgs parses a subcommand's flags, which may come before, between
// or after its other arguments (returned); "--" ends the flags (but as
// the value of a flag that takes one). -h, -help and their other spellings
// print the command's usage to stdout. code is 0 after -h, 2 after a bad
// flag, and -1 when the command should go on.
func parseArgs(fs *flag.FlagSet, cmd command, args []string, stdout, stderr io.Writer) (rest []string, code int) {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "usage: halo %s %s\n\n%s\n", cmd.name, cmd.synopsis, cmd.about)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, to stdout for -h
	var flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue(fs, name) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			rest = append(rest, a)
		}
	}
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return nil, 0
		}
		usage(stderr)
		return nil, 2
	}
	return rest, -1
}

// takesValue reports whether fs has a flag called name that is not a
// boolean (so that the next argument is its value).
func takesValue(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// loadBackend loads the plugin named, or for "" the first of
// pjrt.Candidates that loads and makes a client, telling errw about each
// one passed over. devices > 1 asks the interpreter and a CPU plugin for
// that many devices (cpu_device_count, which both take; GPU plugins
// refuse create options they do not know).
func loadBackend(errw io.Writer, cmd, plugin string, devices int) (*pjrt.Plugin, *pjrt.Client, error) {
	if plugin != "" {
		p, err := pjrt.LoadPlugin(plugin)
		if err != nil {
			return nil, nil, err
		}
		var options []pjrt.Option
		if name := p.Name(); devices > 1 && (name == "interpreter" || name == "cpu") {
			options = append(options, pjrt.CPUDeviceCount(devices))
		}
		c, err := p.NewClient(options...)
		if err != nil {
			if devices > 1 {
				return nil, nil, fmt.Errorf("%s: the program asks for %d devices (mhlo.num_replicas x mhlo.num_partitions): %w", p, devices, err)
			}
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		return p, c, nil
	}
	var last error
	candidates := pjrt.Candidates()
	for i, info := range candidates {
		p, c, err := loadBackend(errw, cmd, info.NameOrPath(), devices)
		if err == nil {
			return p, c, nil
		}
		if i < len(candidates)-1 { // the last one's error is in the one returned
			fmt.Fprintf(errw, "halo %s: passing over %s: %v\n", cmd, describeCandidate(info), err)
		}
		last = err
	}
	return nil, nil, fmt.Errorf("no backend could be used (the last error: %w)", last)
}

func describeCandidate(info pjrt.PluginInfo) string {
	if info.Path == "" {
		return "the built-in " + info.Name
	}
	return fmt.Sprintf("the %s plugin %s", info.Name, info.Path)
}
