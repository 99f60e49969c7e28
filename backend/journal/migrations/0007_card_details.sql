-- Migration 7: card details apart from the journal. A provider's answer
-- carries the card's token and the card tickets (the customer's and the
-- merchant's); the journal is append-only and kept for years. Those
-- fields now live in card_details, removed after the retention period
-- (journal.PurgeCardDetails), while attempts and their events keep what
-- money and the fiscal records need. The answers already journaled are
-- split the same way, once, here: the only change ever made to an event.

CREATE TABLE card_details (
    id         INTEGER NOT NULL PRIMARY KEY,
    attempt_id INTEGER NOT NULL REFERENCES attempts (id),
    at         INTEGER NOT NULL,
    data       TEXT    NOT NULL CHECK (json_valid(data) AND json_type(data) = 'object')
) STRICT;

CREATE INDEX card_details_by_attempt ON card_details (attempt_id);
CREATE INDEX card_details_by_at ON card_details (at);

-- What earlier builds journaled: each answer's card fields, once per
-- distinct answer of an attempt (its events and its last response).
INSERT INTO card_details (attempt_id, at, data)
SELECT attempt_id, min(at), card FROM (
    SELECT e.attempt_id, e.at, json_patch(json_patch(json_patch(json_patch(json_patch(json_patch('{}',
            CASE WHEN e.raw_response ->> '$.cardToken' IS NOT NULL THEN json_object('cardToken', e.raw_response ->> '$.cardToken') ELSE '{}' END),
            CASE WHEN e.raw_response ->> '$.clientCardTicket' IS NOT NULL THEN json_object('clientCardTicket', e.raw_response ->> '$.clientCardTicket') ELSE '{}' END),
            CASE WHEN e.raw_response ->> '$.merchantCardTicket' IS NOT NULL THEN json_object('merchantCardTicket', e.raw_response ->> '$.merchantCardTicket') ELSE '{}' END),
            CASE WHEN e.raw_response ->> '$.clientTicket' IS NOT NULL THEN json_object('clientTicket', e.raw_response ->> '$.clientTicket') ELSE '{}' END),
            CASE WHEN e.raw_response ->> '$.companyTicket' IS NOT NULL THEN json_object('companyTicket', e.raw_response ->> '$.companyTicket') ELSE '{}' END),
            CASE WHEN e.raw_response ->> '$.ticketUrl' IS NOT NULL THEN json_object('ticketUrl', e.raw_response ->> '$.ticketUrl') ELSE '{}' END) AS card
    FROM attempt_events e
    WHERE json_valid(e.raw_response) AND json_type(e.raw_response) = 'object'
    UNION ALL
    SELECT a.id, a.updated_at, json_patch(json_patch(json_patch(json_patch(json_patch(json_patch('{}',
            CASE WHEN a.response ->> '$.cardToken' IS NOT NULL THEN json_object('cardToken', a.response ->> '$.cardToken') ELSE '{}' END),
            CASE WHEN a.response ->> '$.clientCardTicket' IS NOT NULL THEN json_object('clientCardTicket', a.response ->> '$.clientCardTicket') ELSE '{}' END),
            CASE WHEN a.response ->> '$.merchantCardTicket' IS NOT NULL THEN json_object('merchantCardTicket', a.response ->> '$.merchantCardTicket') ELSE '{}' END),
            CASE WHEN a.response ->> '$.clientTicket' IS NOT NULL THEN json_object('clientTicket', a.response ->> '$.clientTicket') ELSE '{}' END),
            CASE WHEN a.response ->> '$.companyTicket' IS NOT NULL THEN json_object('companyTicket', a.response ->> '$.companyTicket') ELSE '{}' END),
            CASE WHEN a.response ->> '$.ticketUrl' IS NOT NULL THEN json_object('ticketUrl', a.response ->> '$.ticketUrl') ELSE '{}' END)
    FROM attempts a
    WHERE json_valid(a.response) AND json_type(a.response) = 'object'
)
WHERE card <> '{}'
GROUP BY attempt_id, card;

DROP TRIGGER attempt_events_append_only_update;

UPDATE attempt_events
SET raw_response = json_remove(raw_response, '$.cardToken', '$.clientCardTicket', '$.merchantCardTicket',
                               '$.clientTicket', '$.companyTicket', '$.ticketUrl')
WHERE json_valid(raw_response) AND json_type(raw_response) = 'object';

CREATE TRIGGER attempt_events_append_only_update
BEFORE UPDATE ON attempt_events
BEGIN
    SELECT RAISE(ABORT, 'the audit trail is append-only');
END;

UPDATE attempts
SET response = json_remove(response, '$.cardToken', '$.clientCardTicket', '$.merchantCardTicket',
                           '$.clientTicket', '$.companyTicket', '$.ticketUrl')
WHERE json_valid(response) AND json_type(response) = 'object';
