package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// channelNames reads the payment channels journal/state.go declares: the
// constants of type Channel, by identifier and by value.
func channelNames(root string) (idents, values []string, err error) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "backend", "journal", "state.go"), nil, 0)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if t, ok := v.Type.(*ast.Ident); !ok || t.Name != "Channel" {
				continue
			}
			for i, n := range v.Names {
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					continue
				}
				val, err := strconv.Unquote(lit.Value)
				if err != nil {
					return nil, nil, err
				}
				idents, values = append(idents, n.Name), append(values, val)
			}
		}
	}
	if len(idents) < 4 {
		return nil, nil, fmt.Errorf("journal/state.go declares only %v as channels", idents)
	}
	return idents, values, nil
}

// channelAware are the packages whose job is to know each channel: the
// channels and their traits, the device adapters, the wiring.
var channelAware = []string{"payment", "device", "cli"}

// goFilesNamingAChannel are the Go files of backend/ (tests left out)
// outside the channel-aware packages that name a channel: its constant
// (journal.ChannelLink, or ChannelLink inside journal), or its value
// compared with something ("link" == x, case "link").
func goFilesNamingAChannel(root string) ([]string, error) {
	idents, values, err := channelNames(root)
	if err != nil {
		return nil, err
	}
	var found []string
	backend := filepath.Join(root, "backend")
	err = filepath.WalkDir(backend, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(backend, path)
			if d.Name() == "testdata" || slices.Contains(channelAware, filepath.ToSlash(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		if namesAChannel(f, idents, values) {
			rel, _ := filepath.Rel(root, path)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(found)
	return found, err
}

func namesAChannel(f *ast.File, idents, values []string) bool {
	inJournal := f.Name.Name == "journal"
	isValue := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		v, err := strconv.Unquote(lit.Value)
		return err == nil && slices.Contains(values, v)
	}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "journal" && slices.Contains(idents, n.Sel.Name) {
				found = true
			}
		case *ast.Ident:
			if inJournal && slices.Contains(idents, n.Name) {
				found = true
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && (isValue(n.X) || isValue(n.Y)) {
				found = true
			}
		case *ast.CaseClause:
			if slices.ContainsFunc(n.List, isValue) {
				found = true
			}
		}
		return !found
	})
	return found
}

// uiFilesNamingAChannel are the UI's Svelte and TypeScript files (tests,
// test fixtures, translations and generated contracts left out) that
// compare a value with a channel's name.
func uiFilesNamingAChannel(root string) ([]string, error) {
	_, values, err := channelNames(root)
	if err != nil {
		return nil, err
	}
	names := strings.Join(values, "|")
	q := "[\"'`]"
	compare := regexp.MustCompile(`[!=]==?\s*` + q + `(` + names + `)` + q + `|` +
		q + `(` + names + `)` + q + `\s*[!=]==?|case\s+` + q + `(` + names + `)` + q)
	var found []string
	src := filepath.Join(root, "frontend", "src")
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case d.IsDir() && (name == "i18n" || name == "test" || name == "node_modules"):
			return filepath.SkipDir
		case d.IsDir(), strings.HasSuffix(name, ".test.ts"), strings.HasSuffix(name, ".gen.ts"):
			return nil
		case !strings.HasSuffix(name, ".svelte") && !strings.HasSuffix(name, ".ts"):
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if compare.Match(text) {
			rel, _ := filepath.Rel(root, path)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(found)
	return found, err
}
