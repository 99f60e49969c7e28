-- Migration 3: INSERT OR REPLACE (and REPLACE INTO, UPSERT's cousin) removes
-- the rows in its way without firing their DELETE triggers (unless
-- recursive_triggers is on, which it never is here), and UPDATE OR REPLACE
-- does the same to a row whose unique key it takes. Migration 1 guards
-- attempts and attempt_events against UPDATE and DELETE only: a REPLACE
-- could still swap a final attempt, its request body or one of its events
-- for a forged row. The audit table of migration 2 already closes this hole
-- (audit_append_only_replace); these triggers close it for migration 1's
-- immutable tables, whatever the connection's settings (foreign keys off in
-- a hand-opened sqlite3 shell, for instance).
--
-- An insert is refused when a row already holds one of the table's unique
-- keys. A plain INSERT would fail there anyway, on the constraint; on
-- attempts the messages are the ones the journal gives for that constraint,
-- and it still reports them as conflicts (conflictTriggers in errors.go).
-- A key SQLite chooses (NEW.id NULL or -1 in a BEFORE INSERT trigger) never
-- matches a row.

CREATE TRIGGER attempt_events_append_only_replace
BEFORE INSERT ON attempt_events
WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM attempt_events WHERE id = NEW.id)
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;

CREATE TRIGGER attempts_no_replace_id
BEFORE INSERT ON attempts
WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM attempts WHERE id = NEW.id)
BEGIN
    SELECT RAISE(ABORT, 'an attempt with this id already exists');
END;

CREATE TRIGGER attempts_no_replace_uuid
BEFORE INSERT ON attempts
WHEN EXISTS (SELECT 1 FROM attempts WHERE uuid = NEW.uuid)
BEGIN
    SELECT RAISE(ABORT, 'an attempt with this uuid already exists');
END;

-- The unresolved-attempt indexes are unique too: a REPLACE of a new
-- unresolved attempt would remove the order's or the terminal's current
-- one. The WHERE repeats the indexes' own, so that the lookup uses them.
CREATE TRIGGER attempts_no_replace_open_order
BEFORE INSERT ON attempts
WHEN NEW.state IN ('prepared', 'sent', 'abort_requested')
 AND EXISTS (SELECT 1 FROM attempts
             WHERE order_id = NEW.order_id AND state IN ('prepared', 'sent', 'abort_requested'))
BEGIN
    SELECT RAISE(ABORT, 'the order already has an unresolved attempt');
END;

CREATE TRIGGER attempts_no_replace_open_terminal
BEFORE INSERT ON attempts
WHEN NEW.state IN ('prepared', 'sent', 'abort_requested')
 AND EXISTS (SELECT 1 FROM attempts
             WHERE terminal = NEW.terminal AND state IN ('prepared', 'sent', 'abort_requested'))
BEGIN
    SELECT RAISE(ABORT, 'the terminal already has an unresolved attempt');
END;

-- UPDATE OR REPLACE: the request's columns, the state of a final attempt
-- and attempt_events as a whole are already refused by migration 1's
-- BEFORE UPDATE triggers, which fire before any row is removed. The id was
-- not: an attempt's id, which its events point to, never changes.
CREATE TRIGGER attempts_id_immutable
BEFORE UPDATE OF id ON attempts
WHEN NEW.id IS NOT OLD.id
BEGIN
    SELECT RAISE(ABORT, 'an attempt''s id is immutable');
END;
