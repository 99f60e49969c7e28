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
	eachImport(t, func(path, p string, _ bool) {
		inCLI := filepath.Base(filepath.Dir(path)) == "cli"
		switch {
		case p == self && !inCLI:
			t.Errorf("%s imports the command line package", path)
		case strings.HasPrefix(p, "github.com/wailsapp/"):
			t.Errorf("%s imports %s: only app.go may", path, p)
		}
	})
}

// The kiosk, staff mode, their UI contracts and the receipts speak of the
// terminal in backend/device's and backend/payment's words only: whichever
// channel carries a request (the Local API, the Cloud API) is chosen by
// the composition root. Their tests may drive a simulator with either API.
func TestOnlyThePaymentChannelsAndTheDeviceAdaptersSpeakAnAPI(t *testing.T) {
	neutral := map[string]bool{"kiosk": true, "staff": true, "staffapi": true, "httpui": true, "receipt": true}
	eachImport(t, func(path, p string, test bool) {
		if !test && neutral[filepath.Base(filepath.Dir(path))] &&
			(strings.HasSuffix(p, "/backend/localapi") || strings.HasSuffix(p, "/backend/cloudapi")) {
			t.Errorf("%s imports %s: use backend/device or backend/payment", path, p)
		}
	})
}

// eachImport calls f for every import of every Go file under backend/.
func eachImport(t *testing.T, f func(path, imported string, test bool)) {
	t.Helper()
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			f(path, p, strings.HasSuffix(path, "_test.go"))
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
