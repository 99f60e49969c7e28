// Package house holds the repository's size rules: no source file over
// maxFileLines lines, no Go function over maxFuncLines lines of body,
// tests and generated code aside. A file or a function past them has
// several jobs: split it into files, or steps, named after them.
package house

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	maxFileLines = 800
	maxFuncLines = 80
)

// TestSizeRules walks the repository's Go files (tests and generated
// files aside) and the frontend's TypeScript and Svelte sources, and names
// each file and each Go function over its limit.
func TestSizeRules(t *testing.T) {
	root := repoRoot(t)
	files, err := sources(root)
	if err != nil {
		t.Fatal(err)
	}
	// The walk itself must see the tree, or the rule holds of nothing.
	for _, want := range []string{"main.go", "backend/journal/journal.go", "frontend/src/App.svelte", "frontend/src/main.ts"} {
		if !slices.Contains(files, want) {
			t.Fatalf("the walk from %s did not see %s: it sees %d files", root, want, len(files))
		}
	}
	var problems []string
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if generated(b) {
			continue
		}
		if n := countLines(b); n > maxFileLines {
			problems = append(problems, fmt.Sprintf("%s: %d lines (at most %d)", rel, n, maxFileLines))
		}
		if strings.HasSuffix(rel, ".go") {
			long, err := longFuncs(rel, b, maxFuncLines)
			if err != nil {
				t.Fatal(err)
			}
			problems = append(problems, long...)
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// repoRoot is the first folder above the working directory (go test runs
// in tests/house) that holds both go.mod and wails.json.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		_, errMod := os.Stat(filepath.Join(d, "go.mod"))
		_, errWails := os.Stat(filepath.Join(d, "wails.json"))
		if errMod == nil && errWails == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod beside a wails.json above %s", wd)
		}
	}
}

// sources are the files the rules hold of, relative to root with slashes:
// every .go file but tests and *.gen.go, and the .ts and .svelte files
// under frontend/src but tests and *.gen.ts. Hidden folders,
// node_modules and the build output are not sources.
func sources(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || rel == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if isSource(rel) {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

func isSource(rel string) bool {
	name := rel[strings.LastIndex(rel, "/")+1:]
	switch {
	case strings.HasSuffix(name, ".go"):
		return !strings.HasSuffix(name, "_test.go") && !strings.HasSuffix(name, ".gen.go")
	case strings.HasPrefix(rel, "frontend/src/") && strings.HasSuffix(name, ".svelte"):
		return true
	case strings.HasPrefix(rel, "frontend/src/") && strings.HasSuffix(name, ".ts"):
		return !strings.HasSuffix(name, ".test.ts") && !strings.HasSuffix(name, ".gen.ts")
	}
	return false
}

// generated reports a file whose opening comment (before any code) says
// "Code generated", as Go's convention and contractgen write it.
func generated(b []byte) bool {
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "":
		case strings.HasPrefix(l, "//"), strings.HasPrefix(l, "/*"), strings.HasPrefix(l, "*"):
			if strings.Contains(l, "Code generated") {
				return true
			}
		default:
			return false
		}
	}
	return false
}

// countLines counts lines as wc -l does, plus a last line without its
// newline.
func countLines(b []byte) int {
	n := strings.Count(string(b), "\n")
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// longFuncs names the functions of a Go file, declared or literal, whose
// body has more than limit lines between its braces.
func longFuncs(name string, src []byte, limit int) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, decl := range f.Decls {
		outer := "" // the declared function a literal is in
		if fn, ok := decl.(*ast.FuncDecl); ok {
			outer = funcName(fn)
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			var body *ast.BlockStmt
			var what string
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, what = fn.Body, outer
			case *ast.FuncLit:
				body, what = fn.Body, "a function literal"
				if outer != "" {
					what += " in " + outer
				}
			}
			if body == nil {
				return true
			}
			lines := fset.Position(body.Rbrace).Line - fset.Position(body.Lbrace).Line - 1
			if lines > limit {
				out = append(out, fmt.Sprintf("%s:%d: %s: %d lines of body (at most %d)", name, fset.Position(body.Lbrace).Line, what, lines, limit))
			}
			return true
		})
	}
	return out, nil
}

// funcName is Name, or (Type).Name for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if g, ok := t.(*ast.IndexListExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}

// The checkers themselves, at their limits: a rule that cannot see a long
// function holds of nothing.

func TestLongFuncsCountsBodyLines(t *testing.T) {
	body := func(n int) string { return strings.Repeat("\t_ = 0\n", n) }
	src := "package p\n\n" +
		"func atLimit() {\n" + body(3) + "}\n\n" +
		"func over() {\n" + body(4) + "}\n\n" +
		"type T struct{}\n\nfunc (*T) method() {\n" + body(4) + "}\n\n" +
		"func outer() {\n\tf := func() {\n" + body(4) + "\t}\n\tf()\n}\n\n" +
		"var lit = func() {\n" + body(4) + "}\n"
	got, err := longFuncs("p.go", []byte(src), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p.go:9: over: 4 lines of body (at most 3)",
		"p.go:18: (T).method: 4 lines of body (at most 3)",
		"p.go:25: outer: 7 lines of body (at most 3)",
		"p.go:26: a function literal in outer: 4 lines of body (at most 3)",
		"p.go:35: a function literal: 4 lines of body (at most 3)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("longFuncs:\n got %q\nwant %q", got, want)
	}
}

func TestGeneratedIsTheOpeningComment(t *testing.T) {
	for src, want := range map[string]bool{
		"// Code generated by contractgen. DO NOT EDIT.\n\npackage p\n":  true,
		"// Package p.\n//\n// Code generated by hand? no.\npackage p\n": true,
		"\n/* Code generated by a tool. */\nexport type A = 1\n":         true,
		"package p\n\n// Code generated lines are written below.\n":      false,
		"package p\n\nconst s = \"// Code generated\"\n":                 false,
		"<script lang=\"ts\">\n// Code generated\n</script>\n":           false,
	} {
		if got := generated([]byte(src)); got != want {
			t.Errorf("generated(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestSourcesAreTheShippedFiles(t *testing.T) {
	for rel, want := range map[string]bool{
		"main.go":                          true,
		"backend/kiosk/service.go":         true,
		"scripts/contractgen/main.go":      true,
		"backend/kiosk/service_test.go":    false,
		"backend/x/types.gen.go":           false,
		"frontend/src/App.svelte":          true,
		"frontend/src/lib/api.ts":          true,
		"frontend/src/lib/api.test.ts":     false,
		"frontend/src/lib/contract.gen.ts": false,
		"e2e/kiosk.spec.ts":                false,
		"frontend/vite.config.ts":          false,
		"docs/architecture.md":             false,
	} {
		if got := isSource(rel); got != want {
			t.Errorf("isSource(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestCountLines(t *testing.T) {
	for src, want := range map[string]int{"": 0, "a\n": 1, "a\nb": 2, "a\n\n": 2} {
		if got := countLines([]byte(src)); got != want {
			t.Errorf("countLines(%q) = %d, want %d", src, got, want)
		}
	}
}
