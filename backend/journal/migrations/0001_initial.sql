-- Migration 1: orders, payment attempts and their audit trail, settings.
--
-- Every timestamp is INTEGER milliseconds since the Unix epoch, UTC. Integers
-- sort and compare correctly in indexes and in range filters, carry no time
-- zone to misread after a DST change or a kiosk moved across borders, and do
-- not depend on a driver's text format for time values (modernc.org/sqlite
-- writes time.Time as Go's String() unless told otherwise). Milliseconds are
-- finer than anything a card terminal does.
--
-- Tables are STRICT: a value of the wrong type (a []byte where TEXT is
-- expected, a string in an amount) is refused instead of silently stored.

CREATE TABLE orders (
    id         TEXT    NOT NULL PRIMARY KEY CHECK (id <> ''), -- the cart id, sent as cartId
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    currency   TEXT    NOT NULL CHECK (length(currency) = 3),
    total      INTEGER NOT NULL CHECK (total >= 0),            -- cents
    status     TEXT    NOT NULL DEFAULT 'open'
               CHECK (status IN ('open', 'paid', 'cancelled', 'needs_attention')),
    data       TEXT                                            -- JSON lines, opaque here
) STRICT;

-- Who changed an order's status, when and why.
CREATE TABLE order_events (
    id          INTEGER NOT NULL PRIMARY KEY,
    order_id    TEXT    NOT NULL REFERENCES orders (id),
    at          INTEGER NOT NULL,
    from_status TEXT,
    to_status   TEXT    NOT NULL,
    note        TEXT
) STRICT;

CREATE INDEX order_events_by_order ON order_events (order_id);

CREATE TABLE attempts (
    id             INTEGER NOT NULL PRIMARY KEY,
    uuid           TEXT    NOT NULL UNIQUE,  -- the idempotentUuid (UUID v7)
    order_id       TEXT    NOT NULL REFERENCES orders (id),
    kind           TEXT    NOT NULL CHECK (kind IN ('debit', 'refund')),
    amount         INTEGER NOT NULL CHECK (amount > 0),
    gift_amount    INTEGER NOT NULL DEFAULT 0 CHECK (gift_amount >= 0),
    policy         TEXT    NOT NULL CHECK (policy IN ('kiosk', 'counter', 'refund')),
    terminal       TEXT    NOT NULL CHECK (terminal <> ''),
    request_body   TEXT    NOT NULL,         -- the exact body sent, byte for byte
    state          TEXT    NOT NULL CHECK (state IN ('prepared', 'sent', 'abort_requested',
                           'approved', 'declined', 'failed', 'cancelled', 'unknown')),
    response       TEXT,                     -- the last raw terminal response
    transaction_id TEXT,
    error          TEXT,
    send_count     INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    first_sent_at  INTEGER,
    last_sent_at   INTEGER,
    final_at       INTEGER,
    updated_at     INTEGER NOT NULL
) STRICT;

-- Invariant 2, held by the database itself: at most one unresolved attempt
-- per order and per terminal. The WHERE must stay identical to openStatesSQL.
CREATE UNIQUE INDEX attempts_one_open_per_order
    ON attempts (order_id) WHERE state IN ('prepared', 'sent', 'abort_requested');
CREATE UNIQUE INDEX attempts_one_open_per_terminal
    ON attempts (terminal) WHERE state IN ('prepared', 'sent', 'abort_requested');

-- Recovery reads the unresolved attempts oldest first: this index holds only
-- them, in that order, so the cost does not grow with the history.
CREATE INDEX attempts_open
    ON attempts (created_at) WHERE state IN ('prepared', 'sent', 'abort_requested');

CREATE INDEX attempts_by_order   ON attempts (order_id);
CREATE INDEX attempts_by_created ON attempts (created_at);

-- Backstops for the rules the Go code already enforces, so that no future
-- code path (or hand-written SQL during an incident) can break them quietly.
CREATE TRIGGER attempts_final_is_final
BEFORE UPDATE OF state ON attempts
WHEN OLD.state IN ('approved', 'declined', 'failed', 'cancelled', 'unknown')
 AND NEW.state IS NOT OLD.state
 AND NOT (OLD.state = 'unknown' AND NEW.state IN ('approved', 'declined'))
BEGIN
    SELECT RAISE(ABORT, 'attempt state is final');
END;

CREATE TRIGGER attempts_request_immutable
BEFORE UPDATE OF uuid, order_id, kind, amount, gift_amount, policy, terminal, request_body, created_at
ON attempts
BEGIN
    SELECT RAISE(ABORT, 'an attempt''s request is immutable');
END;

CREATE TRIGGER attempts_no_delete
BEFORE DELETE ON attempts
BEGIN
    SELECT RAISE(ABORT, 'attempts are never deleted');
END;

-- The audit trail: one row per change, written in the change's transaction.
CREATE TABLE attempt_events (
    id           INTEGER NOT NULL PRIMARY KEY,
    attempt_id   INTEGER NOT NULL REFERENCES attempts (id),
    at           INTEGER NOT NULL,
    from_state   TEXT,
    to_state     TEXT,
    kind         TEXT    NOT NULL,
    actor        TEXT,    -- who, for staff actions; NULL for the system
    detail       TEXT,
    raw_response TEXT
) STRICT;

CREATE INDEX attempt_events_by_attempt ON attempt_events (attempt_id);

CREATE TRIGGER attempt_events_append_only_update
BEFORE UPDATE ON attempt_events
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;

CREATE TRIGGER attempt_events_append_only_delete
BEFORE DELETE ON attempt_events
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;

CREATE TABLE settings (
    key        TEXT    NOT NULL PRIMARY KEY,
    value      TEXT    NOT NULL CHECK (json_valid(value)),
    updated_at INTEGER NOT NULL
) STRICT;
