package journal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/fault"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Error codes: fault's (backend/fault), under the journal's names. Callers
// branch on the code (fault.CodeOf), never on the message, which is written
// for a person: an operator reading a log or a staff screen.
const (
	// ECONFLICT: a guarded transition lost the race or found the record in
	// another state; an order or attempt that must be unique already exists;
	// an order already has an unresolved attempt.
	ECONFLICT = fault.ECONFLICT
	// ENOTFOUND: no order or attempt with that id.
	ENOTFOUND = fault.ENOTFOUND
	// EINVALID: the caller asked for something the journal never allows (a
	// transition outside the table, a malformed uuid or body). Nothing was written.
	EINVALID = fault.EINVALID
	// ELOCKED: another process holds the data directory.
	ELOCKED = fault.ELOCKED
	// EFULL: the disk is full or refused a write or a flush. The transaction
	// was rolled back as a whole: nothing is half-written.
	EFULL = fault.EFULL
	// EREADONLY: the data directory or database cannot be written.
	EREADONLY = fault.EREADONLY
	// EINTERNAL: anything else, a corrupt database included.
	EINTERNAL = fault.EINTERNAL
)

// from is the journal's name on its errors (fault.Error.From).
const from = "journal"

// Errorf returns the journal's *fault.Error with code and a formatted message.
func Errorf(code, format string, args ...any) *fault.Error {
	return &fault.Error{Code: code, Message: fmt.Sprintf(format, args...), From: from}
}

// failure is the journal's *fault.Error with code, message and cause.
func failure(code, message string, err error) *fault.Error {
	return &fault.Error{Code: code, Message: message, From: from, Err: err}
}

// mapErr turns a driver error into the journal's *fault.Error. what names
// the operation for the message ("prepare attempt 0190..."). Context
// errors pass through unchanged so that errors.Is(err, context.Canceled)
// keeps working for callers.
func mapErr(err error, what string) error {
	if err == nil {
		return nil
	}
	if fault.As(err) != nil {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return failure(EINTERNAL, what, err)
	}
	code := se.Code()
	switch code {
	case sqlite3.SQLITE_IOERR_WRITE, sqlite3.SQLITE_IOERR_FSYNC, sqlite3.SQLITE_IOERR_DIR_FSYNC:
		// SQLite reports ENOSPC on write(2) as SQLITE_FULL, but a flush that
		// fails (a full disk seen only at fsync, a dying SD card) comes back
		// as an I/O error. For the kiosk both mean the same thing: this write
		// did not reach the disk, stop taking payments.
		return failure(EFULL, what+": the disk refused the write (full or failing)", err)
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return failure(ECONFLICT, what+": "+uniqueMessage(se.Error()), err)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return failure(ENOTFOUND, what+": a referenced record does not exist", err)
	case sqlite3.SQLITE_CONSTRAINT_TRIGGER:
		if m := triggerConflict(se.Error()); m != "" {
			return failure(ECONFLICT, what+": "+m, err)
		}
		return failure(EINVALID, what+": refused by the journal's schema", err)
	}
	switch code & 0xff {
	case sqlite3.SQLITE_FULL:
		return failure(EFULL, what+": the disk or database is full", err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return failure(EREADONLY, what+": the database cannot be written", err)
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return failure(EINTERNAL, what+": the database file is corrupt or is not a Comptoir database", err)
	case sqlite3.SQLITE_CONSTRAINT:
		return failure(EINVALID, what+": a value is out of range", err)
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return failure(EINTERNAL, what+": the database stayed busy", err)
	}
	return failure(EINTERNAL, what, err)
}

// uniqueRules are the journal's uniqueness rules, each in the one sentence
// both ways of breaking it are reported with. A unique index names its
// columns in SQLite's message (not the index, hence the match on column
// names); the triggers that refuse an insert taking an attempt's unique key
// (migrations 3 and 4, which raise these sentences verbatim) find the
// constraint a plain INSERT would break before it, so that INSERT OR
// REPLACE cannot remove the row in the way. Both are conflicts. Column is
// "" for a rule only a trigger holds. The order is the order of the checks.
var uniqueRules = []struct{ column, sentence string }{
	{"attempts.order_id", "the order already has an unresolved attempt"},
	{"attempts.terminal", "the terminal already has an unresolved attempt"},
	{"attempts.uuid", "an attempt with this uuid already exists"},
	{"orders.id", "an order with this id already exists"},
	{"", "an attempt with this id already exists"},
	{"", "the transaction already has a reversal"},
}

// triggerConflict is the uniqueness rule a trigger's refusal names, "" when
// it names none.
func triggerConflict(msg string) string {
	for _, r := range uniqueRules {
		if strings.Contains(msg, r.sentence) {
			return r.sentence
		}
	}
	return ""
}

// uniqueMessage explains which uniqueness rule a write broke.
func uniqueMessage(msg string) string {
	for _, r := range uniqueRules {
		if r.column != "" && strings.Contains(msg, r.column) {
			return r.sentence
		}
	}
	return "the record already exists"
}
