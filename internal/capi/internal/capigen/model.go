package capigen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Kind classifies a resolved C field type.
type Kind int

// The kinds of field types.
const (
	KindScalar  Kind = iota // arithmetic type or bool
	KindPointer             // any data or function pointer
	KindEnum                // a C enum (4 bytes here)
	KindStruct              // a struct by value
	KindArray               // a fixed-size array of one of the above
)

// Type is a resolved C field type and its Go mirror.
type Type struct {
	Kind  Kind
	Go    string // Go type expression
	C     string // C type spelling in the generated header (arrays: the element's)
	Size  int
	Align int
	Len   int   // arrays: element count
	Elem  *Type // arrays: element type
	Name  string
}

// scalarTypes maps the C scalar spellings found in the tables to Go.
//
// The rule: size_t and uint64_t -> uint64; uintptr_t -> uintptr;
// intptr_t and int64_t -> int64; int and int32_t -> int32; uint32_t -> uint32;
// bool -> bool; float -> float32; double -> float64. (LP64: every one of
// these has the same size and alignment in Go and C.)
var scalarTypes = map[string]Type{
	"size_t":    {Kind: KindScalar, Go: "uint64", C: "size_t", Size: 8, Align: 8},
	"uint64_t":  {Kind: KindScalar, Go: "uint64", C: "uint64_t", Size: 8, Align: 8},
	"uintptr_t": {Kind: KindScalar, Go: "uintptr", C: "uintptr_t", Size: 8, Align: 8},
	"intptr_t":  {Kind: KindScalar, Go: "int64", C: "intptr_t", Size: 8, Align: 8},
	"int64_t":   {Kind: KindScalar, Go: "int64", C: "int64_t", Size: 8, Align: 8},
	"int":       {Kind: KindScalar, Go: "int32", C: "int", Size: 4, Align: 4},
	"int32_t":   {Kind: KindScalar, Go: "int32", C: "int32_t", Size: 4, Align: 4},
	"uint32_t":  {Kind: KindScalar, Go: "uint32", C: "uint32_t", Size: 4, Align: 4},
	"bool":      {Kind: KindScalar, Go: "bool", C: "bool", Size: 1, Align: 1},
	"float":     {Kind: KindScalar, Go: "float32", C: "float", Size: 4, Align: 4},
	"double":    {Kind: KindScalar, Go: "float64", C: "double", Size: 8, Align: 8},
}

// scalarTypedefs are typedef names of scalar types used by value in the tables.
var scalarTypedefs = map[string]string{
	"XLA_FFI_Handler_Traits": "uint32_t", // typedef uint32_t XLA_FFI_Handler_Traits;
}

// funcPtrTypedefs are typedef names of function-pointer types used by value
// in the tables (each is 8 bytes: a pointer).
var funcPtrTypedefs = map[string]bool{
	"PJRT_SendCallback":                        true,
	"PJRT_RecvCallback":                        true,
	"PJRT_KeyValueGetCallback":                 true,
	"PJRT_KeyValueGetCallback_ValueDeleter":    true,
	"PJRT_KeyValuePutCallback":                 true,
	"PJRT_KeyValueTryGetCallback":              true,
	"PJRT_KeyValueTryGetCallback_ValueDeleter": true,
	"PJRT_Event_OnReadyCallback":               true,
	"PJRT_Error_PayloadVisitor":                true,
	"PJRT_HloOutputCallback":                   true,
}

// funcTypes are names of function types (not structs) that appear only
// behind pointers and have no <name>_Args struct; they get no forward
// declaration in the C header.
var funcTypes = map[string]bool{
	"PJRT_CallbackError": true,
	"XLA_FFI_Handler":    true,
	"XLA_FFI_Task":       true,
}

// missingTypes supplies the C type of rows whose field_type cell is empty in
// the tables (the callback extension, pjrt_c_api_callback_extension.h). The
// types are inferred from the field size, the field name and the enum
// tables; pointers are spelled void *, which is all the mirrors need.
// failure_type is an enum whose constants are not in the tables, so it is
// mirrored as a 4-byte int32_t.
var missingTypes = map[string]string{
	"PJRT_Callback_Tpu_SliceBuilderArgs.struct_size":  "size_t struct_size",
	"PJRT_Callback_Tpu_SliceBuilderArgs.failure_type": "int32_t failure_type",
	"PJRT_Callback_PrefatalArgs.struct_size":          "size_t struct_size",
	"PJRT_Callback_PrefatalArgs.error_code":           "PJRT_Error_Code error_code",
	"PJRT_Callback_PrefatalArgs.error_message":        "const char *error_message",
	"PJRT_Callback_PrefatalArgs.error_message_size":   "size_t error_message_size",
	"PJRT_Callback_RegisterCallback_Args.struct_size": "size_t struct_size",
	"PJRT_Callback_RegisterCallback_Args.client":      "PJRT_Client *client",
	"PJRT_Callback_RegisterCallback_Args.type":        "PJRT_Callback_Type type",
	"PJRT_Callback_RegisterCallback_Args.callback":    "void *callback",
	"PJRT_Callback_RegisterCallback_Args.user_arg":    "void *user_arg",
	"PJRT_Callback_InvokeCallback_Args.struct_size":   "size_t struct_size",
	"PJRT_Callback_InvokeCallback_Args.client":        "PJRT_Client *client",
	"PJRT_Callback_InvokeCallback_Args.type":          "PJRT_Callback_Type type",
	"PJRT_Callback_InvokeCallback_Args.args":          "void *args",
	"PJRT_Callback_Extension.base":                    "PJRT_Extension_Base base",
	"PJRT_Callback_Extension.register_callback":       "void *register_callback",
	"PJRT_Callback_Extension.invoke_callback":         "void *invoke_callback",
}

// unionNames names the Go field that holds an anonymous union, per struct.
// Unions not listed get the CamelCase of their anon_member_of cell.
var unionNames = map[string]string{
	"PJRT_NamedValue":          "Value",
	"PJRT_Buffer_MemoryLayout": "Layout",
}

// Member is one table row with its resolved type.
type Member struct {
	Row  *LayoutRow
	Type *Type
	Go   string // Go name (fields) or accessor name (union members)
	// TypeText is the C declaration text used (the table's, or the
	// missingTypes entry when the table's cell is empty).
	TypeText string
}

// Field is one field of a Go mirror: a plain member, a union of members, or
// padding.
type Field struct {
	Go      string // "_" for padding
	GoType  string
	Offset  int
	Size    int
	Align   int
	Members []*Member // one for a plain field, several for a union, none for padding
	Union   string    // anon_member_of for unions
	Tail    bool      // tail padding
}

// Struct is one C struct and its Go mirror.
type Struct struct {
	Name, Header, File string
	Sizeof, Align      int
	Macro              int // -1: no STRUCT_SIZE macro
	Rows               []*LayoutRow
	Members            []*Member
	Fields             []*Field
}

// Enum is one C enum type and its constants.
type Enum struct {
	Name, Header string
	Consts       []*EnumRow
}

// Model is everything the emitters need.
type Model struct {
	Tables  *Tables
	Structs []*Struct // table order
	byName  map[string]*Struct
	Enums   []*Enum // table order
	enumSet map[string]*Enum
	// Opaque are the type names that appear only behind pointers and are
	// neither structs of the tables, enums, scalars nor function types.
	Opaque []string
}

// CamelCase converts a C field name to a Go field name: names that already
// start with an upper-case letter (PJRT_Client_Create) are kept as they are;
// others are split at '_' and each part gets an upper-case first letter
// (struct_size -> StructSize, num_args -> NumArgs).
func CamelCase(name string) string {
	if name == "" {
		return name
	}
	if unicode.IsUpper(rune(name[0])) {
		return name
	}
	var b strings.Builder
	for _, p := range strings.Split(name, "_") {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]))
		b.WriteString(p[1:])
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// Build resolves every type and computes every Go layout. It fails on
// anything it does not understand: an unknown C type, a size or offset that
// differs from the table, a union that is not all at one offset.
func Build(t *Tables) (*Model, error) {
	m := &Model{Tables: t, byName: map[string]*Struct{}, enumSet: map[string]*Enum{}}
	for _, e := range t.Enums {
		en := m.enumSet[e.Type]
		if en == nil {
			if !isIdent(e.Type) {
				return nil, fmt.Errorf("%s:%d: bad enum type name %q", e.File, e.Line, e.Type)
			}
			en = &Enum{Name: e.Type, Header: e.Header}
			m.enumSet[e.Type] = en
			m.Enums = append(m.Enums, en)
		}
		if !isIdent(e.Name) {
			return nil, fmt.Errorf("%s:%d: bad enum constant name %q", e.File, e.Line, e.Name)
		}
		en.Consts = append(en.Consts, e)
	}
	for _, r := range t.Layout {
		s := m.byName[r.Struct]
		if s == nil {
			if !isIdent(r.Struct) {
				return nil, fmt.Errorf("%s: bad struct name", r.Where())
			}
			s = &Struct{Name: r.Struct, Header: r.Header, File: r.File, Sizeof: r.Sizeof, Align: r.Align, Macro: r.Macro}
			m.byName[r.Struct] = s
			m.Structs = append(m.Structs, s)
		} else if s.File != r.File {
			return nil, fmt.Errorf("%s: struct also defined in %s", r.Where(), s.File)
		}
		if r.Sizeof != s.Sizeof || r.Align != s.Align || r.Macro != s.Macro {
			return nil, fmt.Errorf("%s: size_of_struct/align_of_struct/STRUCT_SIZE differ from the struct's first row", r.Where())
		}
		if !isIdent(r.Field) {
			return nil, fmt.Errorf("%s: bad field name", r.Where())
		}
		s.Rows = append(s.Rows, r)
	}
	for _, s := range m.Structs {
		if err := m.layout(s); err != nil {
			return nil, err
		}
	}
	opaque := map[string]bool{}
	for _, s := range m.Structs {
		for _, mb := range s.Members {
			if n := pointee(mb.TypeText, mb.Row.Field); n != "" && m.byName[n] == nil && m.enumSet[n] == nil &&
				!funcTypes[n] && m.byName[n+"_Args"] == nil && !funcPtrTypedefs[n] && !isScalarName(n) {
				opaque[n] = true
			}
		}
	}
	for n := range opaque {
		m.Opaque = append(m.Opaque, n)
	}
	sort.Strings(m.Opaque)
	return m, nil
}

func isScalarName(n string) bool {
	_, ok := scalarTypes[n]
	_, ok2 := scalarTypedefs[n]
	return ok || ok2 || n == "void" || n == "char" || n == "uint8_t" || n == "int8_t"
}

// pointee returns the base type name of a plain (non-function) pointer
// declaration "T *name" (qualifiers dropped), or "".
func pointee(text, field string) string {
	if strings.Contains(text, "(") || !strings.Contains(text, "*") {
		return ""
	}
	base := strings.TrimSuffix(text, field)
	base = strings.ReplaceAll(base, "*", " ")
	var words []string
	for _, w := range strings.Fields(base) {
		if w != "const" && w != "struct" && w != "volatile" {
			words = append(words, w)
		}
	}
	if len(words) != 1 {
		return ""
	}
	return words[0]
}

var pointerType = Type{Kind: KindPointer, Go: "uintptr", C: "void *", Size: 8, Align: 8}

// resolve parses the C declaration text of one row.
func (m *Model) resolve(r *LayoutRow) (*Type, string, error) {
	text := r.CType
	if text == "" {
		var ok bool
		if text, ok = missingTypes[r.Struct+"."+r.Field]; !ok {
			return nil, "", fmt.Errorf("%s: empty field_type and no entry in missingTypes", r.Where())
		}
	}
	text = strings.Join(strings.Fields(text), " ")
	if strings.Contains(text, "(") {
		// Function pointer: RET (*name)(PARAMS).
		if !strings.Contains(text, "(*"+r.Field+")") {
			return nil, "", fmt.Errorf("%s: cannot parse function pointer type %q", r.Where(), text)
		}
		t := pointerType
		return &t, text, nil
	}
	decl := text
	arrayLen := 0
	if strings.HasSuffix(decl, "]") {
		lb := strings.LastIndexByte(decl, '[')
		if lb < 0 {
			return nil, "", fmt.Errorf("%s: cannot parse array type %q", r.Where(), text)
		}
		n, err := strconv.Atoi(strings.TrimSpace(decl[lb+1 : len(decl)-1]))
		if err != nil || n <= 0 {
			return nil, "", fmt.Errorf("%s: bad array length in %q", r.Where(), text)
		}
		arrayLen = n
		decl = strings.TrimSpace(decl[:lb])
	}
	if !strings.HasSuffix(decl, r.Field) {
		return nil, "", fmt.Errorf("%s: field_type %q does not end with the field name", r.Where(), text)
	}
	base := strings.TrimSpace(strings.TrimSuffix(decl, r.Field))
	if base == "" || !(strings.HasSuffix(base, "*") || decl[len(base)] == ' ') {
		return nil, "", fmt.Errorf("%s: cannot parse field_type %q", r.Where(), text)
	}
	var elem *Type
	if strings.Contains(base, "*") {
		t := pointerType
		elem = &t
	} else {
		var words []string
		for _, w := range strings.Fields(base) {
			if w != "const" && w != "struct" && w != "enum" {
				words = append(words, w)
			}
		}
		if len(words) != 1 {
			return nil, "", fmt.Errorf("%s: unknown C type %q", r.Where(), base)
		}
		var err error
		if elem, err = m.named(words[0]); err != nil {
			return nil, "", fmt.Errorf("%s: %v", r.Where(), err)
		}
	}
	if arrayLen == 0 {
		return elem, text, nil
	}
	return &Type{
		Kind: KindArray, Go: fmt.Sprintf("[%d]%s", arrayLen, elem.Go), C: elem.C,
		Size: elem.Size * arrayLen, Align: elem.Align, Len: arrayLen, Elem: elem,
	}, text, nil
}

// named resolves a type used by value.
func (m *Model) named(n string) (*Type, error) {
	if t, ok := scalarTypes[n]; ok {
		return &t, nil
	}
	if u, ok := scalarTypedefs[n]; ok {
		t := scalarTypes[u]
		return &t, nil
	}
	if funcPtrTypedefs[n] {
		t := pointerType
		return &t, nil
	}
	if m.enumSet[n] != nil {
		return &Type{Kind: KindEnum, Go: n, C: "int32_t", Size: 4, Align: 4, Name: n}, nil
	}
	if s := m.byName[n]; s != nil {
		return &Type{Kind: KindStruct, Go: n, C: n, Size: s.Sizeof, Align: s.Align, Name: n}, nil
	}
	return nil, fmt.Errorf("unknown C type %q (not a scalar, enum, struct of the tables or known typedef)", n)
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// layout resolves the members of s, groups unions and lays out the Go
// fields with explicit padding.
func (m *Model) layout(s *Struct) error {
	seenGo := map[string]string{}
	claim := func(goName, what string) error {
		if prev, ok := seenGo[goName]; ok {
			return fmt.Errorf("%s: Go name %s of %s collides with %s", s.Name, goName, what, prev)
		}
		seenGo[goName] = what
		return nil
	}
	for _, r := range s.Rows {
		t, text, err := m.resolve(r)
		if err != nil {
			return err
		}
		if t.Size != r.FieldSize {
			return fmt.Errorf("%s: type %q is %d bytes in the mirror but field_size is %d", r.Where(), text, t.Size, r.FieldSize)
		}
		s.Members = append(s.Members, &Member{Row: r, Type: t, Go: CamelCase(r.Field), TypeText: text})
	}
	var fields []*Field
	for i := 0; i < len(s.Members); {
		mb := s.Members[i]
		if mb.Row.AnonOf == "" {
			if err := claim(mb.Go, "field "+mb.Row.Field); err != nil {
				return err
			}
			fields = append(fields, &Field{Go: mb.Go, GoType: mb.Type.Go, Offset: mb.Row.Offset, Size: mb.Type.Size, Align: mb.Type.Align, Members: []*Member{mb}})
			i++
			continue
		}
		j := i
		for j < len(s.Members) && s.Members[j].Row.AnonOf == mb.Row.AnonOf {
			j++
		}
		group := s.Members[i:j]
		size, align := 0, 1
		for _, g := range group {
			if g.Row.Offset != mb.Row.Offset {
				return fmt.Errorf("%s: member of %s at offset %d, the union starts at %d (anonymous structs are not supported)", g.Row.Where(), g.Row.AnonOf, g.Row.Offset, mb.Row.Offset)
			}
			size = max(size, g.Type.Size)
			align = max(align, g.Type.Align)
		}
		word := map[int]string{1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}[align]
		if word == "" {
			return fmt.Errorf("%s: union alignment %d not supported", mb.Row.Where(), align)
		}
		size = roundUp(size, align)
		goType := word
		if size > align {
			goType = fmt.Sprintf("[%d]%s", size/align, word)
		}
		name := unionNames[s.Name]
		if name == "" {
			name = CamelCase(mb.Row.AnonOf)
		}
		if err := claim(name, "union "+mb.Row.AnonOf); err != nil {
			return err
		}
		for _, g := range group {
			acc := g.Go
			if err := claim(acc, "accessor of union member "+g.Row.Field); err != nil {
				return err
			}
			if g.Type.Kind != KindStruct {
				if err := claim("Set"+acc, "setter of union member "+g.Row.Field); err != nil {
					return err
				}
			}
		}
		fields = append(fields, &Field{Go: name, GoType: goType, Offset: mb.Row.Offset, Size: size, Align: align, Members: group, Union: mb.Row.AnonOf})
		i = j
	}
	cur, align := 0, 1
	for _, f := range fields {
		r := f.Members[0].Row
		if f.Offset < cur {
			return fmt.Errorf("%s: offset %d overlaps the previous field, which ends at %d", r.Where(), f.Offset, cur)
		}
		if f.Offset%f.Align != 0 {
			return fmt.Errorf("%s: offset %d is not a multiple of the Go alignment %d of %s", r.Where(), f.Offset, f.Align, f.GoType)
		}
		if f.Offset > cur {
			s.Fields = append(s.Fields, &Field{Go: "_", GoType: fmt.Sprintf("[%d]byte", f.Offset-cur), Offset: cur, Size: f.Offset - cur, Align: 1})
		}
		s.Fields = append(s.Fields, f)
		cur = f.Offset + f.Size
		align = max(align, f.Align)
	}
	if cur > s.Sizeof {
		return fmt.Errorf("%s: fields end at %d, past sizeof %d", s.Name, cur, s.Sizeof)
	}
	if cur < s.Sizeof {
		s.Fields = append(s.Fields, &Field{Go: "_", GoType: fmt.Sprintf("[%d]byte", s.Sizeof-cur), Offset: cur, Size: s.Sizeof - cur, Align: 1, Tail: true})
	}
	if align != s.Align {
		return fmt.Errorf("%s: Go alignment %d, table says %d", s.Name, align, s.Align)
	}
	if s.Sizeof%s.Align != 0 {
		return fmt.Errorf("%s: sizeof %d is not a multiple of its alignment %d", s.Name, s.Sizeof, s.Align)
	}
	if s.Macro != -1 && (s.Macro > s.Sizeof || s.Macro <= 0) {
		return fmt.Errorf("%s: STRUCT_SIZE %d outside (0, sizeof %d]", s.Name, s.Macro, s.Sizeof)
	}
	return nil
}

// deps returns the structs that s embeds by value.
func (m *Model) deps(s *Struct) []*Struct {
	var out []*Struct
	for _, mb := range s.Members {
		t := mb.Type
		if t.Kind == KindArray {
			t = t.Elem
		}
		if t.Kind == KindStruct {
			out = append(out, m.byName[t.Name])
		}
	}
	return out
}

// DependencyOrder returns the structs so that every struct comes after the
// structs it embeds by value, otherwise in table order.
func (m *Model) DependencyOrder() ([]*Struct, error) {
	state := map[*Struct]int{} // 1: visiting, 2: done
	var out []*Struct
	var visit func(s *Struct) error
	visit = func(s *Struct) error {
		switch state[s] {
		case 1:
			return fmt.Errorf("%s: struct contains itself by value", s.Name)
		case 2:
			return nil
		}
		state[s] = 1
		for _, d := range m.deps(s) {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[s] = 2
		out = append(out, s)
		return nil
	}
	for _, s := range m.Structs {
		if err := visit(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}
