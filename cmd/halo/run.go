package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/xla"
)

// runFile compiles a StableHLO file and runs it with no arguments,
// printing every output.
func runFile(w io.Writer, plugin, path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	c, err := pjrt.Open(plugin)
	if err != nil {
		return err
	}
	defer c.Close()
	exe, err := c.Compile(pjrt.MLIR(text), nil)
	if err != nil {
		return err
	}
	outs, err := exe.Run()
	if err != nil {
		return err
	}
	return printOutputs(w, outs)
}

// printOutputs waits for each buffer and prints its values.
func printOutputs(w io.Writer, outs []*pjrt.Buffer) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, b := range outs {
		data, err := b.Bytes(ctx)
		if err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
		fmt.Fprintf(w, "output %d: %v = %s\n", i, b.Shape(), formatValues(b.DType(), data))
	}
	return nil
}

// formatValues renders host bytes of the common element types; other
// types print as hex bytes.
func formatValues(dt xla.DType, data []byte) string {
	var parts []string
	n := dt.HostBytes()
	if n == 0 {
		return "[]"
	}
	const max = 16
	for off := 0; off+n <= len(data); off += n {
		if len(parts) == max {
			parts = append(parts, "...")
			break
		}
		e := data[off : off+n]
		var s string
		switch dt {
		case xla.Float32:
			s = fmt.Sprint(math.Float32frombits(binary.LittleEndian.Uint32(e)))
		case xla.Float64:
			s = fmt.Sprint(math.Float64frombits(binary.LittleEndian.Uint64(e)))
		case xla.Int32:
			s = fmt.Sprint(int32(binary.LittleEndian.Uint32(e)))
		case xla.Int64:
			s = fmt.Sprint(int64(binary.LittleEndian.Uint64(e)))
		case xla.Int8:
			s = fmt.Sprint(int8(e[0]))
		case xla.Uint8:
			s = fmt.Sprint(e[0])
		case xla.Uint32:
			s = fmt.Sprint(binary.LittleEndian.Uint32(e))
		case xla.Bool:
			s = fmt.Sprint(e[0] != 0)
		case xla.BFloat16:
			s = fmt.Sprint(math.Float32frombits(uint32(binary.LittleEndian.Uint16(e)) << 16))
		default:
			s = fmt.Sprintf("0x%x", e)
		}
		parts = append(parts, s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
