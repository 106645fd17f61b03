package stablehlo

import (
	"bytes"
	"fmt"
	"strconv"
)

// The MLIR text scanner: a cursor over the source with the token-level
// primitives the parser needs. MLIR's grammar is context sensitive in a
// few places (dimension lists "2x3xf32", dialect attribute bodies), so the
// parser drives the cursor directly instead of reading a token stream.

// SyntaxError is an error in MLIR text, at a 1-based line and column
// (columns count bytes).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

// Error returns "line:col: msg".
func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// mlirParseFailure carries a SyntaxError through the parser's panics; only
// values of this type are recovered.
type mlirParseFailure struct{ err *SyntaxError }

// mlirScanner is the cursor.
type mlirScanner struct {
	src []byte
	pos int
	// lineBase is added to reported line numbers (for "// -----" chunks).
	lineBase int
	// steps counts work to bound pathological inputs.
	depth int
	// lineOff and line cache the line (0-based) of byte offset lineOff,
	// so lineAt counts only the newlines between two nearby offsets.
	lineOff, line int
}

// lineAt is the 1-based line of byte offset off (lineBase added).
func (s *mlirScanner) lineAt(off int) int {
	off = max(0, min(off, len(s.src)))
	if off >= s.lineOff {
		s.line += bytes.Count(s.src[s.lineOff:off], []byte{'\n'})
	} else {
		s.line -= bytes.Count(s.src[off:s.lineOff], []byte{'\n'})
	}
	s.lineOff = off
	return s.line + 1 + s.lineBase
}

// errAt fails at byte offset off.
func (s *mlirScanner) errAt(off int, format string, args ...any) {
	line, col := 1, 1
	if off > len(s.src) {
		off = len(s.src)
	}
	for i := 0; i < off; i++ {
		if s.src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	panic(mlirParseFailure{&SyntaxError{Line: line + s.lineBase, Col: col, Msg: fmt.Sprintf(format, args...)}})
}

// fail fails at the current position (after skipping blanks).
func (s *mlirScanner) fail(format string, args ...any) {
	s.skipSpace()
	s.errAt(s.pos, format, args...)
}

// skipSpace skips blanks and // comments.
func (s *mlirScanner) skipSpace() {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			s.pos++
		case '/':
			if s.pos+1 < len(s.src) && s.src[s.pos+1] == '/' {
				for s.pos < len(s.src) && s.src[s.pos] != '\n' {
					s.pos++
				}
			} else {
				return
			}
		default:
			return
		}
	}
}

// peek returns the next significant byte, or 0 at the end.
func (s *mlirScanner) peek() byte {
	s.skipSpace()
	if s.pos < len(s.src) {
		return s.src[s.pos]
	}
	return 0
}

func (s *mlirScanner) atEnd() bool {
	s.skipSpace()
	return s.pos >= len(s.src)
}

// tryByte consumes c if it is next.
func (s *mlirScanner) tryByte(c byte) bool {
	if s.peek() == c && s.pos < len(s.src) {
		s.pos++
		return true
	}
	return false
}

// expect consumes c or fails.
func (s *mlirScanner) expect(c byte) {
	if !s.tryByte(c) {
		s.fail("expected '%c'%s", c, s.found())
	}
}

// found describes what is at the cursor, for error messages.
func (s *mlirScanner) found() string {
	s.skipSpace()
	if s.pos >= len(s.src) {
		return " at end of input"
	}
	end := s.pos
	for end < len(s.src) && end-s.pos < 20 && s.src[end] != '\n' && s.src[end] != ' ' {
		end++
	}
	if end == s.pos {
		end++
	}
	return fmt.Sprintf(", found %q", s.src[s.pos:end])
}

// tryArrow consumes "->".
func (s *mlirScanner) tryArrow() bool {
	if s.peek() == '-' && s.pos+1 < len(s.src) && s.src[s.pos+1] == '>' {
		s.pos += 2
		return true
	}
	return false
}

func (s *mlirScanner) expectArrow() {
	if !s.tryArrow() {
		s.fail("expected '->'%s", s.found())
	}
}

func mlirIsLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func mlirIsDigit(c byte) bool  { return c >= '0' && c <= '9' }
func mlirIsHexDigit(c byte) bool {
	return mlirIsDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// bareID scans [a-zA-Z_][a-zA-Z0-9_$.]* at the cursor; "" when absent.
func (s *mlirScanner) bareID() []byte {
	s.skipSpace()
	start := s.pos
	if s.pos >= len(s.src) {
		return nil
	}
	c := s.src[s.pos]
	if !mlirIsLetter(c) && c != '_' {
		return nil
	}
	s.pos++
	for s.pos < len(s.src) {
		c = s.src[s.pos]
		if mlirIsLetter(c) || mlirIsDigit(c) || c == '_' || c == '$' || c == '.' {
			s.pos++
			continue
		}
		break
	}
	return s.src[start:s.pos]
}

// tryKeyword consumes the bare identifier kw.
func (s *mlirScanner) tryKeyword(kw string) bool {
	save := s.pos
	id := s.bareID()
	if string(id) == kw {
		return true
	}
	s.pos = save
	return false
}

// peekKeyword reports whether the bare identifier kw comes next, without
// consuming it.
func (s *mlirScanner) peekKeyword(kw string) bool {
	save := s.pos
	ok := s.tryKeyword(kw)
	s.pos = save
	return ok
}

func (s *mlirScanner) expectKeyword(kw string) {
	if !s.tryKeyword(kw) {
		s.fail("expected '%s'%s", kw, s.found())
	}
}

// suffixID scans an SSA / block name after its sigil:
// [0-9]+ | [a-zA-Z$._-][a-zA-Z0-9$._-]*.
func (s *mlirScanner) suffixID() []byte {
	start := s.pos
	if s.pos >= len(s.src) {
		return nil
	}
	c := s.src[s.pos]
	if mlirIsDigit(c) {
		for s.pos < len(s.src) && mlirIsDigit(s.src[s.pos]) {
			s.pos++
		}
		return s.src[start:s.pos]
	}
	if !mlirIsLetter(c) && c != '$' && c != '.' && c != '_' && c != '-' {
		return nil
	}
	for s.pos < len(s.src) {
		c = s.src[s.pos]
		if mlirIsLetter(c) || mlirIsDigit(c) || c == '$' || c == '.' || c == '_' || c == '-' {
			s.pos++
			continue
		}
		break
	}
	return s.src[start:s.pos]
}

// stringLit scans a "..." literal (the cursor at the quote) and returns
// its decoded bytes.
func (s *mlirScanner) stringLit() string {
	s.skipSpace()
	if s.pos >= len(s.src) || s.src[s.pos] != '"' {
		s.fail("expected string literal%s", s.found())
	}
	start := s.pos
	s.pos++
	// Fast path: no escapes.
	i := s.pos
	for i < len(s.src) && s.src[i] != '"' && s.src[i] != '\\' && s.src[i] != '\n' {
		i++
	}
	if i < len(s.src) && s.src[i] == '"' {
		out := string(s.src[s.pos:i])
		s.pos = i + 1
		return out
	}
	var out []byte
	for {
		if s.pos >= len(s.src) {
			s.errAt(start, "unterminated string literal")
		}
		c := s.src[s.pos]
		switch c {
		case '"':
			s.pos++
			return string(out)
		case '\n', '\v', '\f':
			s.errAt(s.pos, "expected '\"' in string literal")
		case '\\':
			if s.pos+1 >= len(s.src) {
				s.errAt(s.pos, "unknown escape in string literal")
			}
			n := s.src[s.pos+1]
			switch {
			case n == '"' || n == '\\':
				out = append(out, n)
				s.pos += 2
			case n == 'n':
				out = append(out, '\n')
				s.pos += 2
			case n == 't':
				out = append(out, '\t')
				s.pos += 2
			case s.pos+2 < len(s.src) && mlirIsHexDigit(n) && mlirIsHexDigit(s.src[s.pos+2]):
				v, _ := strconv.ParseUint(string(s.src[s.pos+1:s.pos+3]), 16, 8)
				out = append(out, byte(v))
				s.pos += 3
			default:
				s.errAt(s.pos, "unknown escape in string literal")
			}
		default:
			out = append(out, c)
			s.pos++
		}
	}
}

// mlirNumber is a scanned numeric literal.
type mlirNumber struct {
	text  string // without the sign
	neg   bool
	isHex bool // 0x...
	isFlt bool // has '.' (decimal float)
	pos   int
}

// number scans an optional '-' and an integer, hex or float literal.
// ok is false (and the cursor unmoved) when none is next.
func (s *mlirScanner) number() (mlirNumber, bool) {
	s.skipSpace()
	save := s.pos
	var n mlirNumber
	n.pos = s.pos
	if s.pos < len(s.src) && s.src[s.pos] == '-' {
		n.neg = true
		s.pos++
		s.skipSpace()
	}
	start := s.pos
	if s.pos >= len(s.src) || !mlirIsDigit(s.src[s.pos]) {
		s.pos = save
		return n, false
	}
	if s.src[s.pos] == '0' && s.pos+2 < len(s.src) && (s.src[s.pos+1] == 'x' || s.src[s.pos+1] == 'X') && mlirIsHexDigit(s.src[s.pos+2]) {
		s.pos += 2
		for s.pos < len(s.src) && mlirIsHexDigit(s.src[s.pos]) {
			s.pos++
		}
		n.isHex = true
		n.text = string(s.src[start:s.pos])
		return n, true
	}
	for s.pos < len(s.src) && mlirIsDigit(s.src[s.pos]) {
		s.pos++
	}
	if s.pos < len(s.src) && s.src[s.pos] == '.' {
		n.isFlt = true
		s.pos++
		for s.pos < len(s.src) && mlirIsDigit(s.src[s.pos]) {
			s.pos++
		}
		if s.pos < len(s.src) && (s.src[s.pos] == 'e' || s.src[s.pos] == 'E') {
			p := s.pos + 1
			if p < len(s.src) && (s.src[p] == '+' || s.src[p] == '-') {
				p++
			}
			if p < len(s.src) && mlirIsDigit(s.src[p]) {
				for p < len(s.src) && mlirIsDigit(s.src[p]) {
					p++
				}
				s.pos = p
			}
		}
	}
	n.text = string(s.src[start:s.pos])
	return n, true
}

// int64Value converts an integer literal (decimal or hex, signed) to int64
// with the bit pattern of a uint64 when it does not fit (ui64 values).
func (n mlirNumber) uint64Value() (uint64, bool) {
	if n.isFlt {
		return 0, false
	}
	var u uint64
	var err error
	if n.isHex {
		u, err = strconv.ParseUint(n.text[2:], 16, 64)
	} else {
		u, err = strconv.ParseUint(n.text, 10, 64)
	}
	return u, err == nil
}

// integer scans an integer literal (with optional '-') that fits int64.
func (s *mlirScanner) integer() int64 {
	n, ok := s.number()
	if !ok || n.isFlt {
		s.fail("expected integer%s", s.found())
	}
	u, ok := n.uint64Value()
	if !ok || u > 1<<63 || (!n.neg && u == 1<<63) {
		s.errAt(n.pos, "integer %s out of range", n.text)
	}
	if n.neg {
		return -int64(u)
	}
	return int64(u)
}

// balanced scans from an opening bracket at the cursor to its matching
// closer, skipping string literals, and returns the text including both.
func (s *mlirScanner) balanced() []byte {
	s.skipSpace()
	start := s.pos
	if start >= len(s.src) || (s.src[start] != '(' && s.src[start] != '[' && s.src[start] != '{' && s.src[start] != '<') {
		s.fail("expected '(', '[', '{' or '<'%s", s.found())
	}
	var stack []byte
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch c {
		case '"':
			s.stringLit()
			continue
		case '(', '[', '{', '<':
			stack = append(stack, c)
		case ')', ']', '}', '>':
			if c == '>' && s.pos > start && s.src[s.pos-1] == '-' {
				// "->" inside a type
				break
			}
			if len(stack) == 0 {
				s.errAt(s.pos, "unbalanced '%c'", c)
			}
			open := stack[len(stack)-1]
			if open == '(' && c != ')' || open == '[' && c != ']' || open == '{' && c != '}' || open == '<' && c != '>' {
				s.errAt(s.pos, "mismatched '%c'", c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				s.pos++
				return s.src[start:s.pos]
			}
		}
		s.pos++
		if len(stack) == 0 {
			return s.src[start:s.pos]
		}
	}
	s.errAt(start, "unterminated '%c'", s.src[start])
	return nil
}
