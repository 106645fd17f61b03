package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/halo-ml/halo/pjrt"
)

// devices prints the plugins found (and where missing ones were looked
// for); for each plugin that loads, its version, attributes, devices and
// memories.
func devices(w io.Writer, only string) error {
	var names []string
	if only != "" {
		names = []string{only}
	} else {
		fmt.Fprintln(w, "plugins:")
		for _, info := range pjrt.Plugins() {
			switch {
			case info.Found && info.Note != "":
				fmt.Fprintf(w, "  %-12s %s (%s)\n", info.Name, info.Path, info.Note)
			case info.Found:
				fmt.Fprintf(w, "  %-12s %s\n", info.Name, info.Path)
				names = append(names, info.Name)
			default:
				fmt.Fprintf(w, "  %-12s not found; looked in %s\n", info.Name, strings.Join(info.Searched, ", "))
			}
		}
		fmt.Fprintf(w, "  %-12s built in (pure Go)\n", "interpreter")
		names = append(names, "interpreter")
	}
	for _, name := range names {
		if err := describePlugin(w, name); err != nil {
			if only != "" {
				return err
			}
			fmt.Fprintf(w, "\n%s: %v\n", name, err)
		}
	}
	return nil
}

func describePlugin(w io.Writer, name string) error {
	p, err := pjrt.LoadPlugin(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", p)
	if exts := p.Extensions(); len(exts) > 0 {
		fmt.Fprintf(w, "  extensions: %s\n", strings.Join(exts, ", "))
	}
	attrs := p.Attributes()
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  attribute %s = %v\n", k, attrs[k])
	}
	c, err := p.NewClient()
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(w, "  platform %s (%s), process %d\n", c.PlatformName(), c.PlatformVersion(), c.ProcessIndex())
	for _, d := range c.Devices() {
		fmt.Fprintf(w, "  device %d: %s kind=%q addressable=%v hardware_id=%d\n", d.ID(), d.String(), d.Kind(), d.IsAddressable(), d.LocalHardwareID())
		da := d.Attributes()
		dk := make([]string, 0, len(da))
		for k := range da {
			dk = append(dk, k)
		}
		sort.Strings(dk)
		for _, k := range dk {
			fmt.Fprintf(w, "    %s = %v\n", k, da[k])
		}
		def, _ := d.DefaultMemory()
		for _, m := range d.Memories() {
			mark := ""
			if m == def {
				mark = " (default)"
			}
			fmt.Fprintf(w, "    memory %d: kind=%q%s\n", m.ID(), m.Kind(), mark)
		}
	}
	return nil
}
