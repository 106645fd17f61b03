package capigen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Versions the tables were measured at.
const (
	// APIMajor and APIMinor are PJRT_API_MAJOR and PJRT_API_MINOR of the
	// measured header; APIMinor must equal the newest minor of the struct
	// size history.
	APIMajor = 0
	APIMinor = 114
	// FFIMajor and FFIMinor are XLA_FFI_API_MAJOR and XLA_FFI_API_MINOR;
	// the tables do not carry them (third_party/pjrt/README.md does).
	FFIMajor = 0
	FFIMinor = 3
)

// Generate reads the tables from fsys (rooted at the repository root) and
// returns every generated file keyed by its slash-separated path relative to
// the repository root.
func Generate(fsys fs.FS) (map[string][]byte, error) {
	t, err := ReadTables(fsys)
	if err != nil {
		return nil, err
	}
	m, err := Build(t)
	if err != nil {
		return nil, err
	}
	newest := 0
	for _, r := range t.History {
		newest = max(newest, r.Minor)
	}
	if newest != APIMinor {
		return nil, fmt.Errorf("%s: newest minor is %d, the generator says APIMinor = %d", sizeHistoryFile, newest, APIMinor)
	}
	out := map[string][]byte{}
	if out[HeaderPath], err = m.Header(); err != nil {
		return nil, err
	}
	goFiles, err := m.GoFiles()
	if err != nil {
		return nil, err
	}
	for k, v := range goFiles {
		out[k] = v
	}
	return out, nil
}

// FindRoot walks up from dir to the directory holding go.mod.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found in any parent directory")
		}
		dir = parent
	}
}

// WriteFiles writes files (as returned by Generate) under dir.
func WriteFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
