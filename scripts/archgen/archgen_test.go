package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var root = filepath.Join("..", "..")

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, docPath))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The page's package graph and its list of files naming a channel are
// what the code gives today.
func TestArchitectureDocIsCurrent(t *testing.T) {
	doc := readDoc(t)
	want, err := generate(root, doc)
	if err != nil {
		t.Fatal(err)
	}
	if want != doc {
		t.Errorf("%s is stale: run `go run ./scripts/archgen` from the repository's root and commit it", docPath)
	}
}

// prose is the page without its generated sections.
func prose(t *testing.T, doc string) string {
	t.Helper()
	for _, name := range []string{"graph", "channels"} {
		i, j := strings.Index(doc, begin(name)), strings.Index(doc, end(name))
		if i < 0 || j < i {
			t.Fatalf("section %s has no markers", name)
		}
		doc = doc[:i] + doc[j:]
	}
	return doc
}

// Every package has a row of its own in the page's table, which says its
// job and what it must not know: the drawing alone names it, not more.
func TestEveryPackageHasARowInTheTable(t *testing.T) {
	g, err := loadGraph(root)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(prose(t, readDoc(t)), "\n") {
		if strings.HasPrefix(l, "| `") {
			first, _, _ := strings.Cut(l[1:], "|")
			rows = append(rows, first)
		}
	}
	for p := range g {
		name := "`" + label(p) + "`"
		if p == "main" {
			name = "`main.go`"
		}
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, name) }) {
			t.Errorf("package %s has no row in the table of %s", label(p), docPath)
		}
	}
}

// stated is what the page says of the files naming a channel: **N Go
// files** and **M UI files**.
var stated = regexp.MustCompile(`\*\*(\d+) Go files?\*\*\s+and\s+\*\*(\d+) UI files?\*\*\s+name\s+a\s+channel`)

// Adding a channel is a file in payment, an adapter in device and its
// wiring in cli: no more files elsewhere decide by a channel's name than
// the page's worked example says.
func TestNoMoreFilesNameAChannelThanThePageSays(t *testing.T) {
	m := stated.FindStringSubmatch(prose(t, readDoc(t)))
	if m == nil {
		t.Fatalf("%s does not say how many files name a channel (%s)", docPath, stated)
	}
	wantGo, _ := strconv.Atoi(m[1])
	wantUI, _ := strconv.Atoi(m[2])
	goFiles, err := goFilesNamingAChannel(root)
	if err != nil {
		t.Fatal(err)
	}
	uiFiles, err := uiFilesNamingAChannel(root)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, files []string, want int) {
		switch {
		case len(files) > want:
			t.Errorf("%d %s files name a channel, the page says %d: ask payment.TraitsOf (or the attempt's traits) instead of the channel's name: %v",
				len(files), what, want, files)
		case len(files) < want:
			t.Errorf("%d %s files name a channel, fewer than the page's %d: lower its number: %v", len(files), what, want, files)
		}
	}
	check("Go", goFiles, wantGo)
	check("UI", uiFiles, wantUI)
}

// The Go detector sees a channel's constant, its value compared or in a
// case, and not the same word used otherwise.
func TestTheGoDetectorSeesAChannelDecision(t *testing.T) {
	idents, values := []string{"ChannelLink"}, []string{"link"}
	for src, want := range map[string]bool{
		`package k; func f(c string) bool { return c == string(journal.ChannelLink) }`: true,
		`package k; func f(c string) bool { return c != "link" }`:                      true,
		`package k; func f(c string) { switch c { case "link": } }`:                    true,
		`package journal; var x = ChannelLink`:                                         true,
		`package k; const kind = "link"`:                                               false,
		`package k; var x = other.ChannelLink`:                                         false,
		`package k; func f(c string) bool { return c == "linked" }`:                    false,
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := namesAChannel(f, idents, values); got != want {
			t.Errorf("%s: %v, want %v", src, got, want)
		}
	}
}

// The UI detector sees a comparison with a channel's name in a Svelte
// file, and not the name in a test id or a class.
func TestTheUIDetectorSeesAComparison(t *testing.T) {
	dir := t.TempDir()
	mk := func(path, text string) {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	state, err := os.ReadFile(filepath.Join(root, "backend", "journal", "state.go"))
	if err != nil {
		t.Fatal(err)
	}
	mk("backend/journal/state.go", string(state))
	mk("frontend/src/a.svelte", `{#if a.channel === "cloud"}x{/if}`)
	mk("frontend/src/b.svelte", `<span data-testid="attempt-{a.channel}" class="cloud">{s.label("x", a.channel)}</span>`)
	mk("frontend/src/c.ts", "switch (c) { case 'webservices': }")
	mk("frontend/src/d.test.ts", `expect(a.channel === "link")`)
	mk("frontend/src/lib/i18n/en.ts", `x === "link"`)
	got, err := uiFilesNamingAChannel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"frontend/src/a.svelte", "frontend/src/c.ts"}; !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}

// An arrow another path implies is left out of the drawing and listed
// with the package it goes through; the others are drawn.
func TestTheDrawingLeavesOutOnlyImpliedArrows(t *testing.T) {
	g := graph{"top": {"mid", "low"}, "mid": {"low"}, "low": nil, "side": {"low"}}
	out := renderGraph(g)
	for _, want := range []string{"top --> mid\n", "mid --> low\n", "side --> low\n", "| `top` | `low` (`mid`) |"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "top --> low") {
		t.Errorf("the implied arrow is drawn:\n%s", out)
	}
	if order := g.order(); order[0] != "top" || order[len(order)-1] != "low" {
		t.Errorf("order %v: the top first, the bottom last", order)
	}
}

// A page whose markers went missing is an error, not a page rewritten.
func TestMissingMarkersAreAnError(t *testing.T) {
	if _, err := replace("no markers here", "graph", "x"); err == nil {
		t.Error("replaced without markers")
	}
	doc := "a\n" + begin("graph") + "old\n" + end("graph") + "b\n"
	got, err := replace(doc, "graph", "new\n")
	if err != nil || got != "a\n"+begin("graph")+"new\n"+end("graph")+"b\n" {
		t.Errorf("replace: %q, %v", got, err)
	}
}
