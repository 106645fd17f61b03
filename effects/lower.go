package effects

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// LoweredAttr marks a module made by Lower (a module attribute), so that
// lowering it again is an error rather than a second set of tokens.
const LoweredAttr = "halo.effects.lowered"

// LowerOptions control Lower.
type LowerOptions struct {
	// Main is the entry function: the module's (@main, or its only public
	// function) when empty; when set, it must be that one.
	Main string
	// TokenArrays makes the entry function take and return a tensor<0xi1>
	// per ordered effect instead of a !stablehlo.token, and start each
	// effect's token chain with stablehlo.after_all inside: what JAX does on
	// real plugins, which may not create token buffers. The runtime token
	// is then a zero-size array whose readiness orders the computations.
	TokenArrays bool
}

// Lowered is a module whose ordered effects are threaded with tokens.
type Lowered struct {
	// Module is the lowered copy (the input module is not changed).
	Module *stablehlo.Module
	// Ordered are the ordered effects of the entry function, in the order
	// of its leading token parameters and results.
	Ordered []string
	// Unordered reports whether the entry function has unordered callbacks.
	Unordered bool
	// TokenArrays is LowerOptions.TokenArrays.
	TokenArrays bool
}

// HasEffects reports whether the entry function has any effect.
func (l *Lowered) HasEffects() bool { return len(l.Ordered) > 0 || l.Unordered }

// Lower threads compiler tokens through a copy of m. Every function that
// (directly or through calls and regions) holds ordered callbacks gets one
// !stablehlo.token parameter and result per ordered effect, sorted by
// effect name, before its own; inside, each effect's token goes through
// its callbacks in program order (an ordered callback takes the token as
// operand 0 and returns the next as result 0), through func.call (a
// stablehlo.composite whose decomposition has ordered effects becomes the
// func.call of it, as its operands and results cannot hold the tokens),
// and through stablehlo.while, if and case as extra operands, region
// arguments and results. The entry function takes the effects' runtime
// tokens first and returns them first (as tensor<0xi1> with TokenArrays).
//
// Ordered callbacks inside a while condition or inside other ops with
// regions (reduce, sort, map ...) are an error, as are recursive calls.
func Lower(m *stablehlo.Module, opts LowerOptions) (*Lowered, error) {
	if m == nil {
		return nil, errors.New("effects: Lower: nil module")
	}
	if m.Attr(LoweredAttr) != nil {
		return nil, errors.New("effects: Lower: the module was lowered already")
	}
	// The tokens go on the function a PJRT plugin runs: the module's
	// entry (@main, or its only public function).
	entry := m.EntryName()
	mainName := opts.Main
	if mainName == "" {
		mainName = entry
	}
	main := m.Func(mainName)
	if main == nil || main.Body == nil {
		return nil, fmt.Errorf("effects: Lower: the module has no function @%s", mainName)
	}
	if mainName != entry {
		return nil, fmt.Errorf("effects: Lower: @%s is not the module's entry function: a plugin runs @%s (rename it, or make @%s the only public function)", mainName, entry, mainName)
	}
	l := &lowerer{m: m, info: map[string]*funcInfo{}, opts: opts}
	for _, f := range m.Funcs {
		if _, err := l.analyze(f.Name); err != nil {
			return nil, err
		}
	}
	out := &stablehlo.Module{Name: m.Name, Attrs: slices.Clone(m.Attrs), Loc: m.Loc}
	out.SetAttr(LoweredAttr, stablehlo.BoolAttr(true))
	for _, g := range m.Globals {
		out.Globals = append(out.Globals, stablehlo.CloneOp(g, map[*stablehlo.Value]*stablehlo.Value{}))
	}
	for _, f := range m.Funcs {
		nf, err := l.lowerFunc(f, f == main)
		if err != nil {
			return nil, err
		}
		out.AddFunc(nf)
	}
	if err := out.Verify(); err != nil {
		return nil, fmt.Errorf("effects: Lower: the lowered module does not verify: %w", err)
	}
	shareFuncs(out) // the copy keeps its callbacks in the table too
	mi := l.info[mainName]
	return &Lowered{Module: out, Ordered: mi.ordered, Unordered: mi.unordered, TokenArrays: opts.TokenArrays}, nil
}

// funcInfo is what a function does, directly or through its callees.
type funcInfo struct {
	ordered   []string // sorted
	unordered bool
	visiting  bool
}

type lowerer struct {
	m    *stablehlo.Module
	info map[string]*funcInfo
	opts LowerOptions
}

// callbackEffect returns the ordered effect of op when it is an ordered
// callback ("" otherwise) and whether it is a callback at all.
func callbackEffect(op *stablehlo.Op) (name string, isCallback bool) {
	if op.Name != "stablehlo.custom_call" {
		return "", false
	}
	if t, _ := op.Attr("call_target_name").(stablehlo.StringAttr); string(t) != Target {
		return "", false
	}
	cfg, _ := op.Attr("backend_config").(stablehlo.DictAttr)
	if s, ok := cfg.Get(OrderedAttr).(stablehlo.StringAttr); ok {
		return string(s), true
	}
	return "", true
}

// isCall reports whether op runs a function of the module (Op.Callee).
func isCall(op *stablehlo.Op) bool {
	return op.Name == "func.call" || op.Name == "stablehlo.composite"
}

// analyze computes the effects of function name.
func (l *lowerer) analyze(name string) (*funcInfo, error) {
	if fi := l.info[name]; fi != nil {
		if fi.visiting {
			return nil, fmt.Errorf("effects: Lower: @%s calls itself (recursive calls cannot be threaded)", name)
		}
		return fi, nil
	}
	f := l.m.Func(name)
	if f == nil {
		return nil, fmt.Errorf("effects: Lower: call of a missing function @%s", name)
	}
	fi := &funcInfo{visiting: true}
	l.info[name] = fi
	set := map[string]bool{}
	if f.Body != nil {
		var err error
		f.Walk(func(op *stablehlo.Op) bool {
			if err != nil {
				return false
			}
			if e, ok := callbackEffect(op); ok {
				if e == "" {
					fi.unordered = true
				} else {
					set[e] = true
				}
			}
			if isCall(op) {
				var ci *funcInfo
				ci, err = l.analyze(op.Callee())
				if err != nil {
					return false
				}
				fi.unordered = fi.unordered || ci.unordered
				for _, e := range ci.ordered {
					set[e] = true
				}
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	fi.ordered = sortedKeys(set)
	fi.visiting = false
	return fi, nil
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// regionEffects returns the ordered effects used inside op's regions.
func (l *lowerer) regionEffects(op *stablehlo.Op) []string {
	set := map[string]bool{}
	for _, r := range op.Regions {
		r.Walk(func(o *stablehlo.Op) bool {
			if e, ok := callbackEffect(o); ok && e != "" {
				set[e] = true
			}
			if isCall(o) {
				for _, e := range l.info[o.Callee()].ordered {
					set[e] = true
				}
			}
			return true
		})
	}
	return sortedKeys(set)
}

var tokenType stablehlo.Type = stablehlo.TokenType{}

// arrayToken is the runtime token type of TokenArrays.
var arrayToken = stablehlo.Tensor(xla.Bool, 0)

func tokenTypes(n int) []stablehlo.Type {
	out := make([]stablehlo.Type, n)
	for i := range out {
		out[i] = tokenType
	}
	return out
}

// lowerFunc returns f with its tokens threaded.
func (l *lowerer) lowerFunc(f *stablehlo.Func, isMain bool) (*stablehlo.Func, error) {
	fi := l.info[f.Name]
	if f.Body == nil || len(fi.ordered) == 0 {
		return stablehlo.CloneFunc(f, f.Name), nil
	}
	n := len(fi.ordered)
	boundary := tokenType
	if isMain && l.opts.TokenArrays {
		boundary = arrayToken
	}
	nf := &stablehlo.Func{
		Name: f.Name, Private: f.Private, Attrs: slices.Clone(f.Attrs), Loc: f.Loc,
		ResultTypes: append(repeat(boundary, n), f.ResultTypes...),
	}
	if f.ArgAttrs != nil {
		nf.ArgAttrs = append(make([]stablehlo.DictAttr, n), f.ArgAttrs...)
	}
	if f.ResultAttrs != nil {
		nf.ResultAttrs = append(make([]stablehlo.DictAttr, n), f.ResultAttrs...)
	}
	old := f.Body.Blocks[0]
	nb := stablehlo.NewBlock(append(repeat(boundary, n), valueTypes(old.Args)...)...)
	nf.Body = stablehlo.NewRegion(nb)
	mapping := map[*stablehlo.Value]*stablehlo.Value{}
	for i, a := range old.Args {
		mapping[a] = nb.Args[n+i]
	}
	toks := map[string]*stablehlo.Value{}
	for i, e := range fi.ordered {
		if boundary == tokenType {
			toks[e] = nb.Args[i]
			continue
		}
		op := stablehlo.NewOp("stablehlo.after_all", nil, []stablehlo.Type{tokenType})
		nb.Append(op)
		toks[e] = op.Results[0]
	}
	if err := l.lowerOps(f, nb, old.Ops[:len(old.Ops)-1], toks, mapping); err != nil {
		return nil, err
	}
	term := old.Terminator()
	var lead []*stablehlo.Value
	if boundary == tokenType {
		lead = tokenValues(fi.ordered, toks)
	} else {
		for range fi.ordered {
			c := stablehlo.BuilderAtEnd(nb).Zero(arrayToken)
			lead = append(lead, c)
		}
	}
	nb.Append(l.terminator(term, lead, mapping))
	return nf, nil
}

func repeat(t stablehlo.Type, n int) []stablehlo.Type {
	out := make([]stablehlo.Type, n)
	for i := range out {
		out[i] = t
	}
	return out
}

func valueTypes(vs []*stablehlo.Value) []stablehlo.Type {
	out := make([]stablehlo.Type, len(vs))
	for i, v := range vs {
		out[i] = v.Type
	}
	return out
}

func tokenValues(effects []string, toks map[string]*stablehlo.Value) []*stablehlo.Value {
	out := make([]*stablehlo.Value, len(effects))
	for i, e := range effects {
		out[i] = toks[e]
	}
	return out
}

func mapValues(vs []*stablehlo.Value, mapping map[*stablehlo.Value]*stablehlo.Value) []*stablehlo.Value {
	out := make([]*stablehlo.Value, len(vs))
	for i, v := range vs {
		if m, ok := mapping[v]; ok {
			out[i] = m
		} else {
			out[i] = v
		}
	}
	return out
}

// terminator rebuilds term with lead values before its mapped operands.
func (l *lowerer) terminator(term *stablehlo.Op, lead []*stablehlo.Value, mapping map[*stablehlo.Value]*stablehlo.Value) *stablehlo.Op {
	op := stablehlo.NewOp(term.Name, append(lead, mapValues(term.Operands, mapping)...), nil, slices.Clone(term.Attrs)...)
	op.Loc = term.Loc
	return op
}

// newOp makes op's replacement with lead operands and results added.
func newOp(op *stablehlo.Op, leadOps []*stablehlo.Value, nLead int, mapping map[*stablehlo.Value]*stablehlo.Value) *stablehlo.Op {
	n := stablehlo.NewOp(op.Name, append(leadOps, mapValues(op.Operands, mapping)...),
		append(tokenTypes(nLead), valueTypes(op.Results)...), slices.Clone(op.Attrs)...)
	n.Loc = op.Loc
	for i, r := range op.Results {
		mapping[r] = n.Results[nLead+i]
	}
	return n
}

// lowerOps appends the lowered ops to nb, updating toks (the current
// token of each effect) and mapping (old values to new).
func (l *lowerer) lowerOps(f *stablehlo.Func, nb *stablehlo.Block, ops []*stablehlo.Op, toks map[string]*stablehlo.Value, mapping map[*stablehlo.Value]*stablehlo.Value) error {
	for _, op := range ops {
		if e, ok := callbackEffect(op); ok && e != "" {
			n := newOp(op, []*stablehlo.Value{toks[e]}, 1, mapping)
			nb.Append(n)
			toks[e] = n.Results[0]
			continue
		}
		var effs []string
		if isCall(op) {
			effs = l.info[op.Callee()].ordered
		} else if len(op.Regions) > 0 {
			effs = l.regionEffects(op)
		}
		if len(effs) == 0 {
			nb.Append(stablehlo.CloneOp(op, mapping))
			continue
		}
		var err error
		switch op.Name {
		case "func.call":
			n := newOp(op, tokenValues(effs, toks), len(effs), mapping)
			nb.Append(n)
			setTokens(effs, toks, n.Results)
		case "stablehlo.composite":
			// Its decomposition now takes and returns tokens, which the
			// composite's operands and results do not declare: it becomes
			// the call of its decomposition it stands for.
			call := stablehlo.NewOp("func.call", op.Operands, valueTypes(op.Results),
				stablehlo.NamedAttr{Name: "callee", Value: stablehlo.SymbolRefAttr(op.Callee())})
			call.Loc = op.Loc
			n := newOp(call, tokenValues(effs, toks), len(effs), mapping)
			for i, r := range op.Results {
				mapping[r] = n.Results[len(effs)+i]
			}
			nb.Append(n)
			setTokens(effs, toks, n.Results)
		case "stablehlo.while":
			err = l.lowerWhile(f, nb, op, effs, toks, mapping)
		case "stablehlo.if", "stablehlo.case":
			err = l.lowerBranches(f, nb, op, effs, toks, mapping)
		default:
			err = fmt.Errorf("effects: Lower: @%s: ordered effect %q inside %s: tokens are threaded through func.call, stablehlo.composite, stablehlo.while, stablehlo.if and stablehlo.case only", f.Name, effs[0], op.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func setTokens(effs []string, toks map[string]*stablehlo.Value, vals []*stablehlo.Value) {
	for i, e := range effs {
		toks[e] = vals[i]
	}
}

// lowerWhile threads the tokens of effs through a while loop as leading
// loop-carried values.
func (l *lowerer) lowerWhile(f *stablehlo.Func, nb *stablehlo.Block, op *stablehlo.Op, effs []string, toks map[string]*stablehlo.Value, mapping map[*stablehlo.Value]*stablehlo.Value) error {
	if len(op.Regions) != 2 {
		return fmt.Errorf("effects: Lower: @%s: stablehlo.while has %d regions, want 2", f.Name, len(op.Regions))
	}
	var condEffs []string
	op.Regions[0].Walk(func(o *stablehlo.Op) bool {
		if e, ok := callbackEffect(o); ok && e != "" {
			condEffs = append(condEffs, e)
		}
		if isCall(o) {
			condEffs = append(condEffs, l.info[o.Callee()].ordered...)
		}
		return true
	})
	if len(condEffs) > 0 {
		return fmt.Errorf("effects: Lower: @%s: ordered effect %q inside a stablehlo.while condition: the condition cannot return a token; compute the condition's effect in the body", f.Name, condEffs[0])
	}
	k := len(effs)
	n := newOp(op, tokenValues(effs, toks), k, mapping)
	n.Regions = nil
	for ri, r := range op.Regions {
		ob := r.Blocks[0]
		rb := stablehlo.NewBlock(append(tokenTypes(k), valueTypes(ob.Args)...)...)
		for i, a := range ob.Args {
			mapping[a] = rb.Args[k+i]
		}
		inner := map[string]*stablehlo.Value{}
		for i, e := range effs {
			inner[e] = rb.Args[i]
		}
		if err := l.lowerOps(f, rb, ob.Ops[:len(ob.Ops)-1], inner, mapping); err != nil {
			return err
		}
		var lead []*stablehlo.Value
		if ri == 1 { // the body returns the tokens; the condition only its predicate
			lead = tokenValues(effs, inner)
		}
		rb.Append(l.terminator(ob.Terminator(), lead, mapping))
		n.AddRegion(stablehlo.NewRegion(rb))
	}
	nb.Append(n)
	setTokens(effs, toks, n.Results)
	return nil
}

// lowerBranches threads the tokens of effs through if/case: each branch
// starts from the current tokens (captured from the enclosing block) and
// returns its last ones as leading results.
func (l *lowerer) lowerBranches(f *stablehlo.Func, nb *stablehlo.Block, op *stablehlo.Op, effs []string, toks map[string]*stablehlo.Value, mapping map[*stablehlo.Value]*stablehlo.Value) error {
	k := len(effs)
	n := newOp(op, nil, k, mapping)
	n.Regions = nil
	for _, r := range op.Regions {
		ob := r.Blocks[0]
		rb := stablehlo.NewBlock(valueTypes(ob.Args)...)
		for i, a := range ob.Args {
			mapping[a] = rb.Args[i]
		}
		inner := map[string]*stablehlo.Value{}
		for _, e := range effs {
			inner[e] = toks[e]
		}
		if err := l.lowerOps(f, rb, ob.Ops[:len(ob.Ops)-1], inner, mapping); err != nil {
			return err
		}
		rb.Append(l.terminator(ob.Terminator(), tokenValues(effs, inner), mapping))
		n.AddRegion(stablehlo.NewRegion(rb))
	}
	nb.Append(n)
	setTokens(effs, toks, n.Results)
	return nil
}
