package pjrt

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// touch creates an empty file (discovery never loads what it finds),
// making its directories.
func touch(t *testing.T, path string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	return path
}

func mkdir(t *testing.T, path string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(path, 0o755))
	return path
}

// fakeMachine is a searchEnv over a temporary tree: tmp/root is the file
// system root for fixed system paths, tmp/home the home directory.
type fakeMachine struct {
	tmp, root, home string
	env             map[string]string
	gpu             bool
}

func newFakeMachine(t *testing.T) *fakeMachine {
	tmp := t.TempDir()
	return &fakeMachine{
		tmp:  tmp,
		root: mkdir(t, filepath.Join(tmp, "root")),
		home: mkdir(t, filepath.Join(tmp, "home")),
		env:  map[string]string{},
		gpu:  true,
	}
}

func (m *fakeMachine) searchEnv() searchEnv {
	return searchEnv{
		getenv: func(k string) string { return m.env[k] },
		home:   m.home,
		root:   m.root,
		gpu: func() (bool, string) {
			if m.gpu {
				return true, "NVIDIA GPU present (/dev/nvidia0)"
			}
			return false, noGPUNote
		},
	}
}

func (m *fakeMachine) path(rel string) string { return filepath.Join(m.tmp, rel) }

// drain checks that name is found at each of want in turn, deleting each
// hit to uncover the next, and finally that it is not found.
func drain(t *testing.T, m *fakeMachine, name string, want []string) PluginInfo {
	t.Helper()
	for i, w := range want {
		info := m.searchEnv().search(name)
		require.True(t, info.Found, "step %d: want %s", i, w)
		require.Equal(t, w, info.Path, "step %d", i)
		require.NotEmpty(t, info.Searched)
		require.NoError(t, os.Remove(w))
	}
	info := m.searchEnv().search(name)
	require.False(t, info.Found, "after removing every candidate")
	assert.Empty(t, info.Path)
	return info
}

func TestSearchOrderPlainDirs(t *testing.T) {
	m := newFakeMachine(t)
	envDir := mkdir(t, m.path("envdir"))
	envFile := touch(t, m.path("envfile/pjrt_c_api_cpu_plugin.so"))
	ld1 := mkdir(t, m.path("ld1"))
	ld2 := mkdir(t, m.path("ld2"))
	m.env[pluginEnvVar] = envDir + "::" + envFile
	m.env["LD_LIBRARY_PATH"] = ld1 + ":" + ld2 + ":"

	want := []string{
		touch(t, filepath.Join(envDir, "pjrt_c_api_cpu_plugin.so")),
		envFile,
		touch(t, filepath.Join(m.home, ".local/lib/halo/pjrt_c_api_cpu_plugin.so")),
		touch(t, filepath.Join(m.root, "usr/local/lib/halo/pjrt_c_api_cpu_plugin.so")),
		touch(t, filepath.Join(ld1, "pjrt_c_api_cpu_plugin.so")),
		touch(t, filepath.Join(ld2, "pjrt_c_api_cpu_plugin.so")),
	}
	// A CPU plugin in site-packages is not looked for.
	touch(t, filepath.Join(m.home, ".local/lib/python3.12/site-packages/pjrt_c_api_cpu_plugin.so"))

	info := drain(t, m, "cpu", want)
	assert.Equal(t, []string{
		envDir,
		envFile,
		filepath.Join(m.home, ".local/lib/halo"),
		filepath.Join(m.root, "usr/local/lib/halo"),
		ld1,
		ld2,
	}, info.Searched)
}

func TestFileNamePrecedenceWithinDir(t *testing.T) {
	m := newFakeMachine(t)
	dir := filepath.Join(m.root, "usr/local/lib/halo")
	drain(t, m, "cpu", []string{
		touch(t, filepath.Join(dir, "pjrt_c_api_cpu_plugin.so")),
		touch(t, filepath.Join(dir, "libpjrt_c_api_cpu_plugin.so")),
		touch(t, filepath.Join(dir, "pjrt_cpu_plugin.so")),
	})
	drain(t, m, "cuda", []string{
		touch(t, filepath.Join(dir, "pjrt_c_api_gpu_plugin.so")),
		touch(t, filepath.Join(dir, "xla_cuda_plugin.so")),
	})
	drain(t, m, "tpu", []string{touch(t, filepath.Join(dir, "libtpu.so"))})
}

func TestSearchOrderSitePackages(t *testing.T) {
	m := newFakeMachine(t)
	venv := m.path("venv")
	m.env["VIRTUAL_ENV"] = venv
	ld := mkdir(t, m.path("ld"))
	m.env["LD_LIBRARY_PATH"] = ld

	sps := []string{
		filepath.Join(venv, "lib/python3.12/site-packages"),
		filepath.Join(m.home, ".local/lib/python3.11/site-packages"),
		filepath.Join(m.home, ".local/lib/python3.12/site-packages"),
		filepath.Join(m.root, "usr/lib/python3.12/site-packages"),
		filepath.Join(m.root, "usr/lib/python3/dist-packages"),
		filepath.Join(m.root, "usr/local/lib/python3.12/site-packages"),
		filepath.Join(m.root, "usr/local/lib/python3.12/dist-packages"),
		filepath.Join(m.root, "opt/conda/lib/python3.12/site-packages"),
		filepath.Join(m.root, "opt/venvs/jax/lib/python3.12/site-packages"),
	}
	// Plain directories come before every site-packages directory.
	want := []string{touch(t, filepath.Join(ld, "xla_cuda_plugin.so"))}
	for _, sp := range sps {
		want = append(want,
			touch(t, filepath.Join(sp, "jax_plugins/xla_cuda13/xla_cuda_plugin.so")),
			touch(t, filepath.Join(sp, "jax_plugins/xla_cuda12/xla_cuda_plugin.so")))
	}
	// Not a site-packages directory: not searched.
	touch(t, filepath.Join(m.root, "srv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"))

	info := drain(t, m, "cuda", want)
	wantSearched := []string{
		filepath.Join(m.home, ".local/lib/halo"),
		filepath.Join(m.root, "usr/local/lib/halo"),
		ld,
	}
	for _, sp := range sps {
		wantSearched = append(wantSearched,
			filepath.Join(sp, "jax_plugins/xla_cuda13"),
			filepath.Join(sp, "jax_plugins/xla_cuda12"))
	}
	assert.Equal(t, wantSearched, info.Searched)

	// TPU: libtpu.so in a plain directory, then libtpu/libtpu.so per site-packages.
	drain(t, m, "tpu", []string{
		touch(t, filepath.Join(ld, "libtpu.so")),
		touch(t, filepath.Join(sps[0], "libtpu/libtpu.so")),
		touch(t, filepath.Join(sps[8], "libtpu/libtpu.so")),
	})
}

func TestSearchedWhenNotFound(t *testing.T) {
	m := newFakeMachine(t)
	info := m.searchEnv().search("tpu")
	assert.Equal(t, PluginInfo{
		Name: "tpu",
		Searched: []string{
			filepath.Join(m.home, ".local/lib/halo"),
			filepath.Join(m.root, "usr/local/lib/halo"),
		},
	}, info)

	// Duplicate directories are searched once; missing env directories are
	// still reported.
	ld := mkdir(t, m.path("ld"))
	m.env["LD_LIBRARY_PATH"] = ld + ":" + ld + "/:" + filepath.Join(m.home, ".local/lib/halo")
	m.env[pluginEnvVar] = m.path("missing-dir")
	info = m.searchEnv().search("cpu")
	assert.Equal(t, []string{
		m.path("missing-dir"),
		filepath.Join(m.home, ".local/lib/halo"),
		filepath.Join(m.root, "usr/local/lib/halo"),
		ld,
	}, info.Searched)

	_, err := m.searchEnv().find("cpu")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `plugin "cpu" not found; searched `+m.path("missing-dir"))
	assert.Contains(t, err.Error(), pluginEnvVar)
}

func TestEnvFileOfAnotherPlugin(t *testing.T) {
	m := newFakeMachine(t)
	tpu := touch(t, m.path("x/libtpu.so"))
	m.env[pluginEnvVar] = tpu
	cpu := m.searchEnv().search("cpu")
	assert.False(t, cpu.Found)
	assert.NotContains(t, cpu.Searched, tpu)
	got := m.searchEnv().search("tpu")
	assert.Equal(t, tpu, got.Path)
	assert.Equal(t, []string{tpu}, got.Searched)
}

func TestCUDAWithoutGPU(t *testing.T) {
	m := newFakeMachine(t)
	m.gpu = false
	plugin := touch(t, filepath.Join(m.root, "usr/local/lib/halo/xla_cuda_plugin.so"))

	var cuda PluginInfo
	for _, info := range m.searchEnv().plugins() {
		if info.Name == "cuda" {
			cuda = info
		}
	}
	assert.True(t, cuda.Found)
	assert.Equal(t, plugin, cuda.Path)
	assert.Contains(t, cuda.Note, "no NVIDIA GPU present")

	info, err := m.searchEnv().find("cuda")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no NVIDIA GPU present")
	assert.Contains(t, err.Error(), plugin)
	assert.Equal(t, plugin, info.Path)

	// An explicit path is not refused, only annotated.
	info, err = m.searchEnv().find(plugin)
	require.NoError(t, err)
	assert.Equal(t, "cuda", info.Name)
	assert.Contains(t, info.Note, "no NVIDIA GPU present")

	m.gpu = true
	info, err = m.searchEnv().find("cuda")
	require.NoError(t, err)
	assert.Equal(t, PluginInfo{Name: "cuda", Path: plugin, Found: true, Searched: []string{
		filepath.Join(m.home, ".local/lib/halo"),
		filepath.Join(m.root, "usr/local/lib/halo"),
	}}, info)
}

func TestFindPath(t *testing.T) {
	m := newFakeMachine(t)
	mine := touch(t, m.path("plugins/my_backend.so"))
	cpu := touch(t, m.path("plugins/pjrt_c_api_cpu_plugin.so"))

	info, err := m.searchEnv().find(mine)
	require.NoError(t, err)
	assert.Equal(t, PluginInfo{Name: "my_backend", Path: mine, Found: true, Searched: []string{mine}}, info)

	info, err = m.searchEnv().find(cpu)
	require.NoError(t, err)
	assert.Equal(t, "cpu", info.Name)

	// A relative path is made absolute.
	t.Chdir(m.path("plugins"))
	info, err = m.searchEnv().find("./my_backend.so")
	require.NoError(t, err)
	assert.Equal(t, mine, info.Path)
	info, err = m.searchEnv().find("my_backend.so") // ends in .so: a path
	require.NoError(t, err)
	assert.Equal(t, mine, info.Path)

	missing := m.path("plugins/nope.so")
	info, err = m.searchEnv().find(missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), missing+" does not exist")
	assert.False(t, info.Found)
	assert.Empty(t, info.Path)

	_, err = m.searchEnv().find(m.path("plugins"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a directory")
}

func TestFindUnknownName(t *testing.T) {
	m := newFakeMachine(t)
	_, err := m.searchEnv().find("rocm")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown plugin "rocm": known names are cpu, cuda, tpu`)
	_, err = m.searchEnv().find("")
	require.Error(t, err)
}

func TestFindPluginUsesRealEnvironment(t *testing.T) {
	_, err := findPlugin("no-such-backend")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown plugin "no-such-backend"`)
}

func TestExtraPluginsFromEnv(t *testing.T) {
	m := newFakeMachine(t)
	mine := touch(t, m.path("x/my_backend.so"))
	cpu := touch(t, m.path("x/pjrt_c_api_cpu_plugin.so"))
	m.env[pluginEnvVar] = strings.Join([]string{mine, cpu, mine, m.path("x/absent.so")}, ":")

	infos := m.searchEnv().plugins()
	var names []string
	for _, info := range infos {
		names = append(names, info.Name)
	}
	assert.Equal(t, []string{"cpu", "cuda", "tpu", "my_backend"}, names)
	assert.Equal(t, cpu, infos[0].Path)
	assert.Equal(t, PluginInfo{Name: "my_backend", Path: mine, Found: true, Searched: []string{mine}}, infos[3])

	info, err := m.searchEnv().find("my_backend")
	require.NoError(t, err)
	assert.Equal(t, mine, info.Path)

	_, err = m.searchEnv().find("other")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "known names are cpu, cuda, tpu, my_backend")
}

func TestPluginsDeterministic(t *testing.T) {
	m := newFakeMachine(t)
	m.env["VIRTUAL_ENV"] = m.path("venv")
	for _, v := range []string{"3.9", "3.10", "3.12"} {
		touch(t, m.path("venv/lib/python"+v+"/site-packages/libtpu/libtpu.so"))
	}
	first := m.searchEnv().plugins()
	assert.Equal(t, m.path("venv/lib/python3.10/site-packages/libtpu/libtpu.so"), first[2].Path, "glob matches in sorted order")
	for range 20 {
		assert.Equal(t, first, m.searchEnv().plugins())
	}
}

func TestPluginsOnThisMachine(t *testing.T) {
	// Whatever this machine has, the three short names are listed in order
	// and every entry is either found with a path or says where it looked.
	infos := Plugins()
	require.GreaterOrEqual(t, len(infos), 3)
	for i, name := range knownPlugins {
		assert.Equal(t, name, infos[i].Name)
	}
	for _, info := range infos {
		if info.Found {
			assert.True(t, filepath.IsAbs(info.Path), info.Path)
		} else {
			assert.NotEmpty(t, info.Searched, info.Name)
		}
		t.Logf("%s: found=%v path=%q note=%q", info.Name, info.Found, info.Path, info.Note)
	}
}

// TestCandidatesOrder: accelerators first, then plugins the environment
// names, then CPU, then the built-in; a CUDA plugin without a GPU and a
// plugin not found are left out.
func TestCandidatesOrder(t *testing.T) {
	m := newFakeMachine(t)
	cuda := touch(t, filepath.Join(m.root, "usr/local/lib/halo/xla_cuda_plugin.so"))
	tpu := touch(t, filepath.Join(m.root, "usr/local/lib/halo/libtpu.so"))
	cpu := touch(t, filepath.Join(m.root, "usr/local/lib/halo/pjrt_c_api_cpu_plugin.so"))
	mine := touch(t, m.path("x/my_backend.so"))
	m.env[pluginEnvVar] = mine
	paths := func() (out []string) {
		for _, info := range m.searchEnv().candidates() {
			out = append(out, info.Name+"="+info.Path)
		}
		return out
	}
	assert.Equal(t, []string{"cuda=" + cuda, "tpu=" + tpu, "my_backend=" + mine, "cpu=" + cpu, "interpreter="}, paths())
	m.gpu = false
	require.NoError(t, os.Remove(tpu))
	assert.Equal(t, []string{"my_backend=" + mine, "cpu=" + cpu, "interpreter="}, paths())
}

// TestPatternCharactersInPaths: a virtualenv or home whose path holds
// glob characters is searched as it is.
func TestPatternCharactersInPaths(t *testing.T) {
	m := newFakeMachine(t)
	venv := m.path("venv[1]*")
	plugin := touch(t, filepath.Join(venv, "lib/python3.12/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so"))
	m.env["VIRTUAL_ENV"] = venv
	info := m.searchEnv().search("cuda")
	require.True(t, info.Found, "searched %v", info.Searched)
	assert.Equal(t, plugin, info.Path)

	m.home = mkdir(t, m.path("home?"))
	tpu := touch(t, filepath.Join(m.home, ".local/lib/python3.11/site-packages/libtpu/libtpu.so"))
	assert.Equal(t, tpu, m.searchEnv().search("tpu").Path)
}

// TestExtraPluginNamedLikeABuiltin: a file interpreter.so named in the
// environment keeps its file name, since "interpreter" loads the built-in.
func TestExtraPluginNamedLikeABuiltin(t *testing.T) {
	m := newFakeMachine(t)
	file := touch(t, m.path("x/interpreter.so"))
	m.env[pluginEnvVar] = file
	extra := m.searchEnv().extraPlugins()
	require.Len(t, extra, 1)
	assert.Equal(t, "interpreter.so", extra[0].Name)
	_, err := m.searchEnv().find("nope")
	assert.ErrorContains(t, err, "known names are cpu, cuda, tpu, interpreter.so, interpreter,")
	// That name finds it (not a file interpreter.so in the working
	// directory), and so does its path, under the same name.
	info, err := m.searchEnv().find("interpreter.so")
	require.NoError(t, err)
	assert.Equal(t, file, info.Path)
	info, err = m.searchEnv().find(file)
	require.NoError(t, err)
	assert.Equal(t, "interpreter.so", info.Name)
}

// TestExtraPluginUnderTwoNames: a file and a symbolic link to it, both
// named in the environment, are one plugin.
func TestExtraPluginUnderTwoNames(t *testing.T) {
	m := newFakeMachine(t)
	file := touch(t, m.path("x/my_backend.so"))
	link := m.path("x/other_name.so")
	require.NoError(t, os.Symlink(file, link))
	m.env[pluginEnvVar] = file + ":" + link
	extra := m.searchEnv().extraPlugins()
	require.Len(t, extra, 1)
	assert.Equal(t, "my_backend", extra[0].Name)
}

// TestLoadBestConcurrently: LoadPlugin("") from several goroutines while
// others read the plugin's name (a data race under -race when a load
// renamed the cached plugin).
func TestLoadBestConcurrently(t *testing.T) {
	p0, err := LoadPlugin("")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			p, err := LoadPlugin("")
			assert.NoError(t, err)
			assert.Same(t, p0, p)
		}()
		go func() {
			defer wg.Done()
			_ = p0.Name()
		}()
	}
	wg.Wait()
}
