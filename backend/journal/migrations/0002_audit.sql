-- Migration 2: the audit table, for actions that concern no payment attempt
-- (a staff member unlocking the kiosk, changing a setting, reversing a
-- transaction the journal does not know, choosing a terminal...). Actions on
-- an attempt stay in attempt_events, next to the attempt.
--
-- Timestamps are INTEGER milliseconds since the Unix epoch, UTC, as in
-- migration 1.

CREATE TABLE audit (
    -- AUTOINCREMENT: an id is never handed out twice, even if the newest row
    -- were ever removed behind the triggers' back, so an id quoted in a log
    -- or on a screen names one action for good.
    id      INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    at      INTEGER NOT NULL,
    who     TEXT    NOT NULL CHECK (who <> ''),    -- "staff:<session prefix>", "kiosk", "system"
    action  TEXT    NOT NULL CHECK (action <> ''), -- unlock, setting, reversal...
    subject TEXT,                                  -- a setting key, a transaction id...
    detail  TEXT,
    raw     TEXT                                   -- a raw answer, as received; not necessarily JSON
) STRICT;

-- Reading newest first, or a day's worth, walks this index backwards.
CREATE INDEX audit_by_at ON audit (at);

-- One kind of action over a period (the reversals of a day, for instance).
CREATE INDEX audit_by_action ON audit (action, at);

-- Append-only, like attempt_events: a line of the audit trail, once written,
-- is neither changed nor removed.
CREATE TRIGGER audit_append_only_update
BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;

CREATE TRIGGER audit_append_only_delete
BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;

-- INSERT OR REPLACE removes the row in the way without firing delete
-- triggers (unless recursive_triggers is on): an insert may not name an id
-- already taken. A new line's id is chosen by SQLite, so NEW.id is NULL or
-- -1 here and never matches.
CREATE TRIGGER audit_append_only_replace
BEFORE INSERT ON audit
WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM audit WHERE id = NEW.id)
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;
