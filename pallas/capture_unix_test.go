//go:build unix

package pallas

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// captureStdout runs f with file descriptor 1 (where a GPU's printf
// writes, below Go's os.Stdout) drained into a pipe, and returns what was
// written.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved, err := unix.Dup(1)
	require.NoError(t, err)
	require.NoError(t, unix.Dup2(int(w.Fd()), 1))
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	defer func() {
		require.NoError(t, unix.Dup2(saved, 1))
		unix.Close(saved)
		w.Close()
	}()
	f()
	require.NoError(t, unix.Dup2(saved, 1))
	w.Close()
	b := <-read
	r.Close()
	return string(b)
}

// TestCaptureStdout: what goes to file descriptor 1 while f runs is
// returned, and descriptor 1 is the process's standard output again after.
func TestCaptureStdout(t *testing.T) {
	got := captureStdout(t, func() {
		_, err := unix.Write(1, []byte("from below Go\n"))
		require.NoError(t, err)
	})
	require.Equal(t, "from below Go\n", got)
	var st1, st2 unix.Stat_t
	require.NoError(t, unix.Fstat(1, &st1))
	require.NoError(t, unix.Fstat(int(os.Stdout.Fd()), &st2))
	require.Equal(t, st2.Ino, st1.Ino)
}
