package pjrt

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PluginInfo describes one plugin found, or one short name that was not found.
type PluginInfo struct {
	// Name is the short name ("cpu", "cuda", "tpu"), the file's base name
	// without ".so" for other plugins named in $PJRT_PLUGIN_LIBRARY_PATH, or
	// "interpreter" for the built-in backend.
	Name string
	// Path is the absolute path of the shared library, "" when not found.
	Path string
	// Found reports whether a shared library was found.
	Found bool
	// Searched lists the directories and candidate files looked at, in order,
	// up to and including the one that held the plugin.
	Searched []string
	// Note says why a plugin that was found may still not be usable, such as
	// a CUDA plugin on a machine without an NVIDIA GPU.
	Note string
}

// pluginEnvVar names a plugin file, or a colon-separated list of plugin
// files and directories to search first.
const pluginEnvVar = "PJRT_PLUGIN_LIBRARY_PATH"

// knownPlugins are the short names discovery searches for, in the order
// Plugins lists them.
var knownPlugins = []string{"cpu", "cuda", "tpu"}

// pluginFiles are the file names of each short name's shared library in a
// plain directory.
var pluginFiles = map[string][]string{
	"cpu":  {"pjrt_c_api_cpu_plugin.so", "libpjrt_c_api_cpu_plugin.so", "pjrt_cpu_plugin.so"},
	"cuda": {"pjrt_c_api_gpu_plugin.so", "xla_cuda_plugin.so"},
	"tpu":  {"libtpu.so"},
}

// sitePackagesFiles are where Python wheels put each short name's shared
// library, relative to a site-packages directory.
var sitePackagesFiles = map[string][]string{
	"cuda": {"jax_plugins/xla_cuda13/xla_cuda_plugin.so", "jax_plugins/xla_cuda12/xla_cuda_plugin.so"},
	"tpu":  {"libtpu/libtpu.so"},
}

// searchEnv is everything discovery reads from the machine, so tests can
// point it at a fake tree.
type searchEnv struct {
	getenv func(string) string
	// home is the user's home directory ("" to skip the per-user places).
	home string
	// root is prepended to the fixed system directories (/usr/local/lib/halo,
	// /usr/lib/python3*, /opt, ...); "" means the real root. Directories named
	// by environment variables are used as they are.
	root string
	// gpu reports whether an NVIDIA GPU is present.
	gpu func() (bool, string)
}

// defaultSearchEnv reads the real environment and file system.
func defaultSearchEnv() searchEnv {
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return searchEnv{getenv: os.Getenv, home: home, gpu: gpuPresent}
}

// Plugins lists the plugins found (cpu, cuda, tpu, then other plugin files
// named in $PJRT_PLUGIN_LIBRARY_PATH) and, for each short name not found,
// where it looked. Nothing is loaded.
func Plugins() []PluginInfo { return defaultSearchEnv().plugins() }

// findPlugin resolves a short name or a path. A path (containing '/' or
// ending in ".so") is used as it is and must exist; a short name is searched
// for. An unknown short name, a plugin that is not found, and a CUDA plugin on
// a machine without an NVIDIA GPU are errors (the PluginInfo is returned
// with them).
func findPlugin(nameOrPath string) (PluginInfo, error) {
	return defaultSearchEnv().find(nameOrPath)
}

func (e searchEnv) plugins() []PluginInfo {
	out := make([]PluginInfo, 0, len(knownPlugins))
	for _, name := range knownPlugins {
		out = append(out, e.search(name))
	}
	return append(out, e.extraPlugins()...)
}

func (e searchEnv) find(nameOrPath string) (PluginInfo, error) {
	if nameOrPath == "" {
		return PluginInfo{}, fmt.Errorf("pjrt: empty plugin name; known names are %s", strings.Join(e.knownNames(), ", "))
	}
	if !strings.Contains(nameOrPath, "/") {
		// A plugin the environment names goes by its name ("rocm", or
		// "interpreter.so" for a file named like a built-in).
		for _, info := range e.extraPlugins() {
			if info.Name == nameOrPath {
				return info, nil
			}
		}
	}
	if strings.Contains(nameOrPath, "/") || strings.HasSuffix(nameOrPath, ".so") {
		return e.fromPath(nameOrPath)
	}
	if slices.Contains(knownPlugins, nameOrPath) {
		info := e.search(nameOrPath)
		if !info.Found {
			return info, fmt.Errorf("pjrt: plugin %q not found; searched %s (set %s to the plugin file or its directory)",
				nameOrPath, strings.Join(info.Searched, ", "), pluginEnvVar)
		}
		if info.Note != "" {
			return info, fmt.Errorf("pjrt: plugin %q found at %s, but %s", nameOrPath, info.Path, info.Note)
		}
		return info, nil
	}
	for _, info := range e.extraPlugins() {
		if info.Name == nameOrPath {
			return info, nil
		}
	}
	return PluginInfo{Name: nameOrPath}, fmt.Errorf("pjrt: unknown plugin %q: known names are %s, or give the path of a plugin .so file",
		nameOrPath, strings.Join(e.knownNames(), ", "))
}

// knownNames lists the names LoadPlugin accepts: the short names, the
// other plugins named in the environment, the built-ins.
func (e searchEnv) knownNames() []string {
	names := slices.Clone(knownPlugins)
	for _, info := range e.extraPlugins() {
		names = append(names, info.Name)
	}
	return append(names, builtinNames()...)
}

// builtinNames lists the registered built-in backends, sorted.
func builtinNames() []string {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	names := make([]string, 0, len(builtins))
	for name := range builtins {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// fromPath describes the plugin file at path.
func (e searchEnv) fromPath(path string) (PluginInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return PluginInfo{}, fmt.Errorf("pjrt: plugin path %q: %w", path, err)
	}
	info := PluginInfo{Name: pluginName(abs), Path: abs, Searched: []string{abs}}
	st, err := os.Stat(abs)
	switch {
	case err != nil && os.IsNotExist(err):
		info.Path = ""
		return info, fmt.Errorf("pjrt: plugin file %s does not exist", abs)
	case err != nil:
		info.Path = ""
		return info, fmt.Errorf("pjrt: plugin file %s: %w", abs, err)
	case st.IsDir():
		info.Path = ""
		return info, fmt.Errorf("pjrt: plugin path %s is a directory, not a shared library", abs)
	}
	info.Found = true
	if info.Name == "cuda" {
		if ok, why := e.gpu(); !ok {
			info.Note = why
		}
	}
	return info, nil
}

// nameForFile is the short name whose library file is called like path,
// else the file's base name without ".so".
func nameForFile(path string) string {
	base := filepath.Base(path)
	for _, name := range knownPlugins {
		if slices.Contains(pluginFiles[name], base) {
			return name
		}
		for _, rel := range sitePackagesFiles[name] {
			if strings.HasSuffix(path, "/"+rel) {
				return name
			}
		}
	}
	return strings.TrimSuffix(base, ".so")
}

// pluginName is nameForFile, but the file's base name when that would be a
// built-in's name (which loads the built-in).
func pluginName(path string) string {
	name := nameForFile(path)
	if slices.Contains(builtinNames(), name) {
		return filepath.Base(path)
	}
	return name
}

// realPath is path with its symbolic links resolved (path itself when
// that fails): the key under which a plugin file is loaded once.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// location is one place searched: a plugin file named in the environment
// (file set) or a directory and the file names to look for in it.
type location struct {
	file  string
	dir   string
	names []string
}

// envEntries splits $PJRT_PLUGIN_LIBRARY_PATH into absolute paths.
func (e searchEnv) envEntries() []string {
	var out []string
	for _, p := range strings.Split(e.getenv(pluginEnvVar), ":") {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// locations lists, in search order, where the short name may be.
func (e searchEnv) locations(name string) []location {
	var locs []location
	plain := pluginFiles[name]
	for _, p := range e.envEntries() {
		switch {
		case nameForFile(p) == name:
			locs = append(locs, location{file: p}) // this plugin's file, existing or not
		case isFile(p):
			// another plugin's file
		default:
			locs = append(locs, location{dir: p, names: plain}) // a directory, or a missing one
		}
	}
	var dirs []string
	if e.home != "" {
		dirs = append(dirs, filepath.Join(e.home, ".local/lib/halo"))
	}
	dirs = append(dirs, e.sys("/usr/local/lib/halo"))
	for _, d := range strings.Split(e.getenv("LD_LIBRARY_PATH"), ":") {
		if d != "" {
			if abs, err := filepath.Abs(d); err == nil {
				dirs = append(dirs, abs)
			}
		}
	}
	for _, d := range dirs {
		locs = append(locs, location{dir: d, names: plain})
	}
	if rels := sitePackagesFiles[name]; len(rels) > 0 {
		for _, sp := range e.sitePackages() {
			for _, rel := range rels {
				locs = append(locs, location{dir: filepath.Join(sp, filepath.Dir(rel)), names: []string{filepath.Base(rel)}})
			}
		}
	}
	return locs
}

// sys maps a fixed system path into e.root.
func (e searchEnv) sys(path string) string {
	if e.root == "" {
		return path
	}
	return filepath.Join(e.root, path)
}

// sitePackages lists the Python package directories to search, in order:
// the active virtualenv, the user's, the system's, then virtualenvs under
// /opt. Each glob's matches are sorted.
func (e searchEnv) sitePackages() []string {
	var patterns []string
	if venv := e.getenv("VIRTUAL_ENV"); venv != "" {
		patterns = append(patterns, filepath.Join(globQuote(venv), "lib/python3*/site-packages"))
	}
	if e.home != "" {
		patterns = append(patterns, filepath.Join(globQuote(e.home), ".local/lib/python3*/site-packages"))
	}
	for _, p := range []string{
		"/usr/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages",
		"/usr/local/lib/python3*/site-packages",
		"/usr/local/lib/python3*/dist-packages",
		"/opt/*/lib/python3*/site-packages",
		"/opt/*/*/lib/python3*/site-packages",
	} {
		patterns = append(patterns, globQuote(e.sys(""))+p)
	}
	var out []string
	for _, p := range patterns {
		matches, _ := filepath.Glob(p) // only ErrBadPattern, and the paths in them are quoted
		slices.Sort(matches)
		for _, m := range matches {
			if isDir(m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// globQuote escapes the pattern characters of a path (a home or a
// virtualenv called "env[1]") so that Glob matches it as it is.
func globQuote(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[\\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// search looks for the short name in its locations, in order.
func (e searchEnv) search(name string) PluginInfo {
	info := PluginInfo{Name: name}
	seen := map[string]bool{}
	for _, loc := range e.locations(name) {
		where := loc.file
		if where == "" {
			where = loc.dir
		}
		if seen[where] {
			continue
		}
		seen[where] = true
		info.Searched = append(info.Searched, where)
		candidates := []string{loc.file}
		if loc.file == "" {
			candidates = candidates[:0]
			for _, n := range loc.names {
				candidates = append(candidates, filepath.Join(loc.dir, n))
			}
		}
		for _, c := range candidates {
			if isFile(c) {
				info.Path = c
				info.Found = true
				if name == "cuda" {
					if ok, why := e.gpu(); !ok {
						info.Note = why
					}
				}
				return info
			}
		}
	}
	return info
}

// extraPlugins are the files named in $PJRT_PLUGIN_LIBRARY_PATH that are not
// one of the short names' libraries.
func (e searchEnv) extraPlugins() []PluginInfo {
	var out []PluginInfo
	seen := map[string]bool{}
	for _, p := range e.envEntries() {
		if !isFile(p) || seen[realPath(p)] {
			continue
		}
		seen[realPath(p)] = true // one file under two names is one plugin
		name := pluginName(p)
		if slices.Contains(knownPlugins, name) {
			continue
		}
		out = append(out, PluginInfo{Name: name, Path: p, Found: true, Searched: []string{p}})
	}
	return out
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
