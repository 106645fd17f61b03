package testplugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/halo-ml/halo/internal/dl"
)

func dlopen(t *testing.T, path string) uintptr {
	t.Helper()
	lib, err := dl.Open(path, false)
	if err != nil {
		t.Fatalf("dlopen %s: %v", path, err)
	}
	return lib
}

func TestBuildIsCached(t *testing.T) {
	p1 := Build(t)
	st, err := os.Stat(p1)
	if err != nil || st.Size() == 0 {
		t.Fatalf("Build returned %q: %v", p1, err)
	}
	before := compiles.Load()
	p2 := Build(t)
	if p2 != p1 {
		t.Errorf("second Build returned %q, want %q", p2, p1)
	}
	if n := compiles.Load() - before; n != 0 {
		t.Errorf("second Build ran the compiler %d times", n)
	}
	if !strings.HasPrefix(p1, os.TempDir()) {
		t.Errorf("library %q is not cached under os.TempDir() %q", p1, os.TempDir())
	}
}

func TestSmokeGetPjrtApi(t *testing.T) {
	lib := dlopen(t, Build(t))
	var getAPI func() unsafe.Pointer
	purego.RegisterLibFunc(&getAPI, lib, "GetPjrtApi")
	var counter func(string) int64
	purego.RegisterLibFunc(&counter, lib, "conformance_counter")

	api := getAPI()
	if api == nil {
		t.Fatal("GetPjrtApi returned NULL")
	}
	major := *(*int32)(unsafe.Add(api, 32))
	minor := *(*int32)(unsafe.Add(api, 36))
	if major != 0 || minor != 114 {
		t.Errorf("version %d.%d, want 0.114", major, minor)
	}
	if n := counter("plugin_initialize"); n != 0 {
		t.Errorf("plugin_initialize = %d, want 0", n)
	}
	if n := counter("no_such_counter"); n != -1 {
		t.Errorf("unknown counter = %d, want -1", n)
	}
}

func TestCopyLoadsAsSeparateInstance(t *testing.T) {
	path := Copy(t, Build(t))
	if filepath.Dir(path) == filepath.Dir(Build(t)) {
		t.Fatalf("copy %q is next to the original", path)
	}
	t.Setenv("CONFORMANCE_PJRT_MINOR", "50")
	lib := dlopen(t, path)
	var getAPI func() unsafe.Pointer
	purego.RegisterLibFunc(&getAPI, lib, "GetPjrtApi")
	var counter func(string) int64
	purego.RegisterLibFunc(&counter, lib, "conformance_counter")
	api := getAPI()
	if minor := *(*int32)(unsafe.Add(api, 36)); minor != 50 {
		t.Errorf("minor %d, want 50 from CONFORMANCE_PJRT_MINOR", minor)
	}
	slot := func(i int) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Add(api, 40+8*i)) }
	if slot(96) == nil { // PJRT_Executable_GetCompiledMemoryStats, from minor 40
		t.Error("slot 96 is NULL at minor 50")
	}
	if slot(98) != nil { // PJRT_ExecuteContext_Create, from minor 52
		t.Error("slot 98 is set at minor 50")
	}
	// At minor 50 the struct_size reported 96 slots (see pjrt_api_table.tsv).
	if size := *(*uint64)(api); size != 40+8*96 {
		t.Errorf("struct_size %d, want %d", size, 40+8*96)
	}
	if n := counter("get_pjrt_api"); n != 1 {
		t.Errorf("get_pjrt_api = %d in a fresh copy, want 1", n)
	}
}

func TestBuildNoGetAPI(t *testing.T) {
	lib := dlopen(t, BuildNoGetAPI(t))
	if _, err := dl.Sym(lib, "GetPjrtApi"); err == nil {
		t.Error("the nogetapi library exports GetPjrtApi")
	}
	var notPJRT func() int32
	purego.RegisterLibFunc(&notPJRT, lib, "not_pjrt")
	if v := notPJRT(); v != 42 {
		t.Errorf("not_pjrt() = %d", v)
	}
}

// TestPluginCompilesWarningFree compiles every C file with -Werror.
func TestPluginCompilesWarningFree(t *testing.T) {
	cc, ccArgs := compiler(t)
	dir := sourceDirT(t)
	tmp := t.TempDir()
	for _, src := range []string{"conformance.c", "nogetapi.c"} {
		out := filepath.Join(tmp, strings.TrimSuffix(src, ".c")+".so")
		if msg, err := compile(cc, ccArgs, out, []string{filepath.Join(dir, src)}, append(flags, "-Werror")...); err != nil {
			t.Errorf("%s: %v\n%s", src, err, msg)
		}
	}
	out := filepath.Join(tmp, "selftest")
	if msg, err := compile(cc, ccArgs, out, []string{filepath.Join(dir, "selftest.c")}, selftestFlags("-Werror")...); err != nil {
		t.Errorf("selftest.c: %v\n%s", err, msg)
	}
}

func selftestFlags(extra ...string) []string {
	f := []string{"-O1", "-pthread", "-Wall", "-Wextra"}
	f = append(f, extra...)
	return f
}

// TestSelfTest runs selftest.c, a C driver of the whole plugin (events,
// buffers, compile, execute, FFI, concurrency, live-object accounting),
// against the built library.
func TestSelfTest(t *testing.T) {
	plugin := Build(t)
	cc, ccArgs := compiler(t)
	exe := filepath.Join(t.TempDir(), "selftest")
	flags := selftestFlags()
	if msg, err := compile(cc, ccArgs, exe, []string{filepath.Join(sourceDirT(t), "selftest.c")}, flags...); err != nil {
		// -ldl is needed for dlopen with older glibc versions.
		msg2, err2 := compile(cc, ccArgs, exe, []string{filepath.Join(sourceDirT(t), "selftest.c"), "-ldl"}, flags...)
		if err2 != nil {
			t.Fatalf("compiling selftest.c: %v\n%s\n%s", err, msg, msg2)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, plugin)
	cmd.Env = append(os.Environ(), "CONFORMANCE_EVENT_DELAY_US=100")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("selftest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "selftest: ok") {
		t.Fatalf("selftest output:\n%s", out)
	}
}
