// Command gen regenerates the Go mirrors of the PJRT C ABI in internal/capi
// and the C header pjrt/testdata/conformance/pjrt_abi.h from the measured
// tables in third_party/pjrt. It is run by go generate ./internal/capi.
//
// Usage:
//
//	go run ./internal/capi/internal/gen [-root DIR] [-out DIR]
//
// -root is the repository root (default: the nearest parent directory with
// a go.mod); -out is where the files are written (default: the root), each
// at its path relative to the root.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/halo-ml/halo/internal/capi/internal/capigen"
)

func main() {
	root := flag.String("root", "", "repository root (default: found by walking up to go.mod)")
	out := flag.String("out", "", "output directory (default: the repository root)")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(root, out string) error {
	if root == "" {
		var err error
		if root, err = capigen.FindRoot("."); err != nil {
			return err
		}
	}
	if out == "" {
		out = root
	}
	files, err := capigen.Generate(os.DirFS(root))
	if err != nil {
		return err
	}
	return capigen.WriteFiles(out, files)
}
