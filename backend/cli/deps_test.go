package cli

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The arrows point one way: the command line and composition root put the
// packages together, so no package under backend/ imports it; and nothing
// under backend/ imports the window's toolkit (its runtime calls
// log.Fatalf outside a window): only app.go does.
func TestNothingUnderBackendImportsTheCommandLineOrWails(t *testing.T) {
	const self = "github.com/comptoir-pos/comptoir/backend/cli"
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		inCLI := filepath.Base(filepath.Dir(path)) == "cli"
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case p == self && !inCLI:
				t.Errorf("%s imports the command line package", path)
			case strings.HasPrefix(p, "github.com/wailsapp/"):
				t.Errorf("%s imports %s: only app.go may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked: the walk missed backend/", checked)
	}
}
