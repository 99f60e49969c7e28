// Command comptoir is the Comptoir kiosk and counter point-of-sale front-end.
//
// Without a subcommand it opens the desktop window (app.go); with one it
// runs it and exits. The command line and the wiring of every process are
// in backend/cli. main also runs during `wails build` (to generate
// bindings), so nothing opens files or the network before wails.Run.
package main

import (
	"embed"
	"io/fs"
	"os"

	"github.com/comptoir-pos/comptoir/backend/cli"
)

//go:embed all:frontend/dist
var assets embed.FS

func main() {
	ui, err := fs.Sub(assets, "frontend/dist")
	if err != nil {
		ui = nil // cannot happen with the directive above; serve says so
	}
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr, cli.Program{UI: ui, Desktop: runDesktop}))
}
