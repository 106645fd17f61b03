package stablehlo

import "strings"

// The custom forms of the Shardy (sdy) ops JAX prints in sharded programs:
// sdy.mesh, sdy.sharding_constraint, sdy.reshard, sdy.manual_computation
// and sdy.return. Their attributes stay opaque in the IR, with the text the
// generic form spells ("#sdy.mesh<...>", "#sdy.sharding<...>",
// "#sdy.sharding_per_value<[...]>", "#sdy<manual_axes{...}>"); the custom
// forms print them without the prefix.

func init() {
	mlirPrettyParsers["sdy.mesh"] = mlirParseSdyMesh
	mlirPrettyParsers["sdy.sharding_constraint"] = mlirParseSdySharding
	mlirPrettyParsers["sdy.reshard"] = mlirParseSdySharding
	mlirPrettyParsers["sdy.return"] = mlirParseSdyReturn
	mlirPrettyParsers["sdy.manual_computation"] = mlirParseSdyManual
	mlirPrettyPrinters["sdy.mesh"] = mlirPrintSdyMesh
	mlirPrettyPrinters["sdy.sharding_constraint"] = mlirPrintSdySharding
	mlirPrettyPrinters["sdy.reshard"] = mlirPrintSdySharding
	mlirPrettyPrinters["sdy.return"] = mlirPrintSdyReturn
	mlirPrettyPrinters["sdy.manual_computation"] = mlirPrintSdyManual
}

// mlirSdyInherent lists the inherent attributes of the sdy ops.
var mlirSdyInherent = map[string][]string{
	"sdy.mesh":                {"sym_name", "mesh"},
	"sdy.sharding_constraint": {"sharding"},
	"sdy.reshard":             {"sharding"},
	"sdy.manual_computation":  {"in_shardings", "out_shardings", "manual_axes"},
}

// stripped parses a "<...>" group and returns it with prefix prepended.
func (p *mlirParser) stripped(prefix string) OpaqueAttr {
	if p.peek() != '<' {
		p.fail("expected '<'%s", p.found())
	}
	return OpaqueAttr(prefix + string(p.balanced()))
}

// mlirStrip returns the "<...>" part of an opaque attribute with prefix.
func mlirStrip(a Attribute, prefix string) (string, bool) {
	o, ok := a.(OpaqueAttr)
	if !ok {
		return "", false
	}
	body, ok := strings.CutPrefix(string(o), prefix)
	if !ok || !strings.HasPrefix(body, "<") || !mlirBalancedText(body) {
		return "", false
	}
	return body, true
}

// sdy.mesh @name = <["x"=4]> attr-dict
func mlirParseSdyMesh(p *mlirParser, name string, pos int) *Op {
	p.skipSpace()
	sym := p.parseSymbolRef()
	p.expect('=')
	mesh := p.stripped("#sdy.mesh")
	attrs := p.optAttrDict([]NamedAttr{{Name: "sym_name", Value: StringAttr(sym)}, {Name: "mesh", Value: mesh}})
	return p.newOp(name, nil, nil, nil, attrs, pos)
}

func mlirPrintSdyMesh(p *mlirPrinter, op *Op) bool {
	sym, ok1 := op.Attr("sym_name").(StringAttr)
	mesh, ok2 := mlirStrip(op.Attr("mesh"), "#sdy.mesh")
	if !mlirShape(op, 0, 0) || !ok1 || !ok2 {
		return false
	}
	p.name(op)
	p.byte(' ')
	p.buf = mlirAppendSymbol(p.buf, string(sym))
	p.str(" = ")
	p.str(mesh)
	p.attrDict(mlirRest(op, "sym_name", "mesh"))
	return true
}

// sdy.sharding_constraint %x <@mesh, [...]> attr-dict : type
func mlirParseSdySharding(p *mlirParser, name string, pos int) *Op {
	x := p.parseValueRef()
	sh := p.stripped("#sdy.sharding")
	attrs := p.optAttrDict([]NamedAttr{{Name: "sharding", Value: sh}})
	p.expect(':')
	t := p.parseType()
	return p.newOp(name, []mlirValueRef{x}, []Type{t}, []Type{t}, attrs, pos)
}

func mlirPrintSdySharding(p *mlirPrinter, op *Op) bool {
	sh, ok := mlirStrip(op.Attr("sharding"), "#sdy.sharding")
	if !mlirShape(op, 1, 1) || !ok || !mlirTypeEqual(op.Operands[0].Type, op.Results[0].Type) {
		return false
	}
	p.nameAndOperands(op)
	p.byte(' ')
	p.str(sh)
	p.attrDict(mlirRest(op, "sharding"))
	p.str(" : ")
	p.typ(op.Results[0].Type)
	return true
}

// sdy.return attr-dict (%a, ... : types)?
func mlirParseSdyReturn(p *mlirParser, name string, pos int) *Op {
	attrs := p.optAttrDict(nil)
	refs := p.parseValueRefList()
	var ts []Type
	if len(refs) > 0 {
		p.expect(':')
		ts = p.parseTypeList()
	}
	return p.newOp(name, refs, ts, nil, attrs, pos)
}

func mlirPrintSdyReturn(p *mlirPrinter, op *Op) bool {
	if !mlirShape(op, -1, 0) {
		return false
	}
	p.name(op)
	p.attrDict(op.Attrs)
	if len(op.Operands) > 0 {
		p.byte(' ')
		p.values(op.Operands)
		p.str(" : ")
		p.typeList(mlirValueTypes(op.Operands))
	}
	return true
}

// sdy.manual_computation(%a) in_shardings=[<...>] out_shardings=[<...>]
// manual_axes={"x"} (%arg1: t) { ... } attr-dict : (ins) -> outs
func mlirParseSdyManual(p *mlirParser, name string, pos int) *Op {
	p.expect('(')
	refs := p.parseValueRefList()
	p.expect(')')
	p.expectKV("in_shardings")
	p.skipSpace()
	in := OpaqueAttr("#sdy.sharding_per_value<" + string(p.balanced()) + ">")
	p.expectKV("out_shardings")
	p.skipSpace()
	out := OpaqueAttr("#sdy.sharding_per_value<" + string(p.balanced()) + ">")
	axes := OpaqueAttr("#sdy<manual_axes{}>")
	if p.tryKeyword("manual_axes") {
		p.expect('=')
		p.skipSpace()
		axes = OpaqueAttr("#sdy<manual_axes" + string(p.balanced()) + ">")
	}
	p.expect('(')
	var args []mlirArgDef
	if !p.tryByte(')') {
		for {
			r := p.parseValueRef()
			p.expect(':')
			t := p.parseType()
			var loc Location
			p.parseTrailingLoc(&loc)
			args = append(args, mlirArgDef{name: r.name, typ: t, pos: r.pos})
			if !p.tryByte(',') {
				break
			}
		}
		p.expect(')')
	}
	if args == nil {
		args = []mlirArgDef{}
	}
	body := p.parseRegion(args, true, "")
	attrs := p.optAttrDict([]NamedAttr{{Name: "in_shardings", Value: in}, {Name: "out_shardings", Value: out}, {Name: "manual_axes", Value: axes}})
	ft, tpos := p.functionalType()
	op := p.newOp(name, refs, ft.Inputs, ft.Results, attrs, tpos)
	op.AddRegion(body)
	return op
}

func mlirPrintSdyManual(p *mlirPrinter, op *Op) bool {
	in, ok1 := mlirStrip(op.Attr("in_shardings"), "#sdy.sharding_per_value")
	out, ok2 := mlirStrip(op.Attr("out_shardings"), "#sdy.sharding_per_value")
	axes, ok3 := mlirStrip(op.Attr("manual_axes"), "#sdy")
	if !ok1 || !ok2 || !ok3 || len(op.Regions) != 1 || !mlirNoNil(op) ||
		!strings.HasPrefix(in, "<[") || !strings.HasPrefix(out, "<[") || !strings.HasPrefix(axes, "<manual_axes{") {
		return false
	}
	body, ok := mlirSingleBlock(op.Regions[0])
	if !ok {
		return false
	}
	p.name(op)
	p.byte('(')
	p.values(op.Operands)
	p.str(") in_shardings=")
	p.str(in[1 : len(in)-1])
	p.str(" out_shardings=")
	p.str(out[1 : len(out)-1])
	// manual_axes is a required part of the op's format, {} included.
	p.str(" manual_axes=")
	p.str(axes[len("<manual_axes") : len(axes)-1])
	p.str(" (")
	for i, a := range body.Args {
		if i > 0 {
			p.str(", ")
		}
		p.value(a)
		p.str(": ")
		p.typ(a.Type)
	}
	p.str(") ")
	p.plainRegion(op.Regions[0])
	p.attrDict(mlirRest(op, "in_shardings", "out_shardings", "manual_axes"))
	p.functional(op)
	return true
}
