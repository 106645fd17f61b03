package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/halo-ml/halo/pjrt"
)

// command describes a subcommand for its usage message.
type command struct {
	name     string
	synopsis string // after "halo NAME"
	about    string
}

// parseArgs parses a subcommand's flags, which may come before, between
// or after its other arguments (returned); "--" ends the flags. -h (or
// -help, --help) prints the command's usage to stdout. code is 0 after
// -h, 2 after a bad flag, and -1 when the command should go on.
func parseArgs(fs *flag.FlagSet, cmd command, args []string, stdout, stderr io.Writer) (rest []string, code int) {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "usage: halo %s %s\n\n%s\n", cmd.name, cmd.synopsis, cmd.about)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(stderr) }
	end := slices.Index(args, "--")
	if end < 0 {
		end = len(args)
	}
	for _, a := range args[:end] {
		if a == "-h" || a == "-help" || a == "--help" {
			usage(stdout)
			return nil, 0
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, 2
		}
		left := fs.Args()
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return append(rest, left...), -1
		}
		if len(left) == 0 {
			return rest, -1
		}
		rest, args = append(rest, left[0]), left[1:]
	}
}

// loadBackend loads the plugin named, or for "" the first of
// pjrt.Candidates that loads and makes a client, telling errw about each
// one passed over.
func loadBackend(errw io.Writer, cmd, plugin string, options ...pjrt.Option) (*pjrt.Plugin, *pjrt.Client, error) {
	if plugin != "" {
		p, err := pjrt.LoadPlugin(plugin)
		if err != nil {
			return nil, nil, err
		}
		c, err := p.NewClient(options...)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		return p, c, nil
	}
	var last error
	for _, info := range pjrt.Candidates() {
		p, c, err := loadBackend(errw, cmd, candidateName(info), options...)
		if err == nil {
			return p, c, nil
		}
		fmt.Fprintf(errw, "halo %s: passing over %s: %v\n", cmd, describeCandidate(info), err)
		last = err
	}
	return nil, nil, fmt.Errorf("no backend could be used (the last error: %w)", last)
}

// candidateName is what pjrt.LoadPlugin takes for a candidate.
func candidateName(info pjrt.PluginInfo) string {
	if info.Path != "" {
		return info.Path
	}
	return info.Name
}

func describeCandidate(info pjrt.PluginInfo) string {
	if info.Path == "" {
		return "the built-in " + info.Name
	}
	return fmt.Sprintf("the %s plugin %s", info.Name, info.Path)
}
