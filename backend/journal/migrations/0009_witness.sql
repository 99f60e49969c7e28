-- Migration 9: the provider as second witness of an approval taken over
-- the LAN, and money given back outside Comptoir.
--
-- The terminal's Local API has no credential: any device on the LAN can
-- answer "ok". When the provider's Webservices are set up, an approval
-- over the LAN is journaled awaiting the provider's record (witness
-- 'awaiting', in the same transaction as the approval), then:
--   confirmed    the provider lists the transaction, for what was asked;
--   unconfirmed  the provider could not be asked within the wait: the
--                order counts as paid on the terminal's word, and the
--                record is looked up again later;
--   denied       the provider does not know it: it pays nothing and the
--                order needs staff;
--   accepted     staff accepted a denied approval (AcceptOrder).
-- While awaiting or denied the approval pays nothing and the order needs
-- attention, so that no second debit is taken for it meanwhile.
--
-- provider_id of such an attempt is the provider's own id of its
-- transaction, when it differs from the terminal's (written once, as on
-- every attempt).

ALTER TABLE attempts ADD COLUMN witness TEXT
    CHECK (witness IS NULL OR witness IN ('awaiting', 'confirmed', 'unconfirmed', 'denied', 'accepted'));

-- The approvals the periodic check looks up again.
CREATE INDEX attempts_witness_open ON attempts (created_at)
    WHERE witness IN ('awaiting', 'unconfirmed', 'denied');

-- A witness is asked for with the approval it judges (never later), and
-- its word only moves forward: a late record confirms a denial, staff
-- accept one; nothing goes back to awaiting, and a confirmation stands.
CREATE TRIGGER attempts_witness_forward
BEFORE UPDATE OF witness ON attempts
WHEN NEW.witness IS NOT OLD.witness AND NOT (
       (OLD.witness IS NULL AND NEW.witness = 'awaiting' AND NEW.kind = 'debit' AND NEW.state = 'approved'
        AND OLD.state IN ('sent', 'abort_requested', 'unknown'))
    OR (OLD.witness = 'awaiting' AND NEW.witness IN ('confirmed', 'unconfirmed', 'denied'))
    OR (OLD.witness = 'unconfirmed' AND NEW.witness IN ('confirmed', 'denied'))
    OR (OLD.witness = 'denied' AND NEW.witness IN ('confirmed', 'accepted')))
BEGIN
    SELECT RAISE(ABORT, 'the provider''s witness of an approval only moves forward');
END;
