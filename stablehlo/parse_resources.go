package stablehlo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"

	"github.com/halo-ml/halo/xla"
)

// Dense resources: MLIR prints large constants as
//
//	%c = stablehlo.constant dense_resource<blob1> : tensor<4xf32>
//
// with their data in a file-metadata section after the module:
//
//	{-#
//	  dialect_resources: {
//	    builtin: {
//	      blob1: "0x0400000000008040..."
//	    }
//	  }
//	#-}
//
// A builtin blob is a hex string: a little-endian uint32 alignment, then
// the elements in host layout (one byte per boolean or sub-byte integer).
// The parser reads the section and turns each dense_resource attribute of
// an op whose blob it holds into the DenseElementsAttr it stands for; one
// whose blob is missing (a module printed with its resources elided,
// dense_resource<__elided__>) stays an OpaqueAttr of its text.

// denseResourceUse is a dense_resource attribute as parsed: its blob's
// key, its type, and where it stands.
type denseResourceUse struct {
	key string
	typ TensorType
	pos int
}

// parseFileMetadata reads a "{-# ... #-}" section at the cursor: the
// builtin dialect's resources into p.resources, other sections and
// dialects skipped.
func (p *mlirParser) parseFileMetadata() {
	start := p.pos
	p.pos += len("{-#")
	for {
		if p.peek() == '#' && bytes.HasPrefix(p.src[p.pos:], []byte("#-}")) {
			p.pos += len("#-}")
			return
		}
		if p.atEnd() {
			p.errAt(start, "unterminated file metadata {-# ... #-}")
		}
		name := p.bareID()
		if name == nil {
			p.fail("expected a section name in file metadata%s", p.found())
		}
		p.expect(':')
		if string(name) != "dialect_resources" {
			p.balanced()
		} else {
			p.parseDialectResources()
		}
		p.tryByte(',')
	}
}

// parseDialectResources reads "{ dialect: { key: value, ... }, ... }".
func (p *mlirParser) parseDialectResources() {
	p.expect('{')
	for !p.tryByte('}') {
		dialect := p.bareID()
		if dialect == nil {
			p.fail("expected a dialect name in dialect_resources%s", p.found())
		}
		p.expect(':')
		p.expect('{')
		for !p.tryByte('}') {
			key := p.resourceKey()
			p.expect(':')
			pos := p.pos
			if string(dialect) != "builtin" || p.peek() != '"' {
				p.skipResourceValue()
			} else {
				blob, msg := decodeResourceBlob(p.stringLit())
				if msg != "" {
					p.errAt(pos, "resource %q: %s", key, msg)
				}
				if p.resources == nil {
					p.resources = map[string][]byte{}
				}
				p.resources[key] = blob
			}
			if !p.tryByte(',') && p.peek() != '}' {
				p.fail("expected ',' or '}' in dialect_resources%s", p.found())
			}
		}
		p.tryByte(',')
	}
}

// resourceKey scans a resource name: a bare identifier (dots and dashes
// allowed) or a string.
func (p *mlirParser) resourceKey() string {
	if p.peek() == '"' {
		return p.stringLit()
	}
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if !mlirIsLetter(c) && !mlirIsDigit(c) && !strings.ContainsRune("_$.-", rune(c)) {
			break
		}
		p.pos++
	}
	if p.pos == start {
		p.fail("expected a resource name%s", p.found())
	}
	return string(p.src[start:p.pos])
}

// skipResourceValue skips a resource value of a dialect other than
// builtin: a string, a bracketed value or a bare word.
func (p *mlirParser) skipResourceValue() {
	switch c := p.peek(); {
	case c == '"':
		p.stringLit()
	case c == '{' || c == '[' || c == '(' || c == '<':
		p.balanced()
	default:
		for p.pos < len(p.src) && !strings.ContainsRune(",} \t\r\n", rune(p.src[p.pos])) {
			p.pos++
		}
	}
}

// decodeResourceBlob decodes a builtin blob "0x<alignment><data>"; msg
// says what is wrong with it.
func decodeResourceBlob(s string) (data []byte, msg string) {
	if !strings.HasPrefix(s, "0x") {
		return nil, "a blob is a hex string \"0x...\""
	}
	raw, err := hex.DecodeString(s[2:])
	if err != nil {
		return nil, "invalid hex data"
	}
	if len(raw) < 4 {
		return nil, "a blob starts with its 4-byte alignment"
	}
	if a := binary.LittleEndian.Uint32(raw); a == 0 || a&(a-1) != 0 {
		return nil, "the blob's alignment is not a power of two"
	}
	return raw[4:], ""
}

// resolveResources replaces the dense_resource attributes of m's ops
// (functions and globals, nested regions included) whose blobs the file
// holds by DenseElementsAttrs of their data; a blob that does not hold
// the type's elements is an error.
func (p *mlirParser) resolveResources(m *Module) {
	if len(p.denseResources) == 0 {
		return
	}
	visit := func(op *Op) bool {
		for i, a := range op.Attrs {
			o, ok := a.Value.(OpaqueAttr)
			if !ok {
				continue
			}
			r, ok := p.denseResources[string(o)]
			if !ok {
				continue
			}
			blob, ok := p.resources[r.key]
			if !ok {
				continue // elided, or from elsewhere: kept as written
			}
			n := r.typ.Size()
			w := int64(max(r.typ.DType.HostBytes(), 1))
			if int64(len(blob)) != n*w {
				p.errAt(r.pos, "dense_resource<%s>: the blob holds %d bytes, %s needs %d", r.key, len(blob), mlirAppendType(nil, r.typ), n*w)
			}
			op.Attrs[i].Value = DenseElementsAttr{Type: r.typ, Data: normalizeElements(blob, r.typ)}
		}
		return true
	}
	m.Walk(visit)
	for _, g := range m.Globals {
		visit(g)
		for _, r := range g.Regions {
			r.Walk(visit)
		}
	}
}

// normalizeElements gives booleans and sub-byte values of raw data their
// host form (see hostByte).
func normalizeElements(raw []byte, t TensorType) []byte {
	dt := t.DType
	if hostBits(dt) >= 8 {
		return raw
	}
	out := make([]byte, len(raw))
	for i, c := range raw {
		out[i] = hostByte(dt, c)
	}
	return out
}

// hostBits is the number of bits of an element of dt that its host bytes
// hold: 1 for booleans, the type's width otherwise.
func hostBits(dt xla.DType) int {
	if dt == xla.Bool {
		return 1
	}
	return dt.Bits()
}

// hostByte is the host form of the byte c holding an element of dt, a
// boolean or sub-byte type (hostBits below 8): of c's low hostBits(dt)
// bits, 0 or oneBit(dt) for booleans and 1-bit types, the value
// sign-extended for signed integers, the bits with the high ones 0 for
// the others. For any other type c is its own host form.
func hostByte(dt xla.DType, c byte) byte {
	bw := hostBits(dt)
	if bw >= 8 || bw < 1 {
		return c
	}
	if bw == 1 {
		return (c & 1) * oneBit(dt)
	}
	c &= byte(1)<<uint(bw) - 1
	if dt.IsInt() && !dt.IsUnsigned() && c>>uint(bw-1)&1 == 1 {
		c |= ^(byte(1)<<uint(bw) - 1)
	}
	return c
}

// tooManyBytes reports whether the elements of static type t take more
// bytes than an int64 counts.
func tooManyBytes(t TensorType) bool {
	n := t.Size()
	return n < 0 || n > math.MaxInt64/int64(max(t.DType.HostBytes(), 1))
}
