package pjrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/halo-ml/halo/internal/dl"
)

// noGPUNote is the reason given when no NVIDIA GPU is visible.
const noGPUNote = "no NVIDIA GPU present (no /dev/nvidia[0-9]* and no /proc/driver/nvidia/gpus/*)"

// gpuPresent reports whether an NVIDIA GPU is visible to this process: a
// /dev/nvidiaN device node or a /proc/driver/nvidia/gpus entry. The string
// says what was found, or why the answer is no.
func gpuPresent() (bool, string) { return gpuPresentIn("") }

// gpuPresentIn is gpuPresent with /dev and /proc under root.
func gpuPresentIn(root string) (bool, string) {
	for _, pattern := range []string{"/dev/nvidia[0-9]*", "/proc/driver/nvidia/gpus/*"} {
		matches, _ := filepath.Glob(globQuote(root) + pattern) // fixed, valid patterns
		slices.Sort(matches)
		if len(matches) > 0 {
			return true, "NVIDIA GPU present (" + strings.TrimPrefix(matches[0], root) + ")"
		}
	}
	return false, noGPUNote
}

// cudaPluginDir matches the directory of a JAX CUDA plugin wheel
// (jax_plugins/xla_cuda13) and cudaLibPkg the combined library directory of
// CUDA 13+ pip wheels (nvidia/cu13); both capture the CUDA major version.
var (
	cudaPluginDir = regexp.MustCompile(`^xla_cuda(\d+)$`)
	cudaLibPkg    = regexp.MustCompile(`^cu(\d+)$`)
)

// cuda12Packages are the nvidia/<pkg> directories of CUDA-toolkit pip wheels
// that CUDA 13 replaced by the single nvidia/cu13 directory; they are left
// out for a CUDA 13+ plugin so a CUDA 12 stack installed beside it is not
// preloaded. Packages versioned apart from the toolkit (cudnn, nccl,
// nvshmem, cusparselt, ...) keep their own directory in both layouts.
var cuda12Packages = map[string]bool{
	"cuda_runtime": true, "cuda_nvrtc": true, "cuda_cupti": true, "cuda_nvcc": true,
	"cublas": true, "cufft": true, "cusolver": true, "cusparse": true, "curand": true,
	"nvjitlink": true, "cufile": true, "nvtx": true, "npp": true, "nvjpeg": true,
}

// nvidiaLibraryDirs lists the nvidia/*/lib directories of NVIDIA's pip
// wheels in the site-packages directory that holds pluginPath (the CUDA
// plugin of a jax-cuda*-pjrt wheel), in the order to preload them: the
// combined nvidia/cuNN/lib of CUDA 13+ first, then the per-package
// directories (nvidia/cudnn/lib, nvidia/nccl/lib, ...) sorted. For a plugin
// built for CUDA N, other CUDA majors' directories are left out. It returns
// nil when the plugin is not inside such a tree.
func nvidiaLibraryDirs(pluginPath string) []string {
	major := 0
	for _, part := range strings.Split(filepath.ToSlash(pluginPath), "/") {
		if m := cudaPluginDir.FindStringSubmatch(part); m != nil {
			major, _ = strconv.Atoi(m[1])
		}
	}
	// The site-packages directory is the nearest ancestor with an nvidia/
	// directory (the plugin is site-packages/jax_plugins/xla_cudaN/*.so).
	var nvidia string
	dir := filepath.Dir(pluginPath)
	for range 4 {
		if isDir(filepath.Join(dir, "nvidia")) {
			nvidia = filepath.Join(dir, "nvidia")
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if nvidia == "" {
		return nil
	}
	entries, err := os.ReadDir(nvidia)
	if err != nil {
		return nil
	}
	type libDir struct {
		path  string
		major int // N for nvidia/cuN, else 0
	}
	var dirs []libDir
	for _, e := range entries {
		lib := filepath.Join(nvidia, e.Name(), "lib")
		if !isDir(lib) {
			continue
		}
		d := libDir{path: lib}
		if m := cudaLibPkg.FindStringSubmatch(e.Name()); m != nil {
			d.major, _ = strconv.Atoi(m[1])
		}
		switch {
		case major == 0:
		case d.major != 0 && d.major != major:
			continue // another CUDA major's combined directory
		case major >= 13 && cuda12Packages[e.Name()]:
			continue // CUDA 12 per-package layout beside a CUDA 13+ plugin
		}
		dirs = append(dirs, d)
	}
	slices.SortStableFunc(dirs, func(a, b libDir) int {
		switch {
		case a.major != b.major:
			return b.major - a.major // combined cuNN directories first, newest first
		default:
			return strings.Compare(a.path, b.path)
		}
	})
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = d.path
	}
	return out
}

// preloadSkip are libraries of NVIDIA's wheels that are never preloaded:
// libnvblas and libcufftw define the CPU BLAS / FFTW symbols and would
// replace them process-wide if loaded RTLD_GLOBAL, and libcufile_rdma needs
// RDMA system libraries. None is a dependency of the CUDA plugin.
var preloadSkip = map[string]bool{"libnvblas": true, "libcufftw": true, "libcufile_rdma": true}

// preloadFirst lists library stems in an order that satisfies most of their
// dependencies at the first try; the rest follow in directory order.
var preloadFirst = []string{
	"libcudart", "libnvJitLink", "libnvrtc", "libcublasLt", "libcublas", "libcusparse",
	"libcufft", "libcusolver", "libcupti", "libnccl", "libnvshmem_host", "libcudnn",
}

// sharedLibName matches lib*.so and lib*.so.N[.M...] and captures the stem
// and the version suffix.
var sharedLibName = regexp.MustCompile(`^(lib.+?)\.so((?:\.\d+)*)$`)

// preloaded is the set of library files this process has dlopened; they are
// never closed.
var preloaded struct {
	sync.Mutex
	files map[string]bool
}

// preloadNVIDIALibraries dlopens (RTLD_NOW|RTLD_GLOBAL, never closed) every
// lib*.so* in dirs, so a plugin's later dlopen of, say, "libcudart.so.13"
// finds the copy already loaded by its soname: a running process cannot
// extend its own LD_LIBRARY_PATH. A library whose dependencies are not
// loaded yet is retried after the others until a round makes no progress.
// It returns the files loaded by this call; the error lists those that could
// not be loaded (the others stay loaded), and callers usually only report it.
func preloadNVIDIALibraries(dirs []string) (loaded []string, err error) {
	return preloadLibraries(dirs, func(path string) error {
		_, err := dl.Open(path, true)
		return err
	})
}

// preloadLibraries is preloadNVIDIALibraries with the dlopen call injected.
// Files already loaded through it in this process are not opened again.
func preloadLibraries(dirs []string, open func(path string) error) ([]string, error) {
	preloaded.Lock()
	defer preloaded.Unlock()
	if preloaded.files == nil {
		preloaded.files = map[string]bool{}
	}
	var pending []string
	for _, f := range preloadCandidates(dirs) {
		if !preloaded.files[f] {
			pending = append(pending, f)
		}
	}
	var loaded []string
	failures := map[string]error{}
	for len(pending) > 0 {
		var failed []string
		for _, f := range pending {
			if err := open(f); err != nil {
				failures[f] = err
				failed = append(failed, f)
				continue
			}
			delete(failures, f)
			preloaded.files[f] = true
			loaded = append(loaded, f)
		}
		if len(failed) == len(pending) {
			break // no progress: the rest need something that is not here
		}
		pending = failed
	}
	if len(failures) == 0 {
		return loaded, nil
	}
	errs := make([]error, 0, len(failures))
	for _, f := range pending {
		msg := failures[f].Error()
		if !strings.Contains(msg, f) { // dlerror usually names the file already
			msg = f + ": " + msg
		}
		errs = append(errs, errors.New(msg))
	}
	return loaded, fmt.Errorf("pjrt: could not preload %d of %d NVIDIA libraries: %w",
		len(pending), len(pending)+len(loaded), errors.Join(errs...))
}

// preloadCandidates lists the shared libraries of dirs in preload order.
// Per directory it keeps one file per library (the shortest versioned name,
// which is the soname in NVIDIA's wheels, over copies with a longer version
// or none); a file name already taken from an earlier directory, a file
// reached twice through links, and preloadSkip are left out. preloadFirst
// stems lead; the rest keep directory order, then name order.
func preloadCandidates(dirs []string) []string {
	type cand struct {
		path, base, stem, version string
		dir                       int
	}
	// better reports whether a is a better file than b for the same library.
	better := func(a, b cand) bool {
		if (a.version != "") != (b.version != "") {
			return a.version != ""
		}
		if len(a.version) != len(b.version) {
			return len(a.version) < len(b.version)
		}
		return a.base < b.base
	}
	var cands []cand
	for i, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		chosen := map[string]cand{} // stem -> file
		for _, e := range entries {
			m := sharedLibName.FindStringSubmatch(e.Name())
			if m == nil || preloadSkip[m[1]] {
				continue
			}
			c := cand{path: filepath.Join(dir, e.Name()), base: e.Name(), stem: m[1], version: m[2], dir: i}
			if !isFile(c.path) {
				continue
			}
			if old, ok := chosen[c.stem]; !ok || better(c, old) {
				chosen[c.stem] = c
			}
		}
		for _, c := range chosen {
			cands = append(cands, c)
		}
	}
	rank := func(stem string) int {
		if i := slices.Index(preloadFirst, stem); i >= 0 {
			return i
		}
		return len(preloadFirst)
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if ra, rb := rank(a.stem), rank(b.stem); ra != rb {
			return ra - rb
		}
		if a.dir != b.dir {
			return a.dir - b.dir
		}
		return strings.Compare(a.base, b.base)
	})
	var out []string
	seenBase := map[string]bool{}
	seenReal := map[string]bool{}
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c.path)
		if err != nil {
			real = c.path
		}
		if seenBase[c.base] || seenReal[real] {
			continue
		}
		seenBase[c.base] = true
		seenReal[real] = true
		out = append(out, c.path)
	}
	return out
}
