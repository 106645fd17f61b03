package stablehlo

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ReplicaGroups returns the process groups of a collective's
// replica_groups attribute. Two spellings are understood:
//
//   - a rank-2 integer tensor, dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>,
//     one row per group; negative entries pad groups of unequal size and
//     are dropped (a rank-1 tensor is one group);
//   - #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes =
//     [#stablehlo.mesh_axis<name = "x", size = 2>, ...]>, axes =
//     [#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>, ...]>:
//     devices 0..N-1 laid out row-major over the mesh (or the mesh's
//     device_ids), one group per combination of the axes not named, members
//     ordered by the named axes (the first named is the slowest). A sub-axis
//     (pre)size of an axis of size n splits it as [pre, size, n/(pre*size)]
//     and varies the middle factor.
//
// A mesh named by symbol (mesh = @name, as Shardy's partitioner writes)
// needs the module that defines it: see ReplicaGroupsIn.
func ReplicaGroups(a Attribute) ([][]int64, error) {
	switch a := a.(type) {
	case nil:
		return nil, fmt.Errorf("replica_groups is missing")
	case DenseElementsAttr:
		return denseReplicaGroups(a)
	case OpaqueAttr:
		if meshBySymbol(string(a)) {
			return nil, fmt.Errorf("replica_groups %s names its mesh by symbol: the module's sdy.mesh gives it (ReplicaGroupsIn)", string(a))
		}
		if strings.HasPrefix(string(a), "#stablehlo.replica_group_mesh_axes<") {
			return meshAxesGroups(string(a))
		}
		return nil, fmt.Errorf("replica_groups %q is neither a dense integer tensor nor #stablehlo.replica_group_mesh_axes", string(a))
	default:
		return nil, fmt.Errorf("replica_groups is %T, want a dense integer tensor or #stablehlo.replica_group_mesh_axes", a)
	}
}

// ReplicaGroupsIn is ReplicaGroups for an op of module m: a
// replica_group_mesh_axes whose mesh is a symbol (mesh = @name) takes the
// axes and device ids of m's sdy.mesh @name.
func ReplicaGroupsIn(m *Module, a Attribute) ([][]int64, error) {
	o, ok := a.(OpaqueAttr)
	if !ok || !meshBySymbol(string(o)) {
		return ReplicaGroups(a)
	}
	text := string(o)
	_, rest, _ := strings.Cut(text, "@")
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '$' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))
	})
	if end < 0 {
		end = len(rest)
	}
	name := rest[:end]
	if m == nil {
		return nil, fmt.Errorf("replica_groups %s: no module to find mesh @%s in", text, name)
	}
	for _, g := range m.Globals {
		if g == nil || g.Name != "sdy.mesh" {
			continue
		}
		if sym, _ := g.Attr("sym_name").(StringAttr); string(sym) != name {
			continue
		}
		body, ok := mlirStrip(g.Attr("mesh"), "#sdy.mesh")
		if !ok {
			return nil, fmt.Errorf("replica_groups %s: sdy.mesh @%s has no mesh attribute", text, name)
		}
		axes, ids, err := sdyMesh(body)
		if err != nil {
			return nil, fmt.Errorf("replica_groups %s: sdy.mesh @%s: %v", text, name, err)
		}
		return meshGroups(text, axes, ids)
	}
	return nil, fmt.Errorf("replica_groups %s: the module has no sdy.mesh @%s", text, name)
}

// sdyMesh reads the axes and device ids of a Shardy mesh body,
// <["x"=2, "y"=4], device_ids=[...]>.
func sdyMesh(body string) ([]meshAxis, []int64, error) {
	s := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(body, "<"), ">"))
	var axes []meshAxis
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return nil, nil, fmt.Errorf("unclosed axis list in %q", body)
		}
		list := s[1:end]
		s = s[end+1:]
		for list = strings.TrimSpace(list); list != ""; {
			if list[0] != '"' {
				return nil, nil, fmt.Errorf("bad axis %q", list)
			}
			q := strings.IndexByte(list[1:], '"')
			if q < 0 {
				return nil, nil, fmt.Errorf("bad axis %q", list)
			}
			name := list[1 : 1+q]
			rest := strings.TrimSpace(list[2+q:])
			if !strings.HasPrefix(rest, "=") {
				return nil, nil, fmt.Errorf("axis %q has no size", name)
			}
			rest = strings.TrimSpace(rest[1:])
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			size, err := strconv.ParseInt(rest[:j], 10, 64)
			if err != nil || size <= 0 {
				return nil, nil, fmt.Errorf("axis %q has a bad size", name)
			}
			axes = append(axes, meshAxis{name, size})
			list = strings.TrimLeft(strings.TrimSpace(rest[j:]), ",")
			list = strings.TrimSpace(list)
		}
	}
	var ids []int64
	if rest, ok := (attrScanner{s: s}).value("device_ids"); ok {
		v, err := parseIntListAfter(rest)
		if err != nil {
			return nil, nil, fmt.Errorf("device_ids: %v", err)
		}
		ids = v
	}
	return axes, ids, nil
}

func denseReplicaGroups(a DenseElementsAttr) ([][]int64, error) {
	vals, err := a.Int64s()
	if err != nil {
		return nil, fmt.Errorf("replica_groups: %w", err)
	}
	var rows, cols int
	switch len(a.Type.Dims) {
	case 1:
		rows, cols = 1, len(vals)
	case 2:
		rows, cols = int(a.Type.Dims[0]), int(a.Type.Dims[1])
	default:
		return nil, fmt.Errorf("replica_groups must be rank 2, is %s", a.Type)
	}
	if rows*cols != len(vals) {
		return nil, fmt.Errorf("replica_groups %s holds %d values", a.Type, len(vals))
	}
	out := make([][]int64, 0, rows)
	for i := 0; i < rows; i++ {
		var g []int64
		for _, v := range vals[i*cols : (i+1)*cols] {
			if v >= 0 {
				g = append(g, v)
			}
		}
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out, nil
}

// meshAxis is one named axis of a mesh.
type meshAxis struct {
	name string
	size int64
}

// axisRef names a mesh axis, or the sub-axis (pre)size of it (size 0:
// the whole axis).
type axisRef struct {
	name      string
	pre, size int64
}

func meshAxesGroups(text string) ([][]int64, error) {
	sc := attrScanner{s: text}
	var axes []meshAxis
	for _, m := range sc.all("#stablehlo.mesh_axis<") {
		name, ok1 := m.str("name")
		size, ok2 := m.int("size")
		if !ok1 || !ok2 || size <= 0 {
			return nil, fmt.Errorf("replica_groups %s: bad mesh axis %q", text, m.s)
		}
		axes = append(axes, meshAxis{name, size})
	}
	var deviceIDs []int64
	if rest, ok := sc.value("device_ids"); ok {
		ids, err := parseIntListAfter(rest)
		if err != nil {
			return nil, fmt.Errorf("replica_groups %s: device_ids: %v", text, err)
		}
		deviceIDs = ids
	}
	return meshGroups(text, axes, deviceIDs)
}

// meshGroups are the groups of the replica_group_mesh_axes text over a
// mesh of axes (devices numbered row-major, or deviceIDs).
func meshGroups(text string, axes []meshAxis, deviceIDs []int64) ([][]int64, error) {
	fail := func(format string, args ...any) ([][]int64, error) {
		return nil, fmt.Errorf("replica_groups %s: %s", text, fmt.Sprintf(format, args...))
	}
	sc := attrScanner{s: text}
	var refs []axisRef
	for _, r := range sc.all("#stablehlo.axis_ref<") {
		name, ok := r.str("name")
		if !ok {
			return fail("bad axis_ref %q", r.s)
		}
		ref := axisRef{name: name}
		if rest, ok := r.value("sub_axis_info"); ok {
			var pre, size int64
			j := strings.IndexByte(rest, '(')
			if j < 0 {
				return fail("bad sub_axis_info in %q", r.s)
			}
			if _, err := fmt.Sscanf(rest[j:], "(%d)%d", &pre, &size); err != nil || pre <= 0 || size <= 0 {
				return fail("bad sub_axis_info in %q", r.s)
			}
			ref.pre, ref.size = pre, size
		}
		refs = append(refs, ref)
	}
	if len(refs) == 0 {
		// Shardy's spelling: #sdy<axis_ref"y"> or #sdy<axis_ref"y":(1)2>.
		for _, r := range sc.all("#sdy<axis_ref") {
			body := strings.TrimSpace(r.s)
			if !strings.HasPrefix(body, `"`) {
				return fail("bad axis_ref %q", r.s)
			}
			end := strings.IndexByte(body[1:], '"')
			if end < 0 {
				return fail("bad axis_ref %q", r.s)
			}
			ref := axisRef{name: body[1 : 1+end]}
			if rest := strings.TrimSpace(body[2+end:]); rest != "" {
				var pre, size int64
				if _, err := fmt.Sscanf(rest, ":(%d)%d", &pre, &size); err != nil || pre <= 0 || size <= 0 {
					return fail("bad sub-axis in %q", r.s)
				}
				ref.pre, ref.size = pre, size
			}
			refs = append(refs, ref)
		}
	}
	if len(axes) == 0 {
		return fail("the mesh has no axes")
	}
	if len(refs) == 0 {
		return fail("no axes are named")
	}
	n := int64(1)
	index := map[string]int{}
	for i, a := range axes {
		if _, dup := index[a.name]; dup {
			return fail("mesh axis %q appears twice", a.name)
		}
		index[a.name] = i
		n *= a.size
	}
	if deviceIDs != nil && int64(len(deviceIDs)) != n {
		return fail("device_ids has %d entries for a mesh of %d devices", len(deviceIDs), n)
	}
	for _, id := range deviceIDs {
		if id < 0 {
			return fail("device_ids holds %d: device ids are not negative", id)
		}
	}
	// stride[k] is the value of one step of ref k's (sub-)axis within its
	// axis coordinate; extent[k] its size.
	type part struct {
		axis           int
		stride, extent int64
	}
	parts := make([]part, len(refs))
	used := map[string]int64{} // product of sizes taken from each axis
	for k, r := range refs {
		ai, ok := index[r.name]
		if !ok {
			return fail("axis %q is not in the mesh", r.name)
		}
		size := axes[ai].size
		p := part{axis: ai, stride: 1, extent: size}
		if r.size > 0 {
			if size%(r.pre*r.size) != 0 {
				return fail("sub-axis (%d)%d does not divide axis %q of size %d", r.pre, r.size, r.name, size)
			}
			p.extent = r.size
			p.stride = size / (r.pre * r.size)
		}
		used[r.name] = used[r.name] * p.extent
		if used[r.name] == 0 {
			used[r.name] = p.extent
		}
		if used[r.name] > size {
			return fail("axis %q is named more than once", r.name)
		}
		parts[k] = p
	}
	// coords of device d (row-major over the mesh).
	coords := func(d int64) []int64 {
		c := make([]int64, len(axes))
		for i := len(axes) - 1; i >= 0; i-- {
			c[i] = d % axes[i].size
			d /= axes[i].size
		}
		return c
	}
	type key string
	groupOf := map[key]int{}
	var groups [][]int64
	var positions [][]int64
	for d := int64(0); d < n; d++ {
		c := coords(d)
		pos := int64(0)
		for _, p := range parts {
			v := (c[p.axis] / p.stride) % p.extent
			pos = pos*p.extent + v
			c[p.axis] -= v * p.stride
		}
		var sb strings.Builder
		for _, v := range c {
			sb.WriteString(strconv.FormatInt(v, 10))
			sb.WriteByte(',')
		}
		k := key(sb.String())
		g, ok := groupOf[k]
		if !ok {
			g = len(groups)
			groupOf[k] = g
			groups = append(groups, nil)
			positions = append(positions, nil)
		}
		id := d
		if deviceIDs != nil {
			id = deviceIDs[d]
		}
		groups[g] = append(groups[g], id)
		positions[g] = append(positions[g], pos)
	}
	for g := range groups {
		sorted := make([]int64, len(groups[g]))
		for i, p := range positions[g] {
			if p >= int64(len(sorted)) {
				return fail("the named axes do not partition the mesh")
			}
			sorted[p] = groups[g][i]
		}
		groups[g] = sorted
	}
	return groups, nil
}

// attrScanner finds nested attribute bodies in opaque attribute text.
type attrScanner struct{ s string }

// all returns the bodies of every "prefix...>" in the text, matching
// angle brackets.
func (a attrScanner) all(prefix string) []attrScanner {
	var out []attrScanner
	s := a.s
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			return out
		}
		s = s[i+len(prefix):]
		depth, end := 1, -1
		for j := 0; j < len(s) && end < 0; j++ {
			switch s[j] {
			case '<':
				depth++
			case '>':
				depth--
				if depth == 0 {
					end = j
				}
			}
		}
		if end < 0 {
			return out
		}
		out = append(out, attrScanner{s: s[:end]})
		s = s[end+1:]
	}
}

// value returns the text after "key =", where key is a whole word
// outside quoted strings (a mesh axis may be named "size").
func (a attrScanner) value(key string) (string, bool) {
	s := a.s
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			// Skip the quoted string (\" does not end it).
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case strings.HasPrefix(s[i:], key) && (i == 0 || !isWordByte(s[i-1])) &&
			(i+len(key) == len(s) || !isWordByte(s[i+len(key)])):
			rest := strings.TrimLeft(s[i+len(key):], " ")
			if strings.HasPrefix(rest, "=") {
				return strings.TrimLeft(rest[1:], " "), true
			}
		}
	}
	return "", false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// str returns the quoted value of key = "...".
func (a attrScanner) str(key string) (string, bool) {
	rest, ok := a.value(key)
	if !ok || !strings.HasPrefix(rest, `"`) {
		return "", false
	}
	j := strings.IndexByte(rest[1:], '"')
	if j < 0 {
		return "", false
	}
	return rest[1 : 1+j], true
}

// int returns the integer value of key = N.
func (a attrScanner) int(key string) (int64, bool) {
	rest, ok := a.value(key)
	if !ok {
		return 0, false
	}
	j := 0
	for j < len(rest) && (rest[j] == '-' || rest[j] >= '0' && rest[j] <= '9') {
		j++
	}
	v, err := strconv.ParseInt(rest[:j], 10, 64)
	return v, err == nil
}

// parseIntListAfter reads the first [a, b, ...] or array<i64: a, b>
// list in s.
func parseIntListAfter(s string) ([]int64, error) {
	start := strings.IndexAny(s, "[:")
	if start < 0 {
		return nil, fmt.Errorf("no list")
	}
	end := strings.IndexAny(s[start:], "]>")
	if end < 0 {
		return nil, fmt.Errorf("unterminated list")
	}
	var out []int64
	for _, f := range strings.Split(s[start+1:start+end], ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// maxExpandedSplat is the most elements a splat attribute of integers
// (padding, replica groups, a layout ...) is expanded to: a tiny literal
// may name a huge type.
const maxExpandedSplat = 1 << 20

// Int64s returns the elements of an integer or boolean attribute (a splat
// expanded, up to 2^20 elements), sign-extended for signed types of any
// width.
func (a DenseElementsAttr) Int64s() ([]int64, error) {
	dt := a.Type.DType
	if !dt.IsInt() && !dt.IsBool() {
		return nil, fmt.Errorf("want integer elements, got %s", a.Type)
	}
	w := dt.HostBytes()
	n := a.Type.Size()
	if n < 0 {
		return nil, fmt.Errorf("dynamic shape %s", a.Type)
	}
	if a.Splat {
		if len(a.Data) < w {
			return nil, fmt.Errorf("splat of %s has %d bytes", a.Type, len(a.Data))
		}
		if n > maxExpandedSplat {
			return nil, fmt.Errorf("splat of %s has %d elements, more than an attribute of integers holds (%d)", a.Type, n, maxExpandedSplat)
		}
	} else if len(a.Data) != int(n)*w {
		return nil, fmt.Errorf("%s has %d bytes, want %d", a.Type, len(a.Data), int(n)*w)
	}
	bits := uint(dt.Bits())
	out := make([]int64, n)
	for i := range out {
		off := i * w
		if a.Splat {
			off = 0
		}
		var u uint64
		for k := 0; k < w; k++ {
			u |= uint64(a.Data[off+k]) << (8 * k)
		}
		if dt.IsUnsigned() || dt.IsBool() || bits >= 64 {
			if bits < 64 && !dt.IsBool() {
				u &= 1<<bits - 1
			}
			out[i] = int64(u)
		} else {
			out[i] = int64(u<<(64-bits)) >> (64 - bits)
		}
	}
	return out, nil
}
