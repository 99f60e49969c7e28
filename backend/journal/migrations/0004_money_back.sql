-- comptoir:foreign-keys-off
-- Migration 4: money given back is journaled like money taken, and the
-- journal records what the provider says was charged.
--
-- - A reversal is an attempt of its own (kind and policy 'reversal'), with
--   the exact /reversal body committed before it leaves, its own states and
--   recovery, instead of a note on the debit it reversed. Reversals recorded
--   as staff notes by earlier versions become such attempts below, so that
--   "what can still be given back" counts them.
-- - charged_amount and charged_gift are what the terminal's answer says was
--   charged (a tip chosen on the terminal in counter mode, for instance);
--   amount and gift_amount stay what was asked. NULL until an outcome
--   carries them.
-- - channel, provider_id and provider_status prepare attempts that go
--   through the provider's cloud: the channel an attempt was sent through
--   (it never changes), the provider's id for it before it has an outcome
--   (an acknowledgement's transactionId, a payment link), and the provider's
--   last word while it is open.
-- - initial_transaction_id is the transaction a reversal reverses.
--
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt
-- the way SQLite documents (a new table, the rows copied, the old one
-- dropped, the new one renamed into its place), with foreign keys off
-- around the migration (the first line says so to the runner, which checks
-- every foreign key before committing). attempt_events keeps referring to
-- "attempts" by name, and the rows keep their ids.

CREATE TABLE attempts_v4 (
    id             INTEGER NOT NULL PRIMARY KEY,
    uuid           TEXT    NOT NULL UNIQUE,  -- the idempotentUuid (UUID v7)
    order_id       TEXT    NOT NULL REFERENCES orders (id),
    kind           TEXT    NOT NULL CHECK (kind IN ('debit', 'refund', 'reversal')),
    -- local (the terminal's Local API), cloud, link, webservices...: checked
    -- by the code, not here, so that a channel is added without a rebuild.
    channel        TEXT    NOT NULL DEFAULT 'local' CHECK (channel <> ''),
    amount         INTEGER NOT NULL CHECK (amount > 0),
    gift_amount    INTEGER NOT NULL DEFAULT 0 CHECK (gift_amount >= 0),
    policy         TEXT    NOT NULL CHECK (policy IN ('kiosk', 'counter', 'refund', 'reversal')),
    terminal       TEXT    NOT NULL CHECK (terminal <> ''),
    -- The transaction a reversal reverses (or a refund by API refunds).
    initial_transaction_id TEXT CHECK (kind <> 'reversal' OR coalesce(initial_transaction_id, '') <> ''),
    request_body   TEXT    NOT NULL,         -- the exact body sent, byte for byte
    state          TEXT    NOT NULL CHECK (state IN ('prepared', 'sent', 'abort_requested',
                           'approved', 'declined', 'failed', 'cancelled', 'unknown')),
    response       TEXT,                     -- the last raw answer
    transaction_id TEXT,
    error          TEXT,
    provider_id    TEXT,
    provider_status TEXT,
    charged_amount INTEGER CHECK (charged_amount >= 0),
    charged_gift   INTEGER CHECK (charged_gift >= 0),
    send_count     INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    first_sent_at  INTEGER,
    last_sent_at   INTEGER,
    final_at       INTEGER,
    updated_at     INTEGER NOT NULL,
    CHECK ((charged_amount IS NULL) = (charged_gift IS NULL))
) STRICT;

INSERT INTO attempts_v4 (id, uuid, order_id, kind, channel, amount, gift_amount, policy, terminal,
                      initial_transaction_id, request_body, state, response, transaction_id, error,
                      charged_amount, charged_gift,
                      send_count, created_at, first_sent_at, last_sent_at, final_at, updated_at)
SELECT id, uuid, order_id, kind, 'local', amount, gift_amount, policy, terminal,
       NULL, request_body, state, response, transaction_id, error,
       -- What an approved answer of the terminal said was charged, when it
       -- says it plainly (anything odd is left NULL: what was asked).
       CASE WHEN charge_readable THEN response ->> '$.amount' END,
       CASE WHEN charge_readable THEN coalesce(response ->> '$.giftAmount', 0) END,
       send_count, created_at, first_sent_at, last_sent_at, final_at, updated_at
FROM (SELECT *, state = 'approved' AND json_valid(response) AND response ->> '$.status' = 'ok'
                AND json_type(response, '$.amount') = 'integer' AND response ->> '$.amount' >= 0
                AND coalesce(json_type(response, '$.giftAmount'), 'integer') = 'integer'
                AND coalesce(response ->> '$.giftAmount', 0) >= 0 AS charge_readable
      FROM attempts);

DROP TABLE attempts;

ALTER TABLE attempts_v4 RENAME TO attempts;

-- Invariant 2, as in migration 1: one unresolved attempt per order and per
-- terminal, reversals included. The WHERE must stay identical to openStatesSQL.
CREATE UNIQUE INDEX attempts_one_open_per_order
    ON attempts (order_id) WHERE state IN ('prepared', 'sent', 'abort_requested');
CREATE UNIQUE INDEX attempts_one_open_per_terminal
    ON attempts (terminal) WHERE state IN ('prepared', 'sent', 'abort_requested');
CREATE INDEX attempts_open
    ON attempts (created_at) WHERE state IN ('prepared', 'sent', 'abort_requested');
CREATE INDEX attempts_by_order   ON attempts (order_id);
CREATE INDEX attempts_by_created ON attempts (created_at);
-- Which attempt holds a provider's transaction (matching a history entry).
CREATE INDEX attempts_by_transaction ON attempts (transaction_id) WHERE transaction_id IS NOT NULL;
-- The unknown outcomes that a periodic check looks up.
CREATE INDEX attempts_unknown ON attempts (created_at) WHERE state = 'unknown';

-- A transaction is reversed once: no second reversal of it while one is
-- unresolved, approved, or of unknown outcome (a failed or declined one
-- gave nothing back and does not count).
CREATE UNIQUE INDEX attempts_one_reversal_per_transaction
    ON attempts (initial_transaction_id)
    WHERE kind = 'reversal' AND state IN ('prepared', 'sent', 'abort_requested', 'approved', 'unknown');

-- The triggers of migrations 1 and 3, on the new table.
CREATE TRIGGER attempts_final_is_final
BEFORE UPDATE OF state ON attempts
WHEN OLD.state IN ('approved', 'declined', 'failed', 'cancelled', 'unknown')
 AND NEW.state IS NOT OLD.state
 AND NOT (OLD.state = 'unknown' AND NEW.state IN ('approved', 'declined'))
BEGIN
    SELECT RAISE(ABORT, 'attempt state is final');
END;

CREATE TRIGGER attempts_request_immutable
BEFORE UPDATE OF uuid, order_id, kind, channel, amount, gift_amount, policy, terminal,
                 initial_transaction_id, request_body, created_at
ON attempts
BEGIN
    SELECT RAISE(ABORT, 'an attempt''s request is immutable');
END;

-- What the provider said once is what it said: a transaction id, a
-- provider id and the amounts charged are written once.
CREATE TRIGGER attempts_charge_written_once
BEFORE UPDATE OF transaction_id, provider_id, charged_amount, charged_gift ON attempts
WHEN (OLD.transaction_id IS NOT NULL AND NEW.transaction_id IS NOT OLD.transaction_id)
  OR (OLD.provider_id IS NOT NULL AND NEW.provider_id IS NOT OLD.provider_id)
  OR (OLD.charged_amount IS NOT NULL AND NEW.charged_amount IS NOT OLD.charged_amount)
  OR (OLD.charged_gift IS NOT NULL AND NEW.charged_gift IS NOT OLD.charged_gift)
BEGIN
    SELECT RAISE(ABORT, 'what the provider answered is written once');
END;

CREATE TRIGGER attempts_no_delete
BEFORE DELETE ON attempts
BEGIN
    SELECT RAISE(ABORT, 'attempts are never deleted');
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

CREATE TRIGGER attempts_no_replace_reversal
BEFORE INSERT ON attempts
WHEN NEW.kind = 'reversal'
 AND EXISTS (SELECT 1 FROM attempts
             WHERE kind = 'reversal' AND initial_transaction_id = NEW.initial_transaction_id
               AND state IN ('prepared', 'sent', 'abort_requested', 'approved', 'unknown'))
BEGIN
    SELECT RAISE(ABORT, 'the transaction already has a reversal');
END;

CREATE TRIGGER attempts_id_immutable
BEFORE UPDATE OF id ON attempts
WHEN NEW.id IS NOT OLD.id
BEGIN
    SELECT RAISE(ABORT, 'an attempt''s id is immutable');
END;

-- Reversals that earlier versions recorded as a staff note on the debit
-- ("reversal approved {json}" then the terminal's answer) become reversal
-- attempts, approved, on the debit's order and terminal. Their uuid says
-- where they come from; their body is the /reversal request that was sent.
WITH notes AS (
    SELECT e.id AS event_id, e.at, e.actor, e.detail, a.order_id, a.terminal, a.transaction_id AS debit_tx,
           CASE WHEN instr(e.detail, char(10)) > 0
                THEN substr(e.detail, 19, instr(e.detail, char(10)) - 19)
                ELSE substr(e.detail, 19) END AS rec
    FROM attempt_events e JOIN attempts a ON a.id = e.attempt_id
    WHERE e.kind = 'note' AND e.actor LIKE 'staff:%' AND e.detail LIKE 'reversal approved {%'
      AND a.kind = 'debit'
), recs AS (
    SELECT *, rec ->> '$.reversalTransactionId' AS reversal_tx,
              rec ->> '$.initialTransactionId' AS initial_tx,
              rec ->> '$.amount' AS total
    FROM notes WHERE json_valid(rec)
)
INSERT INTO attempts (uuid, order_id, kind, channel, amount, gift_amount, policy, terminal,
                      initial_transaction_id, request_body, state, response, transaction_id,
                      charged_amount, charged_gift,
                      send_count, created_at, first_sent_at, last_sent_at, final_at, updated_at)
SELECT 'legacy-reversal-' || event_id, order_id, 'reversal', 'local', total, 0, 'reversal', terminal,
       initial_tx, json_object('amount', total, 'initialTransactionId', initial_tx), 'approved',
       NULL, reversal_tx, total, 0,
       1, at, at, at, at, at
FROM recs r
WHERE typeof(r.total) = 'integer' AND r.total > 0 AND coalesce(r.initial_tx, '') <> ''
  AND NOT EXISTS (SELECT 1 FROM attempts x WHERE x.kind = 'reversal' AND x.initial_transaction_id = r.initial_tx
                  AND x.state IN ('prepared', 'sent', 'abort_requested', 'approved', 'unknown'))
GROUP BY initial_tx;

INSERT INTO attempt_events (attempt_id, at, from_state, to_state, kind, actor, detail)
SELECT id, created_at, NULL, 'approved', 'transition', NULL,
       'reversal recorded by an earlier version as a staff note; journaled as an attempt by the upgrade'
FROM attempts WHERE uuid LIKE 'legacy-reversal-%';
