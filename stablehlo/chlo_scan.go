package stablehlo

import "github.com/halo-ml/halo/xla"

// chlo.scan and chlo.mulhi.
//
//	%r:2 = chlo.scan(%x) inits(%init) dimension=0 [attributes {is_reverse = true}] {
//	^bb0(%elem: tensor<i32>, %carry: tensor<i32>):
//	  ...
//	  stablehlo.return %out, %next : tensor<i32>, tensor<i32>
//	} : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)
//
// scan's operands are the inputs then the initial carries; the split is
// the inherent attribute operandSegmentSizes = array<i32: #inputs, #inits>
// (as MLIR's generic form writes it). mulhi (the high half of an integer
// product) has no custom form.

func init() {
	scan := opSpec{name: "chlo.scan", operands: []string{"operands..."}, results: results, regions: []string{"body"},
		attrs: []attrSpec{reqInt("dimension", xla.Int64), opt("is_reverse", attrBool), opt("is_associative", attrBool),
			req("operandSegmentSizes", attrAny)}}
	opSpecs[scan.name] = &scan
	mulhi := opSpec{name: "chlo.mulhi", operands: binaryOperand, results: result1}
	opSpecs[mulhi.name] = &mulhi
	mlirPrettyParsers["chlo.scan"] = mlirParseChloScan
	mlirPrettyPrinters["chlo.scan"] = mlirPrintChloScan
}

func mlirParseChloScan(p *mlirParser, name string, pos int) *Op {
	p.expect('(')
	inputs := p.parseValueRefList()
	p.expect(')')
	p.expectKeyword("inits")
	p.expect('(')
	inits := p.parseValueRefList()
	p.expect(')')
	p.expectKV("dimension")
	dim := p.integer()
	var attrs []NamedAttr
	if p.tryKeyword("attributes") {
		attrs = p.parseDictEntries(nil)
	}
	body := p.parseRegion(nil, false, "")
	ft, tpos := p.functionalType()
	refs := append(append([]mlirValueRef{}, inputs...), inits...)
	attrs = append([]NamedAttr{
		{Name: "dimension", Value: mlirI64(dim)},
		{Name: "operandSegmentSizes", Value: DenseArrayAttr{DType: xla.Int32, Values: []int64{int64(len(inputs)), int64(len(inits))}}},
	}, attrs...)
	op := p.newOp(name, refs, ft.Inputs, ft.Results, attrs, tpos)
	if op != nil {
		op.AddRegion(body)
	}
	return op
}

func mlirPrintChloScan(p *mlirPrinter, op *Op) bool {
	dim, ok := mlirIntOf(op.Attr("dimension"), xla.Int64)
	seg, ok2 := op.Attr("operandSegmentSizes").(DenseArrayAttr)
	if !ok || !ok2 || seg.DType != xla.Int32 || len(seg.Values) != 2 || seg.Values[0] < 0 || seg.Values[1] < 0 ||
		int(seg.Values[0]+seg.Values[1]) != len(op.Operands) || len(op.Regions) != 1 || !mlirNoNil(op) {
		return false
	}
	n := int(seg.Values[0])
	p.name(op)
	p.byte('(')
	p.values(op.Operands[:n])
	p.str(") inits(")
	p.values(op.Operands[n:])
	p.str(") dimension=")
	p.buf = mlirAppendInt(p.buf, dim)
	if rest := mlirRest(op, "dimension", "operandSegmentSizes"); len(rest) > 0 {
		p.str(" attributes ")
		p.dict(rest)
	}
	p.byte(' ')
	p.region(op.Regions[0], true)
	p.functional(op)
	return true
}
