package pjrt

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGPUPresentIn(t *testing.T) {
	root := t.TempDir()
	ok, why := gpuPresentIn(root)
	assert.False(t, ok)
	assert.Equal(t, noGPUNote, why)

	touch(t, filepath.Join(root, "dev/nvidiactl")) // driver loaded, no GPU node
	touch(t, filepath.Join(root, "dev/nvidia-uvm"))
	ok, _ = gpuPresentIn(root)
	assert.False(t, ok)

	touch(t, filepath.Join(root, "dev/nvidia3"))
	ok, why = gpuPresentIn(root)
	assert.True(t, ok)
	assert.Equal(t, "NVIDIA GPU present (/dev/nvidia3)", why)

	root2 := t.TempDir()
	mkdir(t, filepath.Join(root2, "proc/driver/nvidia/gpus/0000:01:00.0"))
	ok, why = gpuPresentIn(root2)
	assert.True(t, ok)
	assert.Contains(t, why, "/proc/driver/nvidia/gpus/0000:01:00.0")
}

func TestGPUPresentOnThisMachine(t *testing.T) {
	ok, why := gpuPresent()
	assert.NotEmpty(t, why)
	t.Logf("gpuPresent: %v, %s", ok, why)
}

// fakeSitePackages makes site-packages with NVIDIA wheel directories for
// both the CUDA 12 (nvidia/<pkg>/lib) and CUDA 13 (nvidia/cu13/lib) layouts.
func fakeSitePackages(t *testing.T) string {
	sp := filepath.Join(t.TempDir(), "venv/lib/python3.12/site-packages")
	for _, pkg := range []string{"cu13", "cu12", "cudnn", "nccl", "nvshmem", "cublas", "cuda_runtime", "cuda_nvrtc", "nvjitlink"} {
		mkdir(t, filepath.Join(sp, "nvidia", pkg, "lib"))
	}
	mkdir(t, filepath.Join(sp, "nvidia/__pycache__"))       // no lib: ignored
	mkdir(t, filepath.Join(sp, "nvidia/cuda_nvcc/include")) // no lib: ignored
	return sp
}

func TestNVIDIALibraryDirs(t *testing.T) {
	sp := fakeSitePackages(t)
	lib := func(pkg string) string { return filepath.Join(sp, "nvidia", pkg, "lib") }

	cuda13 := touch(t, filepath.Join(sp, "jax_plugins/xla_cuda13/xla_cuda_plugin.so"))
	assert.Equal(t, []string{lib("cu13"), lib("cudnn"), lib("nccl"), lib("nvshmem")}, nvidiaLibraryDirs(cuda13))

	cuda12 := touch(t, filepath.Join(sp, "jax_plugins/xla_cuda12/xla_cuda_plugin.so"))
	assert.Equal(t, []string{lib("cu12"), lib("cublas"), lib("cuda_nvrtc"), lib("cuda_runtime"), lib("cudnn"), lib("nccl"), lib("nvjitlink"), lib("nvshmem")},
		nvidiaLibraryDirs(cuda12))

	// A plugin whose CUDA version the path does not tell: every lib dir,
	// combined cuNN directories first, newest first.
	other := touch(t, filepath.Join(sp, "pjrt_c_api_gpu_plugin.so"))
	assert.Equal(t, []string{lib("cu13"), lib("cu12"), lib("cublas"), lib("cuda_nvrtc"), lib("cuda_runtime"), lib("cudnn"), lib("nccl"), lib("nvjitlink"), lib("nvshmem")},
		nvidiaLibraryDirs(other))

	// Not inside a tree with nvidia/.
	lone := touch(t, filepath.Join(t.TempDir(), "a/b/c/d/e/xla_cuda_plugin.so"))
	assert.Nil(t, nvidiaLibraryDirs(lone))
}

// fakeLibs is a set of library files and their dependencies (by base name)
// for preloading tests; open fails until a library's dependencies are
// loaded, like dlopen with RTLD_NOW of a library whose DT_NEEDED entries are
// not on the search path.
type fakeLibs struct {
	deps   map[string][]string
	broken map[string]bool
	loaded map[string]bool
	calls  []string
}

func (f *fakeLibs) open(path string) error {
	base := filepath.Base(path)
	f.calls = append(f.calls, base)
	if f.broken[base] {
		return errors.New("libmissing.so.1: cannot open shared object file: No such file or directory")
	}
	for _, d := range f.deps[base] {
		if !f.loaded[d] {
			return errors.New(d + ": cannot open shared object file: No such file or directory")
		}
	}
	f.loaded[base] = true
	return nil
}

func TestPreloadDependencyOrder(t *testing.T) {
	sp := fakeSitePackages(t)
	cu13 := filepath.Join(sp, "nvidia/cu13/lib")
	cudnn := filepath.Join(sp, "nvidia/cudnn/lib")
	nccl := filepath.Join(sp, "nvidia/nccl/lib")
	for _, f := range []string{
		"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", "libnvrtc.so.13",
		"libnvrtc.so",                      // unversioned copy: the versioned one is loaded
		"libfoo.so.13.0.1", "libfoo.so.13", // longer version: the soname is loaded
		"libnvrtc-builtins.so.13.0",          // loaded
		"libnvblas.so.13", "libcufftw.so.12", // never: they would replace CPU BLAS/FFTW
		"libaaa.so.1", "libzzz.so.1", // libaaa needs libzzz, which sorts after it
		"libneedsmissing.so.1",                    // needs a library that is nowhere
		"README", "libcudart.so.13.txt", "x.so.1", // not shared libraries
	} {
		touch(t, filepath.Join(cu13, f))
	}
	touch(t, filepath.Join(cudnn, "libcudnn.so.9"))
	touch(t, filepath.Join(cudnn, "libcudnn_graph.so.9"))
	touch(t, filepath.Join(cudnn, "libcudnn_ops.so.9"))
	touch(t, filepath.Join(nccl, "libnccl.so.2"))
	// The same file twice: through a symlinked directory, and a copy with
	// the same name in a later directory.
	require.NoError(t, os.Symlink(cudnn, filepath.Join(sp, "nvidia/cudnn-link")))
	touch(t, filepath.Join(nccl, "libcudart.so.13"))

	f := &fakeLibs{
		deps: map[string][]string{
			"libcublas.so.13":     {"libcublasLt.so.13", "libcudart.so.13"},
			"libcublasLt.so.13":   {"libcudart.so.13"},
			"libcudnn.so.9":       {"libcudnn_graph.so.9", "libcudnn_ops.so.9"}, // listed early, needs later ones
			"libcudnn_ops.so.9":   {"libcudnn_graph.so.9"},
			"libcudnn_graph.so.9": {"libcublas.so.13", "libnvrtc.so.13"},
			"libaaa.so.1":         {"libzzz.so.1"},
			"libnccl.so.2":        {"libcudart.so.13"},
		},
		broken: map[string]bool{"libneedsmissing.so.1": true},
		loaded: map[string]bool{},
	}
	dirs := []string{cu13, cudnn, filepath.Join(sp, "nvidia/cudnn-link"), nccl}
	loaded, err := preloadLibraries(dirs, f.open)

	var bases []string
	for _, p := range loaded {
		bases = append(bases, filepath.Base(p))
		assert.True(t, filepath.IsAbs(p))
	}
	assert.ElementsMatch(t, []string{
		"libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13", "libnvrtc.so.13", "libfoo.so.13",
		"libnvrtc-builtins.so.13.0", "libaaa.so.1", "libzzz.so.1",
		"libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9", "libnccl.so.2",
	}, bases)
	// Every library was loaded after its dependencies.
	for i, b := range bases {
		for _, d := range f.deps[b] {
			assert.Contains(t, bases[:i], d, "%s loaded before its dependency %s", b, d)
		}
	}
	// libcudart (from cu13/lib, the first directory) is the first try.
	require.NotEmpty(t, f.calls)
	assert.Equal(t, "libcudart.so.13", f.calls[0])
	assert.Equal(t, filepath.Join(cu13, "libcudart.so.13"), loaded[0])
	for _, never := range []string{"libnvblas.so.13", "libcufftw.so.12", "libnvrtc.so", "libfoo.so.13.0.1", "README", "libcudart.so.13.txt", "x.so.1"} {
		assert.NotContains(t, f.calls, never)
	}
	// Each file is opened until it loads, once it has: no file is loaded twice.
	for _, b := range bases {
		n := 0
		for _, c := range f.calls {
			if c == b {
				n++
			}
		}
		assert.LessOrEqual(t, n, 3, b)
	}
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(bases))), len(bases), "nothing loaded twice")

	require.Error(t, err)
	assert.Contains(t, err.Error(), "could not preload 1 of 13 NVIDIA libraries")
	assert.Contains(t, err.Error(), filepath.Join(cu13, "libneedsmissing.so.1")+": libmissing.so.1: cannot open shared object file")
	assert.NotContains(t, err.Error(), "libcudnn", "libraries loaded on a retry are not reported")

	// A second call opens only what did not load the first time.
	f.calls = nil
	again, err := preloadLibraries(dirs, f.open)
	assert.Empty(t, again)
	assert.Equal(t, []string{"libneedsmissing.so.1"}, f.calls)
	require.Error(t, err)
}

func TestPreloadStopsWithoutProgress(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"liba.so.1", "libb.so.1", "libc.so.1"} {
		touch(t, filepath.Join(dir, f))
	}
	calls := 0
	loaded, err := preloadLibraries([]string{dir}, func(string) error {
		calls++
		return errors.New("nope")
	})
	assert.Empty(t, loaded)
	assert.Equal(t, 3, calls, "one round, then no progress")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "could not preload 3 of 3")
	for _, f := range []string{"liba.so.1", "libb.so.1", "libc.so.1"} {
		assert.Contains(t, err.Error(), filepath.Join(dir, f)+": nope")
	}
}

func TestPreloadNothing(t *testing.T) {
	loaded, err := preloadLibraries([]string{t.TempDir(), filepath.Join(t.TempDir(), "missing")}, func(string) error {
		t.Fatal("nothing to open")
		return nil
	})
	assert.Empty(t, loaded)
	assert.NoError(t, err)
}

func TestPreloadNVIDIALibrariesRealDlopen(t *testing.T) {
	// An empty file is not a shared object: the real dlopen refuses it and
	// the error names the file. Nothing is loaded into the test process.
	dir := t.TempDir()
	bad := touch(t, filepath.Join(dir, "libnotreally.so.1"))
	loaded, err := preloadNVIDIALibraries([]string{dir})
	assert.Empty(t, loaded)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), bad), err.Error())
}
