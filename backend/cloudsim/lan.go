package cloudsim

import (
	"fmt"
	"strings"

	"github.com/comptoir-pos/comptoir/backend/terminalsim"
)

// A terminal reached two ways. A virtual terminal can also serve its own
// Local API on loopback (Config.LAN, ServeLAN), as a real terminal is on
// the shop's LAN while the cloud reaches it by serial number. The provider
// knows every transaction of its terminals, not only those it started:
// what a terminal made over its Local API or on its keypad joins the
// company's transactions (the Webservices' list and fetch, the v4
// history), marked Via "terminal".
//
// Under which id is not shown in the specification (the cloud's
// transactions have a server-side id and the terminal's localId; the Local
// API's transactionId is "assigned by the service"). The simulator's
// choice, and the others as a control (SetLANIDs, or "lanIds" in POST
// /sim/faults):
//
//   - LANIDsCloud (default): an id of the cloud's own ("trs_..."), the
//     terminal's id as localId; the Webservices fetch knows only the
//     cloud's id, so a client holding the terminal's id must search the
//     list (same terminal, cartId, amount, currency);
//   - LANIDsEither: the cloud's own id, and the fetch also answers by the
//     terminal's id (localId);
//   - LANIDsTerminal: the terminal's id is the cloud's.
//
// The provider's record may lag: SetRecordLag(n) (or "recordLag" in POST
// /sim/faults) hides each such transaction from the next n reads of the
// Webservices (a fetch or a page of the list each count one).
const (
	LANIDsCloud    = "cloud"
	LANIDsEither   = "either"
	LANIDsTerminal = "terminal"
)

// ViaTerminal marks a transaction the terminal made without the cloud.
const ViaTerminal = "terminal"

// SetLANIDs chooses the ids of the transactions a terminal made without
// the cloud (LANIDsCloud, LANIDsEither, LANIDsTerminal). Transactions the
// cloud already lists keep theirs.
func (c *Cloud) SetLANIDs(mode string) error {
	switch mode {
	case LANIDsCloud, LANIDsEither, LANIDsTerminal:
	default:
		return fmt.Errorf("cloudsim: lanIds %q: cloud, either or terminal", mode)
	}
	c.setFault(func(f *faults) { f.lanIDs = mode })
	return nil
}

// SetRecordLag hides each transaction a terminal makes without the cloud
// from the next n reads of the Webservices.
func (c *Cloud) SetRecordLag(n int) error {
	if n < 0 || n > 1000 {
		return fmt.Errorf("cloudsim: recordLag %d: 0 to 1000", n)
	}
	c.setFault(func(f *faults) { f.recordLag = n })
	return nil
}

// syncLocked adds to the company's transactions those its terminals made
// without the cloud: a payment the cloud delivered carries its
// idempotentUuid, a reversal it asked for is claimed before it is sent;
// anything else the terminal made, the cloud learns of now.
func (c *Cloud) syncLocked() {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	for serial, vt := range c.terminals {
		for _, rec := range vt.sim.History() {
			key := serial + "/" + rec.TransactionID
			if c.seen[key] {
				continue
			}
			c.seen[key] = true
			if c.cloudsOwnLocked(serial, rec) {
				continue
			}
			c.mirrorLocked(serial, rec)
		}
	}
}

// cloudsOwnLocked: the cloud started this transaction of the terminal.
func (c *Cloud) cloudsOwnLocked(serial string, rec terminalsim.Record) bool {
	if rec.Kind == "reversal" && c.claims[serial+"/"+rec.Initial] {
		return true
	}
	for _, t := range c.order {
		if t.SerialNumber != serial || t.Via == ViaTerminal {
			continue
		}
		// (A reversal carries its debit's idempotentUuid: only its
		// claim, or its id once answered, makes it the cloud's.)
		if t.LocalID == rec.TransactionID || (rec.Kind != "reversal" && rec.IdempotentUUID != "" &&
			t.IdempotentUUID == rec.IdempotentUUID && t.TransactionType != "reversal") {
			return true
		}
	}
	return false
}

func (c *Cloud) mirrorLocked(serial string, rec terminalsim.Record) {
	id := newID("trs_")
	if c.faults.lanIDs == LANIDsTerminal {
		id = rec.TransactionID
	}
	t := &txn{Transaction: Transaction{
		Status: rec.Status, TransactionID: id, LocalID: rec.TransactionID, Amount: rec.Amount, GiftAmount: rec.GiftAmount,
		CurrencyCode: rec.Currency, TransactionType: rec.Kind, CreatedAt: rec.Time.UTC(), SerialNumber: serial,
		Scheme: rec.Scheme, Issuer: rec.Issuer, Reference: rec.Reference, CartID: rec.CartID, IdempotentUUID: rec.IdempotentUUID,
		Via: ViaTerminal,
	}, hidden: c.faults.recordLag}
	if rec.Kind == "reversal" {
		for _, o := range c.order {
			if o.SerialNumber == serial && o.LocalID == rec.Initial {
				t.Initial = o.TransactionID
				if t.CartID == "" {
					t.CartID = o.CartID
				}
			}
		}
	}
	c.addLocked(t)
	c.log.Info("a transaction the terminal made without the cloud", "serial", serial, "transactionId", id, "localId", rec.TransactionID,
		"status", rec.Status, "amount", rec.Amount)
}

// webservicesRead is one read of the Webservices: the terminals' own
// transactions joined, and those the record still hides from this read.
func (c *Cloud) webservicesRead() map[*txn]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.syncLocked()
	hide := map[*txn]bool{}
	for _, t := range c.order {
		if t.hidden > 0 {
			hide[t] = true
			t.hidden--
		}
	}
	return hide
}

// byIDLocked is the transaction the Webservices fetch answers for id.
func (c *Cloud) byIDLocked(id string) *txn {
	if t := c.txs[id]; t != nil {
		return t
	}
	if c.faults.lanIDs != LANIDsEither || strings.TrimSpace(id) == "" {
		return nil
	}
	for _, t := range c.order {
		if t.LocalID == id {
			return t
		}
	}
	return nil
}
