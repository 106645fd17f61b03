package bench

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
)

// opCounts counts the generic-form op names ("stablehlo.add"(...) in the text.
func opCounts(text []byte) map[string]int {
	counts := map[string]int{}
	for _, m := range regexp.MustCompile(`"((?:stablehlo|func)\.[a-z_]+)"\(`).FindAllSubmatch(text, -1) {
		counts[string(m[1])]++
	}
	return counts
}

// TestSamePrograms checks that both libraries build the same programs: the
// same ops, as many of each, in their generic text.
func TestSamePrograms(t *testing.T) {
	cases := []struct {
		name  string
		halo  func() (*stablehlo.Module, error)
		gomlx func() (gomlxBuilder, error)
	}{
		{"elementwise", func() (*stablehlo.Module, error) { return HaloElementwise(1000) }, func() (gomlxBuilder, error) { return GomlxElementwise(1000) }},
		{"mlp", func() (*stablehlo.Module, error) { return HaloMLP(100) }, func() (gomlxBuilder, error) { return GomlxMLP(100) }},
	}
	for _, c := range cases {
		m, err := c.halo()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := stablehlo.Print(&buf, m, stablehlo.PrintOptions{Generic: true}); err != nil {
			t.Fatal(err)
		}
		gb, err := c.gomlx()
		if err != nil {
			t.Fatal(err)
		}
		gtext, err := gb.Build()
		if err != nil {
			t.Fatal(err)
		}
		h, g := opCounts(buf.Bytes()), opCounts(gtext)
		// go-xla ends functions with stablehlo.return, halo (like MLIR) with func.return.
		// halo's generic form also spells func.func generically.
		g["func.return"] += g["stablehlo.return"]
		delete(g, "stablehlo.return")
		delete(h, "func.func")
		if len(h) != len(g) {
			t.Errorf("%s: halo ops %v, go-xla ops %v", c.name, h, g)
		}
		for op, n := range h {
			if g[op] != n {
				t.Errorf("%s: %s: halo %d, go-xla %d", c.name, op, n, g[op])
			}
		}
	}
}
