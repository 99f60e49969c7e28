// Command contractgen writes the TypeScript types of the UI contract from
// the Go types the backend sends and receives, so that the frontend's types
// cannot drift from what encoding/json produces:
//
//	frontend/src/lib/contract.gen.ts       the kiosk (backend/kiosk/contract.go)
//	frontend/src/lib/staffContract.gen.ts  staff mode (backend/staff, backend/staffapi)
//
// Run it from anywhere in the repository (make contract, or go generate
// ./backend/kiosk/); -check writes nothing and fails when a file is not what
// the Go types give, which is how CI keeps them current (scripts/test).
//
// The conversion is github.com/coder/guts, which reads the packages with
// go/types: struct tags as encoding/json reads them (names, omitempty and
// omitzero as optional, embedded structs as extended interfaces), a named
// string type with constants as a union of its values, named types of other
// packages followed. This program only says which types are the contract:
// the roots below and every type they reach. An exported type a root does
// not reach (a service's Config, say) is left out, so the contract is what
// the UI can receive, not everything a package exports.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/types"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/coder/guts"
	"github.com/coder/guts/bindings"
	"github.com/coder/guts/config"
)

const module = "github.com/comptoir-pos/comptoir/"

// contract is one generated file.
type contract struct {
	out string // relative to the repository
	// packages hold the roots and the types they reach, each with the
	// prefix that keeps its names apart in the file (device's
	// HistoryEntry is TerminalHistoryEntry beside staff's HistoryEntry).
	packages map[string]string
	// roots are the types the UI receives or sends, as package.Type.
	roots []string
	// consts are the untyped constants the UI uses, by name (a typed
	// constant is a value of its type's union and comes with it).
	consts []string
	// comment heads the file.
	comment string
	// intents, when set, is the package whose table `intents` lists the
	// UI's calls (a map from the name to a wrapper of the method
	// expression (*Service).Name): the file gets their signatures, as the
	// interface Intents, from the methods the table names.
	intents string
}

var contracts = []contract{
	{
		out:      "frontend/src/lib/contract.gen.ts",
		packages: map[string]string{"backend/kiosk": "", "backend/orders": ""},
		roots: []string{
			"kiosk.InfoView", "kiosk.CatalogView", "kiosk.CheckoutView", "kiosk.TerminalView",
			"kiosk.PaymentMethod", "kiosk.ReceiptChoice",
		},
		consts:  []string{"EventCheckout", "EventTerminal", "EventStarted"},
		comment: "The kiosk's UI contract: backend/kiosk/contract.go, and its intents: backend/kiosk/intents.go.",
		intents: "backend/kiosk",
	},
	{
		out: "frontend/src/lib/staffContract.gen.ts",
		packages: map[string]string{
			"backend/staff": "", "backend/staffapi": "", "backend/settings": "",
			"backend/journal": "Journal", "backend/payment": "Payment", "backend/device": "Terminal",
			"backend/reconcile": "Reconcile", "backend/fiscal": "Fiscal",
		},
		roots: []string{
			"staffapi.Result", "staffapi.ErrorView", "staffapi.Gate", "staffapi.About", "staffapi.TerminalPanel", "staffapi.CSVExport", "staffapi.Certificate", "staffapi.CloudChoice",
			"staff.Session", "staff.Filter", "staff.AttemptPage", "staff.HistoryFilter", "staff.HistoryPage", "staff.Comparison",
			"staff.ReversalResult", "staff.Evidence", "staff.Setting", "staff.Report", "staff.AuditEntry",
			"payment.View", "settings.MerchantSetting", "staff.Decision", "device.Medium", "staff.LinkRequest",
			"staff.Reconciliation", "fiscal.Closing", "staffapi.Gesture", "staff.ClosingSummary",
		},
		consts: []string{
			// staff's error codes, then staffapi's
			"ELOCKEDOUT", "EWRONGPIN", "ENOPIN", "EPINSET", "EPINDAMAGED", "ESESSION", "EINVALID", "ENOTFOUND", "ETERMINAL", "EUNKNOWN", "EINTERNAL",
			"EUNAVAILABLE", "EBADCALL",
			// the kinds of a difference, of a report's total
			"DiffTerminalOnly", "DiffJournalOnly", "DiffAmount", "DiffState", "DiffReversalUnknown",
			"KindDebit", "KindRefund", "KindReversal",
			// the fixes of a reconciliation's difference
			"FixReverse", "FixRefundByAPI", "FixOpen",
			// the keys of the settings
			"SettingMode", "SettingLanguages", "SettingDefaultLanguage", "SettingCurrency", "SettingIdleSeconds",
			"SettingVoucherCap", "SettingMerchant", "SettingReceiptFormat", "SettingReceiptColumns", "SettingDining",
		},
		comment: "Staff mode's contract: backend/staff, backend/staffapi and the types they reach.",
	},
}

func main() {
	check := flag.Bool("check", false, "write nothing; fail when a generated file is not current")
	flag.Parse()
	root, err := repoRoot()
	if err != nil {
		fail(err)
	}
	// The packages are loaded with the repository's own go.mod, not this
	// program's.
	if err := os.Chdir(root); err != nil {
		fail(err)
	}
	stale := 0
	for _, c := range contracts {
		text, err := c.generateTS()
		if err != nil {
			fail(fmt.Errorf("%s: %w", c.out, err))
		}
		have, _ := os.ReadFile(c.out)
		switch {
		case bytes.Equal(have, []byte(text)):
		case *check:
			fmt.Fprintf(os.Stderr, "contractgen: %s is not what the Go types give: run `make contract` and commit it\n", c.out)
			stale++
		default:
			if err := os.WriteFile(c.out, []byte(text), 0o644); err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "contractgen: wrote %s\n", c.out)
		}
	}
	if stale > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "contractgen:", err)
	os.Exit(1)
}

// repoRoot is the folder of the repository's go.mod (this program has its
// own go.mod, below it).
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	dir := filepath.Dir(strings.TrimSpace(string(out)))
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "wails.json")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no wails.json above %s: run contractgen inside the repository", dir)
		}
	}
}

func (c contract) generateTS() (string, error) {
	g, err := c.parser()
	if err != nil {
		return "", err
	}
	var calls []intentCall
	if c.intents != "" {
		if calls, err = readIntents(g.Pkgs[module+c.intents]); err != nil {
			return "", err
		}
	}
	var more []types.Type
	for _, ic := range calls {
		for i := range ic.sig.Params().Len() {
			more = append(more, ic.sig.Params().At(i).Type())
		}
		more = append(more, ic.sig.Results().At(0).Type())
	}
	keep, err := c.reach(g, more...)
	if err != nil {
		return "", err
	}
	if err := c.excludeUnreached(g, keep); err != nil {
		return "", err
	}

	ts, err := g.ToTypescript()
	if err != nil {
		return "", err
	}
	ts.ApplyMutations(config.EnumAsTypes, config.SimplifyOptional, config.ExportTypes)

	wanted := map[string]bool{}
	for _, tn := range keep {
		wanted[g.Identifier(tn).Ref()] = true
	}
	for _, name := range c.consts {
		wanted[name] = true
	}
	out, err := serialize(ts, wanted)
	if err != nil {
		return "", err
	}
	if len(calls) > 0 {
		ts, err := intentsTS(g, c.intents, calls)
		if err != nil {
			return "", err
		}
		out = strings.TrimRight(out, "\n") + "\n" + ts
	}
	head := "// Code generated by scripts/contractgen from the Go types. DO NOT EDIT.\n" +
		"// " + c.comment + "\n" +
		"// Regenerate with `make contract` (or `go generate ./backend/kiosk/`).\n\n"
	return head + strings.TrimPrefix(out, "// Code generated by 'guts'. DO NOT EDIT.\n\n"), nil
}

// parser loads the contract's packages, which must build, with the type
// mappings of the standard library and json.RawMessage.
func (c contract) parser() (*guts.GoParser, error) {
	g, err := guts.NewGolangParser()
	if err != nil {
		return nil, err
	}
	g.PreserveComments()
	for _, p := range slices.Sorted(maps.Keys(c.packages)) {
		if err := g.IncludeGenerateWithPrefix(module+p, c.packages[p]); err != nil {
			return nil, err
		}
	}
	for path, pkg := range g.Pkgs {
		if len(pkg.Errors) > 0 {
			return nil, fmt.Errorf("%s does not build: %v", path, pkg.Errors[0])
		}
	}
	g.IncludeCustomDeclaration(config.StandardMappings())
	g.IncludeCustomDeclaration(map[string]guts.TypeOverride{
		// Any JSON value, as sent.
		"encoding/json.RawMessage": config.OverrideLiteral(bindings.KeywordUnknown),
	})
	return g, nil
}

// excludeUnreached leaves out the exported types that no root reaches: they
// are not the contract (a service, its Config, its interfaces). Left in,
// they would also clash: every package has its Config.
func (c contract) excludeUnreached(g *guts.GoParser, keep map[string]*types.TypeName) error {
	for p := range c.packages {
		scope := g.Pkgs[module+p].Types.Scope()
		for _, name := range scope.Names() {
			if tn, ok := scope.Lookup(name).(*types.TypeName); ok && tn.Exported() && keep[tn.Type().String()] == nil {
				if err := g.ExcludeCustom(tn.Type().String()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// serialize writes the wanted declarations in name order, and fails naming
// those the Go packages no longer have.
func serialize(ts *guts.Typescript, wanted map[string]bool) (string, error) {
	var missing []string
	out, err := ts.SerializeInOrder(func(nodes map[string]bindings.Node) []bindings.Node {
		names := make([]string, 0, len(wanted))
		for name := range wanted {
			if _, ok := nodes[name]; ok {
				names = append(names, name)
			} else {
				missing = append(missing, name)
			}
		}
		slices.Sort(names)
		list := make([]bindings.Node, 0, len(names))
		for _, name := range names {
			list = append(list, nodes[name])
		}
		return list
	})
	if err != nil {
		return "", err
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("not found in the Go packages (renamed? update scripts/contractgen): %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// reach returns the named types of this repository's packages that the
// roots reach through fields, elements and embedded structs, by their full
// name: each package is loaded once for itself and once more as an import
// of another, so the same type has two *types.TypeName.
func (c contract) reach(g *guts.GoParser, more ...types.Type) (map[string]*types.TypeName, error) {
	byName := map[string]*types.TypeName{}
	for path, pkg := range g.Pkgs {
		if !strings.HasPrefix(path, module) {
			continue
		}
		scope := pkg.Types.Scope()
		for _, name := range scope.Names() {
			if tn, ok := scope.Lookup(name).(*types.TypeName); ok {
				byName[pkg.Types.Name()+"."+name] = tn
			}
		}
	}
	keep := map[string]*types.TypeName{}
	var walk func(t types.Type)
	walk = func(t types.Type) {
		switch t := t.(type) {
		case *types.Named:
			tn := t.Obj()
			if tn.Pkg() == nil || !strings.HasPrefix(tn.Pkg().Path(), module) || keep[t.String()] != nil {
				return
			}
			keep[t.String()] = tn
			walk(t.Underlying())
		case *types.Alias:
			walk(types.Unalias(t))
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Array:
			walk(t.Elem())
		case *types.Map:
			walk(t.Key())
			walk(t.Elem())
		case *types.Struct:
			for i := range t.NumFields() {
				f := t.Field(i)
				// As encoding/json: unexported fields and json:"-" are not
				// sent; an embedded struct's fields are.
				if reflect.StructTag(t.Tag(i)).Get("json") == "-" || !f.Exported() && !f.Embedded() {
					continue
				}
				walk(f.Type())
			}
		}
	}
	for _, r := range c.roots {
		tn, ok := byName[r]
		if !ok {
			return nil, fmt.Errorf("root %s not found in the Go packages (renamed? update scripts/contractgen)", r)
		}
		walk(tn.Type())
	}
	for _, t := range more {
		walk(t)
	}
	return keep, nil
}
