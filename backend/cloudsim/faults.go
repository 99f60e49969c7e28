package cloudsim

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// How the poll answers. PollNormal tells the truth; the others are the
// answers the specification leaves open, for tests.
const (
	PollNormal   = ""
	PollPending  = "pending" // pending, whatever happened
	PollNotFound = "404"     // HTTP 404
	PollError    = "500"     // HTTP 500
	PollExpired  = "expired" // (expired actions only) status "expired"
)

// Fault replaces the cloud's answer to the next request on a path.
type Fault struct {
	// Path is a Cloud API path, PathPayment for example.
	Path string `json:"path"`
	// Status is the HTTP status answered instead; 0 drops the connection
	// without an answer.
	Status int `json:"status"`
	// After: the request is processed first, then its answer replaced (a
	// lost acknowledgement); otherwise it is not processed at all.
	After bool `json:"after"`
}

type faults struct {
	next              []Fault
	poll              string
	expiredPoll       string
	historyWithoutIDs bool
	list              ListFault  // see SetListFault
	served            ListServed // see ListServed
	lanIDs            string     // LANIDsCloud when empty
	recordLag         int
}

// setFault changes the faults under the cloud's lock.
func (c *Cloud) setFault(change func(*faults)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	change(&c.faults)
}

func (f Fault) check() error {
	switch f.Path {
	case PathPayment, PathTransaction, PathAbort, PathCancel, PathPrint, PathShareReceipt, PathReversal, PathTransactions,
		PathGenerateLink, PathCart, PathCancelLink, PathCapture, PathCheckouts, PathWSBatch:
	default:
		return fmt.Errorf("cloudsim: no Cloud API path %q", f.Path)
	}
	if f.Status != 0 && (f.Status < 100 || f.Status > 599) {
		return fmt.Errorf("cloudsim: HTTP status %d", f.Status)
	}
	return nil
}

// Inject queues faults, each for the next request on its path.
func (c *Cloud) Inject(fs ...Fault) error {
	for _, f := range fs {
		if err := f.check(); err != nil {
			return err
		}
	}
	c.setFault(func(f *faults) { f.next = append(f.next, fs...) })
	return nil
}

// LoseNextAck processes the next payment and drops its acknowledgement.
func (c *Cloud) LoseNextAck() {
	_ = c.Inject(Fault{Path: PathPayment, After: true})
}

// SetPoll chooses how the poll answers (PollNormal, PollPending,
// PollNotFound, PollError).
func (c *Cloud) SetPoll(mode string) error {
	switch mode {
	case PollNormal, PollPending, PollNotFound, PollError:
	default:
		return fmt.Errorf("cloudsim: poll mode %q", mode)
	}
	c.setFault(func(f *faults) { f.poll = mode })
	return nil
}

// SetExpiredPoll chooses how the poll shows an expired action:
// PollExpired (the default), PollPending or PollNotFound.
func (c *Cloud) SetExpiredPoll(mode string) error {
	switch mode {
	case PollExpired, PollPending, PollNotFound:
	default:
		return fmt.Errorf("cloudsim: expired poll mode %q", mode)
	}
	c.setFault(func(f *faults) { f.expiredPoll = mode })
	return nil
}

// SetHistoryIDs lists (true, the default) or hides the request's
// checkoutExternalId and idempotentUuid in the history, which the
// specification's list of history fields does not name.
func (c *Cloud) SetHistoryIDs(on bool) {
	c.setFault(func(f *faults) { f.historyWithoutIDs = !on })
}

// takeFault removes and returns the next fault queued for path.
func (c *Cloud) takeFault(path string) (Fault, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, f := range c.faults.next {
		if f.Path == path {
			c.faults.next = append(c.faults.next[:i], c.faults.next[i+1:]...)
			return f, true
		}
	}
	return Fault{}, false
}

// faulty applies the next fault queued for path, if any.
func (c *Cloud) faulty(path string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := c.takeFault(path)
		if !ok {
			h(w, r)
			return
		}
		c.log.Info("fault injected", "path", path, "status", f.Status, "after", f.After)
		if f.After {
			h(httptest.NewRecorder(), r)
		}
		if f.Status == 0 {
			terminalsim.DropConnection(w)
			return
		}
		ko(w, f.Status, http.StatusText(f.Status))
	})
}
