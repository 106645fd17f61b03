// Package testplugin builds the PJRT conformance plugin for tests.
//
// The conformance plugin (pjrt/testdata/conformance/conformance.c) is a small
// C library that implements enough of the PJRT C API 0.114 to exercise halo's
// binding end to end through the same purego path as a real plugin, on machines
// where no real PJRT plugin is installed. It is a test double for the ABI path,
// not a backend: see pjrt/testdata/conformance/README.md for what it does and
// for the conformance_* functions it exports for inspection.
//
// This package compiles it with the system C compiler (no cgo is involved):
// once per test binary, cached across runs in os.TempDir() under a name keyed
// by a hash of the sources, the compiler and the flags.
package testplugin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// sourceRel is the directory of the plugin sources, relative to the module root.
const sourceRel = "pjrt/testdata/conformance"

// flags are the compiler flags used for the shared libraries (warnings are
// reported but not fatal here; TestPluginCompilesWarningFree adds -Werror).
var flags = []string{"-shared", "-fPIC", "-O1", "-pthread", "-Wall", "-Wextra"}

var (
	mu       sync.Mutex
	results  = map[string]result{}
	compiles atomic.Int64 // compiler invocations by this process
	copies   atomic.Int64
)

type result struct {
	path string
	err  error
}

// Build compiles the conformance plugin (once per test binary, cached in
// os.TempDir keyed by a hash of the sources) and returns the path of the
// shared library. If no C compiler is found (cc, gcc, clang, or $CC) it skips
// the test. A compile error fails the test with the compiler's output.
func Build(t testing.TB) string {
	t.Helper()
	return build(t, "conformance", "conformance.c")
}

// BuildNoGetAPI returns the path of a shared library that exports no
// GetPjrtApi symbol (only int not_pjrt(void)), for loader error tests.
func BuildNoGetAPI(t testing.TB) string {
	t.Helper()
	return build(t, "nogetapi", "nogetapi.c")
}

// Copy returns a copy of the library at path under a new file name in
// t.TempDir(), so that dlopen loads it as a separate instance: fresh globals
// (counters, registries) and its own reading of CONFORMANCE_PJRT_MAJOR/MINOR.
func Copy(t testing.TB, path string) string {
	t.Helper()
	src, err := os.Open(path)
	if err != nil {
		t.Fatalf("testplugin: %v", err)
	}
	defer src.Close()
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(filepath.Base(path), ext)
	dst := filepath.Join(t.TempDir(), fmt.Sprintf("%s-copy%d%s", base, copies.Add(1), ext))
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatalf("testplugin: %v", err)
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		t.Fatalf("testplugin: copying %s: %v", path, err)
	}
	if err := out.Close(); err != nil {
		t.Fatalf("testplugin: %v", err)
	}
	return dst
}

// sourceDirT returns the directory holding the plugin's C sources, found by
// walking up from this package's directory (or the working directory) to the
// module root (the directory with go.mod).
func sourceDirT(t testing.TB) string {
	t.Helper()
	dir, err := sourceDir()
	if err != nil {
		t.Fatalf("testplugin: %v", err)
	}
	return dir
}

// compiler returns the C compiler and its leading arguments ($CC, else the
// first of cc, gcc, clang on PATH), or skips the test if there is none.
func compiler(t testing.TB) (string, []string) {
	t.Helper()
	cc, args := findCompiler()
	if cc == "" {
		t.Skip("testplugin: the PJRT conformance plugin needs a C compiler (cc, gcc or clang, or $CC) and none was found")
	}
	return cc, args
}

// compile runs the C compiler: cc [ccArgs] flags -I srcdir -o out srcs...
// It returns the compiler's combined output.
func compile(cc string, ccArgs []string, out string, srcs []string, flags ...string) ([]byte, error) {
	args := append([]string{}, ccArgs...)
	args = append(args, flags...)
	if len(srcs) > 0 {
		args = append(args, "-I", filepath.Dir(srcs[0]))
	}
	args = append(args, "-o", out)
	args = append(args, srcs...)
	compiles.Add(1)
	cmd := exec.Command(cc, args...)
	cmd.Env = os.Environ()
	b, err := cmd.CombinedOutput()
	if err != nil {
		return b, fmt.Errorf("%s %s: %w", cc, strings.Join(args, " "), err)
	}
	return b, nil
}

func build(t testing.TB, name, src string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("testplugin: the PJRT conformance plugin is built for Unix-like systems only")
	}
	cc, ccArgs := compiler(t)
	dir := sourceDirT(t)
	key, err := cacheKey(dir, cc, ccArgs, name, src)
	if err != nil {
		t.Fatalf("testplugin: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	r, ok := results[key]
	if !ok {
		r = buildCached(key, dir, cc, ccArgs, name, src)
		results[key] = r
	}
	if r.err != nil {
		t.Fatalf("testplugin: building the %s library: %v", name, r.err)
	}
	return r.path
}

func buildCached(key, dir, cc string, ccArgs []string, name, src string) result {
	outDir := filepath.Join(os.TempDir(), "halo-testplugin-"+key[:16])
	out := filepath.Join(outDir, name+".so")
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		return result{path: out}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return result{err: err}
	}
	// Compile to a temporary name and rename, so that concurrent test
	// binaries never load a half-written library.
	tmp, err := os.CreateTemp(outDir, name+"-*.so.tmp")
	if err != nil {
		return result{err: err}
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	msg, err := compile(cc, ccArgs, tmpName, []string{filepath.Join(dir, src)}, flags...)
	if err != nil {
		return result{err: fmt.Errorf("%v\n%s", err, msg)}
	}
	if err := os.Chmod(tmpName, 0o755); err != nil {
		return result{err: err}
	}
	if err := os.Rename(tmpName, out); err != nil {
		return result{err: err}
	}
	return result{path: out}
}

// cacheKey hashes everything that determines the library: the C sources and
// headers of dir, the compiler, the flags, the target.
func cacheKey(dir, cc string, ccArgs []string, name, src string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "v1\x00%s\x00%s\x00%s\x00%s\x00%s/%s\x00", name, src, cc, strings.Join(ccArgs, " "), runtime.GOOS,
		runtime.GOARCH)
	fmt.Fprintf(h, "%s\x00", strings.Join(flags, " "))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".c") || strings.HasSuffix(e.Name(), ".h")) {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func findCompiler() (string, []string) {
	if env := strings.Fields(os.Getenv("CC")); len(env) > 0 {
		if p, err := exec.LookPath(env[0]); err == nil {
			return p, env[1:]
		}
	}
	for _, name := range []string{"cc", "gcc", "clang"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", nil
}

func sourceDir() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, start := range starts {
		for dir := start; ; {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				src := filepath.Join(dir, filepath.FromSlash(sourceRel))
				if _, err := os.Stat(filepath.Join(src, "conformance.c")); err == nil {
					return src, nil
				}
				break // another module's go.mod: try the next start
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("cannot find " + sourceRel + "/conformance.c above " + strings.Join(starts, " or "))
}
