package stablehlo

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// Parse reads one module of MLIR text: the StableHLO pretty form (what
// jax.jit(f).lower(x).as_text() and stablehlo-opt print), the generic form
// (what mlir-opt --mlir-print-op-generic prints), or a mix of both. A file
// holding a list of top-level operations without "module { ... }" is read
// as an implicit module. Ops of dialects halo does not model are kept in
// their generic form. Constants printed as dense_resource<key> take their
// data from the file's {-# dialect_resources #-} section (they become
// DenseElementsAttrs); one whose data the file does not hold (printed
// elided) stays an OpaqueAttr of its text. Errors are *SyntaxError with
// the line and column.
//
// Types parsed from the same text share their dimension slices; treat
// TensorType.Dims as read-only.
func Parse(text []byte) (*Module, error) {
	p := newMLIRParser(text, 0)
	return p.parseFile()
}

// ParseAll reads a file of modules in MLIR's split-input-file form (the
// form of MLIR tests), separated by lines "// -----" as SplitModules
// splits it: one module for each part, empty parts included. Errors are
// as Parse's, with the line in the whole file; the modules read before
// the error are returned with it.
func ParseAll(text []byte) ([]*Module, error) {
	var mods []*Module
	for _, part := range SplitModules(text) {
		p := newMLIRParser(part.Text, part.Line-1)
		m, err := p.parseFile()
		if err != nil {
			return mods, err
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// SplitMarker is the line that separates the modules of a file in MLIR's
// split-input-file form.
const SplitMarker = "// -----"

// ModuleText is one part of a file that SplitModules splits.
type ModuleText struct {
	// Text is the part's bytes: from the start of the file, or of the line
	// after a separator, to the start of the next separator line, or the
	// end of the file. It aliases the text split, with no room to append
	// into it.
	Text []byte
	// Line is the 1-based line of the file on which Text starts.
	Line int
}

// SplitModules splits text, a file of modules in MLIR's split-input-file
// form, at its separator lines: lines that are exactly SplitMarker,
// "// -----", once the spaces, tabs and carriage returns around it are
// trimmed (it may be indented, have trailing space, end a CRLF line).
// Any other line is not a separator, however it starts: a banner comment
// "// ------------", a line "// ----- main -----" with text after the
// marker, or "//-----". The separator lines belong to no part; n
// separators make n+1 parts, empty ones included (text that is empty or
// holds no separator is one part). Parse reads the whole text as one
// module, separators as the comments they are.
func SplitModules(text []byte) []ModuleText {
	var parts []ModuleText
	start, startLine, line := 0, 1, 1
	for i := 0; i < len(text); line++ {
		end, next := len(text), len(text)
		if k := bytes.IndexByte(text[i:], '\n'); k >= 0 {
			end, next = i+k, i+k+1
		}
		if isSplitMarker(text[i:end]) {
			parts = append(parts, ModuleText{Text: text[start:i:i], Line: startLine})
			start, startLine = next, line+1
		}
		i = next
	}
	return append(parts, ModuleText{Text: text[start:len(text):len(text)], Line: startLine})
}

// isSplitMarker reports whether line (without its newline) separates
// modules: SplitMarker with only spaces, tabs and carriage returns (the
// whitespace of MLIR's lexer other than newlines) around it.
func isSplitMarker(line []byte) bool {
	return len(line) >= len(SplitMarker) && string(bytes.Trim(line, " \t\r")) == SplitMarker
}

// mlirParser holds the state of one parse.
type mlirParser struct {
	mlirScanner
	attrAliases map[string]Attribute
	typeAliases map[string]Type
	// expanded counts the types and attributes parsed, each alias use
	// counting what its definition expanded to (aliasSize, by "#name" or
	// "!name"): aliases of aliases double at each level, so a short
	// text can stand for more than any program holds.
	expanded    int64
	aliasSize   map[string]int64
	aliasUses   int64 // what the alias uses of the module stand for
	locAliases  map[string][]byte
	locFixups   []mlirLocFixup
	locCopies   [][2]*Location      // [dst, src] once locations are resolved
	locBytes    int                 // bytes of location text expanded so far (each alias and distinct location once)
	locExpanded map[string][]byte   // alias name -> its body, aliases expanded
	locDecoded  map[string]Location // location body -> its Location, for bodies that use aliases
	// resources are the builtin blobs of the file's {-# ... #-} section;
	// denseResources the dense_resource attributes read, by their text
	// (parse_resources.go).
	resources      map[string][]byte
	denseResources map[string]denseResourceUse
	// Scratch stacks: result groups and signature types of the ops being
	// parsed (nested ops push above and pop back).
	groupBuf []mlirResultGroup
	typeBuf  []Type
	refBuf   []mlirValueRef
	types    map[string]Type
	strs     map[string]string
	scope    mlirScope
	// defaultDialect is "func" inside a func.func body: bare op names
	// ("return", "call") belong to it.
	defaultDialect string
	// logging is set inside nested (non-isolated) regions, whose
	// definitions are undone at their end.
	logging bool
}

type mlirLocFixup struct {
	dst *Location
	raw []byte
	pos int
}

func newMLIRParser(text []byte, lineBase int) *mlirParser {
	p := &mlirParser{
		attrAliases: map[string]Attribute{},
		typeAliases: map[string]Type{},
		aliasSize:   map[string]int64{},
		locAliases:  map[string][]byte{},
		types:       map[string]Type{},
	}
	p.src = text
	p.lineBase = lineBase
	return p
}

// mlirMaxDepth bounds the nesting of regions, attributes and types.
const mlirMaxDepth = 1000

func (p *mlirParser) enter() {
	p.depth++
	if p.depth > mlirMaxDepth {
		p.fail("nesting deeper than %d", mlirMaxDepth)
	}
}

func (p *mlirParser) leave() { p.depth-- }

// parseFile parses the whole text into a module.
func (p *mlirParser) parseFile() (m *Module, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(mlirParseFailure)
			if !ok {
				panic(r)
			}
			m, err = nil, f.err
		}
	}()
	if i := bytes.IndexByte(p.src, 0); i >= 0 {
		p.errAt(i, "NUL byte: the input is not MLIR text (a binary file?)")
	}
	top := &Block{}
	for !p.atEnd() {
		switch p.peek() {
		case '#':
			p.parseAttrAliasDef()
		case '!':
			p.parseTypeAliasDef()
		case '{':
			if !bytes.HasPrefix(p.src[p.pos:], []byte("{-#")) {
				p.parseOperation(top) // reports what is wrong
			}
			p.parseFileMetadata()
		default:
			p.parseOperation(top)
		}
	}
	p.resolveLocations()
	if len(top.Ops) == 1 && top.Ops[0].Name == "builtin.module" {
		m, err = p.moduleFromOp(top.Ops[0], 0)
	} else {
		m = &Module{}
		for _, op := range top.Ops {
			if err = p.addToModule(m, op); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	p.resolveResources(m)
	return m, nil
}

// addToModule adds a top-level op to m: func.func ops become Funcs.
func (p *mlirParser) addToModule(m *Module, op *Op) error {
	if op.Name == "func.func" {
		f, err := mlirFuncFromOp(op, true)
		if err != nil {
			return err
		}
		m.AddFunc(f)
		return nil
	}
	op.parent = nil
	m.Globals = append(m.Globals, op)
	return nil
}

// moduleFromOp converts a builtin.module op.
func (p *mlirParser) moduleFromOp(op *Op, pos int) (*Module, error) {
	m := &Module{Loc: op.Loc}
	for _, a := range op.Attrs {
		if a.Name == "sym_name" {
			if s, ok := a.Value.(StringAttr); ok {
				m.Name = string(s)
				continue
			}
		}
		m.Attrs = append(m.Attrs, a)
	}
	if len(op.Regions) != 1 || len(op.Operands) != 0 || len(op.Results) != 0 {
		return nil, &SyntaxError{Line: max(op.Line, 1), Col: 1, Msg: "builtin.module must have one region and no operands or results"}
	}
	r := op.Regions[0]
	if len(r.Blocks) > 1 {
		return nil, &SyntaxError{Line: max(op.Line, 1), Col: 1, Msg: "builtin.module body must be a single block"}
	}
	if len(r.Blocks) == 1 {
		if len(r.Blocks[0].Args) != 0 {
			return nil, &SyntaxError{Line: max(op.Line, 1), Col: 1, Msg: "builtin.module body has no arguments"}
		}
		for _, o := range r.Blocks[0].Ops {
			if err := p.addToModule(m, o); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// mlirFuncFromOp converts a func.func op into a Func. detach makes the
// body the Func's own (the op is being discarded).
func mlirFuncFromOp(op *Op, detach bool) (*Func, error) {
	bad := func(msg string) error { return &SyntaxError{Line: max(op.Line, 1), Col: 1, Msg: "func.func: " + msg} }
	f := &Func{Loc: op.Loc, Line: op.Line}
	var ft *FunctionType
	var argAttrs, resAttrs ArrayAttr
	var hasArgAttrs, hasResAttrs bool // given, even as []
	for _, a := range op.Attrs {
		switch a.Name {
		case "sym_name":
			s, ok := a.Value.(StringAttr)
			if !ok {
				return nil, bad("sym_name must be a string")
			}
			f.Name = string(s)
			continue
		case "sym_visibility":
			s, ok := a.Value.(StringAttr)
			if !ok || (s != "public" && s != "private" && s != "nested") {
				return nil, bad(fmt.Sprintf("sym_visibility must be \"public\", \"private\" or \"nested\", not %s", mlirAppendAttr(nil, a.Value, false)))
			}
			if s == "private" {
				f.Private = true
				continue
			}
		case "function_type":
			if t, ok := a.Value.(TypeAttr); ok {
				if fnt, ok := t.Type.(FunctionType); ok {
					ft = &fnt
					continue
				}
			}
			return nil, bad("function_type must be a function type")
		case "arg_attrs":
			arr, ok := a.Value.(ArrayAttr)
			if !ok {
				return nil, bad("arg_attrs must be an array of dictionaries")
			}
			argAttrs, hasArgAttrs = arr, true
			continue
		case "res_attrs":
			arr, ok := a.Value.(ArrayAttr)
			if !ok {
				return nil, bad("res_attrs must be an array of dictionaries")
			}
			resAttrs, hasResAttrs = arr, true
			continue
		}
		f.Attrs = append(f.Attrs, a)
	}
	if ft == nil {
		return nil, bad("missing function_type")
	}
	if f.Name == "" {
		return nil, bad("missing sym_name (a function needs a name)")
	}
	if len(op.Regions) != 1 || len(op.Operands) != 0 || len(op.Results) != 0 {
		return nil, bad("must have one region and no operands or results")
	}
	f.ResultTypes = ft.Results
	r := op.Regions[0]
	if len(r.Blocks) == 0 {
		// A declaration: keep the signature.
		f.Attrs = append(f.Attrs, NamedAttr{Name: "function_type", Value: TypeAttr{Type: *ft}})
	} else {
		if !mlirTypeListEqual(mlirBlockArgTypes(r.Blocks[0]), ft.Inputs) {
			return nil, bad(fmt.Sprintf("entry block arguments of @%s do not match its function type", f.Name))
		}
		if detach {
			r.parent = nil
		}
		f.Body = r
	}
	// dicts converts arg_attrs or res_attrs, which must hold n
	// dictionaries (nil for the empty ones).
	dicts := func(name string, list ArrayAttr, n int) ([]DictAttr, error) {
		if len(list) != n {
			return nil, bad(name + " has the wrong length")
		}
		out := make([]DictAttr, n)
		for i, a := range list {
			d, ok := a.(DictAttr)
			if !ok {
				return nil, bad(name + " must be an array of dictionaries")
			}
			if len(d) > 0 {
				out[i] = d
			}
		}
		return out, nil
	}
	var err error
	if hasArgAttrs {
		if f.ArgAttrs, err = dicts("arg_attrs", argAttrs, len(ft.Inputs)); err != nil {
			return nil, err
		}
	}
	if hasResAttrs {
		if f.ResultAttrs, err = dicts("res_attrs", resAttrs, len(ft.Results)); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func mlirBlockArgTypes(b *Block) []Type {
	ts := make([]Type, len(b.Args))
	for i, a := range b.Args {
		ts[i] = a.Type
	}
	return ts
}

// ---------------------------------------------------------------------------
// SSA value scopes.

// mlirScope maps SSA names to the values they define. Numeric names use a
// slice; the others a map. Definitions made in nested regions are logged
// so they can be undone when the region ends. As in MLIR, a name visible
// from an enclosing region cannot be redefined; func.func and
// builtin.module bodies start a fresh scope.
type mlirScope struct {
	nums    [][]*Value // %0, %1 ...
	args    [][]*Value // %arg0, %arg1 ...
	names   map[string][]*Value
	numLog  []int32 // numeric names defined in nested regions; args negative (-1-n)
	nameLog []string
	defs    int
}

// mlirNumericName returns the number a name spells, or -1 ("007" is not
// the number 7: MLIR names are strings).
func mlirNumericName(name []byte) int {
	if len(name) == 0 || len(name) > 8 || (name[0] == '0' && len(name) > 1) {
		return -1
	}
	n := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// mlirArgName returns N for a name "argN", or -1.
func mlirArgName(name []byte) int {
	if len(name) < 4 || name[0] != 'a' || name[1] != 'r' || name[2] != 'g' {
		return -1
	}
	return mlirNumericName(name[3:])
}

func (s *mlirScope) lookup(name []byte) []*Value {
	if n := mlirNumericName(name); n >= 0 && n < len(s.nums) {
		if v := s.nums[n]; v != nil {
			return v
		}
	}
	if n := mlirArgName(name); n >= 0 && n < len(s.args) {
		if v := s.args[n]; v != nil {
			return v
		}
	}
	if s.names == nil {
		return nil
	}
	return s.names[string(name)]
}

// define binds name to vals; false when the name is already visible.
func (s *mlirScope) define(name []byte, vals []*Value, logged bool) bool {
	if s.lookup(name) != nil {
		return false
	}
	s.defs++
	// Numbered names are dense in practice; the slice stays proportional
	// to the number of definitions.
	if n := mlirNumericName(name); n >= 0 && n < 2*s.defs+1024 {
		for len(s.nums) <= n {
			s.nums = append(s.nums, nil)
		}
		s.nums[n] = vals
		if logged {
			s.numLog = append(s.numLog, int32(n))
		}
		return true
	}
	if n := mlirArgName(name); n >= 0 && n < 2*s.defs+1024 {
		for len(s.args) <= n {
			s.args = append(s.args, nil)
		}
		s.args[n] = vals
		if logged {
			s.numLog = append(s.numLog, int32(-1-n))
		}
		return true
	}
	if s.names == nil {
		s.names = map[string][]*Value{}
	}
	key := string(name)
	s.names[key] = vals
	if logged {
		s.nameLog = append(s.nameLog, key)
	}
	return true
}

// mark returns the current log position.
func (s *mlirScope) mark() (int, int) { return len(s.numLog), len(s.nameLog) }

// popTo undoes the definitions logged after a mark.
func (s *mlirScope) popTo(nm, sm int) {
	for _, n := range s.numLog[nm:] {
		if n >= 0 {
			s.nums[n] = nil
		} else {
			s.args[-1-n] = nil
		}
	}
	s.numLog = s.numLog[:nm]
	for _, k := range s.nameLog[sm:] {
		delete(s.names, k)
	}
	s.nameLog = s.nameLog[:sm]
}

// ---------------------------------------------------------------------------
// Operations.

// mlirValueRef is a use of an SSA value: %name or %name#index.
type mlirValueRef struct {
	name []byte
	idx  int
	pos  int
}

// mlirResultGroup is one "%name" or "%name:N" of an op's results.
type mlirResultGroup struct {
	name  []byte
	count int
	pos   int
}

// parseValueRef parses %name(#N)?.
func (p *mlirParser) parseValueRef() mlirValueRef {
	p.skipSpace()
	pos := p.pos
	if p.pos >= len(p.src) || p.src[p.pos] != '%' {
		p.fail("expected SSA value%s", p.found())
	}
	p.pos++
	name := p.suffixID()
	if len(name) == 0 {
		p.errAt(pos, "invalid SSA value name")
	}
	ref := mlirValueRef{name: name, idx: -1, pos: pos}
	if p.pos < len(p.src) && p.src[p.pos] == '#' {
		p.pos++
		start := p.pos
		for p.pos < len(p.src) && mlirIsDigit(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == start {
			p.errAt(pos, "expected result number after '#'")
		}
		n, err := strconv.Atoi(string(p.src[start:p.pos]))
		if err != nil {
			p.errAt(pos, "invalid result number")
		}
		ref.idx = n
	}
	return ref
}

// parseValueRefList parses "%a, %b, ..." (possibly empty when allowEmpty).
func (p *mlirParser) parseValueRefList() []mlirValueRef {
	var refs []mlirValueRef
	if p.peek() != '%' {
		return nil
	}
	for {
		refs = append(refs, p.parseValueRef())
		if !p.tryByte(',') {
			return refs
		}
	}
}

// lookupRef finds the value a reference names.
func (p *mlirParser) lookupRef(r mlirValueRef) *Value {
	vals := p.scope.lookup(r.name)
	if vals == nil {
		p.errAt(r.pos, "use of undefined value %%%s", r.name)
	}
	i := r.idx
	if i < 0 {
		i = 0 // %0 of a multi-result group names its first result
	}
	if i >= len(vals) {
		p.errAt(r.pos, "result #%d of %%%s does not exist (it has %d)", i, r.name, len(vals))
	}
	return vals[i]
}

// resolve finds the value of r and checks it has type t.
func (p *mlirParser) resolve(r mlirValueRef, t Type) *Value {
	v := p.lookupRef(r)
	if !mlirTypeEqual(v.Type, t) {
		p.errAt(r.pos, "use of value %%%s expects different type than prior uses: %s vs %s", r.name, mlirAppendType(nil, t), mlirAppendType(nil, v.Type))
	}
	return v
}

// resolveAll resolves refs against types.
func (p *mlirParser) resolveAll(refs []mlirValueRef, types []Type, pos int) []*Value {
	if len(refs) != len(types) {
		p.errAt(pos, "%d operands present, but expected %d", len(refs), len(types))
	}
	if len(refs) == 0 {
		return nil
	}
	vals := make([]*Value, len(refs))
	for i, r := range refs {
		vals[i] = p.resolve(r, types[i])
	}
	return vals
}

// parseResultGroups parses "%a, %b:2 =" if present.
func (p *mlirParser) parseResultGroups() []mlirResultGroup {
	if p.peek() != '%' {
		return nil
	}
	start := len(p.groupBuf)
	for {
		p.skipSpace()
		pos := p.pos
		p.pos++ // '%'
		name := p.suffixID()
		if len(name) == 0 {
			p.errAt(pos, "invalid SSA value name")
		}
		g := mlirResultGroup{name: name, count: 1, pos: pos}
		if p.pos < len(p.src) && p.src[p.pos] == ':' {
			p.pos++
			start := p.pos
			for p.pos < len(p.src) && mlirIsDigit(p.src[p.pos]) {
				p.pos++
			}
			n, err := strconv.Atoi(string(p.src[start:p.pos]))
			if err != nil || n < 1 {
				p.errAt(pos, "expected a positive result count after ':'")
			}
			g.count = n
		}
		p.groupBuf = append(p.groupBuf, g)
		if !p.tryByte(',') {
			break
		}
		if p.peek() != '%' {
			p.fail("expected SSA value%s", p.found())
		}
	}
	p.expect('=')
	return p.groupBuf[start:len(p.groupBuf):len(p.groupBuf)]
}

// internedString scans a string literal, interning it when it has no
// escapes (op names).
func (p *mlirParser) internedString() string {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '"' {
		i := p.pos + 1
		for i < len(p.src) && p.src[i] != '"' && p.src[i] != '\\' && p.src[i] != '\n' {
			i++
		}
		if i < len(p.src) && p.src[i] == '"' {
			s := p.intern(p.src[p.pos+1 : i])
			p.pos = i + 1
			return s
		}
	}
	return p.stringLit()
}

// parseOperation parses one op (with its results and location) into block.
func (p *mlirParser) parseOperation(block *Block) {
	p.skipSpace()
	start := p.pos
	gstart := len(p.groupBuf)
	groups := p.parseResultGroups()
	defer func() { p.groupBuf = p.groupBuf[:gstart] }()
	var op *Op
	p.skipSpace()
	namePos := p.pos
	if p.peek() == '"' {
		op = p.parseGenericTail(p.internedString(), namePos)
	} else {
		id := p.bareID()
		if len(id) == 0 {
			p.fail("expected operation name%s", p.found())
		}
		op = p.parsePrettyOp(p.intern(id), namePos, groups)
		// An attribute the op's syntax gives may not come again in its
		// dictionary: it would override what the syntax says.
		if name := duplicateAttr(op.Attrs); name != "" {
			p.errAt(namePos, "%s: attribute %q is given twice (by the op's syntax and in its attribute dictionary)", op.Name, name)
		}
	}
	op.Line = p.lineAt(start)
	p.parseTrailingLoc(&op.Loc)
	upgradeArrayAttrs(op)
	total := 0
	for _, g := range groups {
		if g.count > math.MaxInt-total { // the sum would wrap around
			p.errAt(start, "operation %s defines %d results but more were named", op.Name, len(op.Results))
		}
		total += g.count
	}
	if total != len(op.Results) {
		p.errAt(start, "operation %s defines %d results but %d were named", op.Name, len(op.Results), total)
	}
	i := 0
	for _, g := range groups {
		if !p.scope.define(g.name, op.Results[i:i+g.count:i+g.count], p.logging) {
			p.errAt(g.pos, "redefinition of SSA value %%%s", g.name)
		}
		i += g.count
	}
	block.Append(op)
}

// duplicateAttr returns a name that attrs hold twice, or "".
func duplicateAttr(attrs []NamedAttr) string {
	if len(attrs) < 16 {
		for i, a := range attrs {
			for _, b := range attrs[:i] {
				if a.Name == b.Name {
					return a.Name
				}
			}
		}
		return ""
	}
	seen := make(map[string]bool, len(attrs))
	for _, a := range attrs {
		if seen[a.Name] {
			return a.Name
		}
		seen[a.Name] = true
	}
	return ""
}

// parseGenericTail parses the generic form after the quoted op name.
func (p *mlirParser) parseGenericTail(name string, namePos int) *Op {
	p.expect('(')
	rstart := len(p.refBuf)
	for p.peek() == '%' {
		p.refBuf = append(p.refBuf, p.parseValueRef())
		if !p.tryByte(',') {
			break
		}
	}
	refs := p.refBuf[rstart:len(p.refBuf):len(p.refBuf)]
	defer func() { p.refBuf = p.refBuf[:rstart] }()
	p.expect(')')
	if p.peek() == '[' {
		p.fail("block successors are not supported")
	}
	if name == "" {
		p.errAt(namePos, "empty operation name")
	}
	var attrs []NamedAttr
	nprops := 0
	if p.peek() == '<' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '{' {
		p.pos++
		attrs = p.parseDictEntries(attrs)
		p.expect('>')
		nprops = len(attrs)
	}
	var regions []*Region
	if p.peek() == '(' {
		p.pos++
		for {
			regions = append(regions, p.parseRegion(nil, mlirIsolated(name), mlirRegionDialect(name)))
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(')')
	}
	if p.peek() == '{' {
		dpos := p.pos
		attrs = p.parseDictEntries(attrs)
		for _, a := range attrs[nprops:] {
			for _, b := range attrs[:nprops] {
				if a.Name == b.Name {
					p.errAt(dpos, "attribute %q is both a property and a discardable attribute (halo keeps one dictionary per op)", a.Name)
				}
			}
		}
	}
	p.expect(':')
	p.skipSpace()
	tpos := p.pos
	ins, outs := p.parseSignature()
	op := p.newOp(name, refs, ins, outs, attrs, tpos)
	for _, r := range regions {
		op.AddRegion(r)
	}
	return op
}

// parseSignature parses an op's function type into scratch slices, valid
// until the next call at the same nesting level.
func (p *mlirParser) parseSignature() (ins, outs []Type) {
	start := len(p.typeBuf)
	p.expect('(')
	if !p.tryByte(')') {
		for {
			p.typeBuf = append(p.typeBuf, p.parseType())
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(')')
	}
	mid := len(p.typeBuf)
	p.expectArrow()
	if p.peek() == '(' {
		p.pos++
		if !p.tryByte(')') {
			for {
				p.typeBuf = append(p.typeBuf, p.parseType())
				if !p.tryByte(',') {
					break
				}
			}
			p.expect(')')
		}
	} else {
		p.typeBuf = append(p.typeBuf, p.parseType())
	}
	all := p.typeBuf[start:len(p.typeBuf):len(p.typeBuf)]
	p.typeBuf = p.typeBuf[:start]
	return all[: mid-start : mid-start], all[mid-start:]
}

// parseTrailingLoc parses an optional "loc(...)" into dst.
func (p *mlirParser) parseTrailingLoc(dst *Location) {
	if p.peek() == 'l' && p.tryKeyword("loc") {
		p.parseLocBody(dst)
	}
}

// mlirArgDef is a region argument defined by a custom syntax.
type mlirArgDef struct {
	name []byte
	typ  Type
	pos  int
}

// parseRegion parses "{ ... }". args, when not nil, are the entry block's
// arguments (the custom syntax named them); the entry block then has no
// label.
func (p *mlirParser) parseRegion(args []mlirArgDef, isolated bool, dialect string) *Region {
	p.enter()
	defer p.leave()
	p.expect('{')
	saveLogging := p.logging
	saveDialect := p.defaultDialect
	p.defaultDialect = dialect
	if isolated {
		saveScope := p.scope
		p.scope = mlirScope{}
		p.logging = false
		defer func() {
			p.scope = saveScope
			p.logging = saveLogging
			p.defaultDialect = saveDialect
		}()
	} else {
		nm, sm := p.scope.mark()
		p.logging = true
		defer func() {
			p.scope.popTo(nm, sm)
			p.logging = saveLogging
			p.defaultDialect = saveDialect
		}()
	}
	r := &Region{}
	if args != nil {
		b := &Block{}
		for _, a := range args {
			v := b.AddArg(a.typ)
			if !p.scope.define(a.name, b.Args[v.index:v.index+1:v.index+1], p.logging) {
				p.errAt(a.pos, "redefinition of SSA value %%%s", a.name)
			}
		}
		r.AddBlock(b)
		if p.peek() == '^' {
			p.fail("entry block arguments were already defined")
		}
		p.parseBlockOps(b)
	} else if p.peek() != '}' {
		b := &Block{}
		r.AddBlock(b)
		if p.peek() == '^' {
			p.parseBlockLabel(b)
		}
		p.parseBlockOps(b)
	}
	for p.peek() == '^' {
		b := &Block{}
		r.AddBlock(b)
		p.parseBlockLabel(b)
		p.parseBlockOps(b)
	}
	p.expect('}')
	return r
}

// parseBlockLabel parses "^bb0(%a: t, ...):".
func (p *mlirParser) parseBlockLabel(b *Block) {
	p.expect('^')
	if len(p.suffixID()) == 0 {
		p.fail("expected block name")
	}
	if p.tryByte('(') {
		if !p.tryByte(')') {
			for {
				ref := p.parseValueRef()
				if ref.idx >= 0 {
					p.errAt(ref.pos, "block argument names cannot have a result number")
				}
				p.expect(':')
				t := p.parseType()
				var loc Location
				p.parseTrailingLoc(&loc)
				v := b.AddArg(t)
				if !p.scope.define(ref.name, b.Args[v.index:v.index+1:v.index+1], p.logging) {
					p.errAt(ref.pos, "redefinition of SSA value %%%s", ref.name)
				}
				if !p.tryByte(',') {
					break
				}
			}
			p.expect(')')
		}
	}
	p.expect(':')
}

// parseBlockOps parses ops until '}' or the next block label.
func (p *mlirParser) parseBlockOps(b *Block) {
	for {
		c := p.peek()
		if c == '}' || c == '^' {
			return
		}
		if c == 0 {
			p.fail("expected '}' to end the region")
		}
		if n := len(b.Ops); n > 0 && mlirTerminators[b.Ops[n-1].Name] {
			p.fail("operation after %s: a terminator must be the last operation of its block", b.Ops[n-1].Name)
		}
		p.parseOperation(b)
	}
}

// mlirTerminators are the ops that end a block: the parser refuses
// operations after them.
var mlirTerminators = map[string]bool{
	"func.return":      true,
	"stablehlo.return": true,
	"mhlo.return":      true,
}

// ---------------------------------------------------------------------------
// Aliases.

// parseAttrAliasDef parses "#name = attr" or "#name = loc(...)".
func (p *mlirParser) parseAttrAliasDef() {
	p.expect('#')
	pos := p.pos
	name := p.aliasName()
	p.expect('=')
	if p.peek() == 'l' && p.tryKeyword("loc") {
		p.expect('(')
		p.pos--
		body := p.balanced()
		p.locAliases[string(name)] = body[1 : len(body)-1]
		return
	}
	if _, dup := p.attrAliases[string(name)]; dup {
		p.errAt(pos, "redefinition of attribute alias #%s", name)
	}
	outer := p.expanded
	p.expanded = 0
	a, _ := p.parseAttr()
	p.noteAlias(pos, "#"+string(name))
	p.expanded = outer
	p.attrAliases[string(name)] = a
}

// maxAliasExpansion bounds the types or attributes an alias stands for.
const maxAliasExpansion = 1 << 20

// noteAlias records the size of the alias just parsed (p.expanded),
// refusing one past maxAliasExpansion.
func (p *mlirParser) noteAlias(pos int, key string) {
	if p.expanded > maxAliasExpansion {
		p.errAt(pos, "alias %s expands to more than %d types or attributes", key, maxAliasExpansion)
	}
	p.aliasSize[key] = p.expanded
}

// useAlias counts a use of the alias key.
func (p *mlirParser) useAlias(key string) {
	n := p.aliasSize[key]
	p.expanded += n
	if p.aliasUses += n; p.aliasUses > maxAliasExpansion<<6 {
		p.errAt(p.pos, "the module's aliases expand to more than %d types or attributes", maxAliasExpansion<<6)
	}
}

// parseTypeAliasDef parses "!name = type".
func (p *mlirParser) parseTypeAliasDef() {
	p.expect('!')
	pos := p.pos
	name := p.aliasName()
	p.expect('=')
	if _, dup := p.typeAliases[string(name)]; dup {
		p.errAt(pos, "redefinition of type alias !%s", name)
	}
	outer := p.expanded
	p.expanded = 0
	t := p.parseType()
	p.noteAlias(pos, "!"+string(name))
	p.expanded = outer
	p.typeAliases[string(name)] = t
}

// aliasName scans the identifier after '#' or '!'.
func (p *mlirParser) aliasName() []byte {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if mlirIsLetter(c) || mlirIsDigit(c) || c == '_' || c == '$' || c == '.' || c == '-' {
			p.pos++
			continue
		}
		break
	}
	if p.pos == start {
		p.errAt(start, "expected alias name")
	}
	return p.src[start:p.pos]
}

// mlirRegionDialect is the default dialect inside the regions of op name.
func mlirRegionDialect(name string) string {
	if name == "func.func" {
		return "func"
	}
	return ""
}

// mlirIsolated reports whether op name's regions are isolated from above
// (they may reuse the names of enclosing values).
func mlirIsolated(name string) bool {
	switch name {
	case "func.func", "builtin.module", "sdy.manual_computation", "sdy.named_computation":
		return true
	}
	return false
}
