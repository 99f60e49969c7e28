-- Migration 5: the fiscal records. Every sale and every credit (a refund,
-- a reversal: a negative ticket referring to its sale), every closing,
-- archive and technical event is written once, numbered without gaps in
-- its own chain (kind), and signed over its content and the signature of
-- the record before it in the chain (backend/fiscal). Nothing changes or
-- removes a record: a correction is a new record.
--
-- Timestamps are INTEGER milliseconds since the Unix epoch, UTC.

CREATE TABLE fiscal_records (
    id       INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    kind     TEXT    NOT NULL CHECK (kind IN ('ticket', 'closing', 'event', 'archive')),
    seq      INTEGER NOT NULL CHECK (seq > 0),          -- 1, 2, 3... in its kind
    at       INTEGER NOT NULL,
    -- source names what the record is of ("order:<id>", "attempt:<uuid>",
    -- "day:2026-11-24"): one record of a kind per source, so that what
    -- records it again after a crash finds it written.
    source   TEXT    CHECK (source IS NULL OR source <> ''),
    payload  TEXT    NOT NULL,                           -- canonical JSON
    prev_sig TEXT    NOT NULL,                           -- the chain's previous signature; '' for the first
    sig      TEXT    NOT NULL CHECK (sig <> ''),
    UNIQUE (kind, seq),
    UNIQUE (kind, source)
) STRICT;

CREATE TRIGGER fiscal_records_no_update
BEFORE UPDATE ON fiscal_records
BEGIN
    SELECT RAISE(ABORT, 'fiscal records are inalterable');
END;

CREATE TRIGGER fiscal_records_no_delete
BEFORE DELETE ON fiscal_records
BEGIN
    SELECT RAISE(ABORT, 'fiscal records are inalterable');
END;

CREATE TRIGGER fiscal_records_no_replace
BEFORE INSERT ON fiscal_records
WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM fiscal_records WHERE id = NEW.id)
BEGIN
    SELECT RAISE(ABORT, 'fiscal records are inalterable');
END;

-- What the fiscal ledger looks at every few seconds: the orders and the
-- attempts that changed since it last looked.
CREATE INDEX orders_by_updated ON orders (updated_at);
CREATE INDEX attempts_by_updated ON attempts (updated_at);
