package pjrt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/halo-ml/halo/internal/capi"
)

// TestSlotCoverage checks that every function slot of the PJRT_Api table
// is either used by the package's non-test code (a capi.SlotPJRT_<name>
// reference) or listed under "# Left out" in doc.go with a reason, and not
// both.
func TestSlotCoverage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	useRE := regexp.MustCompile(`capi\.Slot(PJRT_\w+)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range useRE.FindAllStringSubmatch(string(src), -1) {
			used[m[1]] = true
		}
	}

	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]string{}
	inList := false
	itemRE := regexp.MustCompile(`^//\s+- (PJRT_\w+): (.+)$`)
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "// # ") {
			inList = strings.TrimSpace(strings.TrimPrefix(line, "// # ")) == "Left out"
			continue
		}
		if !inList {
			continue
		}
		if m := itemRE.FindStringSubmatch(line); m != nil {
			if _, dup := left[m[1]]; dup {
				t.Errorf("doc.go lists %s twice", m[1])
			}
			left[m[1]] = m[2]
		}
	}

	known := map[string]bool{}
	for _, s := range capi.APISlots {
		known[s.Name] = true
		switch {
		case used[s.Name] && left[s.Name] != "":
			t.Errorf("%s is used by package pjrt but listed under \"Left out\" in doc.go", s.Name)
		case !used[s.Name] && left[s.Name] == "":
			t.Errorf("%s is neither used by package pjrt nor listed under \"Left out\" in doc.go (with a reason)", s.Name)
		}
	}
	for name := range left {
		if !known[name] {
			t.Errorf("doc.go lists %s, which is not a slot of the PJRT C API %d.%d", name, capi.APIMajor, capi.APIMinor)
		}
	}
	n := 0
	for _, s := range capi.APISlots {
		if used[s.Name] {
			n++
		}
	}
	pct := 100 * float64(n) / float64(len(capi.APISlots))
	t.Logf("%d of %d PJRT_Api slots used (%.1f%%), %d left out", n, len(capi.APISlots), pct, len(left))
	if want := fmt.Sprintf("%d of the %d function slots", n, len(capi.APISlots)); !strings.Contains(string(doc), want) {
		t.Errorf("doc.go's coverage section should say %q", want)
	}
	if pct < 94 {
		t.Errorf("only %.1f%% of the slots are used; the goal is at least 94%%", pct)
	}
}
