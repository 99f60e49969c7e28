package main

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"log"
	"sync"
	"time"

	"github.com/comptoir-pos/comptoir/backend/localapi"
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
	stopSim  func()
	terminal string // the terminal's base URL, "" when none is configured
}

func newApp(flags commonFlags) *App { return &App{flags: flags, stopSim: func() {}} }

// startup runs once the window exists. Services start here, never before
// wails.Run: `wails build` runs main to generate bindings.
func (a *App) startup(ctx context.Context) {
	a.ctx = ctx
	addr, stop, err := terminalAddress(ctx, a.flags)
	switch {
	case err == nil:
		a.stopSim = stop
		if u, perr := localapi.ParseBaseURL(addr); perr == nil {
			a.terminal = u.String()
		}
		log.Printf("comptoir: terminal %s (demo %v)", a.terminal, a.flags.demo)
	case errors.Is(err, errNoTerminal):
		log.Printf("comptoir: no terminal configured")
	default:
		log.Printf("comptoir: terminal: %v", err)
	}
}

// domReady fires when the page has loaded, possibly before the first screen
// has painted, so it only arms the fallback; Ready shows the window.
func (a *App) domReady(context.Context) {
	time.AfterFunc(readyFallback, func() {
		a.show("fallback: frontend did not report ready")
	})
}

func (a *App) shutdown(context.Context) { a.stopSim() }

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
}

// Info describes this installation for the UI.
func (a *App) Info() AppInfo {
	return AppInfo{Version: version, Demo: a.flags.demo, Terminal: a.terminal}
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
