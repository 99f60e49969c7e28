package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

const module = "github.com/comptoir-pos/comptoir"

// graph is the project's packages and their imports of each other, by
// short name: "cli" for backend/cli, "main" for the binary's own package.
type graph map[string][]string

// loadGraph asks the go command which project packages each package of
// the binary and of backend/ imports (its code, not its tests; this
// platform's build tags).
func loadGraph(root string) (graph, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports", ".", "./backend/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list: %v: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	g := graph{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list's answer: %w", err)
		}
		from, ok := short(p.ImportPath)
		if !ok {
			continue
		}
		g[from] = nil
		for _, imp := range p.Imports {
			if to, ok := short(imp); ok {
				g[from] = append(g[from], to)
			}
		}
		slices.Sort(g[from])
	}
	if len(g) < 10 || len(g["cli"]) == 0 {
		return nil, fmt.Errorf("go list found only %d packages: run from the repository", len(g))
	}
	return g, nil
}

// short is a project package's name in the drawing; false for any other.
func short(path string) (string, bool) {
	switch {
	case path == module:
		return "main", true
	case strings.HasPrefix(path, module+"/backend/"):
		return strings.TrimPrefix(path, module+"/backend/"), true
	}
	return "", false
}

// reaches reports whether to can be reached from from by one arrow or more.
func (g graph) reaches(from, to string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(p string) bool {
		for _, q := range g[p] {
			if q == to {
				return true
			}
			if !seen[q] {
				seen[q] = true
				if walk(q) {
					return true
				}
			}
		}
		return false
	}
	return walk(from)
}

// through is a package other than to that from imports and that reaches
// to: the arrow from → to is then implied by the drawing. "" when none.
func (g graph) through(from, to string) string {
	for _, w := range g[from] {
		if w != to && g.reaches(w, to) {
			return w
		}
	}
	return ""
}

// depth is the length of the longest chain of arrows below p: the
// drawing lists the packages from the top (the binary) down.
func (g graph) depth(p string, memo map[string]int) int {
	if d, ok := memo[p]; ok {
		return d
	}
	memo[p] = 0 // a cycle (never in Go) stops here
	d := 0
	for _, q := range g[p] {
		d = max(d, g.depth(q, memo)+1)
	}
	memo[p] = d
	return d
}

// order is every package, the highest first, then by name.
func (g graph) order() []string {
	memo := map[string]int{}
	names := make([]string, 0, len(g))
	for p := range g {
		names = append(names, p)
	}
	slices.SortFunc(names, func(a, b string) int {
		if da, db := g.depth(a, memo), g.depth(b, memo); da != db {
			return db - da
		}
		return strings.Compare(a, b)
	})
	return names
}
