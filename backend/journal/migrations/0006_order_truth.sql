-- Migration 6: an order's status is the journal's own conclusion from its
-- attempts, written in the same transaction as every change that can move
-- it (order.go, StatusOf). Other packages no longer set a status: they
-- close an order (closed_at: the customer is gone, nothing more will be
-- asked of it) or flag it for staff (attention: why).
--
-- An attempt whose approval disagrees with what was asked (another amount,
-- currency or transaction type) carries a flag: its money is taken but
-- pays nothing until staff accept it (AcceptOrder) or give it back.
-- charged_currency is the currency the provider named, written once.

ALTER TABLE orders ADD COLUMN closed_at INTEGER;
ALTER TABLE orders ADD COLUMN attention TEXT CHECK (attention IS NULL OR attention <> '');

ALTER TABLE attempts ADD COLUMN flag TEXT CHECK (flag IS NULL OR flag <> '');
ALTER TABLE attempts ADD COLUMN charged_currency TEXT
    CHECK (charged_currency IS NULL OR length(charged_currency) = 3);

CREATE TRIGGER attempts_currency_written_once
BEFORE UPDATE OF charged_currency ON attempts
WHEN OLD.charged_currency IS NOT NULL AND NEW.charged_currency IS NOT OLD.charged_currency
BEGIN
    SELECT RAISE(ABORT, 'what the provider answered is written once');
END;

-- A flag is set with the outcome it judges, and only cleared after: never
-- set on an attempt that is already final.
CREATE TRIGGER attempts_flag_with_outcome
BEFORE UPDATE OF flag ON attempts
WHEN NEW.flag IS NOT NULL AND NEW.flag IS NOT OLD.flag
 AND OLD.state IN ('approved', 'declined', 'failed', 'cancelled')
BEGIN
    SELECT RAISE(ABORT, 'an attempt is flagged with its outcome, not after it');
END;

-- What earlier versions concluded stands: a cancelled order was closed; an
-- order that needed attention for another reason than an unknown attempt
-- (which keeps it so by itself) still does, for the reason its last event
-- gave, until staff accept it.
UPDATE orders SET closed_at = updated_at WHERE status IN ('cancelled', 'needs_attention');
UPDATE orders SET attention = coalesce(
    (SELECT e.note FROM order_events e WHERE e.order_id = orders.id AND e.note <> '' ORDER BY e.id DESC LIMIT 1),
    'needed attention before the upgrade')
WHERE status = 'needs_attention'
  AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.order_id = orders.id AND a.state = 'unknown');
