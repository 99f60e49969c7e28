package main

import (
	"fmt"
	"go/ast"
	"go/types"
	"strconv"
	"strings"

	"github.com/coder/guts"
	"golang.org/x/tools/go/packages"
)

// intentCall is one entry of an intents table: its name, and the method
// it calls, with its signature (the receiver aside) and its doc comment.
type intentCall struct {
	name string
	sig  *types.Signature
	doc  string
}

// readIntents reads the table `intents` of pkg, in the order it is
// written: each entry "Name": wrapper((*Service).Name).
func readIntents(pkg *packages.Package) ([]intentCall, error) {
	if pkg == nil {
		return nil, fmt.Errorf("the intents' package is not loaded")
	}
	docs := map[types.Object]string{}
	var lit *ast.CompositeLit
	for _, f := range pkg.Syntax {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Doc != nil {
					docs[pkg.TypesInfo.Defs[d.Name]] = d.Doc.Text()
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "intents" && len(vs.Values) == 1 {
						lit, _ = vs.Values[0].(*ast.CompositeLit)
					}
				}
			}
		}
	}
	if lit == nil {
		return nil, fmt.Errorf("%s has no table `intents`", pkg.PkgPath)
	}
	var out []intentCall
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("intents: an entry that is not name: call")
		}
		key, ok := kv.Key.(*ast.BasicLit)
		call, isCall := kv.Value.(*ast.CallExpr)
		if !ok || !isCall || len(call.Args) != 1 {
			return nil, fmt.Errorf("intents: an entry is not \"Name\": wrapper((*Service).Name)")
		}
		sel, ok := call.Args[0].(*ast.SelectorExpr)
		if !ok {
			return nil, fmt.Errorf("intents %s: not a method expression", key.Value)
		}
		fn, ok := pkg.TypesInfo.Uses[sel.Sel].(*types.Func)
		if !ok {
			return nil, fmt.Errorf("intents %s: %s is not a method", key.Value, sel.Sel.Name)
		}
		name, err := strconv.Unquote(key.Value)
		if err != nil {
			return nil, fmt.Errorf("intents: a name that is not a string: %s", key.Value)
		}
		if name != fn.Name() {
			return nil, fmt.Errorf("intent %s calls %s: an intent has its method's name", name, fn.Name())
		}
		sig := fn.Type().(*types.Signature)
		if sig.Results().Len() < 1 {
			return nil, fmt.Errorf("intent %s returns nothing", name)
		}
		out = append(out, intentCall{name: name, sig: sig, doc: docs[fn]})
	}
	return out, nil
}

// intentsTS is the interface Intents: each intent with its arguments'
// names and types and its answer, from the methods' own signatures.
func intentsTS(g *guts.GoParser, pkg string, calls []intentCall) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// From %s/intents.go\n", pkg[strings.LastIndex(pkg, "/")+1:])
	b.WriteString("/**\n * Intents are the UI's calls, by name, with their arguments and answers:\n" +
		" * the table of " + pkg + "/intents.go and the methods it names.\n" +
		" * The desktop window carries them as App.Call(name, args), browser mode\n" +
		" * as POST /api/<Name>.\n */\n")
	b.WriteString("export interface Intents {\n")
	for _, ic := range calls {
		if ic.doc != "" {
			b.WriteString("    /**\n")
			for _, l := range strings.Split(strings.TrimSpace(ic.doc), "\n") {
				b.WriteString(strings.TrimRight("     * "+l, " ") + "\n")
			}
			b.WriteString("     */\n")
		}
		params := make([]string, 0, ic.sig.Params().Len())
		for i := range ic.sig.Params().Len() {
			p := ic.sig.Params().At(i)
			t, err := tsType(g, p.Type())
			if err != nil {
				return "", fmt.Errorf("intent %s, argument %s: %w", ic.name, p.Name(), err)
			}
			params = append(params, tsName(p.Name())+": "+t)
		}
		res, err := tsType(g, ic.sig.Results().At(0).Type())
		if err != nil {
			return "", fmt.Errorf("intent %s's answer: %w", ic.name, err)
		}
		fmt.Fprintf(&b, "    %s(%s): Promise<%s>;\n", ic.name, strings.Join(params, ", "), res)
	}
	b.WriteString("}\n")
	return "\n" + b.String(), nil
}

// tsName is a Go parameter's name as TypeScript spells it (productID:
// productId).
func tsName(name string) string {
	if base, ok := strings.CutSuffix(name, "ID"); ok && base != "" {
		return base + "Id"
	}
	return name
}

// tsType is the TypeScript of an intent's argument or answer: a type of
// this module by its name in the generated file, or a string, number,
// boolean or list of them.
func tsType(g *guts.GoParser, t types.Type) (string, error) {
	switch t := t.(type) {
	case *types.Alias:
		return tsType(g, types.Unalias(t))
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && strings.HasPrefix(p.Path(), module) {
			return g.Identifier(t.Obj()).Ref(), nil
		}
	case *types.Basic:
		switch {
		case t.Info()&types.IsString != 0:
			return "string", nil
		case t.Info()&types.IsNumeric != 0:
			return "number", nil
		case t.Info()&types.IsBoolean != 0:
			return "boolean", nil
		}
	case *types.Slice:
		e, err := tsType(g, t.Elem())
		return e + "[]", err
	}
	return "", fmt.Errorf("no TypeScript for %s: add it to scripts/contractgen", t)
}
