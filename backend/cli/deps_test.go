package cli

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// arrows is every package of the module and the packages of the module its
// code (not its tests) may import: the drawing of docs/architecture.md, in
// words a test can hold. A package that is not listed fails the test, so
// that a new package says where it stands. "*" is the composition root,
// which may reach every package below it.
var arrows = map[string][]string{
	// the domain's error; the payment terminal's and the provider's protocols, the journal, the printer's bytes
	"backend/fault":    {},
	"backend/localapi": {},
	"backend/cloudapi": {},
	"backend/journal":  {"fault"},
	"backend/escpos":   {},
	// a terminal's services, receipts, the shop's settings, the money core
	"backend/device":    {"localapi", "cloudapi"},
	"backend/receipt":   {"device", "escpos"},
	"backend/settings":  {"device", "journal", "receipt"},
	"backend/payment":   {"fault", "journal", "device", "localapi", "cloudapi"},
	"backend/discovery": {"localapi"},
	// an order as recorded, and what is built on orders and payments
	"backend/orders":    {"journal", "payment", "receipt", "settings"},
	"backend/reconcile": {"cloudapi", "device", "journal", "payment"},
	"backend/fiscal":    {"fault", "journal", "orders", "payment", "receipt", "settings"},
	"backend/staff":     {"device", "fault", "fiscal", "journal", "orders", "payment", "receipt", "reconcile", "settings"},
	"backend/kiosk":     {"device", "discovery", "fault", "journal", "orders", "payment", "receipt", "settings"},
	// the transports
	"backend/staffapi": {"device", "fault", "kiosk", "staff"},
	"backend/httpui":   {"fault", "internal/webguard", "kiosk", "staffapi"},
	// the restaurant's stream and head office
	"backend/site":    {"journal"},
	"backend/kitchen": {"internal/webguard", "journal", "site"},
	"backend/hub":     {"internal/webguard", "journal", "site"},
	// what a server a browser reaches checks of every request
	"backend/internal/webguard": {},
	// the simulators
	"backend/terminalsim": {"escpos", "localapi"},
	"backend/cloudsim":    {"localapi", "terminalsim"},
	// the tests' environment (only tests import it: TestOnlyTestsImportTheTestEnvironment)
	"backend/internal/testenv":         {"cloudapi", "cloudsim", "journal", "localapi", "terminalsim"},
	"backend/internal/testenv/paytest": {"cloudapi", "cloudsim", "internal/testenv", "journal", "payment"},
	// the composition root, the binary, and the tools around it
	"backend/cli":             {"*"},
	".":                       {"cli", "fault", "kiosk", "staff", "staffapi"},
	"scripts/archgen":         {},
	"scripts/bench/report":    {},
	"scripts/bench/simserver": {"terminalsim"},
	"scripts/bench/wire":      {"terminalsim"},
	"tests/chain":             {},
	"tests/crash":             {},
	"tests/house":             {},
	"tests/netns":             {},
	"tests/release":           {},
}

// Every package imports only what its line in arrows allows, so the
// arrows point one way: the fiscal journal and staff mode sit beside the
// checkout, not above it; settings and orders sit below all three.
func TestEveryPackageImportsOnlyWhatItsArrowsAllow(t *testing.T) {
	seen := moduleEachImport(t, func(dir, path, p string, test bool) {
		allowed, ok := arrows[dir]
		if !ok || test || !strings.HasPrefix(p, module+"/") {
			return
		}
		to := strings.TrimPrefix(strings.TrimPrefix(p, module+"/"), "backend/")
		if !slices.Contains(allowed, to) && !slices.Contains(allowed, "*") {
			t.Errorf("%s imports %s: not an arrow of %s (backend/cli/deps_test.go, docs/architecture.md)", path, to, dir)
		}
	})
	for dir := range seen {
		if _, ok := arrows[dir]; !ok {
			t.Errorf("package %s is not in the arrows: say what it may import", dir)
		}
	}
	for dir := range arrows {
		if !seen[dir] {
			t.Errorf("arrows lists %s, which has no Go file", dir)
		}
	}
}

// The kiosk is the customer's checkout, at the top: only the command line
// that wires it, the transports that carry its intents (httpui, staffapi)
// and the window (app.go) import it, tests included. Staff mode and the
// fiscal journal read settings and orders, not the kiosk.
func TestOnlyTheWiringAndTheTransportsImportTheKiosk(t *testing.T) {
	const kiosk = module + "/backend/kiosk"
	may := []string{"backend/kiosk", "backend/cli", "backend/httpui", "backend/staffapi", "."}
	moduleEachImport(t, func(dir, path, p string, _ bool) {
		if p == kiosk && !slices.Contains(may, dir) {
			t.Errorf("%s imports the kiosk: only %v may", path, may)
		}
	})
}

// The tests' environment (simulators on loopback, test clocks, limits at
// test speed) is for tests: no shipped file imports it, so none of it
// reaches the binary.
func TestOnlyTestsImportTheTestEnvironment(t *testing.T) {
	const env = module + "/backend/internal/testenv"
	imported := 0
	moduleEachImport(t, func(dir, path, p string, test bool) {
		if p != env && !strings.HasPrefix(p, env+"/") {
			return
		}
		imported++
		if !test && dir != "backend/internal/testenv" && !strings.HasPrefix(dir, "backend/internal/testenv/") {
			t.Errorf("%s imports %s: only tests may", path, p)
		}
	})
	if imported == 0 {
		t.Fatal("no file imports the tests' environment: the walk or the path is wrong")
	}
}

const module = "github.com/comptoir-pos/comptoir"

// moduleEachImport calls f for every import of every Go file of the module
// (build tags ignored: every platform's files), with its package's folder
// relative to the repository's root, and returns the folders of Go files.
// Folders of another module (scripts/contractgen), the frontend's and test
// data are not the module's.
func moduleEachImport(t *testing.T, f func(dir, path, imported string, test bool)) map[string]bool {
	t.Helper()
	root := filepath.Join("..", "..")
	checked := 0
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "frontend" || name == "e2e" || name == "build") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir = filepath.ToSlash(dir)
		dirs[dir] = true
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			f(dir, path, p, strings.HasSuffix(path, "_test.go"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: the walk missed the module", checked)
	}
	return dirs
}
