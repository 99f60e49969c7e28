package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
)

// --- 6. sizes ---

func sizeOf(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
}

// bundle is frontend/scripts/bundle.mjs's answer: the customer bundle (what
// the first screen loads) and the chunks loaded when first needed, each
// file gzipped at level 9. The same script holds the budget in the
// frontend's tests (src/bundle.test.ts).
type bundle struct {
	Files     []bundleFile `json:"files"`
	Bytes     int          `json:"bytes"`
	Gzip      int          `json:"gzip"`
	Budget    int          `json:"budget"`
	Later     []bundleFile `json:"later"`
	LaterGzip int          `json:"laterGzip"`
}

type bundleFile struct {
	File  string `json:"file"`
	Bytes int    `json:"bytes"`
	Gzip  int    `json:"gzip"`
}

func measureBundle(dist string) (bundle, error) {
	var b bundle
	out, err := exec.Command("node", filepath.Join(*root, "frontend", "scripts", "bundle.mjs"), dist).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return b, fmt.Errorf("%v: %s", err, bytes.TrimSpace(ee.Stderr))
		}
		return b, err
	}
	if err := json.Unmarshal(out, &b); err != nil {
		return b, fmt.Errorf("bundle.mjs: %v", err)
	}
	if len(b.Files) == 0 || b.Budget <= 0 {
		return b, fmt.Errorf("bundle.mjs measured nothing in %s", dist)
	}
	return b, nil
}

func (r *report) sizes() {
	r.p("## 6. Size\n\n")
	dist := filepath.Join(*root, "frontend", "dist")
	b, err := measureBundle(dist)
	if err != nil {
		log.Printf("frontend bundle: %v", err)
		r.p("The frontend bundle was not measured: %v.\n\n", err)
		r.row("Customer bundle, gzip (first screen)", "not measured", "< 60 KB", "—")
	} else {
		r.p("The frontend as `make bench` built it (frontend/dist, embedded in the binary), measured by frontend/scripts/bundle.mjs, each file gzipped at level 9 (what a server or an installer's compressor sends). The **customer bundle** is what the first screen loads: index.html, the scripts and styles it names and every script those import statically; a customer's order by card (welcome, menu, cart, paying, approved) runs on it alone. The other chunks are loaded by `import()` when first needed: staff mode at its first opening, the QR encoder at the first payment by phone.\n\n| File | loaded | bytes | gzip |\n|---|---|---|---|\n")
		for _, x := range b.Files {
			r.p("| %s | first screen | %d | %d |\n", x.File, x.Bytes, x.Gzip)
		}
		for _, x := range b.Later {
			r.p("| %s | when first needed | %d | %d |\n", x.File, x.Bytes, x.Gzip)
		}
		kb := float64(b.Gzip) / 1024
		goal := float64(b.Budget) / 1024
		r.p("| **customer bundle** | | %d | **%.1f KB** |\n| all files | | | %.1f KB |\n\n", b.Bytes, kb, float64(b.Gzip+b.LaterGzip)/1024)
		r.row("Customer bundle, gzip (first screen)", fmt.Sprintf("%.1f KB (all files %.1f KB)", kb, float64(b.Gzip+b.LaterGzip)/1024),
			fmt.Sprintf("< %.0f KB", goal), verdict(kb < goal, fmt.Sprintf("by %.1f KB", kb-goal)))
	}
	linux := filepath.Join(*root, "build", "bin", "comptoir")
	r.p("| Artifact | size |\n|---|---|\n| Linux binary `build/bin/comptoir` (`wails build -m -tags webkit2_41`, this run) | %s |\n", sizeOf(linux))
	r.p("| Linux binary, pure Go (`CGO_ENABLED=0 go build`: browser mode and the subcommands, no window) | %s |\n", sizeOf(filepath.Join(*results, "comptoir-purego")))
	inst, _ := filepath.Glob(filepath.Join(*root, "dist", "*-windows-amd64-setup.exe"))
	exe, _ := filepath.Glob(filepath.Join(*root, "dist", "*-windows-amd64.exe"))
	if len(inst) > 0 {
		r.p("| Windows installer `%s` (NSIS, with the WebView2 bootstrapper; from `make dist`, not rebuilt by `make bench`) | %s |\n", filepath.Base(inst[0]), sizeOf(inst[0]))
	} else {
		r.p("| Windows installer | not built: run `make dist` (scripts/dist), then `make bench` again |\n")
	}
	if len(exe) > 0 {
		r.p("| Windows executable `%s` | %s |\n", filepath.Base(exe[0]), sizeOf(exe[0]))
	}
	r.p("\n")
	instSize := "not built (make dist)"
	if len(inst) > 0 {
		instSize = sizeOf(inst[0])
	}
	r.row("Linux binary / Windows installer", sizeOf(linux)+" / "+instSize, "— (report)", "—")
}
