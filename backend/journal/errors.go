package journal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Error codes. Callers branch on the code (ErrorCode), never on the message,
// which is written for a person: an operator reading a log or a staff screen.
const (
	// ECONFLICT: a guarded transition lost the race or found the record in
	// another state; an order or attempt that must be unique already exists;
	// an order already has an unresolved attempt.
	ECONFLICT = "conflict"
	// ENOTFOUND: no order or attempt with that id.
	ENOTFOUND = "not_found"
	// EINVALID: the caller asked for something the journal never allows (a
	// transition outside the table, a malformed uuid or body). Nothing was written.
	EINVALID = "invalid"
	// ELOCKED: another process holds the data directory.
	ELOCKED = "locked"
	// EFULL: the disk is full or refused a write or a flush. The transaction
	// was rolled back as a whole: nothing is half-written.
	EFULL = "full"
	// EREADONLY: the data directory or database cannot be written.
	EREADONLY = "readonly"
	// EINTERNAL: anything else, a corrupt database included.
	EINTERNAL = "internal"
)

// Error is the journal's error type: a code to branch on, a message for a
// person, and the underlying cause for logs.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "journal: " + e.Message + ": " + e.Err.Error()
	}
	return "journal: " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for nil
// and EINTERNAL for any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the human message of the first *Error in err's chain,
// or a generic one: a raw SQLite message is not for a customer's eyes.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// mapErr turns a driver error into an *Error. what names the operation for the
// message ("prepare attempt 0190..."). Context errors pass through unchanged so
// that errors.Is(err, context.Canceled) keeps working for callers.
func mapErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var je *Error
	if errors.As(err, &je) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return &Error{Code: EINTERNAL, Message: what, Err: err}
	}
	code := se.Code()
	switch code {
	case sqlite3.SQLITE_IOERR_WRITE, sqlite3.SQLITE_IOERR_FSYNC, sqlite3.SQLITE_IOERR_DIR_FSYNC:
		// SQLite reports ENOSPC on write(2) as SQLITE_FULL, but a flush that
		// fails (a full disk seen only at fsync, a dying SD card) comes back
		// as an I/O error. For the kiosk both mean the same thing: this write
		// did not reach the disk, stop taking payments.
		return &Error{Code: EFULL, Message: what + ": the disk refused the write (full or failing)", Err: err}
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return &Error{Code: ECONFLICT, Message: what + ": " + uniqueMessage(se.Error()), Err: err}
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return &Error{Code: ENOTFOUND, Message: what + ": a referenced record does not exist", Err: err}
	case sqlite3.SQLITE_CONSTRAINT_TRIGGER:
		if m := triggerConflict(se.Error()); m != "" {
			return &Error{Code: ECONFLICT, Message: what + ": " + m, Err: err}
		}
		return &Error{Code: EINVALID, Message: what + ": refused by the journal's schema", Err: err}
	}
	switch code & 0xff {
	case sqlite3.SQLITE_FULL:
		return &Error{Code: EFULL, Message: what + ": the disk or database is full", Err: err}
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return &Error{Code: EREADONLY, Message: what + ": the database cannot be written", Err: err}
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return &Error{Code: EINTERNAL, Message: what + ": the database file is corrupt or is not a Comptoir database", Err: err}
	case sqlite3.SQLITE_CONSTRAINT:
		return &Error{Code: EINVALID, Message: what + ": a value is out of range", Err: err}
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return &Error{Code: EINTERNAL, Message: what + ": the database stayed busy", Err: err}
	}
	return &Error{Code: EINTERNAL, Message: what, Err: err}
}

// conflictTriggers are the messages of the triggers that refuse an insert
// taking an attempt's unique key (migrations 3 and 4): the constraint a plain
// INSERT would break, found before it so that INSERT OR REPLACE cannot
// remove the row in the way. They are conflicts, as the constraint is.
var conflictTriggers = []string{
	"an attempt with this id already exists",
	"an attempt with this uuid already exists",
	"the order already has an unresolved attempt",
	"the terminal already has an unresolved attempt",
	"the transaction already has a reversal",
}

func triggerConflict(msg string) string {
	for _, m := range conflictTriggers {
		if strings.Contains(msg, m) {
			return m
		}
	}
	return ""
}

// uniqueMessage explains which uniqueness rule a write broke. SQLite names the
// columns of the index, not the index, hence the match on column names.
func uniqueMessage(msg string) string {
	switch {
	case strings.Contains(msg, "attempts.order_id"):
		return "the order already has an unresolved attempt"
	case strings.Contains(msg, "attempts.terminal"):
		return "the terminal already has an unresolved attempt"
	case strings.Contains(msg, "attempts.uuid"):
		return "an attempt with this uuid already exists"
	case strings.Contains(msg, "orders.id"):
		return "an order with this id already exists"
	}
	return "the record already exists"
}
