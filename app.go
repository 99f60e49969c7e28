package main

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log"
	"os"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/options/windows"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

//go:embed all:frontend/dist
var assets embed.FS

// readyFallback bounds how long the window stays hidden when the page loaded
// but never reported ready (a script error, say): a visible broken screen is
// better than an invisible running process.
const readyFallback = 5 * time.Second

// App is the Wails binding. Its exported methods are callable from the
// frontend as window.go.main.App.<Method>; keep them thin.
type App struct {
	ctx      context.Context
	showOnce sync.Once
	flags    commonFlags

	mu       sync.Mutex
	pay      *payments // nil until started, or when it could not start
	terminal string    // the terminal's base URL, "" when none is configured
	problem  string    // why payments cannot be taken, for the UI; "" when fine
	ready    bool      // recovery finished: new payments may start
}

func newApp(flags commonFlags) *App { return &App{flags: flags} }

// startup runs once the window exists. Services start here, never before
// wails.Run: `wails build` runs main to generate bindings.
func (a *App) startup(ctx context.Context) {
	a.ctx = ctx
	// Finding the terminal may take seconds: never hold the window for it.
	if !a.flags.demo && a.flags.terminal == "" {
		a.setProblem("Looking for the payment terminal…")
	}
	go a.startPayments(ctx)
}

func (a *App) startPayments(ctx context.Context) {
	p, err := openPayments(ctx, a.flags, payment.DefaultLimits, os.Stderr)
	if err != nil {
		a.setProblem(startupProblem(err))
		log.Printf("comptoir: payments unavailable: %v", err)
		return
	}
	a.mu.Lock()
	a.pay, a.terminal, a.problem = p, p.terminalURL, ""
	a.mu.Unlock()
	log.Printf("comptoir: terminal %s (demo %v)", p.terminalURL, a.flags.demo)
	// Recovery before any new order; the terminal may take a while to answer.
	if _, err := p.o.Recover(ctx); err != nil {
		a.setProblem("Unfinished payments could not be checked with the terminal yet: " + err.Error())
		return
	}
	a.mu.Lock()
	a.ready = true
	a.mu.Unlock()
}

func (a *App) setProblem(p string) {
	a.mu.Lock()
	a.problem = p
	a.mu.Unlock()
}

// startupProblem says in a sentence why payments cannot start.
func startupProblem(err error) string {
	switch {
	case errors.Is(err, errNoTerminal):
		return "No payment terminal is configured."
	case journal.ErrorCode(err) == journal.ELOCKED:
		return "Comptoir is already running on this computer with the same data."
	case journal.ErrorCode(err) == journal.EFULL:
		return "The disk is full: Comptoir cannot record payments."
	case journal.ErrorCode(err) == journal.EREADONLY:
		return "Comptoir's data folder cannot be written."
	}
	return "Payments are unavailable: " + err.Error()
}

// domReady fires when the page has loaded, possibly before the first screen
// has painted, so it only arms the fallback; Ready shows the window.
func (a *App) domReady(context.Context) {
	time.AfterFunc(readyFallback, func() {
		a.show("fallback: frontend did not report ready")
	})
}

func (a *App) shutdown(context.Context) {
	a.mu.Lock()
	p := a.pay
	a.mu.Unlock()
	if p != nil {
		p.close()
	}
}

// Ready is called by the frontend once its first screen is in the DOM. The
// window starts hidden so the user never sees an empty white webview.
func (a *App) Ready() {
	a.show("frontend ready")
}

// Version is the build's version string.
func (a *App) Version() string {
	return version
}

// AppInfo is what the UI shows about this installation.
type AppInfo struct {
	Version  string `json:"version"`
	Demo     bool   `json:"demo"`     // the simulated terminal: no real payments
	Terminal string `json:"terminal"` // base URL, "" when none is configured
	Ready    bool   `json:"ready"`    // unfinished payments recovered: orders may start
	Problem  string `json:"problem"`  // why payments cannot be taken, "" when fine
}

// Info describes this installation for the UI.
func (a *App) Info() AppInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return AppInfo{Version: version, Demo: a.flags.demo, Terminal: a.terminal, Ready: a.ready, Problem: a.problem}
}

func (a *App) show(reason string) {
	a.showOnce.Do(func() {
		runtime.WindowShow(a.ctx)
		// The desktop smoke test waits for this line.
		log.Printf("comptoir: window shown (%s)", reason)
	})
}

// focus brings the running window forward when a second copy is launched:
// a kiosk must never end up with two windows driving one terminal.
func (a *App) focus(options.SecondInstanceData) {
	if a.ctx == nil {
		return
	}
	runtime.WindowUnminimise(a.ctx)
	runtime.WindowShow(a.ctx)
}

// runDesktop opens the kiosk window and blocks until it is closed.
func runDesktop(flags commonFlags) error {
	// No check for index.html here: `wails build` runs this function to
	// generate bindings before the frontend is built.
	dist, err := fs.Sub(assets, "frontend/dist")
	if err != nil {
		return err
	}

	app := newApp(flags)
	return wails.Run(&options.App{
		Title:            "Comptoir",
		Width:            1280,
		Height:           800,
		MinWidth:         800,
		MinHeight:        600,
		StartHidden:      true,
		BackgroundColour: &options.RGBA{R: 248, G: 247, B: 244, A: 255},
		AssetServer:      &assetserver.Options{Assets: dist},
		OnStartup:        app.startup,
		OnDomReady:       app.domReady,
		OnShutdown:       app.shutdown,
		Bind:             []interface{}{app},
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               "com.comptoir-pos.comptoir",
			OnSecondInstanceLaunch: app.focus,
		},
		Linux: &linux.Options{
			ProgramName:      "comptoir",
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
		// WebviewUserDataPath stays unset: WebView2 then keeps its profile
		// per user under %APPDATA%, not beside the executable in Program Files.
		Windows: &windows.Options{
			IsZoomControlEnabled: false,
		},
	})
}
