package kiosk

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"testing"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

// notIntents are the Service's methods shaped like an intent that the
// customer screens must not reach, and why.
var notIntents = map[string]string{
	"Release": "staff close the customer screen (staffapi's CloseCheckout), behind the PIN",
}

// The table names each intent after the Service's method it calls
// (scripts/contractgen writes the TypeScript from that method), and every
// method shaped like an intent (a view and an error, or a view alone
// without arguments) is in the table or said not to be one.
func TestTheIntentTableAndTheServiceAgree(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "intents.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "intents" {
			lit, _ = vs.Values[0].(*ast.CompositeLit)
		}
		return lit == nil
	})
	if lit == nil {
		t.Fatal("no intents table in intents.go")
	}
	listed := 0
	for _, e := range lit.Elts {
		kv := e.(*ast.KeyValueExpr)
		key := kv.Key.(*ast.BasicLit).Value
		call, ok := kv.Value.(*ast.CallExpr)
		var sel *ast.SelectorExpr
		if ok && len(call.Args) == 1 {
			sel, _ = call.Args[0].(*ast.SelectorExpr)
		}
		if sel == nil {
			t.Errorf("intent %s: not a call of a method expression (*Service).Name", key)
			continue
		}
		if `"`+sel.Sel.Name+`"` != key {
			t.Errorf("intent %s calls (*Service).%s: an intent has its method's name", key, sel.Sel.Name)
		}
		listed++
	}
	if listed != len(intents) {
		t.Errorf("%d entries read in intents.go, %d in the table", listed, len(intents))
	}

	view := reflect.TypeFor[CheckoutView]()
	errType := reflect.TypeFor[error]()
	views := []reflect.Type{reflect.TypeFor[InfoView](), reflect.TypeFor[CatalogView](), view, reflect.TypeFor[TerminalView]()}
	st := reflect.TypeFor[*Service]()
	for i := range st.NumMethod() {
		m := st.Method(i)
		ft := m.Type
		shaped := ft.NumOut() == 2 && ft.Out(0) == view && ft.Out(1) == errType ||
			ft.NumOut() == 1 && ft.NumIn() == 1 && slices.Contains(views, ft.Out(0))
		_, listed := intents[m.Name]
		_, excused := notIntents[m.Name]
		switch {
		case shaped && !listed && !excused:
			t.Errorf("(*Service).%s looks like an intent and is not in the table (intents.go), nor in notIntents", m.Name)
		case listed && excused:
			t.Errorf("%s is both an intent and not one", m.Name)
		}
	}
	for name := range notIntents {
		if _, ok := st.MethodByName(name); !ok {
			t.Errorf("notIntents names %s, which the Service does not have", name)
		}
	}
}

// A call that does not fit the table is the caller's bug: an ArgError,
// and nothing happens.
func TestACallThatDoesNotFitIsRefused(t *testing.T) {
	e := newEnv(t)
	raw := func(vals ...string) []json.RawMessage {
		out := []json.RawMessage{}
		for _, v := range vals {
			out = append(out, json.RawMessage(v))
		}
		return out
	}
	for _, c := range []struct {
		name string
		args []json.RawMessage
	}{
		{"Explode", raw()},
		{"Release", raw()},
		{"Start", raw()},
		{"Cancel", raw(`1`)},
		{"AddItem", raw(`"croissant"`, `"two"`)},
		{"Info", raw(`1`)},
	} {
		var ae *fault.ArgError
		if _, err := e.s.Call(c.name, c.args); !errors.As(err, &ae) {
			t.Errorf("%s %s: %v, want an ArgError", c.name, c.args, err)
		}
	}
	if v := e.s.Checkout(); v.Phase != PhaseWelcome {
		t.Fatalf("phase %s after refused calls", v.Phase)
	}
	got, err := e.s.Call("Start", raw(`"en"`))
	if v, ok := got.(CheckoutView); err != nil || !ok || v.Language != "en" {
		t.Fatalf("Start: %+v %v", got, err)
	}
	if IsIntent("Release") || !IsIntent("Start") || !slices.Contains(IntentNames(), "Abandon") {
		t.Fatal("IsIntent or IntentNames disagree with the table")
	}
}
