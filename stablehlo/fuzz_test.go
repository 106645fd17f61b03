package stablehlo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// mlirFuzzSnippets are small seeds that reach corners of the grammar.
var mlirFuzzSnippets = []string{
	``,
	`module {}`,
	`module @m attributes {a = 1 : i32} {
}`,
	`"foo.op"() {a = [1, 2 : i32, 1.5, "s", @sym, @a::@b, unit, true, {k = v}, array<i64: 1, 2>, array<f32: 1.0>, array<i1: true>, dense<[[1, 2]]> : tensor<1x2xi8>, dense<"0x0102"> : tensor<2xui8>, dense<(1.0, 2.0)> : tensor<complex<f32>>, #stablehlo<precision HIGH>, #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, #stablehlo.conv<raw input_batch_dimension = 0, input_spatial_dimensions = [1]>, #foo.bar<"x">, affine_map<(d0) -> (d0)>, tensor<?x4xf32>, (i32) -> (), !foo.ty<1>]} : () -> ()`,
	`#a = dense<1> : tensor<i32>
!t = tensor<2xf32>
"foo.op"() {x = #a} : () -> !t loc(#l)
#l = loc(fused["a", "b":1:2, callsite("c" at "d":3:4)])`,
	`func.func @f(%arg0: tensor<f32>) -> tensor<f32> {
  %0:2 = "foo.two"(%arg0) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %1 = stablehlo.add %0#0, %0#1 : tensor<f32>
  return %1 : tensor<f32>
}`,
	`func.func @f() {
^bb0:
  "foo.br"() [^bb1] : () -> ()
^bb1(%x: i32):
  return
}`,
	`func.func private @decl(tensor<f32> {a}) -> (tensor<f32> {b})`,
	`// -----
"x.y"() : () -> ()
// -----`,
	`"foo.op"() {v = dense_resource<b> : tensor<2xi8>, w = dense_resource<"q.r"> : tensor<1xi1>} : () -> ()
{-# dialect_resources: { builtin: { b: "0x010000000102", "q.r": "0x0400000001" }, x: { y: "0x" } }, external_resources: { z: {} } #-}`,
}

// FuzzParse checks that the parser (and Verify on what it accepts) never
// panics or hangs on any input, that what it accepts prints, and that the printed text (both forms)
// parses back into an equal module and prints the same again.
func FuzzParse(f *testing.F) {
	for _, s := range mlirFuzzSnippets {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("testdata/*.mlir")
	more, _ := filepath.Glob("testdata/golden/*.mlir")
	for _, name := range append(files, more...) {
		if data, err := os.ReadFile(name); err == nil && len(data) < 64<<10 {
			f.Add(data)
		}
	}
	for _, prog := range mlirTestCorpus() {
		var b bytes.Buffer
		_ = Print(&b, prog.m, PrintOptions{Locations: true})
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseAll(data)
		m, err := Parse(data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			return
		}
		_ = m.Verify() // refuses what it must with an error, never a panic
		for _, opts := range []PrintOptions{{Locations: true}, {Generic: true, Locations: true}} {
			var b bytes.Buffer
			if err := Print(&b, m, opts); err != nil {
				t.Fatalf("Print: %v", err)
			}
			m2, err := Parse(b.Bytes())
			if err != nil {
				t.Fatalf("printed text does not parse (generic=%v): %v\n%s", opts.Generic, err, b.String())
			}
			if d := equalModules(m, m2, true); d != "" {
				t.Fatalf("parse(print(m)) != m (generic=%v): %s\n%s", opts.Generic, d, b.String())
			}
			var b2 bytes.Buffer
			_ = Print(&b2, m2, opts)
			if b2.String() != b.String() {
				t.Fatalf("print is not a fixed point (generic=%v):\n%s", opts.Generic, mlirFirstDiff(b.String(), b2.String()))
			}
		}
	})
}
