-- Migration 10: the outbox. Every fact of the journal that other machines
-- need (an order paid, cancelled or set aside for staff, money given back,
-- a fiscal closing or archive) is written here in the same transaction as
-- the fact itself (outbox.go). A publisher copies the rows to the
-- restaurant's message stream afterwards and marks them published once the
-- stream has acknowledged them: a crash between the commit and the publish
-- loses nothing (the row is still unpublished), and a row published twice
-- is recognised by its msg_id, which the stream keeps as Nats-Msg-Id.
--
-- Timestamps are INTEGER milliseconds since the Unix epoch, UTC.

CREATE TABLE outbox (
    seq          INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, -- the order of the facts
    msg_id       TEXT    NOT NULL UNIQUE CHECK (length(msg_id) = 36), -- UUID v7
    at           INTEGER NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('order.paid', 'order.cancelled', 'order.attention',
                                                  'giveback', 'fiscal.closing', 'fiscal.archive')),
    order_id     TEXT,
    payload      TEXT    NOT NULL CHECK (json_valid(payload)),
    published_at INTEGER
) STRICT;

-- What the publisher reads: only the rows still to publish, in order.
CREATE INDEX outbox_unpublished ON outbox (seq) WHERE published_at IS NULL;

-- A fact is written once; only its publication is recorded later, once.
CREATE TRIGGER outbox_written_once
BEFORE UPDATE ON outbox
WHEN NEW.seq IS NOT OLD.seq OR NEW.msg_id IS NOT OLD.msg_id OR NEW.at IS NOT OLD.at
  OR NEW.kind IS NOT OLD.kind OR NEW.order_id IS NOT OLD.order_id OR NEW.payload IS NOT OLD.payload
  OR (OLD.published_at IS NOT NULL AND NEW.published_at IS NOT OLD.published_at)
BEGIN
    SELECT RAISE(ABORT, 'an outbox fact is written once');
END;
