package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/comptoir-pos/comptoir/backend/journal"
	"github.com/comptoir-pos/comptoir/backend/kiosk"
	"github.com/comptoir-pos/comptoir/backend/payment"
	"github.com/comptoir-pos/comptoir/backend/staff"
	"github.com/comptoir-pos/comptoir/backend/staffapi"
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
// frontend as window.go.main.App.<Method>; each is one call to the kiosk
// service (backend/kiosk), whose contract.go lists them.
type App struct {
	ctx      context.Context
	showOnce sync.Once
	flags    commonFlags

	quitting atomic.Bool // staff chose Quit: the window may close

	mu      sync.Mutex
	stack   *kioskStack // nil until started, or when it could not start
	problem string      // why the kiosk cannot start, for the UI
	closers []io.Closer // the log file
	logger  *slog.Logger

	closing    bool           // shutdown began: no restart starts a stack
	restarting sync.WaitGroup // the first start or a restart under way
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
	stack, err := startKiosk(ctx, a.flags, payment.DefaultLimits, wailsEmitter{ctx}, logger)
	if err != nil {
		a.setProblem(startupProblem(err))
		log.Printf("comptoir: the kiosk cannot start: %v", err)
		// Without a terminal, staff mode still runs, to choose one.
		if errors.Is(err, errNoTerminal) || errors.Is(err, errSeveralTerminals) {
			if so, serr := startStaffOnly(ctx, a.flags, logger); serr == nil {
				so.staff = so.staff.WithDesktop(a.quit, a.restart)
				a.mu.Lock()
				a.stack = so
				a.mu.Unlock()
			} else {
				log.Printf("comptoir: staff mode cannot start either: %v", serr)
			}
		}
		runtime.EventsEmit(ctx, kiosk.EventTerminal, a.Terminal())
		return
	}
	stack.staff = stack.staff.WithDesktop(a.quit, a.restart)
	a.mu.Lock()
	a.stack, a.problem = stack, ""
	a.mu.Unlock()
	log.Printf("comptoir: terminal %s (demo %v)", stack.url, a.flags.demo)
	// A self-service kiosk fills its screen; a counter PC stays a window.
	if stack.svc.Settings().Mode == "kiosk" && !a.flags.windowed {
		runtime.WindowFullscreen(ctx)
	}
	runtime.EventsEmit(ctx, kiosk.EventTerminal, stack.svc.Terminal())
	runtime.EventsEmit(ctx, kiosk.EventCheckout, stack.svc.Checkout())
}

// kioskLogger is the JSON log in the data directory, opened once.
func (a *App) kioskLogger() *slog.Logger {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.logger == nil {
		a.logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
		if dir, err := a.flags.resolveDataDir(); err == nil {
			var closer io.Closer
			a.logger, closer = kioskLogger(dir, os.Stderr)
			a.closers = append(a.closers, closer)
		}
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
			if stack.svc != nil {
				stack.svc.Release()
			}
			stack.close()
		}
		runtime.EventsEmit(a.ctx, kiosk.EventTerminal, a.Terminal())
		runtime.EventsEmit(a.ctx, kiosk.EventCheckout, a.Checkout())
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

// svc is the kiosk service, or nil while it is not running.
func (a *App) svc() *kiosk.Service {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stack == nil {
		return nil
	}
	return a.stack.svc
}

// startupProblem says in a sentence why the kiosk cannot start.
func startupProblem(err error) string {
	switch {
	case errors.Is(err, errNoTerminal):
		return "No payment terminal is configured or found."
	case errors.Is(err, errSeveralTerminals):
		return "Several payment terminals answer: staff choose one in staff mode."
	case journal.ErrorCode(err) == journal.ELOCKED:
		return "Comptoir is already running on this computer with the same data."
	case journal.ErrorCode(err) == journal.EFULL:
		return "The disk is full: Comptoir cannot record payments."
	case journal.ErrorCode(err) == journal.EREADONLY:
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
		stack.close()
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
	return version
}

// errNotStarted answers an intent while the kiosk is not running.
var errNotStarted = errors.New("the kiosk is not running")

// Info is what the UI needs once at start.
func (a *App) Info() kiosk.InfoView {
	if svc := a.svc(); svc != nil {
		return svc.Info()
	}
	return kiosk.InfoView{Version: version, Demo: a.flags.demo, Languages: []string{"fr", "en", "es"},
		DefaultLanguage: "fr", Currency: "EUR", IdleSeconds: 60, Mode: "kiosk"}
}

// Catalog is the menu.
func (a *App) Catalog() kiosk.CatalogView {
	if svc := a.svc(); svc != nil {
		return svc.Catalog()
	}
	return kiosk.CatalogView{Currency: "EUR", Categories: []kiosk.CategoryView{}}
}

// Checkout is the checkout's snapshot.
func (a *App) Checkout() kiosk.CheckoutView {
	if svc := a.svc(); svc != nil {
		return svc.Checkout()
	}
	return kiosk.CheckoutView{Phase: kiosk.PhaseUnavailable, Language: "fr", Currency: "EUR", Lines: []kiosk.LineView{}, Taxes: []kiosk.TaxView{}}
}

// Terminal is the terminal's status; before the kiosk runs, why it does not.
func (a *App) Terminal() kiosk.TerminalView {
	if svc := a.svc(); svc != nil {
		return svc.Terminal()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return kiosk.TerminalView{State: kiosk.TerminalSearching, Demo: a.flags.demo, Problem: a.problem}
}

// intent runs one intent of the kiosk service.
func (a *App) intent(f func(*kiosk.Service) (kiosk.CheckoutView, error)) (kiosk.CheckoutView, error) {
	svc := a.svc()
	if svc == nil {
		return a.Checkout(), errNotStarted
	}
	return f(svc)
}

func (a *App) Start(language string) (kiosk.CheckoutView, error) {
	return a.intent(func(s *kiosk.Service) (kiosk.CheckoutView, error) { return s.Start(language) })
}

func (a *App) SetLanguage(language string) (kiosk.CheckoutView, error) {
	return a.intent(func(s *kiosk.Service) (kiosk.CheckoutView, error) { return s.SetLanguage(language) })
}

func (a *App) AddItem(productID string, qty int) (kiosk.CheckoutView, error) {
	return a.intent(func(s *kiosk.Service) (kiosk.CheckoutView, error) { return s.AddItem(productID, qty) })
}

func (a *App) SetQuantity(lineID string, qty int) (kiosk.CheckoutView, error) {
	return a.intent(func(s *kiosk.Service) (kiosk.CheckoutView, error) { return s.SetQuantity(lineID, qty) })
}

func (a *App) Pay(method kiosk.PaymentMethod) (kiosk.CheckoutView, error) {
	return a.intent(func(s *kiosk.Service) (kiosk.CheckoutView, error) { return s.Pay(method) })
}

func (a *App) Cancel() (kiosk.CheckoutView, error) { return a.intent((*kiosk.Service).Cancel) }

func (a *App) Retry() (kiosk.CheckoutView, error) { return a.intent((*kiosk.Service).Retry) }

func (a *App) PayRestByCard() (kiosk.CheckoutView, error) {
	return a.intent((*kiosk.Service).PayRestByCard)
}

func (a *App) CancelOrder() (kiosk.CheckoutView, error) {
	return a.intent((*kiosk.Service).CancelOrder)
}

func (a *App) ChooseReceipt(choice kiosk.ReceiptChoice) (kiosk.CheckoutView, error) {
	return a.intent(func(s *kiosk.Service) (kiosk.CheckoutView, error) { return s.ChooseReceipt(choice) })
}

func (a *App) Finish() (kiosk.CheckoutView, error) { return a.intent((*kiosk.Service).Finish) }

func (a *App) Abandon() (kiosk.CheckoutView, error) { return a.intent((*kiosk.Service).Abandon) }

// Staff runs one staff call (backend/staffapi): the staff screens' single
// entry point, answering an envelope so that error codes reach the UI.
func (a *App) Staff(name string, args []json.RawMessage) staffapi.Result {
	a.mu.Lock()
	var api *staffapi.API
	if a.stack != nil {
		api = a.stack.staff
	}
	a.mu.Unlock()
	if api == nil {
		return staffapi.Result{Error: &staffapi.ErrorView{Code: staffapi.EUNAVAILABLE,
			Message: "Staff mode needs the kiosk running: " + a.Terminal().Problem}}
	}
	res, err := api.Call(a.ctx, name, args)
	if err != nil {
		return staffapi.Result{Error: &staffapi.ErrorView{Code: staffapi.EBADCALL, Message: err.Error()}}
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
// closeAllowed); Alt+F4 on a kiosk does nothing.
func (a *App) beforeClose(context.Context) (prevent bool) {
	svc := a.svc()
	if svc == nil {
		return !closeAllowed(a.quitting.Load(), false, "", a.flags.windowed, "")
	}
	prevent = !closeAllowed(a.quitting.Load(), true, svc.Settings().Mode, a.flags.windowed, svc.Checkout().Phase)
	if prevent {
		log.Printf("comptoir: window close refused (closing a kiosk is a staff action)")
	}
	return prevent
}

// closeAllowed says whether the window may close: always after staff's
// Quit or when the kiosk is not running; never in kiosk mode otherwise;
// in counter mode (a staff PC) or windowed (someone's desktop) unless a
// payment is out on the terminal.
func closeAllowed(quitting, running bool, mode string, windowed bool, phase kiosk.Phase) bool {
	switch {
	case quitting || !running:
		return true
	case mode == "kiosk" && !windowed:
		return false
	}
	return phase != kiosk.PhasePaying && phase != kiosk.PhaseCanceling
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

// startsFrameless: a self-service kiosk has no title bar to close or move
// its window. Wails fixes the frame when the window is made, before the
// journal is open, so the mode is peeked at (without the data directory's
// lock). An unreadable mode is the default, kiosk; --windowed keeps the frame.
func startsFrameless(flags commonFlags) bool {
	if flags.windowed {
		return false
	}
	mode := kiosk.DefaultMode
	if dir, err := flags.resolveDataDir(); err == nil {
		raw, ok, err := journal.PeekSetting(context.Background(), dir, kiosk.SettingMode)
		var m string
		if err == nil && ok && json.Unmarshal(raw, &m) == nil {
			mode = m
		}
	}
	return mode != "counter"
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
	frameless := startsFrameless(flags)
	return wails.Run(&options.App{
		Title:            "Comptoir",
		Frameless:        frameless,
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
