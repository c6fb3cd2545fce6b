package simcheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// libPath is the module path of rewind's library.
const libPath = "github.com/rewindgo/rewind"

// maxFindings bounds the findings a function's fact carries.
const maxFindings = 32

// New returns the analyzer. Each call returns a fresh one with its own
// flags (-float), so that nothing is shared between callers.
func New() *analysis.Analyzer {
	c := &checker{}
	a := &analysis.Analyzer{
		Name:      "simcheck",
		Doc:       "check rewind simulation code for non-determinism\n\nSimulation functions (runner.Step, the sim of predict's Timeline.Step, ClientFrame.Frame and ServerFrame.Frame, functions marked //rewind:sim) and what they call in the same module must not range over maps, read the wall clock, use global random generators, start goroutines, use channels, unsafe or pointer addresses, or write package-level variables.",
		URL:       "https://pkg.go.dev/github.com/rewindgo/rewind/cmd/rewind",
		FactTypes: []analysis.Fact{new(Summary)},
		Run:       c.run,
	}
	a.Flags.BoolVar(&c.float, "float", false, "also note float x*y+z, which Go may fuse into one FMA instruction on some platforms")
	return a
}

// Summary is the fact of a function with findings: what its body and the
// functions it calls in the same module do against the rules.
type Summary struct {
	Module   string    // the module of the function
	Findings []Finding // at most 32, in source order
}

// AFact marks Summary as an analysis fact.
func (*Summary) AFact() {}

// String describes the fact (analysistest matches it).
func (s *Summary) String() string { return fmt.Sprintf("sim findings: %d", len(s.Findings)) }

// Finding is one breach of the rules in a function of another package.
type Finding struct {
	Where string // file:line
	Msg   string
}

type checker struct{ float bool }

// finding is a breach found in this package (pos valid) or reached
// through a call into another package of the module (pos is the call).
type finding struct {
	pos   token.Pos
	msg   string
	where string // for findings of another package: its file:line
}

func (f finding) key() string { return fmt.Sprintf("%d|%s|%s", f.pos, f.where, f.msg) }

type fnInfo struct {
	decl   *ast.FuncDecl
	direct []finding
	calls  []callSite
	sum    []finding // direct + transitive, computed by summarise
	done   bool
	active bool
}

type callSite struct {
	pos    token.Pos
	callee *types.Func
}

type pass struct {
	*analysis.Pass
	c      *checker
	module string
	fns    map[*types.Func]*fnInfo
	okLine map[string]map[int]bool // file -> lines with //rewind:ok
	seen   map[string]bool         // reported diagnostics
	// lits are the function literals assigned to each variable (a sim
	// function passed by a variable: step := func(...){...}).
	lits map[*types.Var][]*ast.FuncLit
}

func (c *checker) run(ap *analysis.Pass) (any, error) {
	p := &pass{Pass: ap, c: c, fns: map[*types.Func]*fnInfo{}, okLine: map[string]map[int]bool{}, seen: map[string]bool{},
		lits: map[*types.Var][]*ast.FuncLit{}}
	if ap.Module != nil {
		p.module = ap.Module.Path
	}
	for _, f := range ap.Files {
		for _, cg := range f.Comments {
			for _, cm := range cg.List {
				if strings.HasPrefix(cm.Text, "//rewind:ok") {
					pos := ap.Fset.Position(cm.Slash)
					if p.okLine[pos.Filename] == nil {
						p.okLine[pos.Filename] = map[int]bool{}
					}
					p.okLine[pos.Filename][pos.Line] = true
				}
			}
		}
	}
	// The function literals held in variables.
	for _, f := range ap.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			var lhs, rhs []ast.Expr
			switch n := n.(type) {
			case *ast.AssignStmt:
				lhs, rhs = n.Lhs, n.Rhs
			case *ast.ValueSpec:
				for _, id := range n.Names {
					lhs = append(lhs, id)
				}
				rhs = n.Values
			}
			if len(lhs) != len(rhs) {
				return true
			}
			for i, l := range lhs {
				id, ok := l.(*ast.Ident)
				lit, isLit := ast.Unparen(rhs[i]).(*ast.FuncLit)
				if !ok || !isLit {
					continue
				}
				obj := ap.TypesInfo.Defs[id]
				if obj == nil {
					obj = ap.TypesInfo.Uses[id]
				}
				if v, ok := obj.(*types.Var); ok {
					p.lits[v] = append(p.lits[v], lit)
				}
			}
			return true
		})
	}
	// Every function's own findings and calls.
	for _, f := range ap.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			obj, _ := ap.TypesInfo.Defs[fd.Name].(*types.Func)
			if obj == nil {
				continue
			}
			info := &fnInfo{decl: fd}
			info.direct, info.calls = p.scan(fd.Body)
			p.fns[obj] = info
		}
	}
	// Facts: the summary of every function with findings, for the
	// packages of the same module that import this one.
	objs := make([]*types.Func, 0, len(p.fns))
	for obj := range p.fns {
		objs = append(objs, obj)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Pos() < objs[j].Pos() })
	for _, obj := range objs {
		sum := p.summarise(obj)
		if len(sum) == 0 || p.module == "" {
			continue
		}
		s := &Summary{Module: p.module}
		for _, f := range sum {
			if len(s.Findings) == maxFindings {
				break
			}
			w := f.where
			if w == "" {
				w = p.where(f.pos)
			}
			s.Findings = append(s.Findings, Finding{Where: w, Msg: f.msg})
		}
		ap.ExportObjectFact(obj, s)
	}
	// The simulation functions.
	for _, f := range ap.Files {
		p.roots(f)
	}
	return nil, nil
}

// where is pos as base-name file:line.
func (p *pass) where(pos token.Pos) string {
	ps := p.Fset.Position(pos)
	name := ps.Filename
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return fmt.Sprintf("%s:%d", name, ps.Line)
}

// summarise returns the findings of obj's body and of the functions it
// calls (same package through their bodies, other packages of the module
// through their facts).
func (p *pass) summarise(obj *types.Func) []finding {
	info := p.fns[obj]
	if info == nil || info.active {
		return nil
	}
	if info.done {
		return info.sum
	}
	info.active = true
	seen := map[string]bool{}
	add := func(f finding) {
		if k := f.key(); !seen[k] && len(info.sum) < 4*maxFindings {
			seen[k] = true
			info.sum = append(info.sum, f)
		}
	}
	for _, f := range info.direct {
		add(f)
	}
	for _, cs := range info.calls {
		for _, f := range p.reach(cs) {
			add(f)
		}
	}
	info.active, info.done = false, true
	return info.sum
}

// reach returns what a call reaches: the callee's findings (same package)
// or its fact's findings placed at the call (another package of the module).
func (p *pass) reach(cs callSite) []finding {
	callee := cs.callee.Origin()
	if callee.Pkg() == nil || trusted(callee.Pkg().Path()) {
		return nil
	}
	if callee.Pkg() == p.Pkg {
		return p.summarise(callee)
	}
	var s Summary
	if p.module == "" || !p.ImportObjectFact(callee, &s) || s.Module != p.module {
		return nil
	}
	out := make([]finding, 0, len(s.Findings))
	for _, f := range s.Findings {
		out = append(out, finding{pos: cs.pos, where: f.Where, msg: fmt.Sprintf("call to %s reaches, at %s: %s", funcName(callee), f.Where, f.Msg)})
	}
	return out
}

// funcName is pkg.F or pkg.T.M.
func funcName(fn *types.Func) string {
	name := fn.Pkg().Name() + "."
	if recv := fn.Signature().Recv(); recv != nil {
		t := recv.Type()
		if pt, ok := t.(*types.Pointer); ok {
			t = pt.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			name += n.Obj().Name() + "."
		}
	}
	return name + fn.Name()
}

// trusted reports whether pkg is one of rewind's library packages, whose
// calls the analyzer does not follow: they are the deterministic API the
// rules point to (their own tests hold them to it). The programs under
// cmd/ and examples/ are not trusted.
func trusted(pkg string) bool {
	if pkg == libPath {
		return true
	}
	rest, ok := strings.CutPrefix(pkg, libPath+"/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	return first != "cmd" && first != "examples"
}

// report reports the findings of a sim function: those in this package at
// their place, those of other packages at the call that reaches them.
func (p *pass) report(fs []finding, root string) {
	for _, f := range fs {
		if k := f.key(); !p.seen[k] {
			p.seen[k] = true
			p.Report(analysis.Diagnostic{Pos: f.pos, Category: "determinism", Message: f.msg + " [sim code: " + root + "]"})
		}
	}
}

// roots finds the simulation functions of file f and reports their
// findings.
func (p *pass) roots(f *ast.File) {
	info := p.TypesInfo
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if hasDirective(n.Doc) && n.Body != nil {
				if obj, ok := info.Defs[n.Name].(*types.Func); ok {
					p.report(p.summarise(obj), "//rewind:sim "+n.Name.Name)
				}
			}
		case *ast.CompositeLit:
			st, ok := typeUnder(info.TypeOf(n)).(*types.Struct)
			if !ok {
				return true
			}
			for _, e := range n.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, ok := kv.Key.(*ast.Ident)
				if !ok {
					continue
				}
				for i := range st.NumFields() {
					if fl := st.Field(i); fl.Name() == key.Name && isStep(fl.Type()) {
						p.root(kv.Value, "runner.Step")
					}
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if isStep(info.TypeOf(l)) {
						p.root(n.Rhs[i], "runner.Step")
					}
				}
			}
		case *ast.ValueSpec:
			if n.Type != nil && isStep(info.TypeOf(n.Type)) {
				for _, v := range n.Values {
					p.root(v, "runner.Step")
				}
			}
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; ok && tv.IsType() {
				if isStep(tv.Type) && len(n.Args) == 1 {
					p.root(n.Args[0], "runner.Step")
				}
				return true
			}
			if sig, ok := typeUnder(info.TypeOf(n.Fun)).(*types.Signature); ok {
				for i, a := range n.Args {
					if i < sig.Params().Len() && isStep(sig.Params().At(i).Type()) {
						p.root(a, "runner.Step")
					}
				}
			}
			if fn := typeutil.StaticCallee(info, n); fn != nil {
				if i, name := simParam(fn); i >= 0 && i < len(n.Args) {
					p.root(n.Args[i], name)
				}
			}
		}
		return true
	})
}

// root reports the findings of the function e denotes.
func (p *pass) root(e ast.Expr, kind string) {
	e = ast.Unparen(e)
	switch e := e.(type) {
	case *ast.FuncLit:
		direct, calls := p.scan(e.Body)
		fs := append([]finding(nil), direct...)
		for _, cs := range calls {
			fs = append(fs, p.reach(cs)...)
		}
		p.report(fs, kind)
		return
	}
	var obj types.Object
	switch e := e.(type) {
	case *ast.Ident:
		obj = p.TypesInfo.Uses[e]
		if v, ok := obj.(*types.Var); ok {
			for _, lit := range p.lits[v] {
				p.root(lit, kind)
			}
			return
		}
	case *ast.SelectorExpr:
		if sel, ok := p.TypesInfo.Selections[e]; ok {
			obj = sel.Obj()
		} else {
			obj = p.TypesInfo.Uses[e.Sel]
		}
	}
	fn, ok := obj.(*types.Func)
	if !ok {
		return
	}
	fn = fn.Origin()
	if fn.Pkg() == p.Pkg {
		p.report(p.summarise(fn), kind+" "+fn.Name())
		return
	}
	p.report(p.reach(callSite{pos: e.Pos(), callee: fn}), kind+" "+fn.Name())
}

// simParam returns the index of fn's parameter that rewind runs as the
// simulation, and a name for it; -1 if none.
func simParam(fn *types.Func) (int, string) {
	fn = fn.Origin()
	if fn.Pkg() == nil || fn.Pkg().Path() != libPath+"/predict" {
		return -1, ""
	}
	sig := fn.Signature()
	if sig.Recv() == nil {
		return -1, ""
	}
	t := sig.Recv().Type()
	if pt, ok := t.(*types.Pointer); ok {
		t = pt.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok {
		return -1, ""
	}
	switch named.Obj().Name() + "." + fn.Name() {
	case "Timeline.Step":
		return 0, "predict.Timeline.Step sim"
	case "ClientFrame.Frame":
		return 2, "predict.ClientFrame.Frame sim"
	case "ServerFrame.Frame":
		return 1, "predict.ServerFrame.Frame sim"
	}
	return -1, ""
}

// isStep reports whether t is runner.Step.
func isStep(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	o := named.Obj()
	return o.Pkg() != nil && o.Pkg().Path() == libPath+"/rollback/runner" && o.Name() == "Step"
}

func typeUnder(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

// hasDirective reports whether doc holds //rewind:sim.
func hasDirective(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if c.Text == "//rewind:sim" || strings.HasPrefix(c.Text, "//rewind:sim ") {
			return true
		}
	}
	return false
}
