package journal

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/comptoir-pos/comptoir/backend/fault"
)

func TestPrepareAttemptValidation(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	base := fixture(t, db)
	if err := db.CreateOrder(ctx, Order{ID: "other-order", Currency: "EUR", Total: 1}); err != nil {
		t.Fatal(err)
	}
	v4 := uuid.New().String()
	tests := []struct {
		name   string
		change func(a *Attempt)
		code   string
	}{
		{"not a uuid", func(a *Attempt) { a.UUID = "nope" }, EINVALID},
		{"uppercase uuid", func(a *Attempt) { a.UUID = strings.ToUpper(a.UUID) }, EINVALID},
		{"uuid v4", func(a *Attempt) { a.UUID = v4; a.RequestBody = debitBody(v4, a.OrderID, a.Amount) }, EINVALID},
		{"no order", func(a *Attempt) { a.OrderID = "" }, EINVALID},
		{"zero amount", func(a *Attempt) { a.Amount = 0; a.RequestBody = debitBody(a.UUID, a.OrderID, 0) }, EINVALID},
		{"negative gift", func(a *Attempt) { a.GiftAmount = -1 }, EINVALID},
		{"no terminal", func(a *Attempt) { a.Terminal = "" }, EINVALID},
		{"unknown kind", func(a *Attempt) { a.Kind = "preauth" }, EINVALID},
		{"debit with refund policy", func(a *Attempt) { a.Policy = PolicyRefund }, EINVALID},
		{"refund with kiosk policy", func(a *Attempt) { a.Kind = KindRefund }, EINVALID},
		{"born sent", func(a *Attempt) { a.State = StateSent }, EINVALID},
		{"empty body", func(a *Attempt) { a.RequestBody = nil }, EINVALID},
		{"body not JSON", func(a *Attempt) { a.RequestBody = []byte(`{"amount":`) }, EINVALID},
		{"body names another uuid", func(a *Attempt) { a.RequestBody = debitBody(newUUID(t), a.OrderID, a.Amount) }, EINVALID},
		{"body names another cart", func(a *Attempt) { a.RequestBody = debitBody(a.UUID, "other-order", a.Amount) }, EINVALID},
		{"body names another amount", func(a *Attempt) { a.RequestBody = debitBody(a.UUID, a.OrderID, 999) }, EINVALID},
		{"order does not exist", func(a *Attempt) { a.OrderID = "ghost"; a.RequestBody = debitBody(a.UUID, "ghost", a.Amount) }, ENOTFOUND},
		{"body without Local API fields", func(a *Attempt) { a.RequestBody = []byte(`{"other":"transport"}`) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := base
			a.UUID = newUUID(t)
			a.Terminal = "terminal-" + a.UUID
			a.RequestBody = debitBody(a.UUID, a.OrderID, a.Amount)
			tt.change(&a)
			got, err := db.PrepareAttempt(ctx, a)
			wantCode(t, err, tt.code)
			if err == nil {
				// Leave the order free for the next case.
				if _, err := db.Transition(ctx, got.UUID, StatePrepared, StateFailed, TransitionInfo{Note: "test"}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestPrepareAttempt(t *testing.T) {
	ctx := t.Context()
	clock := newStepClock()
	db := openMemory(t, WithClock(clock.Now))
	in := fixture(t, db)
	in.GiftAmount = 200
	got, err := db.PrepareAttempt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == 0 || got.State != StatePrepared || got.SendCount != 0 || got.CreatedAt.IsZero() ||
		!got.FirstSentAt.IsZero() || !got.FinalAt.IsZero() || got.GiftAmount != 200 ||
		!bytes.Equal(got.RequestBody, in.RequestBody) {
		t.Fatalf("prepared attempt = %+v", got)
	}
	evs, err := db.Events(ctx, got.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Kind != EventPrepared || evs[0].From != "" || evs[0].To != StatePrepared {
		t.Fatalf("events = %+v", evs)
	}
	_, err = db.PrepareAttempt(ctx, in)
	wantCode(t, err, ECONFLICT)
	_, err = db.Attempt(ctx, newUUID(t))
	wantCode(t, err, ENOTFOUND)
	_, err = db.Events(ctx, newUUID(t))
	wantCode(t, err, ENOTFOUND)
}

func TestOneUnresolvedAttemptPerOrderAndTerminal(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	for _, o := range []string{"o1", "o2"} {
		if err := db.CreateOrder(ctx, Order{ID: o, Currency: "EUR", Total: 1250}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := db.PrepareAttempt(ctx, newAttempt(t, "o1", "T1"))
	if err != nil {
		t.Fatal(err)
	}
	// Same order, other terminal: refused in every unresolved state.
	for _, step := range []func(){
		func() {},
		func() { _, err = db.MarkSent(ctx, first.UUID) },
		func() { _, err = db.Transition(ctx, first.UUID, StateSent, StateAbortRequested, TransitionInfo{}) },
	} {
		step()
		if err != nil {
			t.Fatal(err)
		}
		_, err := db.PrepareAttempt(ctx, newAttempt(t, "o1", "T2"))
		wantCode(t, err, ECONFLICT)
		if !strings.Contains(err.Error(), first.UUID) {
			t.Fatalf("the message should name the attempt in the way: %v", err)
		}
		// Same terminal, other order: refused too.
		_, err = db.PrepareAttempt(ctx, newAttempt(t, "o2", "T1"))
		wantCode(t, err, ECONFLICT)
	}
	// Once the first is final, both are allowed.
	if _, err := db.Transition(ctx, first.UUID, StateAbortRequested, StateCancelled, TransitionInfo{}); err != nil {
		t.Fatal(err)
	}
	second, err := db.PrepareAttempt(ctx, newAttempt(t, "o1", "T2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PrepareAttempt(ctx, newAttempt(t, "o2", "T1")); err != nil {
		t.Fatal(err)
	}
	as, err := db.AttemptsForOrder(ctx, "o1")
	if err != nil || len(as) != 2 || as[0].UUID != first.UUID || as[1].UUID != second.UUID {
		t.Fatalf("attempts for o1 = %v, %v", as, err)
	}
}

// The schema holds invariant 2 even for a write that skips the Go checks.
func TestUniqueIndexesBackstop(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateSent)
	insert := func(order, terminal string) error {
		_, err := db.w.ExecContext(ctx, `INSERT INTO attempts
			(uuid, order_id, kind, amount, policy, terminal, request_body, state, created_at, updated_at)
			VALUES (?, ?, 'debit', 1, 'kiosk', ?, '{}', 'prepared', 0, 0)`, newUUID(t), order, terminal)
		return mapErr(err, "raw insert")
	}
	if err := db.CreateOrder(ctx, Order{ID: "free", Currency: "EUR", Total: 1}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, order, terminal, code, msg string
	}{
		{"same order", a.OrderID, "elsewhere", ECONFLICT, "order already has an unresolved attempt"},
		{"same terminal", "free", a.Terminal, ECONFLICT, "terminal already has an unresolved attempt"},
		{"missing order", "ghost", "T-ghost", ENOTFOUND, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := insert(tt.order, tt.terminal)
			wantCode(t, err, tt.code)
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %q", err, tt.msg)
			}
		})
	}
}

func TestDebitGuards(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	// Split tender: a second debit after an approved one, for what the
	// order still owes and no more.
	if err := db.CreateOrder(ctx, Order{ID: "split", Currency: "EUR", Total: 2500}); err != nil {
		t.Fatal(err)
	}
	first, err := db.PrepareAttempt(ctx, newAttempt(t, "split", "T-split"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.MarkSent(ctx, first.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Transition(ctx, first.UUID, StateSent, StateApproved, TransitionInfo{}); err != nil {
		t.Fatal(err)
	}
	rest, err := db.PrepareAttempt(ctx, newAttempt(t, "split", "T-again"))
	if err != nil {
		t.Fatalf("second debit of a split tender: %v", err)
	}
	if _, err := db.Transition(ctx, rest.UUID, StatePrepared, StateFailed, TransitionInfo{}); err != nil {
		t.Fatal(err)
	}
	more := newAttempt(t, "split", "T-again")
	more.Amount = 1251
	more.RequestBody = debitBody(more.UUID, "split", 1251)
	_, err = db.PrepareAttempt(ctx, more)
	wantCode(t, err, ECONFLICT)
	if !strings.Contains(err.Error(), "owes 1250") {
		t.Fatalf("a debit beyond what the order owes: %v", err)
	}
	// A refund is fine too.
	part := first
	id := newUUID(t)
	refund := Attempt{UUID: id, OrderID: part.OrderID, Kind: KindRefund, Amount: 1250, Policy: PolicyRefund,
		Terminal: "T-again", RequestBody: []byte(fmt.Sprintf(`{"transactionType":"refund","amount":1250,"idempotentUuid":%q}`, id))}
	if _, err := db.PrepareAttempt(ctx, refund); err != nil {
		t.Fatal(err)
	}
	// An unknown debit may have charged: no new debit until staff resolve it.
	unknown := attemptIn(t, db, StateUnknown)
	_, err = db.PrepareAttempt(ctx, newAttempt(t, unknown.OrderID, "T-unknown"))
	wantCode(t, err, ECONFLICT)
	if !strings.Contains(err.Error(), "resolve") || !strings.Contains(err.Error(), unknown.UUID) {
		t.Fatalf("err = %v", err)
	}
	if _, err := db.Resolve(ctx, unknown.UUID, Resolution{To: StateDeclined, Who: "anna", Note: "not in the terminal history"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PrepareAttempt(ctx, newAttempt(t, unknown.OrderID, "T-unknown")); err != nil {
		t.Fatalf("after resolution as declined: %v", err)
	}
	// An order that is not open (paid, cancelled, or waiting for staff)
	// takes no new debit.
	paid := attemptIn(t, db, StateApproved)
	_, err = db.PrepareAttempt(ctx, newAttempt(t, paid.OrderID, "T-paid"))
	wantCode(t, err, ECONFLICT)
	for _, set := range []func(id string) error{
		func(id string) error { return db.CloseOrder(ctx, id, "test") },
		func(id string) error { return db.FlagOrder(ctx, id, "test") },
	} {
		a := fixture(t, db)
		if err := set(a.OrderID); err != nil {
			t.Fatal(err)
		}
		_, err := db.PrepareAttempt(ctx, a)
		wantCode(t, err, ECONFLICT)
	}
}

func TestTransitionTable(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	for _, from := range States {
		for _, to := range States {
			t.Run(fmt.Sprintf("%s→%s", from, to), func(t *testing.T) {
				a := attemptIn(t, db, from)
				before := countEvents(t, db, a.UUID)
				raw := []byte(fmt.Sprintf(`{"status":"ok","idempotentUuid":%q}`, a.UUID))
				got, err := db.Transition(ctx, a.UUID, from, to,
					TransitionInfo{Response: raw, TransactionID: "tx-1", Note: "table test"})
				after := countEvents(t, db, a.UUID)
				if !CanTransition(from, to) {
					wantCode(t, err, EINVALID)
					now, _ := db.Attempt(ctx, a.UUID)
					if now.State != from || after != before || now.UpdatedAt != a.UpdatedAt {
						t.Fatalf("a refused transition wrote: state %s, events %d→%d", now.State, before, after)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.State != to || after != before+1 {
					t.Fatalf("state %s, events %d→%d", got.State, before, after)
				}
				if to.Final() != !got.FinalAt.IsZero() {
					t.Fatalf("to %s: final_at = %v", to, got.FinalAt)
				}
				if to != StateSent && (!bytes.Equal(got.Response, raw) || got.TransactionID != "tx-1") {
					t.Fatalf("response %q, transaction id %q not stored", got.Response, got.TransactionID)
				}
			})
		}
	}
}

func TestTransitionTableShape(t *testing.T) {
	for _, s := range States {
		if s.Final() == s.Open() {
			t.Errorf("%s is both or neither final and open", s)
		}
		if s.Final() && len(transitions[s]) != 0 {
			t.Errorf("final state %s has transitions", s)
		}
	}
	for _, to := range []State{StateApproved, StateDeclined, StateUnknown} {
		if CanTransition(StatePrepared, to) {
			t.Errorf("prepared→%s allowed: a prepared request never left the process", to)
		}
	}
	if State("paid").Valid() || State("").Final() || State("").Open() {
		t.Error("unknown states must be neither valid, final nor open")
	}
}

func TestTransitionConflicts(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateSent)
	tests := []struct {
		name     string
		uuid     string
		from, to State
		code     string
		msg      string
	}{
		{"stale from", a.UUID, StatePrepared, StateFailed, ECONFLICT, "is sent, not prepared"},
		{"stale resend", a.UUID, StatePrepared, StateSent, ECONFLICT, "is sent, not prepared"},
		{"not in table", a.UUID, StateApproved, StateDeclined, EINVALID, "not an allowed transition"},
		{"unknown state", a.UUID, StateSent, "paid", EINVALID, "unknown state"},
		{"no such attempt", newUUID(t), StateSent, StateApproved, ENOTFOUND, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.Transition(ctx, tt.uuid, tt.from, tt.to, TransitionInfo{})
			wantCode(t, err, tt.code)
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %q", err, tt.msg)
			}
		})
	}
}

// Two goroutines race the same guarded transition: exactly one wins, the
// other learns the state the winner left.
func TestTransitionCompareAndSetRace(t *testing.T) {
	ctx := t.Context()
	db := openDir(t, t.TempDir())
	for round := range 10 {
		a := attemptIn(t, db, StateSent)
		outcomes := []State{StateApproved, StateCancelled}
		errs := make([]error, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, to := range outcomes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = db.Transition(ctx, a.UUID, StateSent, to, TransitionInfo{Note: fmt.Sprint("racer ", i)})
			}()
		}
		close(start)
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch fault.CodeOf(err) {
			case "":
				if won >= 0 {
					t.Fatalf("round %d: both transitions won", round)
				}
				won = i
			case ECONFLICT:
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: nobody won: %v", round, errs)
		}
		final, _ := db.Attempt(ctx, a.UUID)
		if final.State != outcomes[won] {
			t.Fatalf("round %d: state %s, winner wanted %s", round, final.State, outcomes[won])
		}
		if !strings.Contains(errs[1-won].Error(), string(outcomes[won])) {
			t.Fatalf("round %d: the loser's error should name the actual state: %v", round, errs[1-won])
		}
		if n := countEvents(t, db, a.UUID); n != 3 { // prepared, sent, one transition
			t.Fatalf("round %d: %d events", round, n)
		}
	}
}

// Several kiosks' worth of goroutines try to open an attempt on one order:
// exactly one attempt exists afterwards.
func TestPrepareAttemptRace(t *testing.T) {
	ctx := t.Context()
	db := openDir(t, t.TempDir())
	if err := db.CreateOrder(ctx, Order{ID: "contested", Currency: "EUR", Total: 1250}); err != nil {
		t.Fatal(err)
	}
	const n = 6
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := newAttempt(t, "contested", fmt.Sprint("T", i))
			<-start
			_, errs[i] = db.PrepareAttempt(ctx, a)
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch fault.CodeOf(err) {
		case "":
			wins++
		case ECONFLICT:
		default:
			t.Fatal(err)
		}
	}
	as, _ := db.AttemptsForOrder(ctx, "contested")
	if wins != 1 || len(as) != 1 {
		t.Fatalf("%d winners, %d attempts", wins, len(as))
	}
}

func TestMarkSent(t *testing.T) {
	ctx := t.Context()
	clock := newStepClock()
	db := openMemory(t, WithClock(clock.Now))
	a := attemptIn(t, db, StatePrepared)

	first, err := db.MarkSent(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if first.State != StateSent || first.SendCount != 1 || first.FirstSentAt.IsZero() || !first.FirstSentAt.Equal(first.LastSentAt) {
		t.Fatalf("after first send: %+v", first)
	}
	second, err := db.Transition(ctx, a.UUID, StateSent, StateSent, TransitionInfo{Note: "client timeout"})
	if err != nil {
		t.Fatal(err)
	}
	if second.SendCount != 2 || !second.FirstSentAt.Equal(first.FirstSentAt) || !second.LastSentAt.After(first.LastSentAt) {
		t.Fatalf("after resend: %+v", second)
	}
	if _, err := db.Transition(ctx, a.UUID, StateSent, StateAbortRequested, TransitionInfo{Note: "customer cancel"}); err != nil {
		t.Fatal(err)
	}
	third, err := db.MarkSent(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if third.State != StateAbortRequested || third.SendCount != 3 {
		t.Fatalf("resend while abort pending: %+v", third)
	}
	evs, _ := db.Events(ctx, a.UUID)
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, fmt.Sprintf("%s:%s>%s", e.Kind, e.From, e.To))
	}
	want := "prepared:>prepared sent:prepared>sent resent:sent>sent transition:sent>abort_requested resent:abort_requested>abort_requested"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("events:\n got %s\nwant %s", strings.Join(kinds, " "), want)
	}
	if !strings.Contains(evs[2].Detail, "client timeout") || !strings.Contains(evs[2].Detail, "#2") {
		t.Fatalf("resend event detail = %q", evs[2].Detail)
	}

	if _, err := db.Transition(ctx, a.UUID, StateAbortRequested, StateApproved, TransitionInfo{}); err != nil {
		t.Fatal(err)
	}
	_, err = db.MarkSent(ctx, a.UUID)
	wantCode(t, err, ECONFLICT)
	_, err = db.MarkSent(ctx, newUUID(t))
	wantCode(t, err, ENOTFOUND)
}

func TestEventsCarryResponses(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateSent)

	abortKO := []byte(`{"status":"ko","message":"Abort not possible"}`)
	if err := db.RecordResponse(ctx, a.UUID, abortKO, "abort answered"); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Attempt(ctx, a.UUID)
	if got.State != StateSent || !bytes.Equal(got.Response, abortKO) {
		t.Fatalf("after RecordResponse: state %s response %q", got.State, got.Response)
	}

	// A raw answer need not be JSON (an HTTP 500 page): it is kept as is.
	approved := []byte("{\"status\":\"ok\",\"transactionId\":\"T-42\"}\n")
	got, err := db.Transition(ctx, a.UUID, StateSent, StateApproved,
		TransitionInfo{Response: approved, TransactionID: "T-42", Note: "payment answered"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Response, approved) || got.TransactionID != "T-42" || got.FinalAt.IsZero() {
		t.Fatalf("approved attempt = %+v", got)
	}

	// A late answer on a final attempt is journaled but does not replace the
	// response the outcome was decided on.
	late := []byte("<html>502 Bad Gateway</html>")
	if err := db.RecordResponse(ctx, a.UUID, late, "late abort answer"); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNote(ctx, a.UUID, "staff:anna", "customer asked for a receipt copy"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.AddNote(ctx, a.UUID, "x", ""), EINVALID)
	wantCode(t, db.RecordResponse(ctx, newUUID(t), late, ""), ENOTFOUND)
	got, _ = db.Attempt(ctx, a.UUID)
	if !bytes.Equal(got.Response, approved) {
		t.Fatalf("final response overwritten: %q", got.Response)
	}

	evs, err := db.Events(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 6 {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	checks := []struct {
		kind   EventKind
		from   State
		to     State
		raw    []byte
		detail string
		actor  string
	}{
		{EventResponse, StateSent, StateSent, abortKO, "abort answered", ""},
		{EventTransition, StateSent, StateApproved, approved, "payment answered; transactionId T-42", ""},
		{EventResponse, StateApproved, StateApproved, late, "late abort answer", ""},
		{EventNote, StateApproved, StateApproved, nil, "customer asked for a receipt copy", "staff:anna"},
	}
	for i, c := range checks {
		e := evs[i+2]
		if e.Kind != c.kind || e.From != c.from || e.To != c.to || !bytes.Equal(e.RawResponse, c.raw) ||
			e.Detail != c.detail || e.Actor != c.actor || e.At.IsZero() || e.AttemptID != a.ID {
			t.Errorf("event %d = %+v, want %+v", i+2, e, c)
		}
	}
}

func TestResolveUnknown(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	u := attemptIn(t, db, StateUnknown)

	tests := []struct {
		name string
		to   State
		who  string
		code string
	}{
		{"to failed", StateFailed, "anna", EINVALID},
		{"to sent", StateSent, "anna", EINVALID},
		{"nobody", StateApproved, " ", EINVALID},
	}
	for _, tt := range tests {
		_, err := db.Resolve(ctx, u.UUID, Resolution{To: tt.to, Who: tt.who, Note: ""})
		wantCode(t, err, tt.code)
	}
	got, err := db.Resolve(ctx, u.UUID, Resolution{To: StateApproved, Who: "anna", Note: "charge found in the terminal history, T-77"})
	if err != nil {
		t.Fatal(err)
	}
	if got.State != StateApproved || !got.FinalAt.Equal(u.FinalAt) {
		t.Fatalf("resolved = %+v", got)
	}
	evs, _ := db.Events(ctx, u.UUID)
	last := evs[len(evs)-1]
	if last.Kind != EventResolution || last.From != StateUnknown || last.To != StateApproved ||
		last.Actor != "anna" || !strings.Contains(last.Detail, "T-77") {
		t.Fatalf("resolution event = %+v", last)
	}
	// Only once, and only from unknown.
	_, err = db.Resolve(ctx, u.UUID, Resolution{To: StateDeclined, Who: "bob", Note: ""})
	wantCode(t, err, ECONFLICT)
	for _, s := range []State{StateSent, StateDeclined, StateFailed} {
		a := attemptIn(t, db, s)
		_, err := db.Resolve(ctx, a.UUID, Resolution{To: StateApproved, Who: "bob", Note: ""})
		wantCode(t, err, ECONFLICT)
	}
	_, err = db.Resolve(ctx, newUUID(t), Resolution{To: StateApproved, Who: "bob", Note: ""})
	wantCode(t, err, ENOTFOUND)
}

// The schema's triggers hold the rules against writes that skip the Go code.
func TestSchemaTriggers(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	a := attemptIn(t, db, StateApproved)
	for _, q := range []string{
		`UPDATE attempts SET state = 'sent' WHERE uuid = ?`,
		`UPDATE attempts SET state = 'declined' WHERE uuid = ?`,
		`UPDATE attempts SET request_body = '{}' WHERE uuid = ?`,
		`UPDATE attempts SET amount = 1 WHERE uuid = ?`,
		`DELETE FROM attempts WHERE uuid = ?`,
		`UPDATE attempt_events SET detail = 'x' WHERE attempt_id = (SELECT id FROM attempts WHERE uuid = ?)`,
		`DELETE FROM attempt_events WHERE attempt_id = (SELECT id FROM attempts WHERE uuid = ?)`,
	} {
		_, err := db.w.ExecContext(ctx, q, a.UUID)
		wantCode(t, mapErr(err, "raw write"), EINVALID)
	}
	got, _ := db.Attempt(ctx, a.UUID)
	if got.State != StateApproved || !bytes.Equal(got.RequestBody, a.RequestBody) {
		t.Fatalf("attempt changed: %+v", got)
	}
}

func TestRequestBodyByteForByte(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	db := openDir(t, dir)
	a := fixture(t, db)
	// Odd spacing, escapes, raw UTF-8, a trailing newline: all kept.
	a.RequestBody = []byte("{\n  \"amount\" :1250 ,\"idempotentUuid\":\"" + a.UUID +
		"\",\"cartId\":\"" + a.OrderID + "\",\"reference\":\"\\u00e9t\u00e9 \\\"x\\\" \U0001F600\"}\n")
	if _, err := db.PrepareAttempt(ctx, a); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDir(t, dir)
	got, err := db.Attempt(ctx, a.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.RequestBody, a.RequestBody) {
		t.Fatalf("body changed:\n got %q\nwant %q", got.RequestBody, a.RequestBody)
	}
}

func TestOpenAttemptsAfterReopen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	clock := newStepClock()
	db := openDir(t, dir, WithClock(clock.Now))
	var wantOpen []string
	for _, s := range []State{StateSent, StateApproved, StatePrepared, StateDeclined,
		StateAbortRequested, StateUnknown, StateSent, StateFailed, StateCancelled} {
		a := attemptIn(t, db, s)
		if s.Open() {
			wantOpen = append(wantOpen, a.UUID)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDir(t, dir) // a restart
	open, err := db.OpenAttempts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range open {
		got = append(got, a.UUID)
		if !a.State.Open() || len(a.RequestBody) == 0 || a.Terminal == "" {
			t.Errorf("open attempt %+v", a)
		}
	}
	if strings.Join(got, ",") != strings.Join(wantOpen, ",") {
		t.Fatalf("open attempts after restart:\n got %v\nwant %v (oldest first)", got, wantOpen)
	}
}

func TestListAttempts(t *testing.T) {
	ctx := t.Context()
	clock := newStepClock()
	db := openMemory(t, WithClock(clock.Now))
	var all []Attempt // oldest first
	for _, s := range []State{StateApproved, StateSent, StateDeclined, StateApproved, StatePrepared} {
		all = append(all, attemptIn(t, db, s))
	}
	uuids := func(as []Attempt) string {
		var s []string
		for _, a := range as {
			s = append(s, a.UUID[len(a.UUID)-4:])
		}
		return strings.Join(s, ",")
	}
	rev := func(idx ...int) []Attempt {
		var out []Attempt
		for _, i := range idx {
			out = append(out, all[i])
		}
		return out
	}
	tests := []struct {
		name string
		f    AttemptFilter
		want []Attempt
	}{
		{"all, newest first", AttemptFilter{}, rev(4, 3, 2, 1, 0)},
		{"by state", AttemptFilter{State: StateApproved}, rev(3, 0)},
		{"only open", AttemptFilter{OnlyOpen: true}, rev(4, 1)},
		{"by order", AttemptFilter{OrderID: all[2].OrderID}, rev(2)},
		{"since", AttemptFilter{Since: all[3].CreatedAt}, rev(4, 3)},
		{"until", AttemptFilter{Until: all[1].CreatedAt}, rev(0)},
		{"since and until", AttemptFilter{Since: all[1].CreatedAt, Until: all[3].CreatedAt}, rev(2, 1)},
		{"limit", AttemptFilter{Limit: 2}, rev(4, 3)},
		{"limit and offset", AttemptFilter{Limit: 2, Offset: 2}, rev(2, 1)},
		{"offset alone", AttemptFilter{Offset: 3}, rev(1, 0)},
		{"nothing", AttemptFilter{State: StateUnknown}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ListAttempts(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if uuids(got) != uuids(tt.want) {
				t.Fatalf("got %s, want %s", uuids(got), uuids(tt.want))
			}
		})
	}
	_, err := db.ListAttempts(ctx, AttemptFilter{State: "paid"})
	wantCode(t, err, EINVALID)
	_, err = db.ListAttempts(ctx, AttemptFilter{Limit: -1})
	wantCode(t, err, EINVALID)
}

// Recovery must not scan the history: the query plan reads the partial index.
func TestOpenAttemptsUsesIndex(t *testing.T) {
	ctx := t.Context()
	db := openMemory(t)
	for _, s := range []State{StateApproved, StateSent, StateDeclined} {
		attemptIn(t, db, s)
	}
	// ANALYZE so the planner decides as it will on a kiosk with history.
	if _, err := db.w.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	joined := queryPlan(t, db.r, openAttemptsQuery)
	if !strings.Contains(joined, "USING INDEX attempts_open") || strings.Contains(joined, "TEMP B-TREE") {
		t.Fatalf("OpenAttempts plan = %q, want a walk of attempts_open without a sort", joined)
	}
	t.Logf("plan: %s", joined)
}

func TestTimestampsAreUTCMilliseconds(t *testing.T) {
	ctx := t.Context()
	paris := time.FixedZone("CET", 3600)
	at := time.Date(2026, 3, 1, 13, 0, 0, 123456789, paris)
	db := openMemory(t, WithClock(func() time.Time { return at }))
	a := attemptIn(t, db, StatePrepared)
	var stored int64
	if err := db.r.QueryRowContext(ctx, `SELECT created_at FROM attempts WHERE uuid = ?`, a.UUID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != at.UnixMilli() || a.CreatedAt.Location() != time.UTC || !a.CreatedAt.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("stored %d, read %v; want %d, %v", stored, a.CreatedAt, at.UnixMilli(), at.UTC())
	}
}
