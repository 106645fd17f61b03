package interpreter_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
)

func zzFmt(v interpreter.Value) string {
	t, ok := v.(*interpreter.Tensor)
	if !ok {
		return fmt.Sprintf("%T %v", v, v)
	}
	s := fmt.Sprintf("%v %v", t.Shape, t.Data)
	if os.Getenv("REVIEW_HEX") != "" {
		switch d := t.Data.(type) {
		case []float32:
			var b []string
			for _, x := range d {
				b = append(b, fmt.Sprintf("%08x", math.Float32bits(x)))
			}
			s += " hex[" + strings.Join(b, " ") + "]"
		case []float64:
			var b []string
			for _, x := range d {
				b = append(b, fmt.Sprintf("%016x", math.Float64bits(x)))
			}
			s += " hex[" + strings.Join(b, " ") + "]"
		}
	}
	return s
}

func TestZZReview(t *testing.T) {
	f := os.Getenv("REVIEW_FILE")
	if f == "" {
		t.Skip()
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for i, chunk := range strings.Split(string(b), "\n// -----") {
		title := strings.SplitN(strings.TrimSpace(chunk), "\n", 2)[0]
		func() {
			defer func() {
				if r := recover(); r != nil {
					fmt.Printf("#%d %s\n  PANIC: %v\n", i, title, r)
				}
			}()
			m, err := stablehlo.Parse([]byte(chunk))
			if err != nil {
				fmt.Printf("#%d %s\n  PARSE ERR: %v\n", i, title, err)
				return
			}
			p, err := interpreter.Compile(m, "")
			if err != nil {
				fmt.Printf("#%d %s\n  COMPILE ERR: %v\n", i, title, err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, err := p.Run(ctx, interpreter.Device{}, nil)
			if err != nil {
				fmt.Printf("#%d %s\n  RUN ERR: %v\n", i, title, err)
				return
			}
			fmt.Printf("#%d %s\n", i, title)
			for _, o := range out {
				fmt.Printf("  %s\n", zzFmt(o))
			}
		}()
	}
}
