package stablehlo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Types, attributes and locations.

// mlirDTypeByName maps MLIR element type spellings to DTypes.
var mlirDTypeByName = func() map[string]xla.DType {
	m := map[string]xla.DType{}
	for _, d := range xla.AllDTypes() {
		if d == xla.Int1 {
			continue
		}
		m[d.String()] = d
	}
	m["i1"] = xla.Bool
	return m
}()

// intern returns a canonical string for b (attribute names and the like
// repeat a lot; this avoids one allocation per use).
func (p *mlirParser) intern(b []byte) string {
	if s, ok := p.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if p.strs == nil {
		p.strs = map[string]string{}
	}
	p.strs[s] = s
	return s
}

// ---------------------------------------------------------------------------
// Types.

// parseType parses a type.
func (p *mlirParser) parseType() Type {
	p.enter()
	defer p.leave()
	p.expanded++
	c := p.peek()
	switch {
	case c == '(':
		return p.parseFunctionType()
	case c == '!':
		return p.parseBangType()
	case mlirIsLetter(c) || c == '_':
		start := p.pos
		id := p.bareID()
		if p.pos < len(p.src) && p.src[p.pos] == '<' {
			switch string(id) {
			case "tensor":
				return p.parseTensorType(start)
			case "tuple":
				p.pos++
				var elems []Type
				if !p.tryByte('>') {
					for {
						elems = append(elems, p.parseType())
						if !p.tryByte(',') {
							break
						}
					}
					p.expect('>')
				}
				return TupleType{Elems: elems}
			}
			p.balanced()
			return p.opaqueType(p.src[start:p.pos])
		}
		return p.opaqueType(id)
	}
	p.fail("expected type%s", p.found())
	return nil
}

func (p *mlirParser) opaqueType(text []byte) Type {
	if t, ok := p.types[string(text)]; ok {
		return t
	}
	t := OpaqueType{Text: string(text)}
	p.types[t.Text] = t
	return t
}

// parseBangType parses !stablehlo.token, a type alias or a dialect type.
func (p *mlirParser) parseBangType() Type {
	start := p.pos
	p.expect('!')
	pos := p.pos
	name := p.aliasName()
	if p.pos < len(p.src) && p.src[p.pos] == '<' {
		p.balanced()
		return p.opaqueType(p.src[start:p.pos])
	}
	if string(name) == "stablehlo.token" {
		return TokenType{}
	}
	if t, ok := p.typeAliases[string(name)]; ok {
		p.useAlias("!" + string(name))
		return t
	}
	if bytes.IndexByte(name, '.') < 0 {
		p.errAt(pos, "undefined type alias !%s", name)
	}
	return p.opaqueType(p.src[start:p.pos])
}

// parseTensorType parses tensor<...>; start is the offset of "tensor".
func (p *mlirParser) parseTensorType(start int) Type {
	// Cache by text: a program repeats few types many times.
	end := p.pos
	depth := 0
	for end < len(p.src) {
		c := p.src[end]
		if c == '<' {
			depth++
		} else if c == '>' && p.src[end-1] != '-' {
			depth--
			if depth == 0 {
				break
			}
		} else if c == '"' || c == '\n' {
			end = -1
			break
		}
		end++
	}
	if end > 0 && end < len(p.src) {
		if t, ok := p.types[string(p.src[start:end+1])]; ok {
			p.pos = end + 1
			return t
		}
	}
	t := p.parseTensorSlow(start)
	p.types[string(p.src[start:p.pos])] = t
	return t
}

func (p *mlirParser) parseTensorSlow(start int) Type {
	p.expect('<')
	// An element type given by an alias is written out in an opaque
	// type's text (which the printer writes without the alias).
	type subst struct {
		at, end int
		with    string
	}
	var substs []subst // in order
	text := func() string {
		var b strings.Builder
		from := start
		for _, s := range substs {
			b.Write(p.src[from:s.at])
			b.WriteString(s.with)
			from = s.end
		}
		b.Write(p.src[from:p.pos])
		return b.String()
	}
	opaque := func() Type {
		p.pos = start + len("tensor")
		p.balanced()
		return OpaqueType{Text: text()}
	}
	if p.peek() == '*' {
		return opaque()
	}
	var dims []int64
	for {
		c := p.peek()
		if mlirIsDigit(c) {
			ds := p.pos
			for p.pos < len(p.src) && mlirIsDigit(p.src[p.pos]) {
				p.pos++
			}
			d, err := strconv.ParseInt(string(p.src[ds:p.pos]), 10, 64)
			if err != nil {
				p.errAt(ds, "invalid dimension")
			}
			dims = append(dims, d)
		} else if c == '?' {
			p.pos++
			dims = append(dims, DynamicDim)
		} else {
			break
		}
		if p.pos >= len(p.src) || p.src[p.pos] != 'x' {
			p.fail("expected 'x' in dimension list%s", p.found())
		}
		p.pos++
	}
	es := p.pos
	p.skipSpace()
	var dt xla.DType
	known := false
	if p.peek() == '!' {
		at := p.pos
		switch t := p.parseBangType().(type) {
		case OpaqueType:
			if d, ok := mlirDTypeByName[t.Text]; ok {
				dt, known = d, true // an alias of a builtin type
			} else if t.Text != string(p.src[at:p.pos]) {
				substs = append(substs, subst{at, p.pos, t.Text})
			}
		case TokenType:
		default:
			p.errAt(at, "%s is not an element type", t)
		}
	} else {
		id := p.bareID()
		if len(id) == 0 {
			p.fail("expected element type%s", p.found())
		}
		if string(id) == "complex" {
			p.expect('<')
			p.pos--
			p.balanced()
			id = p.src[es:p.pos]
			id = bytes.TrimSpace(id)
		}
		dt, known = mlirDTypeByName[string(id)]
	}
	if p.peek() == ',' {
		// An encoding: kept as text, with its aliases written out.
		p.pos++
		p.skipSpace()
		at := p.pos
		a, _ := p.parseAttr()
		if printed := string(mlirAppendAttr(nil, a, false)); printed != string(p.src[at:p.pos]) {
			substs = append(substs, subst{at, p.pos, printed})
		}
		p.expect('>')
		return OpaqueType{Text: text()}
	}
	p.expect('>')
	if !known {
		return OpaqueType{Text: text()}
	}
	return TensorType{DType: dt, Dims: dims}
}

// parseFunctionType parses "(a, b) -> c" or "(a) -> (b, c)".
func (p *mlirParser) parseFunctionType() FunctionType {
	p.expect('(')
	var ins []Type
	if !p.tryByte(')') {
		for {
			ins = append(ins, p.parseType())
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(')')
	}
	p.expectArrow()
	var outs []Type
	if p.peek() == '(' {
		p.pos++
		if !p.tryByte(')') {
			for {
				outs = append(outs, p.parseType())
				if !p.tryByte(',') {
					break
				}
			}
			p.expect(')')
		}
	} else {
		outs = []Type{p.parseType()}
	}
	return FunctionType{Inputs: ins, Results: outs}
}

// parseTypeList parses "t1, t2, ...".
func (p *mlirParser) parseTypeList() []Type {
	var ts []Type
	for {
		ts = append(ts, p.parseType())
		if !p.tryByte(',') {
			return ts
		}
	}
}

// ---------------------------------------------------------------------------
// Attributes.

// parseDictEntries parses "{k = v, unit_key, ...}" and appends to attrs.
func (p *mlirParser) parseDictEntries(attrs []NamedAttr) []NamedAttr {
	p.enter()
	defer p.leave()
	p.expect('{')
	if p.tryByte('}') {
		return attrs
	}
	first := len(attrs)
	var seen map[string]bool
	for {
		p.skipSpace()
		kpos := p.pos
		var key string
		if p.peek() == '"' {
			key = p.stringLit()
			if key == "" {
				p.errAt(kpos, "expected valid attribute name")
			}
		} else {
			id := p.bareID()
			if len(id) == 0 {
				p.fail("expected attribute name%s", p.found())
			}
			key = p.intern(id)
		}
		if n := len(attrs) - first; n < 16 {
			for _, a := range attrs[first:] {
				if a.Name == key {
					p.errAt(kpos, "duplicate key %q in dictionary attribute", key)
				}
			}
		} else {
			if seen == nil {
				seen = map[string]bool{}
				for _, a := range attrs[first:] {
					seen[a.Name] = true
				}
			}
			if seen[key] {
				p.errAt(kpos, "duplicate key %q in dictionary attribute", key)
			}
			seen[key] = true
		}
		var v Attribute = UnitAttr{}
		if p.tryByte('=') {
			v, _ = p.parseAttr()
		}
		attrs = append(attrs, NamedAttr{Name: key, Value: v})
		if !p.tryByte(',') {
			break
		}
	}
	p.expect('}')
	return attrs
}

// parseAttr parses an attribute value. For a dense literal it also
// returns the literal's type.
func (p *mlirParser) parseAttr() (Attribute, Type) {
	p.enter()
	defer p.leave()
	p.expanded++
	c := p.peek()
	start := p.pos
	switch {
	case c == '"':
		return StringAttr(p.stringLit()), nil
	case c == '[':
		p.pos++
		arr := ArrayAttr{}
		if p.tryByte(']') {
			return arr, nil
		}
		for {
			a, _ := p.parseAttr()
			arr = append(arr, a)
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(']')
		return arr, nil
	case c == '{':
		d := p.parseDictEntries(nil)
		if d == nil {
			d = []NamedAttr{}
		}
		return DictAttr(d), nil
	case c == '@':
		return p.parseSymbolRef(), nil
	case c == '#':
		return p.parseHashAttr(), nil
	case c == '-' || mlirIsDigit(c):
		return p.parseNumberAttr(), nil
	case c == '(' || c == '!':
		return TypeAttr{Type: p.parseType()}, nil
	case mlirIsLetter(c) || c == '_':
		save := p.pos
		id := p.bareID()
		next := byte(0)
		if p.pos < len(p.src) {
			next = p.src[p.pos]
		}
		switch string(id) {
		case "true":
			return BoolAttr(true), nil
		case "false":
			return BoolAttr(false), nil
		case "unit":
			return UnitAttr{}, nil
		case "dense":
			if next == '<' {
				return p.parseDense(start)
			}
		case "array":
			if next == '<' {
				return p.parseDenseArray(), nil
			}
		case "dense_resource", "sparse":
			if next == '<' {
				body := p.balanced()
				p.expect(':')
				t := p.parseType()
				text := OpaqueAttr(p.src[start:p.pos])
				if tt, ok := t.(TensorType); ok && string(id) == "dense_resource" && tt.Size() >= 0 && !tooManyBytes(tt) {
					if p.denseResources == nil {
						p.denseResources = map[string]denseResourceUse{}
					}
					key := strings.TrimSpace(string(body[1 : len(body)-1]))
					if uq, err := strconv.Unquote(key); err == nil {
						key = uq
					}
					p.denseResources[string(text)] = denseResourceUse{key: key, typ: tt, pos: start}
				}
				return text, t
			}
		case "affine_map", "affine_set", "strided":
			if next == '<' {
				p.balanced()
				return OpaqueAttr(p.src[start:p.pos]), nil
			}
		case "loc":
			if next == '(' {
				p.balanced()
				return OpaqueAttr(p.src[start:p.pos]), nil
			}
		case "distinct":
			if next == '[' {
				p.balanced()
				if p.peek() == '<' {
					p.balanced()
				}
				return OpaqueAttr(p.src[start:p.pos]), nil
			}
		}
		p.pos = save
		return TypeAttr{Type: p.parseType()}, nil
	}
	p.fail("expected attribute value%s", p.found())
	return nil, nil
}

// parseSymbolRef parses @name, @"name" and nested @a::@b.
func (p *mlirParser) parseSymbolRef() SymbolRefAttr {
	var b strings.Builder
	for {
		p.expect('@')
		if p.pos < len(p.src) && p.src[p.pos] == '"' {
			b.WriteString(p.stringLit())
		} else {
			id := p.symbolID()
			if len(id) == 0 {
				p.fail("expected symbol name%s", p.found())
			}
			b.Write(id)
		}
		if p.pos+2 < len(p.src) && p.src[p.pos] == ':' && p.src[p.pos+1] == ':' && p.src[p.pos+2] == '@' {
			p.pos += 2
			b.WriteString("::@") // as SymbolRefAttr spells nested references
			continue
		}
		return SymbolRefAttr(b.String())
	}
}

// symbolID scans a bare symbol name after '@'.
func (p *mlirParser) symbolID() []byte {
	start := p.pos
	if p.pos < len(p.src) && (mlirIsLetter(p.src[p.pos]) || p.src[p.pos] == '_') {
		p.pos++
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if mlirIsLetter(c) || mlirIsDigit(c) || c == '_' || c == '$' || c == '.' {
				p.pos++
				continue
			}
			break
		}
	}
	return p.src[start:p.pos]
}

// parseHashAttr parses "#..." attributes: StableHLO's own, other
// dialects' (kept opaque) and aliases.
func (p *mlirParser) parseHashAttr() Attribute {
	start := p.pos
	p.expect('#')
	npos := p.pos
	name := p.aliasName()
	if p.pos >= len(p.src) || p.src[p.pos] != '<' {
		if a, ok := p.attrAliases[string(name)]; ok {
			p.useAlias("#" + string(name))
			return a
		}
		if bytes.IndexByte(name, '.') < 0 {
			p.errAt(npos, "undefined attribute alias #%s", name)
		}
		return OpaqueAttr(p.src[start:p.pos])
	}
	switch string(name) {
	case "stablehlo", "mhlo", "chlo":
		save := p.pos
		p.pos++
		enum := p.bareID()
		val := p.bareID()
		if len(enum) > 0 && len(val) > 0 && p.tryByte('>') {
			return EnumAttr{Dialect: p.intern(name), Enum: p.intern(enum), Value: p.intern(val)}
		}
		p.pos = save
	case "stablehlo.dot":
		return mlirParseStruct[DotDimensionNumbers](p)
	case "chlo.ragged_dot":
		return mlirParseStruct[RaggedDotDimensionNumbers](p)
	case "stablehlo.gather":
		return mlirParseStruct[GatherDimensionNumbers](p)
	case "stablehlo.scatter":
		return mlirParseStruct[ScatterDimensionNumbers](p)
	case "stablehlo.conv":
		return p.parseConvDimsAttr()
	case "stablehlo.channel_handle":
		return mlirParseStruct[ChannelHandle](p)
	case "stablehlo.output_operand_alias":
		return mlirParseStruct[OutputOperandAlias](p)
	}
	p.balanced()
	return OpaqueAttr(p.src[start:p.pos])
}

// parseStructFields parses "<name = value, ...>" calling field for each.
func (p *mlirParser) parseStructFields(field func(name string, pos int)) {
	p.expect('<')
	p.parseStructBody(field)
}

// parseStructBody parses "name = value, ...>", what follows the '<' of a
// struct attribute.
func (p *mlirParser) parseStructBody(field func(name string, pos int)) {
	if p.tryByte('>') {
		return
	}
	seen := map[string]bool{}
	for {
		p.skipSpace()
		pos := p.pos
		id := p.bareID()
		if len(id) == 0 {
			p.fail("expected field name%s", p.found())
		}
		if seen[string(id)] {
			p.errAt(pos, "duplicate field %q", id)
		}
		seen[string(id)] = true
		p.expect('=')
		field(string(id), pos)
		if !p.tryByte(',') {
			break
		}
	}
	p.expect('>')
}

// parseIntList parses "[1, 2, 3]".
func (p *mlirParser) parseIntList() []int64 {
	p.expect('[')
	out := []int64{}
	if p.tryByte(']') {
		return out
	}
	for {
		out = append(out, p.integer())
		if !p.tryByte(',') {
			break
		}
	}
	p.expect(']')
	return out
}

func mlirNilIfEmpty(v []int64) []int64 {
	if len(v) == 0 {
		return nil
	}
	return v
}

// mlirParseStruct parses "<name = value, ...>", the field form of T.
func mlirParseStruct[T any, PT interface {
	*T
	mlirForm() mlirStructForm
}](p *mlirParser) T {
	var v T
	p.parseStructAttr(PT(&v).mlirForm())
	return v
}

// parseStructAttr parses "<name = value, ...>" into the fields of f.
func (p *mlirParser) parseStructAttr(f mlirStructForm) {
	p.expect('<')
	p.parseStructAttrBody(f)
}

// parseStructAttrBody is parseStructAttr after the '<'.
func (p *mlirParser) parseStructAttrBody(f mlirStructForm) {
	p.parseStructBody(func(field string, pos int) {
		for _, fld := range f.fields {
			switch {
			case fld.name != field:
				continue
			case fld.one != nil:
				*fld.one = p.integer()
			case f.nilEmpty:
				*fld.list = mlirNilIfEmpty(p.parseIntList())
			default:
				*fld.list = p.parseIntList()
			}
			return
		}
		p.errAt(pos, "unknown %s field %q", f.what, field)
	})
}

// parseConvDimsAttr parses the body of #stablehlo.conv<...>: the compact
// form, the field form, or the field form after "raw" (what StableHLO
// prints for dimension numbers the compact form cannot show).
func (p *mlirParser) parseConvDimsAttr() Attribute {
	save := p.pos
	p.expect('<')
	if p.peek() == '[' {
		d := p.parseConvDimsRaw()
		p.expect('>')
		return d
	}
	p.skipSpace()
	if rest := p.src[p.pos:]; len(rest) > 3 && string(rest[:3]) == "raw" && strings.IndexByte(" \t\r\n", rest[3]) >= 0 {
		p.pos += 3
		var d ConvDimensionNumbers
		p.parseStructAttrBody(d.mlirForm())
		return d
	}
	p.pos = save
	return mlirParseStruct[ConvDimensionNumbers](p)
}

// parseConvDimsRaw parses "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]".
func (p *mlirParser) parseConvDimsRaw() ConvDimensionNumbers {
	var d ConvDimensionNumbers
	layout := func(x, y byte) (xi, yi int64, spatial []int64) {
		p.skipSpace()
		pos := p.pos
		p.expect('[')
		xi, yi = -1, -1
		var sp []int64
		idx := int64(0)
		seen := map[int64]bool{}
		for !p.tryByte(']') {
			if idx > 0 {
				p.expect(',')
			}
			c := p.peek()
			switch {
			case mlirIsDigit(c):
				n := p.integer()
				if n < 0 || n >= 1<<20 || seen[n] {
					p.errAt(pos, "invalid spatial dimension %d", n)
				}
				seen[n] = true
				for int64(len(sp)) <= n {
					sp = append(sp, -1)
				}
				sp[n] = idx
			case c == x && xi < 0:
				p.pos++
				xi = idx
			case c == y && yi < 0:
				p.pos++
				yi = idx
			default:
				p.fail("unexpected %q in convolution dimensions", c)
			}
			idx++
			if idx > 1<<20 {
				p.errAt(pos, "too many dimensions")
			}
		}
		if xi < 0 || yi < 0 {
			p.errAt(pos, "convolution dimensions need '%c' and '%c'", x, y)
		}
		for _, s := range sp {
			if s < 0 {
				p.errAt(pos, "convolution spatial dimensions must be numbered 0..n-1")
			}
		}
		return xi, yi, sp
	}
	d.InputBatchDim, d.InputFeatureDim, d.InputSpatialDims = layout('b', 'f')
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != 'x' {
		p.fail("expected 'x'%s", p.found())
	}
	p.pos++
	d.KernelInputFeatureDim, d.KernelOutputFeature, d.KernelSpatialDims = layout('i', 'o')
	p.expectArrow()
	d.OutputBatchDim, d.OutputFeatureDim, d.OutputSpatialDims = layout('b', 'f')
	if len(d.KernelSpatialDims) != len(d.InputSpatialDims) || len(d.OutputSpatialDims) != len(d.InputSpatialDims) {
		p.fail("convolution input, kernel and output have different numbers of spatial dimensions")
	}
	return d
}

// parseNumberAttr parses an integer or float with an optional ": type".
func (p *mlirParser) parseNumberAttr() Attribute {
	start := p.pos
	n, ok := p.number()
	if !ok {
		p.fail("expected number%s", p.found())
	}
	dt := xla.Int64
	if n.isFlt {
		dt = xla.Float64
	}
	if p.peek() == ':' {
		p.pos++
		tpos := p.pos
		t := p.parseType()
		ot, isOpaque := t.(OpaqueType)
		d, known := mlirDTypeByName[ot.Text]
		if !isOpaque || !known {
			if _, isTensor := t.(TensorType); isTensor {
				p.errAt(tpos, "expected a scalar type")
			}
			return OpaqueAttr(bytes.TrimSpace(p.src[start:p.pos]))
		}
		dt = d
	}
	switch {
	case dt == xla.Bool && !n.isFlt:
		v := p.intOfType(n, xla.Bool)
		return IntAttr{Value: v, Type: xla.Bool}
	case dt.IsInt():
		if n.isFlt {
			p.errAt(n.pos, "expected integer literal for %s", dt)
		}
		return IntAttr{Value: p.intOfType(n, dt), Type: dt}
	case dt.IsFloat():
		bits := p.floatBits(n, dt)
		return FloatAttr{Value: mlirFloatFormats[dt].toFloat64(bits), Type: dt}
	}
	p.errAt(n.pos, "unsupported attribute type %s", dt)
	return nil
}

// intOfType converts an integer literal to the bit pattern of type dt
// (sign-extended for signed and signless types).
func (p *mlirParser) intOfType(n mlirNumber, dt xla.DType) int64 {
	u, ok := n.uint64Value()
	if !ok {
		p.errAt(n.pos, "integer %s out of range", n.text)
	}
	w := dt.Bits()
	if n.isHex && n.neg {
		p.errAt(n.pos, "hexadecimal integer cannot be negative")
	}
	if dt.IsUnsigned() && n.neg && u != 0 {
		p.errAt(n.pos, "negative integer for unsigned type %s", dt)
	}
	if n.neg {
		if u > 1<<63 || (w < 64 && u > 1<<uint(w-1)) {
			p.errAt(n.pos, "integer -%s out of range for %s", n.text, mlirDTypeName(dt))
		}
		if dt == xla.Bool {
			return int64(u) & 1
		}
		return -int64(u)
	}
	if dt == xla.Bool {
		if u > 1 {
			p.errAt(n.pos, "integer %s out of range for i1", n.text)
		}
		return int64(u)
	}
	if w < 64 && u >= 1<<uint(w) {
		p.errAt(n.pos, "integer %s out of range for %s", n.text, mlirDTypeName(dt))
	}
	if dt.IsUnsigned() || w == 64 {
		return int64(u)
	}
	shift := uint(64 - w)
	return int64(u) << shift >> shift
}

// floatBits converts a literal to the bits of float type dt.
func (p *mlirParser) floatBits(n mlirNumber, dt xla.DType) uint64 {
	f := mlirFloatFormats[dt]
	if f == nil {
		p.errAt(n.pos, "%s is not a float type", dt)
	}
	if n.isHex {
		if n.neg {
			p.errAt(n.pos, "hexadecimal float literal should not have a leading minus")
		}
		u, ok := n.uint64Value()
		if !ok || (f.width() < 64 && u >= 1<<uint(f.width())) {
			p.errAt(n.pos, "hexadecimal float constant out of range for %s", dt)
		}
		return u
	}
	s := n.text
	if n.neg {
		s = "-" + s
	}
	b, ok := f.parseDecimal(s)
	if !ok {
		p.errAt(n.pos, "float %s out of range for %s", s, dt)
	}
	return b
}

// parseDenseArray parses "array<i64: 1, 2>".
func (p *mlirParser) parseDenseArray() Attribute {
	p.expect('<')
	pos := p.pos
	id := p.bareID()
	dt, ok := mlirDTypeByName[string(id)]
	if !ok || !(dt.IsInt() || dt == xla.Bool || dt.IsFloat()) {
		p.errAt(pos, "unsupported dense array element type %q", id)
	}
	if dt.IsFloat() {
		out := DenseFloatArrayAttr{DType: dt}
		if p.tryByte(':') {
			for {
				n, ok := p.number()
				if !ok {
					p.fail("expected float%s", p.found())
				}
				out.Values = append(out.Values, mlirFloatFormats[dt].toFloat64(p.floatBits(n, dt)))
				if !p.tryByte(',') {
					break
				}
			}
		}
		p.expect('>')
		return out
	}
	out := DenseArrayAttr{DType: dt}
	if p.tryByte(':') {
		for {
			if dt == xla.Bool {
				switch {
				case p.tryKeyword("true"):
					out.Values = append(out.Values, 1)
				case p.tryKeyword("false"):
					out.Values = append(out.Values, 0)
				default:
					n, ok := p.number()
					if !ok {
						p.fail("expected true or false%s", p.found())
					}
					out.Values = append(out.Values, p.intOfType(n, dt))
				}
			} else {
				n, ok := p.number()
				if !ok || n.isFlt {
					p.fail("expected integer%s", p.found())
				}
				out.Values = append(out.Values, p.intOfType(n, dt))
			}
			if !p.tryByte(',') {
				break
			}
		}
	}
	p.expect('>')
	return out
}

// ---------------------------------------------------------------------------
// Dense elements.

// parseDense parses "dense<...> : type"; start is the offset of "dense".
func (p *mlirParser) parseDense(start int) (Attribute, Type) {
	p.expect('<')
	lit := p.pos
	// Find the '>' that ends the literal.
	depth := 0
	end := -1
	for p.pos < len(p.src) && end < 0 {
		c := p.src[p.pos]
		switch c {
		case '"':
			p.stringLit()
			continue
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth < 0 {
				p.errAt(p.pos, "unbalanced '%c' in dense literal", c)
			}
		case '>':
			if depth == 0 {
				end = p.pos
			}
		case '<', '{', '}':
			p.errAt(p.pos, "unexpected '%c' in dense literal", c)
		}
		p.pos++
	}
	if end < 0 {
		p.errAt(lit, "unterminated dense literal")
	}
	p.expect(':')
	typ := p.parseType()
	after := p.pos
	tt, ok := typ.(TensorType)
	if !ok || tt.Size() < 0 || tt.DType.HostBytes() == 0 || tt.Size() > math.MaxInt64/int64(tt.DType.HostBytes()) {
		// Dynamic, unknown, or more bytes than an int64 counts: kept as
		// written.
		return OpaqueAttr(p.src[start:after]), typ
	}
	p.pos = lit
	a := p.decodeDense(tt, end)
	p.pos = after
	return a, typ
}

// decodeDense reads the literal at the cursor (ending at end) as tt.
func (p *mlirParser) decodeDense(tt TensorType, end int) DenseElementsAttr {
	dt := tt.DType
	w := dt.HostBytes()
	n := tt.Size()
	p.skipSpace()
	out := DenseElementsAttr{Type: tt}
	if p.pos >= end {
		if n != 0 {
			p.errAt(p.pos, "expected %d elements in dense literal, found none", n)
		}
		out.Data = []byte{}
		return out
	}
	c := p.src[p.pos]
	switch c {
	case '"':
		p.decodeDenseHex(&out, n)
	case '[':
		// Every element takes at least one byte of text: a literal this
		// short cannot fill a larger type (and must not make us allocate
		// for it).
		if n > int64(end-p.pos) {
			p.errAt(p.pos, "dense literal is too short for %d elements of %s", n, mlirAppendType(nil, tt))
		}
		out.Data = make([]byte, n*int64(w))
		var off int64
		p.decodeDenseList(tt, 0, &off, out.Data)
	default:
		out.Data = make([]byte, w)
		p.parseDenseElem(dt, out.Data)
		out.Splat = len(tt.Dims) > 0
	}
	p.skipSpace()
	if p.pos != end {
		p.errAt(p.pos, "unexpected text in dense literal")
	}
	return out
}

// decodeDenseList parses a nested list for dimension dim.
func (p *mlirParser) decodeDenseList(tt TensorType, dim int, off *int64, data []byte) {
	p.enter()
	defer p.leave()
	if dim >= len(tt.Dims) {
		w := tt.DType.HostBytes()
		if *off >= int64(len(data))/int64(w) {
			p.fail("too many elements in dense literal")
		}
		p.parseDenseElem(tt.DType, data[*off*int64(w):(*off+1)*int64(w)])
		*off++
		return
	}
	pos := p.pos
	p.expect('[')
	var count int64
	if !p.tryByte(']') {
		for {
			if count >= tt.Dims[dim] {
				p.errAt(pos, "dense literal has more than %d elements in dimension %d of %s", tt.Dims[dim], dim, mlirAppendType(nil, tt))
			}
			p.decodeDenseList(tt, dim+1, off, data)
			count++
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(']')
	}
	if count != tt.Dims[dim] {
		p.errAt(pos, "dense literal has %d elements in dimension %d, type %s wants %d", count, dim, mlirAppendType(nil, tt), tt.Dims[dim])
	}
}

// parseDenseElem parses one element of type dt into dst (host layout).
func (p *mlirParser) parseDenseElem(dt xla.DType, dst []byte) {
	switch {
	case dt == xla.Bool || dt.Bits() == 1 && (p.peekKeyword("true") || p.peekKeyword("false")):
		switch {
		case p.tryKeyword("true"):
			dst[0] = oneBit(dt)
		case p.tryKeyword("false"):
			dst[0] = 0
		default:
			n, ok := p.number()
			if !ok || n.isFlt {
				p.fail("expected boolean%s", p.found())
			}
			dst[0] = byte(p.intOfType(n, xla.Bool) & 1)
		}
	case dt.IsInt():
		n, ok := p.number()
		if !ok || n.isFlt {
			p.fail("expected integer%s", p.found())
		}
		mlirPutBits(dst, uint64(p.intOfType(n, dt)))
	case dt.IsComplex():
		ft := dt.ComplexElem()
		h := len(dst) / 2
		p.expect('(')
		p.parseDenseFloat(ft, dst[:h])
		p.expect(',')
		p.parseDenseFloat(ft, dst[h:])
		p.expect(')')
	default:
		p.parseDenseFloat(dt, dst)
	}
}

func (p *mlirParser) parseDenseFloat(dt xla.DType, dst []byte) {
	n, ok := p.number()
	if !ok {
		p.fail("expected float%s", p.found())
	}
	mlirPutBits(dst, p.floatBits(n, dt))
}

// mlirPutBits writes v little-endian into dst.
func mlirPutBits(dst []byte, v uint64) {
	switch len(dst) {
	case 1:
		dst[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(dst, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(dst, uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(dst, v)
	default:
		for i := range dst {
			dst[i] = byte(v >> (8 * uint(i)))
		}
	}
}

// decodeDenseHex decodes "0x..." raw data (MLIR's storage: booleans as
// packed bits, sub-byte values one per byte) into host layout.
func (p *mlirParser) decodeDenseHex(out *DenseElementsAttr, n int64) {
	pos := p.pos
	s := p.stringLit()
	if !strings.HasPrefix(s, "0x") {
		p.errAt(pos, "expected a hex string \"0x...\" in dense literal")
	}
	raw, err := hex.DecodeString(s[2:])
	if err != nil {
		p.errAt(pos, "invalid hex data in dense literal")
	}
	dt := out.Type.DType
	w := int64(dt.HostBytes())
	if dt == xla.Bool || dt.Bits() == 1 { // packed bits
		if len(raw) == 1 && (raw[0] == 0 || raw[0] == 0xFF) && n != 1 || n == 1 && len(raw) == 1 && raw[0]&0xFE == 0 {
			out.Data = []byte{(raw[0] & 1) * oneBit(dt)}
			out.Splat = len(out.Type.Dims) > 0
			return
		}
		if l := int64(len(raw)); l != (n+7)/8 && l != n { // before allocating n bytes
			p.errAt(pos, "hex data of %d bytes does not fit %s", len(raw), mlirAppendType(nil, out.Type))
		}
		out.Data = make([]byte, n)
		switch int64(len(raw)) {
		case (n + 7) / 8: // packed bits (MLIR before 2026-02)
			for i := int64(0); i < n; i++ {
				out.Data[i] = (raw[i/8] >> uint(i%8) & 1) * oneBit(dt)
			}
		case n: // a byte each (MLIR since)
			for i, c := range raw {
				out.Data[i] = (c & 1) * oneBit(dt)
			}
		default:
			p.errAt(pos, "hex data of %d bytes does not fit %s", len(raw), mlirAppendType(nil, out.Type))
		}
		return
	}
	switch {
	case int64(len(raw)) == w && n != 1:
		out.Splat = true
	case int64(len(raw)) == n*w:
	default:
		p.errAt(pos, "hex data of %d bytes does not fit %s", len(raw), mlirAppendType(nil, out.Type))
	}
	out.Data = normalizeElements(raw, out.Type)
}

// ---------------------------------------------------------------------------
// Locations.

// parseLocBody parses "(...)" after "loc" into dst; references to location
// aliases are resolved when the whole text has been read (MLIR prints the
// alias definitions at the end).
func (p *mlirParser) parseLocBody(dst *Location) {
	if p.peek() != '(' {
		p.fail("expected '(' after loc%s", p.found())
	}
	pos := p.pos
	body := p.balanced()
	raw := body[1 : len(body)-1]
	if bytes.IndexByte(raw, '#') < 0 {
		*dst = mlirDecodeLoc(raw)
		return
	}
	p.locFixups = append(p.locFixups, mlirLocFixup{dst: dst, raw: raw, pos: pos})
}

// resolveLocations resolves the locations that used aliases. Each alias
// is expanded once and each distinct location decoded once, so that the
// thousands of ops of a JAX export whose locations share chains of
// call-site aliases cost what their text costs.
func (p *mlirParser) resolveLocations() {
	for _, f := range p.locFixups {
		l, ok := p.locDecoded[string(f.raw)]
		if !ok {
			exp := p.expandLocAliases(f.raw, f.pos, 0)
			p.chargeLoc(len(exp), f.pos)
			l = mlirDecodeLoc(exp)
			if p.locDecoded == nil {
				p.locDecoded = map[string]Location{}
			}
			p.locDecoded[string(f.raw)] = l
		}
		*f.dst = l
	}
	p.locFixups = nil
	for _, c := range p.locCopies {
		*c[0] = *c[1]
	}
	p.locCopies = nil
}

// chargeLoc counts n more bytes of expanded location text, refusing more
// than 16 MiB plus 256 times the input's size (aliases that refer to
// each other several times over expand exponentially).
func (p *mlirParser) chargeLoc(n, pos int) {
	p.locBytes += n
	if limit := 1<<24 + 256*len(p.src); p.locBytes > limit {
		p.errAt(pos, "location aliases expand to more than %d bytes", limit)
	}
}

// expandLocAliases replaces #alias references in a location body by the
// aliases' bodies, each expanded once (locExpanded).
func (p *mlirParser) expandLocAliases(raw []byte, pos, depth int) []byte {
	if depth > 64 {
		p.errAt(pos, "location aliases nest too deeply")
	}
	if bytes.IndexByte(raw, '#') < 0 {
		return raw
	}
	var out []byte
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == '"' {
			j := i + 1
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(raw) {
				j++
			}
			out = append(out, raw[i:j]...)
			i = j
			continue
		}
		if c == '#' {
			j := i + 1
			for j < len(raw) && (mlirIsLetter(raw[j]) || mlirIsDigit(raw[j]) || raw[j] == '_' || raw[j] == '.' || raw[j] == '$' || raw[j] == '-') {
				j++
			}
			name := string(raw[i+1 : j])
			exp, ok := p.locExpanded[name]
			if !ok {
				body, defined := p.locAliases[name]
				if !defined {
					p.errAt(pos, "undefined location alias #%s", name)
				}
				exp = p.expandLocAliases(body, pos, depth+1)
				p.chargeLoc(len(exp), pos)
				if p.locExpanded == nil {
					p.locExpanded = map[string][]byte{}
				}
				p.locExpanded[name] = exp
			}
			out = append(out, exp...)
			i = j
			continue
		}
		out = append(out, c)
		i++
	}
	return out
}

// mlirDecodeLoc turns a location body (aliases expanded) into a Location:
// names and file:line:col positions are modeled, anything else is kept as
// text (Location.Where reads a name and position from it).
func mlirDecodeLoc(raw []byte) Location {
	t := bytes.TrimSpace(raw)
	if string(t) == "unknown" || len(t) == 0 {
		return Location{}
	}
	if t[0] == '"' {
		s := mlirScanner{src: t}
		if l, ok := s.tryLoc(); ok {
			return l
		}
	}
	return Location{Text: string(t)}
}

// locParts finds in location text its leading name ("name"(...)) and its
// first "file":line:col.
func locParts(t []byte) (name, file string, line, col int) {
	for i := 0; i < len(t); i++ {
		if t[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(t) && t[j] != '"' {
			if t[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(t) {
			break
		}
		lit, rest := t[i:j+1], t[j+1:]
		leading := i == 0
		i = j
		str, err := strconv.Unquote(string(lit))
		if err != nil {
			continue
		}
		if leading && len(rest) > 0 && rest[0] == '(' {
			name = str
		}
		if l, c, ok := lineCol(rest); ok {
			return name, str, l, c
		}
	}
	return name, "", 0, 0
}

// lineCol reads ":line:col" at the start of b.
func lineCol(b []byte) (line, col int, ok bool) {
	num := func() (int, bool) {
		if len(b) == 0 || b[0] != ':' {
			return 0, false
		}
		k := 1
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		n, err := strconv.Atoi(string(b[1:k]))
		b = b[k:]
		return n, err == nil
	}
	if line, ok = num(); !ok {
		return 0, 0, false
	}
	col, ok = num()
	return line, col, ok
}

// mlirDecodeLocDepth bounds the nesting tryLoc follows.
const mlirDecodeLocDepth = 8

// tryLoc decodes "name", "file":l:c and "name"(child) at the start of a
// scanner over a whole location body.
func (s *mlirScanner) tryLoc() (l Location, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isFail := r.(mlirParseFailure); !isFail {
				panic(r)
			}
			ok = false
		}
	}()
	str := s.stringLit()
	if s.atEnd() {
		return Location{Name: str}, true
	}
	switch s.peek() {
	case ':':
		s.pos++
		line := s.integer()
		s.expect(':')
		col := s.integer()
		if !s.atEnd() || line < 0 || col < 0 || line > 1<<31 || col > 1<<31 {
			return l, false
		}
		return Location{File: str, Line: int(line), Col: int(col)}, true
	case '(':
		if s.depth >= mlirDecodeLocDepth {
			return l, false
		}
		body := s.balanced()
		if !s.atEnd() {
			return l, false
		}
		cs := mlirScanner{src: bytes.TrimSpace(body[1 : len(body)-1]), depth: s.depth + 1}
		var child Location
		if len(cs.src) > 0 && cs.src[0] == '"' {
			var ok bool
			if child, ok = cs.tryLoc(); !ok {
				return l, false
			}
		} else if string(cs.src) != "unknown" {
			return l, false
		}
		if child.IsUnknown() {
			return Location{Name: str}, true
		}
		if child.Text == "" && child.Name == "" && child.File != "" {
			return Location{Name: str, File: child.File, Line: child.Line, Col: child.Col}, true
		}
	}
	return l, false
}

// oneBit is the host byte of a set 1-bit element of dt: 1, or 0xFF (-1)
// for the signed i1 of xla.Int1.
func oneBit(dt xla.DType) byte {
	if dt == xla.Int1 {
		return 0xFF
	}
	return 1
}
