package kiosk

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain fails the package's tests when any of them made the checkout
// change phase in a way the table (moves) does not have: the whole suite
// is the walk through the code's changes of phase.
func TestMain(m *testing.M) {
	code := m.Run()
	if n := strayMoves.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d change(s) of phase outside the table (phases.go's moves): the log says which\n", n)
		code = 1
	}
	os.Exit(code)
}

// phases are the Phase constants of contract.go, read from the source so
// that a new phase cannot be left out of the table.
func phases(t *testing.T) []Phase {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "contract.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []Phase
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Phase" {
				for _, n := range vs.Names {
					out = append(out, phaseByName(t, n.Name))
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d phases found in contract.go", len(out))
	}
	return out
}

func phaseByName(t *testing.T, name string) Phase {
	all := map[string]Phase{
		"PhaseWelcome": PhaseWelcome, "PhaseDining": PhaseDining, "PhaseOrdering": PhaseOrdering, "PhasePaying": PhasePaying,
		"PhaseCanceling": PhaseCanceling, "PhaseApproved": PhaseApproved, "PhaseDeclined": PhaseDeclined,
		"PhaseUnknown": PhaseUnknown, "PhaseFailed": PhaseFailed, "PhaseUnavailable": PhaseUnavailable,
	}
	p, ok := all[name]
	if !ok {
		t.Fatalf("contract.go has a phase %s this test does not know: add it here and to the table", name)
	}
	return p
}

// reach are the phases the table leads to from p.
func reach(from Phase, next func(Phase) []Phase) map[Phase]bool {
	seen := map[Phase]bool{from: true}
	todo := []Phase{from}
	for len(todo) > 0 {
		p := todo[0]
		todo = todo[1:]
		for _, q := range next(p) {
			if !seen[q] {
				seen[q] = true
				todo = append(todo, q)
			}
		}
	}
	return seen
}

// The table is a machine a customer can go through: every phase has its
// way out, is reached from welcome, and leads back to welcome; nothing
// moves to itself; paying's outcomes are each one move away; and a
// customer's money is never left behind (no way from paying or canceling
// to the cart's phases but back to ordering when nothing was recorded).
func TestThePhaseTable(t *testing.T) {
	all := phases(t)
	for p, to := range moves {
		if !slices.Contains(all, p) {
			t.Errorf("the table has a phase %q that contract.go does not", p)
		}
		for _, q := range to {
			if q == p {
				t.Errorf("%s moves to itself in the table: no change is no move", p)
			}
			if !slices.Contains(all, q) {
				t.Errorf("%s → %q: not a phase", p, q)
			}
		}
	}
	forward := func(p Phase) []Phase { return moves[p] }
	fromWelcome := reach(PhaseWelcome, forward)
	for _, p := range all {
		if len(moves[p]) == 0 {
			t.Errorf("%s has no way out", p)
		}
		if !fromWelcome[p] {
			t.Errorf("%s is not reached from welcome", p)
		}
		if !reach(p, forward)[PhaseWelcome] {
			t.Errorf("%s never leads back to welcome", p)
		}
	}
	for _, out := range []Phase{PhaseApproved, PhaseDeclined, PhaseFailed, PhaseUnknown} {
		for _, from := range []Phase{PhasePaying, PhaseCanceling} {
			if !canMove(from, out) {
				t.Errorf("%s cannot end in %s", from, out)
			}
		}
	}
	// Once an attempt may have left, the order is never dropped silently:
	// out of paying and canceling only to an outcome, to the cart (the
	// order could not be recorded), or to welcome (a printed link runs on).
	for _, from := range []Phase{PhasePaying, PhaseCanceling} {
		for _, to := range moves[from] {
			if to == PhaseDining || to == PhaseUnavailable {
				t.Errorf("%s → %s would leave an attempt nobody follows", from, to)
			}
		}
	}
	// Only staff close an unknown outcome, to welcome; an approved order
	// goes nowhere but welcome.
	for _, p := range []Phase{PhaseUnknown, PhaseApproved} {
		if !slices.Equal(moves[p], []Phase{PhaseWelcome}) {
			t.Errorf("%s → %v: only welcome", p, moves[p])
		}
	}
	if canMove(PhaseWelcome, PhasePaying) || canMove(PhaseDining, PhasePaying) {
		t.Error("a payment starts only from the cart (ordering)")
	}
}

// Every change of phase the code makes goes through enterLocked, which
// holds it to the table: no other code of the package writes a phase
// (resetLocked keeps the phase it found, then enters the new one; New
// starts at welcome).
func TestOnlyEnterLockedChangesThePhase(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, l := range n.Lhs {
						if se, ok := l.(*ast.SelectorExpr); ok && se.Sel.Name == "phase" {
							writes++
							if fn.Name.Name != "enterLocked" {
								t.Errorf("%s: %s writes the phase: use enterLocked", name, fn.Name.Name)
							}
						}
					}
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && k.Name == "phase" {
						if v, ok := n.Value.(*ast.Ident); !(fn.Name.Name == "New" && ok && v.Name == "PhaseWelcome") && fn.Name.Name != "resetLocked" {
							t.Errorf("%s: %s sets a checkout's phase: use enterLocked", name, fn.Name.Name)
						}
					}
				}
				return true
			})
		}
	}
	if writes != 1 {
		t.Errorf("%d writes of a phase found, expected enterLocked's one", writes)
	}
}
