package simcheck

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// The advice of each rule: why it breaks determinism, what to use instead.
const (
	whyMap     = "Go randomises map iteration order in every run, so peers (and a re-simulation) visit entries in different orders; iterate sorted keys (slices.Sorted(maps.Keys(m))) or keep the items in a slice"
	whyClock   = "the wall clock differs between peers and between a frame and its re-simulation; use the frame's deterministic time (runner.Context.Time, tick.Elapsed of the tick) or count ticks"
	whyRand    = "the global generator is seeded differently in every process and a rollback does not restore it; use the world's rng.Rand resource (package rng)"
	whyCrypto  = "crypto/rand is unpredictable by design; use the world's rng.Rand resource (package rng), seeded from the match"
	whyGo      = "goroutines run in an order the scheduler picks and may outlive the frame; do the frame's work sequentially inside the step"
	whyChan    = "what a channel delivers depends on goroutine scheduling; pass data through the world (components, resources, ecs events)"
	whySelect  = "select picks at random among ready cases; pass data through the world (components, resources, ecs events)"
	whyUnsafe  = "memory layout and addresses differ between processes and platforms; use typed plain data (package snapshot saves it in canonical form)"
	whyAddr    = "addresses differ between runs and peers, so an order or hash built on them differs; order by ecs.Entity or by a field of the state"
	whyGlobal  = "package-level state is not part of the world: a rollback does not restore it and peers drift apart; keep it in a component or a resource"
	whyFloatMA = "Go may fuse it into one FMA instruction on arm64, ppc64le, s390x, riscv64 and amd64 with GOAMD64=v3 but not on default amd64 or wasm, so peers on different platforms get different bits; use package fixed, or float64(x*y) + z, which forbids fusion"
)

// scan returns the findings in body (nested function literals included)
// and its static calls.
func (p *pass) scan(body *ast.BlockStmt) ([]finding, []callSite) {
	var fs []finding
	var calls []callSite
	info := p.TypesInfo
	add := func(n ast.Node, msg string) {
		if !p.ok(n.Pos()) {
			fs = append(fs, finding{pos: n.Pos(), msg: msg})
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.RangeStmt:
			switch typeUnder(info.TypeOf(n.X)).(type) {
			case *types.Map:
				add(n, "range over a map: "+whyMap)
			case *types.Chan:
				add(n, "range over a channel: "+whyChan)
			}
			if call, ok := ast.Unparen(n.X).(*ast.CallExpr); ok {
				if fn := typeutil.StaticCallee(info, call); fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "maps" {
					switch fn.Name() {
					case "Keys", "Values", "All":
						add(n, "range over maps."+fn.Name()+": "+whyMap)
					}
				}
			}
		case *ast.GoStmt:
			add(n, "go statement: "+whyGo)
		case *ast.SelectStmt:
			add(n, "select statement: "+whySelect)
		case *ast.SendStmt:
			add(n, "channel send: "+whyChan)
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				add(n, "channel receive: "+whyChan)
			}
		case *ast.SelectorExpr:
			if obj := info.Uses[n.Sel]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "unsafe" {
				switch obj.Name() {
				case "Sizeof", "Alignof", "Offsetof": // constants
				default:
					add(n, "unsafe."+obj.Name()+": "+whyUnsafe)
				}
			}
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				for _, l := range n.Lhs {
					if v := p.globalRoot(l); v != nil {
						add(l, "write to package-level variable "+v.Name()+": "+whyGlobal)
					}
				}
			}
		case *ast.IncDecStmt:
			if v := p.globalRoot(n.X); v != nil {
				add(n.X, "write to package-level variable "+v.Name()+": "+whyGlobal)
			}
		case *ast.BinaryExpr:
			if p.c.float && (n.Op == token.ADD || n.Op == token.SUB) && isFloat(info.TypeOf(n)) {
				for _, o := range []ast.Expr{n.X, n.Y} {
					if m, ok := ast.Unparen(o).(*ast.BinaryExpr); ok && m.Op == token.MUL {
						add(n, "note: float x*y "+n.Op.String()+" z: "+whyFloatMA)
						break
					}
				}
			}
		case *ast.CallExpr:
			p.call(n, add, &calls)
		}
		return true
	})
	return fs, calls
}

// call checks one call expression and records its static callee.
func (p *pass) call(n *ast.CallExpr, add func(ast.Node, string), calls *[]callSite) {
	info := p.TypesInfo
	if tv, ok := info.Types[n.Fun]; ok && tv.IsType() {
		// A conversion: a pointer turned into a number.
		if b, ok := typeUnder(tv.Type).(*types.Basic); ok && b.Kind() == types.Uintptr && len(n.Args) == 1 {
			switch t := typeUnder(info.TypeOf(n.Args[0])).(type) {
			case *types.Pointer:
				add(n, "uintptr of a pointer: "+whyAddr)
			case *types.Basic:
				if t.Kind() == types.UnsafePointer {
					add(n, "uintptr of a pointer: "+whyAddr)
				}
			}
		}
		return
	}
	if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
		if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "make" && len(n.Args) > 0 {
			if _, ok := typeUnder(info.TypeOf(n.Args[0])).(*types.Chan); ok {
				add(n, "make(chan): "+whyChan)
			}
			return
		}
	}
	fn := typeutil.StaticCallee(info, n)
	if fn == nil || fn.Pkg() == nil {
		return
	}
	name := fn.Name()
	recv := fn.Signature().Recv()
	switch path := fn.Pkg().Path(); path {
	case "time":
		if recv == nil {
			switch name {
			case "Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker":
				add(n, "time."+name+": "+whyClock)
			}
		}
	case "math/rand", "math/rand/v2":
		if recv == nil && !isConstructor(name) {
			add(n, path+"."+name+": "+whyRand)
		}
	case "crypto/rand":
		add(n, "crypto/rand."+name+": "+whyCrypto)
	case "reflect":
		switch name {
		case "Pointer", "UnsafePointer", "UnsafeAddr":
			if recv != nil {
				add(n, "reflect.Value."+name+": "+whyAddr)
			}
		}
	default:
		if !p.ok(n.Pos()) { // a //rewind:ok call is not followed
			*calls = append(*calls, callSite{pos: n.Pos(), callee: fn})
		}
	}
}

// ok reports whether pos is on a line marked //rewind:ok, or just below one.
func (p *pass) ok(pos token.Pos) bool {
	ps := p.Fset.Position(pos)
	return p.okLine[ps.Filename][ps.Line] || p.okLine[ps.Filename][ps.Line-1]
}

// isConstructor reports the math/rand functions that make a generator of
// the caller's own (deterministic given a seed) rather than use the global one.
func isConstructor(name string) bool {
	switch name {
	case "New", "NewSource", "NewPCG", "NewChaCha8", "NewZipf":
		return true
	}
	return false
}

// globalRoot returns the package-level variable that an assignment to e
// writes (e, a field of it, an element of it), or nil.
func (p *pass) globalRoot(e ast.Expr) *types.Var {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.SelectorExpr:
			if sel, ok := p.TypesInfo.Selections[x]; ok && sel.Kind() == types.FieldVal {
				e = x.X
				continue
			}
			return p.pkgVar(x.Sel)
		case *ast.Ident:
			return p.pkgVar(x)
		default:
			return nil
		}
	}
}

func (p *pass) pkgVar(id *ast.Ident) *types.Var {
	v, ok := p.TypesInfo.Uses[id].(*types.Var)
	if !ok || v.Pkg() == nil || v.IsField() || v.Parent() != v.Pkg().Scope() {
		return nil
	}
	return v
}

func isFloat(t types.Type) bool {
	b, ok := typeUnder(t).(*types.Basic)
	return ok && b.Info()&(types.IsFloat|types.IsComplex) != 0
}
