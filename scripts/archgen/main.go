// Command archgen writes the parts of docs/architecture.md that the code
// can say itself, between their markers:
//
//	archgen:graph     the package graph (go list's imports of the binary and
//	                  backend/), drawn without the arrows another path
//	                  implies, and those arrows listed
//	archgen:channels  the files outside payment, device and cli that name a
//	                  payment channel
//
// Run it from the repository's root (go run ./scripts/archgen). Its test
// fails when the page is not what the code gives, when a package has no
// row in the page's table, and when more files name a channel than the
// page says.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// docPath is the page, from the repository's root.
var docPath = filepath.Join("docs", "architecture.md")

func main() {
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	have, err := os.ReadFile(filepath.Join(root, docPath))
	if err != nil {
		fail(err)
	}
	doc, err := generate(root, string(have))
	if err != nil {
		fail(err)
	}
	if doc == string(have) {
		return
	}
	if err := os.WriteFile(filepath.Join(root, docPath), []byte(doc), 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "archgen: wrote %s\n", docPath)
}

// generate is the page doc with its generated sections made current.
func generate(root, doc string) (string, error) {
	g, err := loadGraph(root)
	if err != nil {
		return "", err
	}
	goFiles, err := goFilesNamingAChannel(root)
	if err != nil {
		return "", err
	}
	uiFiles, err := uiFilesNamingAChannel(root)
	if err != nil {
		return "", err
	}
	doc, err = replace(doc, "graph", renderGraph(g))
	if err != nil {
		return "", err
	}
	return replace(doc, "channels", renderChannels(goFiles, uiFiles))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "archgen:", err)
	os.Exit(1)
}
