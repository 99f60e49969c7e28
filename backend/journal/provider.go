package journal

import (
	"context"
	"database/sql"
	"strings"
)

// RecordResponse journals an answer that does not change the attempt's state,
// an abort's "ko" for instance. On an unresolved attempt it also becomes the
// attempt's last response; on a final one only the event is written, so the
// row keeps the response its outcome was decided on.
func (db *DB) RecordResponse(ctx context.Context, id string, raw []byte, note string) error {
	return db.update(ctx, "record response for attempt "+id, func(tx *sql.Tx) error {
		a, err := getAttempt(ctx, tx, id)
		if err != nil {
			return err
		}
		now := unixMS(db.now())
		raw, card := splitCard(raw)
		if err := storeCard(ctx, tx, a.ID, now, card); err != nil {
			return err
		}
		if a.State.Open() && raw != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE attempts SET response = ?, updated_at = ? WHERE id = ?`,
				string(raw), now, a.ID); err != nil {
				return err
			}
		}
		return insertEvent(ctx, tx, a.ID, now, a.State, a.State, EventResponse, "", note, raw)
	})
}

// SetProvider records, on an unresolved attempt, the provider's id for it
// (written once: an acknowledgement's transactionId, a payment link) and
// its status while it runs, with the answer that said so as an event.
// Nothing is written when neither changed.
func (db *DB) SetProvider(ctx context.Context, id, providerID, status string, raw []byte, note string) (Attempt, error) {
	return updateTo(ctx, db, "record the provider's word on attempt "+id, func(tx *sql.Tx) (Attempt, error) {
		a, err := getAttempt(ctx, tx, id)
		if err != nil {
			return Attempt{}, err
		}
		if !a.State.Open() {
			return Attempt{}, Errorf(ECONFLICT, "attempt %s is %s: its provider's word is final", id, a.State)
		}
		if a.ProviderID != "" && providerID != "" && providerID != a.ProviderID {
			return Attempt{}, Errorf(ECONFLICT, "attempt %s is provider id %s, not %s", id, a.ProviderID, providerID)
		}
		if (providerID == "" || providerID == a.ProviderID) && (status == "" || status == a.ProviderStatus) {
			return a, nil
		}
		now := unixMS(db.now())
		raw, card := splitCard(raw)
		if err := storeCard(ctx, tx, a.ID, now, card); err != nil {
			return Attempt{}, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE attempts SET provider_id = COALESCE(?, provider_id),
			provider_status = COALESCE(?, provider_status), response = COALESCE(?, response), updated_at = ? WHERE id = ?`,
			nullString(providerID), nullString(status), nullBytes(raw), now, a.ID); err != nil {
			return Attempt{}, err
		}
		detail := note
		if providerID != "" && providerID != a.ProviderID {
			detail = strings.TrimSpace(detail + "; provider id " + providerID)
		}
		if status != "" && status != a.ProviderStatus {
			detail = strings.TrimSpace(detail + "; provider status " + status)
		}
		if err := insertEvent(ctx, tx, a.ID, now, a.State, a.State, EventResponse, "", strings.TrimPrefix(detail, "; "), raw); err != nil {
			return Attempt{}, err
		}
		return getAttempt(ctx, tx, id)
	})
}

// ProviderAuthorised is the provider status of an approved link whose
// cart holds authorised transactions not yet captured.
const ProviderAuthorised = "authorised"

// RecordCapture records what became of an approved link attempt whose
// cart was only authorised: its new provider status (ok once captured; ko
// when the provider released the money instead), who asked and the
// provider's answer, as an event of the attempt. The attempt's outcome
// and amounts are not touched: the capture is of what was approved.
func (db *DB) RecordCapture(ctx context.Context, id, who, status string, raw []byte, note string) (Attempt, error) {
	if strings.TrimSpace(who) == "" || status == "" {
		return Attempt{}, Errorf(EINVALID, "attempt %s: a capture names who asked and the provider's status", id)
	}
	return updateTo(ctx, db, "record the capture of attempt "+id, func(tx *sql.Tx) (Attempt, error) {
		a, err := getAttempt(ctx, tx, id)
		if err != nil {
			return Attempt{}, err
		}
		if a.Channel != ChannelLink || a.State != StateApproved || a.ProviderStatus != ProviderAuthorised {
			return Attempt{}, Errorf(ECONFLICT, "attempt %s is a %s %s attempt with provider status %q: nothing to capture", id, a.State, a.Channel, a.ProviderStatus)
		}
		now := unixMS(db.now())
		if status != a.ProviderStatus {
			if _, err := tx.ExecContext(ctx, `UPDATE attempts SET provider_status = ?, updated_at = ? WHERE id = ?`,
				status, now, a.ID); err != nil {
				return Attempt{}, err
			}
		}
		detail := strings.TrimSpace("provider status " + status + "; " + note)
		if err := insertEvent(ctx, tx, a.ID, now, a.State, a.State, EventCaptured, who, strings.TrimSuffix(detail, ";"), raw); err != nil {
			return Attempt{}, err
		}
		return getAttempt(ctx, tx, id)
	})
}

// AddNote writes a free-text event on an attempt, for the audit trail.
func (db *DB) AddNote(ctx context.Context, id, who, note string) error {
	if note == "" {
		return Errorf(EINVALID, "attempt %s: empty note", id)
	}
	return db.update(ctx, "add note to attempt "+id, func(tx *sql.Tx) error {
		a, err := getAttempt(ctx, tx, id)
		if err != nil {
			return err
		}
		return insertEvent(ctx, tx, a.ID, unixMS(db.now()), a.State, a.State, EventNote, who, note, nil)
	})
}
