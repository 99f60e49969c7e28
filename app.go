package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/comptoir-pos/comptoir/backend/cli"
	"github.com/comptoir-pos/comptoir/backend/fault"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/options/windows"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// readyFallback bounds how long the window stays hidden when the page loaded
// but never reported ready (a script error, say): a visible broken screen is
// better than an invisible running process.
const readyFallback = 5 * time.Second

// App is the Wails binding. Its exported methods are callable from the
// frontend as window.go.main.App.<Method>: Call (the kiosk's intents, by
// name), Staff (the staff calls, by name), and the window's own Ready and
// Version.
type App struct {
	ctx      context.Context
	showOnce sync.Once
	d        *cli.Desktop

	quitting atomic.Bool // staff chose Quit: the window may close

	mu      sync.Mutex
	stack   *cli.Stack  // nil until started, or when it could not start
	problem string      // why the kiosk cannot start, for the UI
	closers []io.Closer // the log file
	logger  *slog.Logger

	closing    bool           // shutdown began: no restart starts a stack
	restarting sync.WaitGroup // the first start or a restart under way
}

func newApp(d *cli.Desktop) *App { return &App{d: d} }

// startup runs once the window exists. Services start here, never before
// wails.Run: `wails build` runs main to generate bindings.
func (a *App) startup(ctx context.Context) {
	a.ctx = ctx
	// Finding the terminal may take seconds: never hold the window for it.
	if !a.d.Demo() && a.d.Terminal() == "" {
		a.setProblem("Looking for the payment terminal…")
	}
	a.restarting.Add(1)
	go func() {
		defer a.restarting.Done()
		a.startKiosk(ctx)
	}()
}

// wailsEmitter forwards the kiosk's snapshots to the page.
type wailsEmitter struct{ ctx context.Context }

func (w wailsEmitter) Emit(event string, data any) { runtime.EventsEmit(w.ctx, event, data) }

func (a *App) startKiosk(ctx context.Context) {
	logger := a.kioskLogger()
	stack, err := a.d.StartKiosk(ctx, wailsEmitter{ctx}, logger)
	if err != nil {
		a.setProblem(startupProblem(err))
		log.Printf("comptoir: the kiosk cannot start: %v", err)
		// Without a terminal, staff mode still runs, to choose one.
		if errors.Is(err, cli.ErrNoTerminal) || errors.Is(err, cli.ErrSeveralTerminals) {
			if so, serr := a.d.StartStaffOnly(ctx, logger); serr == nil {
				so.Staff = so.Staff.WithDesktop(a.quit, a.restart)
				a.mu.Lock()
				a.stack = so
				a.mu.Unlock()
			} else {
				log.Printf("comptoir: staff mode cannot start either: %v", serr)
			}
		}
		runtime.EventsEmit(ctx, kiosk.EventTerminal, a.terminal())
		return
	}
	stack.Staff = stack.Staff.WithDesktop(a.quit, a.restart)
	a.mu.Lock()
	a.stack, a.problem = stack, ""
	a.mu.Unlock()
	log.Printf("comptoir: terminal %s (demo %v)", stack.URL, a.d.Demo())
	// A self-service kiosk fills its screen; a counter PC stays a window.
	if stack.Svc.Settings().Mode == "kiosk" && !a.d.Windowed() {
		runtime.WindowFullscreen(ctx)
	}
	// The page loaded before the kiosk ran: it reads the menu again.
	runtime.EventsEmit(ctx, kiosk.EventStarted, stack.Svc.Info())
	runtime.EventsEmit(ctx, kiosk.EventTerminal, stack.Svc.Terminal())
	runtime.EventsEmit(ctx, kiosk.EventCheckout, stack.Svc.Checkout())
}

// kioskLogger is the JSON log in the data directory, opened once.
func (a *App) kioskLogger() *slog.Logger {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.logger == nil {
		var closer io.Closer
		a.logger, closer = a.d.Logger(os.Stderr)
		a.closers = append(a.closers, closer)
	}
	return a.logger
}

// restart is staff's Restart: the kiosk stops and starts again, so that a
// terminal chosen in staff mode is used. staffapi refuses it while a
// payment is out; recovery runs at the start as after any stop. The
// customer screen is released first, so an order left declined or partly
// paid is recorded as Release does.
func (a *App) restart() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return &staff.Error{Code: staff.EINVALID, Message: "Comptoir is closing."}
	}
	stack := a.stack
	a.stack, a.problem = nil, "Restarting…"
	a.restarting.Add(1)
	go func() {
		defer a.restarting.Done()
		if stack != nil {
			if stack.Svc != nil {
				stack.Svc.Release()
			}
			stack.Close()
		}
		runtime.EventsEmit(a.ctx, kiosk.EventTerminal, a.terminal())
		runtime.EventsEmit(a.ctx, kiosk.EventCheckout, a.checkout())
		log.Printf("comptoir: restarted by staff")
		a.mu.Lock()
		closing := a.closing
		a.mu.Unlock()
		if !closing {
			a.startKiosk(a.ctx)
		}
	}()
	return nil
}

func (a *App) setProblem(p string) {
	a.mu.Lock()
	a.problem = p
	a.mu.Unlock()
}

// media serves the catalog's pictures to the window (what the embedded
// UI does not hold).
func (a *App) media(w http.ResponseWriter, r *http.Request) {
	svc := a.svc()
	if svc == nil || !strings.HasPrefix(r.URL.Path, kiosk.MediaPrefix) {
		http.NotFound(w, r)
		return
	}
	svc.Media().ServeHTTP(w, r)
}

// svc is the kiosk service, or nil while it is not running.
func (a *App) svc() *kiosk.Service {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stack == nil {
		return nil
	}
	return a.stack.Svc
}

// startupProblem says in a sentence why the kiosk cannot start.
func startupProblem(err error) string {
	switch {
	case errors.Is(err, cli.ErrNoTerminal):
		return "No payment terminal is configured or found."
	case errors.Is(err, cli.ErrSeveralTerminals):
		return "Several payment terminals answer: staff choose one in staff mode."
	case fault.CodeOf(err) == fault.ELOCKED:
		return "Comptoir is already running on this computer with the same data."
	case fault.CodeOf(err) == fault.EFULL:
		return "The disk is full: Comptoir cannot record payments."
	case fault.CodeOf(err) == fault.EREADONLY:
		return "Comptoir's data folder cannot be written."
	}
	return "The kiosk cannot start: " + err.Error()
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
	a.closing = true
	a.mu.Unlock()
	a.restarting.Wait() // a restart under way must not leave a stack behind
	a.mu.Lock()
	stack := a.stack
	a.stack = nil
	a.mu.Unlock()
	if stack != nil {
		stack.Close()
	}
	for _, c := range a.closers {
		c.Close()
	}
}

// Ready is called by the frontend once its first screen is in the DOM. The
// window starts hidden so the user never sees an empty white webview.
func (a *App) Ready() {
	a.show("frontend ready")
}

// Version is the build's version string.
func (a *App) Version() string {
	return a.d.Version()
}

// errNotStarted answers an intent while the kiosk is not running.
var errNotStarted = errors.New("the kiosk is not running")

// Call runs one intent of the kiosk (backend/kiosk/intents.go): the
// customer screens' single entry point, as App.Staff is staff mode's.
// Before the kiosk runs, the queries answer what the screens need to say
// so, and the other intents fail.
func (a *App) Call(name string, args []json.RawMessage) (any, error) {
	if svc := a.svc(); svc != nil {
		return svc.Call(name, args)
	}
	switch {
	case !kiosk.IsIntent(name):
		return nil, fmt.Errorf("unknown intent %q", name)
	case name == "Info":
		return a.info(), nil
	case name == "Catalog":
		return kiosk.CatalogView{Currency: "EUR", Categories: []kiosk.CategoryView{}}, nil
	case name == "Checkout":
		return a.checkout(), nil
	case name == "Terminal":
		return a.terminal(), nil
	}
	return a.checkout(), errNotStarted
}

// info is what the UI needs once at start.
func (a *App) info() kiosk.InfoView {
	if svc := a.svc(); svc != nil {
		return svc.Info()
	}
	return kiosk.InfoView{Version: a.d.Version(), Demo: a.d.Demo(), Languages: []string{"fr", "en", "es"},
		DefaultLanguage: "fr", Currency: "EUR", IdleSeconds: 60, Mode: "kiosk"}
}

// checkout is the checkout's snapshot.
func (a *App) checkout() kiosk.CheckoutView {
	if svc := a.svc(); svc != nil {
		return svc.Checkout()
	}
	return kiosk.CheckoutView{Phase: kiosk.PhaseUnavailable, Language: "fr", Currency: "EUR", Lines: []kiosk.LineView{}, Taxes: []kiosk.TaxView{}}
}

// terminal is the terminal's status; before the kiosk runs, why it does not.
func (a *App) terminal() kiosk.TerminalView {
	if svc := a.svc(); svc != nil {
		return svc.Terminal()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return kiosk.TerminalView{State: kiosk.TerminalSearching, Demo: a.d.Demo(), Problem: a.problem}
}

// Staff runs one staff call (backend/staffapi): the staff screens' single
// entry point, answering an envelope so that error codes reach the UI.
func (a *App) Staff(name string, args []json.RawMessage) staffapi.Result {
	a.mu.Lock()
	var api *staffapi.API
	if a.stack != nil {
		api = a.stack.Staff
	}
	a.mu.Unlock()
	if api == nil {
		return staffapi.Result{Error: &staffapi.ErrorView{Code: staffapi.EUNAVAILABLE,
			Message: "Staff mode needs the kiosk running: " + a.terminal().Problem}}
	}
	res, err := api.Call(a.ctx, name, args)
	if err != nil {
		return staffapi.Result{Error: staffapi.View(err)}
	}
	return res
}

// quit is staff's Quit: the one way to close a kiosk window.
func (a *App) quit() {
	a.quitting.Store(true)
	log.Printf("comptoir: closed by staff")
	runtime.Quit(a.ctx)
}

// beforeClose keeps the window open unless closing is allowed (see
// cli.Desktop.CloseAllowed); Alt+F4 on a kiosk does nothing.
func (a *App) beforeClose(context.Context) (prevent bool) {
	svc := a.svc()
	if svc == nil {
		return !a.d.CloseAllowed(a.quitting.Load(), false, "", "")
	}
	prevent = !a.d.CloseAllowed(a.quitting.Load(), true, svc.Settings().Mode, svc.Checkout().Phase)
	if prevent {
		log.Printf("comptoir: window close refused (closing a kiosk is a staff action)")
	}
	return prevent
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
	// The desktop smoke test waits for this line.
	log.Printf("comptoir: a second launch was stopped; this window is brought forward")
	if a.ctx == nil {
		return
	}
	runtime.WindowUnminimise(a.ctx)
	runtime.WindowShow(a.ctx)
}

// runDesktop opens the kiosk window and blocks until it is closed.
func runDesktop(d *cli.Desktop) error {
	// No check for index.html here: `wails build` runs this function to
	// generate bindings before the frontend is built.
	dist, err := fs.Sub(assets, "frontend/dist")
	if err != nil {
		return err
	}

	app := newApp(d)
	// A stop asked by the system (SIGTERM at shutdown, Ctrl-C in a
	// terminal) is not a customer's Alt+F4: it may close a kiosk window.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stop)
	go func() {
		if _, ok := <-stop; ok {
			app.quitting.Store(true)
			if app.ctx != nil {
				runtime.Quit(app.ctx)
			}
		}
	}()
	frameless := d.Frameless()
	return wails.Run(&options.App{
		Title:            "Comptoir",
		Frameless:        frameless,
		Width:            1280,
		Height:           800,
		MinWidth:         800,
		MinHeight:        600,
		StartHidden:      true,
		BackgroundColour: &options.RGBA{R: 248, G: 247, B: 244, A: 255},
		AssetServer:      &assetserver.Options{Assets: dist, Handler: http.HandlerFunc(app.media)},
		OnStartup:        app.startup,
		OnDomReady:       app.domReady,
		OnShutdown:       app.shutdown,
		OnBeforeClose:    app.beforeClose,
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
			DisablePinchZoom:     true,
		},
	})
}
